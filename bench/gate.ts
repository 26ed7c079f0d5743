// Benchmark: gate evaluation of a project with 12 configuration files and 200 servers — cold (a new cache
// every time: parse, pin, read the store) against warm (an unchanged project re-checked through the cache).
// Also counts file reads on the warm path, which must be zero. And the shapes a hostile repository can use to
// make the gate slow (a long changed file, many large referenced files, a huge TOML file), each as a command.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GateCache } from '../src/trust/gate';
import { Masker } from '../src/policy/mask';
import { ioCounters } from '../src/trust/sources/fsread';
import { recordDecision } from '../src/trust/approval/approvals';
import type { Machine } from '../src/trust/sources/catalogue';
import { serverText } from '../src/report/render';
import { FolderWatcher } from '../src/trust/sources/fswatch';

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
  const files = [
    '.vscode/mcp.json',
    '.mcp.json',
    '.cursor/mcp.json',
    '.gemini/settings.json',
    '.pi/mcp.json',
    '.agentty/mcp.json',
    '.roo/mcp.json',
    '.kiro/settings/mcp.json',
    '.amazonq/mcp.json',
    '.codex/config.toml',
  ];
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
  fs.writeFileSync(
    path.join(home, '.config', 'mcp-gate', 'config.json'),
    JSON.stringify({ imports: ['cursor'], servers: Object.fromEntries(Array.from({ length: 200 - n - perFile }, entry)) }),
  );
  fs.mkdirSync(path.join(home, '.cursor'), { recursive: true });
  fs.writeFileSync(
    path.join(home, '.cursor', 'mcp.json'),
    JSON.stringify({ mcpServers: Object.fromEntries(Array.from({ length: perFile }, entry)) }),
  );
  const machine: Machine = { home, env: { HOME: home }, platform: 'linux' };
  const input = { projectDir: project, storeDir: store, machine, masker: new Masker() };
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
  const watcher = new FolderWatcher();
  const watched = new GateCache(watcher);
  watched.get(input);
  watched.get(input); // verified with every watch live
  await new Promise((r) => setTimeout(r, 50));
  const b2 = { ...ioCounters };
  const warmWatched = median(time(() => watched.get(input), 200));
  const watchedStats = (ioCounters.stats - b2.stats) / 200;
  watcher.close();
  fs.rmSync(base, { recursive: true, force: true });
  return [
    {
      name: `gate evaluation, cold (${sources} files, ${servers} servers)`,
      median: cold,
      unit: 'ms',
      note: 'parse, pin referenced files, read store',
    },
    {
      name: 'gate re-check, warm (unchanged project)',
      median: warm,
      unit: 'ms',
      baseline: 'cold',
      ratio: warm / cold,
      note: `${warmReads} file reads, ${warmStats} stats per re-check (the stat walk)`,
    },
    {
      name: "gate re-check, warm, folder watches (the extension's 1-second re-check)",
      median: warmWatched,
      unit: 'ms',
      baseline: 'cold',
      ratio: warmWatched / cold,
      note: `${watchedStats} stats per re-check: paths in folders that cannot be watched (missing)`,
    },
  ];
}

/**
 * The whole-workspace fallback (a server whose code loads a path computed at run time): a generated repository of
 * 20,000 files in 1,000 folders. Cold: a new cache (walk, read and hash every file, compare with the approval).
 * Warm, watched: the extension's 1-second re-check with folder watches (stats only what an event named). Warm,
 * stat walk: the same without watches (every recorded path stat-checked; what the watched cache does every 30 s).
 */
