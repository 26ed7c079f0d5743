// Starts after taking in (src/guard/node/inline.ts; src/guard/CONTRACT.md, "Starts after taking in (both guards)"):
// which starts may go ahead once a process took in what is not as approved — the shapes red teams 17 and 18 used to
// run code through a program's arguments are each not safe, the starts servers make every day are.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isCodeOption, startNotSafe } from '../../../src/guard/node/inline';

const NO_ENV = new Map<string, string>(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
const split = (line: string): string[] => line.split(' ');

describe('load guard: starts after taking in (inline.ts)', () => {
  it('the starts servers make go ahead: safe programs, guarded interpreters, a simple shell line of them', () => {
    for (const line of [
      'git status',
      'git --version',
      'git log -n 5 --oneline',
      '/usr/bin/git diff HEAD -- src',
      'rg -n pattern src',
      'grep -r x .',
      'ls -la',
      'node -e 1',
      '/usr/bin/python3 -c pass',
      'find . -name *.ts',
      'sort -u f',
    ])
      assert.equal(startNotSafe(split(line), NO_ENV), null, line);
    assert.equal(startNotSafe(['sh', '-c', 'git status --short'], NO_ENV), null);
    assert.equal(startNotSafe(['/bin/bash', '-ec', "git log --format='%H'"], NO_ENV), null);
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
      [['git', 'ls-remote', '--upload-pa=id', '.'], /^git --upload-pa=id$/],
      [['git', 'ls-remote', '--upl', 'id', '.'], /^git --upl$/],
      [['git', '--git-dir=fake', 'status'], /^git --git-dir=fake$/],
      [['git', 'submodule', 'foreach', 'id'], /^git submodule$/],
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
    assert.equal(startNotSafe(['git', 'status'], small), null);
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
      assert.equal(startNotSafe(['sh', '-c', 'git status'], e), `with ${v} in its environment`, v);
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
});
