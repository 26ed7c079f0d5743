// The gateway's local endpoint under hostile connections: whoever does not greet with the token gets nothing read
// (no greeting in time, a greeting that is not JSON or carries the wrong token: one error line, the connection
// closed, the refusal logged), a line over 1 MiB closes the connection, a message that is not JSON-RPC gets an
// error and the session goes on, a handler's failure is an error answer instead of a hang or a dead process, one
// request id cannot be answered twice at once, and a fuzzed stream without the token reaches no tool and leaves the
// gateway serving.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as path from 'node:path';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Gateway, type GatewayTarget } from '../../../../src/host/gateway/gateway';
import { EventLog } from '../../../../src/host/log/log';
import { Session } from '../../../../src/host/session';
import { Masker } from '../../../../src/policy/mask';
import { loadUserPolicy } from '../../../../src/policy/user-policy';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, ROOT, world } from '../../helpers';
import { inProcess } from '../../../../src/trust/packages/npm-resolve';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

type Line = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** Writes bytes to the endpoint; the lines that came back and when the connection closed (waits for the close, or `lines` lines). */
function exchange(
  where: string,
  bytes: Buffer | string,
  o: { lines?: number; waitMs?: number } = {},
): Promise<{ lines: Line[]; closedMs: number; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = net.connect(where);
    let text = '';
    const lines = () =>
      text
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Line);
    const timer = setTimeout(() => {
      sock.destroy();
      if (o.lines !== undefined) resolve({ lines: lines(), closedMs: Date.now() - t0, closed: false });
      else reject(new Error(`no close within ${o.waitMs ?? 5000} ms: ${text}`));
    }, o.waitMs ?? 5_000);
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
      if (o.lines !== undefined && lines().length >= o.lines) {
        clearTimeout(timer);
        sock.destroy();
        resolve({ lines: lines(), closedMs: Date.now() - t0, closed: false });
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ lines: lines(), closedMs: Date.now() - t0, closed: true });
    });
    if (bytes.length) sock.write(bytes);
  });
}

const CALL_T0 = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't0', arguments: { text: 'pwned' } } });

