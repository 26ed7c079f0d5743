// Benchmarks of the protocol path: tools/call through an MCP Gate session against a plain SDK v2 client (the
// same client package the host uses) to the same server in the same run, for a 2026-07-28-only server
// (test/fixtures/servers/modern-server.ts) and a 2025-11-25 server (server-everything), over stdio. To find where
// the time goes, the session is also measured with its log kept in memory (no file write on the call path).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { EventLog } from '../src/host/log/log';
import { Session } from '../src/host/session';
import { Masker } from '../src/policy/mask';
import { loadUserPolicy } from '../src/policy/user-policy';
import { evaluateGate } from '../src/trust/gate';
import type { BenchRow } from './gate';
import { interleaved } from './host';
import { inProcess } from '../src/trust/packages/npm-resolve';

const ROOT = path.resolve(__dirname, '..', '..');
const MODERN = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'modern-server.js');
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

async function sessionFor(base: string, args: string[], tool: string, logToFile: boolean): Promise<Session> {
  const home = path.join(base, `home-${logToFile ? 'file' : 'mem'}`);
  fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
  fs.writeFileSync(
    path.join(home, '.config', 'mcp-gate', 'config.json'),
    JSON.stringify({
      servers: { s: { command: process.execPath, args } },
      rules: [{ action: `mcp.s.tool.${tool}`, decision: 'allow' }],
    }),
  );
  fs.mkdirSync(path.join(base, 'project'), { recursive: true });
  const masker = new Masker();
  const input = {
    projectDir: path.join(base, 'project'),
    storeDir: path.join(base, 'store'),
    machine: { home, env: { HOME: home }, platform: process.platform },
    masker,
  };
  const report = evaluateGate(input);
  return Session.start({
    report,
    policy: loadUserPolicy(report.userPolicy),
    log: new EventLog(logToFile ? input.storeDir : undefined, masker),
    storeDir: input.storeDir,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker,
  });
}

async function one(label: string, args: string[], tool: string, toolArgs: Record<string, unknown>): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-protocol-'));
  const gated = await sessionFor(base, args, tool, true);
  const memory = await sessionFor(base, args, tool, false);
  if (!gated.servers().length) throw new Error(`bench: the ${label} server did not start: ${gated.notes.join('; ')}`);
  const plain = new Client({ name: 'plain', version: '0' }, { versionNegotiation: { mode: 'auto' } });
  await plain.connect(new StdioClientTransport({ command: process.execPath, args }));
  const [rounds, each] = [20, 30];
  const t = await interleaved(rounds, each, {
    direct: () => plain.callTool({ name: tool, arguments: toolArgs }),
    gated: () => gated.call('s', tool, toolArgs),
    memory: () => memory.call('s', tool, toolArgs),
  });
  await gated.close();
  await memory.close();
  await plain.close();
  fs.rmSync(base, { recursive: true, force: true });
  return [
    { name: `tools/call, plain SDK v2 client (stdio, ${label})`, median: t.direct, unit: 'ms', note: `${rounds * each} calls` },
    {
      name: `tools/call through an MCP Gate session (${label})`,
      median: t.gated,
      unit: 'ms',
      baseline: 'plain SDK v2 client',
      ratio: t.gated / t.direct,
      note: `${rounds * each} calls, log written to the store`,
    },
    {
      name: `tools/call through an MCP Gate session, log in memory (${label})`,
      median: t.memory,
      unit: 'ms',
      baseline: 'plain SDK v2 client',
      ratio: t.memory / t.direct,
      note: `${rounds * each} calls: what the log file write costs`,
    },
  ];
}

export async function benchProtocol(): Promise<BenchRow[]> {
  return [
    ...(await one('2026-07-28 fixture', [MODERN], 'echo', { text: 'benchmark' })),
    ...(await one('2025-11-25 server-everything', [EVERYTHING, 'stdio'], 'echo', { message: 'benchmark' })),
  ];
}
