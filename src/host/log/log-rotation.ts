// Each rotation of the exchange log, recorded in the chain (issue 47, item 3): the writer that rotates puts a
// `log.rotated` line near the start of the file it begins, naming the rotation's number and the last line of the
// generation it rotated (as that line's chain hash). `mcp-gate log --verify` then knows which generation follows
// which: a generation renamed over another, replaced by an empty file, removed or swapped no longer passes as
// "rotated away" — the record of the newer one points at a line the older one does not hold. The record need not be
// the very first line (another writer may append between the rotation and the record) but is among the first
// RECORD_WITHIN lines; the older generation may have lines after the one named (writers that still held it open).
// Generations older than the first record (rotated by an MCP Gate from before the records) are verified as before.
import * as path from 'node:path';
import { lineHash, type ChainBreak } from './log-chain';

export const ROTATED_KIND = 'log.rotated';
/** A rotation's record is among the first this many lines of the file it began. */
export const RECORD_WITHIN = 64;

export interface RotationRecord {
  kind: typeof ROTATED_KIND;
  /** 1 for the log's first rotation, then one more each time. */
  rotation: number;
  previous: { file: string; last: string };
  detail: string;
}

/** The record for a rotation numbered `rotation` of `file` into `rotatedTo`, whose last line's chain hash is `last` (""). */
export function rotationRecord(rotation: number, rotatedTo: string, last: string): RotationRecord {
  return {
    kind: ROTATED_KIND,
    rotation,
    previous: { file: path.basename(rotatedTo), last },
    detail: `rotation ${rotation}: the lines before this one are in ${path.basename(rotatedTo)}`,
  };
}

/** The rotation record among a generation's first lines (its text), if there is one. */
export function rotationIn(text: string): { rotation: number; last: string; line: number } | undefined {
  const lines = text.split('\n', RECORD_WITHIN + 1).slice(0, RECORD_WITHIN);
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].includes(ROTATED_KIND)) continue;
    try {
      const r = JSON.parse(lines[i]) as Partial<RotationRecord>;
      if (r.kind === ROTATED_KIND && Number.isSafeInteger(r.rotation) && typeof r.previous?.last === 'string')
        return { rotation: r.rotation!, last: r.previous.last, line: i + 1 };
    } catch {
      // not a JSON line: the chain's own check names it
    }
  }
  return undefined;
}

/**
 * The breaks in the order of the generations (given oldest first, none missing between them: the caller names a
 * missing one) and the notes. `oldestMayBeCut`: the oldest is the last kept generation (older ones rotated away).
 */
export function verifyRotations(
  generations: readonly { file: string; text: string }[],
  oldestMayBeCut: boolean,
): { breaks: ChainBreak[]; notes: string[] } {
  const records = generations.map((g) => rotationIn(g.text));
  const breaks: ChainBreak[] = [];
  if (!records.some(Boolean))
    return {
      breaks,
      notes:
        generations.length > 1
          ? ['no generation records its rotation (rotated by an older MCP Gate): a renamed generation cannot be told']
          : [],
    };
  const name = (g: number) => path.basename(generations[g].file);
  generations.forEach((g, i) => {
    const rec = records[i];
    if (i === 0) {
      // The oldest kept: rotated from a generation that is gone only when it is the last one kept.
      if (rec && !oldestMayBeCut)
        breaks.push({
          file: g.file,
          line: rec.line,
          why: `it was begun by rotation ${rec.rotation}, but the generation it was rotated from is not there (removed or renamed)`,
        });
      return;
    }
    // Before the first record the generations were rotated by an older MCP Gate; after it, each one records its own.
    if (!rec && !records.slice(0, i).some(Boolean)) return;
    if (!rec) {
      breaks.push({
        file: g.file,
        line: 1,
        why: `it does not begin with the record of its rotation: ${name(i - 1)} before it is not the generation it was rotated from (renamed, replaced or removed), or a writer stopped while rotating`,
      });
      return;
    }
    const older = new Set(
      generations[i - 1].text
        .split('\n')
        .filter(Boolean)
        .map((l) => lineHash(l)),
    );
    if (!older.has(rec.last))
      breaks.push({
        file: g.file,
        line: rec.line,
        why: `its rotation record names a last line that ${name(i - 1)} does not hold: ${name(i - 1)} is not the generation it was rotated from (renamed, replaced, emptied or cut)`,
      });
    const before = records[i - 1];
    if (before && rec.rotation !== before.rotation + 1)
      breaks.push({
        file: g.file,
        line: rec.line,
        why: `it was begun by rotation ${rec.rotation}, but ${name(i - 1)} by rotation ${before.rotation}: generations between them are missing or out of order`,
      });
  });
  return { breaks, notes: [] };
}
