// The one line of text for an exchange-log event, wherever a person reads it: `mcp-gate log`, the extension's
// output channel and the trust panel's row tooltip. Every value comes from the log file (which other processes
// write) or from a server, so every one is escaped (src/text/escape.ts, which hides nothing: hidden and control
// characters become visible escapes). Browser-safe: the panel's bundle uses it too, so it imports nothing but
// the escaper.
import { escapeText } from '../text/escape';

/** The fields shown as `key=value`, in this order, after the time and kind; `detail` follows after a dash. */
export const LOG_LINE_FIELDS = [
  'server',
  'host',
  'address',
  'about',
  'tool',
  'status',
  'outcome',
  'ok',
  'bytes',
  'source',
  'digest',
  'rule',
] as const;

/** A field value as one escaped line of text (objects as JSON, so nothing prints as "[object Object]"). */
function text(v: unknown): string {
  if (typeof v === 'string') return escapeText(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === null) return String(v);
  try {
    return escapeText(JSON.stringify(v) ?? String(v));
  } catch {
    return '(unprintable)';
  }
}

/**
 * `<at> <kind> server=… host=… … — <detail>`: one log event as one line, every value escaped. `time: false` leaves
 * the time out, for a reader that puts its own in front (VS Code's log output channel): one timestamp per line.
 */
export function logLine(event: object, o: { time?: boolean } = {}): string {
  const f = event as Record<string, unknown>;
  const parts = o.time === false ? [text(f.kind)] : [text(f.at), text(f.kind)];
  for (const k of LOG_LINE_FIELDS) if (f[k] !== undefined) parts.push(`${k}=${text(f[k])}`);
  if (f.detail !== undefined) parts.push(`— ${text(f.detail)}`);
  return parts.join(' ');
}
