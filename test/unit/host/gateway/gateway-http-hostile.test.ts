// The gateway's HTTP door under hostile requests: whoever does not hold the token gets nothing parsed (a malformed path without
// the token is 401, not a crash; with it, 400), a handler's failure answers 500 instead of hanging or killing the
// process, a client that stalls (no request, half the headers, half the body) is cut off, and a fuzzed stream of
// requests without the token (paths, methods, headers, bodies) reaches no tool and leaves the gateway serving.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import * as path from 'node:path';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { GatewayTarget } from '../../../../src/host/gateway/gateway';
import { HttpGateway, keyOfPath } from '../../../../src/host/gateway/gateway-http';
import { EventLog } from '../../../../src/host/log/log';
import { Session } from '../../../../src/host/session';
import { openSession } from '../gateway-session';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, ROOT, world } from '../../helpers';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

/** Sends raw bytes, returns what came back (the status line's code, or 0 if the socket closed with no answer). */
function rawExchange(port: number, bytes: Buffer | string, waitMs = 5_000): Promise<{ status: number; text: string; closedMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = net.connect(port, '127.0.0.1');
    const got: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer and no close within ${waitMs} ms`));
    }, waitMs);
    sock.on('data', (d) => {
      got.push(d);
      // one answer is enough: stop at the end of a response whose body length is given
      const text = Buffer.concat(got).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(text.slice(0, head));
      if (head >= 0 && len && text.length >= head + 4 + Number(len[1])) sock.end();
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(got).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text, closedMs: Date.now() - t0 });
    });
    if (bytes.length) sock.write(bytes);
  });
}

const CALL_T0 = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't0', arguments: { text: 'pwned' } } });

describe('gateway, HTTP door, under hostile requests', function () {
  this.timeout(120_000);
  let session: Session;
  let gateway: HttpGateway;
  let log: EventLog;
  let port: number;
  let calls = 0;
  let failTarget = false;
  const rejections: unknown[] = [];
  const onRejection = (e: unknown) => rejections.push(e);

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
      call: (t, a) => {
        calls++;
        return session.call('fx', t, a);
      },
    };
    gateway = new HttpGateway({
      log,
      timeouts: { headersMs: 400, requestMs: 800, idleMs: 400 },
      target: async (key) => {
        if (failTarget) throw new Error('the target broke');
        return key === 'fx' ? fx : { refused: `no allowed server "${key}"` };
      },
    });
    await gateway.start();
    port = Number(new URL(gateway.urlFor('fx')).port);
  });
  after(async () => {
    process.off('unhandledRejection', onRejection);
    await gateway.close();
    await session.close();
    cleanupTemp();
  });

  const head = (method: string, p: string, headers: Record<string, string>) =>
    `${method} ${p} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`;
  const auth = () => ({ host: `127.0.0.1:${port}`, authorization: `Bearer ${gateway.tokenFor('fx')}` });

  it('a malformed path: 401 without the token (nothing parsed first), 400 with it; no unhandled rejection', async () => {
    const bad = '/mcp/%E0%A4%A';
    const without = await rawExchange(
      port,
      head('POST', bad, { host: `127.0.0.1:${port}`, 'content-length': '2', connection: 'close' }) + '{}',
    );
    assert.equal(without.status, 401, without.text);
    const withToken = await rawExchange(
      port,
      head('POST', bad, { ...auth(), 'content-type': 'application/json', 'content-length': '2', connection: 'close' }) + '{}',
    );
    assert.equal(withToken.status, 400, withToken.text);
    assert.match(withToken.text, /the request path is malformed/);
    assert.deepEqual(keyOfPath('/mcp/%E0%A4%A'), { status: 400, why: 'the request path is malformed' });
    assert.deepEqual(keyOfPath('/mcp/fx?x=%'), { key: 'fx' });
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(rejections, []);
  });

  it('a handler that fails answers 500 and the gateway goes on', async () => {
    failTarget = true;
    try {
      const r = await rawExchange(
        port,
        head('POST', '/mcp/fx', {
          ...auth(),
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(CALL_T0.length),
          connection: 'close',
        }) + CALL_T0,
      );
      assert.equal(r.status, 500, r.text);
    } finally {
      failTarget = false;
    }
    assert.deepEqual(rejections, []);
    assert.ok(
      log
        .read()
        .some((e) => e.kind === 'gate.refuse' && /a request failed: the target broke/.test(String((e as { detail?: string }).detail))),
    );
  });

  it('a client that sends nothing, half the headers or half the body is cut off', async () => {
    const idle = await rawExchange(port, '');
    assert.ok(idle.closedMs < 4_000, `closed after ${idle.closedMs} ms`);
    const halfHeaders = await rawExchange(port, `POST /mcp/fx HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`);
    assert.ok(halfHeaders.closedMs < 4_000, `closed after ${halfHeaders.closedMs} ms`);
    const halfBody = await rawExchange(
      port,
      head('POST', '/mcp/fx', { ...auth(), 'content-type': 'application/json', accept: 'application/json', 'content-length': '1000' }) +
        CALL_T0.slice(0, 20),
    );
    assert.ok(halfBody.closedMs < 4_000, `closed after ${halfBody.closedMs} ms`);
    assert.notEqual(halfBody.status, 200);
    assert.equal(calls, 0);
  });

  it('fuzzed requests without the token reach no tool, get no 2xx, and the gateway still serves', async () => {
    const seg = fc.oneof(
      fc.constantFrom('fx', 'mcp', '%E0%A4%A', '%', '%%', '%00', '%2F', '..', '', 'fx%', '\u00e9', '%C0%AF'),
      fc.string({ maxLength: 12 }).map((s) => s.replace(/[\s]/g, '')),
    );
    const pathArb = fc.oneof(
      fc.array(seg, { minLength: 0, maxLength: 4 }).map((p) => `/${p.join('/')}`),
      fc.tuple(seg, seg).map(([a, b]) => `/mcp/${a}?${b}`),
      fc.constantFrom('*', '/mcp/fx', '/mcp/fx/', '//mcp/fx', `http://127.0.0.1:${'PORT'}/mcp/fx`, '/mcp/%E0%A4%A'),
    );
    const methodArb = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD', 'CONNECT', 'TRACE', 'BREW', 'post');
    const authArb = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 40 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, '')}`),
      fc.constantFrom('Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'bearer x', 'Bearer %E0%A4%A'),
    );
    const hostArb = fc.constantFrom(undefined, 'HOST_OK', 'localhost:HOST_PORT', 'evil.example', '127.0.0.1', '', '127.0.0.1:1');
    const originArb = fc.constantFrom(undefined, 'null', 'https://evil.example', 'http://127.0.0.1:1', 'vscode-file://vscode-app', '%');
    const bodyArb = fc.oneof(
      fc.constant(CALL_T0),
      fc.constant(`[${CALL_T0},${CALL_T0}]`),
      fc.constant(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
        }),
      ),
      fc.string({ maxLength: 200 }),
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
      fc.constant(''),
    );
    const extraArb = fc.dictionary(
      fc.constantFrom(
        'mcp-session-id',
        'mcp-protocol-version',
        'content-type',
        'accept',
        'transfer-encoding',
        'expect',
        'x-forwarded-host',
      ),
      fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')),
      { maxKeys: 3 },
    );
    await fc.assert(
      fc.asyncProperty(
        methodArb,
        pathArb,
        authArb,
        hostArb,
        originArb,
        bodyArb,
        extraArb,
        async (method, p, authz, host, origin, body, extra) => {
          const headers: Record<string, string> = {
            ...extra,
            'content-length': String(Buffer.byteLength(body, 'latin1')),
            connection: 'close',
          };
          delete headers['transfer-encoding'];
          if (host !== undefined) headers.host = host === 'HOST_OK' ? `127.0.0.1:${port}` : host.replace('HOST_PORT', String(port));
          if (origin !== undefined) headers.origin = origin;
          if (authz !== undefined) headers.authorization = authz;
          const r = await rawExchange(
            port,
            Buffer.concat([Buffer.from(head(method, p.replace('PORT', String(port)), headers), 'latin1'), Buffer.from(body, 'latin1')]),
          );
          assert.ok(r.status === 0 || r.status >= 400, `${method} ${p} got ${r.status}`);
        },
      ),
      { numRuns: 150 },
    );
    assert.equal(calls, 0, 'no request without the token reached a tool');
    assert.equal(log.read().filter((e) => e.kind === 'tool.call').length, 0);
    assert.deepEqual(rejections, []);
    // and the gateway still serves the token holder
    const c = new Client({ name: 'after-fuzz', version: '0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(gateway.urlFor('fx')), {
        requestInit: { headers: { Authorization: `Bearer ${gateway.tokenFor('fx')}` } },
      }),
    );
    const ok = await c.callTool({ name: 't0', arguments: { text: 'still here' } });
    assert.match(JSON.stringify(ok.content), /t0: still here/);
    await c.close();
    assert.equal(calls, 1);
  });
});
