// Ctrl-C (SIGINT), SIGTERM and SIGHUP stop every CLI command promptly, with the shell's codes 130, 143 and 129.
// Open sessions are closed first (their servers' process trees killed), servers still starting are killed, and a
// last-resort 'exit' hook kills any process of ours that is left. Exiting through process.exit runs the exit
// hooks of proper-lockfile and write-file-atomic (signal-exit), so a signal during a store write releases the
// lock and removes the temporary file; the store itself is replaced by rename, so it is the old or the new one.
//
// Why our own handlers: proper-lockfile loads signal-exit, which listens for these signals from the moment the
// CLI starts. Its listener re-raises the signal only after the event loop turns, so a busy synchronous step
// (parsing, pinning, diffing) already delays a signal until it ends — those steps are bounded for that reason
// (src/trust/sources/parse.ts, src/trust/approval/diff.ts). A second signal while stopping exits at once.
import { descendants } from '../host/sandbox/processes';

export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

interface Closable {
  close(): Promise<void>;
}

const open = new Set<Closable>();
const writing = new Set<Promise<unknown>>();
let mayHaveChildren = false;

/** How long a signal waits for a store or configuration write in progress to finish. */
export const WRITE_DEADLINE_MS = 5000;

/**
 * Runs a write (a decision into the store, an edit of the configuration) to its end even if a signal arrives
 * meanwhile: the signal then waits for it (at most WRITE_DEADLINE_MS), so the lock is released by the write
 * itself — proper-lockfile's exit hook misses a lock taken but not yet registered, or being released.
 */
export function finishBeforeStopping<T>(write: Promise<T>): Promise<T> {
  writing.add(write);
  const done = () => writing.delete(write);
  write.then(done, done);
  return write;
}

let lastly: Closable | undefined;

/**
 * What a signal closes last, after the sessions (their last events written): the log's export, which sends what is
 * left to the collector within its own bound. A second signal exits at once, as always.
 */
export function closeLastOnSignal(c: Closable): void {
  lastly = c;
}

/** Called before a session starts servers: from then on, stopping looks for processes of ours to kill. */
export function serversMayStart(): void {
  mayHaveChildren = true;
}

/** Registers an open session so that a signal closes it; returns a function that unregisters it. */
export function trackSession(s: Closable): () => void {
  mayHaveChildren = true;
  open.add(s);
  return () => open.delete(s);
}

function killLeftovers(sig: NodeJS.Signals): number[] {
  const pids = descendants(process.pid);
  for (const pid of pids) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, sig); // -pid: its process group (servers run in their own)
      } catch {
        // gone already, or not a group leader
      }
    }
  }
  return pids;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)); // keeps the process alive until exit

/** Installs the handlers; the CLI calls this once, before running a command. */
export function installSignalHandlers(closeDeadlineMs = 3000): void {
  let stopping: number | undefined;
  const onSignal = async (sig: StopSignal) => {
    const code = SIGNAL_EXIT_CODES[sig];
    if (stopping !== undefined || (!mayHaveChildren && open.size === 0 && writing.size === 0 && !lastly)) {
      if (mayHaveChildren) killLeftovers('SIGKILL');
      process.exit(code);
    }
    stopping = code;
    const what = [
      open.size ? `closing ${open.size} session${open.size === 1 ? '' : 's'}` : '',
      writing.size ? 'after the write in progress' : '',
    ]
      .filter(Boolean)
      .join(', ');
    process.stderr.write(`\nmcp-gate: ${sig}: stopping${what ? ` (${what})` : ''}\n`);
    await Promise.race([Promise.allSettled([...writing]), sleep(WRITE_DEADLINE_MS)]);
    const closing = [...open];
    open.clear();
    // Servers still starting have no session yet: ask them to stop now; whatever is left is killed below.
    killLeftovers('SIGTERM');
    await Promise.race([Promise.allSettled(closing.map((s) => s.close())), sleep(closeDeadlineMs)]);
    for (let i = 0; i < 50 && killLeftovers('SIGKILL').length > 0; i++) await sleep(20); // until reaped
    if (lastly) await Promise.race([lastly.close().catch(() => undefined), sleep(closeDeadlineMs)]);
    process.exit(code);
  };
  for (const sig of Object.keys(SIGNAL_EXIT_CODES) as StopSignal[]) process.on(sig, () => void onSignal(sig));
  process.on('exit', () => {
    if (mayHaveChildren) killLeftovers('SIGKILL');
    // The command may finish on its own while stopping (its server was killed): the signal's code still wins.
    if (stopping !== undefined) process.exitCode = stopping;
  });
}
