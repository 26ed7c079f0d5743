// Every file the gate looks at goes through one TrackingReader: it reads with a size bound, and remembers the
// signature (size, mtime, ctime, inode) of every path it read or looked for — including paths that were missing —
// so the gate cache can tell, by stats alone, whether anything it depended on changed. It also counts reads and
// stats, which the tests and the benchmark use to prove a warm re-check reads nothing.
import * as fs from 'node:fs';

export type Signature = string; // "missing" | "dir:<…>" | "file:<size>:<mtimeNs>:<ctimeNs>:<ino>"

export const MISSING: Signature = 'missing';

function signatureOf(st: fs.BigIntStats | undefined): Signature {
  if (!st) return MISSING;
  const kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
  return `${kind}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}:${st.dev}`;
}

function statSignature(path: string): Signature {
  try {
    return signatureOf(fs.statSync(path, { bigint: true, throwIfNoEntry: false }));
  } catch (e) {
    if (isNotFound(e)) return MISSING;
    return `error:${(e as NodeJS.ErrnoException).code ?? 'unknown'}`;
  }
}

export function isNotFound(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Counters shared by every reader, so a benchmark can measure what a re-check did. */
export const ioCounters = { reads: 0, stats: 0, readdirs: 0 };

export class FileTooLargeError extends Error {
  constructor(
    readonly path: string,
    readonly size: number,
    readonly limit: number,
  ) {
    super(`${path} is ${size} bytes; files over ${limit} bytes are refused`);
  }
}

export type ReadResult = { kind: 'missing' } | { kind: 'ok'; data: Buffer } | { kind: 'error'; error: Error };

export class TrackingReader {
  /** Path → signature at the time it was read or looked for. */
  readonly seen = new Map<string, Signature>();

  /** Reads a regular file of at most `limit` bytes; records its signature from the open descriptor. */
  read(path: string, limit: number): ReadResult {
    let fd: number;
    try {
      fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK); // a FIFO or device must not hang the gate
    } catch (e) {
      if (isNotFound(e)) {
        this.seen.set(path, MISSING);
        return { kind: 'missing' };
      }
      this.seen.set(path, statSignature(path));
      return { kind: 'error', error: e as Error };
    }
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      this.seen.set(path, signatureOf(st));
      if (!st.isFile()) return { kind: 'error', error: new Error(`${path} is not a regular file`) };
      if (st.size > BigInt(limit)) return { kind: 'error', error: new FileTooLargeError(path, Number(st.size), limit) };
      ioCounters.reads++;
      // Sized from fstat (plus one byte to see growth), not from the limit: an 8 MiB buffer per small file is
      // what made a cold check slow. A file that grows while it is read is read on, up to the limit.
      let buf = Buffer.allocUnsafe(Number(st.size) + 1);
      let total = 0;
      for (;;) {
        if (total === buf.length) {
          const bigger = Buffer.allocUnsafe(Math.min(limit + 1, buf.length * 2));
          buf.copy(bigger, 0, 0, total);
          buf = bigger;
        }
        const want = buf.length - total;
        const n = fs.readSync(fd, buf, total, want, null);
        if (n === 0) break;
        total += n;
        if (total > limit) return { kind: 'error', error: new FileTooLargeError(path, total, limit) };
        // A short read that reached the size fstat gave is the end: no second read to learn it (a file that grew
        // fills the extra byte and is read on).
        if (n < want && total >= Number(st.size)) break;
      }
      return { kind: 'ok', data: buf.subarray(0, total) };
    } catch (e) {
      return { kind: 'error', error: e as Error };
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Stats a path and records it (missing paths too). */
  stat(path: string): fs.BigIntStats | undefined {
    ioCounters.stats++;
    try {
      const st = fs.statSync(path, { bigint: true, throwIfNoEntry: false }); // no exception per missing path
      this.seen.set(path, signatureOf(st));
      return st;
    } catch (e) {
      this.seen.set(path, isNotFound(e) ? MISSING : statSignature(path));
      return undefined;
    }
  }

  /**
   * Looks at a path without following a final symbolic link. Records what `unchanged` compares (the followed
   * signature of the path) and the signature of its folder, whose change shows a link added or removed where
   * the followed signature stays "missing" (a dangling link).
   */
  lstat(path: string): fs.BigIntStats | undefined {
    ioCounters.stats++;
    if (!this.seen.has(path)) this.seen.set(path, statSignature(path));
    const dir = path.replace(/[\\/][^\\/]*$/, '') || '/';
    if (!this.seen.has(dir)) this.seen.set(dir, statSignature(dir));
    try {
      return fs.lstatSync(path, { bigint: true });
    } catch {
      return undefined;
    }
  }

  /** Lists a directory (names only) and records its signature; a missing directory lists nothing. */
  list(path: string): string[] {
    ioCounters.readdirs++;
    const st = this.stat(path);
    if (!st || !st.isDirectory()) return [];
    try {
      return fs.readdirSync(path).sort();
    } catch {
      return [];
    }
  }
}

/** True when every recorded path still has the signature it had; costs one stat per path, no reads. */
export function unchanged(seen: ReadonlyMap<string, Signature>): boolean {
  for (const [path, sig] of seen) {
    ioCounters.stats++;
    if (statSignature(path) !== sig) return false;
  }
  return true;
}
