// Turns the bytes of a configuration file into a plain value, failing closed: every JSONC syntax error is
// collected (never tolerated), TOML errors keep their line and column, duplicate keys and the keys
// `__proto__`, `constructor` and `prototype` are refused anywhere in the document, and invalid UTF-8 is refused.
// Positions of object members are kept so that later errors can name `file:line:column`.
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
// smol-toml ships CommonJS for require() but ESM-only type declarations; load it with require and take its types.
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- typescript-eslint reads this import type's attributes as an error type; tsc types it
type SmolToml = typeof import('smol-toml', { with: { 'resolution-mode': 'import' } });
const { parse: parseToml, TomlError } = require('smol-toml') as SmolToml;

export const MAX_CONFIG_BYTES = 1024 * 1024;

export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface Position {
  line: number; // 1-based
  column: number; // 1-based
}

export interface ParsedDocument {
  value: unknown;
  /** Position of the member at a key path, e.g. ['servers', 'db']; falls back to the nearest parent. */
  positionOf(keyPath: readonly string[]): Position;
}

export class ConfigParseError extends Error {
  constructor(
    readonly file: string,
    readonly problems: { message: string; position: Position }[],
  ) {
    super(problems.map((p) => `${file}:${p.position.line}:${p.position.column}: ${p.message}`).join('\n'));
  }
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function positionAt(starts: number[], offset: number): Position {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo] + 1 };
}

export function decodeUtf8(file: string, data: Buffer): string {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(data);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    throw new ConfigParseError(file, [{ message: 'the file is not valid UTF-8', position: { line: 1, column: 1 } }]);
  }
}

/** Parses JSON with comments and trailing commas. Any syntax error, duplicate key or forbidden key is an error. */
export function parseJsonc(file: string, text: string): ParsedDocument {
  const starts = lineStarts(text);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  const problems = errors.map((e) => ({
    message: `JSON syntax error: ${printParseErrorCode(e.error)}`,
    position: positionAt(starts, e.offset),
  }));
  if (!root && problems.length === 0) problems.push({ message: 'the file is empty', position: { line: 1, column: 1 } });
  if (problems.length > 0) throw new ConfigParseError(file, problems);

  const positions = new Map<string, Position>();
  const toValue = (node: Node, keyPath: string[]): unknown => {
    switch (node.type) {
      case 'object': {
        const obj: Record<string, unknown> = {};
        for (const prop of node.children ?? []) {
          const [keyNode, valueNode] = prop.children ?? [];
          const key = keyNode?.value as string;
          const here = [...keyPath, key];
          const pos = positionAt(starts, prop.offset);
          if (FORBIDDEN_KEYS.has(key)) problems.push({ message: `the key "${key}" is not allowed`, position: pos });
          else if (Object.prototype.hasOwnProperty.call(obj, key)) problems.push({ message: `duplicate key "${key}"`, position: pos });
          else {
            positions.set(JSON.stringify(here), pos);
            obj[key] = valueNode ? toValue(valueNode, here) : null;
          }
        }
        return obj;
      }
      case 'array':
        return (node.children ?? []).map((c, i) => {
          positions.set(JSON.stringify([...keyPath, String(i)]), positionAt(starts, c.offset));
          return toValue(c, [...keyPath, String(i)]);
        });
      default:
        return node.value;
    }
  };
  const value = toValue(root!, []);
  if (problems.length > 0) throw new ConfigParseError(file, problems);
  return { value, positionOf: lookup(positions) };
}

/** The position of a key path, else of its nearest recorded parent, else the file's start. */
function nearest(positions: ReadonlyMap<string, Position>, keyPath: readonly string[]): Position {
  for (let n = keyPath.length; n > 0; n--) {
    const p = positions.get(JSON.stringify(keyPath.slice(0, n)));
    if (p) return p;
  }
  return { line: 1, column: 1 };
}

function lookup(positions: Map<string, Position>) {
  return (keyPath: readonly string[]): Position => nearest(positions, keyPath);
}

