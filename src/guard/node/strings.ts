// Code from strings for the load guard (src/guard/CONTRACT.md, "Text turned into code"; docs/concepts.md, "Sinks
// that name no file"): every way a Node process turns text or bytes into code without naming a file — eval, the
// Function constructors (plain, async, generator, async generator), vm, Module.prototype._compile of text that is not
// its file's, a Worker from a string, WebAssembly from bytes, a data: import, the inspector's evaluate — is allowed
// until the process took in content that is not as approved (taken.ts), and refused after, naming that file. The
// code generators of the libraries MCP servers are built on (zod's JIT, Ajv, depd) are allowed after too, when the
// frame asking is theirs and their file is as approved: what they compile is built from schemas, with every value
// quoted. A new vm context is made without code generation from strings (its own Function would be a way around).
// `eval` is replaced: a direct eval runs as an indirect one (the global scope), as it does for any replaced eval.
import vm = require('node:vm');
import Module = require('node:module');
import url = require('node:url');
import fs = require('node:fs');
import { $, ACTIVE, F, hasOwn, real, SELF } from './base';
import { getConfig, writable } from './manifest';
import { hashFile, sha256 } from './hash';
import { refuse } from './verdict';
import { isOwn, mayHaveTakenIn, settleLooked, took } from './taken';
import { workspaceAsApproved } from './exec-check';

type Fn = (...a: unknown[]) => unknown;

// Taken at start, before any code of the server (which may replace Array.prototype.join, RegExp.prototype.exec,
// Reflect.construct… to show the check one text and the compiler another, or to be handed the original constructor).
const call = Function.prototype.call;
const reExec = call.bind(RegExp.prototype.exec) as (re: RegExp, s: string) => RegExpExecArray | null;
const apply = Reflect.apply;
const construct = Reflect.construct;
const getPrototypeOf = Object.getPrototypeOf;
const ProxyCtor = Proxy;
const StringCtor = String;
/** A value made a string once (its toString runs here, once): what is checked is what is compiled. */
const str = (x: unknown): string => (typeof x === 'string' ? x : StringCtor(x));
/** The strings of a list, and their text joined: by index, no method of the server's. */
function strings(list: ArrayLike<unknown>): [string[], string] {
  const out: string[] = [];
  let all = '';
  for (let i = 0; i < list.length; i++) {
    const s = str(list[i]);
    out[i] = s;
    all += (i ? '\n' : '') + s;
  }
  return [out, all];
}

