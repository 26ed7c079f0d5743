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
  const positions = new Map<string, Position>();
  const n = text.length;
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const here = (at = i): Position => ({ line, column: at - lineStart + 1 });
  const record = (keyPath: string[], pos: Position) => {
    const k = JSON.stringify(keyPath);
    if (!positions.has(k)) positions.set(k, pos);
  };
  const newline = () => {
    line++;
    lineStart = i + 1;
  };
  const skipBlank = (newlines: boolean) => {
    while (i < n) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\r') i++;
      else if (c === '#') while (i < n && text[i] !== '\n') i++;
      else if (c === '\n' && newlines) {
        newline();
        i++;
      } else break;
    }
  };
  const readString = (): string => {
    const q = text[i];
    const triple = text.startsWith(q.repeat(3), i);
    i += triple ? 3 : 1;
    let out = '';
    while (i < n) {
      const c = text[i];
      if (triple ? text.startsWith(q.repeat(3), i) : c === q) {
        i += triple ? 3 : 1;
        // A multi-line string may end in up to two more quotes, which belong to it.
        if (triple) while (text[i] === q) i++;
        return out;
      }
      if (c === '\n') {
        if (!triple) break;
        newline();
      }
      if (c === '\\' && q === '"') {
        const e = text[i + 1];
        if (e === 'u' || e === 'U' || e === 'x') {
          const len = e === 'u' ? 4 : e === 'U' ? 8 : 2;
          const cp = parseInt(text.slice(i + 2, i + 2 + len), 16);
          out += Number.isFinite(cp) && cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
          i += 2 + len;
          continue;
        }
        if (e === '\n' || e === '\r' || e === ' ' || e === '\t') {
          i++; // a line-ending backslash: the newline itself is counted on the next turn
          continue;
        }
        out += TOML_ESCAPES[e] ?? e;
        i += 2;
        continue;
      }
      out += c;
      i++;
    }
    throw new Error('unterminated string');
  };
  const readKey = (): { names: string[]; at: Position[] } => {
    const names: string[] = [];
    const at: Position[] = [];
    for (;;) {
      skipBlank(false);
      at.push(here());
      if (text[i] === '"' || text[i] === "'") names.push(readString());
      else {
        const s = i;
        while (i < n && !BARE_KEY_END.has(text[i])) i++;
        if (i === s) throw new Error('expected a key');
        names.push(text.slice(s, i));
      }
      skipBlank(false);
      if (text[i] !== '.') return { names, at };
      i++;
    }
  };
  const readValue = (keyPath: string[]): void => {
    skipBlank(false);
    const c = text[i];
    if (c === '"' || c === "'") {
      readString();
    } else if (c === '{') {
      i++;
      for (;;) {
        skipBlank(true);
        if (i >= n) throw new Error('unterminated inline table');
        if (text[i] === '}') {
          i++;
          return;
        }
        if (text[i] === ',') {
          i++;
          continue;
        }
        keyValue(keyPath);
      }
    } else if (c === '[') {
      i++;
      for (let index = 0; ;) {
        skipBlank(true);
        if (i >= n) throw new Error('unterminated array');
        if (text[i] === ']') {
          i++;
          return;
        }
        if (text[i] === ',') {
          i++;
          index++;
          continue;
        }
        const element = [...keyPath, String(index)];
        record(element, here());
        readValue(element);
      }
    } else {
      const s = i;
      while (i < n && !VALUE_END.has(text[i])) i++;
      if (i === s) throw new Error('expected a value');
    }
  };
  const keyValue = (table: string[]) => {
    const key = readKey();
    const full = [...table];
    key.names.forEach((name, k) => {
      full.push(name);
      record([...full], key.at[k]);
    });
    if (text[i] !== '=') throw new Error('expected =');
    i++;
    readValue(full);
  };

  const arrayTables = new Map<string, number>(); // resolved path of a [[table]] → elements so far
  let table: string[] = [];
  try {
    for (;;) {
      skipBlank(true);
      if (i >= n) break;
      if (text[i] === '[') {
        const at = here();
        const isArray = text[i + 1] === '[';
        i += isArray ? 2 : 1;
        const key = readKey();
        if (text[i] !== ']' || (isArray && text[i + 1] !== ']')) throw new Error('expected ]');
        i += isArray ? 2 : 1;
        // [a.b.c] after [[a.b]] is inside the last element of a.b: every array-of-tables prefix is resolved.
        const resolved: string[] = [];
        key.names.forEach((name, k) => {
          resolved.push(name);
          if (isArray && k === key.names.length - 1) {
            const id = JSON.stringify(resolved);
            const count = arrayTables.get(id) ?? 0;
            arrayTables.set(id, count + 1);
            record([...resolved], at);
            resolved.push(String(count));
          } else {
            const count = arrayTables.get(JSON.stringify(resolved));
            if (count !== undefined) {
              record([...resolved], at);
              resolved.push(String(count - 1));
            }
          }
          record([...resolved], at);
        });
        table = resolved;
      } else {
        keyValue(table);
      }
      skipBlank(false);
    }
  } catch {
    // Not understood: the positions found so far stand; the rest fall back to their nearest parent.
  }
  return positions;
}

const BARE_KEY_END = new Set([' ', '\t', '\r', '\n', '=', '.', '[', ']', '{', '}', '#', '"', "'", ',']);
const VALUE_END = new Set([',', ']', '}', '\n', '#']);
