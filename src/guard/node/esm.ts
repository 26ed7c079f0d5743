// ES modules for the load guard (src/guard/CONTRACT.md, "ES modules"): the resolve and load hooks that check each
// file: URL's source as the loader got it, registered in order of preference — module.registerHooks in the thread
// that loads (Node 22.15+), else the ES module loader's own default loaders wrapped in place (with
// --expose-internals, only where Node's sources look them up late), else module.register's loader thread, where this
// same bundle is the hooks module (its `resolve` and `load` exports). Also the --loader / --import files named at
// start, which load before any hook exists, and hooks a server registers itself, whose returned text is checked.
import fs = require('node:fs');
import Module = require('node:module');
import path = require('node:path');
import url = require('node:url');
import { $, ACTIVE, F, real, SELF, tokenize } from './base';
import type { Bytes, LoadResult, NextLoad } from './base';
import { getConfig, inScratch } from './manifest';
import { check, refuse } from './verdict';
import { checkLinks } from './links';
import { sqliteNow } from './sqlite';
import { codeFromText, guardInspector, guardRepl, installStrings } from './strings';
import { resolutionLooked, shareTaken } from './taken';
import { guardFsPromises, installReads } from './reads';
import { toldBy } from './told';
import { checkSink } from './sinks';
import { installChildren } from './spawn';
import { installWorkers } from './workers';
import { stripBOM } from './hash';

/** How ES modules are checked here: registerHooks, the loader's own functions wrapped (--expose-internals), or module.register's thread. */
export let mode: 'hooks' | 'internals' | 'register' | 'none' = 'none';

// ------------------------------------------------------------------------------------- the ESM load hook (exported)
const toBytes = (s: string | ArrayBuffer | ArrayBufferView): Bytes =>
  typeof s === 'string'
    ? s
    : $.isUint8Array(s)
      ? s
      : ArrayBuffer.isView(s)
        ? new Uint8Array(s.buffer, s.byteOffset, s.byteLength)
        : new Uint8Array(s);

function checkLoaded(u: string, r: LoadResult): void {
  if (!ACTIVE || typeof u !== 'string' || !r || r.source == null) return;
  if (!$.startsWith(u, 'file:')) {
    // a data: (or any other) URL's text names no file: code from a string (strings.ts)
    if (!$.startsWith(u, 'node:')) codeFromText(typeof r.source === 'string' ? r.source : u, `import of ${$.slice(u, 0, 40)}`, false, true); // (asked from no frame)
    return;
  }
  // (source null: a CommonJS module that the CommonJS loader reads and compiles: seen by _compile)
  const how =
    r.format === 'wasm' ? 'wasm' : r.format === 'json' ? 'json' : r.format === 'commonjs' || r.format == null ? 'require' : 'import';
  check($.fileURLToPath(u), how, toBytes(r.source));
}

/**
 * require() of an ES module in the workspace or a scratch folder where only module.register's hooks check ES
 * modules: what it imports is loaded around them (Node's defaultLoadSync), so it is refused (why "sink").
 */
export function requireOfEsm(filename: string): void {
  const cfg = getConfig();
  const p = real(filename);
  if (!cfg || p === null || !($.startsWith(p, cfg.root) || inScratch(cfg, p))) return;
  const rel = $.startsWith(p, cfg.root) ? $.slice(p, cfg.root.length).split(path.sep).join('/') : null;
  refuse({
    p,
    rel,
    why: 'sink',
    sum: '',
    how: 'require() of an ES module',
    tail: "require() of an ES module: on this Node the guard cannot check what it imports unless node is started with --expose-internals (MCP Gate's sandbox does that); import() it instead",
  });
}

const getBuiltinModule = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
/** A built-in module by its id, never through the module hooks (process.getBuiltinModule, Node 20.16+ and 22.3+). */
function builtin(id: string): unknown {
  return typeof getBuiltinModule === 'function' ? getBuiltinModule.call(process, id) : (require(id) as unknown);
}