/** Names code was compiled under from a string (a vm filename, a sourceURL): never taken for a library's frame. */
const forged = new Set<string>();
/** Frame file name → its real path is outside the workspace and no forged name (read once per name: frames repeat). */
const outsideRoot = new Map<string, boolean>();
const SOURCE_URL = /\/\/[#@]\s*source(?:Mapping)?URL\s*=\s*(\S+)/g;
const NON_SPACE = /\S/;

export function noteName(name: unknown): void {
  if (typeof name === 'string' && name) {
    $.setAdd(forged, name);
    outsideRoot.clear(); // (a name may reach a cached frame by another spelling)
    const r = real($.startsWith(name, 'file:') ? (safePath(name) ?? name) : name);
    if (r) $.setAdd(forged, r);
  }
}
function noteText(text: string): void {
  SOURCE_URL.lastIndex = 0;
  for (let m = reExec(SOURCE_URL, text); m !== null; m = reExec(SOURCE_URL, text)) noteName(m[1]);
}
function safePath(u: string): string | null {
  try {
    return url.fileURLToPath(u);
  } catch {
    return null;
  }
}

/**
 * Refuses, naming what this process took in, when it did; `how` is the sink. A process that started a program or a
 * worker (or was started by one) has its whole workspace compared first: what it was fed may be any file.
 */
export function afterTakingIn(how: string): void {
  if (!ACTIVE) return;
  const cfg = getConfig();
  if (cfg === null) refuse({ p: '(workspace)', rel: null, why: 'manifest', sum: '', how });
  settleLooked(); // names looked at: the first that shows what was not approved is taken in
  if (took.in === null && took.started)
    workspaceAsApproved(`${how} (after it started a program or worker, or was started by one)`, isOwn, true);
  const t = took.in;
  if (t === null) return;
  const what = t.what
    ? t.what
    : t.why === 'changed'
      ? 'it changed since approval'
      : t.why === 'new'
        ? 'it is not in what was approved'
        : t.why === 'scratch'
          ? 'it was written outside the workspace and is no approved content'
          : 'the approval manifest could not be read';
  const head = `refused ${how}: text turned into code after this process took in a file that is not as approved (transformed text cannot be traced back to its file)`;
  const tail = `${what}; approve the change to that file, or make the server stop building code from what it reads`;
  refuse({ p: t.p, rel: t.rel, why: t.why, sum: t.sum, how, head, tail, took: true });
}

// ------------------------------------------------------------------------------------------- the generators allowed
/** Each library's generator: the file of the frame that asks, and of the frame below it when that matters. */
const GENERATORS: { file: RegExp; below?: RegExp }[] = [
  { file: /\/node_modules\/depd\/index\.js$/ }, // wrapfunction: arg0..argN, the message passed as a value
  { file: /\/node_modules\/ajv\/(?:dist|lib)\/compile\/index\.js$/ }, // compileSchema
  { file: /\/node_modules\/ajv\/dist\/compile\/jtd\/(?:serialize|parse)\.js$/ }, // JTD's serializer and parser
  // zod 4's object JIT: doc.compile, asked by its own schemas (the shape's keys are quoted with JSON.stringify)
  {
    file: /\/node_modules\/zod\/(?:v4\/core|lib\/v4\/core|v4\/classic)\/doc\.c?js$/,
    below: /\/node_modules\/zod\/(?:v4\/core|lib\/v4\/core)\/schemas\.c?js$/,
  },
];

interface Site {
  getFileName(): string | null | undefined;
  getScriptNameOrSourceURL?(): string | null | undefined;
  isEval(): boolean;
}

// Code a library compiled with no workspace frame under it carries a sourceURL of the guard's (a name issued once,
// random, never one the server's own text named): its frames, when they later ask for a compile, are library frames.
const TAG = `mcp-gate-library-${sha256(String(Math.random()) + String(process.hrtime.bigint())).slice(0, 16)}/`;
const tags = new Set<string>();
let tagged = 0;
function libraryCode(name: unknown): boolean {
  return typeof name === 'string' && $.startsWith(name, TAG) && $.setHas(tags, name) && !$.setHas(forged, name);
}
/** The text with the library tag appended (a comment: it changes nothing the code does). */
function tag(text: string): string {
  const name = TAG + String(++tagged);
  $.setAdd(tags, name);
  return `${text}\n//# sourceURL=${name}`;
}

const captureStackTrace = Error.captureStackTrace;
const DEEP = 200; // frames read for libraryAsks
const defineProperty = Object.defineProperty;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const ErrorCtor = Error;

/** The frames that called into the guard (its own skipped), or null when they cannot be had (fail closed). */
function callers(depth = 16): Site[] | null {
  const prep = getOwnPropertyDescriptor(ErrorCtor, 'prepareStackTrace');
  const limit = getOwnPropertyDescriptor(ErrorCtor, 'stackTraceLimit');
  const holder: { stack?: unknown } = {};
  try {
    defineProperty(ErrorCtor, 'prepareStackTrace', { value: (_e: unknown, s: Site[]) => s, writable: true, configurable: true });
    defineProperty(ErrorCtor, 'stackTraceLimit', { value: depth, writable: true, configurable: true });
    captureStackTrace(holder);
    const s = holder.stack;
    if (!Array.isArray(s)) return null;
    const out: Site[] = [];
    for (const c of s as Site[]) {
      const f = c.getFileName();
      if (f === SELF) continue;
      out.push(c);
    }
    return out;
  } catch {
    return null;
  } finally {
    try {
      if (prep) defineProperty(ErrorCtor, 'prepareStackTrace', prep);
      else delete (ErrorCtor as { prepareStackTrace?: unknown }).prepareStackTrace;
      if (limit) defineProperty(ErrorCtor, 'stackTraceLimit', limit);
    } catch {
      /* as the server left them */
    }
  }
}

const trustedFiles = new Map<string, { key: string; ok: boolean }>();
/** A library file as approved: outside every place the server or the repository writes, or an unchanged workspace file. */
function asApproved(name: string): boolean {
  if ($.setHas(forged, name)) return false;
  const file = $.startsWith(name, 'file:') ? safePath(name) : name;
  if (file === null || !$.isAbsolute(file)) return false;
  const p = real(file);
  if (p === null || $.setHas(forged, p)) return false;
  if (!writable(p)) return true;
  const cfg = getConfig();
  if (cfg === null || !$.startsWith(p, cfg.root)) return false;
  const rel = $.slice(p, cfg.root.length).split($.sep).join('/');
  let st: fs.Stats;
  try {
    st = F.statSync(p);
  } catch {
    return false;
  }
  const key = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  const hit = trustedFiles.get(p);
  if (hit && hit.key === key) return hit.ok;
  const ok = hasOwn(cfg.files, rel) && hashFile(p) === cfg.files[rel];
  trustedFiles.set(p, { key, ok });
  return ok;
}

function generatorAsks(s: Site[] | null): boolean {
  if (!s || s.length === 0) return false;
  const f = s[0].getFileName();
  if (typeof f !== 'string' || s[0].isEval()) return false;
  for (const g of GENERATORS) {
    if (reExec(g.file, f) === null || !asApproved(f)) continue;
    if (!g.below) return true;
    const b = s[1]?.getFileName();
    if (typeof b === 'string' && !s[1].isEval() && reExec(g.below, b) !== null && asApproved(b)) return true;
  }
  return false;
}

/** Text about to become code by a way that names no file (a Worker from a string, a data: import). */
export function codeFromText(t: string, how: string, commandLine = false, strict = false): void {
  // (a process's own command line, `node -e`/`-p`, is no text it was fed unless its parent had taken in such content:
  // the mark it inherits; being a child alone does not count)
  if (commandLine && took.in === null) return;
  text(t, how, false, strict);
}

/**
 * node's own program text — `-e`/`-p`, or a program read from standard input (no script, or `-`) — which Node
 * compiles from source it holds; as an ES module (`--input-type=module`, or detected) through no hook of the guard
 * (red team 20, r13). After its parent took in what is not as approved (the mark it inherits), refused at start.
 */
export function textEntry(): void {
  const P = process as unknown as { _eval?: unknown };
  const script = process.argv[1];
  if (typeof P._eval === 'string') codeFromText(P._eval, "node -e or -p (the program's own text)", true, true);
  else if (script === undefined || script === '-')
    codeFromText('[stdin]', 'node reading its program from standard input (or a REPL)', true, true);
}

/**
 * No frame of the stack is workspace code or code compiled from a string: every one is Node's own, a built-in, or a
 * file outside the workspace (a package of the pinned tree, the runtime, a package folder's layer whose files were
 * checked as approved content when they loaded). Such code turning text into code after taking in is a library doing
 * what it was approved to do (Playwright and Puppeteer build their page functions with `new Function`); what the
 * guard stops is workspace code asking, directly or through a library (`_.template`, zod's `Doc`), which an edit
 * could have set up. A library function handed as a callback (`promise.then(_.template)`) runs with no workspace
 * frame under it and is not told apart (docs/concepts.md says so).
 */
function libraryAsks(s: Site[] | null): boolean {
  const cfg = getConfig();
  // (a stack as deep as the limit may hide workspace frames below it: fail closed)
  if (!s || s.length === 0 || s.length >= DEEP - 8 || cfg === null) return false;
  let code = false; // a library's own code asks: not only Node's and built-ins (eval handed to a timer, an event)
  for (const c of s) {
    const f = c.getFileName();
    if (typeof f !== 'string' || f === '') {
      // code compiled from a string: only a library's own compile (tagged when it was made) counts as library code
      if (c.isEval()) {
        if (!libraryCode(c.getScriptNameOrSourceURL?.())) return false;
        code = true;
      }
      continue; // (or a built-in: Array.prototype.map, Reflect.apply, Promise)
    }
    if (c.isEval() || $.setHas(forged, f)) return false;
    if ($.startsWith(f, 'node:')) continue;
    let out = outsideRoot.get(f);
    if (out === undefined) {
      const file = $.startsWith(f, 'file:') ? safePath(f) : f;
      const p = file !== null && $.isAbsolute(file) ? real(file) : null;
      out = p !== null && !$.setHas(forged, p) && !$.startsWith(p, cfg.root);
      outsideRoot.set(f, out);
    }
    if (!out) return false;
    code = true;
  }
  return code;
}

/**
 * Text about to become code: refused after taking in, unless empty, a generator's or a library's own. Returns true
 * when it is a generator's or a library's own (asked only with `tagging`: the caller then tags the text).
 */
function text(t: string, how: string, generatorOk = false, strict = false, tagging = false): boolean {
  noteText(t);
  const tainted = mayHaveTakenIn();
  if (!tainted && !tagging) return false;
  const sites = callers(DEEP); // read once for both
  const lib = (generatorOk && generatorAsks(sites)) || (!strict && libraryAsks(sites));
  // (names looked at are compared only now, when the compile would be refused for them: a library's costs nothing)
  if (tainted && !lib && reExec(NON_SPACE, t) !== null) afterTakingIn(how);
  return lib;
}

// ------------------------------------------------------------------------------------------- the sinks
function constructorProxy(C: Fn, how: string): Fn {
  // (the handler has no prototype: a trap it does not define is not looked up on Object.prototype, where the server
  // could define one and be handed the original constructor)
  const P: Fn = new ProxyCtor(C, {
    __proto__: null,
    apply(target: Fn, self: unknown, args: unknown[]) {
      const [a, all] = strings(args);
      if (text(all, how, true, false, true)) a[a.length > 0 ? a.length - 1 : 0] = tag(a.length > 0 ? a[a.length - 1] : '');
      return apply(target, self, a);
    },
    construct(target: Fn, args: unknown[], newTarget: Fn) {
      const [a, all] = strings(args);
      if (text(all, how, true, false, true)) a[a.length > 0 ? a.length - 1 : 0] = tag(a.length > 0 ? a[a.length - 1] : '');
      return construct(target as unknown as new (...a: unknown[]) => object, a, newTarget === P ? target : newTarget) as object;
    },
  } as ProxyHandler<Fn>);
  return P;
}

/** The constructor of proto, replaced by P on proto (and on the global when it is one). */
function replaceConstructor(proto: object, how: string): Fn {
  const C = (proto as { constructor: Fn }).constructor;
  const P = constructorProxy(C, how);
  defineProperty(proto, 'constructor', { value: P, writable: true, configurable: true, enumerable: false });
  return P;
}

/** The Function constructors, eval, vm, WebAssembly, Module._compile's text, data: imports, the inspector. */
export function installStrings(): void {
  const g = globalThis as unknown as Record<string, unknown>;
  // eval: only a string is compiled
  const E = g.eval as Fn;
  g.eval = new ProxyCtor(E, {
    __proto__: null,
    apply(target: Fn, self: unknown, args: unknown[]) {
      if (typeof args[0] === 'string' && text(args[0], 'eval', false, false, true)) return apply(target, self, [tag(args[0])]);
      return apply(target, self, args);
    },
  } as ProxyHandler<Fn>);
  // the four Function constructors, reached by their global or their prototype's constructor
  g.Function = replaceConstructor(Function.prototype, 'Function');
  for (const f of [async function () {}, function* () {}, async function* () {}]) {
    replaceConstructor(getPrototypeOf(f) as object, 'Function');
  }
  installVm();
  installWasm();
  refuseShadowRealm();
  // process.binding: 'fs' reads with no name taken.ts sees (the whole workspace is compared at the next compile);
  // 'contextify' compiles text as vm does
  const P = process as unknown as { binding?: Fn };
  const binding = P.binding;
  if (typeof binding === 'function') {
    P.binding = function binding2(this: unknown, ...a: unknown[]) {
      if (a[0] === 'fs') took.started = true;
      if (a[0] === 'contextify') text('process.binding', "process.binding('contextify')");
      return apply(binding, this, a);
    };
  }
  Module.syncBuiltinESMExports();
}

function installVm(): void {
  const V = vm as unknown as Record<string, unknown>;
  const named = (o: unknown): void => {
    if (typeof o === 'string') noteName(o);
    else if (o && typeof o === 'object') noteName((o as { filename?: unknown }).filename);
  };
  // A context of its own gets no code generation from strings: its Function and eval are not the guarded ones.
  const noStrings = (o: unknown, key: 'codeGeneration' | 'contextCodeGeneration'): Record<string, unknown> => {
    const base = o && typeof o === 'object' ? (o as Record<string, unknown>) : {};
    return { ...base, [key]: { strings: false, wasm: false } };
  };
  // code at 0, its name in the options at `at`, the options of a new context at `ctx`; compileFunction's parameters too
  const through = (key: string, at: number, ctx?: number): void => {
    const orig = V[key];
    if (typeof orig !== 'function') return;
    V[key] = {
      [key](this: unknown, ...a: unknown[]): unknown {
        a[0] = str(a[0]);
        let all = a[0] as string;
        if (key === 'compileFunction' && a[1] != null && typeof a[1] === 'object') {
          const [params, joined] = strings(a[1] as ArrayLike<unknown>);
          a[1] = params;
          all = joined + '\n' + all;
        }
        named(a[at]);
        text(all, `vm.${key}`);
        if (ctx !== undefined) a[ctx] = noStrings(a[ctx], 'contextCodeGeneration');
        return apply(orig as Fn, this, a);
      },
    }[key];
  };
  through('runInThisContext', 1);
  through('runInContext', 2);
  through('runInNewContext', 2, 2);
  through('compileFunction', 2);
  const createContext = V.createContext as Fn;
  V.createContext = function createContext2(this: unknown, o?: unknown, options?: unknown): unknown {
    return apply(createContext, this, [o, noStrings(options, 'codeGeneration')]);
  };
  for (const key of ['Script', 'SourceTextModule'] as const) {
    const C = V[key] as Fn | undefined;
    if (typeof C !== 'function') continue;
    const P: Fn = new ProxyCtor(C, {
      __proto__: null,
      construct(target: Fn, args: unknown[], nt: Fn) {
        const a: unknown[] = [];
        for (let i = 0; i < args.length; i++) a[i] = args[i];
        a[0] = str(a[0]);
        named(a[1]);
        text(a[0] as string, `vm.${key}`);
        return construct(target as unknown as new (...x: unknown[]) => object, a, nt === P ? target : nt) as object;
      },
    } as ProxyHandler<Fn>);
    const proto = (C as unknown as { prototype: Record<string, unknown> }).prototype;
    defineProperty(proto, 'constructor', { value: P, writable: true, configurable: true, enumerable: false });
    // a Script's runInNewContext makes a context too
    const rinc = proto.runInNewContext;
    if (typeof rinc === 'function') {
      proto.runInNewContext = function runInNewContext(this: unknown, c?: unknown, o?: unknown) {
        return apply(rinc as Fn, this, [c, noStrings(o, 'contextCodeGeneration')]);
      };
    }
    V[key] = P;
  }
}

function installWasm(): void {
  const W = (globalThis as unknown as { WebAssembly?: Record<string, unknown> }).WebAssembly;
  if (!W) return;
  const bytes = (how: string): void => {
    if (!mayHaveTakenIn()) return;
    if (libraryAsks(callers(DEEP))) return; // (undici's llhttp, a package's own WASM)
    afterTakingIn(how);
  };
  for (const key of ['compile', 'compileStreaming', 'instantiateStreaming']) {
    const orig = W[key];
    if (typeof orig !== 'function') continue;
    W[key] = {
      [key](this: unknown, ...a: unknown[]): unknown {
        bytes(`WebAssembly.${key}`);
        return apply(orig as Fn, this, a);
      },
    }[key];
  }
  const M = W.Module as Fn;
  const moduleExports = (M as unknown as { exports: Fn }).exports;
  /** A compiled module (its brand, not its prototype, which any object can be given). */
  const isModule = (x: unknown): boolean => {
    try {
      apply(moduleExports, M, [x]);
      return true;
    } catch {
      return false;
    }
  };
  const inst = W.instantiate as Fn;
  W.instantiate = function instantiate(this: unknown, ...a: unknown[]) {
    if (!isModule(a[0])) bytes('WebAssembly.instantiate');
    return apply(inst, this, a);
  };
  const P: Fn = new ProxyCtor(M, {
    __proto__: null,
    construct(target: Fn, args: unknown[], nt: Fn) {
      bytes('WebAssembly.Module');
      return construct(target as unknown as new (...x: unknown[]) => object, args, nt === P ? target : nt) as object;
    },
  } as ProxyHandler<Fn>);
  defineProperty((M as unknown as { prototype: object }).prototype, 'constructor', {
    value: P,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  W.Module = P;
}

const replGuarded = new Set<unknown>();
/** node:repl evaluates each line with a Script of its own (taken before the guard's vm): each line is text turned into code. */
export function guardRepl(mod: unknown): void {
  const R = mod as { start?: Fn; REPLServer?: Fn } | null;
  if (!R || typeof R.start !== 'function' || replGuarded.has(R)) return;
  replGuarded.add(R);
  const watch = (server: unknown): unknown => {
    const srv = server as { eval?: Fn } | null;
    const ev = srv?.eval;
    if (srv && typeof ev === 'function') {
      srv.eval = function (this: unknown, ...a: unknown[]) {
        text(str(a[0]), 'repl', false, true);
        return apply(ev, this, a);
      };
    }
    return server;
  };
  const start = R.start;
  R.start = function (this: unknown, ...a: unknown[]) {
    return watch(apply(start, this, a));
  };
  const C = R.REPLServer;
  if (typeof C === 'function') {
    R.REPLServer = new ProxyCtor(C, {
      __proto__: null,
      construct(target: Fn, args: unknown[], nt: Fn) {
        return watch(construct(target as unknown as new (...x: unknown[]) => object, args, nt === R.REPLServer ? target : nt)) as object;
      },
      apply(target: Fn, self: unknown, args: unknown[]) {
        return watch(apply(target, self, args));
      },
    } as ProxyHandler<Fn>);
  }
}

// (a breakpoint's condition is JavaScript the debugger evaluates each time it is reached: red team 17, n05)
const RUNS =
  /^(Runtime\.(evaluate|compileScript|callFunctionOn|runScript)|Debugger\.(setScriptSource|evaluateOnCallFrame|setBreakpoint|setBreakpointByUrl|setBreakpointOnFunctionCall))$/;
const inspected = new Set<unknown>();
/**
 * ShadowRealm (--experimental-shadow-realm): a realm has an eval and a Function of its own, which the guard is not
 * in, and loads modules (importValue) past its hooks — a realm made before taking in ran text read after, and a new
 * workspace module, unchecked (red team 18). No server needs it: it is refused when made.
 */
function refuseShadowRealm(): void {
  const g = globalThis as { ShadowRealm?: unknown };
  if (typeof g.ShadowRealm !== 'function') return;
  const tail =
    'a ShadowRealm has an eval and a module loader of its own, which the load guard is not in: MCP Gate refuses it (remove --experimental-shadow-realm)';
  g.ShadowRealm = function ShadowRealm(): never {
    refuse({ p: '(ShadowRealm)', rel: null, why: 'sink', sum: '', how: 'new ShadowRealm()', tail, rule: tail });
  };
}

/** node:inspector's (and inspector/promises') Session: a method that runs text, after taking in, is refused. */
export function guardInspector(mod: unknown): void {
  const proto = (mod as { Session?: { prototype?: Record<string, unknown> } } | null)?.Session?.prototype;
  const post = proto?.post;
  if (!proto || typeof post !== 'function' || inspected.has(proto)) return;
  inspected.add(proto);
  proto.post = function post2(this: unknown, ...a: unknown[]) {
    const method = a[0];
    if (typeof method === 'string' && reExec(RUNS, method) !== null && mayHaveTakenIn()) afterTakingIn(`inspector ${method}`);
    return apply(post as Fn, this, a);
  };
}
