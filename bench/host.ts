// Benchmarks of the host: (1) tools/call through an MCP Gate session against a plain SDK client talking to the
// same server (server-everything over stdio); (2) the same over streamable HTTP against a plain client of the SDK
// generation the session uses, beside mcp-remote; (3) the hardened fetch against plain undici fetch on a 100 KB
// JSON-RPC reply from a local HTTP server (reached under a loopback local-development exception).
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { createGuardedFetch } from '../src/host/net/guarded-fetch';
import { EventLog } from '../src/host/log/log';
import { Session } from '../src/host/session';
import { Masker } from '../src/policy/mask';
import { loadUserPolicy } from '../src/policy/user-policy';
import { evaluateGate } from '../src/trust/gate';
import type { BenchRow } from './gate';
import { inProcess } from '../src/trust/packages/npm-resolve';

const EVERYTHING = path.resolve(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function timeEach(n: number, f: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

/** Calls each contender makes before any is measured (so the compiler has tiered up every path alike). */
export const WARM_UP_CALLS = 100;

/**
 * Warms each contender up, then measures them in interleaved rounds (so drift hits all alike): many short rounds,
 * since a call's time wanders with the machine's load more than contenders differ. Medians by name.
 */
export async function interleaved(
  rounds: number,
  perRound: number,
  contenders: Record<string, () => Promise<unknown>>,
): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = {};
  for (const [name, f] of Object.entries(contenders)) {
    await timeEach(WARM_UP_CALLS, f);
    samples[name] = [];
  }
  for (let round = 0; round < rounds; round++) {
    for (const [name, f] of Object.entries(contenders)) samples[name].push(...(await timeEach(perRound, f)));
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

async function benchCall(): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-host-'));
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
  const input = {
    projectDir: path.join(base, 'project'),
    storeDir: path.join(base, 'store'),
    machine: { home, env: { HOME: home }, platform: process.platform },
    masker: new Masker(),
  };
  const report = evaluateGate(input);
  const masker = new Masker();
  const session = await Session.start({
    report,
    policy: loadUserPolicy(report.userPolicy),
    log: new EventLog(input.storeDir, masker),
    storeDir: input.storeDir,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker,
  });
  const plain = new Client({ name: 'plain', version: '0' });
  await plain.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'] }));
  const args = { message: 'benchmark' };
  const [rounds, each] = [20, 30];
  const t = await interleaved(rounds, each, {
    direct: () => plain.callTool({ name: 'echo', arguments: args }),
    gated: () => session.call('everything', 'echo', args),
  });
  await session.close();
  await plain.close();
  fs.rmSync(base, { recursive: true, force: true });
  const d = t.direct;
  const g = t.gated;
  return [
    { name: 'tools/call echo, plain SDK client (stdio, server-everything)', median: d, unit: 'ms', note: `${rounds * each} calls` },
    {
      name: 'tools/call echo through an MCP Gate session (policy, log, masking, cleaning)',
      median: g,
      unit: 'ms',
      baseline: 'plain SDK client',
      ratio: g / d,
      note: `${rounds * each} calls, log written`,
    },
  ];
}

async function benchFetch(): Promise<BenchRow[]> {
  const reply = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x'.repeat(100 * 1024) }] } });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}/mcp`;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {} } });
  const init = { method: 'POST', body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } };
  const guarded = createGuardedFetch({ policy: { exception: { allowLoopback: true } } });
  const agent = new Agent();
  const viaGuard = async () => (await guarded(url, init)).text();
  const viaUndici = async () => (await undiciFetch(url, { ...init, dispatcher: agent })).text();
  const t = await interleaved(5, 100, { undici: viaUndici, guarded: viaGuard });
  await guarded.close();
  await agent.close();
  server.close();
  return [
    { name: 'POST with a 100 KB reply, plain undici fetch', median: t.undici, unit: 'ms', note: '500 requests, keep-alive' },
    {
      name: 'POST with a 100 KB reply, hardened fetch (checked, pinned, bounded)',
      median: t.guarded,
      unit: 'ms',
      baseline: 'plain undici fetch',
      ratio: t.guarded / t.undici,
      note: '500 requests, keep-alive',
    },
  ];
}

const MCP_REMOTE = path.resolve(__dirname, '..', '..', 'node_modules', 'mcp-remote', 'dist', 'proxy.js');

/**
 * A remote server (server-everything over streamable HTTP on loopback): the baseline is a plain client of the SDK
 * generation MCP Gate's session is built on (2.x, @modelcontextprotocol/client, with the same version negotiation),
 * so the ratio is what the gate adds; the 1.x client and mcp-remote (a 1.x client of its own behind a stdio proxy)
 * are measured in the same rounds.
 */
async function benchRemote(): Promise<BenchRow[]> {
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const { spawn } = await import('node:child_process');
  const server = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('server-everything (HTTP) did not start')), 20_000);
    const on = (d: Buffer) => /listening/i.test(d.toString()) && (clearTimeout(t), resolve());
    server.stdout!.on('data', on);
    server.stderr!.on('data', on);
  });
  const url = `http://localhost:${port}/mcp`;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-remote-'));
  const home = path.join(base, 'home');
  fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
  fs.writeFileSync(
    path.join(home, '.config', 'mcp-gate', 'config.json'),
    JSON.stringify({
      servers: { remote: { url } },
      localExceptions: [{ server: 'remote', allowLoopback: true }],
      rules: [
        { action: 'mcp.remote.host.localhost', decision: 'allow' },
        { action: 'mcp.remote.tool.echo', decision: 'allow' },
      ],
    }),
  );
  fs.mkdirSync(path.join(base, 'project'));
  const input = {
    projectDir: path.join(base, 'project'),
    storeDir: path.join(base, 'store'),
    machine: { home, env: { HOME: home }, platform: process.platform },
    masker: new Masker(),
  };
  const report = evaluateGate(input);
  const masker = new Masker();
  const session = await Session.start({
    report,
    policy: loadUserPolicy(report.userPolicy),
    log: new EventLog(input.storeDir, masker),
    storeDir: input.storeDir,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker,
  });
  const plain = new ClientV2({ name: 'plain', version: '0' }, { versionNegotiation: { mode: 'auto' } });
  await plain.connect(new StreamableHTTPClientTransportV2(new URL(url)));
  const plainV1 = new Client({ name: 'plain-v1', version: '0' });
  await plainV1.connect(new StreamableHTTPClientTransport(new URL(url)));
  const proxied = new Client({ name: 'via-mcp-remote', version: '0' });
  await proxied.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, url, '--allow-http', '--transport', 'http-only'],
      stderr: 'ignore',
    }),
  );
  const args = { message: 'benchmark' };
  const [rounds, each] = [40, 10];
  const t = await interleaved(rounds, each, {
    direct: () => plain.callTool({ name: 'echo', arguments: args }),
    gated: () => session.call('remote', 'echo', args),
    proxied: () => proxied.callTool({ name: 'echo', arguments: args }),
    v1: () => plainV1.callTool({ name: 'echo', arguments: args }),
  });
  await session.close();
  await plain.close();
  await plainV1.close();
  await proxied.close();
  server.kill('SIGKILL');
  fs.rmSync(base, { recursive: true, force: true });
  const dm = t.direct;
  return [
    {
      name: 'remote tools/call echo, plain SDK v2 client (streamable HTTP, server-everything on loopback)',
      median: dm,
      unit: 'ms',
      note: `${rounds * each} calls; @modelcontextprotocol/client, the SDK generation the session uses`,
    },
    {
      name: 'remote tools/call echo through an MCP Gate session (address check, pinned agent, bounds, policy, log)',
      median: t.gated,
      unit: 'ms',
      baseline: 'plain SDK v2 client (HTTP)',
      ratio: t.gated / dm,
      note: `${rounds * each} calls, log written; loopback under a local-development exception`,
    },
    {
      name: 'remote tools/call echo through mcp-remote (stdio proxy to the same server)',
      median: t.proxied,
      unit: 'ms',
      baseline: 'plain SDK v2 client (HTTP)',
      ratio: t.proxied / dm,
      note: `${rounds * each} calls; mcp-remote 0.15.1 --transport http-only --allow-http`,
    },
    {
      name: 'remote tools/call echo, plain SDK v1 client (for reference)',
      median: t.v1,
      unit: 'ms',
      baseline: 'plain SDK v2 client (HTTP)',
      ratio: t.v1 / dm,
      note: `${rounds * each} calls; @modelcontextprotocol/sdk 1.x, the baseline of earlier runs`,
    },
  ];
}

export async function benchHost(): Promise<BenchRow[]> {
  return [...(await benchCall()), ...(await benchRemote()), ...(await benchFetch())];
}
