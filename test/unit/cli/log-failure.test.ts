// When the exchange log cannot be written, the CLI says so once on stderr and calls go on; with `requireLog`
// in the user's MCP Gate configuration, calls are refused with a line naming the log file. A repository cannot
// set requireLog (it is a user-only key; see user-only-keys.test.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, cli, ROOT, world, type World } from '../helpers';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

function approvedWithBrokenLog(config: Record<string, unknown> = {}): { w: World; logFile: string } {
  const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } }) });
  writeProjectConfig(w, { rules: [{ action: 'mcp.fx.tool.*', decision: 'allow' }], ...config });
  const approved = cli(w, ['approve', 'fx', '--yes']);
  assert.equal(approved.code, 0, approved.stderr);
  const logFile = path.join(w.store, 'log.jsonl');
  fs.rmSync(logFile, { force: true });
  fs.mkdirSync(logFile); // the log cannot be appended to (even as root)
  return { w, logFile };
}

const count = (text: string, re: RegExp) => (text.match(new RegExp(re.source, 'g')) ?? []).length;

describe('exchange log that cannot be written (CLI)', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('by default: one warning naming the log file, and the call answers', () => {
    const { w, logFile } = approvedWithBrokenLog();
    const r = cli(w, ['call', 'fx', 't0', '--args', '{"text":"unlogged"}']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /t0: unlogged/);
    assert.equal(count(r.stderr, /cannot be written/), 1, r.stderr);
    assert.ok(r.stderr.includes(`warning: the exchange log ${logFile} cannot be written`), r.stderr);
    assert.match(r.stderr, /"requireLog": true/);
  });

  it('with "requireLog": true: the call is refused with a line naming the log file, and never reaches the server', () => {
    const { w, logFile } = approvedWithBrokenLog({ requireLog: true });
    const r = cli(w, ['call', 'fx', 't0', '--args', '{"text":"must not run"}']);
    assert.equal(r.code, 1, r.stdout);
    assert.doesNotMatch(r.stdout, /must not run/);
    assert.ok(r.stderr.includes(`mcp-gate: refused: the exchange log ${logFile} cannot be written`), r.stderr);
    assert.match(r.stderr, /your setting requireLog refuses calls until it can/);
    // once the log can be written again, the same call answers
    fs.rmdirSync(logFile);
    const again = cli(w, ['call', 'fx', 't0', '--args', '{"text":"logged"}']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /t0: logged/);
  });

  it("a call's lines are in the file in order (with and without requireLog); with requireLog its first one already when the server runs it", () => {
    for (const requireLog of [true, false]) {
      const w = world({});
      const logFile = path.join(w.store, 'log.jsonl');
      // a user server (uncontained: it can read the store's log)
      const config = path.join(w.home, '.config', 'mcp-gate', 'config.json');
      fs.mkdirSync(path.dirname(config), { recursive: true });
      fs.writeFileSync(
        config,
        JSON.stringify({
          servers: { fx: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_READ_FILE: logFile } } },
          rules: [{ action: 'mcp.fx.tool.*', decision: 'allow' }],
          ...(requireLog ? { requireLog: true } : {}),
        }),
      );
      const r = cli(w, ['call', 'fx', 't0', '--args', '{"text":"audit me"}']);
      assert.equal(r.code, 0, r.stderr);
      const seenByServer = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { kind: string; tool?: string });
      const lines = fs
        .readFileSync(logFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; tool?: string; about?: string; outcome?: string });
      const call = lines.filter((l) => l.tool === 't0' || l.about === 't0').map((l) => `${l.kind}${l.outcome ? ` ${l.outcome}` : ''}`);
      assert.deepEqual(call, ['tool.call', 'mcp.request answered', 'tool.result'], `requireLog ${requireLog}`);
      // Without requireLog the line is appended in the same turn as the request is sent, after it (src/host/session/call.ts
      // callLines): a server in another process may run the call first, so only requireLog promises the line before it.
      if (requireLog)
        assert.ok(
          seenByServer.some((l) => l.kind === 'tool.call' && l.tool === 't0'),
          `the server ran the call before its line was in the file:\n${r.stdout}`,
        );
    }
  });

  it('"requireLog" that is not a boolean makes the configuration invalid, naming it', () => {
    const w = world({});
    writeProjectConfig(w, { requireLog: 'yes' });
    const r = cli(w, ['doctor']);
    assert.match(r.stdout + r.stderr, /"requireLog" must be true or false/);
  });
});
