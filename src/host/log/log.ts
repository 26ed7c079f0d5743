// The exchange log: one JSON line per event in the store folder (log.jsonl, rotated at a size bound), every line
// passed through the one masking function first. Events: `mcp.request` (exactly the fields the README lists under "The host", plus `at` and `chain`),
// `tool.call`, `tool.result`, and gate events. Listeners (the extension's output channel, the panel) receive
// the same masked events. Several events may go in one append (`writeAll`), and an event may be held for the next
// append (`hold`: a call's lines, with the exchange a remote call observed, go to the file in one append once the
// reply is on its way; a held line is appended on the next turn of the event loop at the latest, and at exit).
// A write that fails is no exception for the caller: the log remembers the failure
// (`failure`, cleared by the next write that succeeds) and tells its failure listeners once per run of failures
// (the CLI's stderr, the extension's output channel), so a session can go on — or refuse calls, by the user's
// `requireLog`. Every line is chained to the one before it in its writer's run (`chain`, ./log-chain.ts), which
// `verify` (`mcp-gate log --verify`) checks.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultMasker, type Masker } from '../../policy/mask';
import { ChainWriter, lastLineOf, lineHash, verifyChain, type ChainReport } from './log-chain';
import { ROTATED_KIND, rotationIn, rotationRecord, verifyRotations } from './log-rotation';

export type Outcome = 'answered' | 'refused_by_policy' | 'refused_by_address' | 'redirected' | 'no_answer';
export const OUTCOMES: readonly Outcome[] = ['answered', 'refused_by_policy', 'refused_by_address', 'redirected', 'no_answer'];
/** Each outcome as a person reads it (the log and `--outcome` keep the code). */
export const OUTCOME_WORDS: Readonly<Record<Outcome, string>> = {
  answered: 'answered',
  refused_by_policy: 'refused',
  refused_by_address: 'refused (the address)',
  redirected: 'refused (a redirect)',
  no_answer: 'no answer',
};

export interface McpRequestEvent {
  kind: 'mcp.request';
  server: string;
  /** The remote host, or "stdio" for a local server. */
  host: string;
  /** The tool the exchange was about, or "discover" for reading the tool list. */
  about: string;
  status?: number;
  outcome: Outcome;
  /** Why, for anything but `answered` (masked). */
  detail?: string;
  /** For a call a rule refused (a deny rule, or an allow whose argument constraints the call broke): that rule, as written. */
  rule?: string;
}

export interface ToolCallEvent {
  kind: 'tool.call';
  server: string;
  tool: string;
}

export interface ToolResultEvent {
  kind: 'tool.result';
  server: string;
  tool: string;
  ok: boolean;
  bytes: number;
}

export interface GateEvent {
  kind:
    | 'gate.approve'
    | 'gate.reject'
    | 'gate.reset'
    | 'gate.escape-hatch'
    | 'gate.route'
    | 'gate.reopen'
    | 'gate.refuse'
    | 'guard.refused'
    | 'server.start'
    | 'server.stop'
    | 'server.dropped'
    | 'sandbox.off'
    | 'sandbox.held'
    | 'sandbox.appeared'
    | 'secret.set'
    | 'secret.clear';
  /** guard.refused: the file the load guard refused (workspace-relative, or absolute outside it); sandbox.held: the
   * `.git` a contained server made that was moved aside (workspace-relative); sandbox.appeared: a file agents or
   * editors obey without asking that appeared while a contained server ran (workspace-relative). */
  file?: string;
  server?: string;
  source?: string;
  project?: string;
  digest?: string;
  detail?: string;
}

/**
 * A connection through a contained server's network door (src/host/net/egress.ts): made, refused (with the rule that
 * would allow it, when one would), or failed (no such name, no answer).
 */
export interface NetworkEvent {
  kind: 'network.connect' | 'network.blocked' | 'network.failed';
  server: string;
  source?: string;
  /** `host:port` as the server asked. */
  host: string;
  /** The address connected to or refused. */
  address?: string;
  detail: string;
  /** For a block: the rule, as a person writes it, that would allow it. */
  rule?: string;
}

export type LogEvent = McpRequestEvent | ToolCallEvent | ToolResultEvent | GateEvent | NetworkEvent;
export type LoggedEvent = LogEvent & { at: string };

