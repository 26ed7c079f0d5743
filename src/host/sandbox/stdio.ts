// Local servers: spawned without a shell, in their own process group, with a minimal environment (nothing
// inherited but what a program needs to start: PATH, HOME, locale, temp dir) plus the declaration's env and
// env-bound secrets. stdout carries JSON-RPC lines (bounded per message, read by ../jsonrpc.ts); stderr is kept,
// bounded, for the log.
// Stopping kills the whole process tree — the group and every descendant found in /proc — so servers started
// through npx, sh -c or uvx leave no orphans.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { descendants } from './processes';
// The minimal environment is defined with the launch plan (the image pin's runtime calls use it too).
export { INHERITED_ENV, minimalEnv } from '../../trust/plan/launch-plan';
import { serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { LineReader } from '../jsonrpc';

export const MAX_MESSAGE_BYTES = 1024 * 1024;
export const MAX_STDERR_BYTES = 64 * 1024;

export interface StdioLaunch {
  /** Absolute path of the program (from the launch plan); never looked up on PATH here. */
  command: string;
  /** argv[0] as the definition wrote it. */
  argv0?: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Bytes the program reads from fd 3 (a contained start: bubblewrap's seccomp filter, `--seccomp 3`). */
  seccomp?: Buffer;
  /**
   * A contained start with a network door (bubblewrap's `--info-fd 4 --block-fd 5`): called with the sandbox's first
   * process once bubblewrap reports it; the server starts only after it resolves, and not at all if it rejects.
   */
  door?: (pid: number) => Promise<void>;
}

/** The `child-pid` bubblewrap writes to its info fd, once the JSON object is complete (bounded: 64 KiB). */
function readChildPid(stream: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const fail = (why: string) => {
      stream.removeAllListeners('data');
      reject(new Error(`bubblewrap did not report its sandbox: ${why}`));
    };
    stream.on('error', (e: Error) => fail(e.message));
    stream.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      if (text.length > 65536) return fail('its report is too long');
      if (!text.includes('}')) return;
      stream.removeAllListeners('data');
      try {
        const pid = (JSON.parse(text) as { 'child-pid'?: unknown })['child-pid'];
        if (typeof pid === 'number' && Number.isInteger(pid) && pid > 0) resolve(pid);
        else fail(`no child-pid in ${JSON.stringify(text.slice(0, 200))}`);
      } catch (e) {
        fail(`${(e as Error).message} in ${JSON.stringify(text.slice(0, 200))}`);
      }
    });
    stream.once('end', () => fail('it ended before saying'));
  });
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** Kills a process, its group and all its descendants: SIGTERM, then SIGKILL after `graceMs`. */
export async function killTree(pid: number, graceMs = 1500): Promise<void> {
  const tree = [pid, ...descendants(pid)];
  signal(-pid, 'SIGTERM');
  for (const p of tree) signal(p, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  const alive = () =>
    tree.filter((p) => {
      try {
        process.kill(p, 0);
      } catch {
        return false;
      }
      // A zombie has ended; only its parent (or this machine's init) has yet to reap it.
      try {
        const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
      } catch {
        return true;
      }
    });
  while (Date.now() < deadline && alive().length) await new Promise((r) => setTimeout(r, 50));
  const rest = [...new Set([...alive(), ...descendants(pid)])];
  signal(-pid, 'SIGKILL');
  for (const p of rest) signal(p, 'SIGKILL');
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Called once the process runs, with its pid (before any message): a watch on it starts here. */
  onspawn?: (pid: number) => void;
  /** Called when the process ended by itself or was stopped: its exit code (null when a signal ended it). */
  onexit?: (code: number | null, signal: NodeJS.Signals | null) => void;

  private child?: ChildProcess;
  private readonly buffer = new LineReader(MAX_MESSAGE_BYTES);
  private stderrChunks: Buffer[] = [];
  private stderrBytes = 0;
  private closed = false;

  constructor(private readonly launch: StdioLaunch) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last MAX_STDERR_BYTES of the server's stderr. */
  stderrText(): string {
    return Buffer.concat(this.stderrChunks).toString('utf8');
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.command, this.launch.args, {
        argv0: this.launch.argv0,
        cwd: this.launch.cwd,
        env: this.launch.env,
        shell: false,
        detached: true, // own process group, so the whole tree can be signalled
        stdio: this.launch.door
          ? ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe']
          : this.launch.seccomp
            ? ['pipe', 'pipe', 'pipe', 'pipe']
            : ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      this.child = child;
      if (this.launch.seccomp) {
        const fd3 = child.stdio[3] as NodeJS.WritableStream & { on(e: 'error', f: () => void): unknown };
        fd3.on('error', () => undefined); // bwrap reports a filter it could not read on stderr and exits
        fd3.end(this.launch.seccomp);
      }
      child.once('error', (e) => {
        reject(e);
        this.onerror?.(e);
        this.finish();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) this.onspawn?.(child.pid);
        const door = this.launch.door;
        if (!door) return resolve();
        // bubblewrap says which process the sandbox is (fd 4) and waits (fd 5) until the door is open.
        const fds = child.stdio as unknown as unknown[];
        const info = fds[4] as NodeJS.ReadableStream;
        const block = fds[5] as NodeJS.WritableStream & { on(e: 'error', f: () => void): unknown };
        block.on('error', () => undefined);
        readChildPid(info)
          .then((pid) => door(pid))
          .then(
            () => {
              block.end('1');
              resolve();
            },
            (e: Error) => {
              reject(new Error(`the server was not started: ${e.message}`));
              void this.close();
            },
          );
      });
      child.once('exit', (code, sig) => {
        this.onexit?.(code, sig);
        this.finish();
      });
      child.stdin!.on('error', (e) => this.onerror?.(e));
      child.stdout!.on('data', (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
          for (let m = this.buffer.next(); m; m = this.buffer.next()) this.onmessage?.(m);
        } catch (e) {
          this.onerror?.(e as Error);
          void this.close();
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        this.stderrChunks.push(chunk);
        this.stderrBytes += chunk.length;
        while (this.stderrBytes > MAX_STDERR_BYTES && this.stderrChunks.length > 1) this.stderrBytes -= this.stderrChunks.shift()!.length;
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.closed) return reject(new Error('the server is not running'));
      stdin.write(serializeMessage(message), (e) => (e ? reject(e) : resolve()));
    });
  }

  async close(): Promise<void> {
    const pid = this.child?.pid;
    this.child?.stdin?.end();
    if (pid !== undefined) await killTree(pid);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
