// What an adapter of a foreign tool (Claude Code, Codex CLI, Gemini CLI, Cursor, VS Code, …) holds, and the
// helpers the adapters share. An adapter is everything MCP Gate knows of one tool: its name; where its
// configuration files are (computed from the machine, following the tool's own variables) and which variables
// those paths read; its rows of the sources catalogue; the keys a repository file of it uses to pre-approve; the
// workspace entries a contained server must not write; and, for an agent `mcp-gate install` supports, the pure
// edits of its files. The catalogue, pre-approval, the gate's cache key, the sandbox and the CLI are built from
// the adapters (./index.ts lists them); nothing else names a tool's path.
import * as path from 'node:path';
import type { ParsedDocument } from '../parse';
import { isObj, type AgentFile, type FileChange, type GateCommand, type ReadText } from './edits';

export type Scope = 'user' | 'repository';

/**
 * - `gate`: MCP Gate's own user configuration (`servers`, `rules`, `secrets`, `imports`, `localExceptions`, `settings`).
 * - `vscode`: VS Code's mcp.json (`servers`, `inputs`).
 * - `mcpServers`: the common `{ "mcpServers": { … } }` file; `imports` and `settings` where `imports` is true.
 * - `gemini`: Gemini CLI settings.json — `mcpServers` among many unrelated keys; `httpUrl` is the streamable URL.
 * - `codex`: Codex config.toml — `[mcp_servers.<name>]` tables among unrelated keys.
 * - `claude-user`: Claude Code's .claude.json — a large state file whose top-level `mcpServers` are user servers.
 */
export type Format = 'gate' | 'vscode' | 'mcpServers' | 'gemini' | 'codex' | 'claude-user';

export interface Machine {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
}

/** The name `mcp-gate install` gives its entry in every agent's user configuration. */
export const GATE_ENTRY_NAME = 'mcp-gate';

/** One file of a tool where MCP servers can be declared: a row of the sources catalogue, less the tool's kind. */
export interface ToolSource {
  scope: Scope;
  format: Format;
  /** Repository rows: path relative to the workspace folder (POSIX separators). User rows: computed per machine. */
  relPath?: string;
  userPath?: (m: Machine) => string | undefined;
  /** Read without being imported. Every repository row is native: whatever a clone declares is shown and gated. */
  native: boolean;
  /** The file may carry `imports` and `settings` (`directTools`, `toolPrefix`). */
  canImport: boolean;
  /** Top-level keys other than the server table are expected (a general settings file): don't refuse them. */
  openTopLevel: boolean;
}

export const repoFile = (relPath: string, format: Format, extra: Partial<ToolSource> = {}): ToolSource => ({
  scope: 'repository',
  format,
  relPath,
  native: true,
  canImport: false,
  openTopLevel: false,
  ...extra,
});
export const userFile = (userPath: (m: Machine) => string | undefined, format: Format, extra: Partial<ToolSource> = {}): ToolSource => ({
  scope: 'user',
  format,
  userPath,
  native: false,
  canImport: false,
  openTopLevel: false,
  ...extra,
});

/** A repository file that steers an agent but runs no command (listed with a "from this repository" tag, never gated). */
export interface SteeringFile {
  relPath: string;
  directory: boolean;
  what: string;
}

/** What a tool's pre-approval check is given: the project's files, parsed, and where to report what it finds. */
export interface PreApprovalScan {
  /** A repository file (relative, `/`-separated), parsed (TOML by its `.toml` name); undefined when absent or broken. */
  load(rel: string): ParsedDocument | undefined;
  /** Reports that `file` tries to approve `what` for this tool, at `keyPath`. */
  add(file: string, doc: ParsedDocument, keyPath: string[], what: string): void;
}

/** A server the user configured in an agent's own files. */
export interface UserServer {
  name: string;
  /** `user`, or `local (<project folder>)`. */
  scope: string;
  entry?: { serverCommand: string[] } | { serverUrl: string };
}

/** A server of the user's that an allowlist MCP Gate wrote leaves out (the user added it after install). */
export interface AllowlistGap {
  server: UserServer;
  /** The file whose allowlist leaves it out. */
  allowlist: string;
  /** The command that brings the list up to date. */
  fix: string;
  /** The agent, and the key of that file that lists servers (absent: Claude Code's allowedMcpServers). */
  agent?: string;
  key?: string;
}

/** Whether an agent's administrator layer holds what `install <agent> --managed` writes. */
export interface ManagedLayer<K extends string = string> {
  agent: K;
  file: string;
  installed: boolean;
}

/** The administrator's variant of install (`install <agent> --managed`): one file the agent reads at a fixed path. */
export interface ManagedEdits {
  /** Where the agent reads it on this platform (undefined: not known there). */
  file(platform: NodeJS.Platform): string | undefined;
  format: AgentFile['format'];
  /** The changes, given the user's first agent file (whose own servers it admits) and the administrator file. */
  changes(read: ReadText, userFile: string, managedFile: string, gate: GateCommand): FileChange[];
  /** Doctor: whether the layer is in place, and the user's own servers it leaves out. */
  layer(read: ReadText, m: Machine, gate: GateCommand): { layer: ManagedLayer; gaps: AllowlistGap[] } | undefined;
  /** What the agent does once the layer is written (install's closing line: "<agent> now …"). */
  effect: string;
  /** What the layer closes (doctor's line for an installed layer). */
  closes: string;
  /** Whether the user's own file lacks MCP Gate's entry (install --managed then says to run the user install too). */
  userEntryMissing?(read: ReadText, userFile: string): boolean;
}

