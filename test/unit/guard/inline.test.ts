// Starts after taking in (src/guard/node/inline.ts; src/guard/CONTRACT.md, "Starts after taking in (both guards)"):
// which starts may go ahead once a process took in what is not as approved — the shapes red teams 17 and 18 used to
// run code through a program's arguments are each not safe, the starts servers make every day are.
import assert from 'node:assert/strict';
import { isCodeOption, startNotSafe } from '../../../src/guard/node/inline';

const NO_ENV = new Map<string, string>(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
const split = (line: string): string[] => line.split(' ');

describe('load guard: starts after taking in (inline.ts)', () => {
  it('the starts servers make go ahead: safe programs, guarded interpreters, a simple shell line of them', () => {
    for (const line of [
      'git status',
      'git --version',
      'git log -n 5 --oneline',
      '/usr/bin/git diff HEAD -- -c',
      'rg -n pattern src',
      'grep -r x .',
      'ls -la',
      'node -e 1',
      '/run/mcp-gate/bin/python3.11 -c pass',
      'find . -name *.ts',
      'sort -u f',
    ])
      assert.equal(startNotSafe(split(line), NO_ENV), null, line);
    assert.equal(startNotSafe(['sh', '-c', 'git status --short'], NO_ENV), null);
    assert.equal(startNotSafe(['/bin/bash', '-lc', "git log --format='%H'"], NO_ENV), null);
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
    const small = new Map([['PATH', '/usr/bin']]); // (a child given a small environment of its own)
    assert.equal(startNotSafe(['git', 'status'], small), null);
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