describe('gateway under hostile connections', function () {
  this.timeout(120_000);
  let session: Session;
  let gateway: Gateway;
  let log: EventLog;
  let where: string;
  let calls = 0;
  let failTarget = false;
  let slow: Promise<void> | undefined;
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);
  const greet = (key = 'fx', token?: string) => `${JSON.stringify({ mcpGate: 1, key, token: token ?? gateway.token })}\n`;
  const refusals = () =>
    log
      .read()
      .filter((e) => e.kind === 'gate.refuse')
      .map((e) => String((e as { detail?: string }).detail));

  before(async () => {
    process.on('unhandledRejection', onRejection);
    const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE] } } }) });
    writeProjectConfig(w, { rules: [{ action: 'mcp.fx.tool.*', decision: 'allow' }] });
    await recordDecision(w.input, 'fx', undefined, 'approved');
    const report = evaluateGate(w.input);
    const masker = new Masker();
    log = new EventLog(w.store, masker);
    session = await Session.start({
      report,
      policy: loadUserPolicy(report.userPolicy),
      log,
      storeDir: w.store,
      secrets: async () => undefined,
      env: process.env,
      npm: inProcess,
      masker,
    });
    const fx: GatewayTarget = {
      tools: () => session.tools(),
      listed: () => true,
      call: async (t, a) => {
        calls++;
        if (slow) await slow;
        return session.call('fx', t, a);
      },
    };
    gateway = new Gateway({
      log,
      greetingMs: 400,
      target: async (key) => {
        if (failTarget) throw new Error('the target broke');
        return key === 'fx' ? fx : { refused: `no allowed server "${key}"` };
      },
    });
    where = await gateway.start();
  });
  after(async () => {
    process.off('unhandledRejection', onRejection);
    await gateway.close();
    await session.close();
    cleanupTemp();
  });

  it('a connection that does not greet in time, greets with junk or with the wrong token is told once and closed; nothing after is read', async () => {
    const idle = await exchange(where, '');
    assert.ok(idle.closed && idle.closedMs < 3_000, `closed after ${idle.closedMs} ms`);
    assert.match(idle.lines[0].error!.message, /MCP Gate: the relay sent no greeting in time/);
    const junk = await exchange(where, `not json\n${CALL_T0}\n`);
    assert.deepEqual(
      junk.lines.map((l) => l.error?.message),
      ["MCP Gate: the relay's greeting is not JSON"],
    );
    const shape = await exchange(where, `${JSON.stringify({ mcpGate: 2, key: 'fx', token: gateway.token })}\n${CALL_T0}\n`);
    assert.deepEqual(
      shape.lines.map((l) => l.error?.message),
      ["MCP Gate: the relay's greeting is malformed"],
    );
    // Its last character changed (never to itself: a token that already ends in x made this the right one).
    const wrong = await exchange(
      where,
      greet('fx', gateway.token.slice(0, -1) + (gateway.token.endsWith('x') ? 'y' : 'x')) + CALL_T0 + '\n',
    );
    assert.deepEqual(
      wrong.lines.map((l) => l.error?.message),
      ['MCP Gate: missing or wrong gateway token'],
    );
    // a call sent with the CALL_T0 line right behind a bad greeting reaches no tool
    assert.equal(calls, 0);
    assert.ok(refusals().some((d) => d === 'gateway: missing or wrong gateway token'));
  });

  it('a line over 1 MiB closes the connection, before or after the greeting', async () => {
    const before = await exchange(where, Buffer.alloc(1024 * 1024 + 10, 'a'));
    assert.ok(before.closed);
    assert.match(before.lines[0].error!.message, /a message over 1 MiB/);
    const after = await exchange(where, greet() + 'x'.repeat(1024 * 1024 + 10));
    assert.ok(after.closed);
    assert.match(after.lines[0].error!.message, /a message over 1 MiB/);
  });

  it('after the greeting: what is not JSON-RPC gets an error, an unknown server is refused, and the session goes on', async () => {
    const r = await exchange(
      where,
      greet() +
        [
          '{not json',
          JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' }),
          JSON.stringify([]),
          JSON.stringify([
            { jsonrpc: '2.0', id: 2, method: 'ping' },
            { jsonrpc: '2.0', id: 2, method: 'ping' },
          ]),
          JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
        ].join('\n') +
        '\n',
      { lines: 5 },
    );
    assert.deepEqual(
      r.lines.map((l) => l.error?.code ?? 'ok'),
      [-32700, -32600, -32600, -32600, 'ok'],
    );
    assert.deepEqual(r.lines[4], { jsonrpc: '2.0', id: 3, result: {} });
    const other = await exchange(where, greet('other') + JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) + '\n', {
      lines: 1,
    });
    assert.equal(other.lines[0].id, 1);
    assert.match(other.lines[0].error!.message, /MCP Gate: no allowed server "other"/);
  });

  it('a handler that fails is an error answer and the gateway goes on', async () => {
    failTarget = true;
    try {
      const r = await exchange(where, greet() + CALL_T0 + '\n', { lines: 1 });
      assert.match(r.lines[0].error!.message, /the gateway failed on this message/);
    } finally {
      failTarget = false;
    }
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(rejections, []);
    assert.ok(refusals().some((d) => /a request failed: the target broke/.test(d)));
  });

  it('one request id is not answered twice at once', async () => {
    let release!: () => void;
    slow = new Promise((r) => (release = r));
    const before = calls;
    try {
      const call = (text: string) =>
        JSON.stringify({ jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 't0', arguments: { text } } });
      const pending = exchange(where, greet() + call('first') + '\n' + call('second') + '\n', { lines: 2, waitMs: 10_000 });
      setTimeout(() => release(), 300);
      const r = await pending;
      assert.match(r.lines[0].error!.message, /a request id that is still being answered/);
      assert.match(JSON.stringify(r.lines[1].result), /t0: first/);
      assert.equal(calls - before, 1);
    } finally {
      slow = undefined;
      release();
    }
  });

  it('fuzzed connections without the token reach no tool, and the gateway still serves', async () => {
    const before = calls;
    const tokenArb = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 40 }),
      fc.constant(''),
      fc.constant(gateway.token.slice(1)),
      fc.constant(gateway.token + ' '),
    );
    const greetingArb = fc.oneof(
      tokenArb.map((t) => `${JSON.stringify({ mcpGate: 1, key: 'fx', ...(t !== undefined ? { token: t } : {}) })}\n`),
      fc.string({ maxLength: 200 }).map((s) => `${s}\n`),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
      fc.constant(`${CALL_T0}\n`),
      fc.constant(`{"mcpGate":1,"key":"fx","token":${JSON.stringify(gateway.token)}`),
    );
    const restArb = fc.oneof(
      fc.constant(`${CALL_T0}\n`),
      fc.constant(`[${CALL_T0},${CALL_T0}]\n`),
      fc.string({ maxLength: 100 }),
      fc.constant(''),
    );
    await fc.assert(
      fc.asyncProperty(greetingArb, restArb, async (g, rest) => {
        const r = await exchange(where, Buffer.from(g + rest, 'latin1'), { waitMs: 3_000 });
        assert.ok(r.closed);
        assert.ok(
          r.lines.every((l) => l.error !== undefined),
          JSON.stringify(r.lines),
        );
      }),
      { numRuns: 60 },
    );
    assert.equal(calls, before, 'no connection without the token reached a tool');
    assert.deepEqual(rejections, []);
    const c = new Client({ name: 'after-fuzz', version: '0' });
    await c.connect(
      new StdioClientTransport({
        ...gateway.relayCommand('fx'),
        env: { ...(process.env as Record<string, string>), ...gateway.relayEnv() },
      }),
    );
    const ok = await c.callTool({ name: 't0', arguments: { text: 'still here' } });
    assert.match(JSON.stringify(ok.content), /t0: still here/);
    await c.close();
    assert.equal(calls, before + 1);
  });
});
