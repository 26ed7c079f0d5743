// The load guard's own ground (src/guard/node; contract: src/guard/CONTRACT.md): the fs functions it uses, captured
// before any code of the server ran; the few facts of this process it starts from (MCP_GATE_GUARD, the guard's own
// file and the --require flag that names it); the shapes of a hook's load result; and NODE_OPTIONS read and written
// as Node reads it. Everything else of the guard builds on this file, which imports only Node's built-ins.
import fs = require('node:fs');
import Module = require('node:module');
import path = require('node:path');
import url = require('node:url');
import util = require('node:util');

// The built-ins the guard's verdict uses, as they were before any code of the server ran (red team 9n): approved
// code that replaced one of them (String.prototype.startsWith, Set.prototype.has, crypto.hash, Buffer.concat,
// Buffer.prototype.toString…) before loading a changed file made the guard take it for a file outside the
// workspace, for an allowed one, or for the approved text. Each is called through `call` bound to it at start
// (nothing is looked up on a prototype or a module object when it runs), and the bytes the guard reads are its
// own ArrayBuffers, read and copied with the typed array functions taken here.
const uncurry = Function.prototype.call.bind(Function.prototype.bind, Function.prototype.call) as <A extends unknown[], R>(
  fn: (...a: A) => R,
) => (self: unknown, ...a: A) => R;
// A sha256 fed in pieces goes to the native handle under crypto's Hash, by the handle's own update and digest taken
// here: Hash.prototype.update and digest look `this[kHandle].update` up on the handle's prototype each time they run,
// which server code reaches from any hash it makes and replaces (red team 17: a digest that answered the approved
// sum for a changed script let it run). (No kHandle on some other Node: pieces are joined and hashed at once.)
type Handle = { update(d: Uint8Array): boolean; digest(enc: 'hex'): string };
type OneShot = (alg: string, d: string | Uint8Array, enc: string) => string;
/**
 * Node's hashing, by its internal module when node runs with --expose-internals (MCP Gate's wrappers pass it): the
 * whole of node:crypto costs a start about 2 ms more on Node 20 and 8 ms on Node 24 (ciphers, keys, X.509…), and
 * the guard needs only sha256. `util` is crypto's internal util module, whose setEngine native.ts wraps before
 * node:crypto takes it. Else node:crypto itself.
 */
export const cryptoParts = ((): { hash?: OneShot; createHash: (alg: string) => object; util: Record<string, unknown> | null } => {
  try {
    const r = Module.createRequire(__filename);
    const h = r('internal/crypto/hash') as { Hash: new (alg: string) => object; hash?: OneShot };
    const util = r('internal/crypto/util') as Record<string, unknown>;
    if (typeof h.Hash === 'function') return { hash: h.hash, createHash: (alg) => new h.Hash(alg), util };
  } catch {
    /* no --expose-internals: node:crypto */
  }
  const c = require('node:crypto') as { hash?: OneShot; createHash: (alg: string) => object };
  return { hash: c.hash, createHash: c.createHash, util: null };
})();
const hashProbe = cryptoParts.createHash('sha256');
const kHandle = Object.getOwnPropertySymbols(hashProbe).find((s) => s.description === 'kHandle');
const handleProto = kHandle ? (Object.getPrototypeOf((hashProbe as unknown as Record<symbol, Handle>)[kHandle]) as Handle) : null;
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype) as Uint8Array;
export const $ = {
  startsWith: uncurry(String.prototype.startsWith) as (s: string, prefix: string) => boolean,
  endsWith: uncurry(String.prototype.endsWith) as (s: string, suffix: string) => boolean,
  slice: uncurry(String.prototype.slice) as (s: string, start: number, end?: number) => string,
  indexOf: uncurry(String.prototype.indexOf) as (s: string, search: string) => number,
  charCodeAt: uncurry(String.prototype.charCodeAt) as (s: string, i: number) => number,
  setHas: uncurry(Set.prototype.has) as (set: Set<string>, v: string) => boolean,
  setAdd: uncurry(Set.prototype.add) as (set: Set<string>, v: string) => Set<string>,
  hasOwn: uncurry(Object.prototype.hasOwnProperty) as (o: object, k: string) => boolean,
  taSet: uncurry(typedArrayProto.set) as (target: Uint8Array, source: Uint8Array, offset: number) => void,
  utf8Slice: uncurry((Buffer.prototype as unknown as { utf8Slice: (s: number, e: number) => string }).utf8Slice) as (
    b: Uint8Array,
    start: number,
    end: number,
  ) => string,
  isUint8Array: util.types.isUint8Array,
  allocUnsafeSlow: Buffer.allocUnsafeSlow,
  fromUtf8: (
    (from) => (s: string) =>
      from(s, 'utf8')
  )(Buffer.from) as (s: string) => Buffer,
  U8: Uint8Array,
  AB: ArrayBuffer,
  hash: cryptoParts.hash,
  createHash: cryptoParts.createHash,
  getOwnPropertyDescriptor: Object.getOwnPropertyDescriptor,
  getPrototypeOf: Object.getPrototypeOf as (o: object) => object | null,
  handleUpdate: handleProto ? (uncurry(handleProto.update) as (h: Handle, d: Uint8Array) => boolean) : null,
  handleDigest: handleProto ? (uncurry(handleProto.digest) as (h: Handle, enc: 'hex') => string) : null,
  fileURLToPath: url.fileURLToPath,
  isAbsolute: path.isAbsolute,
  resolve: path.resolve,
  dirname: path.dirname,
  basename: path.basename,
  sep: path.sep,
  max: Math.max,
  min: Math.min,
};
const { U8, AB } = $;

