// What `mcp-gate install <agent>` changes in each agent's user-level configuration, as pure functions of the
// files' current text: one user entry `mcp-gate` that runs `mcp-gate serve` for the folder the agent works in,
// and, where the agent has a setting for it, the agent's own loading of project MCP files turned off. Comments and
// formatting are kept (jsonc-parser edits; for Codex's TOML, one appended block checked with smol-toml).
//
// Measured with the agents from npm (Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0):
// - Claude Code starts a user server with the folder it runs in as cwd (and CLAUDE_PROJECT_DIR). Its user
//   servers live in ~/.claude.json `mcpServers` (not in settings.json). A user-level `allowedMcpServers` in
//   ~/.claude/settings.json keeps every server it does not list out, `.mcp.json` servers included; a repository's
//   own `allowedMcpServers` is added to the list (it can admit its servers) — doctor reports that as an attempt.
//   `enableAllProjectMcpServers` of a repository's .claude/settings.json approves its servers once the folder is
//   trusted; ours sets it false at user level.
// - Gemini CLI starts servers with the project folder as cwd, and only in trusted folders. A user-level
//   `mcp.allowed` blocks every other server name; a repository's `mcp.allowed` cannot admit its own, but a
//   repository server named `mcp-gate` replaces the user's entry (doctor reports it).
// - Codex CLI reads a project's .codex/config.toml only for a project its user config marks trusted; it has no
//   setting that keeps the MCP servers of a trusted project out.
// - Cursor: ~/.cursor/mcp.json, `${workspaceFolder}` names the project; no setting keeps .cursor/mcp.json out.
// - Claude Code's managed settings (`install claude --managed`, docs/agents.md has the evidence): a fixed path per
//   platform (Linux /etc/claude-code/managed-settings.json; CLAUDE_CODE_MANAGED_SETTINGS_PATH has no effect in the
//   npm build). `allowManagedMcpServersOnly: true` there makes Claude Code read `allowedMcpServers` only from
//   managed settings (a repository's list no longer adds to it); the flag without a managed list is dropped.
// - Gemini CLI's system settings (`install gemini --managed`): /etc/gemini-cli/settings.json on Linux, merged
//   last (over the workspace's): `mcpServers` merge per name, so the system's `mcp-gate` wins over a repository
//   server of that name; `mcp.allowed` is the intersection of every scope's list (a repository can narrow it, not
//   widen it). GEMINI_CLI_SYSTEM_SETTINGS_PATH moves the file for whoever sets it, so MCP Gate writes the default.
// - Codex CLI's requirements (`install codex --managed`): /etc/codex/requirements.toml, `[mcp_servers.<name>]
//   identity` tables: an allowlist by name and command (or URL); every other server, a trusted project's
//   included, is disabled ("requirements (/etc/codex/requirements.toml)"), and so is a server of a listed name
//   whose command does not match. No variable moves that file.
import * as path from 'node:path';
import { applyEdits, modify, parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parseTomlDocument } from '../trust/sources/parse';
import { GATE_ENTRY_NAME } from '../trust/sources/preapproval';

export const AGENTS = ['claude', 'codex', 'gemini', 'cursor'] as const;
export type Agent = (typeof AGENTS)[number];

export const AGENT_NAMES: Record<Agent, string> = { claude: 'Claude Code', codex: 'Codex CLI', gemini: 'Gemini CLI', cursor: 'Cursor' };

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

export class AgentFileError extends Error {}

/** The command an agent runs: this Node and this CLI, whatever PATH the agent has. */
export interface GateCommand {
  command: string;
  args: string[];
}

