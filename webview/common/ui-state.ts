// The panel's UI state (tab, log filters, what is expanded, the selected event, scroll positions): checked field by
// field wherever it comes from (the webview's getState, a message to the host, the host's copy), so a malformed or
// hostile value can only fall back to defaults. Pure and browser-safe.
import { DEFAULT_UI_STATE, SERVER_KEY, type UiState } from './protocol';

export const TABS: readonly UiState['tab'][] = ['waiting', 'decided', 'log'];
const MAX_TEXT = 1000;
const MAX_EXPANDED = 500;
/** A state whose JSON is longer than this is refused whole. */
export const MAX_UI_STATE_JSON = 64 * 1024;

export function sanitizeUiState(raw: unknown): UiState {
  const s: UiState = { ...DEFAULT_UI_STATE, filter: { ...DEFAULT_UI_STATE.filter }, expanded: {}, scroll: {} };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return s;
  const r = raw as Record<string, unknown>;
  if (typeof r.tab === 'string' && (TABS as readonly string[]).includes(r.tab)) s.tab = r.tab as UiState['tab'];
  const f = r.filter as Record<string, unknown> | undefined;
  if (f && typeof f === 'object') {
    for (const k of ['server', 'outcome', 'kind', 'text'] as const)
      if (typeof f[k] === 'string') s.filter[k] = (f[k] as string).slice(0, MAX_TEXT);
  }
  const ex = r.expanded as Record<string, unknown> | undefined;
  if (ex && typeof ex === 'object' && !Array.isArray(ex)) {
    for (const [k, v] of Object.entries(ex).slice(0, MAX_EXPANDED)) if (SERVER_KEY.test(k) && typeof v === 'boolean') s.expanded[k] = v;
  }
  if (typeof r.selectedLog === 'number' && Number.isSafeInteger(r.selectedLog) && r.selectedLog >= 0) s.selectedLog = r.selectedLog;
  const sc = r.scroll as Record<string, unknown> | undefined;
  if (sc && typeof sc === 'object') {
    for (const k of TABS) if (typeof sc[k] === 'number' && Number.isFinite(sc[k]) && (sc[k] as number) >= 0) s.scroll[k] = sc[k] as number;
  }
  if (typeof r.savedAt === 'number' && Number.isFinite(r.savedAt) && r.savedAt >= 0) s.savedAt = r.savedAt;
  return s;
}
