// Runs every benchmark and rewrites bench/RESULTS.md with the machine, versions, medians and ratios against the
// baseline measured in the same run. Run with `npm run bench` (which builds first). `node bench/run.mjs gate`
// (or host, gateway, protocol, sandbox, guard, panel, bundle, vscode; several may be named) runs only those groups and keeps the other rows of the
// table as the last run wrote them.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const { benchGate, benchHostile, benchWholeWorkspace } = require(path.join(root, 'out', 'bench', 'gate.js'));
const { benchHost } = require(path.join(root, 'out', 'bench', 'host.js'));
const { benchGateway } = require(path.join(root, 'out', 'bench', 'gateway.js'));
const { benchPanel } = require(path.join(root, 'out', 'bench', 'panel.js'));
const { benchSandbox } = require(path.join(root, 'out', 'bench', 'sandbox.js'));
const { benchProtocol } = require(path.join(root, 'out', 'bench', 'protocol.js'));
const { benchGuard } = require(path.join(root, 'out', 'bench', 'guard.js'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

const GROUPS = {
  gate: async () => [...(await benchGate()), ...(await benchWholeWorkspace()), ...(await benchHostile())],
  host: () => benchHost(),
  gateway: () => benchGateway(),
  protocol: () => benchProtocol(),
  sandbox: () => benchSandbox(),
  guard: () => benchGuard(),
  panel: () => benchPanel(),
  bundle: () => bundleRows(),
  vscode: () => vscodeRows(),
};
const asked = process.argv.slice(2);
for (const g of asked) if (!(g in GROUPS)) throw new Error(`bench: unknown group "${g}" (groups: ${Object.keys(GROUPS).join(', ')})`);
const run = asked.length ? asked : Object.keys(GROUPS);
const fresh = {};
for (const g of run) fresh[g] = (await GROUPS[g]()).map((r) => ({ ...r, group: g }));
const rows = mergeRows(fresh);

/** This run's rows, and for groups not run, the rows the table already has (in their place). */
function mergeRows(fresh) {
  if (Object.keys(fresh).length === Object.keys(GROUPS).length) return Object.values(fresh).flat();
  const previous = previousRows();
  const out = [];
  const placed = new Set();
  for (const r of previous) {
    const g = groupOf(r.name);
    if (fresh[g]) {
      if (!placed.has(g)) out.push(...fresh[g]);
      placed.add(g);
    } else out.push(r);
  }
  for (const g of Object.keys(fresh)) if (!placed.has(g)) out.push(...fresh[g]);
  return out;
}
function groupOf(name) {
  if (name.startsWith('gate ')) return 'gate';
  if (name.startsWith('bundle size')) return 'bundle';
  if (name.startsWith('guard:')) return 'guard';
  if (/gateway/.test(name)) return 'gateway';
  if (name.startsWith('remote ')) return 'host';
  if (/SDK v2 client|2026-07-28 fixture|2025-11-25 server-everything/.test(name)) return 'protocol';
  if (name.startsWith('extension ')) return 'vscode';
  if (/log view model|log filter|trust panel|scrolling|jumping/.test(name)) return 'panel';
  if (/contained|sandbox|bubblewrap/.test(name)) return 'sandbox';
  return 'host';
}
function previousRows() {
  const file = path.join(root, 'bench', 'RESULTS.md');
  if (!fs.existsSync(file)) return [];
  // the main table only: the fuzzer's and the servers' sections below it have tables of their own
  const main = fs.readFileSync(file, 'utf8').replace(/<!-- (\w+):start -->[\s\S]*?<!-- \1:end -->/g, '');
  return main
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| benchmark') && !l.startsWith('| ---'))
    .map((l) => {
      const [name, median, baseline, ratio, note] = l.slice(2, -2).split(' | ');
      return { name, raw: { median, baseline, ratio, note } };
    });
}
/**
 * Activation time, the first gate check and extension-host memory with 8 servers connected, measured inside VS
 * Code 1.112: three windows, one after the other (a new code-server each), medians.
 */
function median(xs) {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
}
function vscodeRows() {
  const VSCODE_RUNS = 3;
  const runs = [];
  for (let i = 0; i < VSCODE_RUNS; i++) {
    const out = path.join(os.tmpdir(), `mcp-gate-bench-vscode-${process.pid}-${i}.json`);
    const r = spawnSync(
      process.execPath,
      [
        path.join(root, 'test', 'vscode', 'run.mjs'),
        '--folder',
        path.join(root, 'test', 'fixtures', 'vscode-workspace'),
        '--grep',
        'bench',
      ],
      {
        cwd: root,
        env: { ...process.env, MCP_GATE_BENCH_OUT: out },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    if (r.status !== 0 || !fs.existsSync(out)) {
      console.error(
        'bench: the VS Code benchmark did not run (npm run vscode-host installs the host; npm run test:vscode compiles the suite)',
      );
      return [];
    }
    runs.push(JSON.parse(fs.readFileSync(out, 'utf8')));
    fs.rmSync(out, { force: true });
  }
  const med = (k) => median(runs.map((x) => x[k]));
  const m = {
    vscode: runs[0].vscode,
    connected: Math.min(...runs.map((x) => x.connected)),
    activationMs: med('activationMs'),
    firstCheckMs: med('firstCheckMs'),
    rssBefore: med('rssBefore'),
    rssAfter: med('rssAfter'),
  };
  const mib = (b) => b / 2 ** 20;
  return [
    {
      name: `extension activation (VS Code ${m.vscode}, code-server)`,
      median: m.activationMs,
      unit: 'ms',
      note: `activate() in the extension host, median of ${VSCODE_RUNS} windows: it registers; the gate is checked right after`,
    },
    {
      name: 'first gate check in the extension host, right after activation',
      median: m.firstCheckMs,
      unit: 'ms',
      note: 'the fixture workspace (2 servers, 4 files): catalogue, parse, pin, store, with loading the parser (dist/parser.js) at its first file read, which was part of loading the extension before it became a part of its own; same run',
    },
    { name: 'extension host memory (RSS) before servers start', median: mib(m.rssBefore), unit: 'MiB', note: 'same window, just before' },
    {
      name: `extension host memory (RSS) with ${m.connected} servers connected through the gate`,
      median: mib(m.rssAfter),
      unit: 'MiB',
      baseline: 'before servers start',
      ratio: m.rssAfter / m.rssBefore,
      note: '8 user servers (the fixture echo server), each started by VS Code through the provider and called once',
    },
  ];
}

/** The five largest parts of a bundle by output bytes (npm packages, or MCP Gate's own folders), from esbuild's metafile. */
function largestParts(metafile) {
  const [, out] = Object.entries(metafile.outputs).find(([f]) => f.endsWith('.js'));
  const parts = {};
  for (const [file, info] of Object.entries(out.inputs)) {
    const pkg = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = pkg ? pkg[1] : file.split('/').slice(0, 2).join('/');
    parts[key] = (parts[key] ?? 0) + info.bytesInOutput;
  }
  return Object.entries(parts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([k, b]) => `${k} ${(b / 1024).toFixed(0)} KiB`)
    .join(', ');
}

/** Bundle sizes; the Node bundles against the same esbuild build unminified (the baseline, built in this run). */
async function bundleRows() {
  const { build } = require('esbuild');
  const { cli, extension, lockWorker, parser, undiciPart, relay } = await import(path.join(root, 'scripts', 'build-options.mjs'));
  const notes = new Map([
    [lockWorker, '; the npm libraries, loaded only in the worker that resolves or installs a pinned package'],
    [parser, "; @babel/parser, required by the bundles above at the closure's first file read"],
    [undiciPart, "; undici's agent, connector and fetch, required by the extension and the CLI at the first remote exchange"],
    [relay, "; what VS Code starts for each gated server (Node's own modules only)"],
  ]);
  const kib = (f) => fs.statSync(path.isAbsolute(f) ? f : path.join(root, f)).size / 1024;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-bundle-'));
  const rows = [];
  try {
    for (const opts of [extension, cli, lockWorker, parser, undiciPart, relay]) {
      const plain = path.join(tmp, path.basename(opts.outfile));
      await build({ ...opts, absWorkingDir: root, outfile: plain, minify: false, keepNames: false, sourcemap: false });
      rows.push({
        name: `bundle size: ${opts.outfile}, not minified (the baseline)`,
        median: kib(plain),
        unit: 'KiB',
        note: 'esbuild, same entry and options, minify off',
      });
      // what remains large: the same minified build with a metafile, its output bytes summed by npm package
      const meta = await build({
        ...opts,
        absWorkingDir: root,
        outfile: path.join(tmp, `meta-${path.basename(opts.outfile)}`),
        sourcemap: false,
        metafile: true,
      });
      const largest = largestParts(meta.metafile);
      rows.push({
        name: `bundle size: ${opts.outfile}`,
        median: kib(opts.outfile),
        unit: 'KiB',
        baseline: 'not minified',
        ratio: kib(opts.outfile) / kib(plain),
        note: `esbuild, minified (names kept); the source map stays out of the .vsix${notes.get(opts) ?? ''}; largest parts (esbuild metafile): ${largest}`,
      });
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  rows.push({ name: 'bundle size: dist/webview/panel.js', median: kib('dist/webview/panel.js'), unit: 'KiB', note: 'esbuild, minified' });
  return rows;
}
const fmt = (x) => (Number.isNaN(x) ? '—' : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(4));
const lines = [
  '# Benchmark results',
  '',
  'Written by `npm run bench` (bench/run.mjs); do not edit by hand. Medians; each ratio is against the baseline',
  'measured in the same run.',
  '',
  `- date: ${new Date().toISOString()}`,
  `- machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}`,
  `- node ${process.version}; mcp-gate ${pkg.version}`,
  ...(asked.length ? [`- this run: ${run.join(', ')} only; the other rows are from an earlier run`] : []),
  '',
  '| benchmark | median | baseline | ratio | note |',
  '| --- | --- | --- | --- | --- |',
  ...rows.map((r) =>
    r.raw
      ? `| ${r.name} | ${r.raw.median} | ${r.raw.baseline} | ${r.raw.ratio} | ${r.raw.note} |`
      : `| ${r.name} | ${fmt(r.median)} ${r.unit} | ${r.baseline ?? '—'} | ${r.ratio === undefined ? '—' : r.ratio.toFixed(4)} | ${r.note ?? ''} |`,
  ),
  '',
];
// The fuzzer's section (scripts/fuzz-closure.mjs) and the servers' (npm run test:servers) are kept as they are.
const resultsFile = path.join(root, 'bench', 'RESULTS.md');
const before = fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, 'utf8') : '';
const kept = ['fuzz', 'servers']
  .map((k) => new RegExp(`<!-- ${k}:start -->[\\s\\S]*<!-- ${k}:end -->\\n?`).exec(before)?.[0])
  .filter(Boolean);
fs.writeFileSync(resultsFile, lines.join('\n') + kept.map((k) => `\n${k.endsWith('\n') ? k : `${k}\n`}`).join(''));
// docs/benchmarks.md (linked from the README) carries the same table between its bench markers.
const readme = path.join(root, 'docs', 'benchmarks.md');
const text = fs.readFileSync(readme, 'utf8');
const start = text.indexOf('<!-- bench:start -->');
const end = text.indexOf('<!-- bench:end -->');
if (start >= 0 && end > start) {
  const table = lines.filter((l) => l.startsWith('|')).join('\n');
  fs.writeFileSync(readme, `${text.slice(0, start)}<!-- bench:start -->\n${table}\n${text.slice(end)}`);
}
process.stdout.write(lines.join('\n'));
process.exit(0);