export function agentFiles(agent: Agent, home: string, env: Readonly<Record<string, string | undefined>>): AgentFile[] {
  switch (agent) {
    case 'claude': {
      const dir = env.CLAUDE_CONFIG_DIR || path.join(home, '.claude');
      return [
        { file: env.CLAUDE_CONFIG_DIR ? path.join(dir, '.claude.json') : path.join(home, '.claude.json'), format: 'json' },
        { file: path.join(dir, 'settings.json'), format: 'json' },
      ];
    }
    case 'codex':
      return [{ file: path.join(env.CODEX_HOME || path.join(home, '.codex'), 'config.toml'), format: 'toml' }];
    case 'gemini':
      return [{ file: path.join(home, '.gemini', 'settings.json'), format: 'json' }];
    case 'cursor':
      return [{ file: path.join(home, '.cursor', 'mcp.json'), format: 'json' }];
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function readJson(file: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  const errors: ParseError[] = [];
  const v = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length) throw new AgentFileError(`${file} is not valid JSON (offset ${errors[0].offset}); fix it first, nothing was changed`);
  if (!isObj(v)) throw new AgentFileError(`${file} does not hold a JSON object; fix it first, nothing was changed`);
  return v;
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

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function jsonChange(file: string, before: string | undefined, wanted: JsonSet[]): FileChange {
  const v = readJson(file, before);
  const sets = wanted.filter((s) => !sameJson(valueAt(v, s.path), s.value));
  return { file, before, after: sets.length ? applyJsonSets(before, sets) : before ?? '', sets };
}

type Entry = { serverCommand: string[] } | { serverUrl: string };

/** A server the user configured in ~/.claude.json: user scope, or local scope of one project. */
export interface ClaudeUserServer {
  name: string;
  /** `user`, or `local (<project folder>)`. */
  scope: string;
  entry?: Entry;
}

/** The user's own Claude Code servers (not MCP Gate's entry), each with the allowlist entry that admits it. */
export function claudeUserServers(claudeJson: Record<string, unknown>, withGate = false): ClaudeUserServer[] {
  const found: ClaudeUserServer[] = [];
  const take = (servers: unknown, scope: string) => {
    if (!isObj(servers)) return;
    for (const [name, s] of Object.entries(servers)) {
      if (scope === 'user' && name === GATE_ENTRY_NAME && !withGate) continue;
      if (!isObj(s)) continue;
      const entry: Entry | undefined = typeof s.command === 'string' ? { serverCommand: [s.command, ...(Array.isArray(s.args) ? s.args.map(String) : [])] } : typeof s.url === 'string' ? { serverUrl: s.url } : undefined;
      found.push({ name, scope, entry });
    }
  };
  take(claudeJson.mcpServers, 'user');
  if (isObj(claudeJson.projects)) for (const [dir, p] of Object.entries(claudeJson.projects)) if (isObj(p)) take(p.mcpServers, `local (${dir})`);
  return found;
}

/** Claude Code's allowlist: what it held, MCP Gate's command, and every server the user configured himself. */
function claudeAllowlist(claudeJson: Record<string, unknown>, settings: Record<string, unknown>, gate: GateCommand): unknown[] {
  const out: unknown[] = Array.isArray(settings.allowedMcpServers) ? [...settings.allowedMcpServers] : [];
  const add = (e: Entry) => {
    if (!out.some((x) => sameJson(x, e))) out.push(e);
  };
  add({ serverCommand: [gate.command, ...gate.args] });
  for (const s of claudeUserServers(claudeJson)) if (s.entry) add(s.entry);
  return out;
}

/** Where Claude Code reads managed settings on this platform (fixed by Claude Code; nothing overrides it). */
export function claudeManagedSettingsFile(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return '/Library/Application Support/ClaudeCode/managed-settings.json';
  if (platform === 'win32') return 'C:\\Program Files\\ClaudeCode\\managed-settings.json';
  return '/etc/claude-code/managed-settings.json';
}

/** `install claude --managed`: the managed settings file admits only its own list: the gate and the user's servers. */
export function claudeManagedChanges(read: (file: string) => string | undefined, claudeJsonFile: string, managedFile: string, gate: GateCommand): FileChange[] {
  const cjText = read(claudeJsonFile);
  const claudeJson = readJson(claudeJsonFile, cjText);
  const text = read(managedFile);
  const managed = readJson(managedFile, text);
  if (text !== undefined && text.trim() !== '') {
    try {
      JSON.parse(text);
    } catch {
      // Measured: Claude Code 2.1.332 then refuses to start ("could not be parsed as a JSON object").
      throw new AgentFileError(`${managedFile} is not strict JSON (a comment or a trailing comma?), which Claude Code reads it as: it would refuse to start with it; fix it first, nothing was changed`);
    }
  }
  return [jsonChange(managedFile, text, [
    { path: ['allowManagedMcpServersOnly'], value: true },
    { path: ['allowedMcpServers'], value: claudeAllowlist(claudeJson, managed, gate) },
  ])];
}

/** The agents with an administrator's layer `install --managed` writes. */
export const MANAGED_AGENTS = ['claude', 'gemini', 'codex'] as const;
export type ManagedAgent = (typeof MANAGED_AGENTS)[number];

/** Where Gemini CLI reads system settings by default (GEMINI_CLI_SYSTEM_SETTINGS_PATH is not followed: whoever sets it moves it). */
export function geminiSystemSettingsFile(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return '/Library/Application Support/GeminiCli/settings.json';
  if (platform === 'win32') return 'C:\\ProgramData\\gemini-cli\\settings.json';
  return '/etc/gemini-cli/settings.json';
}

/** Where Codex CLI reads requirements (the path in its Unix binary; none is known for Windows). */
export function codexRequirementsFile(platform: NodeJS.Platform = process.platform): string | undefined {
  return platform === 'win32' ? undefined : '/etc/codex/requirements.toml';
}

export function managedFileOf(agent: ManagedAgent, platform: NodeJS.Platform = process.platform): string | undefined {
  if (agent === 'claude') return claudeManagedSettingsFile(platform);
  if (agent === 'gemini') return geminiSystemSettingsFile(platform);
  return codexRequirementsFile(platform);
}

/** Gemini CLI reads its settings files with comments stripped, then JSON.parse: a trailing comma is an error there. */
function strictJsonc(file: string, text: string | undefined, agent: string): Record<string, unknown> {
  const v = readJson(file, text);
  if (text !== undefined && text.trim() !== '') {
    const errors: ParseError[] = [];
    parseJsonc(text, errors, { allowTrailingComma: false });
    if (errors.length) throw new AgentFileError(`${file} has a trailing comma (offset ${errors[0].offset}), which ${agent} cannot read; fix it first, nothing was changed`);
  }
  return v;
}

/** The user's own Gemini CLI servers in ~/.gemini/settings.json (not MCP Gate's entry). */
export function geminiUserServers(settings: Record<string, unknown>): string[] {
  return isObj(settings.mcpServers) ? Object.keys(settings.mcpServers).filter((n) => n !== GATE_ENTRY_NAME) : [];
}

/**
 * `install gemini --managed`: the system settings define `mcp-gate` (merged last, so a repository's server of that
 * name no longer takes its place) and `mcp.allowed` = what it held, `mcp-gate` and the user's own server names.
 */
export function geminiManagedChanges(read: (file: string) => string | undefined, userFile: string, systemFile: string, gate: GateCommand): FileChange[] {
  const user = readJson(userFile, read(userFile));
  const text = read(systemFile);
  const sys = strictJsonc(systemFile, text, 'Gemini CLI');
  const allowed = isObj(sys.mcp) && Array.isArray(sys.mcp.allowed) ? [...sys.mcp.allowed] : [];
  for (const n of [GATE_ENTRY_NAME, ...geminiUserServers(user)]) if (!allowed.includes(n)) allowed.push(n);
  return [jsonChange(systemFile, text, [
    { path: ['mcpServers', GATE_ENTRY_NAME], value: { command: gate.command, args: gate.args } },
    { path: ['mcp', 'allowed'], value: allowed },
  ])];
}

export const CODEX_MANAGED_BEGIN = '# mcp-gate: begin: added by `mcp-gate install codex --managed`; `mcp-gate uninstall codex --managed` removes it';
export const CODEX_MANAGED_END = '# mcp-gate: end';

const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));