/**
 * A new sha256 handle of crypto's own (the value crypto.createHash put on the hash as its own property, of the
 * handle's class): null when this Node keeps no such handle. Throws when the hash was tampered with (an accessor
 * put where the handle goes): a sum the guard cannot trust is no sum.
 */
export function sha256Handle(): Handle | null {
  if (!kHandle || !handleProto) return null;
  const d = $.getOwnPropertyDescriptor($.createHash('sha256'), kHandle);
  if (!d || !$.hasOwn(d, 'value') || d.value === null || typeof d.value !== 'object' || $.getPrototypeOf(d.value as object) !== handleProto)
    throw new Error('the hash the guard makes was tampered with');
  return d.value as Handle;
}

/** The bytes of an open file, read into the guard's own buffers: a Buffer of exactly what was read, and its length. */
function readAll(fd: number): [Buffer, number] {
  let size = $.max(64 * 1024, $.min(F.fstatSync(fd).size + 1, 64 * 1024 * 1024));
  let ab = new AB(size);
  let buf = new U8(ab);
  let total = 0;
  for (;;) {
    if (total === size) {
      const bigger = new AB(size * 2);
      const nb = new U8(bigger);
      $.taSet(nb, buf, 0);
      size *= 2;
      ab = bigger;
      buf = nb;
    }
    const n = F.readSync(fd, buf, total, size - total, null);
    if (n === 0) break;
    total += n;
  }
  const out = $.allocUnsafeSlow(total);
  $.taSet(out, new U8(ab, 0, total), 0);
  return [out, total];
}

// The fs functions the guard uses, as they were before any code of the server ran: a server that replaces fs's
// functions (an "overlay" serving other text for an approved file, red team 4 case 01) changes what Node's own
// loader reads, never what the guard compares it with.
// (readFileSync itself calls fs.openSync and friends through the module object when it runs: a read of the guard's
// own is made of the captured functions, each of which goes to Node's native code directly — red team 5, case 07.)
export const F = {
  accessSync: fs.accessSync,
  appendFileSync: fs.appendFileSync,
  closeSync: fs.closeSync,
  lstatSync: fs.lstatSync,
  openSync: fs.openSync,
  readSync: fs.readSync,
  readdirSync: fs.readdirSync,
  fstatSync: fs.fstatSync,
  readlinkSync: fs.readlinkSync,
  statSync: fs.statSync,
  writeSync: fs.writeSync,
  realpath: fs.realpathSync.native,
  /** A file's bytes and their count (the count kept apart: a Buffer's length is a getter code can replace). */
  readBytes(p: string): [Buffer, number] {
    const fd = F.openSync(p, 'r');
    try {
      return readAll(fd);
    } finally {
      F.closeSync(fd);
    }
  },
  readFileSync(p: string, encoding?: 'utf8'): Buffer & string {
    const fd = F.openSync(p, 'r');
    try {
      const [all, n] = readAll(fd);
      return (encoding ? $.utf8Slice(all, 0, n) : all) as Buffer & string;
    } finally {
      F.closeSync(fd);
    }
  },
};

