// Reads one parsed configuration document in its format and returns what it declares: server entries
// (validated and normalised to one shape), the kinds it imports, the tool-exposure settings it sets, and the
// raw policy blocks of MCP Gate's own configuration. Problems with one entry stay with that entry; problems
// with the file as a whole (unknown top-level keys, a wrong shape) are file errors.
import type { Format, Location } from './catalogue';
import { isImportKind, type ImportKind } from './catalogue';
import type { ParsedDocument, Position } from './parse';
import { parseLogExport, type LogExportSetting } from './log-export';

export type Transport = 'stdio' | 'http';

/** The normalised definition of a server: what would run, in one shape whatever the source format. */
export interface ServerDefinition {
  type: Transport;
  command?: string;
  args: string[];
  cwd?: string;
  env: Record<string, string | null>;
  envFile?: string;
  url?: string;
  headers: Record<string, string>;
}

export interface DeclaredServer {
  name: string;
  position: Position;
  /** The entry exactly as written (all fields, including tool-specific ones, are pinned by the digest). */
  raw: Record<string, unknown>;
  definition?: ServerDefinition;
  /** Why the entry cannot run as written; the server is blocked with this reason. */
  error?: string;
  /** VS Code `inputs` entries this server refers to through `${input:…}`. */
  inputs: Record<string, unknown>[];
}

export interface ExposureSettings {
  directTools?: boolean | string[];
  toolPrefix?: 'server' | 'short' | 'none';
}

export interface Declarations {
  servers: DeclaredServer[];
  imports: { kinds: ImportKind[]; position: Position } | undefined;
  settings: ExposureSettings | undefined;
  /** MCP Gate configuration blocks, kept raw for the policy layer (validated there). */
  gate: {
    rules?: unknown;
    secrets?: unknown;
    localExceptions?: unknown;
    sandbox?: unknown;
    servers?: unknown;
    packages?: unknown;
    requireLog?: boolean;
    /** Where the exchange log is exported (./log-export.ts), validated. */
    logExport?: LogExportSetting;
    lineOf?: (keyPath: string[]) => number;
  };
  fileErrors: string[];
}

const SERVER_TABLE: Record<Format, string> = {
  gate: 'servers',
  vscode: 'servers',
  mcpServers: 'mcpServers',
  gemini: 'mcpServers',
  codex: 'mcp_servers',
  'claude-user': 'mcpServers',
};

/**
 * The one list of what only user scope may set: the keys of MCP Gate's configuration that grant something (or, as
 * `requireLog`, protect the person), read from the user's configuration file and, as `mcpGate.<key>`, from VS
 * Code's user settings only (application scope, restricted in untrusted workspaces). package.json agrees (a test).
 */
export const USER_ONLY_KEYS = [
  'servers',
  'rules',
  'secrets',
  'imports',
  'localExceptions',
  'sandbox',
  'settings',
  'requireLog',
  'logExport',
  'askToRoute',
  'reopenOverridden',
] as const;

const TOP_LEVEL_KEYS: Partial<Record<Format, string[]>> = {
  gate: ['$schema', ...USER_ONLY_KEYS, 'packages'],
  vscode: ['$schema', 'servers', 'inputs'],
  mcpServers: ['$schema', 'mcpServers'],
};

/** Servers one configuration file may declare; more make the file unusable (a full block for a repository file). */
export const MAX_SERVERS_PER_FILE = 1000;

/** Letters, digits, `-` and `_`: a name must survive being written into a rule action (`mcp.<server>.…`). */
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fmtPos(p: Position): string {
  return `${p.line}:${p.column}`;
}