/** A Codex server's identity for requirements.toml: its exact executable and arguments, or its exact URL. */
function codexIdentity(def: unknown): string | undefined {
  if (!isObj(def)) return undefined;
  if (typeof def.command === 'string') {
    const args = Array.isArray(def.args) ? def.args.map(String) : [];
    return `command = { executable = ${tomlString(def.command)}, args = [${args.map((a) => `{ match = "exact", value = ${tomlString(a)} }`).join(', ')}] }`;
  }
  if (typeof def.url === 'string') return `url = ${tomlString(def.url)}`;
  return undefined;
}

/** The user's own Codex servers in config.toml (not MCP Gate's entry), with their identity line. */
export function codexUserServers(config: Record<string, unknown>): { name: string; identity?: string }[] {
  return isObj(config.mcp_servers) ? Object.entries(config.mcp_servers).filter(([n]) => n !== GATE_ENTRY_NAME).map(([name, def]) => ({ name, identity: codexIdentity(def) })) : [];
}

function parseToml(file: string, text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  try {
    return parseTomlDocument(file, text).value as Record<string, unknown>;
  } catch (e) {
    throw new AgentFileError(`${file} is not valid TOML (${(e as Error).message.split('\n')[0]}); fix it first, nothing was changed`);
  }
}

/** The region `install codex --managed` wrote (from its begin line to its end line), if any. */
function codexManagedRegion(text: string): { start: number; end: number } | undefined {
  const start = text.indexOf(CODEX_MANAGED_BEGIN);
  if (start < 0) return undefined;
  const e = text.indexOf(CODEX_MANAGED_END + '\n', start);
  return { start, end: e < 0 ? text.length : e + CODEX_MANAGED_END.length + 1 };
}

