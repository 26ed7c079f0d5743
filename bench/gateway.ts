// Benchmark of the chat path: tools/call through the gateway (an SDK client over HTTP to the gateway, which calls
// through the server's session) against a plain SDK client to the same server (server-everything over stdio), in
// the same run. Three more contenders say where the time goes: the previous design (a new SDK server and stateless
// transport per request, bench/stateless-gateway.ts), the session alone (no HTTP), and the gateway with a target
// that answers at once (HTTP, the SDK's HTTP client, authentication — no session, no server).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Gateway } from '../src/host/gateway';
import { EventLog } from '../src/host/log';
import { Session } from '../src/host/session';
import { Masker } from '../src/policy/mask';
import { loadUserPolicy } from '../src/policy/user-policy';
import { evaluateGate } from '../src/trust/gate';
import type { BenchRow } from './gate';
import { interleaved } from './host';
import { StatelessGateway } from './stateless-gateway';
import { inProcess } from '../src/trust/packages/npm-resolve';

const EVERYTHING = path.resolve(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export async function benchGateway(): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-gateway-'));
  const home = path.join(base, 'home');
  fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'mcp-gate', 'config.json'), JSON.stringify({
    servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }],
  }));
  fs.mkdirSync(path.join(base, 'project'));
  const masker = new Masker();
  const input = { projectDir: path.join(base, 'project'), storeDir: path.join(base, 'store'), machine: { home, env: { HOME: home }, platform: process.platform }, masker };
  const report = evaluateGate(input);
  const log = new EventLog(input.storeDir, masker);
  const session = await Session.start({ report, policy: loadUserPolicy(report.userPolicy), log, storeDir: input.storeDir, secrets: async () => undefined, env: process.env, npm: inProcess, masker });
  const plain = new Client({ name: 'plain', version: '0' });
  await plain.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'] }));
  const args = { message: 'benchmark' };
  const echo = { content: [{ type: 'text' as const, text: 'Echo: benchmark' }] };
  const gateway = new Gateway({
    log,
    target: async (key) => (key === 'noop'
      ? { tools: () => session.tools(), listed: () => true, call: async () => ({ ok: true, result: echo }) }
      : { tools: () => session.tools(), listed: (t) => session.decisionFor('everything', t) !== 'deny', call: (t, a) => session.call('everything', t, a) }),
  });
  await gateway.start();
  const stateless = new StatelessGateway({
    log,
    target: async () => ({ tools: () => session.tools(), listed: (t) => session.decisionFor('everything', t) !== 'deny', call: (t, a) => session.call('everything', t, a) }),
  });
  await stateless.start();
  const chat = async (g: { urlFor(key: string): string; token: string }, key: string) => {
    const c = new Client({ name: 'chat-like', version: '0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(g.urlFor(key)), { requestInit: { headers: { Authorization: `Bearer ${g.token}` } } }));
    return c;
  };
  const viaGateway = await chat(gateway, 'everything');
  const noop = await chat(gateway, 'noop');
  const viaStateless = await chat(stateless, 'everything');
  const t = await interleaved(5, 60, {
    direct: () => plain.callTool({ name: 'echo', arguments: args }),
    gated: () => session.call('everything', 'echo', args),
    gateway: () => viaGateway.callTool({ name: 'echo', arguments: args }),
    noop: () => noop.callTool({ name: 'echo', arguments: args }),
    stateless: () => viaStateless.callTool({ name: 'echo', arguments: args }),
  });
  await viaStateless.close();
  await stateless.close();
  await viaGateway.close();
  await noop.close();
  await gateway.close();
  await session.close();
  await plain.close();
  fs.rmSync(base, { recursive: true, force: true });
  const d = t.direct;
  return [
    { name: 'gateway baseline: tools/call echo, plain SDK client (stdio, server-everything)', median: d, unit: 'ms', note: '300 calls' },
    { name: 'tools/call echo through the gateway (HTTP to the gateway, then the session): the chat path', median: t.gateway, unit: 'ms', baseline: 'plain SDK client', ratio: t.gateway / d, note: '300 calls; one MCP session kept per client' },
    { name: 'tools/call echo through the previous gateway design (a new SDK server and stateless transport per request)', median: t.stateless, unit: 'ms', baseline: 'plain SDK client', ratio: t.stateless / d, note: '300 calls; bench/stateless-gateway.ts, for reference' },
    { name: 'gateway part: the same call through the session alone (no HTTP)', median: t.gated, unit: 'ms', baseline: 'plain SDK client', ratio: t.gated / d, note: '300 calls, log written' },
    { name: 'gateway part: HTTP to the gateway with a target that answers at once (no session, no server)', median: t.noop, unit: 'ms', baseline: 'plain SDK client', ratio: t.noop / d, note: '300 calls; the SDK HTTP client, loopback HTTP, authentication' },
  ];
}