export async function benchWholeWorkspace(files = 20_000, runs = 5): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-whole-'));
  const project = path.join(base, 'project');
  const home = path.join(base, 'home');
  fs.mkdirSync(path.join(project, 'srv'), { recursive: true });
  fs.mkdirSync(home);
  fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { app: { command: 'node', args: ['srv/server.js'] } } }));
  fs.writeFileSync(path.join(project, 'srv', 'server.js'), "const plugin = process.env.PLUGIN || './default';\nrequire(plugin);\n");
  for (let i = 1; i < files; i++) {
    const dir = path.join(project, 'src', `m${Math.floor(i / 20) % 1000}`);
    if (i % 20 === 0 || i < 20) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.js`), `// module ${i}\nexports.value = ${i};\n`.repeat(12));
  }
  const machine: Machine = { home, env: { HOME: home }, platform: 'linux' };
  const input = { projectDir: project, storeDir: path.join(base, 'store'), machine, masker: new Masker() };
  await recordDecision(input, 'app', undefined, 'approved');
  const check = new GateCache().get(input).servers[0];
  const pinned = Object.keys(check.pinned?.pinned.files ?? {}).length;
  if (check.state !== 'approved' || pinned < files)
    throw new Error(`bench: the whole workspace is not pinned (${check.state}: ${check.reason}; ${pinned} files)`);
  const watcher = new FolderWatcher();
  try {
    time(() => new GateCache().get(input), 1);
    const cold = median(time(() => new GateCache().get(input), runs));
    const watched = new GateCache(watcher);
    watched.get(input);
    watched.get(input); // the first re-check verifies with every watch live
    await new Promise((r) => setTimeout(r, 50)); // let the watches settle
    let before = { ...ioCounters };
    const warmWatched = median(time(() => watched.get(input), 200));
    const watchedStats = (ioCounters.stats - before.stats) / 200;
    const walk = new GateCache();
    walk.get(input);
    before = { ...ioCounters };
    const warmWalk = median(time(() => walk.get(input), runs * 4));
    const walkStats = (ioCounters.stats - before.stats) / (runs * 4);
    return [
      {
        name: `gate whole-workspace pin, cold (${files.toLocaleString('en-US')} files)`,
        median: cold,
        unit: 'ms',
        note: `a server that loads a computed path: walk, read and hash ${pinned.toLocaleString('en-US')} files, compare with its approval`,
      },
      {
        name: 'gate whole-workspace re-check, warm, folder watches',
        median: warmWatched,
        unit: 'ms',
        baseline: 'cold',
        ratio: warmWatched / cold,
        note: `the extension's 1-second re-check: ${watchedStats} stats (${watcher.size} folders watched)`,
      },
      {
        name: 'gate whole-workspace re-check, warm, stat walk',
        median: warmWalk,
        unit: 'ms',
        baseline: 'cold',
        ratio: warmWalk / cold,
        note: `no watches (the CLI's gateway; every 30 s in the extension): ${walkStats} stats`,
      },
    ];
  } finally {
    watcher.close();
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/**
 * What a hostile repository can make slow, each measured as the command a person would run:
 * - `get` on a changed server whose kept file has 16,000 lines, every line different (evaluate + diff + render);
 * - `list` on a project with 60 servers that each name the same 32 files of 64 KiB (evaluate);
 * - `list` on a 1 MiB .codex/config.toml declaring 32,000 servers (evaluate).
 */
export async function benchHostile(runs = 3): Promise<BenchRow[]> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-hostile-'));
  const mk = (name: string) => {
    const project = path.join(base, name, 'project');
    const home = path.join(base, name, 'home');
    fs.mkdirSync(project, { recursive: true });
    fs.mkdirSync(home, { recursive: true });
    const machine: Machine = { home, env: { HOME: home }, platform: 'linux' };
    return { project, input: { projectDir: project, storeDir: path.join(base, name, 'store'), machine, masker: new Masker() } };
  };
  const rows: BenchRow[] = [];
  try {
    // 1. A changed 16,000-line file (64,000 bytes: kept with the approval, so it is diffed line by line).
    {
      const { project, input } = mk('long-diff');
      const lines = (offset: number) =>
        Array.from({ length: 16_000 }, (_, i) => (i + offset).toString(36).padStart(3, '0') + '\n').join('');
      fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { big: { command: 'node', args: ['big.js'] } } }));
      fs.writeFileSync(path.join(project, 'big.js'), lines(0));
      await recordDecision(input, 'big', undefined, 'approved');
      fs.writeFileSync(path.join(project, 'big.js'), lines(20_000));
      let shown = '';
      const t = median(
        time(() => {
          const s = new GateCache().get(input).servers[0];
          shown = serverText(s);
        }, runs),
      );
      const note = shown.includes('too large to show line by line')
        ? 'shown as "changed, too large to show line by line"'
        : `${shown.split('\n').length} lines of diff shown`;
      rows.push({
        name: 'gate get: changed server, 16,000-line file, every line different',
        median: t,
        unit: 'ms',
        note: `evaluate + diff + render; ${note}`,
      });
    }
    // 2. 60 servers × the same 32 files of 64 KiB.
    {
      const { project, input } = mk('many-files');
      const names = Array.from({ length: 32 }, (_, i) => `lib/f${i}.js`);
      fs.mkdirSync(path.join(project, 'lib'));
      for (const [i, n] of names.entries()) fs.writeFileSync(path.join(project, n), `// file ${i}\n`.padEnd(64 * 1024 - 1, 'x') + '\n');
      const servers = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`s${i}`, { command: 'node', args: names }]));
      fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: servers }));
      const t = median(time(() => new GateCache().get(input), runs));
      rows.push({
        name: 'gate list: 60 servers × 32 files of 64 KiB (the same files)',
        median: t,
        unit: 'ms',
        note: 'evaluate: parse and pin 1,920 file references (2 MiB of distinct content)',
      });
    }
    // 3. A 1 MiB .codex/config.toml with 32,000 servers.
    {
      const { project, input } = mk('big-toml');
      const text = Array.from({ length: 32_000 }, (_, i) => `[mcp_servers.s${i}]\ncommand="n"\n`).join('');
      if (Buffer.byteLength(text) > 1024 * 1024) throw new Error(`bench: the TOML shape is ${Buffer.byteLength(text)} bytes, over 1 MiB`);
      fs.mkdirSync(path.join(project, '.codex'));
      fs.writeFileSync(path.join(project, '.codex', 'config.toml'), text);
      let servers = 0;
      const t = median(
        time(() => {
          servers = new GateCache().get(input).servers.length;
        }, runs),
      );
      rows.push({
        name: 'gate list: 1 MiB .codex/config.toml, 32000 servers',
        median: t,
        unit: 'ms',
        note: `evaluate: parse (smol-toml), refused past 1,000 servers a file (a full block; ${servers} listed), ${Buffer.byteLength(text)} bytes`,
      });
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
  return rows;
}
