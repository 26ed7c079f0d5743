// What a Node process of the server took in, for the load guard (src/guard/CONTRACT.md, "Text turned into code"):
// a file of the workspace or a scratch folder it read whose content is not as approved (not one it wrote itself
// first), a workspace link it read that was retargeted, a program or worker it started (which can feed it through a
// pipe or a message), or a parent that had. Text turned into code after that (strings.ts) is refused, naming the
// file, because transformed text (a file read through `cat`, base64, a JSON field) cannot be traced back to it.
// The same two variables as the Python guard's, so a mark crosses between Node and Python children.
import fs = require('node:fs');
import wt = require('node:worker_threads');
import { $, ACTIVE, F, hasOwn, isAnon, real, realOrAnon, withSep } from './base';
import { getConfig, inScratch, readOnlyMount, writable } from './manifest';
import { hashFile } from './hash';
import { publish, readTold, share, sharing, type Taken } from './told';

export const TOOK_IN_VAR = 'MCP_GATE_GUARD_TOOK_IN';
export const CHILD_VAR = 'MCP_GATE_GUARD_CHILD';

export type { Taken } from './told';

/** in: the first content taken in that is not as approved; started: ran a program or a worker, or was started by one. */
let inNow: Taken | null = null;
let started = false;
export const took: { in: Taken | null; started: boolean } = {
  get in(): Taken | null {
    return inNow;
  },
  set in(v: Taken | null) {
    inNow = v;
    publish(inNow, started); // (a loader thread told: told.ts)
  },
  get started(): boolean {
    return started;
  },
  set started(v: boolean) {
    started = v;
    publish(inNow, started);
  },
};

/** Shared memory for a loader thread this thread registers (module.register's data), kept up to date from now. */
export function shareTaken(): SharedArrayBuffer {
  const sab = share();
  settleLooked();
  publish(inNow, started);
  return sab;
}
/** The module Node's own loader is reading (its text is checked as code, not taken in), until it is compiled. */
export const quiet: { file: string | null } = { file: null };
const own = new Set<string>(); // real paths this process created or truncated before it took anything in
const gone = new Set<string>(); // of those, names it removed and has not made again: their absence only is its own
const known = new Map<string, { key: string; sum: string | null | { error: string } }>();

const toPosix = (rel: string): string => ($.sep === '/' ? rel : rel.split($.sep).join('/'));

/** The name a path argument of fs gives (a string, a Buffer, a file: URL); null for a descriptor or anything else. */
function nameOf(file: unknown): string | null {
  if (typeof file === 'string') return file;
  if ($.isUint8Array(file)) return Buffer.from(file as Uint8Array).toString();
  if (file instanceof URL) {
    try {
      return $.fileURLToPath(file);
    } catch {
      return null;
    }
  }
  return null;
}

/** How the real path p (read through `src`) differs from the approval: null when as approved, or no place of ours. */
function notAsApproved(p: string, src: string): Taken | null {
  const cfg = getConfig();
  if (cfg === null) return writable(p) ? { p, rel: null, why: 'manifest', sum: '' } : null;
  let rel: string | null = null;
  if (isAnon(p)) rel = null;
  else if ($.startsWith(p, cfg.root)) rel = toPosix($.slice(p, cfg.root.length));
  else if (!(inScratch(cfg, p) && !readOnlyMount(p))) return null;
  const want = rel !== null && hasOwn(cfg.files, rel) ? cfg.files[rel] : undefined;
  let st: fs.BigIntStats;
  try {
    st = F.statSync(src, { bigint: true }) as fs.BigIntStats;
  } catch {
    return null; // not there: nothing is read
  }
  if (st.isDirectory()) return null;
  if (want === 'too-large') {
    const rec = hasOwn(cfg.large, rel!) ? cfg.large[rel!] : undefined;
    const same =
      !!rec &&
      rec.size === Number(st.size) &&
      String(rec.mtimeNs) === String(st.mtimeNs) &&
      (rec.ino === undefined || String(rec.ino) === String(st.ino));
    return same ? null : { p, rel, why: 'changed', sum: '' };
  }
  const key = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  let hit = isAnon(p) ? undefined : known.get(p);
  if (!hit || hit.key !== key) {
    hit = { key, sum: hashFile(src) };
    if (!isAnon(p)) known.set(p, hit);
  }
  const sum = hit.sum;
  if (sum === null) return null;
  // a FIFO, a device, a file it cannot read: what it hands over is no approved content
  if (typeof sum !== 'string') return { p, rel, why: rel === null ? 'scratch' : want === undefined ? 'new' : 'changed', sum: '' };
  if (rel !== null) return want === sum ? null : { p, rel, why: want === undefined ? 'new' : 'changed', sum };
  return $.setHas(cfg.anyApproved, sum) ? null : { p, rel: null, why: 'scratch', sum };
}

