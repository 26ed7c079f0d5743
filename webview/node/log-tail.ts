// Host side (Node). Follows the exchange log file (log.jsonl in the store folder, with its rotated generations) for the trust panel:
// the first read takes every generation, oldest first; later reads take only the lines appended since, so events
// written by the CLI or another window appear as they are written. A rotation or truncation starts over.
// Bounded: at most `max` events are kept (the oldest are counted, not kept).
import * as fs from 'node:fs';
import type { LogBatch } from '../common/protocol';
import { ROTATED_KIND } from '../../src/host/log/log-rotation';

/** One valid line of the log (it parses to a JSON object), with its sequence number. */
export interface TailLine {
  id: number;
  line: string;
}

const KEEP_ROTATED = 3;
const MAX_CHUNK = 8 * 1024 * 1024;

export interface TailResult {
  reset: boolean;
  added: TailLine[];
}

export class LogTail {
  private ino = -1;
  private offset = 0;
  private partial = '';
  private nextId = 0;
  entries: TailLine[] = [];
  dropped = 0;

  constructor(
    readonly file: string | undefined,
    private readonly max = 50_000,
  ) {}

  /** Reads what is new. Never throws: an unreadable log shows as an empty one. */
  poll(): TailResult {
    if (!this.file) return { reset: false, added: [] };
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      if (this.ino === -1 && this.entries.length === 0) {
        this.ino = -2;
        return { reset: true, added: this.readRotated() };
      }
      return { reset: false, added: [] };
    }
    if (st.ino !== this.ino || st.size < this.offset) return this.restart();
    if (st.size === this.offset) return { reset: false, added: [] };
    const added = this.readFrom(this.offset, st.size);
    return { reset: false, added };
  }

  private restart(): TailResult {
    this.entries = [];
    this.dropped = 0;
    this.offset = 0;
    this.partial = '';
    this.readRotated();
    try {
      this.ino = fs.statSync(this.file!).ino;
      this.readFrom(0, fs.statSync(this.file!).size);
    } catch {
      this.ino = -2;
    }
    return { reset: true, added: this.entries.slice() };
  }

  private readRotated(): TailLine[] {
    const out: TailLine[] = [];
    for (let i = KEEP_ROTATED; i >= 1; i--) {
      let text: string;
      try {
        text = fs.readFileSync(`${this.file}.${i}`, 'utf8');
      } catch {
        continue;
      }
      out.push(...this.parse(text.split('\n')));
    }
    return out;
  }

  private readFrom(start: number, end: number): TailLine[] {
    const out: TailLine[] = [];
    let fd: number | undefined;
    try {
      fd = fs.openSync(this.file!, 'r');
      let pos = start;
      while (pos < end) {
        const len = Math.min(MAX_CHUNK, end - pos);
        const buf = Buffer.alloc(len);
        const n = fs.readSync(fd, buf, 0, len, pos);
        if (n <= 0) break;
        pos += n;
        const text = this.partial + buf.subarray(0, n).toString('utf8');
        const lines = text.split('\n');
        this.partial = lines.pop() ?? '';
        out.push(...this.parse(lines));
      }
      this.offset = pos;
    } catch {
      // unreadable now; try again at the next poll
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    return out;
  }

  private parse(lines: string[]): TailLine[] {
    const out: TailLine[] = [];
    for (const line of lines) {
      if (!line) continue;
      let event: unknown;
      try {
        event = JSON.parse(line);
      } catch {
        continue; // a torn line from a crash
      }
      if (!event || typeof event !== 'object' || Array.isArray(event)) continue;
      if ((event as { kind?: unknown }).kind === ROTATED_KIND) continue; // the chain's record of a rotation, no event
      const entry = { id: this.nextId++, line: line.replace(/\r$/, '') };
      out.push(entry);
      this.entries.push(entry);
    }
    if (this.entries.length > this.max) {
      const drop = this.entries.length - this.max;
      this.entries.splice(0, drop);
      this.dropped += drop;
    }
    return out;
  }
}

/** Lines with consecutive ids (as the tail keeps them) as one batch for the webview. */
export function toBatch(lines: readonly TailLine[]): LogBatch {
  for (let i = 1; i < lines.length; i++) if (lines[i].id !== lines[0].id + i) throw new Error('log lines must have consecutive ids');
  return { firstId: lines[0]?.id ?? 0, count: lines.length, lines: lines.map((l) => l.line).join('\n') };
}
