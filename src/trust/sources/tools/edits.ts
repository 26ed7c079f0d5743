// The pure text edits that `mcp-gate install` makes in an agent's files, shared by the adapters: read a JSON(C)
// or TOML file into a value (refusing a broken one with a message that says nothing was changed), set values at
// key paths keeping comments and formatting (jsonc-parser edits, the file's own indentation and line ends), append
// a marked TOML block, and undo those edits in a file that changed since. No file is read or written here: each
// function takes the current text and returns the text wanted.
import { applyEdits, modify, parse as parseJsoncValue, type ParseError } from 'jsonc-parser';
import { parseTomlDocument } from '../parse';

/** A user-level file install edits: its path on this machine and its format. */
export interface AgentFile {
  file: string;
  format: 'json' | 'toml';
}

/** One value set at a key path of a JSON file (undefined = remove). */
export interface JsonSet {
  path: string[];
  value: unknown;
}

export interface FileChange {
  file: string;
  before?: string;
  after: string;
  /** JSON: the key paths set (uninstall puts back what they held). TOML: the block appended. */
  sets?: JsonSet[];
  block?: string;
}

/** A file install cannot change as it is (broken, or holding an entry MCP Gate did not write). */
export class AgentFileError extends Error {}

/** The command an agent runs: this Node and this CLI, whatever PATH the agent has. */
export interface GateCommand {
  command: string;
  args: string[];
}

/** Reads a file's current text (undefined when it does not exist). */
export type ReadText = (file: string) => string | undefined;

export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function readJson(file: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  const errors: ParseError[] = [];
  const v = parseJsoncValue(text, errors, { allowTrailingComma: true }) as unknown;
  if (errors.length) throw new AgentFileError(`${file} is not valid JSON (offset ${errors[0].offset}); fix it first, nothing was changed`);
  if (!isObj(v)) throw new AgentFileError(`${file} does not hold a JSON object; fix it first, nothing was changed`);
  return v;
}

/** A JSONC file read as an agent that strips comments and then calls JSON.parse does: a trailing comma is an error. */
export function strictJsonc(file: string, text: string | undefined, agent: string): Record<string, unknown> {
  const v = readJson(file, text);
  if (text !== undefined && text.trim() !== '') {
    const errors: ParseError[] = [];
    parseJsoncValue(text, errors, { allowTrailingComma: false });
    if (errors.length)
      throw new AgentFileError(
        `${file} has a trailing comma (offset ${errors[0].offset}), which ${agent} cannot read; fix it first, nothing was changed`,
      );
  }
  return v;
}

export function parseToml(file: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    return parseTomlDocument(file, text).value as Record<string, unknown>;
  } catch (e) {
    throw new AgentFileError(`${file} is not valid TOML (${(e as Error).message.split('\n')[0]}); fix it first, nothing was changed`);
  }
}

function indentOf(text: string | undefined): { insertSpaces: boolean; tabSize: number } {
  const m = /\n([ \t]+)"/.exec(text ?? '');
  if (m && m[1].startsWith('\t')) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: m ? m[1].length : 2 };
}

export function applyJsonSets(text: string | undefined, sets: JsonSet[]): string {
  let t = text === undefined || text.trim() === '' ? '{}' : text;
  const fmt = { ...indentOf(text), eol: t.includes('\r\n') ? '\r\n' : '\n' };
  for (const s of sets) t = applyEdits(t, modify(t, s.path, s.value, { formattingOptions: fmt }));
  return text === undefined && !t.endsWith('\n') ? t + '\n' : t;
}

/** Reads the value at a key path (undefined when absent). */
export function valueAt(v: unknown, keyPath: string[]): unknown {
  let cur = v;
  for (const k of keyPath) {
    if (!isObj(cur) || !Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** The change that sets each wanted value of a JSON file (only those not already as wanted). */
export function jsonChange(file: string, before: string | undefined, wanted: JsonSet[]): FileChange {
  const v = readJson(file, before);
  const sets = wanted.filter((s) => !sameJson(valueAt(v, s.path), s.value));
  return { file, before, after: sets.length ? applyJsonSets(before, sets) : (before ?? ''), sets };
}

/** A file's text with a block appended after one empty line. */
export function appendBlock(text: string | undefined, block: string): string {
  const base = text ?? '';
  return base + (base === '' || base.endsWith('\n\n') ? '' : base.endsWith('\n') ? '\n' : '\n\n') + block;
}

export const tomlString = (s: string) => JSON.stringify(s); // a JSON string of a path is a valid TOML basic string

export const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));

/** Undoes install's edits in a file changed since (by the agent or by hand): puts back what each key held. */
export function undoChanges(text: string, undo: { sets?: { path: string[]; had: boolean; previous?: unknown }[]; block?: string }): string {
  if (undo.block !== undefined) {
    const i = text.indexOf(undo.block);
    if (i < 0) return text;
    let start = i;
    while (start > 0 && text[start - 1] === '\n' && text[start - 2] === '\n') start--;
    return text.slice(0, start) + text.slice(i + undo.block.length);
  }
  let t = text;
  for (const s of [...(undo.sets ?? [])].reverse())
    t = applyEdits(t, modify(t, s.path, s.had ? s.previous : undefined, { formattingOptions: indentOf(t) }));
  return t;
}

/** Whether a server definition runs exactly this gate command. */
export const runsGate = (def: unknown, gate: GateCommand) => isObj(def) && def.command === gate.command && sameJson(def.args, gate.args);