export type Bytes = string | Uint8Array;
export type LoadResult = { format?: string | null; source?: string | ArrayBuffer | ArrayBufferView | null } & Record<string, unknown>;
export type NextLoad = (u: string, context?: unknown) => LoadResult | Promise<LoadResult>;

export const VAR = 'MCP_GATE_GUARD';
export const MANIFEST = process.env[VAR] || '';
export const ACTIVE = MANIFEST !== '';
export const hasOwn = (o: object, k: string): boolean => $.hasOwn(o, k);
export const real = (p: string): string | null => {
  try {
    return F.realpath(p);
  } catch {
    return null;
  }
};
/**
 * realpath for a file about to be checked: null only when it is not there (ENOENT, ENOTDIR) or cannot be reached
 * (EACCES: nor can the loader); any other failure is `{ error }` — a name longer than PATH_MAX (the loader may
 * reach the file by a shorter relative name), too many links, a stack overflow in the guard's own frames — and the
 * file, which may be there, cannot be checked.
 */
export const realOrWhy = (p: string): string | null | { error: string } => {
  try {
    return F.realpath(p);
  } catch (e) {
    const c = (e as NodeJS.ErrnoException | undefined)?.code ?? String((e as Error | undefined)?.message ?? e);
    return c === 'ENOENT' || c === 'ENOTDIR' || c === 'EACCES' ? null : { error: c };
  }
};
/**
 * A real path that names no file of the file system: what /proc/self/fd/N or /proc/<pid>/map_files resolve to for a
 * memfd ("/memfd:x (deleted)"), an unlinked file ("/tmp/x (deleted)"), a pipe or a socket ("pipe:[7]"). Its bytes
 * are read through the name it was reached by, and it counts as written by the server (red team 13, cases 02-04).
 */
export const isAnon = (p: string): boolean => !$.startsWith(p, '/') || $.endsWith(p, ' (deleted)') || $.startsWith(p, '/memfd:');
/**
 * realOrWhy, and for a name that opens a file whose real path names none — a memfd or an unlinked file reached
 * through /proc/self/fd/N, where realpath fails with ENOENT — the link's text, marked so that isAnon says so.
 */
export const realOrAnon = (p: string): string | null | { error: string } => {
  const r = realOrWhy(p);
  if (r !== null) return r;
  try {
    F.statSync(p);
  } catch {
    return null; // not there: the load itself fails
  }
  let t = p;
  try {
    t = F.readlinkSync(p);
  } catch {
    /* no link: named as given */
  }
  return isAnon(t) ? t : `${t} (deleted)`;
};
export const withSep = (d: string): string => ($.endsWith(d, path.sep) ? d : d + path.sep);
export const SELF = real(__filename) ?? __filename;
/**
 * While the guard installs itself (before any code of the server runs): its own requires of Node's internal modules
 * are allowed then only — after, a require naming the guard's file as its parent is no proof it is the guard's
 * (`Module._load('internal/vm', { filename: <this file> })`: red team 17).
 */
export const phase = { installing: true };
const REQUIRE_FLAG = `--require ${JSON.stringify(SELF)}`;

export function tokenize(s: string): string[] {
  // NODE_OPTIONS: space-separated, "double quotes" with \ escapes
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]);
  return out;
}

export const withOurOptions = (nodeOptions: string | undefined): string =>
  nodeOptions && nodeOptions.includes(REQUIRE_FLAG) ? nodeOptions : `${REQUIRE_FLAG} ${nodeOptions ?? ''}`.trim();