/** After a resolve: a sink module asked for by a file the approval pins as read (checkSink), links left the workspace. */
function afterResolve(specifier: string, context: { parentURL?: string } | undefined, r: { url?: string } | undefined): void {
  if (!ACTIVE || !r || typeof r.url !== 'string') return;
  const parent = context?.parentURL?.startsWith('file:') ? url.fileURLToPath(context.parentURL) : undefined;
  if (r.url.startsWith('file:')) resolutionLooked(specifier, parent, url.fileURLToPath(r.url));
  if (r.url === 'node:sqlite') sqliteNow();
  // (a built-in taken without require: with module.registerHooks a require goes through these same hooks)
  if (r.url === 'node:inspector' || r.url === 'node:inspector/promises') guardInspector(builtin(r.url));
  if (r.url === 'node:repl') guardRepl(builtin('node:repl'));
  if (r.url === 'node:fs/promises') guardFsPromises(builtin('node:fs/promises'));
  if (r.url.startsWith('node:') && parent) checkSink(r.url, parent);
  if (r.url.startsWith('file:')) {
    const request = specifier.startsWith('file:') ? url.fileURLToPath(specifier) : specifier;
    checkLinks(request, parent, url.fileURLToPath(r.url), 'import');
  }
}

/** A resolution that found nothing: where it looked is metadata (taken.ts). */
function resolveFailed(specifier: string, context: { parentURL?: string } | undefined): void {
  if (!ACTIVE || typeof specifier !== 'string') return;
  const parent = context?.parentURL?.startsWith('file:') ? url.fileURLToPath(context.parentURL) : undefined;
  resolutionLooked(specifier, parent, null);
}

// ------------------------------------------------------------------------- hooks of the server's own (loader thread)
// Red team 17, case n10: on a Node without module.registerHooks a server's module.register runs its hooks in Node's
// loader thread. Hooks registered later run first, so the guard — registered before them — never saw what theirs
// short-circuited (a `virtual:` URL whose text they built from a changed cfg.json), and nothing the loader thread read
// was seen (the guard installed only the file checks there). Now (decision, measured on Node 20 and 22):
//  - the guard registers itself again after each module.register of the server (installEsm): outermost, its load
//    sees each final result of the chain;
//  - the loader thread that runs hooks of the server's own is guarded as the main thread is (reads taken in, text
//    turned into code, programs and workers started), from before the server's hook module loads;
//  - text their hooks hand back for a URL that is not a file as approved — a URL that is not file: or node:, or a
//    file whose source is not its bytes (a transpiler's output) — is text turned into code: refused after the server
//    (either thread) took in content that is not as approved. What the loader thread read with fs is placed as in
//    the main thread (refused naming cfg.json); where it could have been fed by what the guard cannot place (a
//    program or worker it started, a read without a name, or the main thread's own start marks), the whole
//    workspace is compared with metadata (exec-check's workspaceAsApproved, as after a program start).
//  Why not compare the whole workspace for every such text: that refuses an honest hook (a
//  transpiler, a virtual module of constant text) after a README edit, which nothing read; placing the loader
//  thread's reads keeps that running while a hook that read the changed file is refused.
/** In a loader thread: hooks of the server's own are registered beside the guard's (initialize's data). */
let theirs = false;

/** module.register initialize hook: the memory through which the thread that registered it tells what it took in. */
export function initialize(data: unknown): void {
  if (!data || typeof data !== 'object') return;
  toldBy((data as { taken?: unknown }).taken);
  if ((data as { theirs?: unknown }).theirs === true && !theirs && ACTIVE) {
    theirs = true;
    // this thread now runs the server's code: guarded as its main thread (no start marks: what the main thread
    // took in and whether it started are told, told.ts)
    installReads();
    installStrings();
    installChildren();
    installWorkers();
    Module.syncBuiltinESMExports();
  }
}

/** The bytes of a file: URL on disk, or null (no such file: then no file, judged as text). */
function diskBytes(u: string): Buffer | null {
  try {
    const [b, n] = F.readBytes($.fileURLToPath(u));
    return b.subarray(0, n);
  } catch {
    return null;
  }
}

/**
 * In a loader thread with hooks of the server's own: text a hook handed back for a URL that is not a file as
 * approved (not file: or node:, or a file whose source is not its bytes) is text turned into code (strings.ts).
 */
