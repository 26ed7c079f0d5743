// Benchmark of the chat path: tools/call through the relay and the gateway (an SDK stdio client, as VS Code starts a
// gated server's definition, to the relay, which carries it to the gateway's local endpoint, which calls through the
// server's session) against a plain SDK client to the same server (server-everything over stdio), in the same run.
// Four more contenders say where the time goes and what the relay was chosen over: the HTTP gateway on 127.0.0.1
// (src/host/gateway/gateway-http.ts, still offered where chat.mcp.allowedServers is set), a stdio definition that starts
// `mcp-gate serve` (the built CLI), the session alone, and the relay with a target that answers at once.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Gateway, type GatewayTarget } from '../src/host/gateway/gateway';
import { HttpGateway } from '../src/host/gateway/gateway-http';
import { EventLog } from '../src/host/log/log';
import { Session } from '../src/host/session';
import { Masker } from '../src/policy/mask';
import { loadUserPolicy } from '../src/policy/user-policy';
import { evaluateGate } from '../src/trust/gate';
import type { BenchRow } from './gate';
import { interleaved } from './host';
import { inProcess } from '../src/trust/packages/npm-resolve';

const EVERYTHING = path.resolve(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export async function benchGateway(): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-gateway-'));
  const home = path.join(base, 'home');
  fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
  fs.writeFileSync(
    path.join(home, '.config', 'mcp-gate', 'config.json'),
    JSON.stringify({
      servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }],
    }),
  );
  fs.mkdirSync(path.join(base, 'project'));
  const masker = new Masker();
  const input = {
    projectDir: path.join(base, 'project'),
    storeDir: path.join(base, 'store'),
    machine: { home, env: { HOME: home }, platform: process.platform },
    masker,
  };
  const report = evaluateGate(input);
  const log = new EventLog(input.storeDir, masker);
  const session = await Session.start({
    report,
    policy: loadUserPolicy(report.userPolicy),
    log,
    storeDir: input.storeDir,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker,
  });
  const plain = new Client({ name: 'plain', version: '0' });
  await plain.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'] }));
  const args = { message: 'benchmark' };
  const echo = { content: [{ type: 'text' as const, text: 'Echo: benchmark' }] };
  const everything = (): GatewayTarget => ({
    tools: () => session.tools(),
    listed: (t) => session.decisionFor('everything', t) !== 'deny',
    call: (t, a) => session.call('everything', t, a),
  });
  const noopTarget = (): GatewayTarget => ({
    tools: () => session.tools(),
    listed: () => true,
    call: async () => ({ ok: true, result: echo }),
  });
  const target = async (key: string) => (key === 'noop' ? noopTarget() : everything());
  const gateway = new Gateway({ log, target });
  await gateway.start();
  const http = new HttpGateway({ log, target });
  await http.start();
  // The chat path as VS Code takes it: a stdio definition that starts the relay, which carries the messages to the
  // gateway's local endpoint (src/host/gateway/relay.ts).
  const relayed = async (key: string) => {
    const c = new Client({ name: 'chat-like', version: '0' });
    const relay = gateway.relayCommand(key);
    await c.connect(new StdioClientTransport({ ...relay, env: { ...(process.env as Record<string, string>), ...gateway.relayEnv(key) } }));
    return c;
  };
  const overHttp = new Client({ name: 'chat-like-http', version: '0' });
  await overHttp.connect(
    new StreamableHTTPClientTransport(new URL(http.urlFor('everything')), {
      requestInit: { headers: { Authorization: `Bearer ${http.tokenFor('everything')}` } },
    }),
  );
  const viaRelay = await relayed('everything');
  // The alternative the issue names: a stdio definition that starts `mcp-gate serve <server>` (the CLI's own session,
  // out of the extension host), measured with the built CLI on the same user server.
  const viaServe = new Client({ name: 'chat-like-serve', version: '0' });
  await viaServe.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.resolve(__dirname, '..', '..', 'dist', 'cli.js'), 'serve', 'everything', '--project', input.projectDir],
      env: { ...(process.env as Record<string, string>), HOME: home, MCP_GATE_STORE: path.join(base, 'serve-store') },
      stderr: 'ignore',
    }),
  );
  const noop = await relayed('noop');
  const [rounds, each] = [20, 30];
  const t = await interleaved(rounds, each, {
    direct: () => plain.callTool({ name: 'echo', arguments: args }),
    gated: () => session.call('everything', 'echo', args),
    relay: () => viaRelay.callTool({ name: 'echo', arguments: args }),
    serve: () => viaServe.callTool({ name: 'echo', arguments: args }),
    http: () => overHttp.callTool({ name: 'echo', arguments: args }),
    noop: () => noop.callTool({ name: 'echo', arguments: args }),
  });
  await viaRelay.close();
  await viaServe.close();
  await noop.close();
  await overHttp.close();
  await http.close();
  await gateway.close();
  await session.close();
  await plain.close();
  fs.rmSync(base, { recursive: true, force: true });
  const d = t.direct;
  return [
    {
      name: 'gateway baseline: tools/call echo, plain SDK client (stdio, server-everything)',
      median: d,
      unit: 'ms',
      note: `${rounds * each} calls`,
    },
    {
      name: 'tools/call echo through the relay and the gateway (stdio to the relay, its socket to the gateway, then the session): the chat path',
      median: t.relay,
      unit: 'ms',
      baseline: 'plain SDK client',
      ratio: t.relay / d,
      note: `${rounds * each} calls; what VS Code starts for a gated server (src/host/gateway/relay.ts)`,
    },
    {
      name: "tools/call echo through the gateway's HTTP door on 127.0.0.1 (the design before the relay)",
      median: t.http,
      unit: 'ms',
      baseline: 'plain SDK client',
      ratio: t.http / d,
      note: `${rounds * each} calls; the SDK HTTP client, one MCP session kept per client; src/host/gateway/gateway-http.ts, the door offered where chat.mcp.allowedServers is set`,
    },
    {
      name: 'tools/call echo through `mcp-gate serve` (stdio to the CLI, its own session; no gateway)',
      median: t.serve,
      unit: 'ms',
      baseline: 'plain SDK client',
      ratio: t.serve / d,
      note: `${rounds * each} calls; the alternative of a stdio definition that starts the CLI: its session is out of the extension host (no VS Code prompt, status or closure watch there)`,
    },
    {
      name: 'gateway part: the same call through the session alone (no relay)',
      median: t.gated,
      unit: 'ms',
      baseline: 'plain SDK client',
      ratio: t.gated / d,
      note: `${rounds * each} calls, log written`,
    },
    {
      name: 'gateway part: the relay and the gateway with a target that answers at once (no session, no server)',
      median: t.noop,
      unit: 'ms',
      baseline: 'plain SDK client',
      ratio: t.noop / d,
      note: `${rounds * each} calls; the SDK stdio client, the relay process, the socket, authentication`,
    },
  ];
}