export const LOG_FILE = 'log.jsonl';
export const DEFAULT_ROTATE_BYTES = 4 * 1024 * 1024;
/** How much of the log's end is read for the line a new run of the chain links to (more only for a longer line). */
const ANCHOR_TAIL_BYTES = 64 * 1024;
/** Past this a line is not looked for (the anchor is then "", which `mcp-gate log --verify` reports). */
const MAX_ANCHOR_BYTES = 16 * 1024 * 1024;
/** A rotation lock older than this was left by a writer that died while rotating. */
const ROTATION_LOCK_STALE_MS = 10_000;
/** A generation larger than this is not read (a log rotates at 4 MiB). */
export const MAX_GENERATION_BYTES = 64 * 1024 * 1024;
/** How old the last check of the log's path may be when held lines are appended (see `EventLog.append`). */
export const PATH_RECHECK_MS = 250;
const KEEP_ROTATED = 3;
/** What a chain mark adds to a line at most (run, number, two hashes): for the size a batch will have once chained. */
const CHAIN_MARK_BYTES = 192;

/** Why the log could not be written, and which file. */
export interface LogFailure {
  file: string;
  error: Error;
}

export class EventLog {
  private listeners = new Set<(e: LoggedEvent, line: string) => void>();
  private failureListeners = new Set<(f: LogFailure) => void>();
  /** Set while writes fail (the last failure); undefined once a write succeeds again. */
  failure: LogFailure | undefined;

  constructor(
    readonly dir: string | undefined,
    private readonly masker: Masker = defaultMasker,
    private readonly rotateBytes = DEFAULT_ROTATE_BYTES,
  ) {}

  get file(): string | undefined {
    return this.dir ? path.join(this.dir, LOG_FILE) : undefined;
  }

