// What a gate state means for a person and for a start: one predicate per question, used by every front end,
// the host and the shared renderings (the states themselves are decided in gate.ts).
import type { ServerReport } from '../report';
import type { GateState } from './gate-state';

type S = Pick<ServerReport, 'state' | 'gated' | 'pinned' | 'record'>;

/** Waits for a person: never decided, or changed since it was approved. */
export function isWaiting(s: Pick<ServerReport, 'state'>): boolean {
  return s.state === 'pending' || s.state === 'approval-changed';
}

/** A person can approve it now: a repository (gated) server that is pinned and not already approved. */
export function isApprovable(s: S): boolean {
  return s.gated && !!s.pinned && s.state !== 'blocked' && (isWaiting(s) || s.state === 'rejected');
}

/** A person can reject it now: a gated, pinned server not already rejected. */
export function isRejectable(s: S): boolean {
  return s.gated && !!s.pinned && s.state !== 'blocked' && s.state !== 'rejected';
}

/** It has a recorded decision that a reset would remove. */
export function isResettable(s: S): boolean {
  return s.gated && !!s.record;
}

/**
 * It may start: approved or user scope — and, for a repository server, only in a trusted workspace (VS Code's
 * Workspace Trust; the CLI has none and passes true).
 */
export function mayRun(s: Pick<ServerReport, 'state' | 'gated'>, workspaceTrusted: boolean): boolean {
  if (s.state !== 'approved' && s.state !== 'trusted') return false;
  return !s.gated || workspaceTrusted;
}

/** Approved once, and its definition (or a file it runs) is no longer what was approved. */
export function definitionChanged(s: S): boolean {
  return s.state === 'approval-changed' && !!s.record && !!s.pinned && s.record.digest !== s.pinned.digest;
}

/** Approved once with the same definition, but the tools it offers changed since. */
export function toolsChanged(s: S): boolean {
  return s.state === 'approval-changed' && !!s.record?.toolsChanged && !!s.record.tools;
}

/** Changed since approval in any way (definition or tools). */
export function changedSinceApproval(s: S): boolean {
  return s.state === 'approval-changed';
}

/**
 * What keeps a server from running until a person acts: `pending` (never decided), `changed` (changed since
 * approval), `blocked` (rejected, or blocked by the gate: no approval lets it run as it stands). A server that may
 * run (approved, or user scope) has none. `mcp-gate check` counts servers by it.
 */
export type Hold = 'pending' | 'changed' | 'blocked';

const HOLD: Record<GateState, Hold | undefined> = {
  pending: 'pending',
  'approval-changed': 'changed',
  rejected: 'blocked',
  blocked: 'blocked',
  approved: undefined,
  trusted: undefined,
};

/** The hold on a server, by its state (undefined: nothing holds it back). */
export function holdOf(s: Pick<ServerReport, 'state'>): Hold | undefined {
  return HOLD[s.state];
}

export { STATE_CODICON, STATE_LABEL, STATE_ORDER, stateWords } from './gate-state';