/**
 * The file at p is as approved, in no place of ours, or not there. (Not "its own": a name this process removed is
 * its own, and a child may have written it since — git init in a folder it cleared.)
 */
export function asApproved(p: string): boolean {
  const rp = real(p);
  return rp === null || notAsApproved(rp, rp) === null;
}

/** A read of `file` (a name as fs takes it): the process took it in when it is not as approved. */
export function tookIn(file: unknown): void {
  if (!ACTIVE || took.in !== null) return;
  const name = nameOf(file);
  if (name === null || name === quiet.file) return;
  const rp = realOrAnon(name);
  if (rp === null) return; // not there: the read fails
  if (typeof rp !== 'string') {
    took.started = true; // cannot be placed: the whole workspace is compared at the next compile
    return;
  }
  if (isOwn(rp)) return;
  const t = notAsApproved(rp, isAnon(rp) ? name : rp);
  if (t !== null) took.in = t;
}

/** A file this process creates or truncates, before it took anything in, holds what it wrote: not a change. */
export function noteOwn(file: unknown): void {
  if (took.in !== null) return;
  const name = nameOf(file);
  if (name === null) return;
  const r = realOrBeside(name);
  if (r !== null) {
    $.setAdd(own, r);
    gone.delete(r);
  }
}

/** The approval had a file, a link or a folder under rel. */
function approvedName(rel: string): boolean {
  const cfg = getConfig();
  return cfg !== null && (hasOwn(cfg.files, rel) || hasOwn(cfg.links, rel) || approvedFolder(rel));
}

/**
 * A name the process created or removed becomes its own from now — unless what the call showed (`shows`, given the
 * name's rel when it is a workspace name not already its own) differs from the approval: that is taken in.
 */
function ownNow(file: unknown, shows: (rel: string, r: string) => Taken | null, removing = false): void {
  if (took.in !== null) return;
  const name = nameOf(file);
  if (name === null) return;
  const r = realOrBeside(name);
  if (r === null) return;
  const rel = $.setHas(own, r) ? null : relOf(r);
  const t = rel !== null && rel !== '' ? shows(rel, r) : null;
  if (t !== null) took.in = t;
  else {
    $.setAdd(own, r);
    if (removing) $.setAdd(gone, r);
    else gone.delete(r);
  }
}

/**
 * A name the process created where none was (an exclusive open, mkdir, an append that made the file): that none was
 * there shows an approved name gone (red team 16, c16, c21).
 */
export const created = (file: unknown): void =>
  ownNow(file, (rel, p) => (approvedName(rel) ? { p, rel, why: 'changed', sum: '', what: 'it was approved and is gone' } : null));

/** A name the process removed: it was there, so a name the approval does not have was content taken in. */
export const removed = (file: unknown): void =>
  ownNow(file, (rel, p) => (approvedName(rel) ? null : { p, rel, why: 'new', sum: '' }), true);

