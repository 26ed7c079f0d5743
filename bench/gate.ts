// Benchmark: gate evaluation of a project with 12 configuration files and 200 servers — cold (a new cache
// every time: parse, pin, read the store) against warm (an unchanged project re-checked through the cache).
// Also counts file reads on the warm path, which must be zero.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GateCache } from '../src/trust/gate';
import { ioCounters } from '../src/trust/fsread';
import { recordDecision } from '../src/trust/decisions';
import type { Machine } from '../src/trust/catalogue';

export interface BenchRow {
  name: string;
  median: number;
  unit: string;
  baseline?: string;
  ratio?: number;
  note?: string;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

function time(f: () => void, runs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    f();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

export async function benchGate(): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-'));
  const project = path.join(base, 'project');
  const home = path.join(base, 'home');
  const store = path.join(base, 'store');
  const files = ['.vscode/mcp.json', '.mcp.json', '.cursor/mcp.json', '.gemini/settings.json', '.pi/mcp.json', '.agentty/mcp.json', '.roo/mcp.json', '.kiro/settings/mcp.json', '.amazonq/mcp.json', '.codex/config.toml'];
  let n = 0;
  const perFile = 17; // 10 repository files + the user cursor file × 17, and 13 in the user config: 200
  fs.mkdirSync(path.join(project, 'servers'), { recursive: true });
  const entry = () => {
    const i = n++;
    fs.writeFileSync(path.join(project, 'servers', `s${i}.js`), `// server ${i}\n`.repeat(50));
    return [`s${i}`, { command: 'node', args: [`servers/s${i}.js`, '--port', String(3000 + i)], env: { LEVEL: 'info' } }] as const;
  };
  for (const f of files) {
    const p = path.join(project, f);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    const entries = Array.from({ length: perFile }, entry);
    if (f.endsWith('.toml')) {
      fs.writeFileSync(p, entries.map(([k, v]) => `[mcp_servers.${k}]\ncommand = "node"\nargs = ${JSON.stringify(v.args)}\n`).join('\n'));
    } else {
      const key = f === '.vscode/mcp.json' ? 'servers' : 'mcpServers';
      fs.writeFileSync(p, JSON.stringify({ [key]: Object.fromEntries(entries) }, null, 2));
    }
  }
  // The 11th and 12th files: the user's MCP Gate config (importing cursor) and the user's cursor file.
  fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'mcp-gate', 'config.json'), JSON.stringify({ imports: ['cursor'], servers: Object.fromEntries(Array.from({ length: 200 - n - perFile }, entry)) }));
  fs.mkdirSync(path.join(home, '.cursor'), { recursive: true });
  fs.writeFileSync(path.join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: Object.fromEntries(Array.from({ length: perFile }, entry)) }));
  const machine: Machine = { home, env: { HOME: home }, platform: 'linux' };
  const input = { projectDir: project, storeDir: store, machine };
  for (let i = 0; i < 50; i++) await recordDecision(input, `s${i}`, undefined, 'approved');

  const probe = new GateCache().get(input);
  const servers = probe.servers.length;
  const sources = probe.sources.filter((s) => s.status === 'ok').length;

  time(() => new GateCache().get(input), 3);
  const cold = median(time(() => new GateCache().get(input), 30));
  const cache = new GateCache();
  cache.get(input);
  const before = { ...ioCounters };
  const warmRuns = time(() => cache.get(input), 200);
  const warmReads = (ioCounters.reads - before.reads) / 200;
  const warmStats = (ioCounters.stats - before.stats) / 200;
  const warm = median(warmRuns);
  fs.rmSync(base, { recursive: true, force: true });
  return [
    { name: `gate evaluation, cold (${sources} files, ${servers} servers)`, median: cold, unit: 'ms', note: 'parse, pin referenced files, read store' },
    { name: 'gate re-check, warm (unchanged project)', median: warm, unit: 'ms', baseline: 'cold', ratio: warm / cold, note: `${warmReads} file reads, ${warmStats} stats per re-check` },
  ];
}
