// Native code for the load guard: a library about to be loaded (an addon, an SQLite extension, an OpenSSL engine, a
// program started from a writable place) is checked with every library it needs that the dynamic loader would find in
// a writable place, recursively; once native code from a writable place runs, every file of the workspace and the
// scratch folders named like a native library must be as approved (it may dlopen() any of them unseen). Also the
// hooks that route process.dlopen and crypto.setEngine through these checks.
import fs = require('node:fs');
import path = require('node:path');
import { ACTIVE, cryptoParts, F, hasOwn, isAnon, real, realOrAnon, realOrWhy } from './base';
import { failRoot, getConfig, readOnlyMount, writable } from './manifest';
import { check, refuse } from './verdict';
import { NO_DYNAMIC, readElfDynamic } from './elf';

// ------------------------------------------------------------------------------------------- native libraries
// A native library runs code as it loads (ELF constructors), and the dynamic loader loads what it needs by itself:
// the libraries named in its DT_NEEDED entries, found along its DT_RPATH / DT_RUNPATH ($ORIGIN: its own folder),
// LD_LIBRARY_PATH and the system's folders. None of those loads reaches process.dlopen. So every library about to
// be loaded — an addon (process.dlopen), an SQLite extension (node:sqlite's loadExtension), an OpenSSL engine
// (crypto.setEngine) — is checked like an addon, and its dynamic section is read: each library it needs that is
// found in a writable place (the workspace, a scratch folder) is checked too, and read in turn (red team 6n, 01–03).
// One in a writable place that cannot be read as an ELF shared library, or needs what cannot be resolved, is refused.

/** LD_LIBRARY_PATH as the dynamic loader read it when this process started (a later change does not reach it). */
export const START_LIBRARY_PATH =
  (process.env.LD_LIBRARY_PATH ?? '') === '' ? [] : process.env.LD_LIBRARY_PATH!.split(/[:;]/).map((d) => path.resolve(d));
const ELF_DEPTH = 8; // libraries needed by libraries needed by … an addon
const ELF_MAX = 512; // libraries looked at for one load

function nativeRefusal(p: string, how: string, tail: string): never {
  const cfg = getConfig();
  const rel = cfg && p.startsWith(cfg.root) ? p.slice(cfg.root.length).split(path.sep).join('/') : null;
  refuse({ p, rel, why: cfg && rel !== null && hasOwn(cfg.files, rel) ? 'changed' : 'new', sum: '', how, tail });
}

/** A search folder of DT_RPATH / DT_RUNPATH with $ORIGIN expanded (each origin), or null when it names another token. */
function expandSearch(entry: string, origins: string[]): string[] | null {
  if (!entry.includes('$')) return [path.resolve(entry)]; // relative: to the working folder, as ld.so does
  const out: string[] = [];
  for (const o of origins) {
    const e = entry.replace(/\$\{ORIGIN\}|\$ORIGIN(?![A-Za-z0-9_])/g, o);
    if (e.includes('$')) return null;
    out.push(path.resolve(e));
  }
  return out;
}

/** Every file a needed name may be found as in one search folder (glibc's hwcaps subfolders included). */
function inFolder(dir: string, name: string): string[] {
  const out = [path.join(dir, name)];
  const sub = (d: string, depth: number): void => {
    let list: fs.Dirent[];
    try {
      list = F.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of list) {
      if (!e.isDirectory() && !e.isSymbolicLink()) continue;
      const inHwcaps = path.basename(d) === 'glibc-hwcaps';
      if (
        !inHwcaps &&
        !/^(glibc-hwcaps|tls|x86_64|i[3-6]86|haswell|xeon_phi|avx512_1|sse2|aarch64|v[5-8]l?|power\d+|ppc64(le)?|s390x?|z\d+)$/.test(e.name)
      )
        continue;
      out.push(path.join(d, e.name, name));
      if (depth < 3) sub(path.join(d, e.name), depth + 1);
    }
  };
  if (writable(real(dir) ?? dir)) sub(dir, 1);
  return out;
}

