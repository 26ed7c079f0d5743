// The exchange log's hash chain (tamper evidence): every line an EventLog appends ends with
// `"chain":{"run","n","prev"}` — the writer's run (random, one per EventLog, so the extension and the CLI can append
// to one file without a lock), the line's number in that run, and the SHA-256 of the run's line before it. A run's
// first line links to the log's last line when the run began ("" on an empty log), and a line written after
// another writer appended also links to that writer's last line (`after`), so runs hold on to each other.
// `verifyChain` walks the generations oldest first and names every line that does not follow: a line changed (the
// next line of its run no longer links to it), removed (a gap in a run's numbers, or a link to no line), moved, or
// added without a chain. What a chain cannot show without a copy kept elsewhere: the last lines of a run removed or
// changed with nothing after them, and a log rewritten whole by someone who recomputes every hash (no key is
// involved). Lines of the oldest generation may link to lines rotated away: said, not counted as breaks.
import { createHash, randomBytes } from 'node:crypto';

export interface ChainMark {
  run: string;
  n: number;
  prev: string;
  /** The last line another writer had appended when this one was written, when this writer saw one (else absent). */
  after?: string;
}

/** The hash one line is linked by: SHA-256 of its text as written (without the newline), base64url. */
export function lineHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url');
}

/** Adds the chain mark to a line (a JSON object's text, masked, without its newline). */
function marked(line: string, mark: ChainMark): string {
  return `${line.slice(0, -1)},"chain":${JSON.stringify(mark)}}`;
}

/** One writer's run of the chain. */
export class ChainWriter {
  readonly run = randomBytes(8).toString('hex');
  private n = 0;
  private last: string | undefined;

  /** `anchor`: the hash of the log's last complete line now ("" when it has none), asked once, at the run's first line. */
  constructor(private readonly anchor: () => string) {}

  /** This run has written a line. */
  get started(): boolean {
    return this.last !== undefined;
  }

  /**
   * Chains `lines` in order. The chain moves on only when `commit` is called (the append succeeded): after a
   * failed append the next line links to the last line that was written.
   */
  link(lines: readonly string[], after?: string): { text: string; commit(): void } {
    let prev = this.last ?? this.anchor();
    let n = this.n;
    const out: string[] = [];
    for (const line of lines) {
      const text = marked(
        line,
        n === this.n && after !== undefined && after !== prev ? { run: this.run, n, prev, after } : { run: this.run, n, prev },
      );
      out.push(text, '\n');
      prev = lineHash(text);
      n++;
    }
    return {
      text: out.join(''),
      commit: () => {
        this.n = n;
        this.last = prev;
      },
    };
  }
}

/**
 * The last complete line of `tail` (the end of a file; `whole`: all of it), or undefined when it holds none whole. A
 * torn end (no newline) is not a line.
 */
export function lastLineOf(tail: string, whole: boolean): string | undefined {
  const end = tail.lastIndexOf('\n');
  if (end < 0) return undefined;
  const before = tail.lastIndexOf('\n', end - 1);
  if (before < 0 && !whole) return undefined; // its start is before the tail
  const line = tail.slice(before + 1, end);
  return line || undefined;
}

export interface ChainBreak {
  file: string;
  /** 1-based line number in that file. */
  line: number;
  why: string;
}

export interface ChainReport {
  /** Lines read, in every generation. */
  lines: number;
  files: string[];
  /** Writers' runs seen. */
  runs: number;
  breaks: ChainBreak[];
  /** What is not a break but a person should know (lines before the chain began, lines rotated away). */
  notes: string[];
}

/** Breaks reported at most (the count goes on). */
export const MAX_BREAKS = 100;

/**
 * Verifies the chain over the generations given oldest first. `oldestMayBeCut`: the oldest one is the last kept
 * generation, so lines before it may have been rotated away.
 */