export function readDeclarations(file: string, loc: Location, doc: ParsedDocument): Declarations {
  const out: Declarations = { servers: [], imports: undefined, settings: undefined, gate: {}, fileErrors: [] };
  const root = doc.value;
  if (!isObject(root)) {
    out.fileErrors.push(`${file}:1:1: the top level must be an object`);
    return out;
  }
  const allowed = TOP_LEVEL_KEYS[loc.format];
  if (allowed && !loc.openTopLevel) {
    const extra = loc.canImport && loc.format === 'mcpServers' ? ['imports', 'settings'] : [];
    for (const key of Object.keys(root)) {
      if (!allowed.includes(key) && !extra.includes(key)) {
        out.fileErrors.push(
          `${file}:${fmtPos(doc.positionOf([key]))}: unknown top-level key "${key}" (expected ${[...allowed, ...extra].join(', ')})`,
        );
      }
    }
  }

  // Imports and settings.
  if (loc.canImport && 'imports' in root) {
    const pos = doc.positionOf(['imports']);
    const v = root.imports;
    if (!Array.isArray(v) || !v.every((k) => typeof k === 'string')) {
      out.fileErrors.push(`${file}:${fmtPos(pos)}: "imports" must be a list of kinds (${IMPORT_KIND_LIST})`);
    } else {
      const unknown = v.filter((k) => !isImportKind(k));
      if (unknown.length)
        out.fileErrors.push(
          `${file}:${fmtPos(pos)}: unknown import kind ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${IMPORT_KIND_LIST})`,
        );
      out.imports = { kinds: v.filter(isImportKind), position: pos };
    }
  }
  if (loc.canImport && 'settings' in root) out.settings = readSettings(file, doc, root.settings, out.fileErrors);
  if (loc.format === 'gate') {
    out.gate = {
      rules: root.rules,
      secrets: root.secrets,
      localExceptions: root.localExceptions,
      sandbox: root.sandbox,
      servers: root.servers,
      packages: root.packages,
      lineOf: (k) => doc.positionOf(k).line,
    };
    if ('requireLog' in root) {
      if (typeof root.requireLog === 'boolean') out.gate.requireLog = root.requireLog;
      else out.fileErrors.push(`${file}:${fmtPos(doc.positionOf(['requireLog']))}: "requireLog" must be true or false`);
    }
    if ('logExport' in root) {
      const got = parseLogExport(root.logExport, `${file}:${fmtPos(doc.positionOf(['logExport']))}: "logExport"`);
      if ('value' in got) out.gate.logExport = got.value;
      else out.fileErrors.push(got.problem);
    }
  }

  // Inputs (VS Code format).
  const inputs = new Map<string, Record<string, unknown>>();
  if (loc.format === 'vscode' && 'inputs' in root) {
    if (!Array.isArray(root.inputs)) out.fileErrors.push(`${file}:${fmtPos(doc.positionOf(['inputs']))}: "inputs" must be a list`);
    else for (const i of root.inputs) if (isObject(i) && typeof i.id === 'string') inputs.set(i.id, i);
  }

  const tableKey = SERVER_TABLE[loc.format];
  const table = root[tableKey];
  if (table === undefined) return out;
  if (!isObject(table)) {
    out.fileErrors.push(`${file}:${fmtPos(doc.positionOf([tableKey]))}: "${tableKey}" must be an object of servers`);
    return out;
  }
  const count = Object.keys(table).length;
  if (count > MAX_SERVERS_PER_FILE) {
    // Bounded work per file: nobody declares this many, and a repository must not make every check slow.
    out.fileErrors.push(
      `${file}:${fmtPos(doc.positionOf([tableKey]))}: "${tableKey}" declares ${count} servers; more than ${MAX_SERVERS_PER_FILE} in one file are refused`,
    );
    return out;
  }
  for (const [name, entry] of Object.entries(table)) {
    const position = doc.positionOf([tableKey, name]);
    const where = `${file}:${fmtPos(position)}: server "${name}"`;
    if (!isObject(entry)) {
      out.servers.push({ name, position, raw: {}, error: `${where}: the entry must be an object`, inputs: [] });
      continue;
    }
    const server: DeclaredServer = { name, position, raw: entry, inputs: referencedInputs(entry, inputs) };
    if (!SERVER_NAME.test(name)) {
      server.error = `${where}: server names may use only letters, digits, "-" and "_" (at most 64), so that rules can name them; rename the server`;
    } else {
      const r = normalise(loc.format, entry);
      if (typeof r === 'string') server.error = `${where}: ${r}`;
      else server.definition = r;
    }
    out.servers.push(server);
  }
  return out;
}

const IMPORT_KIND_LIST = 'vscode, claude, cursor, gemini, codex, pi, agentty, roo, kiro, amazonq';

function readSettings(file: string, doc: ParsedDocument, v: unknown, errors: string[]): ExposureSettings | undefined {
  const pos = fmtPos(doc.positionOf(['settings']));
  if (!isObject(v)) {
    errors.push(`${file}:${pos}: "settings" must be an object`);
    return undefined;
  }
  const s: ExposureSettings = {};
  for (const [k, val] of Object.entries(v)) {
    if (k === 'directTools') {
      if (typeof val === 'boolean' || (Array.isArray(val) && val.every((x) => typeof x === 'string')))
        s.directTools = val as boolean | string[];
      else errors.push(`${file}:${fmtPos(doc.positionOf(['settings', k]))}: "directTools" must be true, false or a list of tool names`);
    } else if (k === 'toolPrefix') {
      if (val === 'server' || val === 'short' || val === 'none') s.toolPrefix = val;
      else errors.push(`${file}:${fmtPos(doc.positionOf(['settings', k]))}: "toolPrefix" must be "server", "short" or "none"`);
    } else {
      errors.push(`${file}:${fmtPos(doc.positionOf(['settings', k]))}: unknown setting "${k}" (expected directTools, toolPrefix)`);
    }
  }
  return s;
}

