// The six gate states and how each is ordered and shown — no imports, so the panel's browser bundle can take it.
// What a state is decided from is in gate.ts; what it means for a person or a start is in states.ts.
export type GateState = 'trusted' | 'pending' | 'approved' | 'approval-changed' | 'rejected' | 'blocked';

/** The order a person reads servers in: what changed, what is new, then what is decided. */
export const STATE_ORDER: Record<GateState, number> = { 'approval-changed': 0, pending: 1, blocked: 2, rejected: 3, approved: 4, trusted: 5 };

/** The codicon each state is shown with (quick picks, lenses, the panel). */
export const STATE_CODICON: Record<GateState, string> = {
  pending: 'question', 'approval-changed': 'diff', approved: 'pass', rejected: 'circle-slash', blocked: 'error', trusted: 'verified',
};
