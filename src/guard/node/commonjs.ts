// CommonJS for the load guard: Module.prototype._compile checks the exact text V8 is about to compile (the file's
// bytes on disk when a transpiler stood between), Module._load refuses sink modules asked for by pinned files and
// checks the workspace links a require went through, JSON is read once, checked and parsed from the same bytes; and
// V8's compile cache is kept off (its bytecode would run in place of the text the guard checks).
import Module = require('node:module');
import path = require('node:path');
import { $, F, hasOwn, real } from './base';
import { getConfig, writable } from './manifest';
import { stripBOM } from './hash';
import { check, refuse } from './verdict';
import { lexicalOf, linksAsApproved } from './links';
import { guardSqlite } from './sqlite';
import { checkSink } from './sinks';
import { mode, requireOfEsm, serverHooks } from './esm';
import { isOwn, lookedAt, placesLooked, quiet, resolutionLooked } from './taken';
import { guardFsPromises } from './reads';
import { codeFromText, guardInspector, guardRepl, noteName } from './strings';
import { sha256 } from './hash';

/**
 * Text compiled under `filename` that is that file's own: in the workspace its approved content, elsewhere its bytes
 * on disk. Anything else (approved content of another file too) is code from a string under that name, and the name
 * is never taken for a library's frame (strings.ts).
 */
function fileOwnText(filename: string, content: string | Uint8Array): boolean {
  const cfg = getConfig();
  const p = real(filename);
  if (!cfg || p === null) return false;
  if ($.startsWith(p, cfg.root)) {
    const rel = $.slice(p, cfg.root.length).split(path.sep).join('/');
    return hasOwn(cfg.files, rel) && cfg.files[rel] === sha256(content);
  }
  try {
    const [b, n] = F.readBytes(p);
    return typeof content === 'string' ? stripBOM($.utf8Slice(b, 0, n)) === stripBOM(content) : sha256(b) === sha256(content);
  } catch {
    return false;
  }
}

// Module.wrap and Module.wrapper as Node had them (read at install, before any code of the server ran).
const M0 = Module as unknown as { wrap: unknown; wrapper: unknown };
const WRAP = M0.wrap;
const WRAPPER = M0.wrapper;
const [W0, W1] = Array.isArray(WRAPPER) ? [WRAPPER[0] as unknown, WRAPPER[1] as unknown] : [undefined, undefined];
/** Module.wrap or Module.wrapper is no longer Node's own (then the text Node compiles is not the file's alone). */
function wrapReplaced(): boolean {
  if (M0.wrap !== WRAP || M0.wrapper !== WRAPPER) return true;
  const w = WRAPPER as unknown[];
  return Array.isArray(WRAPPER) && (w[0] !== W0 || w[1] !== W1);
}

/** CommonJS: the exact text compiled, sink modules asked for, links followed, JSON. */
export function installCommonJs(): void {
  // CommonJS: the exact text compiled.
  const proto = (Module as unknown as { prototype: { _compile: (...a: unknown[]) => unknown } }).prototype;
  const compile = proto._compile;
  // Node's own handlers for JavaScript files: while one of them loads a file, the text it hands to _compile is what
  // it read (a transpiler that changes the text replaces the handler, or the module's own _compile, as pirates does).
  const exts = (Module as unknown as { _extensions: Record<string, (m: { exports: unknown }, f: string) => void> })._extensions;
  let nodeReads: string | null = null;
  for (const ext of ['.js', '.cjs', '.mjs']) {
    const handler = exts[ext];
    if (typeof handler !== 'function') continue;
    exts[ext] = function (this: unknown, module: { exports: unknown }, filename: string) {
      const before = nodeReads;
      nodeReads = filename;
      const q = quiet.file;
      quiet.file = filename; // Node's loader reading the module is no read of the server's (its text is checked as code)
      try {
        return handler.call(this, module, filename);
      } finally {
        quiet.file = q;
        nodeReads = before;
      }
    };
  }
  proto._compile = function (this: unknown, content: unknown, filename: unknown, ...rest: unknown[]) {
    // (Node's own loader read the text, unless module hooks of the server's own could have given it: tsx on Node 24)
    const own = nodeReads === filename && !hasOwn(this as object, '_compile') && !serverHooks.on;
    if (quiet.file === filename) quiet.file = null; // read: what the module's code reads from here is its own
    if (typeof filename === 'string') {
      // Text that is an object (its toString or Symbol.toPrimitive may say one text to the check and another to
      // the compiler, which makes a string of it when Module.wrap is replaced): made a string once, here, and that
      // string is both checked and compiled.
      if (typeof content !== 'string' && !$.isUint8Array(content) && content != null) content = `${content as string}`;
      if (typeof content === 'string' || $.isUint8Array(content)) {
        check(filename, 'require', content, own);
        // Text that is neither what Node's loader read for the file nor approved content is code built from a string
        // under that name (a transpiler's output, or any text): refused after the process took in a changed file.
        if (!own && !fileOwnText(filename, content)) {
          noteName(filename);
          codeFromText(
            typeof content === 'string' ? content : 'x',
            `Module.prototype._compile (text that is not ${filename}'s own)`,
            !path.isAbsolute(filename), // [eval]: node -e / -p
          );
        }
      }
    }
    // require() of an ES module (Node 20.19+, 22.12+) loads what it imports around module.register's hooks: with
    // only those, one in the workspace or a scratch folder is refused (its imports would go unchecked).
    if (mode === 'register' && rest[0] === 'module' && typeof filename === 'string') requireOfEsm(filename);
    // Module.wrap or Module.wrapper replaced: Node compiles the text they put around the module with it, text of the
    // server's own that no file check sees (a banner read from a changed file: red team 17, n02 and n08).
    if (wrapReplaced())
      codeFromText(
        'Module.wrap',
        'Module.prototype._compile with Module.wrap or Module.wrapper replaced (text put around the module is compiled with it)',
      );
    return compile.call(this, content, filename, ...rest);
  };

  installResolutionLooks();

  // Built-in modules that run code, asked for by a file the approval pins as read.
  const M = Module as unknown as { _load: (request: unknown, parent: { filename?: string } | undefined, isMain: boolean) => unknown };
  const load = M._load;
  M._load = function (this: unknown, request: unknown, parent: { filename?: string } | undefined, isMain: boolean) {
    if (typeof request === 'string') {
      checkSink(request, parent?.filename);
      const lex = (Module as unknown as { isBuiltin?: (s: string) => boolean }).isBuiltin?.(request)
        ? null
        : lexicalOf(request, parent?.filename);
      if (lex) {
        let resolved: string | undefined;
        try {
          resolved = (Module as unknown as { _resolveFilename: (r: string, p: unknown, m: boolean) => string })._resolveFilename(
            request,
            parent,
            isMain,
          );
        } catch {
          /* the load reports it */
        }
        if (resolved && path.isAbsolute(resolved) && !resolved.startsWith(getConfig()!.root)) linksAsApproved(lex, 'require');
      }
    }
    const m = load.call(this, request, parent, isMain);
    if (request === 'node:sqlite') guardSqlite(m);
    if (typeof request === 'string' && /^(node:)?inspector(\/promises)?$/.test(request)) guardInspector(m);
    if (request === 'repl' || request === 'node:repl') guardRepl(m);
    if (request === 'fs/promises' || request === 'node:fs/promises') guardFsPromises(m);
    return m;
  };

  // JSON: read once, check, parse the same bytes.
  exts['.json'] = function (module, filename) {
    const buf = F.readFileSync(filename);
    // (a JSON file this process wrote itself before it took anything in is its own data: a cache it keeps in the
    // workspace, red team 17, h10; JSON runs no code)
    if (!isOwn(real(filename) ?? filename)) check(filename, 'json', buf);
    try {
      module.exports = JSON.parse(stripBOM(buf.toString('utf8')));
    } catch (err) {
      (err as Error).message = `${filename}: ${(err as Error).message}`;
      throw err;
    }
  };
}

