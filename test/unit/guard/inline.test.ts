// Starts after taking in (src/guard/node/inline.ts; src/guard/CONTRACT.md, "Starts after taking in (both guards)"):
// which starts may go ahead once a process took in what is not as approved — the shapes red teams 17 and 18 used to
// run code through a program's arguments are each not safe, the starts servers make every day are.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { configEntries } from '../../../src/guard/node/git';
import { gitWords, isCodeOption, startNotSafe } from '../../../src/guard/node/inline';
import table from '../../../src/guard/python/mcp_gate_guard_parts/command_lines.json';

const NO_ENV = new Map<string, string>(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
const split = (line: string): string[] => line.split(' ');

describe('load guard: starts after taking in (inline.ts)', () => {
  it('the starts servers make go ahead: safe programs, guarded interpreters, a simple shell line of them', () => {
    for (const line of [
      'git --version',
      'rg -n pattern src',
      'grep -r x .',
      'ls -la',
      'node -e 1',
      '/usr/bin/python3 -c pass',
      'find . -name *.ts',
      'sort -u f',
    ])
      assert.equal(startNotSafe(split(line), NO_ENV), null, line);
    assert.equal(startNotSafe(['sh', '-c', 'git --version'], NO_ENV), null);
    assert.equal(startNotSafe(['/bin/bash', '-ec', 'git --version'], NO_ENV), null);
  });

  it('red teams 17 and 18: each start that can run code it is given is not safe, and says why', () => {
    const cases: [string[], RegExp][] = [
      [['sh', '-c', 'echo ok; touch /tmp/x'], /^sh$/],
      [['sh', '-c', 'git $(cat f)'], /^sh$/],
      [['sh', '-c', 'sed -n 1p f'], /^sh -c 'sed -n 1p f'$/],
      [['sh', '-c', 'git status', 'x'], /^sh$/],
      [['sed', '-n', '-e', '1e id', 'f'], /^sed$/],
      [['sed', '-n', '-f', '-', 'f'], /^sed$/],
      [['gdb', '-batch', '-ex', 'shell id'], /^gdb$/],
      [['zip', '-T', '-TT', 'sh -c id #', 'z.zip', 'f'], /^zip$/],
      [['sqlite3', ':memory:', '.shell id'], /^sqlite3$/],
      [['ssh', '-vo', 'ProxyCommand=id', 'h'], /^ssh$/],
      [['tar', '--to-com=id', '-xf', 'a.tar'], /^tar$/],
      [['ed', '-s', 'f'], /^ed$/],
      [['env', 'X=1', 'git', 'status'], /^env$/],
      [['xargs', 'git'], /^xargs$/],
      [['git', '-c', 'core.pager=id', '--version'], /^git -c$/],
      [['git', '-cx=y', 'status'], /^git -cx=y$/],
      [['git', '--exec-path=gx', 'x'], /^git --exec-path=gx$/],
      [['git', 'ls-remote', '--upload-pa=id', '.'], /^git ls-remote --upload-pa=id$/],
      [['git', 'ls-remote', '--upl', 'id', '.'], /^git ls-remote --upl$/],
      [['git', '--git-dir=fake', 'status'], /^git --git-dir=fake$/],
      [['git', 'submodule', 'foreach', 'id'], /^git submodule, not a git command of the table,$/],
      [['rg', '--pre', 'id', 'x'], /^rg --pre$/],
      [['rg', '-uz', 'x'], /^rg -uz$/],
      [['find', '.', '-exec', 'id', ';'], /^find -exec$/],
      [['sort', '--compress-prog=id', 'f'], /^sort --compress-prog=id$/],
      [['/proc/self/exe', '-e', '1'], /^exe$/],
      // red team 19: a login shell reads startup files, zsh its .zshenv; find reads its expression after '--'
      [['bash', '-lc', 'git status'], /^bash$/],
      [['zsh', '-c', 'git status'], /^zsh$/],
      [['find', '--', '.', '-exec', 'id', ';'], /^find -exec$/],
    ];
    for (const [words, why] of cases) assert.match(startNotSafe(words, NO_ENV) ?? 'allowed', why, words.join(' '));
  });

  it('a command-line variable the process set, even for a safe program or an interpreter, is not safe; one left out is', () => {
    const env = new Map(NO_ENV);
    env.set('GIT_CONFIG_GLOBAL', '/ws/evil.cfg');
    assert.equal(startNotSafe(['git', 'status'], env), 'with GIT_CONFIG_GLOBAL in its environment');
    env.delete('GIT_CONFIG_GLOBAL');
    env.set('TAR_OPTIONS', '--to-command=id');
    assert.equal(startNotSafe(['node', 'x.js'], env), 'with TAR_OPTIONS in its environment');
    const small = new Map([['PATH', process.env.PATH ?? '']]); // (a child given a small environment of its own)
    assert.equal(startNotSafe(['git', '--version'], small), null);
    // red team 19: where programs are found, and a shell's own variables, count too
    for (const [v, value] of [
      ['PATH', `/tmp/fake-bin:${process.env.PATH ?? ''}`],
      ['HOME', '/ws/h'],
      ['GIT_COMMON_DIR', '/ws/gd'],
      ['BASH_FUNC_git%%', '() { id; }'],
      ['PS4', '$(id)'],
    ]) {
      const e = new Map(NO_ENV);
      e.set(v, value);
      assert.equal(startNotSafe(['sh', '-c', 'git --version'], e), `with ${v} in its environment`, v);
    }
  });

  it('a program or interpreter of the table counts only as the system file it is: a link named git or python3 elsewhere does not (red team 19)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-inline-'));
    try {
      fs.symlinkSync('/bin/sh', path.join(dir, 'git'));
      fs.symlinkSync('/bin/sh', path.join(dir, 'python3'));
      assert.match(startNotSafe([path.join(dir, 'git'), '-s'], NO_ENV) ?? 'allowed', /^git, at .*, not the system's own,$/);
      assert.match(startNotSafe([path.join(dir, 'python3'), '-s'], NO_ENV) ?? 'allowed', /^python3, at /);
      const e = new Map(NO_ENV);
      assert.match(startNotSafe(['sh', '-c', `${dir}/git status`], e) ?? 'allowed', /^sh -c/);
      assert.equal(startNotSafe(['/usr/bin/git', '--version'], NO_ENV), null);
      assert.match(startNotSafe(['no-such-program-here'], NO_ENV) ?? 'allowed', /^no-such-program-here$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a code option is matched exactly, as --long=value, by an abbreviation and in a cluster of short options', () => {
    assert.ok(isCodeOption('--to-command', ['--to-command']));
    assert.ok(isCodeOption('--to-command=id', ['--to-command']));
    assert.ok(isCodeOption('--to-com', ['--to-command']));
    assert.ok(isCodeOption('-vo', ['-o']));
    assert.ok(isCodeOption('-oProxyCommand=x', ['-o']));
    assert.ok(!isCodeOption('-C', ['-c']));
    assert.ok(!isCodeOption('--tox', ['--to-command']));
    assert.ok(!isCodeOption('--', ['--to-command']));
    assert.ok(!isCodeOption('status', ['-c']));
  });
  it("git: its own options and the subcommand's are told apart (switch -c, status -uno go ahead); an alias or a command of git's not in the table is not safe", () => {
    const code = (table.safe as { names: string; code: string[] }[]).find((e) => e.names === '^git$')!.code;
    for (const line of [
      'git status -uno --short',
      'git switch -c b2',
      'git log -n 5 --oneline',
      'git diff HEAD -- src',
      'git commit -q -m x -u',
      'git clone -q https://h/r.git d',
    ])
      assert.equal(typeof gitWords(split(line), code, '/w'), 'object', line);
    assert.deepEqual(gitWords(split('git -C sub status'), code, '/w'), { dir: '/w/sub', sub: 'status', rest: [] });
    assert.deepEqual(gitWords(['git', '-C', '/r', '-C', 'x', '--no-pager', 'log', '-1'], code, '/w'), {
      dir: '/r/x',
      sub: 'log',
      rest: ['-1'],
    });
    const cases: [string, string][] = [
      ['git p', 'git p, not a git command of the table,'],
      ['git -C r p', 'git p, not a git command of the table,'],
      ['git lfs pull', 'git lfs, not a git command of the table,'],
      ['git help log', 'git help, not a git command of the table,'],
      ['git --help', 'git --help'],
      ['git -c x=y status', 'git -c'],
      ['git clone -u id h:r', 'git clone -u'],
      ['git clone --recurse-submodules h:r', 'git clone --recurse-submodules'],
      ['git rebase -x id main', 'git rebase -x'],
      ['git rebase -i main', 'git rebase -i'],
      ['git grep -Oid x', 'git grep -Oid'],
      ['git init --templ=t d', 'git init --templ=t'],
      ['git config --edit', 'git config --edit'],
      ['git push --exec=id o', 'git push --exec=id'],
    ];
    for (const [line, why] of cases) assert.equal(gitWords(split(line), code, '/w'), why, line);
  });

  it('git configuration is read key by key; a value continued on the next line or a line git reads otherwise is no plain configuration', () => {
    assert.deepEqual(
      configEntries('[core]\n\tbare = false\n[remote "origin"]\n\turl = https://h/r.git # c\n[alias] p = "!id"\n[Core.Sub]\nX\n'),
      [
        { key: 'core.bare', value: 'false' },
        { key: 'remote.origin.url', value: 'https://h/r.git' },
        { key: 'alias.p', value: '!id' },
        { key: 'core.sub.x', value: 'true' },
      ],
    );
    assert.equal(configEntries('[alias]\n\tp = !echo \\\n  id\n'), null);
    assert.equal(configEntries('fsmonitor = id\n'), null); // (a key before any section)
    assert.equal(configEntries('[core\n'), null);
  });
});
