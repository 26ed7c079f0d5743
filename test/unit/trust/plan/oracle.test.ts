// The runtime oracle of the execution closure: each server shape of a corpus (fixed shapes, and module graphs
// generated with literal and computed loads, eager and lazy) is pinned by the gate, then started exactly as its
// launch plan says under strace, which records every file the process tree opens or executes; the server is
// initialised, lists its tools and has one called (lazy loads happen there). Every workspace file it opened must
// be in the pinned set, or the whole workspace must be pinned. A shape the gate blocks never runs, so it passes.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { evaluateGate } from '../../../../src/trust/gate';
import { minimalEnv } from '../../../../src/trust/plan/launch-plan';
import { cleanupTemp, installTsx, tempDir, TSX_BIN, world } from '../../helpers';
import { miniServer as server } from '../../mini-server';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);

const esmServer = (prelude: string, onCall = '') =>
  `${prelude}\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${server('', onCall)}`;

/** A dependency-free stdio MCP server in Python (one tool, `hello`). */
const PY_SERVER =
  'import sys, json\nfor line in sys.stdin:\n    m = json.loads(line)\n    if "id" not in m: continue\n    r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}} if m["method"] == "initialize" else ({"tools": [{"name": "hello", "description": "hi", "inputSchema": {"type": "object"}}]} if m["method"] == "tools/list" else {"content": []})\n    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)\n';

interface Shape {
  name: string;
  files: Record<string, string>;
  def: Record<string, unknown>;
  /** Runs on the written workspace before the gate pins it (a package installed into it). */
  setup?: (project: string) => void;
  /** Folders put first on PATH for the gate and the run (a program installed outside the workspace). */
  path?: string[];
}

/** A TypeScript server for tsx: type annotations, an import without an extension that tsx resolves to .ts. */
const tsServer = (imports: string, onCall = '') => `${imports}\nconst typed: number = 1;\n${server('', onCall)}`;

