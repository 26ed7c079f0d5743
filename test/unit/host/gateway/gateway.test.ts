// The gateway VS Code chat reaches gated servers through, tested from plain Node as VS Code uses it: an SDK stdio
// client starts the relay with the environment a start is given. Only the token holder gets in, the endpoint is a
// socket in a private folder (no TCP port), denied tools are not even listed, and every call goes through the
// session's policy check and log. The relay itself says what to do when it is started wrongly or the window closed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Gateway, RELAY_SCRIPT } from '../../../../src/host/gateway/gateway';
import { GatewayClient } from '../../../../src/host/gateway/gateway-client';
import { resultLines } from '../../../../src/report/tool-text';
import { EventLog } from '../../../../src/host/log/log';
import { policyThroughDoor } from '../gateway-cases';
import { Session } from '../../../../src/host/session';
import { openSession } from '../gateway-session';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, ROOT, world } from '../../helpers';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');

describe('gateway', function () {
  this.timeout(60_000);
  let session: Session;
  let gateway: Gateway;
  let log: EventLog;
  let where: string;
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
    gateway = new Gateway({
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
    where = await gateway.start();
  });
  after(async () => {
    await gateway.close();
    assert.ok(!fs.existsSync(path.dirname(where)), "the socket's folder goes with the gateway");
    await session.close();
    cleanupTemp();
  });

  const connect = async (key: string, token = gateway.tokenFor(key)) => {
    const client = new Client({ name: 'vscode-like', version: '0' });
    const relay = gateway.relayCommand(key);
    await client.connect(
      new StdioClientTransport({
        ...relay,
        env: { ...(process.env as Record<string, string>), ...gateway.relayEnv(key), MCP_GATE_GATEWAY_TOKEN: token },
        stderr: 'pipe',
      }),
    );
    return client;
  };

  it('is a socket in a folder only this user may open, named by no definition (no TCP port)', () => {
    assert.ok(fs.statSync(where).isSocket());
    const dir = fs.statSync(path.dirname(where));
    assert.equal(dir.mode & 0o777, 0o700);
    assert.equal(dir.uid, process.getuid!());
    const relay = gateway.relayCommand('fx');
    assert.deepEqual(relay, { command: process.execPath, args: [RELAY_SCRIPT, 'fx'], env: { ELECTRON_RUN_AS_NODE: '1' } });
    assert.ok(!JSON.stringify(relay).includes(gateway.tokenFor('fx')), 'no token in what VS Code caches');
    assert.deepEqual(Object.keys(gateway.relayEnv('fx')).sort(), ['ELECTRON_RUN_AS_NODE', 'MCP_GATE_GATEWAY', 'MCP_GATE_GATEWAY_TOKEN']);
  });

  policyThroughDoor(connect, () => log);

  it('a wrong token and an unknown server are refused, and say why', async () => {
    await assert.rejects(connect('fx', 'not-the-token'), /Connection closed/i);
    assert.ok(
      log
        .read()
        .some((e) => e.kind === 'gate.refuse' && /gateway: a relay left in its handshake/.test(String((e as { detail?: string }).detail))),
    );
    await assert.rejects(connect('other'), /no allowed server "other"/);
  });

  it('answers the MCP methods of its session: unknown methods and bad arguments are errors', async () => {
    const c = await connect('fx');
    const init = c.getServerVersion();
    assert.equal(init?.name, 'mcp-gate');
    assert.deepEqual(c.getServerCapabilities(), { tools: {} });
    assert.deepEqual(await c.ping(), {});
    await assert.rejects(
      c.request({ method: 'resources/list', params: {} }, (await import('@modelcontextprotocol/sdk/types.js')).ListResourcesResultSchema),
      /-32601|offers tools only/,
    );
    await assert.rejects(
      c.callTool({ name: 't0', arguments: [1] as unknown as Record<string, unknown> }),
      /-32602|arguments must be an object/,
    );
    await c.close();
  });

  it('the relay started wrongly, or after the window closed, says what to do and exits', async () => {
    const bare = spawnSync(process.execPath, [RELAY_SCRIPT, 'fx'], { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 10_000 });
    assert.equal(bare.status, 1);
    assert.match(bare.stderr, /MCP Gate: this relay is started by MCP Gate in VS Code only .*start the server from VS Code/);
    const gone = spawnSync(process.execPath, [RELAY_SCRIPT, 'fx'], {
      env: {
        PATH: process.env.PATH,
        MCP_GATE_GATEWAY: path.join(path.dirname(where), 'gone.sock'),
        MCP_GATE_GATEWAY_TOKEN: gateway.tokenFor('fx'),
      },
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(gone.status, 1);
    assert.match(
      gone.stderr,
      /MCP Gate: the gateway in VS Code cannot be reached at .*gone\.sock \(.*ENOENT.*\): the window that started this server closed or reloaded; start the server again/,
    );
    // the whole folder gone (the window closed): said the same way
    const folderGone = spawnSync(process.execPath, [RELAY_SCRIPT, 'fx'], {
      env: {
        PATH: process.env.PATH,
        MCP_GATE_GATEWAY: path.join(path.dirname(where) + '-gone', 'gateway.sock'),
        MCP_GATE_GATEWAY_TOKEN: 'x',
      },
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(folderGone.status, 1);
    assert.match(folderGone.stderr, /cannot be reached at .*\(its folder is gone\): the window that started this server closed/);
  });

  it('GatewayClient ("Try a Tool…") asks as chat does: through the relay, the same listing under the policy, the same call path and log', async () => {
    const launch = () => ({ ...gateway.relayCommand('fx'), env: gateway.relayEnv('fx') });
    const before = gateway.connectionCount;
    const c = await GatewayClient.connect(launch(), 'try-a-tool');
    assert.equal(gateway.connectionCount, before + 1);
    assert.deepEqual(
      (await c.listTools()).map((t) => t.name),
      ['t0', 't1'],
    );
    const ok = await c.call('t0', { text: 'tried' });
    assert.equal(ok.isError, undefined);
    assert.deepEqual(resultLines(ok), ['t0: tried']);
    const denied = await c.call('t2', {});
    assert.equal(denied.isError, true);
    assert.match(resultLines(denied).join('\n'), /MCP Gate: .*mcp\.fx\.tool\.t2 is denied/);
    const outcomes = log
      .read()
      .filter((e) => e.kind === 'mcp.request')
      .map((e) => `${(e as { about: string }).about}:${(e as { outcome: string }).outcome}`);
    assert.deepEqual(outcomes.slice(-2), ['t0:answered', 't2:refused_by_policy']);
    await c.close();
    for (let i = 0; i < 50 && gateway.connectionCount !== before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(gateway.connectionCount, before, 'closing ends its relay and its connection');
    await assert.rejects(
      GatewayClient.connect({ ...launch(), env: { ...launch().env, MCP_GATE_GATEWAY_TOKEN: 'not-the-token' } }, 'try-a-tool'),
      /the relay ended: MCP Gate: the endpoint .*gateway\.sock did not prove it holds this server's token.*nothing of this server's session was sent to it/,
    );
    await assert.rejects(
      GatewayClient.connect({ ...gateway.relayCommand('other'), env: gateway.relayEnv('other') }, 'try-a-tool'),
      /the gateway answered with an error: MCP Gate: no allowed server "other"/,
    );
  });
});
