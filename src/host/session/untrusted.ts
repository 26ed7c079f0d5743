// Text that comes from a server (tool names, descriptions, schemas' text, instructions, results) is untrusted.
// Before the model sees it, ANSI escape sequences, bidi controls, zero-width and Unicode tag characters and other
// invisible controls are removed; before a person sees it, they are shown escaped (src/text/escape.ts).
import { HIDDEN_CHARS_EXCEPT_NEWLINE_TAB } from '../../text/hidden-chars';

// CSI/OSC/other ESC sequences (ECMA-48), and the 8-bit CSI.
const ANSI =
  /\u001B(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001B]*(?:\u0007|\u001B\\)|[PX^_][^\u001B]*\u001B\\|[@-Z\\-_])|\u009B[0-?]*[ -/]*[@-~]/g;
// Invisible or reordering characters come from the one table (src/text/hidden-chars.ts); \n and \t are kept,
// which text legitimately carries.

/** Removes ANSI escapes and hidden characters; keeps newlines and tabs. */
export function stripHidden(text: string): string {
  return text.replace(ANSI, '').replace(HIDDEN_CHARS_EXCEPT_NEWLINE_TAB, '');
}

/** Applies stripHidden to every string (and key) inside a JSON value. */
export function stripHiddenDeep<T>(value: T): T {
  if (typeof value === 'string') return stripHidden(value) as T;
  if (Array.isArray(value)) return value.map(stripHiddenDeep) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = stripHidden(k);
      // "__proto__" (an own key of parsed JSON) stays an own key, not the copy's prototype.
      if (key === '__proto__')
        Object.defineProperty(out, key, { value: stripHiddenDeep(v), enumerable: true, writable: true, configurable: true });
      else out[key] = stripHiddenDeep(v);
    }
    return out as T;
  }
  return value;
}