/**
 * Checks a native library about to be loaded (by the name given to dlopen) and, on Linux, every library it needs
 * that lies in a writable place, recursively. `name` without a `/` is looked for as the dynamic loader does
 * (LD_LIBRARY_PATH; the system's folders are no writable place). `libPath`: the LD_LIBRARY_PATH the loading process
 * has (a child's, for a program it starts); `program`: `name` is a program about to be started (a static one has no
 * dynamic section; its PT_INTERP loader is checked like a library). When one of the files is in a writable place,
 * every native library of the workspace and the scratch folders must be as approved too (nativeLibsAsApproved).
 */
export function checkNative(name: string, how: string, libPath: string[] = START_LIBRARY_PATH, program = false): void {
  if (!ACTIVE || typeof name !== 'string' || name === '') return;
  const seen = new Set<string>();
  let anyWritable = false;
  const visit = (lexical: string, inherited: string[], depth: number): void => {
    const rp = realOrAnon(lexical);
    // A name whose real path cannot be found (longer than PATH_MAX: dlopen may still open it by a shorter relative
    // name, as the server gave it) cannot be checked: refused.
    if (rp !== null && typeof rp !== 'string')
      nativeRefusal(
        path.resolve(lexical),
        how,
        `its real path cannot be found to be checked (${rp.error}), and native code the guard cannot check is refused`,
      );
    const p = rp;
    if (p === null || seen.has(p)) return; // missing: the load itself fails
    const mine = writable(p);
    if (seen.size >= ELF_MAX || depth > ELF_DEPTH) {
      if (mine)
        nativeRefusal(p, how, `it is needed through more than ${ELF_DEPTH} levels or ${ELF_MAX} libraries, more than the guard follows`);
      return;
    }
    seen.add(p);
    if (mine) anyWritable = true;
    const src = isAnon(p) ? lexical : p; // a memfd or an unlinked file opens only by the name given
    check(src, how);
    if (process.platform !== 'linux') return;
    const dyn = readElfDynamic(src);
    if (typeof dyn === 'string') {
      if (program && depth === 0 && (dyn === NO_DYNAMIC || dyn === 'it is not an ELF file')) return; // static, or a script
      if (mine) nativeRefusal(p, how, `it is loaded as native code but the guard cannot read it as an ELF shared library: ${dyn}`);
      return;
    }
    if (program && depth === 0 && dyn.interp) {
      const ri = real(dyn.interp);
      if (ri !== null && writable(ri)) visit(dyn.interp, [], depth + 1);
    }
    const origins = [...new Set([path.dirname(path.resolve(lexical)), path.dirname(p)])];
    const expand = (list: string[]): string[] =>
      list.flatMap((e) => {
        const r = expandSearch(e, origins);
        if (r === null) {
          if (mine || writable(path.resolve(e.slice(0, e.indexOf('$')) || '/')))
            nativeRefusal(p, how, `its library search path ${JSON.stringify(e)} names a token the guard does not resolve`);
          return [];
        }
        return r;
      });
    // DT_RPATH (this object's, and its loaders', unless it has DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH.
    const rpath = dyn.runpath.length ? [] : [...expand(dyn.rpath), ...inherited];
    const dirs = [...rpath, ...libPath, ...expand(dyn.runpath)];
    for (const need of dyn.needed) {
      const cands = need.includes('/') ? [path.resolve(need)] : dirs.flatMap((d) => inFolder(d, need));
      for (const c of cands) {
        const rc = realOrWhy(c);
        if (rc !== null && (typeof rc !== 'string' || writable(rc))) visit(c, rpath, depth + 1);
      }
    }
  };
  const p = name.includes('/') ? path.resolve(name) : null;
  if (p !== null) visit(p, [], 0);
  else for (const d of libPath) for (const c of inFolder(d, name)) visit(c, [], 0);
  if (anyWritable) nativeLibsAsApproved(how);
}

/** Names the dynamic loader's users give native libraries: `*.so`, `*.so.<version>`, `*.node`. */
const NATIVE_NAME = /\.(so(\.[0-9A-Za-z_.-]*)?|node)$/;
/** Entries (files, folders, links) one walk looks through in each tree: the workspace, and each scratch folder. */
export const NATIVE_WALK_MAX = 2_000_000;
/** A walk that passed stands for this long in this process: a later native load re-checks only what it found. */
export const NATIVE_REWALK_MS = 60_000;
let nativeWalk: { roots: string; at: number; found: string[] } | null = null; // the last walk that passed
let nativeWalked = ''; // the stat keys of the files it found when they last passed