/**
 * `install codex --managed`: requirements.toml lists `mcp-gate` by its exact command and each of the user's own
 * servers by theirs (one marked region, replaced when run again); the administrator's own entries stay.
 */
export function codexManagedChanges(read: (file: string) => string | undefined, userFile: string, reqFile: string, gate: GateCommand): FileChange[] {
  const user = parseToml(userFile, read(userFile));
  const text = read(reqFile);
  const region = text === undefined ? undefined : codexManagedRegion(text);
  const outside = text === undefined ? '' : region ? text.slice(0, region.start) + text.slice(region.end) : text;
  const theirs = parseToml(reqFile, outside);
  const held = isObj(theirs.mcp_servers) ? theirs.mcp_servers : {};
  if (GATE_ENTRY_NAME in held) throw new AgentFileError(`${reqFile} already has a [mcp_servers.${GATE_ENTRY_NAME}] that MCP Gate did not write; remove it first, nothing was changed`);
  const lines = [CODEX_MANAGED_BEGIN];
  const entry = (name: string, identity: string) => lines.push(`[mcp_servers.${tomlKey(name)}.identity]`, identity, '');
  entry(GATE_ENTRY_NAME, codexIdentity({ command: gate.command, args: gate.args }) as string);
  for (const s of codexUserServers(user)) if (s.identity && !(s.name in held)) entry(s.name, s.identity);
  lines.push(CODEX_MANAGED_END, '');
  const block = lines.join('\n');
  let after: string;
  if (region && text !== undefined) after = text.slice(0, region.start) + block + text.slice(region.end);
  else {
    const base = text ?? '';
    after = base + (base === '' || base.endsWith('\n\n') ? '' : base.endsWith('\n') ? '\n' : '\n\n') + block;
  }
  try {
    parseTomlDocument(reqFile, after);
  } catch (e) {
    throw new AgentFileError(`${reqFile}: adding MCP Gate's [mcp_servers] entries would not be valid TOML here (${(e as Error).message.split('\n')[0]}); nothing was changed`);
  }
  return [{ file: reqFile, before: text, after, block }];
}

