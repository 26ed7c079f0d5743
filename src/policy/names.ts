// Names and segments shared by every policy action: how an action string is cut into
// segments, which server/tool/secret names a rule can express, and how an origin or a
// raw value is shown in a message (jsonExcerpt: escaped by src/text, the one table of
// hidden characters, then cut).
import { escapeText, inlineValue } from '../text/escape';

/**
 * Where a rule or a secrets entry came from: a file path or a setting name
 * (e.g. `mcpGate.rules`), and optionally the line it starts on.
 */
export interface Origin {
  readonly file: string;
  readonly line?: number;
}

/** `file:line`, or `file` when the line is unknown. */
export function formatOrigin(origin: Origin): string {
  return origin.line === undefined ? origin.file : `${origin.file}:${origin.line}`;
}

/**
 * Cut an action into segments on '.', except that a bracketed IP literal
 * (`[198.51.100.7]`, `[2001:db8::1]`) stays one segment. Returns a string
 * explaining the problem when brackets are unbalanced or misplaced.
 */
export function splitSegments(text: string): string[] | string {
  const out: string[] = [];
  let current = '';
  let inBracket = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inBracket) {
      if (ch === '[') return 'a "[" inside brackets';
      current += ch;
      if (ch === ']') {
        inBracket = false;
        const next = text[i + 1];
        if (next !== undefined && next !== '.') return 'a "]" must end its segment';
      }
      continue;
    }
    if (ch === '.') {
      out.push(current);
      current = '';
    } else if (ch === '[') {
      if (current !== '') return 'a "[" must start its segment';
      inBracket = true;
      current = ch;
    } else if (ch === ']') {
      return 'a "]" without a matching "["';
    } else {
      current += ch;
    }
  }
  if (inBracket) return 'a "[" without a matching "]"';
  out.push(current);
  return out;
}

// A name is one or more "words" of characters that are not '.', '*', '[', ']',
// whitespace or any Unicode "other" (control, format such as bidi overrides and
// zero-width characters, private use, unassigned), joined by single spaces.
const NAME_RE = /^[^\s.*[\]\p{C}]+(?: [^\s.*[\]\p{C}]+)*$/u;

/**
 * Why `name` cannot be one segment of an action (a server name, or one
 * dot-separated part of a tool name), or undefined when it can.
 */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (name.includes('.')) return 'it contains "."';
  if (name.includes('*')) return 'it contains "*"';
  if (name.includes('[') || name.includes(']')) return 'it contains a bracket';
  if (!NAME_RE.test(name)) {
    return 'it contains whitespace other than single inner spaces, or a control or invisible formatting character';
  }
  return undefined;
}

/** Thrown when a server, tool or secret name cannot appear in an action. */
export class NameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NameError';
  }
}

/**
 * Check a server name for use in an action: it is exactly one segment, so it
 * may not contain '.', '*' or brackets. Throws a {@link NameError} saying why.
 */
export function checkServerName(server: string): string {
  const why = nameProblem(server);
  if (why !== undefined) throw new NameError(`server name ${jsonExcerpt(server)} cannot be named by a rule: ${why}`);
  return server;
}

/**
 * Check a tool name: one or more dot-separated parts, each a valid name.
 * Dots are allowed (MCP tool names may contain them) and act as segment
 * separators, so `mcp.s.tool.files.*` covers `files.read`.
 */
export function checkToolName(tool: string): string {
  if (tool === '') throw new NameError('tool name is empty');
  for (const part of tool.split('.')) {
    const why = part === '' ? 'it has an empty dot-separated part' : nameProblem(part);
    if (why !== undefined) throw new NameError(`tool name ${jsonExcerpt(tool)} cannot be named by a rule: ${why}`);
  }
  return tool;
}

/** Secret names: an upper-case letter or '_' first, then upper-case letters, digits, '_'. */
export const SECRET_NAME_RE = /^[A-Z_][A-Z0-9_]*$/;

/**
 * Any value (a name, a rule as written, a whole list) for a message: one line of JSON whose strings are escaped
 * as src/text/escape.ts escapes every string shown to a person (the one table of hidden characters), cut after
 * `max` characters. Not src/text's `quote`: that one quotes a whole string and never cuts.
 */
export function jsonExcerpt(value: unknown, max = 200): string {
  let text: string;
  try {
    text = inlineValue(value) ?? escapeText(String(value));
  } catch {
    text = escapeText(String(value));
  }
  if (text.length > max) text = `${text.slice(0, max)}…(${text.length - max} more characters)`;
  return text;
}

/**
 * Walks a list of configuration items (rules, secrets entries): anything but an array is one error; an item that
 * is not an object is an error naming its index; every object goes to `each` with its origin and a `fail` that
 * records an error for it. Nothing is dropped silently.
 */
export function walkItems<E>(
  raw: unknown,
  origin: Origin | ((index: number) => Origin),
  what: { list: string; item: string },
  makeError: (origin: Origin, index: number | undefined, text: string, reason: string) => E,
  each: (obj: Record<string, unknown>, where: Origin, index: number, fail: (why: string) => void) => void,
): E[] {
  const originOf = typeof origin === 'function' ? origin : () => origin;
  const errors: E[] = [];
  if (!Array.isArray(raw)) {
    const kind = raw === null ? 'null' : typeof raw;
    errors.push(makeError(originOf(0), undefined, jsonExcerpt(raw), `${what.list} must be a list, not ${kind}`));
    return errors;
  }
  raw.forEach((item: unknown, index) => {
    const where = originOf(index);
    const fail = (why: string) => errors.push(makeError(where, index, jsonExcerpt(item), why));
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return fail(what.item);
    each(item as Record<string, unknown>, where, index, fail);
  });
  return errors;
}
