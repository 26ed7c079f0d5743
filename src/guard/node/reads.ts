// fs as the server calls it, for the load guard (taken.ts says what counts as taking in): every function of fs and
// fs/promises that takes a name, wrapped once from one table — reads take in, creating writes make a file the
// process's own, a copy, move or link onto one disowns it, listings and link reads are compared, and every name
// handed over is a name looked at (its metadata, compared when text is about to turn into code).
import fs = require('node:fs');
import Module = require('node:module');
import path = require('node:path');
import { $, F } from './base';
import { created, disown, isThere, linkRead, listed, lookedAt, noteOwn, removed, timesLookedAt, took, tookIn } from './taken';

// ------------------------------------------------------------------------------------------- fs, as the server calls it
type Fn = (...a: unknown[]) => unknown;
const { O_WRONLY, O_TRUNC, O_CREAT, O_EXCL } = fs.constants;

/** An open with these flags fails when the file is there (`x`, O_CREAT|O_EXCL). */
function exclusive(flags: unknown): boolean {
  if (typeof flags === 'number') return (flags & (O_CREAT | O_EXCL)) === (O_CREAT | O_EXCL);
  return typeof flags === 'string' && $.indexOf(flags, 'x') >= 0;
}

/** What an open with these flags does to the file: creates or truncates it (own), or reads it. */
function openKind(flags: unknown): 'own' | 'read' | 'write' {
  if (flags === undefined || flags === null) return 'read';
  if (typeof flags === 'number') {
    if (flags & O_TRUNC || (flags & (O_CREAT | O_EXCL)) === (O_CREAT | O_EXCL)) return 'own';
    return (flags & 3) === O_WRONLY ? 'write' : 'read';
  }
  const f = String(flags);
  if ($.indexOf(f, 'w') >= 0 || $.indexOf(f, 'x') >= 0) return 'own';
  return $.indexOf(f, 'r') >= 0 || $.indexOf(f, '+') >= 0 ? 'read' : 'write';
}

const apply = Reflect.apply; // taken at start: the server may replace Function.prototype.apply
const BufferFrom = Buffer.from;
/** A path argument as fs will take it, fixed now: a file: URL as its path, a Buffer as a copy; anything else as given. */
function plainPath(x: unknown): unknown {
  if (x instanceof URL) {
    try {
      return $.fileURLToPath(x);
    } catch {
      return x;
    }
  }
  if ($.isUint8Array(x)) return apply(BufferFrom, Buffer, [x]);
  return x;
}

function wrap(
  obj: Record<string, unknown> | undefined,
  key: string,
  before?: (a: unknown[]) => void,
  after?: (a: unknown[], r: unknown) => void,
  paths = 1,
): void {
  const orig = obj?.[key];
  if (!obj || typeof orig !== 'function') return;
  const w = {
    [key](this: unknown, ...a: unknown[]): unknown {
      // the paths made plain once (a URL's getters, a Buffer the server still holds): what is checked is what is read
      // and each is a name looked at (whether it is there, and what, is metadata the call tells)
      for (let i = 0; i < paths && i < a.length; i++) {
        a[i] = plainPath(a[i]);
        lookedAt(a[i]);
      }
      before?.(a);
      if (!after) return apply(orig as Fn, this, a);
      const last = a.length - 1;
      if (last >= 0 && typeof a[last] === 'function') {
        // callback form: what it hands back is looked at before the callback sees it
        const cb = a[last] as Fn;
        a[last] = function (this: unknown, err: unknown, r: unknown, ...rest: unknown[]) {
          if (!err) after(a, r);
          return apply(cb, this, [err, r, ...rest]);
        };
        return apply(orig as Fn, this, a);
      }
      const r = apply(orig as Fn, this, a);
      if (r && typeof (r as Promise<unknown>).then === 'function') {
        return (r as Promise<unknown>).then((v) => {
          after(a, v);
          return v;
        });
      }
      after(a, r);
      return r;
    },
  }[key];
  Object.defineProperty(w, 'length', { value: (orig as Fn).length });
  obj[key] = w;
}

let both: ((o: Record<string, unknown>, sync?: string) => void) | null = null;
const promisesDone = new Set<unknown>();
/** fs/promises' functions wrapped as fs's are, once (the module object is fs.promises). */
export function guardFsPromises(p: unknown): void {
  if (!both || !p || typeof p !== 'object' || promisesDone.has(p)) return;
  promisesDone.add(p);
  both(p as Record<string, unknown>);
  Module.syncBuiltinESMExports();
}

