// The gateway's local endpoint under hostile connections: whoever does not complete the handshake gets nothing read
// (no greeting in time, a greeting that is not JSON or of another shape, a proof made without the key's token: one
// error line, the connection closed, the refusal logged), a key's token reaches that key only, one client cannot
// hold every connection slot (and is told so), a line over 1 MiB closes the connection however its bytes arrive, a
// message that is not JSON-RPC gets an error and the session goes on, a handler's failure is an error answer
// instead of a hang or a dead process, one request id cannot be answered twice at once, and a fuzzed stream
// without the token reaches no tool and leaves the gateway serving.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as path from 'node:path';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  Gateway,
  MAX_CONNECTIONS_PER_CLIENT,
  MAX_GATEWAY_BODY_BYTES,
  MAX_PENDING_CONNECTIONS,
  type GatewayTarget,
} from '../../../../src/host/gateway/gateway';
import { HANDSHAKE_VERSION, MAX_HANDSHAKE_LINE_BYTES, nonce } from '../../../../src/host/gateway/handshake';
import { handshaken, rawConnect, runRelay, type Line } from '../gateway-socket';
import { EventLog } from '../../../../src/host/log/log';
import { Session } from '../../../../src/host/session';
import { openSession } from '../gateway-session';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, ROOT, world } from '../../helpers';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

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
  const open = (key = 'fx') => handshaken(where, key, gateway.tokenFor(key));
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
    const opened = await openSession(w);
    ({ log, session } = opened);
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

  it('a connection that does not greet in time, greets with junk, another shape or a proof made without the token is told once and closed; nothing after is read', async () => {
    const idle = await exchange(where, '');
    assert.ok(idle.closed && idle.closedMs < 3_000, `closed after ${idle.closedMs} ms`);
    assert.match(idle.lines[0].error!.message, /MCP Gate: the relay sent no greeting in time/);
    const junk = await exchange(where, `not json\n${CALL_T0}\n`);
    assert.deepEqual(
      junk.lines.map((l) => l.error?.message),
      ["MCP Gate: the relay's greeting is not JSON"],
    );
    // the greeting of the relay before the handshake: the token itself, which is never sent now
    const old = await exchange(where, `${JSON.stringify({ mcpGate: 1, key: 'fx', token: gateway.tokenFor('fx') })}\n${CALL_T0}\n`);
    assert.deepEqual(
      old.lines.map((l) => l.error?.message),
      ["MCP Gate: the relay's greeting is malformed"],
    );
    const unknown = await exchange(where, `${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, key: 'nobody', nonce: nonce() })}\n`);
    assert.match(unknown.lines[0].error!.message, /no relay of this server was started by this window/);
    // a proof made without the token, with a call right behind it
    const c = await rawConnect(where);
    c.write(`${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, key: 'fx', nonce: nonce() })}\n`);
    const [hello] = await c.until(1);
    assert.equal(hello.mcpGate, HANDSHAKE_VERSION);
    c.write(`${JSON.stringify({ proof: 'A'.repeat(43) })}\n${CALL_T0}\n`);
    assert.ok(await c.end());
    assert.deepEqual(
      c.lines.slice(1).map((l) => l.error?.message),
      ['MCP Gate: missing or wrong gateway token'],
    );
    assert.equal(calls, 0, 'a call sent right behind a bad greeting or proof reaches no tool');
    assert.ok(refusals().some((d) => d === 'gateway: missing or wrong gateway token'));
  });

  it("one token per server: a relay holding one key's token cannot open another key's session", async () => {
    const other = gateway.tokenFor('other');
    assert.notEqual(other, gateway.tokenFor('fx'));
    await assert.rejects(handshaken(where, 'fx', other), /the gateway did not prove it holds the token/);
    // nor through the relay: it refuses, the gateway's proof being for another token
    const r = await runRelay('fx', { MCP_GATE_GATEWAY: where, MCP_GATE_GATEWAY_TOKEN: other }, `${CALL_T0}\n`);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /did not prove it holds this server's token/);
    assert.equal(calls, 0);
  });

  it('one client cannot hold every slot: past its share it is told so, and other clients still get in', async () => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS_PER_CLIENT }, () => open()));
    try {
      assert.ok(held.every((c) => c.lines[1]?.ok === true));
      const more = await open();
      assert.match(more.lines[1].error!.message, /MCP Gate: too many connections from one client/);
      assert.ok(await more.end());
      // the relay says the real reason (not that the window closed)
      const r = await runRelay('fx', gateway.relayEnv('fx'));
      assert.equal(r.status, 1);
      assert.match(r.stderr, /the gateway in VS Code refused this server's connection: too many connections from one client/);
      const another = await open('other');
      assert.equal(another.lines[1].ok, true);
      another.destroy();
      // connections that never greet: past MAX_PENDING_CONNECTIONS the oldest is closed, so a relay still gets in
      const idle = await Promise.all(Array.from({ length: MAX_PENDING_CONNECTIONS + 8 }, () => rawConnect(where)));
      const still = await open('other');
      assert.equal(still.lines[1].ok, true);
      still.destroy();
      assert.ok(idle.filter((c) => c.closed).length >= 8, 'the oldest waiting connections were closed');
      for (const c of idle) c.destroy();
    } finally {
      for (const c of held) c.destroy();
    }
  });

  it('a line over 1 MiB closes the connection however its bytes arrive; a line of exactly 1 MiB is read', async () => {
    const before = await exchange(where, Buffer.alloc(MAX_HANDSHAKE_LINE_BYTES + 1, 'a'));
    assert.ok(before.closed);
    assert.match(before.lines[0].error!.message, /a handshake line over 16 KiB/);
    // one write of 1 MiB + 10 bytes, no newline
    const one = await open();
    one.write(Buffer.alloc(MAX_GATEWAY_BODY_BYTES + 10, 'x'));
    assert.ok(await one.end());
    assert.match(one.lines[2].error!.message, /a message over 1 MiB/);
    // a line just under the bound, then the rest of it and its newline in another chunk, with a ping behind
    const split = await open();
    split.write(Buffer.alloc(MAX_GATEWAY_BODY_BYTES - 5, 'x'));
    await new Promise((r) => setTimeout(r, 100));
    split.write(`${'x'.repeat(20)}\n${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    assert.ok(await split.end());
    assert.deepEqual(
      split.lines.slice(2).map((l) => l.error?.message),
      ['MCP Gate: a message over 1 MiB'],
    );
    // exactly 1 MiB: answered
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: '' } });
    const exact = ping.replace('"pad":""', `"pad":"${'p'.repeat(MAX_GATEWAY_BODY_BYTES - ping.length)}"`);
    assert.equal(Buffer.byteLength(exact), MAX_GATEWAY_BODY_BYTES);
    const ok = await open();
    ok.write(`${exact}\n`);
    await ok.until(3);
    assert.deepEqual(ok.lines[2], { jsonrpc: '2.0', id: 2, result: {} });
    ok.destroy();
  });

  it('after the handshake: what is not JSON-RPC gets an error, an unknown server is refused, and the session goes on', async () => {
    const r = await open();
    r.write(
      [
        '{not json',
        JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' }),
        JSON.stringify([]),
        JSON.stringify([
          { jsonrpc: '2.0', id: 2, method: 'ping' },
          { jsonrpc: '2.0', id: 2, method: 'ping' },
        ]),
        JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
      ].join('\n') + '\n',
    );
    const lines = (await r.until(7)).slice(2);
    r.destroy();
    assert.deepEqual(
      lines.map((l) => l.error?.code ?? 'ok'),
      [-32700, -32600, -32600, -32600, 'ok'],
    );
    assert.deepEqual(lines[4], { jsonrpc: '2.0', id: 3, result: {} });
    const other = await open('other');
    other.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) + '\n');
    const [, , answer] = await other.until(3);
    other.destroy();
    assert.equal(answer.id, 1);
    assert.match(answer.error!.message, /MCP Gate: no allowed server "other"/);
  });

  it('a handler that fails is an error answer and the gateway goes on', async () => {
    failTarget = true;
    try {
      const r = await open();
      r.write(CALL_T0 + '\n');
      const [, , answer] = await r.until(3);
      r.destroy();
      assert.match(answer.error!.message, /the gateway failed on this message/);
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
      const c = await open();
      c.write(call('first') + '\n' + call('second') + '\n');
      setTimeout(() => release(), 300);
      const lines = (await c.until(4, 10_000)).slice(2);
      c.destroy();
      assert.match(lines[0].error!.message, /a request id that is still being answered/);
      assert.match(JSON.stringify(lines[1].result), /t0: first/);
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
      fc.constant(gateway.tokenFor('fx').slice(1)),
      fc.constant(gateway.tokenFor('fx') + ' '),
      fc.constant(gateway.tokenFor('fx')),
    );
    // a greeting, then a "proof" that is not one (the token itself among them: it is never the proof)
    const greetingArb = fc.oneof(
      tokenArb.map(
        (t) =>
          `${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, key: 'fx', nonce: nonce() })}\n${JSON.stringify(t !== undefined ? { proof: t } : {})}\n`,
      ),
      tokenArb.map((t) => `${JSON.stringify({ mcpGate: 1, key: 'fx', ...(t !== undefined ? { token: t } : {}) })}\n`),
      fc.string({ maxLength: 200 }).map((s) => `${s}\n`),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
      fc.constant(`${CALL_T0}\n`),
      fc.constant(`{"mcpGate":1,"key":"fx","token":${JSON.stringify(gateway.tokenFor('fx'))}`),
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
        // the gateway's hello (its nonce and proof) at most, then errors
        assert.ok(
          r.lines.every((l, i) => l.error !== undefined || (i === 0 && l.mcpGate === HANDSHAKE_VERSION && l.ok === undefined)),
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
        env: { ...(process.env as Record<string, string>), ...gateway.relayEnv('fx') },
      }),
    );
    const ok = await c.callTool({ name: 't0', arguments: { text: 'still here' } });
    assert.match(JSON.stringify(ok.content), /t0: still here/);
    await c.close();
    assert.equal(calls, before + 1);
  });
});