/** Doctor: a repository server that takes the place of the user's own server of the same name (an allowlist by name). */
export interface NameShadowing {
  /** The repository source whose servers are compared (a catalogue relPath of this tool). */
  source: string;
  /** The names of the user's own servers. */
  userServers(read: ReadText, m: Machine): string[];
  /** Doctor's line for one name. */
  note(name: string, m: Machine): string;
}

/** What `mcp-gate install <agent>` changes, as pure functions of the files' text. */
export interface AgentEdits {
  /** The user-level files install edits, in order (the first one holds MCP Gate's entry). */
  files(m: Machine): AgentFile[];
  install(read: ReadText, files: AgentFile[], gate: GateCommand): FileChange[];
  /** Doctor: the user's servers that an allowlist install wrote at user level leaves out. */
  allowlistGaps?(read: ReadText, listDir: (dir: string) => string[], m: Machine, gate: GateCommand): AllowlistGap[];
  nameShadowing?: NameShadowing;
  managed?: ManagedEdits;
}

export interface Tool<K extends string = string> {
  /** Its import kind (what `imports` names). */
  kind: K;
  /** How messages name it. */
  name: string;
  /** Its rows of the sources catalogue: repository rows, then user rows. */
  sources: readonly ToolSource[];
  /** The environment variables its user paths read (the gate's cache key includes them). */
  env: readonly string[];
  /**
   * Workspace entries (top-level names) the sandbox keeps read-only beyond the top-level entries of its repository
   * sources, which are always protected: files the tool obeys that run or approve something.
   */
  protect?: readonly string[];
  /** Repository files of it that steer an agent and run no command. */
  steering?: readonly SteeringFile[];
  /** Reports the keys of its repository files that try to approve, trust or auto-start servers or tools. */
  preApproval?(scan: PreApprovalScan): void;
  /** Present for an agent `mcp-gate install` supports. */
  agent?: AgentEdits;
}

/** `XDG_CONFIG_HOME`, else `~/.config`. */
export function xdgConfig(m: Machine): string {
  return m.env.XDG_CONFIG_HOME || path.join(m.home, '.config');
}

/** `XDG_DATA_HOME`, else `~/.local/share`. */
export function xdgData(m: Machine): string {
  return m.env.XDG_DATA_HOME || path.join(m.home, '.local', 'share');
}

/** The `User` folder of a VS Code build on this platform (Roo Code keeps its settings in its globalStorage). */
export function vscodeUserDir(m: Machine, product: 'Code' | 'Code - Insiders' | 'VSCodium'): string {
  if (m.platform === 'darwin') return path.join(m.home, 'Library', 'Application Support', product, 'User');
  if (m.platform === 'win32') return path.join(m.env.APPDATA || path.join(m.home, 'AppData', 'Roaming'), product, 'User');
  return path.join(xdgConfig(m), product, 'User');
}

/** A path under the home folder as people write it (`~/…`), else as it is. */
export function tildify(file: string, home: string): string {
  const rel = path.relative(home, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? `~/${rel.split(path.sep).join('/')}` : file;
}

/** The top-level workspace entry a repository path lies in (`.kiro/settings/mcp.json` → `.kiro`). */
export function topLevel(relPath: string): string {
  return relPath.split('/')[0];
}

export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
/** Up to ten values, quoted, for a message. */
export const quotedList = (xs: string[]) =>
  xs
    .slice(0, 10)
    .map((x) => JSON.stringify(x))
    .join(', ') + (xs.length > 10 ? `, … (${xs.length} in all)` : '');

/** A repository server named like MCP Gate's own entry: it would take that entry's place. */
export function shadowsGate(scan: PreApprovalScan, rel: string, doc: ParsedDocument, servers: unknown, keyPath: string[]): void {
  if (isObj(servers) && Object.prototype.hasOwnProperty.call(servers, GATE_ENTRY_NAME)) {
    scan.add(rel, doc, [...keyPath, GATE_ENTRY_NAME], `its own server under the name "${GATE_ENTRY_NAME}", in place of MCP Gate's entry`);
  }
}

/** The common `mcpServers` file: a server named `mcp-gate`, and `autoApprove`/`alwaysAllow` tool lists. */
export function mcpServersPreApproval(scan: PreApprovalScan, rel: string): void {
  const doc = scan.load(rel);
  if (!doc || !isObj(doc.value) || !isObj(doc.value.mcpServers)) return;
  shadowsGate(scan, rel, doc, doc.value.mcpServers, ['mcpServers']);
  for (const [name, def] of Object.entries(doc.value.mcpServers)) {
    if (!isObj(def)) continue;
    for (const key of ['autoApprove', 'alwaysAllow']) {
      const tools = strings(def[key]);
      if (tools.length)
        scan.add(rel, doc, ['mcpServers', name, key], `calls to the tools ${quotedList(tools)} of "${name}" without asking`);
    }
  }
}

/** The repository paths of a tool's sources. */
export function repositoryPaths(t: Pick<Tool, 'sources'>): string[] {
  return t.sources.filter((s) => s.scope === 'repository' && s.relPath !== undefined).map((s) => s.relPath!);
}

/** A tool's repository source at a path (the adapters name their own files through it). */
export function repositoryPath(t: Pick<Tool, 'sources' | 'kind'>, index = 0): string {
  const p = repositoryPaths(t)[index];
  if (p === undefined) throw new Error(`${t.kind} has no repository source ${index}`);
  return p;
}
