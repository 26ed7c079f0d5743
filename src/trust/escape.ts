// Shows untrusted text byte for byte: every character a person could not see or that could reorder what they
// see (controls, bidi overrides, zero-width, Unicode tags, line/paragraph separators, lone surrogates) is
// written as a visible escape. Nothing is truncated. Used by the CLI's approve preview and every definition view.

// Cc: C0/C1 controls and DEL. Cf: format characters — bidi embeddings/overrides/isolates (U+202A–202E,
// U+2066–2069), marks (U+200E/200F, U+061C), zero-width (U+200B–200D, U+2060, U+FEFF), tags (U+E0000–E007F).
// Zl/Zp: U+2028/U+2029. Co: private use (renders as anything a font decides). Cs: lone surrogates.
// Variation selectors change how the previous character looks; they are shown too.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u{115F}\u{1160}\u{3164}\u{FFA0}\u{180E}]/gu;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' };

function codeEscape(ch: string): string {
  const cp = ch.codePointAt(0)!;
  return cp <= 0xffff ? `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}` : `\\u{${cp.toString(16).toUpperCase()}}`;
}

/** Escapes every invisible or reordering character, and the backslash itself so that escapes are unambiguous. */
export function escapeText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(INVISIBLE, (ch) => NAMED[ch] ?? codeEscape(ch));
}

/** True when `s` holds any character that escapeText would rewrite (other than a backslash). */
export function hasHiddenCharacters(s: string): boolean {
  INVISIBLE.lastIndex = 0;
  const found = INVISIBLE.test(s);
  INVISIBLE.lastIndex = 0;
  return found;
}

/** A double-quoted, escaped string literal for display. */
export function quote(s: string): string {
  return `"${escapeText(s).replace(/"/g, '\\"')}"`;
}

/**
 * Renders a JSON-like value for a person: keys and strings quoted and escaped, every element on its own line,
 * nothing elided. Deterministic: object keys keep their order (callers pass canonical objects).
 */
export function renderValue(value: unknown, indent = ''): string {
  const next = indent + '  ';
  if (typeof value === 'string') return quote(value);
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => next + renderValue(v, next)).join(',\n')}\n${indent}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([k, v]) => `${next}${quote(k)}: ${renderValue(v, next)}`).join(',\n')}\n${indent}}`;
  }
  return quote(String(value));
}