/** Parses TOML. Errors keep TOML's line and column; forbidden keys are refused anywhere. */
export function parseTomlDocument(file: string, text: string): ParsedDocument {
  let value: unknown;
  try {
    value = parseToml(text);
  } catch (e) {
    if (e instanceof TomlError) {
      throw new ConfigParseError(file, [
        { message: `TOML syntax error: ${e.message.split('\n')[0]}`, position: { line: e.line, column: e.column } },
      ]);
    }
    throw new ConfigParseError(file, [{ message: `TOML error: ${(e as Error).message}`, position: { line: 1, column: 1 } }]);
  }
  const problems: { message: string; position: Position }[] = [];
  // Positions come from one pass over the text, made the first time one is asked for.
  let index: Map<string, Position> | undefined;
  const findLine = (keyPath: string[]): Position => nearest((index ??= tomlKeyPositions(text)), keyPath);
  const walk = (v: unknown, keyPath: string[]): unknown => {
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...keyPath, String(i)]));
    if (v instanceof Date) return v.toISOString();
    if (v && typeof v === 'object') {
      const obj: Record<string, unknown> = {};
      for (const key of Object.getOwnPropertyNames(v)) {
        if (FORBIDDEN_KEYS.has(key)) {
          problems.push({ message: `the key "${key}" is not allowed`, position: findLine([...keyPath, key]) });
          continue;
        }
        obj[key] = walk((v as Record<string, unknown>)[key], [...keyPath, key]);
      }
      return obj;
    }
    if (typeof v === 'bigint') return Number(v);
    return v;
  };
  const clean = walk(value, []);
  if (problems.length > 0) throw new ConfigParseError(file, problems);
  return { value: clean, positionOf: (keyPath) => findLine([...keyPath]) };
}

const TOML_ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', e: '\u001b', '"': '"', '\\': '\\' };

/**
 * Where every key of a TOML document is, in one linear pass: `[a.b]` / `[[a.b]]` headers (column of the `[`),
 * `key = value` lines, dotted keys, inline tables and array elements, keyed by the same paths the parsed value
 * has (array-of-tables elements by index). Run only on text smol-toml accepted; positions are for messages, so
 * anything this scanner does not understand ends the scan and leaves the nearest known parent (or 1:1).
 */
function tomlKeyPositions(text: string): Map<string, Position> {
  return new TomlKeyScanner(text).scan();
}

/** The scanner of tomlKeyPositions: where it is in the text (offset, line, the line's start) and what it found. */
class TomlKeyScanner {
  private readonly positions = new Map<string, Position>();
  private readonly n: number;
  private i = 0;
  private line = 1;
  private lineStart = 0;
  private readonly arrayTables = new Map<string, number>(); // resolved path of a [[table]] → elements so far

  constructor(private readonly text: string) {
    this.n = text.length;
  }

  scan(): Map<string, Position> {
    const { text } = this;
    let table: string[] = [];
    try {
      for (;;) {
        this.skipBlank(true);
        if (this.i >= this.n) break;
        if (text[this.i] === '[') table = this.header();
        else this.keyValue(table);
        this.skipBlank(false);
      }
    } catch {
      // Not understood: the positions found so far stand; the rest fall back to their nearest parent.
    }
    return this.positions;
  }

  private here(at = this.i): Position {
    return { line: this.line, column: at - this.lineStart + 1 };
  }

  private record(keyPath: string[], pos: Position): void {
    const k = JSON.stringify(keyPath);
    if (!this.positions.has(k)) this.positions.set(k, pos);
  }

  private newline(): void {
    this.line++;
    this.lineStart = this.i + 1;
  }

  private skipBlank(newlines: boolean): void {
    const { text, n } = this;
    while (this.i < n) {
      const c = text[this.i];
      if (c === ' ' || c === '\t' || c === '\r') this.i++;
      else if (c === '#') while (this.i < n && text[this.i] !== '\n') this.i++;
      else if (c === '\n' && newlines) {
        this.newline();
        this.i++;
      } else break;
    }
  }

  private readString(): string {
    const { text, n } = this;
    const q = text[this.i];
    const triple = text.startsWith(q.repeat(3), this.i);
    this.i += triple ? 3 : 1;
    let out = '';
    while (this.i < n) {
      const c = text[this.i];
      if (triple ? text.startsWith(q.repeat(3), this.i) : c === q) {
        this.i += triple ? 3 : 1;
        // A multi-line string may end in up to two more quotes, which belong to it.
        if (triple) while (text[this.i] === q) this.i++;
        return out;
      }
      if (c === '\n') {
        if (!triple) break;
        this.newline();
      }
      if (c === '\\' && q === '"') {
        const e = text[this.i + 1];
        if (e === 'u' || e === 'U' || e === 'x') {
          const len = e === 'u' ? 4 : e === 'U' ? 8 : 2;
          const cp = parseInt(text.slice(this.i + 2, this.i + 2 + len), 16);
          out += Number.isFinite(cp) && cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
          this.i += 2 + len;
          continue;
        }
        if (e === '\n' || e === '\r' || e === ' ' || e === '\t') {
          this.i++; // a line-ending backslash: the newline itself is counted on the next turn
          continue;
        }
        out += TOML_ESCAPES[e] ?? e;
        this.i += 2;
        continue;
      }
      out += c;
      this.i++;
    }
    throw new Error('unterminated string');
  }