/** Glob match of Claude Code's serverUrl entries (`*` matches any run of characters). */
function urlMatches(pattern: string, url: string): boolean {
  const re = new RegExp('^' + pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*') + '$');
  return re.test(url);
}

/**
 * Whether an allowlist admits a server, as Claude Code matches (observed with 2.1.332): a stdio server must match a
 * `serverCommand` entry exactly once the list has any; a remote one a `serverUrl` pattern once it has any;
 * otherwise a `serverName` entry admits it by name.
 */
export function claudeAllows(list: unknown[], server: ClaudeUserServer): boolean {
  const entries = list.filter(isObj);
  if (server.entry && 'serverCommand' in server.entry) {
    const commands = entries.filter((e) => Array.isArray(e.serverCommand));
    if (commands.length) return commands.some((e) => sameJson(e.serverCommand, (server.entry as { serverCommand: string[] }).serverCommand));
  } else if (server.entry && 'serverUrl' in server.entry) {
    const urls = entries.filter((e) => typeof e.serverUrl === 'string');
    if (urls.length) return urls.some((e) => urlMatches(e.serverUrl as string, (server.entry as { serverUrl: string }).serverUrl));
  }
  return entries.some((e) => e.serverName === server.name);
}

/** A server of the user's that an allowlist MCP Gate wrote leaves out (the user added it after install). */
export interface AllowlistGap {
  server: ClaudeUserServer;
  /** The file whose allowedMcpServers leaves it out. */
  allowlist: string;
  /** The command that brings the list up to date. */
  fix: string;
  /** The agent, and the key of that file that lists servers. */
  agent?: string;
  key?: string;
}

/**
 * The user's Claude Code servers that an allowlist install wrote does not admit: the user-level one (when it holds
 * MCP Gate's entry) and the managed one (when it is in force: allowManagedMcpServersOnly with a list). The managed
 * list is managed-settings.json's with those of the drop-in folder beside it (`managed-settings.d/*.json`, not
 * dot files), which Claude Code adds to it (measured).
 */
export function claudeAllowlistGaps(read: (file: string) => string | undefined, listDir: (dir: string) => string[], home: string, env: Readonly<Record<string, string | undefined>>, gate: GateCommand, platform: NodeJS.Platform = process.platform): AllowlistGap[] {
  const [cj, st] = agentFiles('claude', home, env);
  const servers = claudeUserServers(readJson(cj.file, read(cj.file)), true);
  const gaps: AllowlistGap[] = [];
  const check = (file: string, list: unknown, fix: string) => {
    if (!Array.isArray(list)) return;
    for (const s of servers) if (!claudeAllows(list, s)) gaps.push({ server: s, allowlist: file, fix });
  };
  const managedFile = claudeManagedSettingsFile(platform);
  const dropInDir = path.join(path.dirname(managedFile), 'managed-settings.d');
  const docs = [managedFile, ...listDir(dropInDir).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort().map((n) => path.join(dropInDir, n))].map((f) => readJson(f, read(f)));
  const lists = docs.filter((d) => Array.isArray(d.allowedMcpServers)).flatMap((d) => d.allowedMcpServers as unknown[]);
  const managedInForce = docs.some((d) => d.allowManagedMcpServersOnly === true) && docs.some((d) => Array.isArray(d.allowedMcpServers));
  if (managedInForce) check(managedFile, lists, 'mcp-gate install claude --managed');
  const settings = readJson(st.file, read(st.file));
  const list = settings.allowedMcpServers;
  const ours = Array.isArray(list) && list.some((e) => isObj(e) && sameJson(e.serverCommand, [gate.command, ...gate.args]));
  if (ours && !managedInForce) check(st.file, list, 'mcp-gate install claude');
  return gaps;
}

export const CODEX_BLOCK_MARK = '# mcp-gate: added by `mcp-gate install codex`; `mcp-gate uninstall codex` removes it';

const tomlString = (s: string) => JSON.stringify(s); // a JSON string of a path is a valid TOML basic string

export function codexBlock(gate: GateCommand): string {
  return `${CODEX_BLOCK_MARK}\n[mcp_servers.${GATE_ENTRY_NAME}]\ncommand = ${tomlString(gate.command)}\nargs = [${gate.args.map(tomlString).join(', ')}]\nstartup_timeout_sec = 60\n`;
}

/** The changes `install` would make, file by file (a file already as wanted has after === before). */
export function installChanges(agent: Agent, read: (file: string) => string | undefined, files: AgentFile[], gate: GateCommand): FileChange[] {
  switch (agent) {
    case 'claude': {
      const [cj, st] = files;
      const cjText = read(cj.file);
      const stText = read(st.file);
      const claudeJson = readJson(cj.file, cjText);
      const settings = readJson(st.file, stText);
      return [
        jsonChange(cj.file, cjText, [{ path: ['mcpServers', GATE_ENTRY_NAME], value: { type: 'stdio', command: gate.command, args: gate.args, env: {} } }]),
        jsonChange(st.file, stText, [
          { path: ['enableAllProjectMcpServers'], value: false },
          { path: ['allowedMcpServers'], value: claudeAllowlist(claudeJson, settings, gate) },
        ]),
      ];
    }
    case 'gemini': {
      const f = files[0].file;
      const text = read(f);
      const v = readJson(f, text);
      const allowed = isObj(v.mcp) && Array.isArray(v.mcp.allowed) ? [...v.mcp.allowed] : [];
      const names = [GATE_ENTRY_NAME, ...(isObj(v.mcpServers) ? Object.keys(v.mcpServers) : [])];
      for (const n of names) if (!allowed.includes(n)) allowed.push(n);
      return [jsonChange(f, text, [
        { path: ['mcpServers', GATE_ENTRY_NAME], value: { command: gate.command, args: gate.args } },
        { path: ['mcp', 'allowed'], value: allowed },
      ])];
    }
    case 'cursor': {
      const f = files[0].file;
      const text = read(f);
      return [jsonChange(f, text, [{ path: ['mcpServers', GATE_ENTRY_NAME], value: { command: gate.command, args: [...gate.args, '--project', '${workspaceFolder}'] } }])];
    }
    case 'codex': {
      const f = files[0].file;
      const text = read(f);
      const v = parseToml(f, text);
      const block = codexBlock(gate);
      if (text?.includes(block)) return [{ file: f, before: text, after: text, block }];
      if (isObj(v.mcp_servers) && GATE_ENTRY_NAME in v.mcp_servers) {
        throw new AgentFileError(`${f} already has a [mcp_servers.${GATE_ENTRY_NAME}] that MCP Gate did not write; remove it first, nothing was changed`);
      }
      const base = text ?? '';
      const after = base + (base === '' || base.endsWith('\n\n') ? '' : base.endsWith('\n') ? '\n' : '\n\n') + block;
      try {
        parseTomlDocument(f, after);
      } catch (e) {
        throw new AgentFileError(`${f}: adding [mcp_servers.${GATE_ENTRY_NAME}] would not be valid TOML here (${(e as Error).message.split('\n')[0]}); nothing was changed`);
      }
      return [{ file: f, before: text, after, block }];
    }
  }
}

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
  for (const s of [...(undo.sets ?? [])].reverse()) t = applyEdits(t, modify(t, s.path, s.had ? s.previous : undefined, { formattingOptions: indentOf(t) }));
  return t;
}