/** Whether a name is there (its last link not followed). */
export function isThere(file: unknown): boolean {
  const name = nameOf(file);
  if (name === null) return true;
  try {
    F.lstatSync(name);
    return true;
  } catch {
    return false;
  }
}

/** A name's real path, or for a name not there yet its real folder's path with the name (what an open will create). */
function realOrBeside(name: string): string | null {
  const r = real(name);
  if (r !== null) return r;
  const d = real($.dirname($.resolve(name)));
  return d === null ? null : d + $.sep + $.basename(name);
}

/**
 * A name whose content is no longer what this process wrote (a copy, a move or a link put other content there), and
 * every name below it: a folder copied, moved or linked onto one holding its own files (red team 20, r08, r11).
 */
export function disown(file: unknown): void {
  const name = nameOf(file);
  if (name === null) return;
  const r = realOrBeside(name);
  if (r === null) return;
  own.delete(r);
  // (only a folder has names below it: a file written and renamed into place, thousands of times, costs no walk of
  // every own name each time)
  let folder = false;
  try {
    folder = F.lstatSync(r).isDirectory();
  } catch {
    folder = false;
  }
  if (!folder) return;
  const below = withSep(r);
  for (const o of [...own]) if ($.startsWith(o, below)) own.delete(o);
}

/**
 * A file this process created or truncated before it took anything in (by its real path) — not a name it only
 * removed: whatever is there now another process wrote (a child's `git init`, a `mv`: red team 20, r10).
 */
export const isOwn = (p: string): boolean => $.setHas(own, p) && !$.setHas(gone, p);

/** A workspace link read (readlink): its text is content, not as approved when it is not the recorded text. */
export function linkRead(file: unknown, text: unknown): void {
  if (!ACTIVE || took.in !== null) return;
  const name = nameOf(file);
  const cfg = getConfig();
  if (name === null || cfg === null) return;
  const dir = real($.dirname($.resolve(name)));
  if (dir === null) return;
  const p = dir + $.sep + $.basename(name);
  if (!$.startsWith(p, cfg.root)) return;
  const rel = toPosix($.slice(p, cfg.root.length));
  const want = hasOwn(cfg.links, rel) ? cfg.links[rel] : undefined;
  const t = typeof text === 'string' ? text : $.isUint8Array(text) ? Buffer.from(text as Uint8Array).toString() : '';
  if (want !== t) took.in = { p, rel, why: want === undefined ? 'new' : 'changed', sum: '' };
}

/** A name a listing gives (a string, a Buffer, a Dirent whose name is either), or null. */
function entryName(n: unknown): string | null {
  if (typeof n === 'string') return n;
  if ($.isUint8Array(n)) return Buffer.from(n as Uint8Array).toString();
  if (n && typeof n === 'object') {
    const v = (n as { name?: unknown }).name;
    if (typeof v === 'string') return v;
    if ($.isUint8Array(v)) return Buffer.from(v as Uint8Array).toString();
  }
  return null;
}

/**
 * A folder of the workspace listed: a name that was not there at approval, an approved name no longer there, or an
 * entry of another kind than approved (withFileTypes) is content not as approved.
 */