function referencedInputs(entry: Record<string, unknown>, inputs: Map<string, Record<string, unknown>>): Record<string, unknown>[] {
  const ids = new Set<string>();
  const scan = (v: unknown) => {
    if (typeof v === 'string') for (const m of v.matchAll(/\$\{input:([^}]+)\}/g)) ids.add(m[1]);
    else if (Array.isArray(v)) v.forEach(scan);
    else if (isObject(v)) Object.values(v).forEach(scan);
  };
  scan(entry);
  return [...ids].sort().map((id) => inputs.get(id) ?? { id, missing: true });
}

function stringMap(v: unknown, what: string, allowNull: boolean): Record<string, string | null> | string {
  if (v === undefined) return {};
  if (!isObject(v)) return `"${what}" must be an object of strings`;
  const out: Record<string, string | null> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val === 'string') out[k] = val;
    else if (typeof val === 'number' || typeof val === 'boolean') out[k] = String(val);
    else if (val === null && allowNull) out[k] = null;
    else return `"${what}.${k}" must be a string`;
  }
  return out;
}

/** Validates an entry and brings it to the one shape; returns the reason as a string when it cannot. */
function normalise(format: Format, e: Record<string, unknown>): ServerDefinition | string {
  const url = format === 'gemini' ? pickGeminiUrl(e) : e.url;
  if (typeof url === 'string' && format === 'gemini' && typeof e.url === 'string' && typeof e.httpUrl === 'string') {
    return 'declares both "url" and "httpUrl"; declare exactly one';
  }
  const hasCommand = e.command !== undefined;
  const hasUrl = url !== undefined;
  if (hasCommand && hasUrl)
    return 'declares both "command" and "url"; a server is either a local command or a remote URL, declare exactly one';
  if (!hasCommand && !hasUrl) return 'declares neither "command" nor "url"; declare exactly one';
  const declaredType = e.type ?? e.transport;
  if (declaredType !== undefined) {
    const t = String(declaredType);
    const known = ['stdio', 'http', 'sse', 'streamable-http', 'streamableHttp', 'streamable_http'];
    if (!known.includes(t)) return `unknown transport type "${t}" (expected stdio or http)`;
    if (hasCommand && t !== 'stdio') return `type "${t}" needs a "url", but the entry has a "command"`;
    if (hasUrl && t === 'stdio') return 'type "stdio" needs a "command", but the entry has a "url"';
  }
  const env = stringMap(e.env, 'env', true);
  if (typeof env === 'string') return env;
  const headersRaw = format === 'codex' ? e.http_headers : e.headers;
  const headers = stringMap(headersRaw, format === 'codex' ? 'http_headers' : 'headers', false);
  if (typeof headers === 'string') return headers;
  if (e.cwd !== undefined && typeof e.cwd !== 'string') return '"cwd" must be a string';
  if (e.envFile !== undefined && typeof e.envFile !== 'string') return '"envFile" must be a string';
  if (hasCommand) {
    if (typeof e.command !== 'string' || e.command.trim() === '') return '"command" must be a non-empty string';
    if (e.args !== undefined && (!Array.isArray(e.args) || !e.args.every((a) => typeof a === 'string')))
      return '"args" must be a list of strings';
    return {
      type: 'stdio',
      command: e.command,
      args: (e.args as string[] | undefined) ?? [],
      cwd: e.cwd as string | undefined,
      env,
      envFile: e.envFile as string | undefined,
      headers: {},
    };
  }
  if (typeof url !== 'string' || url.trim() === '') return '"url" must be a non-empty string';
  if (e.args !== undefined) return 'a remote server (url) takes no "args"';
  return { type: 'http', url, args: [], env, headers: headers as Record<string, string> };
}

function pickGeminiUrl(e: Record<string, unknown>): unknown {
  return e.httpUrl !== undefined ? e.httpUrl : e.url;
}

/** True when the entry is switched off in its file (`"disabled": true`, or Codex's `enabled = false`). */
export function isDisabled(raw: Record<string, unknown>): boolean {
  return raw.disabled === true || raw.enabled === false;
}
