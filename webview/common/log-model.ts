// The log view's model: exchange-log events (mcp.request, tool.call/tool.result, gate and server events) → rows,
// filters by server, outcome and kind, text search, and the details of one event. Pure and browser-safe (it is
// bundled into the webview and tested in plain Node). Every value from the log is untrusted: it comes from a file
// other processes write and carries strings from servers; each becomes display text through escapeText.
import { logLine } from '../../src/report/log-line';
import { escapeText, renderValue } from '../../src/text/escape';
import type { LogBatch, LogEntry } from './protocol';

export interface LogRow {
  id: number;
  /** The event time as written (ISO), escaped. */
  at: string;
  /** "12:03:04.123" for the table. */
  time: string;
  kind: string;
  /** The filter group of the kind: mcp.request, tool, gate, server, network, secret, other. */
  group: string;
  server: string;
  /** The tool or `discover` an exchange was about, the tool of a call, or the host:port of a network event. */
  about: string;
  host: string;
  /** The outcome of an exchange, ok/error of a tool result, or empty. */
  outcome: string;
  status: string;
  detail: string;
  /** The event as one line (src/report/log-line.ts, as `mcp-gate log` and the output channel print it). */
  line: string;
  /** Lower-cased text the search matches against. */
  haystack: string;
}

export interface LogFilter {
  server: string;
  outcome: string;
  kind: string;
  text: string;
}

export const KIND_GROUPS = ['mcp.request', 'tool', 'gate', 'server', 'network', 'secret'] as const;
export const OUTCOME_CHOICES = [
  'answered',
  'refused_by_policy',
  'refused_by_address',
  'redirected',
  'no_answer',
  'ok',
  'error',
  'blocked',
] as const;

/** Any JSON value as one line of display text. */
export function field(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return escapeText(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  try {
    return escapeText(JSON.stringify(v));
  } catch {
    return '';
  }
}

export function groupOf(kind: string): string {
  if (kind === 'mcp.request') return 'mcp.request';
  const head = kind.split('.')[0];
  return (KIND_GROUPS as readonly string[]).includes(head) ? head : 'other';
}

export function outcomeOf(e: Record<string, unknown>): string {
  if (e.kind === 'mcp.request') return field(e.outcome);
  if (e.kind === 'tool.result') return e.ok === true ? 'ok' : 'error';
  if (e.kind === 'network.blocked') return 'blocked';
  return '';
}

function timeOf(at: string): string {
  const m = /T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/.exec(at);
  return m ? m[1] : at;
}

export function toRow(entry: LogEntry): LogRow {
  const e = entry.event && typeof entry.event === 'object' ? entry.event : {};
  const kind = field(e.kind) || '(no kind)';
  const at = field(e.at);
  const row: LogRow = {
    id: entry.id,
    at,
    time: timeOf(at),
    kind,
    group: groupOf(kind),
    server: field(e.server),
    // A network event is about the host it reached or was refused.
    about: field(e.about ?? e.tool ?? (typeof e.kind === 'string' && e.kind.startsWith('network.') ? e.host : undefined)),
    host: field(e.host),
    outcome: outcomeOf(e),
    status: field(e.status),
    detail: field(e.detail ?? (e.kind === 'tool.result' ? `${e.bytes ?? '?'} bytes` : e.source)),
    line: logLine(e),
    haystack: '',
  };
  row.haystack = [row.at, row.kind, row.server, row.about, row.host, row.outcome, row.status, row.detail, field(e.source), field(e.project)]
    .join('\u0000')
    .toLowerCase();
  return row;
}

export function toRows(entries: readonly LogEntry[]): LogRow[] {
  return entries.map(toRow);
}

/** Rows that pass the filter, newest first. `rows` is in log order (oldest first). */
export function filterRows(rows: readonly LogRow[], f: LogFilter): LogRow[] {
  const text = f.text.trim().toLowerCase();
  const out: LogRow[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    if (f.server && r.server !== f.server) continue;
    if (f.outcome && r.outcome !== f.outcome) continue;
    if (f.kind && r.group !== f.kind) continue;
    if (text && !r.haystack.includes(text)) continue;
    out.push(r);
  }
  return out;
}

/** Server names seen in the log (as display text), sorted, for the server filter. Cheap: no rows are made. */
export function serversIn(events: Iterable<Record<string, unknown>>): string[] {
  const raw = new Set<unknown>();
  for (const e of events) if (e && typeof e === 'object' && e.server !== undefined && e.server !== null) raw.add(e.server);
  return [...new Set([...raw].map(field).filter(Boolean))].sort();
}

/** The position of an id in a list of ids sorted ascending (log order), or -1. */
export function indexById(ids: readonly number[], id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = ids[mid];
    if (v === id) return mid;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The full event for the details pane: every field, escaped, nothing truncated. */
export function detailsText(entry: LogEntry): string {
  return renderValue(entry.event ?? {});
}

/** One line summarising a row (tooltips, screen readers): the event's log line. */
export function rowSummary(r: LogRow): string {
  return r.line;
}

/** The lines of a batch and their ids. */
export function unbatch(b: LogBatch): { ids: number[]; lines: string[] } {
  const lines = b.count === 0 || !b.lines ? [] : b.lines.split('\n');
  const ids = new Array<number>(lines.length);
  for (let i = 0; i < lines.length; i++) ids[i] = b.firstId + i;
  return { ids, lines };
}

/** One log line as an event; anything that is not a JSON object becomes an event that says so. */
export function parseEvent(line: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(line);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { kind: '(unreadable line)', detail: line.slice(0, 200) };
}