export function verifyChain(generations: readonly { file: string; text: string }[], oldestMayBeCut: boolean): ChainReport {
  const seen = new Set<string>();
  const runs = new Map<string, { n: number; hash: string }>();
  const breaks: ChainBreak[] = [];
  let broken = 0;
  let lines = 0;
  let unchainedBefore = 0;
  let chainedSeen = false;
  /** Every run so far began on an empty log (two writers may both begin one). */
  let onlyEmptyStarts = true;
  let cutRuns = 0;
  const fail = (file: string, line: number, why: string) => {
    broken++;
    if (breaks.length < MAX_BREAKS) breaks.push({ file, line, why });
  };
  generations.forEach(({ file, text }, g) => {
    const mayBeCut = g === 0 && oldestMayBeCut;
    const all = text.split('\n');
    if (all[all.length - 1] !== '')
      fail(file, all.length, 'the file ends in a line without its newline (a write that did not complete, or an edit)');
    all.forEach((line, i) => {
      if (i === all.length - 1) return; // after the last newline
      lines++;
      const at = i + 1;
      const hash = lineHash(line);
      let mark: unknown;
      try {
        mark = (JSON.parse(line) as { chain?: unknown }).chain;
      } catch {
        fail(file, at, 'not a JSON line (torn by a write that did not complete, or edited)');
        return;
      }
      if (mark === undefined) {
        if (chainedSeen)
          fail(
            file,
            at,
            "a line without a chain among chained lines: added by hand or by another program, or written by an MCP Gate from before the chain (an agent's old copy: run `mcp-gate install <agent>` again)",
          );
        else unchainedBefore++;
        seen.add(hash);
        return;
      }
      const m = mark as Partial<ChainMark>;
      if (!isWellFormedMark(m)) {
        fail(file, at, 'its chain mark is malformed');
        return;
      }
      chainedSeen = true;
      if (m.after !== undefined && !seen.has(m.after)) {
        if (mayBeCut) cutRuns++;
        else fail(file, at, `the line another writer had written last when this one was written is not in the log (removed or changed)`);
      }
      const run = runs.get(m.run);
      if (!run) {
        if (m.n !== 0) {
          if (mayBeCut) cutRuns++;
          else
            fail(
              file,
              at,
              `the first line of writer run ${m.run} in the log is its line ${m.n}: the ${m.n === 1 ? 'line' : `${m.n} lines`} before it ${m.n === 1 ? 'is' : 'are'} missing`,
            );
        } else if (m.prev === '') {
          if (!onlyEmptyStarts || unchainedBefore > 0 || cutRuns > 0)
            fail(file, at, `writer run ${m.run} claims to begin an empty log, but lines come before it`);
        } else if (!seen.has(m.prev)) {
          if (mayBeCut) cutRuns++;
          else fail(file, at, `writer run ${m.run} begins after a line that is not in the log (removed or changed)`);
        }
        if (m.n === 0 && m.prev !== '') onlyEmptyStarts = false;
      } else if (m.n !== run.n + 1) {
        fail(
          file,
          at,
          `line ${m.n} of writer run ${m.run} follows its line ${run.n}: lines ${m.n! > run.n + 1 ? 'are missing' : 'were moved or repeated'}`,
        );
      } else if (m.prev !== run.hash) {
        fail(file, at, `it does not link to the line before it in writer run ${m.run}: that line was changed`);
      }
      runs.set(m.run, { n: m.n!, hash });
      seen.add(hash);
    });
  });
  const notes = chainNotes(unchainedBefore, cutRuns, broken - breaks.length);
  return { lines, files: generations.map((g) => g.file), runs: runs.size, breaks, notes };
}

/** Whether a line's chain mark has the shape of a ChainMark (its fields of the right types, its number whole). */
function isWellFormedMark(m: Partial<ChainMark>): m is ChainMark {
  return !(
    typeof m !== 'object' ||
    m === null ||
    typeof m.run !== 'string' ||
    !Number.isSafeInteger(m.n) ||
    (m.n as number) < 0 ||
    typeof m.prev !== 'string' ||
    (m.after !== undefined && typeof m.after !== 'string')
  );
}

/** The notes of a verification: lines before the chain began, runs cut by rotation, breaks beyond those listed. */
function chainNotes(unchainedBefore: number, cutRuns: number, unlisted: number): string[] {
  const notes: string[] = [];
  if (unchainedBefore)
    notes.push(
      `${unchainedBefore} line${unchainedBefore === 1 ? '' : 's'} at the start of the log carry no chain (written before MCP Gate chained its log)`,
    );
  if (cutRuns)
    notes.push(
      `${cutRuns} writer run${cutRuns === 1 ? '' : 's'} in the oldest generation begin${cutRuns === 1 ? 's' : ''} after lines rotated away (kept generations only)`,
    );
  if (unlisted > 0) notes.push(`${unlisted} more breaks not listed`);
  return notes;
}