/** V8's compile cache off (module.enableCompileCache, NODE_COMPILE_CACHE). */
export function disableCompileCache(): void {
  // V8's compile cache (module.enableCompileCache, Node 22.1+): its entries are bytecode Node takes for a file's
  // text after checking only a checksum in the entry itself, so a planted entry runs other code under an approved
  // file's name (red team 6n, case 05). It is off: the call reports Node's DISABLED status, as it does under
  // NODE_DISABLE_COMPILE_CACHE (which MCP Gate's wrappers set, and children get); the cache is a start-up speed-up
  // only (tsc and other tools turn it on when they can and carry on when they cannot).
  const MC = Module as unknown as {
    enableCompileCache?: (...a: unknown[]) => unknown;
    getCompileCacheDir?: () => string | undefined;
    constants?: { compileCacheStatus?: { DISABLED?: number } };
  };
  if (typeof MC.enableCompileCache === 'function') {
    const on = MC.getCompileCacheDir?.();
    if (on && writable(real(on) ?? path.resolve(on)))
      refuse({
        p: on,
        rel: null,
        why: 'sink',
        sum: '',
        how: 'compile cache',
        tail: "Node's compile cache is on (NODE_COMPILE_CACHE): it runs bytecode read from that folder in place of the files the guard checks",
      });
    const DISABLED = MC.constants?.compileCacheStatus?.DISABLED ?? 3;
    MC.enableCompileCache = function enableCompileCache() {
      return { status: DISABLED, message: "Disabled by MCP Gate's load guard (compiled code kept in a folder is not checked)" };
    };
  }
  process.env.NODE_DISABLE_COMPILE_CACHE = '1';
}

/** Resolutions as metadata (taken.ts): what require, require.resolve and Module._findPath found, or where they looked. */
function installResolutionLooks(): void {
  // A resolution (require, require.resolve): whether it found a file, and which, is metadata a stat's is (taken.ts).
  const R = Module as unknown as { _resolveFilename: (r: unknown, p: { filename?: string } | undefined, ...x: unknown[]) => unknown };
  const resolveFilename = R._resolveFilename;
  R._resolveFilename = function (this: unknown, request: unknown, parent: { filename?: string } | undefined, ...rest: unknown[]) {
    let r: unknown;
    try {
      r = resolveFilename.call(this, request, parent, ...rest);
    } catch (e) {
      if (typeof request === 'string')
        resolutionLooked(request, parent?.filename, null, (rest[1] as { paths?: unknown } | undefined)?.paths);
      throw e;
    }
    if (typeof request === 'string' && typeof r === 'string') resolutionLooked(request, parent?.filename, r);
    return r;
  };

  // Module._findPath, which the server can call itself: a failed search stats through Node's internals (c15).
  const FP = Module as unknown as { _findPath?: (r: unknown, paths: unknown, ...x: unknown[]) => unknown };
  const findPath = FP._findPath;
  if (typeof findPath === 'function')
    FP._findPath = function (this: unknown, request: unknown, paths: unknown, ...rest: unknown[]) {
      const r = findPath.call(this, request, paths, ...rest);
      if (typeof r === 'string') lookedAt(r);
      else if (typeof request === 'string')
        placesLooked(
          path.isAbsolute(request)
            ? [request]
            : (Array.isArray(paths) ? (paths as unknown[]) : [])
                .filter((d): d is string => typeof d === 'string')
                .map((d) => path.resolve(d, request)),
        );
      return r;
    };
}
