// The load guard's differential fuzzer (issue 43 item 6), shared by test/unit/guard/fuzz.test.ts (a fixed seed, ~20
// cases) and scripts/fuzz-closure.mjs (`npm run fuzz:closure`, N cases). A seeded PRNG (mulberry32) generates a
// workspace: a tree of Node or Python modules, each loaded by its parent through one of the ways a server loads code
// (require literal / computed / createRequire / JSON / package main, exports, #imports, self-reference, extensionless,
// .cjs/.mjs, static and dynamic import, workers, child processes, module.register hooks; Python import, from-import
// of a package, importlib.import_module of a computed name, runpy.run_path, exec(open(f).read()), sys.path.insert,
// .pth through site.addsitedir, a child [sys.executable, file]), and code from strings: a module reads a data file
// of the workspace (Node: fs.readFileSync, openSync + readSync, and where it may await fs.promises.readFile or a read
// stream; Python: open().read(), pathlib's read_text, bytes decoded, io.open) and turns its text into code (Node:
// indirect and direct eval, new Function, vm.runInThisContext, vm.runInNewContext with a `mark` function in the
// context, vm.Script#runInThisContext, new Worker(text, { eval: true }), import() of a data: URL where it may await;
// Python: exec, eval, exec(compile(…, 'exec')), eval(compile(…, 'eval'))); the data file's name is computed, so the
// "new file" mutation has a file to add. Each module, and each data file's code, when it runs, appends its id to a
// trace file outside the workspace. Per case: the plain run is the oracle; the guarded run must give the same
// trace (no false refusal), also after a README edit (undone before the mutation); then one module or data file
// that runs is changed (or a new file is added that a computed load picks instead): no changed/new id may reach
// the guarded trace (no escape), and the guarded trace must be exactly what ran before the refused load (the plain
// trace up to the changed id, less the static ESM graph that the refused module belongs to, which never starts
// evaluating). The guard's rule for code from strings (src/guard/CONTRACT.md): refused once the process took in a
// file that is not as approved; a process that started a program or worker compares the whole workspace at each
// such compile. So in a Node case with code from strings the main process starts no program or module worker (an
// eval worker still starts one: startedCut() gives where the oracle then expects the refusal, naming the README
// edit or the mutated file); Python's compile of an approved content passes whatever was taken in.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
export const NODE_GUARD = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');
export const PY_GUARD = path.join(ROOT, 'src', 'guard', 'python', 'mcp_gate_guard.py');
export const PY = '/usr/bin/python3';