export function listed(dir: unknown, names: unknown): void {
  if (!ACTIVE || took.in !== null || !Array.isArray(names)) return;
  const name = nameOf(dir);
  const cfg = getConfig();
  if (name === null || cfg === null) return;
  const d = real(name);
  if (d === null || !($.startsWith(d, cfg.root) || d === cfg.rootDir)) return;
  const relDir = d === cfg.rootDir ? '' : toPosix($.slice(d, cfg.root.length));
  const base = relDir === '' ? '' : relDir + '/';
  const there = new Set<string>();
  for (const n of names as unknown[]) {
    const s = entryName(n);
    if (s === null) continue;
    if ($.indexOf(s, '/') < 0 && $.indexOf(s, $.sep) < 0) there.add(s); // (a recursive listing: its first level)
    const rel = base + toPosix(s);
    if (base === '' && s === '.git') continue;
    const p = d + $.sep + s;
    if (isOwn(p)) continue;
    if (typeof n === 'object' && !$.isUint8Array(n) && typeChanged(n as fs.Dirent, rel)) {
      took.in = { p, rel, why: 'changed', sum: '', what: 'it is no longer the kind it was approved as (a file, a link, a folder)' };
      return;
    }
    if (hasOwn(cfg.files, rel) || hasOwn(cfg.links, rel) || approvedFolder(rel) || newFolderUncounted(p)) continue;
    took.in = { p, rel, why: 'new', sum: '' };
    return;
  }
  // an approved name gone from the listing (not one the process removed itself)
  const want = childrenOf(relDir);
  if (want)
    for (const n of want) {
      if (there.has(n) || (base === '' && n === '.git')) continue;
      const p = d + $.sep + n;
      if ($.setHas(own, p)) continue;
      took.in = { p, rel: base + n, why: 'changed', sum: '', what: 'it was approved and is gone' };
      return;
    }
}

/** A listed entry's kind (withFileTypes) is not what the approval had under its name. */
function typeChanged(e: fs.Dirent, rel: string): boolean {
  const cfg = getConfig();
  if (cfg === null) return false;
  try {
    if (hasOwn(cfg.files, rel)) return !e.isFile();
    if (hasOwn(cfg.links, rel)) return !e.isSymbolicLink();
    if (approvedFolder(rel)) return !e.isDirectory();
  } catch {
    return true;
  }
  return false;
}

/** The approval had a folder under rel: one holding files or links, or an empty one it recorded ('' is the root). */
export function approvedFolder(rel: string): boolean {
  const cfg = getConfig();
  return rel === '' || childrenOf(rel) !== undefined || (cfg !== null && cfg.folders !== null && $.setHas(cfg.folders, rel));
}

/**
 * A new folder whose name is not counted: with no record of the approval's empty folders (an older approval), one
 * holding nothing but folders and the process's own files; with one, none (a new folder's name is content too).
 */
function newFolderUncounted(p: string): boolean {
  const cfg = getConfig();
  if (cfg !== null && cfg.folders !== null) return false;
  return holdsNoFile(p, 0);
}

