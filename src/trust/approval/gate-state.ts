// The six gate states and how each is ordered and shown — no imports, so the panel's browser bundle can take it.
// What a state is decided from is in gate.ts; what it means for a person or a start is in states.ts.
// STATE_LABEL is the one table of words a person reads for a state: the status bar, the trust panel, CodeLens,
// quick picks, the CLI's human output and every message naming a state take it ("changed since approval", never
// `approval-changed`). Machine output (JSON, log events, context keys, CSS classes) keeps the state's code.
export type GateState = 'trusted' | 'pending' | 'approved' | 'approval-changed' | 'rejected' | 'blocked';

/** The order a person reads servers in: what changed, what is new, then what is decided. */
export const STATE_ORDER: Record<GateState, number> = {
  'approval-changed': 0,
  pending: 1,
  blocked: 2,
  rejected: 3,
  approved: 4,
  trusted: 5,
};

/** The codicon each state is shown with (quick picks, lenses, the panel). */
export const STATE_CODICON: Record<GateState, string> = {
  pending: 'question',
  'approval-changed': 'diff',
  approved: 'pass',
  rejected: 'circle-slash',
  blocked: 'error',
  trusted: 'verified',
};

/** The words a person reads for each state. */
export const STATE_LABEL: Record<GateState, string> = {
  pending: 'waiting for review',
  'approval-changed': 'changed since approval',
  approved: 'approved',
  rejected: 'rejected',
  blocked: 'blocked',
  trusted: 'trusted (your own)',
};

/** A state as read, with what qualifies it: approved only through MCP_GATE_ALLOW_PROJECT, disabled in its file. */
export function stateWords(s: { state: GateState; viaEscapeHatch?: boolean; disabled?: boolean }): string {
  const base = s.viaEscapeHatch ? 'approved by MCP_GATE_ALLOW_PROJECT' : (STATE_LABEL[s.state] ?? String(s.state));
  return s.disabled ? `${base}, disabled` : base;
}

/**
 * What makes a waiting server news to announce again: a changed server each time what it runs differs (`digest`),
 * a pending one once — never decided, it stays new while its files change (a file it shares with another server),
 * and announcing it again as "new" would be wrong.
 */
export function announcementKey(state: GateState, key: string, digest: string | undefined): string {
  return state === 'pending' ? `${key} pending` : `${key}@${digest}`;
}
