// Hashing for the load guard: the sha256 of text or bytes about to become code, and of a file read in chunks through
// a descriptor (any size; a FIFO or a device is no file's content and is reported unreadable), with the words said
// when a file exists but cannot be read to be checked. Node's crypto only, as the process had it at start: the
// one-shot crypto.hash, else crypto's native handle by its own methods (base.ts sha256Handle), never a Hash object's
// methods, which look the handle's up when they run.
import fs = require('node:fs');
import { $, F, sha256Handle } from './base';
import type { Bytes } from './base';

export function sha256(data: Bytes): string {
  if ($.hash) return $.hash('sha256', data, 'hex');
  const h = sha256Handle();
  if (!h) throw new Error('this Node has neither crypto.hash nor a hash handle the guard can use');
  $.handleUpdate!(h, typeof data === 'string' ? $.fromUtf8(data) : data);
  return $.handleDigest!(h, 'hex');
}
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
    const h = sha256Handle();
    if (!h) {
      const [all] = F.readBytes(p); // (a Node with no handle: the file at once, so to the size a Buffer holds)
      return sha256(all);
    }
    const ab = new $.AB(HASH_CHUNK);
    const b = new $.U8(ab);
    for (;;) {
      const n = F.readSync(fd, b, 0, HASH_CHUNK, null);
      if (n === 0) break;
      $.handleUpdate!(h, n === HASH_CHUNK ? b : new $.U8(ab, 0, n));
    }
    return $.handleDigest!(h, 'hex');
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
