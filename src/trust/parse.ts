// Turns the bytes of a configuration file into a plain value, failing closed: every JSONC syntax error is
// collected (never tolerated), TOML errors keep their line and column, duplicate keys and the keys
// `__proto__`, `constructor` and `prototype` are refused anywhere in the document, and invalid UTF-8 is refused.
// Positions of object members are kept so that later errors can name `file:line:column`.
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
// smol-toml ships CommonJS for require() but ESM-only type declarations; load it with require and take its types.
type SmolToml = typeof import('smol-toml', { with: { 'resolution-mode': 'import' } });
// eslint-disable-next-line @typescript-eslint/no-require-imports
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
  constructor(readonly file: string, readonly problems: { message: string; position: Position }[]) {
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
  const problems = errors.map((e) => ({ message: `JSON syntax error: ${printParseErrorCode(e.error)}`, position: positionAt(starts, e.offset) }));
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

function lookup(positions: Map<string, Position>) {
  return (keyPath: readonly string[]): Position => {
    for (let n = keyPath.length; n > 0; n--) {
      const p = positions.get(JSON.stringify(keyPath.slice(0, n)));
      if (p) return p;
    }
    return { line: 1, column: 1 };
  };
}

/** Parses TOML. Errors keep TOML's line and column; forbidden keys are refused anywhere. */
export function parseTomlDocument(file: string, text: string): ParsedDocument {
  let value: unknown;
  try {
    value = parseToml(text);
  } catch (e) {
    if (e instanceof TomlError) {
      throw new ConfigParseError(file, [{ message: `TOML syntax error: ${e.message.split('\n')[0]}`, position: { line: e.line, column: e.column } }]);
    }
    throw new ConfigParseError(file, [{ message: `TOML error: ${(e as Error).message}`, position: { line: 1, column: 1 } }]);
  }
  const problems: { message: string; position: Position }[] = [];
  const lines = text.split('\n');
  const findLine = (keyPath: string[]): Position => {
    // Best effort: the line of a `[a.b]` header or a `b = ` key naming the last segment.
    const last = keyPath[keyPath.length - 1];
    const header = keyPath.join('.');
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i].trim();
      if (l.startsWith('[') && l.replace(/["'\s]/g, '').includes(header)) return { line: i + 1, column: 1 };
    }
    for (let i = 0; i < lines.length; i++) if (lines[i].includes(last)) return { line: i + 1, column: Math.max(1, lines[i].indexOf(last) + 1) };
    return { line: 1, column: 1 };
  };
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