/** A file recorded unhashed (over 256 MiB): its size, modification time and inode as the approval recorded them. */
function largeAsApproved(abs: string, rel: string): boolean | null {
  const cfg = getConfig()!;
  let big: fs.BigIntStats;
  try {
    big = F.lstatSync(abs, { bigint: true }) as fs.BigIntStats;
  } catch {
    return null; // gone
  }
  const rec = hasOwn(cfg.large, rel) ? cfg.large[rel] : undefined;
  return (
    !!rec &&
    rec.size === Number(big.size) &&
    String(rec.mtimeNs) === String(big.mtimeNs) &&
    (rec.ino === undefined || String(rec.ino) === String(big.ino))
  );
}

/**
 * Native code from a writable place is about to run, and it may dlopen() any library by itself (a plugin named at
 * run time, red team 7n case 04), which no hook sees: every file of the workspace and the scratch folders with a
 * native library's name must be as approved — a workspace one recorded with the same digest (one over 256 MiB with
 * the same size, time and inode), a scratch one a copy of approved content — and no such name may be a link made
 * or retargeted since approval. A library with another name that native code loads is not seen (docs/concepts.md).
 * The folders are walked at most once every NATIVE_REWALK_MS per process, NATIVE_WALK_MAX entries per tree.
 */
export function nativeLibsAsApproved(how: string): void {
  const cfg = getConfig();
  const why = `${how}: native code from a writable place may load any library beside it`;
  if (!cfg) refuse({ p: failRoot ?? '(workspace)', rel: null, why: 'manifest', sum: '', how: why });
  const rule = `native code from a writable place was loaded (${how}), and it may dlopen() any library of the workspace, /tmp or the HOME by itself where no hook sees it, so every file named like a native library there (*.so, *.so.*, *.node) must be as approved`;
  const head = { head: `refused ${how}: ${rule}`, rule };
  const tops = [cfg.rootDir, ...cfg.scratch.filter((s) => !readOnlyMount(s)).map((s) => s.slice(0, -1) || '/')];
  const roots = tops.join('\0');
  let found: string[];
  if (nativeWalk && nativeWalk.roots === roots && Date.now() - nativeWalk.at < NATIVE_REWALK_MS) found = nativeWalk.found;
  else {
    const seen = new Set<string>();
    const walk = (dir: string, depth: number, top: string, count: { n: number }): void => {
      let list: fs.Dirent[];
      try {
        list = F.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const d of list) {
        if (++count.n > NATIVE_WALK_MAX || depth > 64) {
          const bound =
            depth > 64
              ? `${top} has folders nested more than 64 deep, more than the guard's walk for native libraries goes (a size bound)`
              : `${top} holds more than ${NATIVE_WALK_MAX.toLocaleString('en-US')} entries (files, folders, links), the size bound of the guard's walk for native libraries`;
          const tail = `${rule}; ${bound}, so they cannot all be checked`;
          refuse({ p: top, rel: null, why: 'sink', sum: '', how: why, tail, rule: tail });
        }
        const abs = path.join(dir, d.name);
        if (d.isDirectory()) {
          // (.git is no library's home; the workspace is walked once, also when it lies in a scratch folder)
          if (!(dir === cfg.rootDir && d.name === '.git') && (top === cfg.rootDir || abs !== cfg.rootDir)) walk(abs, depth + 1, top, count);
          continue;
        }
        if (!NATIVE_NAME.test(d.name)) continue;
        if (d.isSymbolicLink()) {
          if (!abs.startsWith(cfg.root)) continue; // a scratch link: its target, if named so, is walked where it is
          const rel = abs.slice(cfg.root.length).split(path.sep).join('/');
          let text = '';
          try {
            text = F.readlinkSync(abs);
          } catch {
            /* unreadable */
          }
          if (!hasOwn(cfg.links, rel) || cfg.links[rel] !== text)
            refuse({
              p: abs,
              rel,
              why: hasOwn(cfg.links, rel) || hasOwn(cfg.files, rel) ? 'changed' : 'new',
              sum: '',
              how: `${why} (a symbolic link)`,
              ...head,
            });
          continue;
        }
        if (d.isFile()) seen.add(abs);
      }
    };
    for (const top of tops) walk(top, 0, top, { n: 0 });
    // Recorded ones that the walk could not list (an unreadable folder) are looked at by name.
    for (const rel of Object.keys(cfg.files)) if (NATIVE_NAME.test(rel)) seen.add(path.join(cfg.rootDir, ...rel.split('/')));
    found = [...seen];
    nativeWalk = null;
  }
  const keys: string[] = [];
  for (const f of found) {
    try {
      const st = F.lstatSync(f);
      keys.push(`${f}:${st.ino}:${st.size}:${st.mtimeMs}`);
    } catch {
      keys.push(f);
    }
  }
  const key = keys.join('\n');
  if (key !== nativeWalked) {
    for (const f of found) {
      const rel = f.startsWith(cfg.root) ? f.slice(cfg.root.length).split(path.sep).join('/') : null;
      if (rel !== null && hasOwn(cfg.files, rel) && cfg.files[rel] === 'too-large') {
        // not hashed at approval: as approved while its size, time and inode are the recorded ones (none: changed)
        if (largeAsApproved(f, rel) === false)
          refuse({ p: f, rel, why: 'changed', sum: '', how: why, tail: 'it changed since approval (its size, time or inode)', ...head });
        continue;
      }
      check(f, why, undefined, false, head); // (one gone since is no load)
    }
    nativeWalked = key;
  }
  if (!nativeWalk || nativeWalk.roots !== roots) nativeWalk = { roots, at: Date.now(), found };
}

