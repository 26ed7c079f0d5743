// What git runs or obeys from the worktree (src/trust/plan/git-paths.ts): every path the repository's own git
// configuration names as a hook folder, a command or an included configuration file, inside the workspace.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import * as fs from 'node:fs';
import { gitConfigEntries, gitExecutedPaths, nestedGitPaths } from '../../../../src/trust/plan/git-paths';
import { cleanupTemp, tempDir, writeFiles } from '../../helpers';

describe('git paths: what git runs from the worktree', () => {
  after(cleanupTemp);

  it('reads git config syntax: sections, subsections, quotes, comments, one-line sections', () => {
    assert.deepEqual(
      gitConfigEntries(
        '[core]\n\thooksPath = .husky # comment\n[filter "lfs"]\n\tclean = "./tools/clean.sh" %f\n[Core] fsmonitor = ./fsm\n',
      ),
      [
        { key: 'core.hookspath', value: '.husky' },
        { key: 'filter.lfs.clean', value: './tools/clean.sh %f' },
        { key: 'core.fsmonitor', value: './fsm' },
      ],
    );
  });

  it('names hooksPath, fsmonitor, drivers and included files inside the workspace, not outside or in .git', () => {
    const w = writeFiles(path.join(tempDir(), 'w'), {
      '.git/config':
        '[core]\n\thooksPath = .husky\n\tfsmonitor = tools/fsmonitor.js\n[include]\n\tpath = ../extra.gitconfig\n[diff "x"]\n\ttextconv = /usr/bin/cat\n[remote "origin"]\n\turl = https://example.com/r.git\n',
      'extra.gitconfig': '[merge "m"]\n\tdriver = ./scripts/merge.sh %O %A %B\n[include]\n\tpath = .git/hooks-config\n',
      '.husky/pre-commit': 'echo hi',
    });
    assert.deepEqual(
      gitExecutedPaths(w).map((p) => path.relative(w, p)),
      ['.husky', 'extra.gitconfig', 'scripts/merge.sh', 'tools/fsmonitor.js'],
    );
  });

  it('no .git, or an unreadable config: nothing named', () => {
    const w = writeFiles(path.join(tempDir(), 'w'), { 'a.txt': '1' });
    assert.deepEqual(gitExecutedPaths(w), []);
  });
  it("every .git below the workspace's own: nested repositories with what their config names, gitdir files and their targets, node_modules too; not links", () => {
    const w = writeFiles(path.join(tempDir(), 'w'), {
      '.git/config': '[core]\n',
      'vendor/lib/.git/config': '[core]\n\thooksPath = .githooks\n',
      'deep/a/b/c/.git/HEAD': 'ref: refs/heads/main\n',
      'mods/sub/.git': 'gitdir: ../../gitdirs/sub\n',
      'gitdirs/sub/config': '[core]\n',
      'node_modules/dep/.git/config': '[core]\n',
      'src/index.js': '1',
    });
    fs.symlinkSync(path.join(w, 'vendor'), path.join(w, 'linked'));
    const r = nestedGitPaths(w);
    assert.equal(r.truncated, false);
    assert.deepEqual(
      r.paths.map((p) => path.relative(w, p)),
      ['deep/a/b/c/.git', 'gitdirs/sub', 'mods/sub/.git', 'node_modules/dep/.git', 'vendor/lib/.git', 'vendor/lib/.githooks'],
    );
  });
  it("a folder of a bare repository's shape (HEAD, objects, refs) is protected whole; in the root, what git obeys in it", () => {
    const w = writeFiles(path.join(tempDir(), 'w'), {
      'fixtures/repo.git/HEAD': 'ref: refs/heads/main\n',
      'fixtures/repo.git/config': '[core]\n\tbare = true\n',
      'src/HEAD': 'not a repository: no objects or refs',
    });
    for (const d of ['fixtures/repo.git/objects', 'fixtures/repo.git/refs']) fs.mkdirSync(path.join(w, d));
    assert.deepEqual(
      nestedGitPaths(w).paths.map((p) => path.relative(w, p)),
      ['fixtures/repo.git'],
    );
    const r = writeFiles(path.join(tempDir(), 'r'), { HEAD: 'ref: refs/heads/main\n', config: '[core]\n', 'README.md': '' });
    for (const d of ['objects', 'refs']) fs.mkdirSync(path.join(r, d));
    assert.deepEqual(
      nestedGitPaths(r).paths.map((p) => path.relative(r, p)),
      ['HEAD', 'config'],
    );
  });
  it('entries named by their ending (a .code-workspace file) are protected in every folder, the root too', () => {
    const w = writeFiles(path.join(tempDir(), 'w'), {
      'mono.code-workspace': '{}',
      'pkg/app.code-workspace': '{}',
      'pkg/notes.txt': '',
      'node_modules/x/y.code-workspace': '{}',
    });
    assert.deepEqual(
      nestedGitPaths(w, [], ['.code-workspace']).paths.map((p) => path.relative(w, p)),
      ['mono.code-workspace', 'pkg/app.code-workspace'],
    );
  });
  it('entries tools obey, named by the caller, in any folder below the root (not the root, not in node_modules, not through links); a name with a / is looked for under its first part', () => {
    const w = writeFiles(path.join(tempDir(), 'w'), {
      'AGENTS.md': 'root one: protected by its own list',
      'packages/a/AGENTS.md': 'x',
      'packages/a/.claude/settings.json': '{}',
      'packages/a/.github/copilot-instructions.md': 'x',
      'packages/a/.github/workflows/ci.yml': 'x',
      'packages/b/src/deep/.envrc': 'x',
      'node_modules/dep/AGENTS.md': 'x',
    });
    fs.symlinkSync(path.join(w, 'packages/a/.claude'), path.join(w, 'packages/b/.claude'));
    const r = nestedGitPaths(w, ['AGENTS.md', '.claude', '.envrc', '.github/copilot-instructions.md', '.github/prompts']);
    assert.deepEqual(
      r.paths.map((p) => path.relative(w, p)),
      ['packages/a/.claude', 'packages/a/.github/copilot-instructions.md', 'packages/a/AGENTS.md', 'packages/b/src/deep/.envrc'],
    );
  });
  it("a submodule whose git folder is inside the workspace's own .git: nothing inside that .git is named (it is hidden whole), its config is still read; sockets are found in node_modules and nested .git too", () => {
    const w = writeFiles(path.join(tempDir(), 'w'), {
      '.git/config': '[core]\n',
      '.git/modules/sub/config': '[core]\n\thooksPath = .githooks\n',
      'sub/.git': 'gitdir: ../.git/modules/sub\n',
      'sub/.githooks/.keep': '',
      'vendor/lib/.git/config': '[core]\n',
      'node_modules/.cache/x': '',
    });
    const net = require('node:net') as typeof import('node:net');
    const servers = [path.join(w, 'node_modules/.cache/daemon.sock'), path.join(w, 'vendor/lib/.git/fsmonitor--daemon.ipc')].map((p) =>
      net.createServer().listen(p),
    );
    try {
      const r = nestedGitPaths(w);
      assert.deepEqual(
        r.paths.map((p) => path.relative(w, p)),
        ['sub/.git', 'sub/.githooks', 'vendor/lib/.git'],
      );
      assert.deepEqual(
        r.sockets.map((p) => path.relative(w, p)),
        ['node_modules/.cache/daemon.sock', 'vendor/lib/.git/fsmonitor--daemon.ipc'],
      );
      assert.equal(r.socketsTruncated, false);
    } finally {
      for (const s of servers) s.close();
    }
  });
});
