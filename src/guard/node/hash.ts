// Hashing for the load guard: the sha256 of text or bytes about to become code, and of a file read in chunks through
// a descriptor (any size; a FIFO or a device is no file's content and is reported unreadable), with the words said
// when a file exists but cannot be read to be checked. Node's crypto only, as the process had it at start.
import crypto = require('node:crypto');
import fs = require('node:fs');
import { F } from './base';
import type { Bytes } from './base';

export const sha256 = (data: Bytes): string => {
  const h = (crypto as unknown as { hash?: (alg: string, d: Bytes, enc: string) => string }).hash;
  return h ? h('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
};
const createHash = crypto.createHash;
const HASH_CHUNK = 1 << 20;

/**
 * The sha256 of a file's bytes, read in chunks through a descriptor (so any size: Node's readFileSync stops at
 * 2 GiB, where dlopen, execve and a shell do not — red team 8n, cases 01–02); null when it is no file to load (gone,
 * a folder); `{ error }` when it exists but cannot be read, or is no regular file (opened without blocking: a FIFO).
 */
export function hashFile(p: string): string | null | { error: string } {
  const code = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  let fd: number;
  try {
    fd = F.openSync(p, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(code(e)) ? null : { error: code(e) };
  }
  try {
    const st = F.fstatSync(fd);
    if (st.isDirectory()) return null;
    if (!st.isFile()) return { error: 'not a regular file' }; // (a FIFO, a device: its bytes are no file's content)
    const h = createHash('sha256');
    const b = Buffer.allocUnsafe(HASH_CHUNK);
    for (;;) {
      const n = F.readSync(fd, b, 0, b.length, null);
      if (n === 0) break;
      h.update(n === b.length ? b : b.subarray(0, n));
    }
    return h.digest('hex');
  } catch (e) {
    return { error: code(e) };
  } finally {
    try {
      F.closeSync(fd);
    } catch {
      /* closed */
    }
  }
}
export const UNREADABLE = (error: string): string =>
  `it exists but cannot be read to be checked (${error}), and a file the guard cannot check is refused`;

export const stripBOM = (s: string): string => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);
