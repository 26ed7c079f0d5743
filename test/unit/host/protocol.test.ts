// Both protocol revisions through a session and through the CLI: a server that speaks only 2026-07-28
// (session-less: server/discover, `_meta` on every request, Mcp-Method/Mcp-Name headers) and a 2025-11-25
// server, over stdio and over HTTP on loopback; the revision is negotiated per server and logged in
// `server.start`. A server→client request or an InputRequiredResult is refused at once and counted; a tool list
// that never ends leaves the server out with a line; an `x-mcp-header` may not set a header MCP Gate sends.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { EventLog } from '../../../src/host/log/log';
import { Session, type SessionOptions } from '../../../src/host/session';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, cli, ROOT, world, type World } from '../helpers';
import { sessionOptions } from './session-options';

const MODERN = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'modern-server.js');
const LEGACY = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

const stdio = (script: string, env: Record<string, string> = {}) => ({ command: process.execPath, args: [script], env });

async function repoWorld(servers: Record<string, unknown>): Promise<World> {
  const w = world({ '.mcp.json': JSON.stringify({ mcpServers: servers }) });
  writeProjectConfig(w, { rules: Object.keys(servers).map((n) => ({ action: `mcp.${n}.tool.*`, decision: 'allow' })) });
  for (const s of evaluateGate(w.input).servers) await recordDecision(w.input, s.name, s.source, 'approved');
  return w;
}

/** A user's HTTP server on loopback, under a local-development exception. */
function httpWorld(name: string, port: number, extra: Record<string, unknown> = {}): World {
  return world(
    {},
    {
      '.config/mcp-gate/config.json': JSON.stringify({
        servers: { [name]: { url: `http://localhost:${port}/mcp`, ...extra } },
        localExceptions: [{ server: name, allowLoopback: true }],
        rules: [
          { action: `mcp.${name}.host.localhost`, decision: 'allow' },
          { action: `mcp.${name}.tool.*`, decision: 'allow' },
        ],
      }),
    },
  );
}

function options(w: World): SessionOptions & { log: EventLog } {
  return sessionOptions(w);
}

const startDetail = (log: EventLog, server: string) =>
  (log.read().find((e) => e.kind === 'server.start' && e.server === server) as { detail?: string } | undefined)?.detail ?? '';

const children: ChildProcess[] = [];
async function startHttp(env: Record<string, string> = {}): Promise<number> {
  const child = spawn(process.execPath, [MODERN], {
    env: { ...process.env, FIXTURE_HTTP_PORT: '0', FIXTURE_HTTP_HOST: '::', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('the fixture server did not start')), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      const m = /PORT (\d+)/.exec(d.toString());
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
  });
}