/** Native addons (process.dlopen) and OpenSSL engines (crypto.setEngine) checked before they load. */
export function installNative(): void {
  // Native addons.
  const dlopen = process.dlopen;
  process.dlopen = function (this: unknown, module: object, filename: string, ...rest: unknown[]) {
    // A name that is no string (a Buffer, an object with toString) is made one once, here, as Node's own dlopen
    // would make it: that string is checked and loaded (it was loaded unchecked).
    const name: unknown = typeof filename === 'string' || filename == null ? filename : `${filename as string}`;
    if (typeof name === 'string') checkNative(name, 'dlopen');
    return (dlopen as (...a: unknown[]) => void).call(this, module, name, ...rest);
  } as typeof process.dlopen;

  // OpenSSL engines: a path, else a name OpenSSL's dynamic engine looks for (OPENSSL_ENGINES, as set when called;
  // the dynamic loader's LD_LIBRARY_PATH). Wrapped in crypto's internal util module when the guard has it
  // (base.ts cryptoParts), before node:crypto takes its setEngine from there, so node:crypto need not load now;
  // node:crypto's own too when it was loaded already, or the guard has no internal module.
  const targets: Record<string, unknown>[] = [];
  if (cryptoParts.util) targets.push(cryptoParts.util);
  if (!cryptoParts.util || (process as unknown as { moduleLoadList: string[] }).moduleLoadList.includes('NativeModule crypto'))
    targets.push(require('node:crypto') as Record<string, unknown>);
  for (const C of targets) wrapSetEngine(C);
}

function wrapSetEngine(C: Record<string, unknown>): void {
  const setEngine = C.setEngine;
  if (typeof setEngine === 'function') {
    C.setEngine = function (this: unknown, engine: unknown, ...rest: unknown[]) {
      if (typeof engine === 'string' && engine !== '') {
        if (engine.includes('/')) checkNative(engine, 'crypto.setEngine');
        else {
          const dir = process.env.OPENSSL_ENGINES;
          for (const f of [engine, `${engine}.so`, `lib${engine}.so`]) {
            if (dir) checkNative(path.resolve(dir, f), 'crypto.setEngine');
            checkNative(f, 'crypto.setEngine');
          }
        }
      }
      return (setEngine as (...a: unknown[]) => void).call(this, engine, ...rest);
    };
  }
}