// ---------------------------------------------------------------------------------------------- the PRNG
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** The seed of case `index` of a run seeded `seed` (each case reproducible on its own). */
export const caseSeed = (seed: number, index: number): number =>
  (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0;

// ---------------------------------------------------------------------------------------------- the model
type Fmt = 'cjs' | 'esm' | 'json' | 'py' | 'pth' | 'hook' | 'j2' | 'str';
export interface Mod {
  id: string;
  file: string; // workspace-relative posix path
  fmt: Fmt;
  edge: string; // how the parent loads it ('entry' for the entry)
  parent: Mod | null;
  children: Mod[];
  esmRoot: boolean; // an ESM module evaluated on its own (entry, spawned, dynamically imported): may await
  inWorker: boolean;
  alt?: string; // a computed load: the file it takes instead when that exists (the "new file" mutation)
  name?: string; // python: module name / node: bare specifier
  read?: string; // code from strings (fmt 'str'): how the parent reads the data file (its sink is the edge)
}

export interface Mutation {
  kind: 'change' | 'new';
  target: string;
  file: string;
  content: string;
}
export interface Case {
  seed: number;
  lang: 'node' | 'python';
  entry: Mod;
  mods: Mod[];
  ws: string; // the workspace (real path)
  trace: string; // outside the workspace
  files: Record<string, string>;
  /** Python: the entry starts a program first (then every compile is checked against the workspace: the walk). */
  started?: boolean;
}

const STATIC_EDGES = new Set(['import-static', 'import-json', 'pkg-exports-import', 'alias-import', 'self-import']);
const J = JSON.stringify;
const rel = (from: string, to: string): string => {
  const r = path.posix.relative(path.posix.dirname(from), to);
  return r.startsWith('.') ? r : './' + r;
};

// ---------------------------------------------------------------------------------------------- generation
interface Gen {
  rng: Rng;
  mods: Mod[];
  n: number;
  max: number;
  lang: 'node' | 'python';
  strCase: boolean; // Node: the main process turns data files into code (and starts no program or module worker)
  skip: ReadonlySet<string>; // edges not generated (runCase's `skip`)
  strings: boolean; // runCase's `strings`: code from strings more often (Node: always in the main process)
}

function mk(g: Gen, parent: Mod | null, edge: string, fmt: Fmt, file: (id: string) => string, extra: Partial<Mod> = {}): Mod {
  const id = `m${g.n++}`;
  const m: Mod = { id, file: file(id), fmt, edge, parent, children: [], esmRoot: false, inWorker: parent?.inWorker ?? false, ...extra };
  g.mods.push(m);
  if (parent) parent.children.push(m);
  return m;
}

/** Node: the module runs in the server's own process and main thread (not in a spawned program or a module worker). */
export function inMainProcess(m: Mod): boolean {
  for (let x: Mod | null = m; x; x = x.parent) if (x.edge === 'spawn' || x.edge === 'worker') return false;
  return true;
}

// Code from strings: how a module reads its data file (the asynchronous ones only where the module can await) and
// what turns the text into code. A process that started a program or a worker compares the whole workspace at each
// compile (src/guard/CONTRACT.md), so in a case that turns text into code the main process starts neither (only
// str-worker starts one, and the oracle expects that rule after it).
const NODE_READS_SYNC = ['readFileSync', 'openSync'];
const NODE_READS_ASYNC = ['promises', 'stream'];
const NODE_SINKS = ['eval-indirect', 'eval', 'function', 'vm-this', 'vm-new', 'vm-script', 'worker', 'data-url'];
const PY_READS = ['open', 'pathlib', 'bytes', 'io'];
const PY_SINKS = ['exec', 'eval', 'exec-compile', 'eval-compile'];

function nodeEdges(m: Mod, g: Gen): string[] {
  const inPkg = m.file.startsWith('node_modules/');
  const main = inMainProcess(m);
  const str = g.strCase && main;
  const sync = ['require', 'require-computed', 'createRequire', 'require-json', 'pkg-main', 'pkg-exports-require'];
  if (!str) sync.push('spawn');
  if (str) sync.push('str', 'str', 'str', ...(g.strings ? ['str', 'str', 'str', 'str'] : []));
  if (!inPkg) sync.push('alias-require', 'self-require');
  if (!m.inWorker) sync.push(...(str ? [] : ['worker']), 'register');
  if (m.fmt === 'cjs') return sync;
  const stat = ['import-static', 'import-json', 'pkg-exports-import'];
  if (!inPkg) stat.push('alias-import', 'self-import');
  return [...stat, ...stat, ...sync, ...(m.esmRoot ? ['import-dynamic', 'import-dynamic'] : [])];
}

function nodeChild(g: Gen, m: Mod, edge: string): Mod {
  const r = g.rng;
  switch (edge) {
    case 'require':
      return mk(g, m, edge, 'cjs', (id) => r.pick([`lib/${id}.js`, `lib/${id}.cjs`, `bin/${id}`]));
    case 'require-computed':
      return mk(g, m, edge, 'cjs', (id) => `lib/c_${id}.js`, { alt: undefined });
    case 'createRequire':
      return mk(g, m, edge, 'cjs', (id) => `lib/cr_${id}.cjs`);
    case 'require-json':
    case 'import-json':
      return mk(g, m, edge, 'json', (id) => `data/${id}.json`);
    case 'pkg-main':
      return mk(g, m, edge, 'cjs', (id) => `node_modules/pk_${id}/lib/main.js`, { name: undefined });
    case 'pkg-exports-require':
      return mk(g, m, edge, 'cjs', (id) => `node_modules/px_${id}/main.cjs`);
    case 'pkg-exports-import':
      return mk(g, m, edge, 'esm', (id) => `node_modules/pi_${id}/index.mjs`);
    case 'alias-require':
      return mk(g, m, edge, 'cjs', (id) => `lib/al_${id}.js`);
    case 'alias-import':
      return mk(g, m, edge, 'esm', (id) => `lib/ai_${id}.mjs`);
    case 'self-require':
      return mk(g, m, edge, 'cjs', (id) => `lib/sf_${id}.js`);
    case 'self-import':
      return mk(g, m, edge, 'esm', (id) => `lib/si_${id}.mjs`);
    case 'import-static':
      return mk(g, m, edge, 'esm', (id) => `lib/${id}.mjs`);
    case 'spawn': {
      const esm = r.chance(0.4);
      return mk(g, m, edge, esm ? 'esm' : 'cjs', (id) => `jobs/${id}.${esm ? 'mjs' : 'js'}`, { esmRoot: esm, inWorker: false });
    }
    case 'worker':
      return mk(g, m, edge, 'cjs', (id) => `workers/${id}.js`, { inWorker: true });
    case 'register':
      return mk(g, m, edge, 'hook', (id) => `hooks/${id}.mjs`);
    case 'import-dynamic': {
      const ext = r.pick(['mjs', 'mjs', 'cjs', 'js']);
      return mk(g, m, edge, ext === 'mjs' ? 'esm' : 'cjs', (id) => `lib/d_${id}.${ext}`, { esmRoot: ext === 'mjs' });
    }
    case 'str': {
      // the asynchronous reads and the data: import need a module that may await
      // (weighted up there: few modules may await)
      const sinks = [...NODE_SINKS, ...(m.esmRoot ? ['data-url', 'data-url'] : [])].filter(
        (s) => (m.esmRoot || s !== 'data-url') && !g.skip.has(`str-${s}`),
      );
      const sink = r.pick(sinks.length ? sinks : ['eval-indirect']);
      const read = r.pick(m.esmRoot ? [...NODE_READS_SYNC, ...NODE_READS_ASYNC, ...NODE_READS_ASYNC] : NODE_READS_SYNC);
      return mk(g, m, `str-${sink}`, 'str', (id) => r.pick([`data/s_${id}.txt`, `data/s_${id}.js`, `data/s_${id}`]), { read });
    }
  }
  throw new Error(`unknown edge ${edge}`);
}

function pyChild(g: Gen, m: Mod, edge: string): Mod {
  const r = g.rng;
  switch (edge) {
    case 'import':
      return mk(g, m, edge, 'py', (id) => `${id}.py`);
    case 'from-import':
      return mk(g, m, edge, 'py', (id) => `p_${id}/__init__.py`);
    case 'import_module':
      return mk(g, m, edge, 'py', (id) => `im_${id}.py`);
    case 'run_path':
      return mk(g, m, edge, 'py', (id) => r.pick([`scripts/rp_${id}.py`, `scripts/rp_${id}`]));
    case 'exec':
      return mk(g, m, edge, 'py', (id) => r.pick([`snippets/ex_${id}.py`, `snippets/ex_${id}.txt`, `snippets/ex_${id}`]));
    case 'sys-path':
      return mk(g, m, edge, 'py', (id) => `vendor_${id}/v_${id}.py`);
    case 'pth':
      return mk(g, m, edge, 'pth', (id) => `site_${id}/fz_${id}.pth`);
    case 'subprocess':
      return mk(g, m, edge, 'py', (id) => `jobs/${id}.py`);
    case 'jinja':
      return mk(g, m, edge, 'j2', (id) => `templates/t_${id}.j2`);
    case 'str': {
      const sinks = PY_SINKS.filter((s) => !g.skip.has(`str-${s}`));
      const sink = r.pick(sinks.length ? sinks : ['exec']);
      const read = r.pick(PY_READS);
      return mk(g, m, `str-${sink}`, 'str', (id) => r.pick([`data/s_${id}.txt`, `data/s_${id}.py`, `data/s_${id}`]), { read });
    }
  }
  throw new Error(`unknown edge ${edge}`);
}

const PY_EDGES = ['import', 'from-import', 'import_module', 'run_path', 'exec', 'sys-path', 'pth', 'subprocess', 'jinja', 'str', 'str'];

function grow(g: Gen, m: Mod, depth: number): void {
  if (m.fmt === 'json' || m.fmt === 'pth' || m.fmt === 'hook' || m.fmt === 'j2' || m.fmt === 'str') return;
  const n = depth >= 3 ? 0 : g.rng.int(depth === 0 ? 4 : 3) + (depth === 0 ? 1 : 0);
  const forced = g.strings && depth === 0 ? g.rng.int(n) : -1; // `strings`: one of the entry's loads is one
  for (let i = 0; i < n && g.n < g.max; i++) {
    const py = g.strings ? [...PY_EDGES, 'str', 'str', 'str'] : PY_EDGES;
    const edges = (g.lang === 'node' ? nodeEdges(m, g) : py).filter((e) => e === 'str' || !g.skip.has(e));
    const edge = i === forced ? 'str' : g.rng.pick(edges);
    const c = g.lang === 'node' ? nodeChild(g, m, edge) : pyChild(g, m, edge);
    if (['require-computed', 'import-dynamic', 'str'].includes(edge)) c.alt = c.file.replace(/(\.[a-z]+)?$/, (e) => `_alt${e}`);
    if (['import_module', 'run_path', 'exec', 'subprocess'].includes(edge)) c.alt = c.file.replace(/(\.[a-z]+)?$/, (e) => `_alt${e}`);
    grow(g, c, depth + 1);
    if (edge === 'from-import') {
      // `from p_X import s_Y`: the package's __init__ runs (with its own loads), then the submodule
      const sub = mk(g, c, 'implied-sub', 'py', (id) => `${path.posix.dirname(c.file)}/s_${id}.py`);
      grow(g, sub, depth + 2);
    }
  }
}

// ---------------------------------------------------------------------------------------------- emission
const isStatic = (m: Mod): boolean => STATIC_EDGES.has(m.edge);

function nodeLoad(c: Mod, parent: Mod, ws: string, trace: string): { imports: string[]; body: string } {
  const abs = (f: string): string => path.join(ws, f);
  const spec = rel(parent.file, c.file);
  switch (c.edge) {
    case 'require':
      return { imports: [], body: `require(${J(spec)});` };
    case 'require-computed':
      return {
        imports: [],
        body: `{ const __c = [${J(abs(c.alt!))}, [${J(ws)}, ${J(path.posix.dirname(c.file))}, ${J(path.posix.basename(c.file))}].join('/')].find((p) => require('node:fs').existsSync(p)); require(__c); }`,
      };
    case 'createRequire':
      return { imports: [], body: `require('node:module').createRequire(${J(abs(parent.file))})(${J(spec)});` };
    case 'require-json':
      return { imports: [], body: `require('node:fs').appendFileSync(${J(trace)}, require(${J(spec)}).id + '\\n');` };
    case 'pkg-main':
      return { imports: [], body: `require(${J(`pk_${c.id}`)});` };
    case 'pkg-exports-require':
      return { imports: [], body: `require(${J(`px_${c.id}`)});` };
    case 'alias-require':
      return { imports: [], body: `require(${J(`#al_${c.id}`)});` };
    case 'self-require':
      return { imports: [], body: `require(${J(`fuzz-self/sf_${c.id}`)});` };
    case 'spawn':
      return {
        imports: [],
        body: `{ const __r = require('node:child_process').spawnSync(process.execPath, [${J(abs(c.file))}], { stdio: 'inherit' }); if (__r.status !== 0) throw new Error('child ${c.id} failed: ' + __r.status + ' ' + __r.signal); }`,
      };
    case 'worker':
      return {
        imports: [],
        body: `{ const __sab = new SharedArrayBuffer(4), __a = new Int32Array(__sab); const __w = new (require('node:worker_threads').Worker)(${J(abs(c.file))}, { workerData: __sab }); __w.on('error', () => {}); Atomics.wait(__a, 0, 0, 20000); if (Atomics.load(__a, 0) !== 1) throw new Error('worker ${c.id} failed'); }`,
      };
    case 'register':
      return { imports: [], body: `require('node:module').register(${J(pathToFileURL(abs(c.file)).href)});` };
    case 'import-static':
      return { imports: [`import ${J(spec)};`], body: '' };
    case 'import-json':
      return {
        imports: [`import __j_${c.id} from ${J(spec)} with { type: 'json' };`],
        body: `require('node:fs').appendFileSync(${J(trace)}, __j_${c.id}.id + '\\n');`,
      };
    case 'pkg-exports-import':
      return { imports: [`import ${J(`pi_${c.id}`)};`], body: '' };
    case 'alias-import':
      return { imports: [`import ${J(`#ai_${c.id}`)};`], body: '' };
    case 'self-import':
      return { imports: [`import ${J(`fuzz-self/si_${c.id}`)};`], body: '' };
    case 'import-dynamic':
      return {
        imports: [],
        body: `{ const __c = [${J(abs(c.alt!))}, ${J(abs(c.file))}].find((p) => require('node:fs').existsSync(p)); await import(__url.pathToFileURL(__c).href); }`,
      };
  }
  if (c.fmt === 'str') return { imports: [], body: `{\n${nodeStr(c, abs, trace)}\n}` };
  throw new Error(`unknown edge ${c.edge}`);
}

/** Node: read a data file of the workspace (`c.read`) into __t, then turn it into code (`c.edge`). */
function nodeStr(c: Mod, abs: (f: string) => string, trace: string): string {
  const fsr = `require('node:fs')`;
  const file = `const __p = [${J(abs(c.alt!))}, ${J(abs(c.file))}].find((p) => ${fsr}.existsSync(p));`;
  const read: Record<string, string> = {
    readFileSync: `const __t = ${fsr}.readFileSync(__p, 'utf8');`,
    openSync: `const __fd = ${fsr}.openSync(__p, 'r'), __b = Buffer.alloc(${fsr}.fstatSync(__fd).size); ${fsr}.readSync(__fd, __b, 0, __b.length, 0); ${fsr}.closeSync(__fd); const __t = __b.toString('utf8');`,
    promises: `const __t = await ${fsr}.promises.readFile(__p, 'utf8');`,
    stream: `const __t = await new Promise((res, rej) => { let s = ''; ${fsr}.createReadStream(__p, 'utf8').on('data', (d) => (s += d)).on('end', () => res(s)).on('error', rej); });`,
  };
  const mark = `(s) => ${fsr}.appendFileSync(${J(trace)}, s)`;
  const done = `{ const a = new Int32Array(require('node:worker_threads').workerData); Atomics.store(a, 0, 1); Atomics.notify(a, 0); }`;
  const run: Record<string, string> = {
    'str-eval-indirect': `(0, eval)(__t);`,
    'str-eval': `eval(__t);`,
    'str-function': `new Function(__t)();`,
    'str-vm-this': `require('node:vm').runInThisContext(__t, { filename: __p });`,
    'str-vm-new': `require('node:vm').runInNewContext(__t, { mark: ${mark} });`,
    'str-vm-script': `new (require('node:vm').Script)(__t, { filename: __p }).runInThisContext();`,
    'str-worker': `const __sab = new SharedArrayBuffer(4), __a = new Int32Array(__sab); const __w = new (require('node:worker_threads').Worker)(__t + ${J('\n;' + done)}, { eval: true, workerData: __sab }); __w.on('error', () => {}); Atomics.wait(__a, 0, 0, 15000); if (Atomics.load(__a, 0) !== 1) throw new Error('eval worker ${c.id} failed');`,
    'str-data-url': `await import('data:text/javascript,' + encodeURIComponent(__t));`,
  };
  return [file, read[c.read!], run[c.edge]].join('\n');
}

function emitNode(m: Mod, id: string, ws: string, trace: string, children = m.children): string {
  const me = `require('node:fs').appendFileSync(${J(trace)}, ${J(id + '\n')});`;
  if (m.fmt === 'json') return JSON.stringify({ id }) + '\n';
  // a data file turned into code: in a vm context of its own it is handed `mark`, elsewhere it has `process`
  if (m.fmt === 'str')
    return `(typeof mark === 'function' ? mark : (s) => process.getBuiltinModule('node:fs').appendFileSync(${J(trace)}, s))(${J(id + '\n')});\n`;
  if (m.fmt === 'hook') {
    return `import { appendFileSync } from 'node:fs';\nappendFileSync(${J(trace)}, ${J(id + '\n')});\nexport async function resolve(s, c, next) { return next(s, c); }\n`;
  }
  const loads = children.map((c) => nodeLoad(c, m, ws, trace));
  const body = [me, ...loads.map((l) => l.body).filter(Boolean)].join('\n');
  if (m.fmt === 'esm') {
    const head = [
      `import * as __url from 'node:url';`,
      `import { createRequire as __cr } from 'node:module';`,
      ...loads.flatMap((l) => l.imports),
    ];
    return `// ${m.id} (${m.edge})\n${head.join('\n')}\nconst require = __cr(import.meta.url);\n${body}\nexport const id = ${J(id)};\n`;
  }
  if (m.edge === 'worker') {
    return `// ${m.id} (worker)\nconst __a = new Int32Array(require('node:worker_threads').workerData);\ntry {\n${body}\n} catch (e) { Atomics.store(__a, 0, 2); Atomics.notify(__a, 0); throw e; }\nAtomics.store(__a, 0, 1); Atomics.notify(__a, 0);\n`;
  }
  return `// ${m.id} (${m.edge})\n'use strict';\n${body}\nmodule.exports = ${J(id)};\n`;
}

function pyLoad(c: Mod, parent: Mod, ws: string): string {
  const absExpr = (f: string): string =>
    `os.path.join(R, ${f
      .split('/')
      .map((s) => J(s))
      .join(', ')})`;
  const pick = (): string => `(${absExpr(c.alt!)} if os.path.exists(${absExpr(c.alt!)}) else ${absExpr(c.file)})`;
  const modName = (f: string): string => path.posix.basename(f).replace(/\.py$/, '');
  switch (c.edge) {
    case 'import':
      return `import ${modName(c.file)}`;
    case 'from-import': {
      const sub = c.children[c.children.length - 1];
      return `from ${path.posix.dirname(c.file)} import ${modName(sub.file)}`;
    }
    case 'implied-sub':
      return '';
    case 'import_module':
      return `importlib.import_module(${J(modName(c.alt!))} if os.path.exists(${absExpr(c.alt!)}) else ''.join([${J(modName(c.file).slice(0, 3))}, ${J(modName(c.file).slice(3))}]))`;
    case 'run_path':
      return `runpy.run_path(${pick()})`;
    case 'exec':
      return `exec(open(${pick()}).read())`;
    case 'sys-path':
      return `sys.path.insert(0, ${absExpr(path.posix.dirname(c.file))})\nimport ${modName(c.file)}`;
    case 'pth':
      return `site.addsitedir(${absExpr(path.posix.dirname(c.file))})`;
    case 'subprocess':
      return `subprocess.run([sys.executable, ${pick()}], check=True)`;
    case 'jinja':
      // a template is code jinja2 compiles: after a program start, only an approved template's compile passes
      return `_jinja(${J(c.file)})`;
  }
  if (c.fmt === 'str') {
    // a data file read (c.read) and turned into code (c.edge): one expression, so exec and eval both take it
    const read: Record<string, string> = {
      open: `open(${pick()}).read()`,
      pathlib: `pathlib.Path(${pick()}).read_text()`,
      bytes: `open(${pick()}, 'rb').read().decode('utf-8')`,
      io: `io.open(${pick()}, encoding='utf-8').read()`,
    };
    const t = read[c.read!];
    const run: Record<string, string> = {
      'str-exec': `exec(${t})`,
      'str-eval': `eval(${t})`,
      'str-exec-compile': `exec(compile(${t}, ${J(c.file)}, 'exec'))`,
      'str-eval-compile': `eval(compile(${t}, '<data>', 'eval'))`,
    };
    return run[c.edge];
  }
  throw new Error(`unknown edge ${c.edge}`);
}

function emitPy(m: Mod, id: string, ws: string, trace: string, children = m.children, started = false): string {
  if (m.fmt === 'pth') return `import os; _f = open(${J(trace)}, 'a'); _f.write(${J(id + '\n')}); _f.close()\n`;
  if (m.fmt === 'j2') return `{{ mark(${J(id)}) }}\n`;
  if (m.fmt === 'str') return `open(${J(trace)}, 'a').write(${J(id + '\n')})\n`;
  const loads = children.map((c) => pyLoad(c, m, ws)).filter(Boolean);
  return [
    `# ${m.id} (${m.edge})`,
    'import os, sys, importlib, runpy, site, subprocess, dataclasses, pathlib, io',
    `R = ${J(ws)}`,
    'if R not in sys.path: sys.path.insert(0, R)',
    ...(started ? ["subprocess.run(['true'], check=True)"] : []),
    `with open(${J(trace)}, 'a') as _f: _f.write(${J(id + '\n')})`,
    // generated code of the standard library in every module (a dataclass made as the module runs)
    '@dataclasses.dataclass',
    'class _Row:',
    '    a: int = 1',
    '_Row()',
    ...(children.some((c) => c.edge === 'jinja')
      ? [
          'def _jinja(f):',
          '    import jinja2',
          '    def mark(i):',
          `        with open(${J(trace)}, 'a') as t: t.write(i + '\\n')`,
          "        return ''",
          '    jinja2.Environment(loader=jinja2.FileSystemLoader(R)).get_template(f).render(mark=mark)',
        ]
      : []),
    ...loads,
    '',
  ].join('\n');
}

function emit(c: Case, m: Mod, id: string, children?: Mod[]): string {
  return c.lang === 'node'
    ? emitNode(m, id, c.ws, c.trace, children)
    : emitPy(m, id, c.ws, c.trace, children, !!c.started && m.edge === 'entry');
}

/** Generates case `seed` into a fresh workspace under `base` (the workspace and the trace are real paths). */
export function generate(seed: number, base: string, lang?: 'node' | 'python', skip: readonly string[] = [], strings = false): Case {
  const rng = new Rng(seed);
  const coin = rng.chance(0.5); // drawn even when the language is given: a case seed reproduces either way
  const l = lang ?? (coin ? 'node' : 'python');
  const max = 4 + rng.int(10);
  const strCase = rng.chance(0.5); // drawn for Python too (a case seed reproduces either way)
  const g: Gen = { rng, mods: [], n: 0, max, lang: l, strCase: l === 'node' && (strCase || strings), skip: new Set(skip), strings };
  const ws = path.join(base, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  const trace = path.join(base, 'trace.txt');
  let entry: Mod;
  if (l === 'node') {
    const esm = rng.chance(0.5);
    entry = mk(g, null, 'entry', esm ? 'esm' : 'cjs', () => (esm ? 'server.mjs' : 'server.js'), { esmRoot: esm });
  } else entry = mk(g, null, 'entry', 'py', () => 'server.py');
  grow(g, entry, 0);
  const c: Case = { seed, lang: l, entry, mods: g.mods, ws, trace, files: { 'README.md': '# a generated MCP server\n' } };
  if (l === 'python') c.started = rng.chance(0.5);
  for (const m of g.mods) c.files[m.file] = emit(c, m, m.id);
  if (l === 'node') {
    const pkg: { name: string; imports: Record<string, string>; exports: Record<string, string> } = {
      name: 'fuzz-self',
      imports: {},
      exports: {},
    };
    for (const m of g.mods) {
      const dir = path.posix.dirname(m.file);
      if (m.edge === 'pkg-main') c.files[`node_modules/pk_${m.id}/package.json`] = J({ name: `pk_${m.id}`, main: 'lib/main.js' }) + '\n';
      if (m.edge === 'pkg-exports-require')
        c.files[`${dir}/package.json`] = J({ name: `px_${m.id}`, exports: { '.': { require: './main.cjs' } } }) + '\n';
      if (m.edge === 'pkg-exports-import')
        c.files[`${dir}/package.json`] = J({ name: `pi_${m.id}`, exports: { '.': { import: './index.mjs' } } }) + '\n';
      if (m.edge === 'alias-require') pkg.imports[`#al_${m.id}`] = './' + m.file;
      if (m.edge === 'alias-import') pkg.imports[`#ai_${m.id}`] = './' + m.file;
      if (m.edge === 'self-require') pkg.exports[`./sf_${m.id}`] = './' + m.file;
      if (m.edge === 'self-import') pkg.exports[`./si_${m.id}`] = './' + m.file;
    }
    c.files['package.json'] = J(pkg, null, 2) + '\n';
  } else {
    for (const m of g.mods)
      if (m.edge === 'sys-path' || m.edge === 'pth') c.files[`${path.posix.dirname(m.file)}/README.txt`] = 'not code\n';
  }
  for (const [f, text] of Object.entries(c.files)) {
    fs.mkdirSync(path.dirname(path.join(ws, f)), { recursive: true });
    fs.writeFileSync(path.join(ws, f), text);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------- running
export interface Harness {
  dir: string;
  pyWrapper: string;
}

/** A python wrapper like the sandbox's (src/host/sandbox/load-guard.ts): children started by sys.executable stay guarded. */
export function harness(dir: string): Harness {
  const prefix = path.join(dir, 'py');
  fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true });
  if (!fs.existsSync(path.join(prefix, 'lib'))) fs.symlinkSync('/usr/lib', path.join(prefix, 'lib'));
  const pyWrapper = path.join(prefix, 'bin', 'python3');
  fs.writeFileSync(
    pyWrapper,
    `#!/bin/bash\nPYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE\nexec -a "$0" ${PY} -S ${J(PY_GUARD)} "$@"\n`,
    { mode: 0o755 },
  );
  return { dir, pyWrapper };
}

export interface Run {
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  trace: string[];
  report: string[];
}

function approve(c: Case, manifest: string, scratch: string, report: string): void {
  const files: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile())
        files[path.relative(c.ws, p).split(path.sep).join('/')] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(c.ws);
  fs.writeFileSync(manifest, JSON.stringify({ version: 1, root: c.ws, files, scratch: [scratch], report, server: 'fuzz' }));
}

function run(c: Case, h: Harness, guarded: boolean, out: string, noGuard = false): Run {
  if (noGuard) guarded = false; // the fuzzer's own control: without the guard every mutation must show as an escape
  const manifest = path.join(out, 'manifest.json');
  const report = path.join(out, 'report.jsonl');
  fs.rmSync(c.trace, { force: true });
  fs.rmSync(report, { force: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: out,
    LANG: 'C.UTF-8',
    PYTHONDONTWRITEBYTECODE: '1',
  };
  if (guarded) env.MCP_GATE_GUARD = manifest;
  const entry = path.join(c.ws, c.entry.file);
  let cmd: string, args: string[];
  if (c.lang === 'node') {
    cmd = process.execPath;
    args = guarded ? ['--expose-internals', '--require', NODE_GUARD, entry] : [entry];
  } else {
    cmd = guarded ? h.pyWrapper : PY;
    args = [entry];
  }
  const r = spawnSync(cmd, args, { cwd: c.ws, env, encoding: 'utf8', timeout: 60_000 });
  const read = (f: string): string[] => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter(Boolean) : []);
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout ?? '',
    stderr: (r.stderr ?? '') + (r.error ? String(r.error) : ''),
    trace: read(c.trace),
    report: read(report),
  };
}

export interface Outcome {
  seed: number;
  lang: 'node' | 'python';
  modules: number;
  edges: string[];
  mutation?: Mutation;
  vacuous: boolean; // the mutated module did not run even without the guard
  escapes: string[]; // a changed/new module's id in the guarded trace
  falseRefusals: string[]; // the guard refused or changed what runs where nothing changed
  wrongPrefix: string[]; // unchanged modules loaded before the refused one did not run (or others did)
  generatorErrors: string[]; // the plain run failed: the generator's fault, not the guard's
  plain: string[]; // the oracle trace of the approved workspace
  refusedTrace: string[]; // the guarded trace after the mutation
  strings: string[]; // code from strings generated: `<sink edge> <read>` per data file
  stringsFocus: boolean; // generated with runCase's `strings` (reproduce with --strings)
  startedRule: number; // runs where a compile from a string came after a worker start (the whole workspace compared)
  dir: string;
}

const lines = (r: Run): string =>
  `exit ${r.status}${r.signal ? ' ' + r.signal : ''}; trace [${r.trace.join(' ')}]; report ${r.report.length} line(s)\n--- stderr ---\n${r.stderr.trim().slice(-3000)}`;

function subtree(m: Mod): Set<string> {
  const s = new Set<string>();
  const walk = (x: Mod): void => {
    s.add(x.id);
    x.children.forEach(walk);
  };
  walk(m);
  return s;
}

/**
 * Node: the index in `trace` of the first data file turned into code in a main process that had started a worker or
 * a program before that compile (src/guard/CONTRACT.md: the whole workspace is compared then, so any file not as
 * approved — a README edit too — is refused there), or -1. The trace is in the order things ran; a started
 * program's or worker's id is traced after its start, a data file's id after its compile.
 */
export function startedCut(c: Case, trace: string[]): number {
  if (c.lang !== 'node') return -1;
  const byId = new Map(c.mods.map((m) => [m.id, m]));
  let started = false;
  for (let i = 0; i < trace.length; i++) {
    const m = byId.get(trace[i].replace(/!$/, '').replace(/~new$/, ''));
    if (!m || !m.parent || !inMainProcess(m.parent)) continue;
    if (m.fmt === 'str' && started) return i;
    if (m.edge === 'str-worker' || m.edge === 'spawn' || m.edge === 'worker') started = true;
  }
  return -1;
}

/** The guard's refusal naming `file` (a load: "refused to load F (rel)"; text turned into code: "…, and F (rel)"). */
const refusedNaming = (stderr: string, file: string): boolean =>
  stderr.includes(`mcp-gate-guard: refused to load ${file} (`) ||
  stderr.split('\n').some((l) => l.startsWith('mcp-gate-guard: refused ') && l.includes(`, and ${file} (`));

/** Runs one case (generate, approve, plain vs guarded, README edit, one mutation). Keeps its folder on a failure. */
export function runCase(
  seed: number,
  h: Harness,
  opts: { lang?: 'node' | 'python'; keep?: boolean; noGuard?: boolean; skip?: readonly string[]; strings?: boolean } = {},
): { outcome: Outcome; c: Case } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(h.dir, `case-${seed}-`)));
  const out = path.join(base, 'out');
  const scratch = path.join(base, 'scratch');
  fs.mkdirSync(out);
  fs.mkdirSync(scratch);
  const c = generate(seed, base, opts.lang, opts.skip, opts.strings);
  const o: Outcome = {
    seed,
    lang: c.lang,
    modules: c.mods.length,
    edges: [...new Set(c.mods.map((m) => m.edge))],
    vacuous: false,
    escapes: [],
    falseRefusals: [],
    wrongPrefix: [],
    generatorErrors: [],
    plain: [],
    refusedTrace: [],
    strings: c.mods.filter((m) => m.fmt === 'str').map((m) => `${m.edge} ${m.read}`),
    startedRule: 0,
    stringsFocus: !!opts.strings,
    dir: base,
  };
  approve(c, path.join(out, 'manifest.json'), scratch, path.join(out, 'report.jsonl'));

  const p0 = run(c, h, false, out);
  o.plain = p0.trace;
  if (p0.status !== 0) o.generatorErrors.push(`plain run failed: ${lines(p0)}`);
  const g0 = run(c, h, true, out, opts.noGuard);
  const same = (r: Run, what: string): void => {
    if (r.status !== 0 || r.trace.join(' ') !== p0.trace.join(' ') || /mcp-gate-guard/.test(r.stderr) || r.report.length) {
      o.falseRefusals.push(`${what}: expected exit 0 and trace [${p0.trace.join(' ')}], got ${lines(r)}\n${r.report.join('\n')}`);
    }
  };
  if (!o.generatorErrors.length) {
    same(g0, 'approved workspace under the guard');
    const readme = path.join(c.ws, 'README.md');
    fs.writeFileSync(readme, '# a generated MCP server, edited after approval\n');
    const gr = run(c, h, true, out, opts.noGuard);
    const cut = opts.noGuard ? -1 : startedCut(c, p0.trace);
    if (cut < 0) same(gr, 'README.md edited (not code)');
    else {
      // a compile from a string after a worker start compares the whole workspace: the README edit is named there
      o.startedRule++;
      const want = p0.trace.slice(0, cut);
      if (gr.status === 0 || gr.trace.join(' ') !== want.join(' ') || !refusedNaming(gr.stderr, readme))
        o.wrongPrefix.push(
          `README.md edited, ${p0.trace[cut]} turned into code after a worker start (the whole workspace compared): expected a refusal naming ${readme} and trace [${want.join(' ')}], got ${lines(gr)}`,
        );
    }
    fs.writeFileSync(readme, c.files['README.md']); // the mutation runs below see only the mutated file changed
  }

  if (!o.generatorErrors.length) {
    const rng = new Rng(seed ^ 0x5bd1e995);
    const ran = new Set(p0.trace);
    const byId = new Map(c.mods.map((m) => [m.id, m]));
    let alts = c.mods.filter((m) => m.alt && ran.has(m.id) && (!m.parent || ran.has(m.parent.id)));
    let changeable = c.mods.filter((m) => ran.has(m.id));
    if (opts.strings) {
      // the mutation hits a data file turned into code, when one ran
      const s = (xs: Mod[]): Mod[] => (xs.some((m) => m.fmt === 'str') ? xs.filter((m) => m.fmt === 'str') : xs);
      [alts, changeable] = [s(alts), s(changeable)];
    }
    let mutated: Mod;
    let mark: Mod; // the module whose load the guard must refuse (its static-graph root stops)
    if (alts.length && rng.chance(0.35)) {
      const target = rng.pick(alts);
      const alt: Mod = { ...target, id: `${target.id}~new`, file: target.alt!, children: [], alt: undefined };
      const content = emit(c, alt, alt.id + '!', []);
      o.mutation = { kind: 'new', target: target.id, file: alt.file, content };
      mutated = alt;
      mark = alt;
    } else {
      const target = changeable.length ? rng.pick(changeable) : c.entry;
      const content = emit(c, target, target.id + '!');
      o.mutation = { kind: 'change', target: target.id, file: target.file, content };
      mutated = target;
      mark = target;
      while (isStatic(mark) && mark.parent) mark = mark.parent;
    }
    fs.mkdirSync(path.dirname(path.join(c.ws, o.mutation.file)), { recursive: true });
    fs.writeFileSync(path.join(c.ws, o.mutation.file), o.mutation.content);
    const p1 = run(c, h, false, out);
    const g1 = run(c, h, true, out, opts.noGuard);
    o.refusedTrace = g1.trace;
    const first = p1.trace.findIndex((t) => t.endsWith('!'));
    if (first < 0) o.vacuous = true;
    else {
      const excluded = byId.get(mark.id) === mark ? subtree(mark) : new Set([mutated.id]);
      // a compile from a string after a worker start, before the mutated code: refused there (the whole workspace)
      const cut = opts.noGuard ? -1 : startedCut(c, p1.trace);
      if (cut >= 0 && cut < first) o.startedRule++;
      const expected = p1.trace.slice(0, cut >= 0 && cut < first ? cut : first).filter((t) => !excluded.has(t));
      const esc = g1.trace.filter((t) => t.endsWith('!'));
      if (esc.length)
        o.escapes.push(
          `${o.mutation.kind} ${o.mutation.file} (${mutated.id}, loaded by ${mutated.edge}): ran under the guard: ${esc.join(' ')}; ${lines(g1)}`,
        );
      const file = fs.realpathSync(path.join(c.ws, o.mutation.file));
      if (g1.status === 0 || !refusedNaming(g1.stderr, file)) {
        o.escapes.push(
          `${o.mutation.kind} ${o.mutation.file} (${mutated.id}, ${mutated.edge}): expected a refusal naming ${file}; ${lines(g1)}`,
        );
      }
      if (g1.trace.join(' ') !== expected.join(' ')) {
        o.wrongPrefix.push(
          `${o.mutation.kind} ${o.mutation.file} (${mutated.id}, ${mutated.edge}): expected guarded trace [${expected.join(' ')}] (plain: [${p1.trace.join(' ')}]), got ${lines(g1)}`,
        );
      }
    }
    if (p1.status === 0 && first < 0) o.vacuous = true;
  }
  const failed = o.escapes.length + o.falseRefusals.length + o.wrongPrefix.length + o.generatorErrors.length > 0;
  if (!failed && !opts.keep) fs.rmSync(base, { recursive: true, force: true });
  return { outcome: o, c };
}