describe('protocol revisions 2026-07-28 and 2025-11-25', function () {
  this.timeout(120_000);
  after(() => {
    for (const c of children) c.kill('SIGKILL');
    cleanupTemp();
  });

  it('over stdio: a 2026-07-28-only server and a 2025-11-25 server both list and answer; server.start names each revision', async () => {
    const w = await repoWorld({ modern: stdio(MODERN), legacy: stdio(LEGACY) });
    const o = options(w);
    const s = await Session.start(o);
    try {
      assert.deepEqual(s.notes, []);
      assert.deepEqual(s.servers(), ['modern', 'legacy']);
      assert.match(startDetail(o.log, 'modern'), /protocol 2026-07-28/);
      assert.match(startDetail(o.log, 'legacy'), /protocol 2025-11-25/);
      const r = await s.call('modern', 'echo', { text: 'hello' });
      assert.equal(r.ok, true, r.error);
      assert.match(JSON.stringify(r.result), /echo: hello/);
      const l = await s.call('legacy', 't0', { text: 'old' });
      assert.match(JSON.stringify(l.result), /t0: old/);
    } finally {
      await s.close();
    }
  });

  it('CLI: tools and call reach a 2026-07-28-only server over stdio and over HTTP', async () => {
    const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { modern: stdio(MODERN) } }) });
    writeProjectConfig(w, { rules: [{ action: 'mcp.modern.tool.echo', decision: 'allow' }] });
    assert.equal(cli(w, ['approve', 'modern', '--yes']).code, 0);
    const tools = cli(w, ['tools', 'modern']);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /echo\s+\[allow\]\s+echoes text/);
    const call = cli(w, ['call', 'modern', 'echo', '--args', '{"text":"via cli"}']);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /echo: via cli/);

    const port = await startHttp();
    const h = httpWorld('modern-http', port);
    const htools = cli(h, ['tools', 'modern-http']);
    assert.equal(htools.code, 0, htools.stderr);
    assert.match(htools.stdout, /echo\s+\[allow\]/);
    const hcall = cli(h, ['call', 'modern-http', 'echo', '--args', '{"text":"via http"}']);
    assert.equal(hcall.code, 0, hcall.stderr);
    // the session-less revision's standard headers reached the server
    assert.match(hcall.stdout, /echo: via http .*mcp-method=tools\/call/);
    assert.match(hcall.stdout, /mcp-name=echo/);
    const events = JSON.parse(cli(h, ['log', '--json']).stdout) as Array<{
      kind: string;
      detail?: string;
      about?: string;
      outcome?: string;
    }>;
    assert.match(events.find((e) => e.kind === 'server.start')?.detail ?? '', /protocol 2026-07-28/);
    assert.deepEqual(
      events
        .filter((e) => e.kind === 'mcp.request')
        .map((e) => `${e.about}:${e.outcome}`)
        .slice(-2),
      ['discover:answered', 'echo:answered'],
    );
  });

  it('an elicitation during a call (2025-11-25) ends the call at once, refused and counted', async () => {
    const w = await repoWorld({ fx: stdio(LEGACY, { FIXTURE_HOSTILE: '1' }) });
    const s = await Session.start(options(w));
    try {
      const t0 = Date.now();
      const r = await s.call('fx', 't0', {});
      assert.ok(Date.now() - t0 < 1000, `the call took ${Date.now() - t0} ms`);
      assert.match(JSON.stringify(r.result), /elicitation\/create: MCP error -32601: MCP Gate refused elicitation\/create/);
      assert.equal(s.counters.refusedRequests['elicitation/create'], 1);
    } finally {
      await s.close();
    }
  });

  it('an InputRequiredResult (2026-07-28) is refused at once: no retry round, each input request counted and logged', async () => {
    const w = await repoWorld({ asker: stdio(MODERN, { FIXTURE_INPUT: '1' }) });
    const o = options(w);
    const s = await Session.start(o);
    try {
      assert.deepEqual(s.notes, []);
      const t0 = Date.now();
      const r = await s.call('asker', 'ask', {});
      assert.ok(Date.now() - t0 < 1000, `the call took ${Date.now() - t0} ms`);
      assert.equal(r.ok, false);
      assert.match(r.error ?? '', /asked for input \(elicitation\/create, sampling\/createMessage\); MCP Gate refused it/);
      assert.deepEqual(s.counters.refusedRequests, { 'elicitation/create': 1, 'sampling/createMessage': 1 });
      assert.equal(o.log.read().filter((e) => e.kind === 'gate.refuse').length, 2);
    } finally {
      await s.close();
    }
  });

  it('over streamable HTTP, an InputRequiredResult (2026-07-28) is refused at once too: no retry round, the call ends within 2 s', async () => {
    const port = await startHttp({ FIXTURE_INPUT: '1' });
    const o = options(httpWorld('asker-http', port));
    const s = await Session.start(o);
    try {
      assert.deepEqual(s.notes, []);
      assert.match(startDetail(o.log, 'asker-http'), /protocol 2026-07-28/);
      const t0 = Date.now();
      const r = await s.call('asker-http', 'ask', {});
      assert.ok(Date.now() - t0 < 2000, `the call took ${Date.now() - t0} ms`);
      assert.equal(r.ok, false);
      assert.match(r.error ?? '', /asked for input \(elicitation\/create, sampling\/createMessage\); MCP Gate refused it/);
      assert.deepEqual(s.counters.refusedRequests, { 'elicitation/create': 1, 'sampling/createMessage': 1 });
      assert.equal(o.log.read().filter((e) => e.kind === 'gate.refuse').length, 2);
      // the server saw the one call: no round came back with input responses
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/calls`)).text(), '1');
    } finally {
      await s.close();
    }
  });

  it('a server that declares no tools capability starts with no tools and no line (nothing to count is not a refused list)', async () => {
    const w = await repoWorld({ bare: stdio(MODERN, { FIXTURE_NO_TOOLS: '1' }), modern: stdio(MODERN) });
    const s = await Session.start(options(w));
    try {
      assert.deepEqual(s.notes, []);
      assert.deepEqual(s.servers().sort(), ['bare', 'modern']);
      assert.deepEqual(
        s.tools().filter((t) => t.server === 'bare'),
        [],
      );
    } finally {
      await s.close();
    }
  });

  it('a tool list that repeats its cursor (same page every time) leaves the server out with a line, not an empty list', async () => {
    const w = await repoWorld({ same: stdio(MODERN, { FIXTURE_SAME_CURSOR: '1' }), modern: stdio(MODERN) });
    const s = await Session.start(options(w));
    try {
      // the SDK's own walk stops at the repeated page and calls the list complete (no tools): MCP Gate does not
      assert.deepEqual(s.servers(), ['modern']);
      assert.match(
        s.notes.join('\n'),
        /same \(\.mcp\.json\) is left out: its tool list repeats the cursor "again" \(a list that never ends\)/,
      );
    } finally {
      await s.close();
    }
  });

  it('a tool list with a nextCursor after the page bound leaves the server out with a line', async () => {
    const w = await repoWorld({ endless: stdio(MODERN, { FIXTURE_ENDLESS_PAGES: '1' }), modern: stdio(MODERN) });
    const s = await Session.start(options(w));
    try {
      assert.deepEqual(s.servers(), ['modern']);
      assert.match(s.notes.join('\n'), /endless \(\.mcp\.json\) is left out: its tool list goes on past 20 pages/);
    } finally {
      await s.close();
    }
  });

  it('x-mcp-header: an argument is mirrored into Mcp-Param-*; one that would set a header MCP Gate sends leaves the server out', async () => {
    const port = await startHttp({ FIXTURE_HEADER_NAME: 'Region' });
    const ok = options(httpWorld('routed', port));
    const s = await Session.start(ok);
    try {
      assert.deepEqual(s.notes, []);
      const r = await s.call('routed', 'echo', {});
      assert.equal(r.ok, true, r.error);
      const routed = await s.call('routed', 'routed', { region: 'eu-west' });
      assert.equal(routed.ok, true, routed.error);
      assert.match(JSON.stringify(routed.result), /routed: eu-west/);
    } finally {
      await s.close();
    }
    // the server declares its argument's header as Mcp-Param-Token, the header this user configured
    const clash = await startHttp({ FIXTURE_HEADER_NAME: 'Token' });
    const o = options(httpWorld('clash', clash, { headers: { 'Mcp-Param-Token': 'configured' } }));
    const c = await Session.start(o);
    try {
      assert.deepEqual(c.servers(), []);
      assert.match(
        c.notes.join('\n'),
        /clash .* left out: its tool "routed" would mirror an argument into the header Mcp-Param-Token, which MCP Gate sends itself/,
      );
    } finally {
      await c.close();
    }
  });
});