/** Whether an agent's administrator layer holds what `install <agent> --managed` writes. */
export interface ManagedLayer {
  agent: ManagedAgent;
  file: string;
  installed: boolean;
}

const sameGate = (def: unknown, gate: GateCommand) => isObj(def) && def.command === gate.command && sameJson(def.args, gate.args);

/**
 * Each administrator layer MCP Gate knows, whether `install --managed` is in it, and (Gemini CLI, Codex CLI) the
 * user's own servers it leaves out (added after install: the agent then does not start them).
 */
export function managedLayers(read: (file: string) => string | undefined, home: string, env: Readonly<Record<string, string | undefined>>, gateOf: (agent: ManagedAgent) => GateCommand, platform: NodeJS.Platform = process.platform): { layers: ManagedLayer[]; gaps: AllowlistGap[] } {
  const layers: ManagedLayer[] = [];
  const gaps: AllowlistGap[] = [];
  const claudeFile = claudeManagedSettingsFile(platform);
  const claude = readJson(claudeFile, read(claudeFile));
  layers.push({ agent: 'claude', file: claudeFile, installed: claude.allowManagedMcpServersOnly === true && Array.isArray(claude.allowedMcpServers) && claude.allowedMcpServers.some((e) => isObj(e) && sameJson(e.serverCommand, [gateOf('claude').command, ...gateOf('claude').args])) });

  const geminiFile = geminiSystemSettingsFile(platform);
  const sys = readJson(geminiFile, read(geminiFile));
  const gInstalled = sameGate(valueAt(sys, ['mcpServers', GATE_ENTRY_NAME]), gateOf('gemini'));
  layers.push({ agent: 'gemini', file: geminiFile, installed: gInstalled });
  const allowed = valueAt(sys, ['mcp', 'allowed']);
  if (gInstalled && Array.isArray(allowed)) {
    const userFile = agentFiles('gemini', home, env)[0].file;
    for (const name of geminiUserServers(readJson(userFile, read(userFile)))) {
      if (!allowed.some((a) => typeof a === 'string' && a.toLowerCase().trim() === name.toLowerCase().trim())) gaps.push({ server: { name, scope: 'user' }, allowlist: geminiFile, fix: 'mcp-gate install gemini --managed', agent: 'Gemini CLI', key: 'mcp.allowed' });
    }
  }

  const codexFile = codexRequirementsFile(platform);
  if (codexFile !== undefined) {
    const text = read(codexFile);
    const cInstalled = text !== undefined && text.includes(CODEX_MANAGED_BEGIN);
    layers.push({ agent: 'codex', file: codexFile, installed: cInstalled });
    if (cInstalled) {
      const req = parseToml(codexFile, text);
      const listed = isObj(req.mcp_servers) ? req.mcp_servers : {};
      const userFile = agentFiles('codex', home, env)[0].file;
      for (const s of codexUserServers(parseToml(userFile, read(userFile)))) {
        if (!(s.name in listed)) gaps.push({ server: { name: s.name, scope: 'user' }, allowlist: codexFile, fix: 'mcp-gate install codex --managed', agent: 'Codex CLI', key: '[mcp_servers]' });
      }
    }
  }
  return { layers, gaps };
}