  /** `line`: the event's line exactly as the file gets it, masked, before its chain mark (./otel-export.ts sends it). */
  onEvent(listener: (e: LoggedEvent, line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Told once when writes start failing (and again only after a write succeeded in between). */
  onFailure(listener: (f: LogFailure) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /** Appends one event. Never throws: a log that cannot be written must not take a session down. */
  write(event: LogEvent): LoggedEvent {
    return this.writeAll([event])[0]!;
  }

  /**
   * Appends events in order in one write (one check of the file, one system call), after any held lines. Never
   * throws; a failure is the failure of every line in it.
   */
  writeAll(events: readonly LogEvent[]): LoggedEvent[] {
    return this.appendEvents(events, true);
  }

  /** The held lines and `events` in one append; `checkPath`: the path is checked before this write (see `append`). */
  private appendEvents(events: readonly LogEvent[], checkPath: boolean): LoggedEvent[] {
    const held = this.held.map((h) => this.format(h.event, h.at));
    this.held = [];
    const out = events.map((e) => this.format(e));
    this.commit(
      [...held, ...out].map((o) => o.line),
      checkPath,
    );
    for (const o of held) this.tell(o.masked, o.line);
    for (const o of out) this.tell(o.masked, o.line);
    return out.map((o) => o.masked);
  }

  /**
   * Takes one event now (its time) and appends it with the next write, in order before that write's lines, or on
   * the next turn of the event loop, whichever comes first; the listeners get it when it is appended. A call's lines
   * are held so that no file write (nor their masking) stands between a request and its server, or a reply and
   * its client (src/host/session/call.ts). A held line is never left behind: it is also appended by {@link flush},
   * {@link read} and {@link close}, and synchronously when the process exits.
   */
  hold(event: LogEvent): void {
    if (!this.dir && !this.listeners.size) return;
    this.held.push({ event, at: Date.now() });
    if (!this.flushSoon) {
      this.flushSoon = setImmediate(() => this.flush());
      holding.add(this);
      watchExit();
    }
  }

  /** Appends the held lines now (nothing when none are held). */
  flush(): void {
    if (this.held.length) this.appendEvents([], false);
  }

  private held: { event: LogEvent; at: number }[] = [];
  private flushSoon: NodeJS.Immediate | undefined;

  private format(event: LogEvent, time = Date.now()): { masked: LoggedEvent; line: string } {
    const at = { at: new Date(time).toISOString(), ...event } as LoggedEvent;
    // With no secret known, masking changes nothing: the event (flat, of strings and numbers) is its own copy.
    if (this.masker.size === 0) return { masked: at, line: JSON.stringify(at) };
    const masked = this.masker.maskDeep(at);
    return { masked, line: this.masker.mask(JSON.stringify(masked)) };
  }

  /** Appends `lines` (the held ones first) in one write, chained, remembering and telling a failure. */
  private commit(lines: readonly string[], checkPath: boolean): void {
    if (this.flushSoon) {
      clearImmediate(this.flushSoon);
      this.flushSoon = undefined;
      holding.delete(this);
    }
    if (!this.dir || !lines.length) return;
    try {
      this.append(lines, checkPath);
      this.failure = undefined;
    } catch (e) {
      this.closeFile();
      // listeners still receive the events; the failure is told once
      const first = !this.failure;
      this.failure = { file: this.file!, error: e instanceof Error ? e : new Error(String(e)) };
      if (first) {
        for (const l of this.failureListeners) {
          try {
            l(this.failure);
          } catch {
            // a listener's failure is its own
          }
        }
      }
    }
  }

  private tell(masked: LoggedEvent, line: string): void {
    for (const l of this.listeners) {
      try {
        l(masked, line);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  // The file stays open between writes (the call path writes three events per tool call: opening, checking and
  // closing the file each time was most of a call's cost through a session — bench group `protocol`). Another
  // process (the CLI beside the extension) may rotate or remove it: before a write the path is checked against the
  // open file (one stat, far cheaper than an open and close) and the file reopened when it is no longer the same
  // one, so requireLog sees a path that cannot be written at once. Every write checks, except the append of held
  // lines (a call's lines without requireLog, on the call path), which checks when the last check is
  // PATH_RECHECK_MS old: for that long after another process rotates the file they may go to the generation it
  // became (read back with the others), or after a removal to the removed file (bench group `gateway`: the stat was
  // a tenth of what the log costs a chat call).
  private fd: number | undefined;
  private ino = 0;
  private size = 0;
  private checkedAt = 0;

  private append(lines: readonly string[], checkPath: boolean): void {
    const now = Date.now();
    if (this.fd !== undefined && (checkPath || now - this.checkedAt >= PATH_RECHECK_MS)) {
      this.checkedAt = now;
      let current: fs.Stats | undefined;
      try {
        current = fs.statSync(this.file!);
      } catch {
        // removed: reopened below
      }
      if (!current || current.ino !== this.ino) this.closeFile();
      else if (current.size !== this.size) {
        this.size = current.size;
        this.noticeOthers();
      }
    }
    if (this.fd === undefined) {
      fs.mkdirSync(this.dir!, { recursive: true, mode: 0o700 });
      this.openFile();
    }
    // Rotated first, so that the record of a rotation is chained with the lines that follow it (./log-rotation.ts).
    const estimate = lines.reduce((n, l) => n + Buffer.byteLength(l) + CHAIN_MARK_BYTES, this.tornEnd ? 1 : 0);
    const record = this.size + estimate > this.rotateBytes && this.size > 0 ? this.rotateIfFull(estimate) : undefined;
    const link = this.chain.link(record ? [record, ...lines] : lines, this.others);
    // After a torn end (a write that did not complete, here or by another process) the first line starts a new line.
    const text = (this.tornEnd ? '\n' : '') + link.text;
    const adding = Buffer.byteLength(text);
    const written = fs.writeSync(this.fd!, text);
    this.size += written;
    if (written !== adding) {
      this.tornEnd = true;
      throw new Error(`only ${written} of ${adding} bytes were written`);
    }
    this.tornEnd = false;
    link.commit();
    this.others = undefined;
  }

  /**
   * Another writer appended since this log last wrote (seen at a check of the path, or at an open): the next line
   * also links to the file's last line (`after`), so what the other writer's run ended with is linked by something.
   */
  private noticeOthers(): void {
    if (!this.chain.started) return; // a run's first line links to the log's last line anyway
    const tail = readTail(this.file!, ANCHOR_TAIL_BYTES);
    const last = tail && lastLineOf(tail.text, tail.whole);
    if (last !== undefined) this.others = lineHash(last);
  }
  /** The hash of another writer's last line, for the next line's `after`. */
  private others: string | undefined;

  /** The chain of this log's lines (./log-chain.ts): one run per EventLog. */
  private readonly chain = new ChainWriter(() => this.anchor());
  /** The file at the path ends without a newline. */
  private tornEnd = false;

  /** The hash of the log's last complete line (the current file's, else the generation before it), "" for none. */
  private anchor(): string {
    for (const f of [this.file!, `${this.file!}.1`]) {
      for (const bytes of [ANCHOR_TAIL_BYTES, MAX_ANCHOR_BYTES]) {
        const tail = readTail(f, bytes);
        if (!tail || !tail.text) break; // missing or empty: the generation before, or none
        const last = lastLineOf(tail.text, tail.whole);
        if (last !== undefined) return lineHash(last);
        if (tail.whole) return ''; // no complete line at all
      }
    }
    return '';
  }

  private openFile(): void {
    // Only a regular file at the path: a symlink, FIFO or device there is refused (a FIFO would block the open).
    const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    const fd = fs.openSync(this.file!, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new Error(`${this.file} is not a regular file`);
      this.ino = st.ino;
      this.size = st.size;
      this.checkedAt = Date.now();
      this.tornEnd = st.size > 0 && readTail(this.file!, 1)?.text !== '\n';
      if (st.size > 0) this.noticeOthers();
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
    this.fd = fd;
  }

  private closeFile(): void {
    if (this.fd === undefined) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already gone
    }
    this.fd = undefined;
  }

  /** Appends the held lines and closes the file (a later write opens it again). */
  close(): void {
    this.flush();
    this.closeFile();
  }

  /**
   * Rotates when the file at the path is still the one this log writes and still full, with the rotation lock held:
   * two writers (the extension and the CLI) reaching the bound together rotate once, not twice (a second rotation
   * would push a full generation out and leave a gap). While another writer holds the lock, the line goes to the
   * file being rotated (it becomes the first generation, read and verified with the rest); a lock left by a writer
   * that died is taken over after ROTATION_LOCK_STALE_MS.
   */
  private rotateIfFull(adding: number): string | undefined {
    const lock = `${this.file!}.rotating`;
    let held: number | undefined;
    for (let attempt = 0; attempt < 2 && held === undefined; attempt++) {
      try {
        held = fs.openSync(lock, 'wx', 0o600);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        let age = 0;
        try {
          age = Date.now() - fs.statSync(lock).mtimeMs;
        } catch {
          continue; // released meanwhile: try again
        }
        if (age < ROTATION_LOCK_STALE_MS) return undefined; // another writer rotates now
        fs.rmSync(lock, { force: true });
      }
    }
    if (held === undefined) return undefined;
    try {
      let st: fs.Stats | undefined;
      try {
        st = fs.statSync(this.file!);
      } catch {
        // gone: rotated by another writer, not yet reopened
      }
      if (!st || st.ino !== this.ino) {
        this.closeFile();
        this.openFile();
        return undefined;
      }
      this.size = st.size;
      if (st.size + adding <= this.rotateBytes) return undefined;
      this.closeFile();
      this.rotate();
      this.openFile();
      // The record of this rotation: its number (the rotated file's own record, plus one) and that file's last line.
      const rotated = `${this.file!}.1`;
      const head = readHead(rotated, ANCHOR_TAIL_BYTES);
      const tail = readTail(rotated, MAX_ANCHOR_BYTES);
      const last = tail && lastLineOf(tail.text, tail.whole);
      const n = (head ? (rotationIn(head)?.rotation ?? 0) : 0) + 1;
      return JSON.stringify({ at: new Date().toISOString(), ...rotationRecord(n, rotated, last === undefined ? '' : lineHash(last)) });
    } finally {
      fs.closeSync(held);
      fs.rmSync(lock, { force: true });
    }
  }

  private rotate(): void {
    const file = this.file!;
    for (let i = KEEP_ROTATED - 1; i >= 1; i--) {
      try {
        fs.renameSync(`${file}.${i}`, `${file}.${i + 1}`);
      } catch {
        // missing generation
      }
    }
    fs.renameSync(file, `${file}.1`);
  }

  /**
   * Verifies the hash chain over the current log and its rotated generations (./log-chain.ts): every line a writer
   * appended follows the line before it in its run. Held lines are appended first.
   */
  verify(): ChainReport {
    if (!this.file) return { lines: 0, files: [], runs: 0, breaks: [], notes: ['this log is kept in memory only'] };
    this.flush();
    const generations: { file: string; text: string }[] = [];
    const unreadable: { file: string; line: number; why: string }[] = [];
    for (let i = KEEP_ROTATED; i >= 0; i--) {
      const f = i === 0 ? this.file : `${this.file}.${i}`;
      const got = readGeneration(f);
      if (typeof got === 'object') generations.push({ file: f, text: got.text });
      else if (got !== 'missing')
        unreadable.push({ file: f, line: 0, why: `this generation cannot be read (${got}): nothing in it can be verified` });
    }
    const mayBeCut = fs.existsSync(`${this.file}.${KEEP_ROTATED}`);
    const report = verifyChain(generations, mayBeCut);
    const rotations = verifyRotations(generations, mayBeCut);
    report.breaks.push(...rotations.breaks);
    report.notes.push(...rotations.notes);
    report.breaks.unshift(...unreadable);
    // Rotation only ever moves generations up one (.1 to .2 to .3): one missing below one present was removed.
    for (let i = 1; i < KEEP_ROTATED; i++) {
      const older = Array.from({ length: KEEP_ROTATED - i }, (_, k) => `${this.file}.${i + k + 1}`).find((f) => fs.existsSync(f));
      if (older && !fs.existsSync(`${this.file}.${i}`))
        report.breaks.unshift({
          file: `${this.file}.${i}`,
          line: 0,
          why: `this generation is missing while ${path.basename(older)} exists: it was removed (rotation never leaves a gap)`,
        });
    }
    return report;
  }

  /** Reads the current log and its rotated generations, oldest first (the events, without their chain marks or the records of rotations); unparsable lines are skipped. */
  read(): LoggedEvent[] {
    if (!this.file) return [];
    this.flush();
    const out: LoggedEvent[] = [];
    for (let i = KEEP_ROTATED; i >= 0; i--) {
      const f = i === 0 ? this.file : `${this.file}.${i}`;
      const got = readGeneration(f);
      if (typeof got !== 'object') continue;
      const text = got.text;
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          // The chain mark frames the line (./log-chain.ts, `verify`); the event is the rest.
          const { chain: _mark, ...event } = JSON.parse(line) as LoggedEvent & { chain?: unknown };
          // A rotation's record is the chain's own bookkeeping (./log-rotation.ts), no event of the gate.
          if ((event as { kind?: unknown }).kind !== ROTATED_KIND) out.push(event as LoggedEvent);
        } catch {
          // a torn line from a crash; the rest of the log stands
        }
      }
    }
    return out;
  }
}

/** Logs holding lines now; at exit they are appended synchronously (an 'exit' listener may do only that). */
const holding = new Set<EventLog>();
let exitWatched = false;
function watchExit(): void {
  if (exitWatched) return;
  exitWatched = true;
  process.on('exit', () => {
    for (const log of [...holding]) log.flush();
  });
}

/** The first `bytes` of a file as text, or undefined when it cannot be read. */
function readHead(file: string, bytes: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, fs.readSync(fd, buf, 0, bytes, 0)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The last `bytes` of a file as text (`whole`: that is all of it), or undefined when it cannot be read. */
function readTail(file: string, bytes: number): { text: string; whole: boolean } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return undefined;
    const size = st.size;
    const n = Math.min(size, bytes);
    const buf = Buffer.alloc(n);
    const got = fs.readSync(fd, buf, 0, n, size - n);
    return { text: buf.subarray(0, got).toString('utf8'), whole: n === size };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * One generation's text: only a regular file (no symlink, folder, FIFO or device: nothing there can hang or flood a
 * reader) of at most MAX_GENERATION_BYTES; 'missing', or why it cannot be read.
 */
function readGeneration(file: string): { text: string } | 'missing' | string {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return 'not a regular file';
    if (st.size > MAX_GENERATION_BYTES) return `${st.size} bytes, over the ${MAX_GENERATION_BYTES}-byte bound of a generation`;
    return { text: fs.readFileSync(fd, 'utf8') };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ELOOP') return 'a symbolic link, not the file MCP Gate writes';
    return code ?? (e as Error).message;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
