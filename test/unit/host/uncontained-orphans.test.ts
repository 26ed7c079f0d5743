// Nothing outlives an uncontained server (README "Contained execution", issue 25): a user server, and a repository
// server the user opted out of the sandbox, run in their own PID namespace (bubblewrap with only --unshare-pid), so
// every shape of process they start — a plain child, a double-forked `setsid` daemon, a `nohup` child — ends with
// every kind of stop: the session's close, and the server exiting by itself. Real processes, found in /proc by a
// marker in their command line; anything a failing test leaves is killed by its pid.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { EventLog } from '../../../src/host/log/log';
import { Session, type SessionOptions } from '../../../src/host/session';
import { Masker } from '../../../src/policy/mask';
import { loadUserPolicy } from '../../../src/policy/user-policy';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { inProcess } from '../../../src/trust/packages/npm-resolve';
import { cleanupTemp, processesWith, until, world, type World } from '../helpers';
import { miniServer } from '../mini-server';

/** Pids whose command line holds `marker`. */
const withMarker = (marker: string) => processesWith(marker, { exclude: process.pid });

/** A dependency-free MCP server that starts the three shapes, each carrying `marker` in its arguments. */
function serverSource(marker: string, exitAfterMs?: number): string {
  const node = JSON.stringify(process.execPath);
  const idle = JSON.stringify('setInterval(()=>{},1000)');
  return miniServer(`
const { spawn } = require('node:child_process');
const node = ${node};
// a plain child
spawn(node, ['-e', ${idle}, '${marker}-child'], { stdio: 'ignore' });
// a double-forked daemon in its own session: setsid, then sh starts it in the background and exits
spawn('setsid', ['sh', '-c', node + ' -e "' + ${idle} + '" ${marker}-daemon >/dev/null 2>&1 &'], { stdio: 'ignore', detached: true }).unref();
// a nohup child started by a shell that exits
spawn('sh', ['-c', 'nohup ' + node + ' -e "' + ${idle} + '" ${marker}-nohup >/dev/null 2>&1 &'], { stdio: 'ignore' });
${exitAfterMs ? `setTimeout(() => process.exit(0), ${exitAfterMs});` : ''}
`);
}

describe('nothing outlives an uncontained server (its own PID namespace)', function () {
  this.timeout(120_000);
  const markers: string[] = [];
  after(() => {
    for (const m of markers)
      for (const pid of withMarker(m)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    cleanupTemp();
  });

  function options(w: World): SessionOptions & { log: EventLog } {
    const report = evaluateGate(w.input);
    const log = new EventLog(w.store, new Masker());
    return {
      report,
      policy: loadUserPolicy(report.userPolicy),
      log,
      storeDir: w.store,
      secrets: async () => undefined,
      env: { ...process.env, ...w.env },
      npm: inProcess,
      masker: new Masker(),
    } as SessionOptions & { log: EventLog };
  }

  const userWorld = (marker: string, exitAfterMs?: number): World => {
    const w = world({}, {});
    const script = path.join(w.home, 'srv.js');
    fs.writeFileSync(script, serverSource(marker, exitAfterMs));
    fs.mkdirSync(path.join(w.home, '.config', 'mcp-gate'), { recursive: true });
    fs.writeFileSync(
      path.join(w.home, '.config', 'mcp-gate', 'config.json'),
      JSON.stringify({
        servers: { mine: { command: process.execPath, args: [script] } },
        rules: [{ action: 'mcp.mine.tool.*', decision: 'allow' }],
      }),
    );
    return w;
  };

  const shapes = (marker: string) => ['child', 'daemon', 'nohup'].filter((s) => withMarker(`${marker}-${s}`).length > 0);

  it('a user server: its child, setsid daemon and nohup child all end when the session closes', async () => {
    const marker = `mcpgate-orphan-${randomUUID()}`;
    markers.push(marker);
    const o = options(userWorld(marker));
    const s = await Session.start(o);
    try {
      assert.deepEqual(s.servers(), ['mine'], s.notes.join('\n'));
      assert.ok(await until(() => shapes(marker).length === 3, 10_000), `started: ${shapes(marker).join(', ')}`);
      const start = o.log.read().filter((e) => e.kind === 'server.start' && (e as { detail?: string }).detail?.includes('PID namespace'));
      assert.deepEqual(start, [], 'bubblewrap is here: no fallback line');
    } finally {
      await s.close();
    }
    assert.ok(await until(() => withMarker(marker).length === 0, 5_000), `left behind: ${shapes(marker).join(', ')}`);
  });

  it('a user server that exits by itself takes all three with it', async () => {
    const marker = `mcpgate-orphan-${randomUUID()}`;
    markers.push(marker);
    const s = await Session.start(options(userWorld(marker, 2_500)));
    try {
      assert.deepEqual(s.servers(), ['mine'], s.notes.join('\n'));
      assert.ok(await until(() => shapes(marker).length === 3, 10_000), `started: ${shapes(marker).join(', ')}`);
      assert.ok(await until(() => withMarker(marker).length === 0, 10_000), `left behind after its exit: ${shapes(marker).join(', ')}`);
    } finally {
      await s.close();
    }
  });

  it('a repository server the user opted out of the sandbox: the same three end when the session closes', async () => {
    const marker = `mcpgate-orphan-${randomUUID()}`;
    markers.push(marker);
    const w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { repo: { command: 'node', args: ['srv.js'] } } }), 'srv.js': serverSource(marker) },
      {},
      { PATH: process.env.PATH! },
    );
    fs.mkdirSync(path.join(w.home, '.config', 'mcp-gate'), { recursive: true });
    fs.writeFileSync(
      path.join(w.home, '.config', 'mcp-gate', 'config.json'),
      JSON.stringify({
        sandbox: { servers: [{ server: 'repo', project: w.project, off: true }] },
        rules: [{ action: 'mcp.repo.tool.*', decision: 'allow', project: w.project }],
      }),
    );
    for (const r of evaluateGate(w.input).servers) await recordDecision(w.input, r.name, r.source, 'approved');
    const o = options(w);
    const s = await Session.start(o);
    try {
      assert.deepEqual(s.servers(), ['repo'], s.notes.join('\n'));
      assert.match(JSON.stringify(o.log.read()), /runs uncontained: your opt-out/);
      assert.ok(await until(() => shapes(marker).length === 3, 10_000), `started: ${shapes(marker).join(', ')}`);
    } finally {
      await s.close();
    }
    assert.ok(await until(() => withMarker(marker).length === 0, 5_000), `left behind: ${shapes(marker).join(', ')}`);
  });
});