/** A folder (at any depth) with no file or link in it; false for anything else or a folder too deep to tell. */
function holdsNoFile(p: string, depth: number): boolean {
  if (depth > 8) return false;
  let list: fs.Dirent[];
  try {
    if (!F.lstatSync(p).isDirectory()) return false;
    list = F.readdirSync(p, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const e of list) {
    const full = p + $.sep + e.name;
    if (isOwn(full)) continue; // (what this process wrote there itself)
    if (!e.isDirectory() || !holdsNoFile(full, depth + 1)) return false;
  }
  return true;
}

// ------------------------------------------------------------------------------------------- names looked at
// Whether a name is there, a file's size, its times, a link's target: metadata an approved program can read a payload
// from (red team 14, cases 41–42: bits in which names exist, bytes in sizes), through any fs call that takes a name
// (stat, exists, access, realpath, a failed open or mkdir) or a resolution of Node's loader. Each name asked about is
// only noted here (absolute, as asked); what it shows is compared with the approval when text is about to turn into
// code (settleLooked), and the first name that differs is taken in.
const looked = new Set<string>();
const lookedTimes = new Set<string>(); // of those, names whose times were asked (stat, lstat, fstat)
const lookedDirs = new Set<string>(); // folders whose names a failed resolution looked through
const LOOKED_MAX = 8192; // more names than this: compared now, and forgotten (the memory a long run keeps is bounded)

/** A name fs was asked about. */
export function lookedAt(file: unknown): void {
  if (!ACTIVE || took.in !== null) return;
  const name = nameOf(file);
  if (name === null || name === '' || name === quiet.file) return;
  if (looked.size >= LOOKED_MAX) {
    settleLooked();
    if (took.in !== null) return;
  }
  $.setAdd(looked, $.resolve(name));
  if (sharing()) settleLooked(); // (a loader thread cannot ask for it later)
}

/** A name whose times fs was asked for (stat, lstat; fstat of a descriptor, by the file it is open on). */
export function timesLookedAt(file: unknown): void {
  if (!ACTIVE || took.in !== null) return;
  let name: string | null;
  if (typeof file === 'number') {
    const r = realOrAnon(`/proc/self/fd/${file}`);
    name = typeof r === 'string' ? r : null;
  } else name = nameOf(file);
  if (name === null || name === '' || name === quiet.file) return;
  if (lookedTimes.size >= LOOKED_MAX) {
    settleLooked();
    if (took.in !== null) return;
  }
  const abs = $.resolve(name);
  $.setAdd(looked, abs);
  $.setAdd(lookedTimes, abs);
  if (sharing()) settleLooked();
}

/** A folder whose names a lookup went through without finding one (a resolution that failed): its names count. */
export function lookedInto(dir: string): void {
  if (!ACTIVE || took.in !== null) return;
  if (lookedDirs.size >= LOOKED_MAX) {
    settleLooked();
    if (took.in !== null) return;
  }
  $.setAdd(lookedDirs, $.resolve(dir));
  if (sharing()) settleLooked();
}

/**
 * A resolution of Node's loader (require, require.resolve, import, import.meta.resolve): whether it found a file,
 * and which, is metadata as a stat's is. Found: the file is a name looked at. Not found: each place it could have
 * been (for a bare name, its package folder in each node_modules above the asking file) and the folders around it.
 */
export function resolutionLooked(request: string, parentFile: string | undefined, found: string | null, from?: unknown): void {
  if (!ACTIVE || took.in !== null) return;
  if (found !== null) {
    if ($.isAbsolute(found)) lookedAt(found);
    return;
  }
  const base = parentFile && $.isAbsolute(parentFile) ? $.dirname(parentFile) : process.cwd();
  let spec = request;
  if ($.startsWith(spec, 'file:')) {
    try {
      spec = $.fileURLToPath(spec);
    } catch {
      return;
    }
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(spec)) return; // node:, data:, http: — no file of the workspace
  const places: string[] = [];
  // (require.resolve's `paths` option: each is where a search starts, instead of the asking file's folder — c11)
  const starts = Array.isArray(from) ? from.filter((x): x is string => typeof x === 'string').map((x) => $.resolve(x)) : [base];
  const cfg = getConfig();
  for (const start of starts) {
    if ($.isAbsolute(spec) || /^\.\.?(?:[\\/]|$)/.test(spec)) places.push($.resolve(start, spec));
    else
      for (let d = start; ; d = $.dirname(d)) {
        if (cfg !== null && !$.startsWith(d + $.sep, cfg.root)) break;
        places.push($.resolve(d, 'node_modules', spec));
        if ($.dirname(d) === d) break;
      }
  }
  placesLooked(places);
}

/** Places a lookup tried and found nothing in (Module._findPath's): each, and the folders in and around it. */
export function placesLooked(places: string[]): void {
  if (!ACTIVE || took.in !== null) return;
  for (const c of places) {
    lookedAt(c);
    lookedInto(c);
    lookedInto($.dirname(c));
  }
}

/** Something may have been taken in: a file read, a program started, or names looked at not yet compared. */
export function mayHaveTakenIn(): boolean {
  const t = readTold(); // (in a loader thread: what the thread it loads for took in)
  if (t !== null) {
    if (t.in !== null && inNow === null) inNow = t.in;
    if (t.started) started = true;
  }
  return inNow !== null || started || looked.size > 0 || lookedDirs.size > 0;
}

/** Compares every name looked at with the approval: the first that differs is taken in. The names are then forgotten. */
export function settleLooked(): void {
  if (took.in === null) {
    for (const abs of looked) {
      const t = lookDiffers(abs);
      if (t !== null) {
        took.in = t;
        break;
      }
    }
  }
  if (took.in === null) {
    for (const d of lookedDirs) {
      const t = folderDiffers(d);
      if (t !== null) {
        took.in = t;
        break;
      }
    }
  }
  looked.clear();
  lookedTimes.clear();
  lookedDirs.clear();
}

/** rel of a real path inside the root ('' for the root itself), or null. */
function relOf(p: string): string | null {
  const cfg = getConfig();
  if (cfg === null) return null;
  if (p === cfg.rootDir) return '';
  return $.startsWith(p, cfg.root) ? toPosix($.slice(p, cfg.root.length)) : null;
}

/** Folders the approval holds files or links in (rel → the names directly in it). */
let children: Map<string, Set<string>> | null = null;
function childrenOf(rel: string): Set<string> | undefined {
  const cfg = getConfig();
  if (cfg === null) return undefined;
  if (children === null) {
    children = new Map();
    for (const k of [...Object.keys(cfg.files), ...Object.keys(cfg.links), ...(cfg.folders ?? [])]) {
      let from = 0;
      for (;;) {
        const i = k.indexOf('/', from);
        const dir = from === 0 ? '' : k.slice(0, from - 1);
        const name = i < 0 ? k.slice(from) : k.slice(from, i);
        let set = children.get(dir);
        if (!set) children.set(dir, (set = new Set()));
        set.add(name);
        if (i < 0) break;
        from = i + 1;
      }
    }
  }
  return children.get(rel);
}

/** The metadata of p changed after the approval's measure began (its ctime, which no program can set). */
function timesChanged(st: fs.BigIntStats): boolean {
  const since = getConfig()?.since;
  return typeof since === 'number' && Number(st.ctimeNs / 1000000n) > since;
}

const METADATA = 'its metadata (times, mode or owner) changed after approval, though not its content';

/** What the name abs (absolute, as asked) shows that the approval does not; null when it shows what was approved. */
function lookDiffers(abs: string): Taken | null {
  const cfg = getConfig();
  if (cfg === null) return { p: abs, rel: null, why: 'manifest', sum: '' };
  // where the name is: its folder's real path and its own name (a link there is looked at as a link)
  const dir = real($.dirname(abs));
  const here = dir === null ? abs : dir === $.sep ? dir + $.basename(abs) : dir + $.sep + $.basename(abs);
  // links of the workspace on the way (the folder part as named): each as recorded
  if (dir !== null && dir !== $.dirname(abs)) {
    const t = linksOnTheWay($.dirname(abs));
    if (t !== null) return t;
  }
  const rel = relOf(here);
  let st: fs.BigIntStats | null = null;
  try {
    st = F.lstatSync(here, { bigint: true }) as fs.BigIntStats;
  } catch {
    st = null;
  }
  if (rel === null) {
    // a scratch folder: a file there that this process did not write must hold approved content
    if (st === null || !st.isFile() || isOwn(here) || !inScratch(cfg, here) || readOnlyMount(here)) return null;
    return notAsApproved(here, here);
  }
  if ($.setHas(own, here) && (st === null || !$.setHas(gone, here))) return null; // (its own, or gone by its doing)
  const isFile = hasOwn(cfg.files, rel);
  const isLink = hasOwn(cfg.links, rel);
  const isFolder = approvedFolder(rel);
  if (st === null) {
    // gone: an approved file, link or folder no longer there
    return isFile || isLink || isFolder ? { p: here, rel, why: 'changed', sum: '', what: 'it was approved and is gone' } : null;
  }
  if (st.isSymbolicLink()) {
    let text: string | null = null;
    try {
      text = F.readlinkSync(here);
    } catch {
      text = null;
    }
    if (!isLink || cfg.links[rel] !== text) return { p: here, rel, why: isLink ? 'changed' : 'new', sum: '' };
  } else if (st.isDirectory()) {
    if (isFile || isLink) return { p: here, rel, why: 'changed', sum: '', what: 'it was approved as a file and is now a folder' };
    if (!isFolder && !newFolderUncounted(here)) return { p: here, rel, why: 'new', sum: '' };
  } else {
    if (!isFile) return { p: here, rel, why: 'new', sum: '' };
    const t = notAsApproved(here, here);
    if (t !== null) return t;
  }
  if (rel !== '' && $.setHas(lookedTimes, abs) && timesChanged(st)) return { p: here, rel, why: 'changed', sum: '', what: METADATA };
  return null;
}

/** The first link of the workspace on the path `dir` (absolute, as named) whose text is not the recorded one. */
function linksOnTheWay(dir: string): Taken | null {
  const cfg = getConfig();
  if (cfg === null || !$.startsWith(dir + $.sep, cfg.root)) return null;
  const parts = $.slice(dir, cfg.root.length).split($.sep);
  let at = cfg.rootDir;
  for (const part of parts) {
    if (part === '') continue;
    at = at + $.sep + part;
    let text: string;
    try {
      if (!F.lstatSync(at).isSymbolicLink()) continue;
      text = F.readlinkSync(at);
    } catch {
      return null;
    }
    const rel = toPosix($.slice(at, cfg.root.length));
    if (!hasOwn(cfg.links, rel) || cfg.links[rel] !== text) return { p: at, rel, why: hasOwn(cfg.links, rel) ? 'changed' : 'new', sum: '' };
    return null; // past an approved link: what it leads to is looked at by its own real path
  }
  return null;
}

/** A folder looked through (a resolution that found nothing): a name not approved there, or an approved one gone. */
function folderDiffers(d: string): Taken | null {
  const p = real(d);
  if (p === null) {
    const rel = relOf(d);
    return rel !== null && childrenOf(rel) !== undefined
      ? { p: d, rel, why: 'changed', sum: '', what: 'it was approved and is gone' }
      : null;
  }
  const rel = relOf(p);
  if (rel === null) return null;
  let names: string[];
  try {
    names = F.readdirSync(p);
  } catch {
    return null;
  }
  const want = childrenOf(rel);
  for (const n of names) {
    if (rel === '' && n === '.git') continue;
    const full = p + $.sep + n;
    if ((want && want.has(n)) || isOwn(full) || newFolderUncounted(full)) continue;
    return { p: full, rel: rel === '' ? n : `${rel}/${n}`, why: 'new', sum: '' };
  }
  if (want) {
    const there = new Set(names);
    for (const n of want) {
      const full = p + $.sep + n;
      if (!there.has(n) && !$.setHas(own, full))
        return { p: full, rel: rel === '' ? n : `${rel}/${n}`, why: 'changed', sum: '', what: 'it was approved and is gone' };
    }
  }
  return null;
}

/** The marks this process starts with: a child of a guarded process (it can be fed later), and what its parent took in. */
export function startMarks(): void {
  if (process.env[CHILD_VAR] || !wt.isMainThread) took.started = true;
  const inherited = process.env[TOOK_IN_VAR];
  if (inherited) {
    try {
      const t = JSON.parse(inherited) as unknown[];
      took.in = {
        p: String(t[0]),
        rel: typeof t[1] === 'string' ? t[1] : null,
        why: t[2] === 'new' || t[2] === 'scratch' ? t[2] : 'changed',
        sum: String(t[3] ?? ''),
      };
    } catch {
      took.in = { p: inherited, rel: null, why: 'changed', sum: '' };
    }
  }
}

/** The variables a child gets: it is a child of a guarded process, and what this one took in, if anything. */
export function childMarks(): string[] {
  took.started = true;
  const t = took.in;
  return [`${CHILD_VAR}=1`, ...(t ? [`${TOOK_IN_VAR}=${JSON.stringify([t.p, t.rel, t.why, t.sum])}`] : [])];
}