/** An agent's "mcp-gate" entry whose program or CLI file is gone (the checkout it was installed from moved, say). */
export interface BrokenGateEntry {
  agent: Agent;
  file: string;
  /** The absolute path the entry runs that does not exist. */
  missing: string;
}

/**
 * Every user-level agent file whose "mcp-gate" entry names an absolute command or CLI file that no longer exists
 * (doctor says so: the agent then fails to start MCP Gate, often silently). Unreadable files are not guessed at.
 */
export function brokenGateEntries(read: (file: string) => string | undefined, home: string, env: Readonly<Record<string, string | undefined>>, exists: (file: string) => boolean): BrokenGateEntry[] {
  const out: BrokenGateEntry[] = [];
  for (const agent of AGENTS) {
    for (const f of agentFiles(agent, home, env)) {
      const text = read(f.file);
      if (text === undefined) continue;
      const v = f.format === 'toml' ? parseToml(f.file, text) : readJson(f.file, text);
      const entry = valueAt(v, [f.format === 'toml' ? 'mcp_servers' : 'mcpServers', GATE_ENTRY_NAME]);
      if (!isObj(entry) || typeof entry.command !== 'string') continue;
      const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
      const paths = [entry.command, ...args.filter((a) => /\.[cm]?js$/.test(a))].filter((p) => path.isAbsolute(p));
      const missing = paths.find((p) => !exists(p));
      if (missing) out.push({ agent, file: f.file, missing });
    }
  }
  return out;
}

/**
 * The gate command an agent's user-level "mcp-gate" entry runs now, when its program and CLI file exist (what a
 * managed layer must then admit, so that the user's entry keeps working under it); undefined otherwise.
 */
export function installedGateOf(agent: Agent, read: (file: string) => string | undefined, home: string, env: Readonly<Record<string, string | undefined>>, exists: (file: string) => boolean): GateCommand | undefined {
  for (const f of agentFiles(agent, home, env)) {
    const text = read(f.file);
    if (text === undefined) continue;
    let v: Record<string, unknown>;
    try {
      v = f.format === 'toml' ? parseToml(f.file, text) : readJson(f.file, text);
    } catch {
      return undefined;
    }
    const entry = valueAt(v, [f.format === 'toml' ? 'mcp_servers' : 'mcpServers', GATE_ENTRY_NAME]);
    if (!isObj(entry) || typeof entry.command !== 'string' || !Array.isArray(entry.args)) continue;
    const args = entry.args.filter((a): a is string => typeof a === 'string');
    if (args.length !== 2 || args[1] !== 'serve' || !path.isAbsolute(entry.command) || !path.isAbsolute(args[0])) continue;
    if (exists(entry.command) && exists(args[0])) return { command: entry.command, args };
  }
  return undefined;
}
