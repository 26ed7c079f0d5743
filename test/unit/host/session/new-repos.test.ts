// A git repository a contained server makes while it runs (src/host/session/new-repos.ts, issue 44 item 5): what
// decides whether git could run something from it (its config keys, hooks, a gitdir: line, a link), and the watch
// that moves such a `.git` aside at once, at any depth, also when it is made inert first and changed after.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitRisk } from '../../../../src/host/session/git-risk';
import { HELD_SUFFIX, watchNewRepositories, type HeldRepository } from '../../../../src/host/session/new-repos';
import { cleanupTemp, tempDir, writeFiles } from '../../helpers';

const until = async (ok: () => boolean, ms = 3000): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (ok()) return true;
  return ok();
};

describe('a git repository a contained server makes (new-repos)', function () {
  this.timeout(30_000);
  after(cleanupTemp);

  it('git init and git clone leave only data; a config key that runs a program, a hook, a gitdir: elsewhere or a link is named', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-'));
    const init = spawnSync('git', ['init', '-q', path.join(root, 'plain')], { encoding: 'utf8' });
    assert.equal(init.status, 0, init.stderr);
    spawnSync('git', ['-C', path.join(root, 'plain'), 'config', 'user.name', 'A'], { encoding: 'utf8' });
    spawnSync('git', ['-C', path.join(root, 'plain'), 'remote', 'add', 'origin', 'https://example.invalid/x.git'], { encoding: 'utf8' });
    assert.equal(await gitRisk(path.join(root, 'plain', '.git'), new Set()), undefined);
    const bad: Array<[string, Record<string, string>, RegExp]> = [
      [
        'fsmonitor',
        { '.git/HEAD': 'ref: refs/heads/main\n', '.git/config': '[core]\n\tFSMonitor = "touch x"\n' },
        /config sets core\.fsmonitor, which can make git run a program/,
      ],
      ['alias', { '.git/config': '[alias]\n\tst = !sh -c x\n' }, /alias\.st/],
      ['filter', { '.git/config': '[filter "x"]\n\tclean = sh x\n' }, /filter\.x\.clean/],
      ['include', { '.git/config': '[include]\n\tpath = ../elsewhere\n' }, /include\.path/],
      ['hook', { '.git/hooks/post-checkout': '#!/bin/sh\n' }, /hooks\/post-checkout/],
      ['commondir', { '.git/commondir': '../x\n' }, /commondir/],
      [
        'gitdir',
        { '.git': 'gitdir: plain2\n', 'plain2/config': '[core]\n' },
        /gitdir: names plain2, which is not a repository that was there/,
      ],
    ];
    for (const [name, files, why] of bad) {
      const d = path.join(root, name);
      writeFiles(d, files);
      assert.match(String(await gitRisk(path.join(d, '.git'), new Set())), why, name);
    }
    // a gitdir: into a repository that was there before (a worktree git made of it) is not the server's
    writeFiles(root, {
      'wt/.git': `gitdir: ${path.join(root, 'plain', '.git', 'worktrees', 'wt')}\n`,
      'plain/.git/worktrees/wt/HEAD': 'ref: refs/heads/x\n',
    });
    assert.equal(await gitRisk(path.join(root, 'wt', '.git'), new Set([path.join(root, 'plain', '.git')])), undefined);
    fs.mkdirSync(path.join(root, 'linked'));
    fs.symlinkSync(path.join(root, 'plain', '.git'), path.join(root, 'linked', '.git'));
    assert.match(String(await gitRisk(path.join(root, 'linked', '.git'), new Set())), /it is a link/);
  });

  it('while watched: a .git made anywhere that could run something is moved aside at once (also one made inert first and changed after); git then obeys nothing of it; a plain git init stays; stop() finds one no watch saw', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-ws-'));
    writeFiles(root, {
      'README.md': '# ws\n',
      'src/a/keep.txt': '',
      'node_modules/x/index.js': '',
      'old/.git/config': '[core]\n\tfsmonitor = old\n',
    });
    const marker = path.join(root, '..', `${path.basename(root)}-fsmonitor-ran`);
    const evil = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}; false"\n`;
    const held: HeldRepository[] = [];
    const w = watchNewRepositories(root, (h) => held.push(h));
    assert.equal(w.problem, undefined);
    try {
      // deep, made in one go
      writeFiles(root, { 'src/a/b/c/.git/HEAD': 'ref: refs/heads/main\n', 'src/a/b/c/.git/config': evil });
      fs.mkdirSync(path.join(root, 'src/a/b/c/.git/objects'));
      fs.mkdirSync(path.join(root, 'src/a/b/c/.git/refs'));
      assert.ok(await until(() => held.some((h) => h.rel === 'src/a/b/c/.git')), JSON.stringify(held));
      assert.equal(fs.existsSync(path.join(root, 'src/a/b/c/.git')), false);
      assert.ok(fs.existsSync(path.join(root, `src/a/b/c/.git${HELD_SUFFIX}`, 'config')));
      // made inert first, changed once git would take it for a repository
      const plain = spawnSync('git', ['init', '-q', path.join(root, 'later')], { encoding: 'utf8' });
      assert.equal(plain.status, 0, plain.stderr);
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(fs.existsSync(path.join(root, 'later/.git')), 'a plain git init stays');
      fs.appendFileSync(path.join(root, 'later/.git/config'), `[core]\n\tfsmonitor = "touch ${marker}; false"\n`);
      assert.ok(await until(() => held.some((h) => h.rel === 'later/.git')), JSON.stringify(held));
      // a hooks folder made after the repository, and a hook put in it later
      const hooked = spawnSync('git', ['init', '-q', '--template=', path.join(root, 'hooked')], { encoding: 'utf8' });
      assert.equal(hooked.status, 0, hooked.stderr);
      await new Promise((r) => setTimeout(r, 150));
      fs.mkdirSync(path.join(root, 'hooked/.git/hooks'));
      await new Promise((r) => setTimeout(r, 150));
      assert.ok(fs.existsSync(path.join(root, 'hooked/.git')), 'an empty hooks folder holds nothing');
      fs.writeFileSync(path.join(root, 'hooked/.git/hooks/post-checkout'), '#!/bin/sh\n', { mode: 0o755 });
      assert.ok(await until(() => held.some((h) => h.rel === 'hooked/.git')), JSON.stringify(held));
      // prepared where nothing is watched (outside the workspace) and moved in whole: a folder holding one, and a .git itself
      const elsewhere = fs.realpathSync(tempDir('mcp-gate-repos-prep-'));
      writeFiles(elsewhere, { 'prep/.git/HEAD': 'ref: refs/heads/main\n', 'prep/.git/config': evil, 'g/config': evil });
      fs.renameSync(path.join(elsewhere, 'prep'), path.join(root, 'src/prep'));
      fs.renameSync(path.join(elsewhere, 'g'), path.join(root, 'src/a/.git'));
      assert.ok(
        await until(() => held.some((h) => h.rel === 'src/prep/.git') && held.some((h) => h.rel === 'src/a/.git')),
        JSON.stringify(held),
      );
      // git run there now obeys nothing of it
      fs.writeFileSync(path.join(root, 'src/a/b/c/f'), 'x');
      spawnSync('git', ['-C', path.join(root, 'src/a/b/c'), 'status'], {
        encoding: 'utf8',
        env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(root) },
      });
      spawnSync('git', ['-C', path.join(root, 'later'), 'status'], {
        encoding: 'utf8',
        env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(root) },
      });
      assert.equal(fs.existsSync(marker), false, "git ran the moved repository's fsmonitor");
      // the one that was there at the start is not the watch's (the sandbox shows it read-only)
      assert.ok(fs.existsSync(path.join(root, 'old/.git/config')));
      // a good plain one stays
      const ok = spawnSync('git', ['init', '-q', path.join(root, 'src/plain')], { encoding: 'utf8' });
      assert.equal(ok.status, 0, ok.stderr);
    } finally {
      w.stop().catch(() => undefined);
    }
    await w.stop();
    assert.ok(fs.existsSync(path.join(root, 'src/plain/.git/config')), 'git init stays');
    assert.deepEqual(held.map((h) => h.rel).sort(), ['hooked/.git', 'later/.git', 'src/a/.git', 'src/a/b/c/.git', 'src/prep/.git']);
    // stop() looks through the folders once more: one made after the watches closed and before stop() is seen by that sweep
    const late = watchNewRepositories(root, (h) => held.push(h));
    writeFiles(root, { 'late/.git/config': evil });
    await late.stop();
    assert.ok(
      held.some((h) => h.rel === 'late/.git'),
      JSON.stringify(held),
    );
    // control: git obeys such a repository
    writeFiles(root, { 'ctl/.git/HEAD': 'ref: refs/heads/main\n', 'ctl/.git/config': evil, 'ctl/f': 'x' });
    fs.mkdirSync(path.join(root, 'ctl/.git/objects'));
    fs.mkdirSync(path.join(root, 'ctl/.git/refs'));
    spawnSync('git', ['-C', path.join(root, 'ctl'), 'status'], { encoding: 'utf8' });
    assert.ok(fs.existsSync(marker), 'control: git runs core.fsmonitor from a repository like the ones moved aside');
    fs.rmSync(marker);
  });

  it('the shapes a red team used: a bare repository made of an existing folder, a .git replaced by renaming its folder, a config written through a hard link, one in node_modules, and more folders than the watch budget', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-rt-'));
    const marker = path.join(root, '..', `${path.basename(root)}-fsmonitor-ran`);
    const evil = `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${marker}; false"\n`;
    writeFiles(root, {
      '.git/HEAD': 'ref: refs/heads/main\n',
      'src/index.js': '',
      'lib/.git/HEAD': 'ref: refs/heads/main\n',
      'lib/.git/config': '[core]\n\tbare = false\n',
      'notes/cfg.txt': '[core]\n\tbare = false\n',
      'node_modules/mylib/index.js': '',
      'fixture.git/HEAD': 'ref: refs/heads/main\n',
      'fixture.git/config': '[core]\n\tbare = true\n',
    });
    for (const d of ['lib/.git/objects', 'lib/.git/refs', 'fixture.git/objects', 'fixture.git/refs']) fs.mkdirSync(path.join(root, d));
    const held: HeldRepository[] = [];
    const blind: string[] = [];
    const w = watchNewRepositories(root, (h) => held.push(h), { budget: 200, blind: (why) => blind.push(why) });
    try {
      // a bare repository made of a folder that was there (nothing named .git)
      writeFiles(root, { 'src/HEAD': 'ref: refs/heads/main\n', 'src/config': `${evil}\tworktree = .\n` });
      fs.mkdirSync(path.join(root, 'src/objects'));
      fs.mkdirSync(path.join(root, 'src/refs'));
      assert.ok(await until(() => held.some((h) => h.rel === 'src')), JSON.stringify(held));
      assert.ok(fs.existsSync(path.join(root, `src/HEAD${HELD_SUFFIX}`)) && !fs.existsSync(path.join(root, 'src/HEAD')));
      // the repository that was there moved away with its folder, and a new one made at its path
      fs.renameSync(path.join(root, 'lib'), path.join(root, 'lib-old'));
      writeFiles(root, { 'lib/.git/HEAD': 'ref: refs/heads/main\n', 'lib/.git/config': evil });
      assert.ok(await until(() => held.some((h) => h.rel === 'lib/.git')), JSON.stringify(held));
      // a harmless config that is a hard link to another workspace file, changed later through that file
      writeFiles(root, { 'hl/.git/HEAD': 'ref: refs/heads/main\n' });
      fs.linkSync(path.join(root, 'notes/cfg.txt'), path.join(root, 'hl/.git/config'));
      assert.ok(await until(() => held.some((h) => h.rel === 'hl/.git' && /hard link/.test(h.why))), JSON.stringify(held));
      // in node_modules
      writeFiles(root, { 'node_modules/mylib/.git/HEAD': 'ref: refs/heads/main\n', 'node_modules/mylib/.git/config': evil });
      assert.ok(await until(() => held.some((h) => h.rel === 'node_modules/mylib/.git')), JSON.stringify(held));
      // a gitdir: through a link and `..` (path.resolve would read it as the workspace's own .git; git follows the link)
      fs.mkdirSync(path.join(root, 'z'));
      spawnSync('git', ['init', '-q', path.join(root, 'z')], { encoding: 'utf8' });
      await new Promise((r) => setTimeout(r, 150));
      writeFiles(root, {
        'z/.git/a/b/.keep': '',
        'z/.git/.git/HEAD': 'ref: refs/heads/main\n',
        'z/.git/.git/config': evil,
        'sub/keep': '',
      });
      fs.symlinkSync('../z/.git/a/b', path.join(root, 'sub', 'ln'));
      fs.writeFileSync(path.join(root, 'sub', '.git'), 'gitdir: ln/../../.git\n');
      assert.ok(await until(() => held.some((h) => h.rel === 'sub/.git')), JSON.stringify(held));
      // more folders made than the budget (200 here): the watch says it can no longer see them all (the session
      // then stops the server)
      assert.deepEqual(blind, []);
      for (let i = 0; i < 300; i++) fs.mkdirSync(path.join(root, 'many', String(i)), { recursive: true });
      assert.ok(await until(() => blind.length === 1), 'blind after the budget');
      assert.match(blind[0], /made more folders than the 200 MCP Gate watches/);
      // and the look-through at the stop still finds one made deep below them
      let deep = path.join(root, 'many', '299');
      for (let i = 0; i < 80; i++) deep = path.join(deep, 'd');
      writeFiles(deep, { '.git/HEAD': 'ref: refs/heads/main\n', '.git/config': evil });
      // a bare repository that was there (a test fixture) is left alone while nobody changes it
      assert.ok(fs.existsSync(path.join(root, 'fixture.git/HEAD')));
    } finally {
      await w.stop();
    }
    assert.ok(
      held.some((h) => h.rel.endsWith('/d/.git')),
      JSON.stringify(held),
    );
    assert.ok(fs.existsSync(path.join(root, 'lib-old/.git/config')), "the repository that was there is not the watch's");
    for (const d of ['src', 'lib', 'hl', 'sub', path.join('node_modules', 'mylib')]) {
      spawnSync('git', ['-C', path.join(root, d), 'status'], {
        encoding: 'utf8',
        env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(root) },
      });
    }
    assert.equal(fs.existsSync(marker), false, "git ran a held repository's fsmonitor");
    // control: git takes such a folder for a repository and runs its fsmonitor
    writeFiles(root, { 'ctl/HEAD': 'ref: refs/heads/main\n', 'ctl/config': `${evil}\tworktree = .\n` });
    fs.mkdirSync(path.join(root, 'ctl/objects'));
    fs.mkdirSync(path.join(root, 'ctl/refs'));
    spawnSync('git', ['-C', path.join(root, 'ctl'), 'status'], {
      encoding: 'utf8',
      env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(root) },
    });
    assert.ok(fs.existsSync(marker), 'control: git runs core.fsmonitor from a bare-shaped folder');
    fs.rmSync(marker);
  });

  it('a workspace over the budget at its start is looked through every few seconds: a repository made in a folder no watch covers is held while it runs', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-big-'));
    for (let i = 0; i < 60; i++) fs.mkdirSync(path.join(root, 'pkg', String(i)), { recursive: true });
    const held: HeldRepository[] = [];
    const blind: string[] = [];
    const w = watchNewRepositories(root, (h) => held.push(h), { budget: 20, blind: (why) => blind.push(why) });
    try {
      assert.match(String(w.problem), /more than 20 folders: the rest is looked through every few seconds/);
      writeFiles(root, { 'pkg/59/.git/HEAD': 'ref: refs/heads/main\n', 'pkg/59/.git/config': '[core]\n\tfsmonitor = x\n' });
      assert.ok(await until(() => held.some((h) => h.rel === 'pkg/59/.git'), 8000), JSON.stringify(held));
      assert.deepEqual(blind, [], 'folders that were there do not stop it');
    } finally {
      await w.stop();
    }
  });

  it('an entry agents or editors obey that appears while it runs (in any folder, not node_modules) is told once, not moved; one that was there is not told', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-obeyed-'));
    writeFiles(root, { 'AGENTS.md': 'there before\n', 'packages/app/src/x.js': '', 'node_modules/dep/index.js': '' });
    const appeared: string[] = [];
    const w = watchNewRepositories(root, () => undefined, {
      obeyed: { names: ['AGENTS.md', 'CLAUDE.md', '.vscode', '.github/copilot-instructions.md'], appeared: (r) => appeared.push(r) },
    });
    try {
      fs.appendFileSync(path.join(root, 'AGENTS.md'), 'changed: it is read-only in the sandbox, and was there\n');
      writeFiles(root, {
        'packages/app/CLAUDE.md': 'new',
        'packages/app/.github/copilot-instructions.md': 'new',
        'node_modules/dep/AGENTS.md': "a package's own",
        'packages/app/src/notes.md': 'data',
      });
      fs.mkdirSync(path.join(root, 'packages/app/.vscode'));
      assert.ok(await until(() => appeared.length >= 3), JSON.stringify(appeared));
      fs.appendFileSync(path.join(root, 'packages/app/CLAUDE.md'), 'more');
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await w.stop();
    }
    assert.deepEqual(appeared.sort(), ['packages/app/.github/copilot-instructions.md', 'packages/app/.vscode', 'packages/app/CLAUDE.md']);
    assert.ok(fs.existsSync(path.join(root, 'packages/app/CLAUDE.md')), 'left in place');
  });

  it('red team 8: a gitdir: whose name ends in a space, and a folder git takes for a repository by HEAD and a commondir, are held', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-rt8-'));
    const marker = path.join(root, '..', `${path.basename(root)}-ran`);
    writeFiles(root, { '.git/HEAD': 'ref: refs/heads/main\n', 'docs/README.md': '', 'sub/keep': '' });
    const held: HeldRepository[] = [];
    const w = watchNewRepositories(root, (h) => held.push(h));
    try {
      // `.git ` (trailing space) holds HEAD and a commondir to a store whose config runs a program
      writeFiles(root, {
        'store/config': `[core]\n\tfsmonitor = "touch ${marker}; false"\n`,
        'store/refs/heads/.keep': '',
        'store/objects/.keep': '',
      });
      writeFiles(root, { '.git /HEAD': 'ref: refs/heads/main\n', '.git /commondir': '../store\n' });
      fs.writeFileSync(path.join(root, 'sub', '.git'), 'gitdir: ../.git \n');
      assert.ok(await until(() => held.some((h) => h.rel === 'sub/.git')), JSON.stringify(held));
      // docs/ made a repository by HEAD and a commondir (its pager would run in a terminal)
      writeFiles(root, { 'docs/commondir': '../store\n', 'docs/HEAD': 'ref: refs/heads/main\n' });
      assert.ok(await until(() => held.some((h) => h.rel === 'docs' && /commondir/.test(h.why))), JSON.stringify(held));
    } finally {
      await w.stop();
    }
    assert.ok(
      held.some((h) => h.rel === '.git '),
      `the .git  folder itself: ${JSON.stringify(held)}`,
    );
    spawnSync('git', ['-C', path.join(root, 'sub'), 'status'], {
      encoding: 'utf8',
      env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(root) },
    });
    assert.equal(fs.existsSync(marker), false);
  });

  it('a .code-workspace file (by its ending) that appears while it runs is told', async () => {
    const root = fs.realpathSync(tempDir('mcp-gate-repos-cw-'));
    writeFiles(root, { 'old.code-workspace': '{}', 'pkg/a.txt': '' });
    const appeared: string[] = [];
    const w = watchNewRepositories(root, () => undefined, {
      obeyed: { names: [], suffixes: ['.code-workspace'], appeared: (r) => appeared.push(r) },
    });
    try {
      writeFiles(root, { 'pkg/mono.code-workspace': '{"tasks":{}}', 'old.code-workspace': '{"changed":1}' });
      assert.ok(await until(() => appeared.length > 0));
    } finally {
      await w.stop();
    }
    assert.deepEqual(appeared, ['pkg/mono.code-workspace']);
  });
});