// ------------------------------------------------------------------------------------------- what each call does
// A read is looked at when asked and again when done (what was there when the bytes were read, red team 15, 04i).
const read = (a: unknown[]): void => tookIn(a[0]);
const readDone = (a: unknown[]): void => tookIn(a[0]);
// A file becomes its own only once the open that creates or truncates it succeeded (a failed `wx` open of a changed
// file made it "own": red team 15, 04e–g).
// Whether the name was there before a write (an append that creates the file makes it its own, red team 16 h04).
const there = new WeakMap<unknown[], boolean>();
const opening = (a: unknown[]): void => {
  const k = openKind(a[1]);
  if (k === 'read') tookIn(a[0]);
  else if (k === 'write') there.set(a, isThere(a[0]));
};
/** A FileHandle's stat (fs/promises) shows times too: its class, patched once when the first handle is seen (c04). */
let handlesDone = false;
function guardHandle(h: unknown): void {
  if (handlesDone || !h || typeof h !== 'object' || typeof (h as { fd?: unknown }).fd !== 'number') return;
  const proto = Object.getPrototypeOf(h) as Record<string, unknown> | null;
  const stat = proto?.stat;
  if (!proto || typeof stat !== 'function') return;
  handlesDone = true;
  proto.stat = function (this: { fd?: unknown }, ...a: unknown[]) {
    timesLookedAt(this?.fd);
    return apply(stat as Fn, this, a);
  };
}
const opened = (a: unknown[], r?: unknown): void => {
  guardHandle(r);
  const k = openKind(a[1]);
  if (k === 'own') (exclusive(a[1]) ? created : noteOwn)(a[0]);
  else if (k === 'read') tookIn(a[0]);
  else if (there.get(a) === false) created(a[0]);
};
const flagOf = (o: unknown, key: 'flag' | 'flags'): unknown =>
  typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[key] : undefined;
const writingWith =
  (dflt: string) =>
  (a: unknown[]): void => {
    const k = openKind(flagOf(a[2], 'flag') ?? dflt);
    if (k === 'read') tookIn(a[0]);
    else if (k === 'write') there.set(a, isThere(a[0]));
  };
const writtenWith =
  (dflt: string) =>
  (a: unknown[]): void => {
    const flag = flagOf(a[2], 'flag') ?? dflt;
    const k = openKind(flag);
    if (k === 'own') (exclusive(flag) ? created : noteOwn)(a[0]);
    else if (k === 'read') tookIn(a[0]);
    else if (there.get(a) === false) created(a[0]);
  };
const writing = writingWith('w');
const written = writtenWith('w');
const appending = writingWith('a');
const appended = writtenWith('a');
// a copy, a move or a link puts other content under the destination's name: it is no longer what the process wrote
const replaced = (a: unknown[]): void => disown(a[1]);
const list = (a: unknown[], r: unknown): void => listed(a[0], r);
const link = (a: unknown[], r: unknown): void => linkRead(a[0], r);
const unplaced = (): void => {
  if (copying > 0) return; // (cpSync's own opendir: its names were compared before it, copyTree)
  took.started = true; // names or bytes this cannot place: the whole workspace is compared at the next compile
};
/**
 * cpSync: Node 20's own copy lists the source's folders with opendir, which alone counts as started, and then a
 * README edit refused the next compile (red team 20, r08: a workspace folder copied to scratch). The names it copies
 * are compared first instead, as a listing of each folder of the source (at most COPY_NAMES; more: started).
 */
let copying = 0;
const COPY_NAMES = 10_000;
function copyTree(src: unknown): void {
  let count = 0;
  const walk = (dir: string, depth: number): boolean => {
    let entries: fs.Dirent[];
    try {
      if (!F.lstatSync(dir).isDirectory()) return true;
      entries = F.readdirSync(dir, { withFileTypes: true }) as fs.Dirent[];
    } catch {
      return true; // (not there, no folder: the copy fails or copies one file, which it reads itself)
    }
    count += entries.length;
    if (count > COPY_NAMES || depth > 64) return false;
    listed(dir, entries);
    for (const e of entries) if (e.isDirectory() && !walk(path.join(dir, e.name), depth + 1)) return false;
    return true;
  };
  let name: string | null = null;
  try {
    name = typeof src === 'string' ? src : src instanceof URL ? $.fileURLToPath(src) : null;
  } catch {
    name = null;
  }
  if (name === null || !walk(path.resolve(name), 0)) took.started = true;
}
const times = (a: unknown[]): void => timesLookedAt(a[0]);
// a folder it made, a name it removed: what is (not) there is its own doing
// (mkdir with recursive answers the first folder it made: each from there down is its own)
const made = (a: unknown[], r: unknown): void => {
  if (typeof r === 'string' && typeof a[0] === 'string' && $.startsWith(a[0], r))
    for (let p = a[0]; p.length >= r.length; p = path.dirname(p)) {
      created(p);
      if (p === r || path.dirname(p) === p) break;
    }
  else created(a[0]);
};
const gone = (a: unknown[]): void => removed(a[0]);
const moved = (a: unknown[]): void => {
  disown(a[1]);
  removed(a[0]);
};

