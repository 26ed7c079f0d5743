// Text that comes from a server (tool names, descriptions, schemas' text, instructions, results) is untrusted.
// Before the model sees it, ANSI escape sequences, bidi controls, zero-width and Unicode tag characters and other
// invisible controls are removed; before a person sees it, they are shown escaped (src/trust/escape.ts).
export { escapeText as showEscaped } from '../trust/escape';

// CSI/OSC/other ESC sequences (ECMA-48), and the 8-bit CSI.
const ANSI = /\u001B(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001B]*(?:\u0007|\u001B\\)|[PX^_][^\u001B]*\u001B\\|[@-Z\\-_])|\u009B[0-?]*[ -/]*[@-~]/g;
// Invisible or reordering characters; keeps \n and \t, which text legitimately carries.
const HIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

/** Removes ANSI escapes and hidden characters; keeps newlines and tabs. */
export function stripHidden(text: string): string {
  return text.replace(ANSI, '').replace(HIDDEN, '');
}

/** Applies stripHidden to every string (and key) inside a JSON value. */
export function stripHiddenDeep<T>(value: T): T {
  if (typeof value === 'string') return stripHidden(value) as T;
  if (Array.isArray(value)) return value.map(stripHiddenDeep) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[stripHidden(k)] = stripHiddenDeep(v);
    return out as T;
  }
  return value;
}