/** A repro of a failed case: the seed, the tree, the workspace's files. */
export function repro(o: Outcome, c: Case): string {
  const tree: string[] = [];
  const walk = (m: Mod, d: number): void => {
    tree.push(`${'  '.repeat(d)}${m.id} ${m.file} [${m.edge}${m.alt ? `, alt ${m.alt}` : ''}]`);
    m.children.forEach((x) => walk(x, d + 1));
  };
  walk(c.entry, 0);
  const files = Object.entries(c.files)
    .map(([f, t]) => `----- ${f}\n${t}`)
    .join('');
  return [
    `case seed ${o.seed} (${o.lang}, ${o.modules} modules) — kept in ${o.dir}`,
    `reproduce: npx tsc -p tsconfig.test.json && node scripts/fuzz-closure.mjs --case-seed ${o.seed} --lang ${o.lang}${o.stringsFocus ? ' --strings' : ''}`,
    'modules:',
    ...tree,
    o.mutation ? `mutation: ${o.mutation.kind} ${o.mutation.file} (of ${o.mutation.target})\n${o.mutation.content}` : 'mutation: none',
    ...o.generatorErrors.map((e) => `GENERATOR: ${e}`),
    ...o.falseRefusals.map((e) => `FALSE REFUSAL: ${e}`),
    ...o.escapes.map((e) => `ESCAPE: ${e}`),
    ...o.wrongPrefix.map((e) => `WRONG PREFIX: ${e}`),
    'workspace files (as approved):',
    files,
  ].join('\n');
}

export const failed = (o: Outcome): boolean =>
  o.escapes.length + o.falseRefusals.length + o.wrongPrefix.length + o.generatorErrors.length > 0;

export function tempHarness(): Harness {
  return harness(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-fuzz-'))));
}