  private readKey(): { names: string[]; at: Position[] } {
    const { text, n } = this;
    const names: string[] = [];
    const at: Position[] = [];
    for (;;) {
      this.skipBlank(false);
      at.push(this.here());
      if (text[this.i] === '"' || text[this.i] === "'") names.push(this.readString());
      else {
        const s = this.i;
        while (this.i < n && !BARE_KEY_END.has(text[this.i])) this.i++;
        if (this.i === s) throw new Error('expected a key');
        names.push(text.slice(s, this.i));
      }
      this.skipBlank(false);
      if (text[this.i] !== '.') return { names, at };
      this.i++;
    }
  }

  private readValue(keyPath: string[]): void {
    const { text, n } = this;
    this.skipBlank(false);
    const c = text[this.i];
    if (c === '"' || c === "'") {
      this.readString();
    } else if (c === '{') {
      this.readInlineTable(keyPath);
    } else if (c === '[') {
      this.readArray(keyPath);
    } else {
      const s = this.i;
      while (this.i < n && !VALUE_END.has(text[this.i])) this.i++;
      if (this.i === s) throw new Error('expected a value');
    }
  }

  private readInlineTable(keyPath: string[]): void {
    const { text, n } = this;
    this.i++;
    for (;;) {
      this.skipBlank(true);
      if (this.i >= n) throw new Error('unterminated inline table');
      if (text[this.i] === '}') {
        this.i++;
        return;
      }
      if (text[this.i] === ',') {
        this.i++;
        continue;
      }
      this.keyValue(keyPath);
    }
  }

  private readArray(keyPath: string[]): void {
    const { text, n } = this;
    this.i++;
    for (let index = 0; ;) {
      this.skipBlank(true);
      if (this.i >= n) throw new Error('unterminated array');
      if (text[this.i] === ']') {
        this.i++;
        return;
      }
      if (text[this.i] === ',') {
        this.i++;
        index++;
        continue;
      }
      const element = [...keyPath, String(index)];
      this.record(element, this.here());
      this.readValue(element);
    }
  }

  private keyValue(table: string[]): void {
    const key = this.readKey();
    const full = [...table];
    key.names.forEach((name, k) => {
      full.push(name);
      this.record([...full], key.at[k]);
    });
    if (this.text[this.i] !== '=') throw new Error('expected =');
    this.i++;
    this.readValue(full);
  }

  /** A `[a.b]` or `[[a.b]]` header: returns the table it opens, every array-of-tables prefix resolved. */
  private header(): string[] {
    const { text } = this;
    const at = this.here();
    const isArray = text[this.i + 1] === '[';
    this.i += isArray ? 2 : 1;
    const key = this.readKey();
    if (text[this.i] !== ']' || (isArray && text[this.i + 1] !== ']')) throw new Error('expected ]');
    this.i += isArray ? 2 : 1;
    // [a.b.c] after [[a.b]] is inside the last element of a.b: every array-of-tables prefix is resolved.
    const resolved: string[] = [];
    key.names.forEach((name, k) => {
      resolved.push(name);
      if (isArray && k === key.names.length - 1) {
        const id = JSON.stringify(resolved);
        const count = this.arrayTables.get(id) ?? 0;
        this.arrayTables.set(id, count + 1);
        this.record([...resolved], at);
        resolved.push(String(count));
      } else {
        const count = this.arrayTables.get(JSON.stringify(resolved));
        if (count !== undefined) {
          this.record([...resolved], at);
          resolved.push(String(count - 1));
        }
      }
      this.record([...resolved], at);
    });
    return resolved;
  }
}

const BARE_KEY_END = new Set([' ', '\t', '\r', '\n', '=', '.', '[', ']', '{', '}', '#', '"', "'", ',']);
const VALUE_END = new Set([',', ']', '}', '\n', '#']);