function hookText(u: string, r: LoadResult): void {
  // (a URL that is not file: is judged by checkLoaded, for any hook: a data: import too)
  if (!theirs || !ACTIVE || typeof u !== 'string' || !r || r.source == null || !$.startsWith(u, 'file:')) return;
  const src = toBytes(r.source);
  const disk = diskBytes(u);
  if (disk !== null) {
    if (typeof src === 'string') {
      const t = $.utf8Slice(disk, 0, disk.length);
      if (src === t || src === stripBOM(t)) return;
    } else if (Buffer.from(src.buffer, src.byteOffset, src.byteLength).equals(disk)) return;
  }
  const text = typeof src === 'string' ? src : $.utf8Slice(Buffer.from(src.buffer, src.byteOffset, src.byteLength), 0, src.byteLength);
  codeFromText(text, `import of ${$.slice(u, 0, 60)} (text a module hook of the server's own gave for the file)`, false, true);
}

/** module.register resolve hook (Node without module.registerHooks). */
export async function resolve(
  specifier: string,
  context: { parentURL?: string },
  nextResolve: (s: string, c?: unknown) => unknown,
): Promise<unknown> {
  const r = (await nextResolve(specifier, context)) as { url?: string };
  afterResolve(specifier, context, r);
  return r;
}

/** module.register load hook: asks the next loader for the source and checks it for every file: URL. */
export async function load(u: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  const r = await nextLoad(u, context);
  checkLoaded(u, r);
  hookText(u, r);
  return r;
}

/**
 * The same hooks for module.registerHooks (Node 22.15 and later): synchronous, in the thread that loads, so no
 * loader thread is started (module.register's costs about 30 ms a start). A CommonJS file's text is checked where
 * it is compiled (Module.prototype._compile), as with module.register.
 */
const syncHooks = {
  resolve(specifier: string, context: { parentURL?: string }, nextResolve: (s: string, c?: unknown) => { url?: string }): unknown {
    let r: { url?: string };
    try {
      r = nextResolve(specifier, context);
    } catch (e) {
      resolveFailed(specifier, context);
      throw e;
    }
    afterResolve(specifier, context, r);
    return r;
  },
  load(u: string, context: unknown, nextLoad: (u: string, c?: unknown) => LoadResult): LoadResult {
    const r = nextLoad(u, context);
    // A CommonJS file's text is checked where it is compiled; hooks a server adds are checked by guardHooks.
    if (r && r.format != null && r.format !== 'commonjs') checkLoaded(u, r);
    return r;
  },
};

/**
 * Hooks a server registers itself (module.registerHooks) run before the guard's and may return any text for a
 * file: what one returns is checked as that file's code (accepted, as for a transpiler, while the file on disk is
 * the approved one).
 */
function guardHooks(h: { resolve?: unknown; load?: unknown } | undefined): unknown {
  if (!h || typeof h !== 'object' || typeof h.load !== 'function') return h;
  const theirs = h.load as (u: string, c: unknown, n: unknown) => LoadResult;
  return {
    ...h,
    load(u: string, context: unknown, nextLoad: unknown): LoadResult {
      const r = theirs(u, context, nextLoad);
      checkLoaded(u, r);
      return r;
    },
  };
}

/**
 * Node without module.registerHooks (20, 22 before 22.15), started with --expose-internals (MCP Gate's wrappers pass
 * it): the ESM loader's own default loaders, wrapped in place, in the thread that loads — no loader thread (which
 * costs a start about 25 ms on Node 20), and the loads module.register hooks never see are seen too: require() of an
 * ES module (Node 20.19 and later) loads its imports through defaultLoadSync, around any registered hooks. Only where
 * every use of these loaders in Node's own sources is the late lookup (`x ??= require(...).x`, the loader thread's
 * chain aside) that a replaced export reaches; else false, and module.register is used as before.
 */
