// The gateway's HTTP door (offered where chat.mcp.allowedServers is set), tested from plain Node with the SDK client: only the token holder gets in,
// a foreign Host or web Origin is refused (DNS rebinding), denied tools are not even listed, and every call goes
// through the session's policy check and log.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { HttpGateway, originAllowed } from '../../../../src/host/gateway/gateway-http';
import { EventLog } from '../../../../src/host/log/log';
import { policyThroughDoor } from '../gateway-cases';
import { Session } from '../../../../src/host/session';
import { openSession } from '../gateway-session';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, ROOT, world } from '../../helpers';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

function raw(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: '127.0.0.1',
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    );
  });
}

describe('gateway, HTTP door', function () {
  this.timeout(60_000);
  let session: Session;
  let gateway: HttpGateway;
  let log: EventLog;
  before(async () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_TOOLS: '3' } } } }),
    });
    // a repository server: its rules name its project
    writeProjectConfig(w, {
      rules: [
        { action: 'mcp.fx.tool.t0', decision: 'allow' },
        { action: 'mcp.fx.tool.t1', decision: 'ask' },
        { action: 'mcp.fx.tool.t2', decision: 'deny' },
      ],
    });
    await recordDecision(w.input, 'fx', undefined, 'approved');
    const opened = await openSession(w);
    ({ log, session } = opened);
    gateway = new HttpGateway({
      log,
      target: async (key) =>
        key === 'fx'
          ? {
              tools: () => session.tools(),
              listed: (t) => session.decisionFor('fx', t) !== 'deny',
              call: (t, a) => session.call('fx', t, a),
            }
          : { refused: `no allowed server "${key}"` },
    });
    await gateway.start();
  });
  after(async () => {
    await gateway.close();
    await session.close();
    cleanupTemp();
  });

  const connect = async (key: string, token = gateway.tokenFor('fx')) => {
    const client = new Client({ name: 'vscode-like', version: '0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.urlFor(key)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    return client;
  };

  policyThroughDoor(connect, () => log);

  it('a wrong token, a foreign Host, a web Origin and an unknown server are refused', async () => {
    await assert.rejects(connect('fx', 'not-the-token'), /401|Unauthorized|missing or wrong gateway token/);
    const url = gateway.urlFor('fx');
    const auth = { authorization: `Bearer ${gateway.tokenFor('fx')}` };
    assert.equal(await raw(url, { ...auth, host: 'evil.example:80' }), 403);
    assert.equal(await raw(url, { ...auth, origin: 'https://evil.example' }), 403);
    assert.equal(await raw(url, { ...auth }), 200);
    // one token per server: fx's token does not open another server's path, one the door gave a token for or not
    assert.equal(await raw(gateway.urlFor('other'), auth), 401);
    gateway.tokenFor('fy');
    assert.equal(await raw(gateway.urlFor('fy'), auth), 401);
    assert.equal(await raw(gateway.urlFor('other'), { authorization: `Bearer ${gateway.tokenFor('other')}` }), 403);
    assert.ok(
      log
        .read()
        .some((e) => e.kind === 'gate.refuse' && /Origin "https:\/\/evil\.example"/.test(String((e as { detail?: string }).detail))),
    );
  });

  it("keeps the client's MCP session: calls need its Mcp-Session-Id, unknown methods are errors, DELETE ends it", async () => {
    const url = new URL(gateway.urlFor('fx'));
    const post = async (body: unknown, headers: Record<string, string> = {}, method = 'POST') => {
      const r = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${gateway.tokenFor('fx')}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
      });
      const text = await r.text();
      return {
        status: r.status,
        session: r.headers.get('mcp-session-id'),
        json: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text,
      };
    };
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    assert.equal(init.status, 200);
    assert.equal(init.json.result.protocolVersion, '2025-06-18');
    assert.deepEqual(init.json.result.capabilities, { tools: {} });
    const sid = init.session!;
    assert.match(sid, /^[0-9a-f-]{36}$/);
    const h = { 'mcp-session-id': sid };
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status, 202);
    assert.deepEqual((await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, h)).json, { jsonrpc: '2.0', id: 2, result: {} });
    const unknown = await post({ jsonrpc: '2.0', id: 3, method: 'sampling/createMessage', params: {} }, h);
    assert.equal(unknown.json.error.code, -32601);
    const badArgs = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 't0', arguments: [1] } }, h);
    assert.equal(badArgs.json.error.code, -32602);
    const batch = await post(
      [
        { jsonrpc: '2.0', id: 5, method: 'ping' },
        { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 't0', arguments: { text: 'batched' } } },
      ],
      h,
    );
    assert.equal(batch.json.length, 2);
    assert.match(JSON.stringify(batch.json[1].result), /t0: batched/);
    assert.equal((await post({ jsonrpc: '2.0', id: 7, method: 'tools/list' })).status, 400, 'no session id');
    assert.equal((await post({ jsonrpc: '2.0', id: 8, method: 'tools/list' }, { 'mcp-session-id': 'not-a-session' })).status, 404);
    assert.equal((await post({ jsonrpc: '2.0', id: 9, method: 'tools/list' }, { ...h, 'mcp-protocol-version': '1999-01-01' })).status, 400);
    assert.equal((await post(undefined, h, 'GET')).status, 405, 'no GET stream');
    assert.equal((await post(undefined, h, 'DELETE')).status, 200);
    assert.equal((await post({ jsonrpc: '2.0', id: 10, method: 'ping' }, h)).status, 404, 'the session ended');
  });

  it('knows which origins are legitimate', () => {
    assert.equal(originAllowed(undefined), true);
    assert.equal(originAllowed('vscode-file://vscode-app'), true);
    assert.equal(originAllowed('http://127.0.0.1:8080'), true);
    assert.equal(originAllowed('https://attacker.example'), false);
    assert.equal(originAllowed('http://127.0.0.1.attacker.example'), false);
    assert.equal(originAllowed('null'), false);
  });
});
