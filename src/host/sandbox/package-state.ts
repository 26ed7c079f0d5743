// Where an npm-launched server keeps its state (issue 44, item 3): many write next to their own code (the memory
// server's `memory.jsonl` beside its `dist/index.js`), and MCP Gate runs a package from its verified, read-only tree.
// Each contained server gets a private copy of its own package folder (not its dependencies), kept between its
// starts in its own cache folder and bound read-write over that folder: what it writes there is found at its next
// start. Before every start the copy is brought back to the approved package: each approved file that is missing
// or differs is written again from the verified tree, and anything in the way (a link, a folder where a file
// belongs) is removed first — never followed, since the server may have planted links in its copy — so the code
// that runs is the approved code and only files the package does not have (its data) are kept. One copy per
// approved lock: an update starts from the new package. One start at a time holds a copy (`<copy>.lock`, the
// holder's pid): the copy is brought back while no process of the server can change it under the walk (a link
// swapped in between a check and a write), and a second start of the same server while one runs gets no copy —
// it runs from the read-only tree, as before.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';

/** A package folder larger than this is not copied (the server then runs read-only, as before). */
export const MAX_STATE_COPY_BYTES = 64 * 1024 * 1024;
export const MAX_STATE_COPY_FILES = 20_000;

export class StateCopyError extends Error {}

/** Same content, by size then bytes (the files are small: a package folder). */
function sameFile(a: string, b: string, size: number): boolean {
  try {
    const st = fs.lstatSync(b);
    if (!st.isFile() || st.size !== size) return false;
    return fs.readFileSync(a).equals(fs.readFileSync(b));
  } catch {
    return false;
  }
}

function removeAny(p: string): void {
  fs.rmSync(p, { recursive: true, force: true }); // a link is removed as itself, never followed
}

/**
 * Brings `copy` back to the approved package folder `pristine` (files written again where they differ, the rest
 * kept) and returns it. Throws StateCopyError when the package is over the bounds or the copy cannot be made.
 */
export function syncPackageState(pristine: string, copy: string): string {
  let files = 0;
  let bytes = 0;
  const walk = (rel: string): void => {
    const from = path.join(pristine, rel);
    const to = path.join(copy, rel);
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(to);
    } catch {
      st = undefined;
    }
    if (st && !st.isDirectory()) removeAny(to); // a file or a link where the package has a folder
    if (!st || !st.isDirectory()) fs.mkdirSync(to, { mode: 0o700 });
    for (const d of fs.readdirSync(from, { withFileTypes: true })) {
      const r = path.join(rel, d.name);
      const src = path.join(pristine, r);
      const dst = path.join(copy, r);
      if (d.isDirectory()) {
        walk(r);
        continue;
      }
      if (d.isSymbolicLink()) {
        const target = fs.readlinkSync(src);
        let same = false;
        try {
          same = fs.lstatSync(dst).isSymbolicLink() && fs.readlinkSync(dst) === target;
        } catch {
          same = false;
        }
        if (!same) {
          removeAny(dst);
          fs.symlinkSync(target, dst);
        }
        continue;
      }
      if (!d.isFile()) continue;
      const s = fs.statSync(src);
      if (++files > MAX_STATE_COPY_FILES || (bytes += s.size) > MAX_STATE_COPY_BYTES) {
        throw new StateCopyError(
          `its package folder ${pristine} holds more than ${MAX_STATE_COPY_FILES} files or ${MAX_STATE_COPY_BYTES / 1024 / 1024} MiB`,
        );
      }
      if (sameFile(src, dst, s.size)) continue;
      removeAny(dst);
      fs.copyFileSync(src, dst, fs.constants.COPYFILE_EXCL);
      fs.chmodSync(dst, s.mode & 0o755);
    }
  };
  try {
    fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o700 });
    walk('');
  } catch (e) {
    if (e instanceof StateCopyError) throw e;
    throw new StateCopyError(`its package's state folder ${copy} cannot be made: ${(e as Error).message}`);
  }
  return copy;
}

/**
 * Takes a server's own folder for this start — its package copy, or its own home (./contain.ts): undefined while
 * another start of the server holds it (its pid still running). Returns the release.
 */
export function holdStateFolder(copy: string): (() => void) | undefined {
  const lock = `${copy}.lock`;
  fs.mkdirSync(path.dirname(lock), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => fs.rmSync(lock, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
      let holder = NaN;
      try {
        holder = Number(fs.readFileSync(lock, 'utf8'));
      } catch {
        holder = NaN;
      }
      let alive = false;
      if (Number.isInteger(holder) && holder > 0) {
        try {
          process.kill(holder, 0);
          alive = true;
        } catch (err) {
          alive = (err as NodeJS.ErrnoException).code === 'EPERM';
        }
      }
      if (alive) return undefined;
      fs.rmSync(lock, { force: true }); // its holder ended without releasing it
    }
  }
  return undefined;
}

/** The sha256 of every regular file of a package folder (its own files, approved with its lock), at most the copy's bounds. */
export function packageHashes(pristine: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (d.isFile() && out.length < MAX_STATE_COPY_FILES) out.push(createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
    }
  };
  try {
    walk(pristine);
  } catch {
    // unreadable: nothing approved from it (its files then refuse to load from the copy)
  }
  return out;
}