function inThreadInternals(): boolean {
  let load: Record<string, unknown>;
  let resolve: Record<string, unknown>;
  let sources: Record<string, unknown>;
  try {
    // resolve before load, as Node itself loads them: resolve and get_format require each other, and get_format
    // loaded first (load requires it) would leave resolve without defaultGetFormatWithoutErrors.
    const internalRequire = Module.createRequire(SELF);
    resolve = internalRequire('internal/modules/esm/resolve') as Record<string, unknown>;
    load = internalRequire('internal/modules/esm/load') as Record<string, unknown>;
    sources = (process as unknown as { binding: (n: string) => Record<string, unknown> }).binding('natives');
  } catch {
    return false;
  }
  const names = ['defaultLoad', 'defaultLoadSync', 'getSourceSync'];
  if (!names.every((n) => typeof load[n] === 'function') || typeof resolve.defaultResolve !== 'function') return false;
  // Every use of them in Node's module loading sources (internal/modules, main, process, vm) must look them up when
  // called (`x ??= require(...).x`), never keep the function from before they were replaced (a destructuring, a
  // property taken at load): else not used. (Not these: the loader thread's hook chain and node:test's module
  // mocks, both hooks run in module.register's thread, and `node --check`, which runs nothing.)
  const elsewhere = new Set(['internal/modules/esm/hooks', 'internal/test_runner/mock/loader', 'internal/main/check_syntax']);
  const wrapped = /^(defaultLoad|defaultLoadSync|getSourceSync|defaultResolve)\b/;
  const named = /\b(defaultLoad|defaultLoadSync|getSourceSync|defaultResolve)\b/;
  for (const [id, text] of Object.entries(sources)) {
    if (typeof text !== 'string' || elsewhere.has(id) || !/^internal\/(modules|main|process|vm)\b/.test(id)) continue;
    for (const mod of ['load', 'resolve'].map((m) => `require('internal/modules/esm/${m}')`)) {
      for (let i = text.indexOf(mod); i >= 0; i = text.indexOf(mod, i + 1)) {
        const before = text.slice(Math.max(0, i - 300), i);
        const destructured = /\{([^{}]*)\}\s*=\s*$/.exec(before);
        if (destructured && named.test(destructured[1])) return false;
        const taken = /^\.(\w+)/.exec(text.slice(i + mod.length, i + mod.length + 40));
        if (taken && wrapped.test(taken[1]) && !/\?\?=\s*$/.test(before)) return false;
      }
    }
  }
  const defaultResolve = resolve.defaultResolve as (s: string, c?: { parentURL?: string }) => { url?: string };
  const defaultLoad = load.defaultLoad as (u: unknown, c?: unknown) => Promise<LoadResult>;
  const defaultLoadSync = load.defaultLoadSync as (u: unknown, c?: unknown) => LoadResult;
  const getSourceSync = load.getSourceSync as (u: unknown, c?: unknown) => LoadResult;
  resolve.defaultResolve = function (this: unknown, specifier: string, context?: { parentURL?: string }): { url?: string } {
    let r: { url?: string };
    try {
      r = defaultResolve.call(this, specifier, context);
    } catch (e) {
      resolveFailed(specifier, context);
      throw e;
    }
    afterResolve(specifier, context, r);
    return r;
  };
  load.defaultLoad = async function (this: unknown, u: unknown, c?: unknown): Promise<LoadResult> {
    const r = await defaultLoad.call(this, u, c);
    checkLoaded(String(u), r);
    return r;
  };
  load.defaultLoadSync = function (this: unknown, u: unknown, c?: unknown): LoadResult {
    const r = defaultLoadSync.call(this, u, c);
    checkLoaded(String(u), r);
    return r;
  };
  load.getSourceSync = function (this: unknown, u: unknown, c?: unknown): LoadResult {
    const r = getSourceSync.call(this, u, c);
    checkLoaded(String(u), { format: 'module', ...r });
    return r;
  };
  return true;
}

/** Every file of the package folder a bare name finds from the working folder (node_modules/<pkg>), checked. */
function packageAsApproved(spec: string): void {
  const segs = spec.split('/');
  const pkg = spec.startsWith('@') ? segs.slice(0, 2).join('/') : segs[0];
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const cand = path.join(dir, 'node_modules', pkg);
    if (fs.existsSync(cand)) {
      const walk = (d: string): void => {
        for (const e of F.readdirSync(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else check(p, 'loader');
        }
      };
      const r = real(cand);
      if (r !== null && F.statSync(r).isDirectory()) walk(r);
      else check(cand, 'loader');
      return;
    }
    if (path.dirname(dir) === dir) return;
  }
}

