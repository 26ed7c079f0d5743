// The risk in the headline of a waiting server's review, its panel card and `mcp-gate show`: what its code does
// (a server never approved) or does that it did not at approval (a changed one), in words with file and line —
// "Risk: this change starts programs (tools/notes-server.js:3 child_process.exec) · reaches the network (…)" —
// from src/trust/plan/capabilities.ts; and the status bar's words for what waits ("1 changed · 2 new"). Pure.
import { escapeText } from '../text/escape';
import type { GateState } from '../trust/approval/gate-state';
import { serverRisk } from '../trust/approval/risk';
import { CAPABILITY_KINDS, type Capability, type CapabilityKind } from '../trust/plan/capabilities';
import type { NpmLock } from '../trust/packages/npm-lock';
import type { ServerReport } from '../trust/report';

/** Each kind as the verb of "this change …". */
export const KIND_WORDS: Record<CapabilityKind, string> = {
  programs: 'starts programs',
  network: 'reaches the network',
  'outside-workspace': 'reads or writes outside the workspace',
  'computed-code': 'loads code computed at run time',
  'install-script': 'has install scripts',
};

/** How many places each kind names in the headline before "+N more". */
const SHOWN = 2;

const place = (c: Capability) => `${escapeText(c.file)}${c.line ? `:${c.line}` : ''} ${escapeText(c.evidence)}`;

/** "starts programs (a.js:3 child_process.exec, b.js:9 child_process.spawn +2 more)": uses before imports. */
function kindText(kind: CapabilityKind, found: Capability[]): string {
  const seen = new Set<string>();
  const places = [...found.filter((c) => c.how === 'call'), ...found.filter((c) => c.how === 'import')].filter((c) => {
    // One place per file and line: a require and its call on the same line are one.
    const k = `${c.file}:${c.line}`;
    return !seen.has(k) && !!seen.add(k);
  });
  const more = places.length > SHOWN ? ` +${places.length - SHOWN} more` : '';
  return `${KIND_WORDS[kind]} (${places.slice(0, SHOWN).map(place).join(', ')}${more})`;
}

/** The headline's words for what was found (empty: nothing). */
export function riskWords(found: readonly Capability[]): string {
  return CAPABILITY_KINDS.filter((k) => found.some((c) => c.kind === k))
    .map((k) =>
      kindText(
        k,
        found.filter((c) => c.kind === k),
      ),
    )
    .join(' · ');
}

/**
 * The headline for a waiting server (undefined for any other): "Risk: this change …" for a changed one, "Risk:
 * this server …" for one never approved; when nothing is found it says so, and what it looked for.
 */
export function riskLine(s: Pick<ServerReport, 'state' | 'pinned' | 'record'>, lock?: NpmLock): string | undefined {
  if (!s.pinned || (s.state !== 'pending' && s.state !== 'approval-changed' && s.state !== 'rejected')) return undefined;
  const changed = s.state === 'approval-changed';
  if (changed && s.record?.digest === s.pinned.digest && !lock) return undefined; // only its tools changed: no code to read
  const words = riskWords(serverRisk(s, lock));
  if (words) return `Risk: ${changed ? 'this change' : 'this server'} ${words}`;
  return `Risk: ${changed ? 'nothing new found' : 'nothing found'} in the code MCP Gate reads (programs, network, files outside the workspace, code computed at run time, install scripts)`;
}

/** The status bar's words for what waits: "1 changed · 2 new" (each count in the front end's language). */
export function waitingWords(
  states: readonly GateState[],
  words: { changed: (n: number) => string; fresh: (n: number) => string } = { changed: (n) => `${n} changed`, fresh: (n) => `${n} new` },
): string {
  const changed = states.filter((s) => s === 'approval-changed').length;
  const fresh = states.filter((s) => s === 'pending').length;
  return [changed ? words.changed(changed) : '', fresh ? words.fresh(fresh) : ''].filter(Boolean).join(' · ');
}