/** fs and fs/promises as the server calls them: reads take in, creating writes make a file its own. */
export function installReads(): void {
  const f = fs as unknown as Record<string, unknown>;
  // each function of fs, wrapped in fs and fs/promises under its name and in fs under its name with `Sync`
  const FORMS: [string, ((a: unknown[]) => void) | undefined, ((a: unknown[], r: unknown) => void) | undefined, number][] = [
    ['readFile', read, readDone, 1],
    ['open', opening, opened, 1],
    ['writeFile', writing, written, 1],
    ['readdir', undefined, list, 1],
    ['readlink', undefined, link, 1],
    ['opendir', unplaced, undefined, 1],
    ['rename', replaced, moved, 2],
    // names looked at (noted by wrap: compared with the approval at the next compile); stat's show times too
    ...(['stat', 'lstat', 'fstat'].map((k) => [k, times, undefined, 1]) as [string, typeof times, undefined, number][]),
    ['access', times, undefined, 1], // (X_OK says the mode, which a chmod after approval set: its ctime tells)
    ['appendFile', appending, appended, 1],
    ['mkdir', undefined, made, 1],
    ...(['rm', 'rmdir', 'unlink'].map((k) => [k, undefined, gone, 1]) as [string, undefined, typeof gone, number][]),
    ...(['exists', 'realpath', 'statfs', 'truncate', 'chmod', 'lchmod', 'chown', 'lchown', 'utimes', 'lutimes'].map((k) => [
      k,
      undefined,
      undefined,
      1,
    ]) as [string, undefined, undefined, number][]),
    ['mkdtemp', undefined, (_a: unknown[], r: unknown) => noteOwn(r), 0],
    ['glob', unplaced, undefined, 0],
    ...(['copyFile', 'cp', 'link', 'symlink'].map((k) => [k, replaced, replaced, 2]) as [
      string,
      typeof replaced,
      typeof replaced,
      number,
    ][]),
  ];
  both = (o: Record<string, unknown>, sync = ''): void => {
    // (a synchronous read is looked at once: nothing runs between the look and the read)
    for (const [k, before, after, paths] of FORMS) {
      const orig = o[k + sync] as { native?: unknown } | undefined;
      wrap(o, k + sync, before, sync && after === readDone ? undefined : after, paths);
      // realpath.native and realpathSync.native: wrapped too, on the wrapper
      if (orig && typeof orig.native === 'function' && o[k + sync] !== orig) {
        const holder: Record<string, unknown> = { native: orig.native };
        wrap(holder, 'native', before, after, paths);
        (o[k + sync] as { native?: unknown }).native = holder.native;
      }
    }
    if (!sync) wrap(o, 'watch', unplaced);
  };
  both(f);
  // fs/promises is loaded on first use (loading it costs a start about 20 ms): wrapped then — through fs.promises, or
  // when `fs/promises` is asked for (guardFsPromises, from the require and import hooks)
  const d = Object.getOwnPropertyDescriptor(fs, 'promises');
  if (d && typeof d.get === 'function' && d.configurable) {
    const get = d.get;
    Object.defineProperty(fs, 'promises', {
      ...d,
      get(this: unknown) {
        const v = apply(get, this, []) as Record<string, unknown>;
        guardFsPromises(v);
        return v;
      },
    });
  } else guardFsPromises(fs.promises as unknown as Record<string, unknown>);
  both(f, 'Sync');
  wrap(f, 'watchFile', unplaced);
  const realCpSync = f.cpSync;
  if (typeof realCpSync === 'function')
    f.cpSync = function cpSync(this: unknown, ...a: unknown[]): unknown {
      copyTree(a[0]);
      copying++;
      try {
        return apply(realCpSync as Fn, this, a);
      } finally {
        copying--;
      }
    };
  // process.loadEnvFile reads a file in C++ into process.env, where code may take it from (red team 20, r01)
  const P = process as unknown as Record<string, unknown>;
  const envFile = P.loadEnvFile;
  if (typeof envFile === 'function')
    P.loadEnvFile = function loadEnvFile(this: unknown, ...a: unknown[]): unknown {
      tookIn(a[0] === undefined ? '.env' : a[0]);
      return apply(envFile as (...x: unknown[]) => unknown, this, a);
    };
  wrap(f, 'openAsBlob', read);
  wrap(f, 'createReadStream', read);
  wrap(f, 'createWriteStream', undefined, (a) => {
    // (the stream opens later: its file is its own only when it is not there yet, or is truncated by a `w` flag
    // that cannot fail for being there)
    const flag = flagOf(a[1], 'flags') ?? 'w';
    if (openKind(flag) === 'own' && $.indexOf(String(flag), 'x') < 0) noteOwn(a[0]);
  });
}