/** --loader / --experimental-loader / --import files: the loader thread imports loaders before any hook exists. */
export function checkPreloadFlags(): void {
  const args = [...process.execArgv, ...tokenize(process.env.NODE_OPTIONS ?? '')];
  for (let i = 0; i < args.length; i++) {
    const m = /^--(experimental-loader|loader|import)(?:=(.*))?$/.exec(args[i]);
    if (!m) continue;
    const spec = m[2] ?? args[++i];
    if (!spec) continue;
    let file: string | null = null;
    try {
      if (spec.startsWith('file:')) file = url.fileURLToPath(spec);
      else if (path.isAbsolute(spec) || /^\.\.?[\\/]/.test(spec)) file = path.resolve(spec);
      else if (!/^[a-z][a-z0-9+.-]*:/i.test(spec)) file = Module.createRequire(path.join(process.cwd(), 'noop.js')).resolve(spec);
    } catch {
      // A bare name require() does not resolve (a package whose exports have only an "import" condition): --import
      // loads it through the ESM hooks, which check it; a --loader is imported by the loader thread before any hook
      // exists, so every file of its package folder must be as approved (it ran unchecked).
      if (m[1] !== 'import') packageAsApproved(spec);
    }
    if (file) check(file, m[1] === 'import' ? 'import' : 'loader');
  }
}

/**
 * The server registered module hooks of its own (module.register or module.registerHooks): on Node 23 and later
 * they also give require() its text, so the text Node's own CommonJS loader hands to _compile may be theirs (tsx),
 * not what it read from disk (commonjs.ts).
 */
export const serverHooks = { on: false };

type Register = (...a: unknown[]) => unknown;
/**
 * module.register as the server calls it: this file registered into the loader thread before its hooks (so that
 * thread is guarded before their module loads: `theirs` in the data) and again after them, outermost, where its load
 * sees what they hand back (hookText). `taken`: the memory already shared with the loader thread, if any.
 */
function aroundTheirs(original: Register, self: string, taken: SharedArrayBuffer | null): Register {
  let shared = taken;
  return function (this: unknown, ...args: unknown[]) {
    serverHooks.on = true;
    shared ??= shareTaken();
    original.call(this, self, { data: { taken: shared, theirs: true } });
    const r = original.apply(this, args);
    original.call(this, self, { data: { taken: shared, theirs: true } });
    return r;
  };
}

/** ESM: the guard's hooks registered, by the best way this Node has (`mode` says which). */
export function installEsm(): void {
  // ESM: in-thread hooks where Node has them; else this same file is the hooks module (its `resolve` and `load`
  // exports), run in Node's loader thread. Registered in the main thread and in each worker.
  // A loader thread (--loader, or module.register called by the server) loads its hook modules there, where
  // in-thread hooks do not reach: then this file is registered into it first, as without registerHooks.
  const M2 = Module as unknown as { registerHooks?: (h: typeof syncHooks) => void; register?: (...a: unknown[]) => unknown };
  const original = M2.register;
  const self = url.pathToFileURL(SELF).href;
  const loaderFlag = [...process.execArgv, ...tokenize(process.env.NODE_OPTIONS ?? '')].some((a) =>
    /^--(experimental-loader|loader)(=|$)/.test(a),
  );
  const registerHooks = M2.registerHooks;
  if (typeof registerHooks === 'function') {
    M2.registerHooks = function (this: unknown, h: typeof syncHooks) {
      serverHooks.on = true;
      return registerHooks.call(this, guardHooks(h) as typeof syncHooks);
    };
  }
  if (typeof registerHooks === 'function' && !loaderFlag) {
    mode = 'hooks';
    registerHooks.call(Module, syncHooks);
    if (typeof original === 'function') M2.register = aroundTheirs(original, self, null);
  } else if (!loaderFlag && inThreadInternals()) {
    mode = 'internals';
    // A server's own module.register starts Node's loader thread, whose loads these wrappers do not see: this file
    // is registered into it (aroundTheirs).
    if (typeof original === 'function') M2.register = aroundTheirs(original, self, null);
  } else if (typeof original === 'function') {
    mode = 'register';
    const taken = shareTaken();
    original.call(Module, self, { data: { taken } });
    M2.register = aroundTheirs(original, self, taken);
    sqliteNow(true); // an import of node:sqlite resolves in the loader thread, unseen here: guarded now
    guardFsPromises(fs.promises); // and so does one of node:fs/promises
  }
  Module.syncBuiltinESMExports(); // so `import { registerHooks, register } from 'node:module'` gets these
}
