// A raw client of the gateway's socket for the tests (./gateway/gateway-hostile.test.ts): it speaks the handshake of
// src/host/gateway/handshake.ts itself, so a test can hold connections open, send bytes as it likes, and see each
// line the gateway sends; and the relay run as VS Code runs it.
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import { RELAY_SCRIPT } from '../../../src/host/gateway/gateway';
import { HANDSHAKE_VERSION, nonce, proofOf } from '../../../src/host/gateway/handshake';

export type Line = { id?: unknown; result?: unknown; error?: { code: number; message: string }; mcpGate?: unknown; ok?: unknown };

/** One connection: its lines so far, a wait for the next ones, and whether it closed. */
export class RawConnection {
  readonly lines: Line[] = [];
  closed = false;
  private text = '';
  private waiters: Array<() => void> = [];

  constructor(readonly sock: net.Socket) {
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      this.text += d;
      let nl: number;
      while ((nl = this.text.indexOf('\n')) !== -1) {
        const l = this.text.slice(0, nl);
        this.text = this.text.slice(nl + 1);
        if (l.trim()) this.lines.push(JSON.parse(l) as Line);
      }
      this.wake();
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until `n` lines came (or the connection closed, or `ms` passed). */
  async until(n: number, ms = 5_000): Promise<Line[]> {
    const end = Date.now() + ms;
    while (this.lines.length < n && !this.closed && Date.now() < end) {
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, Math.max(1, end - Date.now())).unref();
      });
    }
    return this.lines;
  }

  /** Waits for the close (or `ms`). */
  async end(ms = 5_000): Promise<boolean> {
    const end = Date.now() + ms;
    while (!this.closed && Date.now() < end) await this.until(this.lines.length + 1, end - Date.now());
    return this.closed;
  }

  write(b: Buffer | string): void {
    this.sock.write(b);
  }

  destroy(): void {
    this.sock.destroy();
  }
}

export function rawConnect(where: string): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(where);
    sock.once('connect', () => resolve(new RawConnection(sock)));
    sock.once('error', reject);
  });
}

/**
 * A connection through the whole handshake as the relay makes it, for `key` with `token`: the gateway's proof is
 * checked, then the relay's sent. `lines` are the gateway's hello and its answer to the proof (its ok or a refusal).
 */
export async function handshaken(where: string, key: string, token: string): Promise<RawConnection> {
  const c = await rawConnect(where);
  const rn = nonce();
  c.write(`${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, key, nonce: rn })}\n`);
  const [hello] = await c.until(1);
  const h = hello as { nonce?: string; proof?: string } | undefined;
  if (!h?.nonce) return c;
  if (h.proof !== proofOf(token, 'gateway', key, rn, h.nonce)) throw new Error('the gateway did not prove it holds the token');
  c.write(`${JSON.stringify({ proof: proofOf(token, 'relay', key, rn, h.nonce) })}\n`);
  await c.until(2);
  return c;
}

/** Runs the relay for `key` with `env` (the gateway in this process must answer, so never spawnSync), `input` on its stdin. */
export function runRelay(
  key: string,
  env: Record<string, string>,
  input = '',
  ms = 15_000,
): Promise<{ status: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RELAY_SCRIPT, key], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stderr = '';
    let stdout = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    child.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr, stdout });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
