// Hashing for the load guard: the sha256 of text or bytes about to become code, and of a file read in chunks through
// a descriptor (any size; a FIFO or a device is no file's content and is reported unreadable), with the words said
// when a file exists but cannot be read to be checked. Node's crypto only, as the process had it at start.
import fs = require('node:fs');
import { $, F } from './base';
import type { Bytes } from './base';

export const sha256 = (data: Bytes): string =>
  $.hash ? $.hash('sha256', data, 'hex') : $.hashDigest($.hashUpdate($.createHash('sha256'), data), 'hex');
const HASH_CHUNK = 1 << 20;
const { O_RDONLY, O_NONBLOCK } = fs.constants;

/**
 * The sha256 of a file's bytes, read in chunks through a descriptor (so any size: Node's readFileSync stops at
 * 2 GiB, where dlopen, execve and a shell do not — red team 8n, cases 01–02); null when it is no file to load (gone,
 * a folder); `{ error }` when it exists but cannot be read, or is no regular file (opened without blocking: a FIFO).
 */
export function hashFile(p: string): string | null | { error: string } {
  const code = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  let fd: number;
  try {
    fd = F.openSync(p, O_RDONLY | (O_NONBLOCK ?? 0));
  } catch (e) {
    const c = code(e);
    return c === 'ENOENT' || c === 'ENOTDIR' || c === 'EISDIR' ? null : { error: c };
  }
  try {
    const st = F.fstatSync(fd);
    if (st.isDirectory()) return null;
    if (!st.isFile()) return { error: 'not a regular file' }; // (a FIFO, a device: its bytes are no file's content)
    const h = $.createHash('sha256');
    const ab = new $.AB(HASH_CHUNK);
    const b = new $.U8(ab);
    for (;;) {
      const n = F.readSync(fd, b, 0, HASH_CHUNK, null);
      if (n === 0) break;
      $.hashUpdate(h, n === HASH_CHUNK ? b : new $.U8(ab, 0, n));
    }
    return $.hashDigest(h, 'hex');
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

export const stripBOM = (s: string): string => ($.charCodeAt(s, 0) === 0xfeff ? $.slice(s, 1) : s);
