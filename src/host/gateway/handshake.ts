// The chat gateway's handshake and the check of where its socket is, shared by the gateway (./gateway.ts) and the
// relay (./relay.ts); Node's modules only, so the relay stays a few KiB. Each server key has its own token, which
// never crosses the socket: the relay opens with a fresh nonce, the gateway answers with its own nonce and
// HMAC(token, gateway|key|nonces), and only once that is verified (in constant time) does the relay answer with
// HMAC(token, relay|key|nonces) and, after the gateway's ok, the MCP messages. A socket someone else placed at the
// gateway's path so learns neither the token nor a call. The path itself is checked first: its folder this user's,
// mode 0700, not a link, and every folder above it owned by root or this user and writable by no one else unless
// sticky (so no other user can move the folder aside and put a socket of theirs in its place).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The handshake's version (the `mcpGate` field of its lines). */
export const HANDSHAKE_VERSION = 2;
/** The longest line the gateway reads before a relay has proved it holds the token (the hello carries the key). */
export const MAX_HANDSHAKE_LINE_BYTES = 16 * 1024;
/** The longest line the relay reads before the gateway has proved it holds the token. */
export const MAX_GATEWAY_HELLO_BYTES = 4096;
/** How long the relay waits for the gateway to complete the handshake. */
export const HANDSHAKE_MS = 5_000;

/** A fresh nonce. */
export function nonce(): string {
  return randomBytes(24).toString('base64url');
}

/** True for a nonce as the other side must send it (base64url, 16 to 128 characters). */
export function isNonce(v: unknown): v is string {
  return typeof v === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(v);
}

/** What one side sends to prove it holds the key's token, bound to both nonces and to its role. */
export function proofOf(token: string, role: 'gateway' | 'relay', key: string, relayNonce: string, gatewayNonce: string): string {
  return createHmac('sha256', token)
    .update(JSON.stringify(['mcp-gate', role, key, relayNonce, gatewayNonce]))
    .digest('base64url');
}

/** A given proof compared with the expected one in constant time. */
export function sameProof(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const uid = () => (process.getuid ? process.getuid() : -1);

/** Why a folder above the socket's is not safe (another user could replace what is in it), or undefined. */
function unsafeParent(dir: string, st: fs.Stats): string | undefined {
  if (!st.isDirectory()) return `${dir} is not a folder`;
  if (st.uid !== 0 && st.uid !== uid()) return `${dir} belongs to another user (uid ${st.uid})`;
  if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) return `${dir} is writable by other users without the sticky bit`;
  return undefined;
}

/** The folders from the root down to `dir`. */
function chain(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    out.unshift(d);
    if (path.dirname(d) === d) return out;
  }
}

/**
 * Whether only this user can have placed a socket at `socketPath`: every folder above the socket's (as written, a
 * link followed to what it names, and as resolved) owned by root or this user and writable by no one else unless
 * sticky; then the socket's folder this user's, mode 0700, not a link ('gone' if it is not there: no other user can
 * make it there then); then the socket, if there, a socket of this user. A string says why not.
 */
export function checkSocketFolder(socketPath: string): 'ok' | 'gone' | { unsafe: string } {
  if (process.platform === 'win32') return 'ok';
  if (!path.isAbsolute(socketPath)) return { unsafe: 'the path is not absolute' };
  const dir = path.dirname(socketPath);
  try {
    const parent = path.dirname(dir);
    for (const d of chain(parent)) {
      const why = unsafeParent(d, fs.statSync(d));
      if (why) return { unsafe: why };
    }
    for (const d of chain(fs.realpathSync(parent))) {
      const why = unsafeParent(d, fs.lstatSync(d));
      if (why) return { unsafe: why };
    }
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (!st) return 'gone';
    if (st.isSymbolicLink()) return { unsafe: `its folder ${dir} is a symbolic link` };
    if (!st.isDirectory()) return { unsafe: `${dir} is not a folder` };
    if (st.uid !== uid()) return { unsafe: `its folder ${dir} belongs to another user (uid ${st.uid})` };
    if ((st.mode & 0o077) !== 0) return { unsafe: `its folder ${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)})` };
    const sock = fs.lstatSync(socketPath, { throwIfNoEntry: false });
    if (sock && (!sock.isSocket() || sock.uid !== uid())) return { unsafe: `${socketPath} is not a socket of this user` };
  } catch (e) {
    return { unsafe: `it cannot be checked (${e instanceof Error ? e.message : String(e)})` };
  }
  return 'ok';
}

/**
 * A reader of newline-delimited lines, each at most `limit()` bytes (the newline not counted) however the bytes
 * arrive: a longer line calls `over` (whether it arrives in one chunk or many) and nothing more is read; nor is
 * anything after `onLine` returns false.
 */
export function lineReader(limit: () => number, onLine: (line: Buffer) => boolean | void, over: () => void): (chunk: Buffer) => void {
  let parts: Buffer[] = [];
  let size = 0;
  let stopped = false;
  return (chunk) => {
    if (stopped) return;
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      if (size + (i - start) > limit()) {
        stopped = true;
        return over();
      }
      const piece = chunk.subarray(start, i);
      const line = parts.length ? Buffer.concat([...parts, piece]) : piece;
      parts = [];
      size = 0;
      start = i + 1;
      if (onLine(line) === false) {
        stopped = true;
        return;
      }
    }
    if (start < chunk.length) {
      size += chunk.length - start;
      if (size > limit()) {
        stopped = true;
        return over();
      }
      parts.push(chunk.subarray(start));
    }
  };
}
