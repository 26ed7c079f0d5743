// Shows untrusted text byte for byte: every character a person could not see or that could reorder what they
// see (controls, bidi overrides, zero-width, default-ignorable, Unicode tags, variation selectors, line/paragraph
// separators, private use, lone surrogates) is written as a visible escape. Nothing is truncated here. Used by the
// CLI's approve preview, every definition view and the policy's messages (src/policy/names.ts cuts what it
// quotes). What counts as hidden is one table, src/text/hidden-chars.ts, shared with what the model is shown
// (src/host/session/untrusted.ts).
import { containsHidden, HIDDEN_CHARS } from './hidden-chars';

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' };

function codeEscape(ch: string): string {
  const cp = ch.codePointAt(0)!;
  return cp <= 0xffff ? `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}` : `\\u{${cp.toString(16).toUpperCase()}}`;
}

/** Escapes every invisible or reordering character, and the backslash itself so that escapes are unambiguous. */
export function escapeText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(HIDDEN_CHARS, (ch) => NAMED[ch] ?? codeEscape(ch));
}

/**
 * Untrusted text where VS Code renders its icon syntax (quick-pick rows, lens titles): escaped as {@link escapeText}
 * does, and every `$(` written `\$(`, which VS Code shows literally — so a server named "$(pass) notes" cannot put
 * a state's codicon beside itself.
 */
export function escapeLabel(s: string): string {
  return literalIcons(escapeText(s));
}

/** VS Code's icon syntax made literal (`$(` → `\$(`), for text that is already escaped or is MCP Gate's own. */
export function literalIcons(s: string): string {
  return s.replace(/\$\(/g, '\\$(');
}

/** A kept text as shown in a diff: line for line, every hidden character escaped (line breaks kept). */
export function escapeLines(t: string): string {
  return t.split('\n').map(escapeText).join('\n');
}

/** True when `s` holds any character that escapeText would rewrite (other than a backslash). */
export function hasHiddenCharacters(s: string): boolean {
  return containsHidden(s);
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

/**
 * A JSON-like value on one line, as JSON.stringify writes it (same keys, order, `null` for what JSON cannot hold
 * in a list, `toJSON` honoured), except that every string is a {@link quote}: hidden characters escaped from the
 * one table, the same way as everywhere else. Throws where JSON.stringify throws (a cycle, a BigInt); undefined
 * where it gives undefined (undefined, a function, a symbol).
 */
export function inlineValue(value: unknown): string | undefined {
  const open = new Set<object>();
  const walk = (v: unknown, inList: boolean): string | undefined => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
      v = (v as { toJSON(): unknown }).toJSON();
    if (typeof v === 'string') return quote(v);
    if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
    if (typeof v === 'boolean' || v === null) return String(v);
    if (typeof v === 'bigint') throw new TypeError('a BigInt cannot be shown as JSON');
    if (typeof v !== 'object') return inList ? 'null' : undefined;
    if (open.has(v)) throw new TypeError('a value that contains itself cannot be shown as JSON');
    open.add(v);
    try {
      if (Array.isArray(v)) return `[${v.map((x) => walk(x, true)).join(',')}]`;
      const parts: string[] = [];
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const shown = walk(x, false);
        if (shown !== undefined) parts.push(`${quote(k)}:${shown}`);
      }
      return `{${parts.join(',')}}`;
    } finally {
      open.delete(v);
    }
  };
  return walk(value, false);
}