const SHAPES: Shape[] = [
  {
    name: 'node CJS, a literal require beside it',
    files: { 'tools/server.js': server("require('./lib.js');"), 'tools/lib.js': 'module.exports = 1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, a literal ../ require',
    files: { 'tools/server.js': server("require('../shared/u.js');"), 'shared/u.js': 'module.exports = 1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, a lazy literal require on a call',
    files: { 'tools/server.js': server('', "require('../lazy/h.js')"), 'lazy/h.js': 'module.exports = 1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, a lazy computed require on a call',
    files: {
      'tools/server.js': server('', "require(require('path').join(__dirname, '..', 'lazy', 'h.js'))"),
      'lazy/h.js': 'module.exports = 1;',
    },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, require of a JSON file outside',
    files: { 'tools/server.js': server("require('../conf/c.json');"), 'conf/c.json': '{}' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, an escaped literal',
    files: { 'tools/server.js': server("require('\\x2e\\x2e/lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, a legacy octal escape',
    files: { 'tools/server.js': server("require('\\56\\56/lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, a regular expression with a quote before the require',
    files: { 'tools/server.js': server("const re = /'/; require('../lib/x.js'); const t = '';"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, __dirname + a relative path',
    files: { 'tools/server.js': server("require(__dirname + '/../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, require handed on as a value',
    files: { 'tools/server.js': server("const r = require; r(['..', 'lib', 'x.js'].join('/'));"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, fs.readFileSync + eval',
    files: { 'tools/server.js': server("eval(require('fs').readFileSync(__dirname + '/../lib/code.txt', 'utf8'));"), 'lib/code.txt': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node CJS, a file read as data outside the package',
    files: {
      'tools/server.js': server("require('fs').readFileSync(require('path').join(__dirname, '..', 'data', 'd.txt'));"),
      'data/d.txt': 'x',
    },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'node ESM, static imports',
    files: { 'tools/server.mjs': esmServer("import '../lib/a.mjs';"), 'lib/a.mjs': "import './b.mjs';", 'lib/b.mjs': 'export {};' },
    def: { command: 'node', args: ['tools/server.mjs'] },
  },
  {
    name: 'node ESM, a literal dynamic import on a call',
    files: { 'tools/server.mjs': esmServer('', "import('../lib/a.mjs')"), 'lib/a.mjs': 'export {};' },
    def: { command: 'node', args: ['tools/server.mjs'] },
  },
  {
    name: 'node ESM, a computed dynamic import',
    files: { 'tools/server.mjs': esmServer("const n = 'a'; await import(`../lib/${n}.mjs`);"), 'lib/a.mjs': 'export {};' },
    def: { command: 'node', args: ['tools/server.mjs'] },
  },
  {
    name: 'node ESM, createRequire of a literal outside',
    files: { 'tools/server.mjs': esmServer('', "require('../lib/c.cjs')"), 'lib/c.cjs': 'module.exports = 1;' },
    def: { command: 'node', args: ['tools/server.mjs'] },
  },
  {
    name: 'node ESM with "type": "module" in package.json above',
    files: { 'package.json': '{"type":"module"}', 'tools/server.js': esmServer("import '../lib/a.js';"), 'lib/a.js': 'export {};' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'an extensionless entry',
    files: { 'tools/serve': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/serve'] },
  },
  {
    name: 'an entry Node completes (tools/server → tools/server.js)',
    files: { 'tools/server.js': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server'] },
  },
  {
    name: 'a folder entry with package.json main',
    files: { 'srv/package.json': '{"main":"main.js"}', 'srv/main.js': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'node', args: ['srv'] },
  },
  {
    name: 'a folder entry whose main points outside it',
    files: { 'srv/package.json': '{"main":"../impl/main.js"}', 'impl/main.js': server() },
    def: { command: 'node', args: ['srv'] },
  },
  {
    name: 'a file of an unknown extension loaded as JavaScript',
    files: { 'tools/server.js': server("require('./boot.weird');"), 'tools/boot.weird': "require('../lib/x.js');", 'lib/x.js': '1;' },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'a plugin named as a data argument',
    files: {
      'tools/server.js': server('require(require("path").resolve(process.argv[3]));'),
      'plugins/p.js': "require('../lib/x.js');",
      'lib/x.js': '1;',
    },
    def: { command: 'node', args: ['tools/server.js', '--plugin', 'plugins/p.js'] },
  },
  {
    name: 'node -r preload',
    files: { 'tools/server.js': server(), 'pre/p.js': "require('../lib/x.js');", 'lib/x.js': '1;' },
    def: { command: 'node', args: ['-r', './pre/p.js', 'tools/server.js'] },
  },
  {
    name: 'node --import preload as a file URL',
    files: { 'tools/server.js': server(), 'pre/p.mjs': "import '../lib/x.mjs';", 'lib/x.mjs': 'export {};' },
    def: { command: 'node', args: ['--import', 'file://${workspaceFolder}/pre/p.mjs', 'tools/server.js'] },
  },
  {
    name: 'a symlinked server file',
    files: { 'real/s.js': server("require('./dep.js');"), 'real/dep.js': '1;' },
    def: { command: 'node', args: ['link/s.js'] },
  },
  {
    name: 'a child process of a literal program and file',
    files: {
      'tools/server.js': server(
        "require('child_process').spawnSync(process.execPath, ['-e', '1']); require('child_process').spawnSync('node', ['../lib/c.js'], { cwd: __dirname });",
      ),
      'lib/c.js': '1;',
    },
    def: { command: 'node', args: ['tools/server.js'] },
  },
  {
    name: 'a shell -c running node',
    files: { 'tools/server.js': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'sh', args: ['-c', 'exec node tools/server.js'] },
  },
  {
    name: 'a workspace shell script',
    files: { 'run.sh': '#!/bin/sh\nexec node tools/server.js\n', 'tools/server.js': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: './run.sh', args: [] },
  },
  {
    name: 'env wrapping node',
    files: { 'tools/server.js': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'env', args: ['A=1', 'node', 'tools/server.js'] },
  },
  {
    name: 'npm run start running a file outside the package',
    files: { 'app/package.json': '{"scripts":{"start":"node ../tools/server.js"}}', 'tools/server.js': server(), 'lib/x.js': '1;' },
    def: { command: 'npm', args: ['run', '--silent', 'start'], cwd: 'app' },
  },
  {
    name: 'make running node',
    files: { Makefile: 'serve:\n\t@node tools/server.js\n', 'tools/server.js': server("require('../lib/x.js');"), 'lib/x.js': '1;' },
    def: { command: 'make', args: ['-s', 'serve'] },
  },
  {
    name: 'TypeScript via tsx on PATH, an extensionless import of a .ts file outside',
    files: { 'tools/server.ts': tsServer("import '../lib/x';"), 'lib/x.ts': 'export const x: number = 1;' },
    def: { command: 'tsx', args: ['tools/server.ts'] },
    path: [TSX_BIN],
  },
  {
    name: 'TypeScript via tsx on PATH, an import through a tsconfig paths alias (no baseUrl)',
    files: {
      'tsconfig.json': '{ // comments, as TypeScript allows\n"compilerOptions":{"paths":{"~/*":["./src/lib/*"],}}}',
      'tools/server.ts': tsServer("import '~/h';"),
      'src/lib/h.ts': 'export const h: number = 1;',
      'src/other/o.ts': 'export {};',
    },
    def: { command: 'tsx', args: ['tools/server.ts'] },
    path: [TSX_BIN],
  },
  {
    name: 'TypeScript via tsx on PATH, a lazy import through a tsconfig paths alias',
    files: {
      'tsconfig.json': '{"compilerOptions":{"baseUrl":".","paths":{"@lib/*":["lib/*"]}}}',
      'tools/server.ts': tsServer('', "require('@lib/h')"),
      'lib/h.ts': 'export const h: number = 1;',
    },
    def: { command: 'tsx', args: ['tools/server.ts'] },
    path: [TSX_BIN],
  },
  {
    name: 'TSX via tsx on PATH, a @jsxImportSource pragma naming a runtime outside',
    files: {
      'tools/server.tsx': `/** @jsxImportSource ../jsx */\nexport const el = <div/>;\n${tsServer('')}`,
      'jsx/jsx-runtime.ts': 'export function jsx() { return {}; }\nexport const Fragment = 0;\n',
    },
    def: { command: 'tsx', args: ['tools/server.tsx'] },
    path: [TSX_BIN],
  },
  {
    name: 'TypeScript via tsx on PATH, paths from a config a workspace package holds (extends through its exports)',
    files: {
      'node_modules/cfgpkg/package.json': '{"name":"cfgpkg","exports":{"./base":"./conf/base.json"}}',
      'node_modules/cfgpkg/conf/base.json': '{"compilerOptions":{"paths":{"@ev/*":["../../../ev/*"]}}}',
      'tsconfig.json': '{"extends":"cfgpkg/base"}',
      'tools/server.ts': tsServer("import '@ev/lib';"),
      'ev/lib.ts': 'export {};',
    },
    def: { command: 'tsx', args: ['tools/server.ts'] },
    path: [TSX_BIN],
  },
  // (`npx tsx …` is not traced here: an npm launch runs from its approved lock in MCP Gate's cache, never npx.)
  {
    name: 'TypeScript via node --import tsx from the workspace',
    files: {
      'package.json': '{"devDependencies":{"tsx":"*"}}',
      'tools/server.ts': tsServer("import '../lib/x';"),
      'lib/x.ts': 'export {};',
    },
    def: { command: 'node', args: ['--import', 'tsx', 'tools/server.ts'] },
    setup: installTsx,
  },
  {
    name: "TypeScript via the workspace's node_modules/.bin/tsx",
    files: {
      'package.json': '{"devDependencies":{"tsx":"*"}}',
      'tools/server.ts': tsServer("import '../lib/x';"),
      'lib/x.ts': 'export {};',
    },
    def: { command: 'node_modules/.bin/tsx', args: ['tools/server.ts'] },
    setup: installTsx,
  },
  {
    name: 'a Python script importing beside it and through sys.path',
    files: {
      'srv/main.py': `import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))\nimport helper\n${PY_SERVER}`,
      'lib/helper.py': 'X = 1\n',
    },
    def: { command: 'python3', args: ['srv/main.py'] },
  },
  {
    name: 'python3 -m of a workspace package',
    files: { 'pkg/__init__.py': '', 'pkg/__main__.py': `from . import impl\n${PY_SERVER}`, 'pkg/impl.py': 'X = 1\n' },
    def: { command: 'python3', args: ['-m', 'pkg'] },
  },
  {
    name: 'a Python virtual environment in the workspace with a .pth file',
    files: { '.venv/pyvenv.cfg': 'home = /usr/bin\ninclude-system-site-packages = false\n', 'srv/main.py': PY_SERVER },
    def: { command: 'python3', args: ['srv/main.py'] },
  },
];

// Module graphs: files in random folders with random names and extensions, edges that are literal or computed,
// eager or lazy. Node's CommonJS loads every extension here as JavaScript.
const FOLDERS = ['a', 'b', 'lib', 'src/x', 'tools', 'deep/er/still'];
const EXTS = ['.js', '.cjs', '', '.weird', '.jsx'];
interface Edge {
  to: number;
  literal: boolean;
  lazy: boolean;
}
const graph = fc.record({
  nodes: fc.array(fc.record({ folder: fc.constantFrom(...FOLDERS), ext: fc.constantFrom(...EXTS) }), { minLength: 2, maxLength: 7 }),
  edges: fc.array(fc.record({ from: fc.nat(), to: fc.nat(), literal: fc.boolean(), lazy: fc.boolean() }), { maxLength: 10 }),
  manifests: fc.array(fc.constantFrom(...FOLDERS), { maxLength: 2 }),
});

interface Graph {
  nodes: { folder: string; ext: string }[];
  edges: { from: number; to: number; literal: boolean; lazy: boolean }[];
  manifests: string[];
}

function graphShape(g: Graph, i: number): Shape {
  const names = g.nodes.map((n, k) => `${n.folder}/m${k}${k === 0 ? '.js' : n.ext}`);
  const out = new Map<number, Edge[]>();
  for (const e of g.edges) {
    const from = e.from % names.length;
    const to = e.to % names.length;
    if (to === 0 || from === to) continue; // the entry is never required back (it would start a second server)
    out.set(from, [...(out.get(from) ?? []), { to, literal: e.literal, lazy: e.lazy }]);
  }
  const files: Record<string, string> = {};
  for (const f of g.manifests) files[`${f}/package.json`] = '{}';
  names.forEach((name, k) => {
    const eager: string[] = [];
    const lazy: string[] = [];
    for (const e of out.get(k) ?? []) {
      const relPath = path.posix.relative(path.posix.dirname(name), names[e.to]);
      const spec = relPath.startsWith('.') ? relPath : `./${relPath}`;
      const load = e.literal ? `require(${JSON.stringify(spec)})` : `require(require('path').join(__dirname, ${JSON.stringify(spec)}))`;
      (e.lazy ? lazy : eager).push(load);
    }
    if (k === 0) files[name] = server(eager.join(';\n'), lazy.join(', '));
    else
      files[name] =
        `${eager.join(';\n')}\nmodule.exports = { run() { ${lazy.join(';')} } };\n(process.oracleModules = process.oracleModules || []).push(module.exports);\n`;
  });
  // Lazy loads of other modules run when the entry's tool is called: the entry calls each loaded module's run()
  // (each module lists itself on `process`; reaching require.cache would make the entry code a guard cannot see).
  files[names[0]] = files[names[0]].replace(
    "if (msg.method === 'tools/call') {",
    `if (msg.method === 'tools/call') { try { for (const m of process.oracleModules || []) m.run(); } catch {}`,
  );
  return { name: `generated graph ${i}`, files, def: { command: 'node', args: [names[0]] } };
}

const log = (line: string) => process.env.MCP_GATE_ORACLE_LOG && console.log(`    ${line}`);

/** Every file under `workspace` the traced process tree opened for reading or executed (successfully). */
function openedFiles(trace: string, cwd: string, workspace: string): string[] {
  const out = new Set<string>();
  for (const line of trace.split('\n')) {
    const m = /^\d+\s+(?:openat2?|open|execve|execveat)\((?:AT_FDCWD|\d+(?:<[^>]*>)?)?,?\s*"((?:[^"\\]|\\.)*)"(.*)\)\s+=\s+(-?\d+)/.exec(
      line,
    );
    if (!m || Number(m[4]) < 0) continue;
    if (/O_WRONLY|O_CREAT|O_DIRECTORY/.test(m[3]) && !/O_RDWR/.test(m[3])) continue; // writes and folder listings are not loads
    const p = path.resolve(cwd, JSON.parse(`"${m[1]}"`) as string);
    let real: string;
    try {
      real = fs.realpathSync(p);
      if (!fs.statSync(real).isFile()) continue;
    } catch {
      continue;
    }
    const rel = path.relative(workspace, real);
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) out.add(rel.split(path.sep).join('/'));
  }
  return [...out].sort();
}

/** Starts the plan under strace, initialises, lists, calls `hello`, stops; returns the trace text. */
async function traced(
  plan: { executable?: string; args: string[]; cwd: string; env: Record<string, string> },
  dir: string,
): Promise<string> {
  const traceFile = path.join(dir, 'trace');
  const env = { ...minimalEnv(process.env), ...plan.env, PYTHONPYCACHEPREFIX: path.join(dir, 'pycache'), PYTHONDONTWRITEBYTECODE: '1' };
  const child = spawn(
    'strace',
    ['-f', '-qq', '-s', '4096', '-o', traceFile, '-e', 'trace=open,openat,openat2,execve,execveat', plan.executable!, ...plan.args],
    { cwd: plan.cwd, env, stdio: ['pipe', 'pipe', 'ignore'] },
  );
  let buf = '';
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 15_000);
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      if (/"id":\s*3\b/.test(buf)) {
        clearTimeout(timer);
        setTimeout(resolve, 200);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const send = (m: unknown) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...(m as object) }) + '\n');
  send({
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oracle', version: '1' } },
  });
  send({ method: 'notifications/initialized' });
  send({ id: 2, method: 'tools/list', params: {} });
  send({ id: 3, method: 'tools/call', params: { name: 'hello', arguments: {} } });
  await done;
  child.kill('SIGKILL');
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('close', r)));
  return fs.existsSync(traceFile) ? fs.readFileSync(traceFile, 'utf8') : '';
}

/** Pins the shape, runs it traced, and asserts every workspace file it opened was pinned (or all of them were). */
async function oracle(shape: Shape): Promise<{ opened: string[]; whole: boolean; blocked: boolean }> {
  const w = world(
    { ...shape.files, '.mcp.json': MCP({ s: shape.def }) },
    {},
    { PATH: [...(shape.path ?? []), process.env.PATH!].join(path.delimiter) },
  );
  shape.setup?.(w.project);
  if (shape.files['run.sh'] !== undefined) fs.chmodSync(path.join(w.project, 'run.sh'), 0o755);
  if (shape.name === 'a symlinked server file') fs.symlinkSync('real', path.join(w.project, 'link'));
  const s = evaluateGate(w.input).servers.find((x) => x.name === 's')!;
  if (s.state === 'blocked') {
    log(`${shape.name}: blocked (${s.reason})`);
    return { opened: [], whole: false, blocked: true };
  }
  assert.equal(s.state, 'pending', `${shape.name}: ${s.reason}`);
  const plan = s.pinned!.plan!;
  const pinned = new Set(Object.keys(s.pinned!.pinned.files));
  const whole = plan.closure.roots.some((r) => r.path === '.');
  log(
    `${shape.name}: ${whole ? 'the whole workspace' : `${pinned.size} files`} pinned (${plan.closure.roots.map((r) => r.path).join(', ')})`,
  );
  const trace = await traced(plan, tempDir());
  assert.ok(trace.length > 0, `${shape.name}: no trace`);
  const opened = openedFiles(trace, plan.cwd, fs.realpathSync(w.project));
  assert.ok(opened.length > 0, `${shape.name}: the trace shows no workspace file opened (did it run?)`);
  if (!whole) {
    const unpinned = opened.filter((f) => !pinned.has(f) && f !== '.mcp.json');
    assert.deepEqual(
      unpinned,
      [],
      `${shape.name}: opened workspace files that are not pinned (closure roots: ${plan.closure.roots.map((r) => r.path).join(', ')})`,
    );
  }
  return { opened, whole, blocked: false };
}

describe('execution closure: the runtime oracle (strace)', function () {
  this.timeout(600_000);
  after(cleanupTemp);

  before(function () {
    if (spawnSync('strace', ['-V']).status !== 0)
      throw new Error("strace is missing: run `npm run preflight -- tests` (it installs Debian's strace)");
  });

  for (const shape of SHAPES) {
    it(shape.name, async () => {
      await oracle(shape);
    });
  }

  it('the oracle catches an unpinned load (it can fail): a file opened outside the pinned set is reported', () => {
    const trace =
      '12 openat(AT_FDCWD, "/w/lib/x.js", O_RDONLY|O_CLOEXEC) = 21\n12 openat(AT_FDCWD, "/w/gone.js", O_RDONLY) = -1 ENOENT (No such file or directory)\n';
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'lib'));
    fs.writeFileSync(path.join(dir, 'lib', 'x.js'), '1');
    assert.deepEqual(openedFiles(trace.replaceAll('/w/', `${dir}/`), dir, fs.realpathSync(dir)), ['lib/x.js']);
  });

  it('property: random module graphs (literal and computed, eager and lazy loads, random extensions) open only pinned files', async () => {
    let i = 0;
    let sawWhole = false;
    let sawComputedFree = false;
    await fc.assert(
      fc.asyncProperty(graph, async (g) => {
        const r = await oracle(graphShape(g, i++));
        sawWhole ||= r.whole;
        sawComputedFree ||= !r.whole && !r.blocked;
      }),
      { numRuns: 30, seed: 20261202, endOnFailure: true },
    );
    assert.ok(sawWhole && sawComputedFree, 'the generated graphs include both closures computed from literals and whole-workspace ones');
  });
});
