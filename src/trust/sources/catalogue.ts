// The sources catalogue: every place an MCP server can be declared, in one table. Each row says the tool it
// belongs to (its import kind), whether a person on this machine writes it (user) or it travels with a clone
// (repository), its format, and whether MCP Gate reads it by itself or only when a configuration imports it.
// Nothing else in the project may hard-code a configuration path.
import * as os from 'node:os';
import * as path from 'node:path';

export type Scope = 'user' | 'repository';

/**
 * - `gate`: MCP Gate's own user configuration (`servers`, `rules`, `secrets`, `imports`, `localExceptions`, `settings`).
 * - `vscode`: VS Code's mcp.json (`servers`, `inputs`).
 * - `mcpServers`: the common `{ "mcpServers": { … } }` file; `imports` and `settings` where `imports` is true.
 * - `gemini`: Gemini CLI settings.json — `mcpServers` among many unrelated keys; `httpUrl` is the streamable URL.
 * - `codex`: Codex config.toml — `[mcp_servers.<name>]` tables among unrelated keys.
 * - `claude-user`: ~/.claude.json — a large state file whose top-level `mcpServers` are user servers.
 */
export type Format = 'gate' | 'vscode' | 'mcpServers' | 'gemini' | 'codex' | 'claude-user';

export const IMPORT_KINDS = ['vscode', 'claude', 'cursor', 'gemini', 'codex', 'pi', 'agentty', 'roo', 'kiro', 'amazonq'] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

export interface Machine {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
}

export function currentMachine(): Machine {
  return { home: os.homedir(), env: process.env, platform: process.platform };
}

export interface Location {
  /** The tool the file belongs to; `gate` is MCP Gate itself. */
  kind: ImportKind | 'gate';
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

function xdgConfig(m: Machine): string {
  return m.env.XDG_CONFIG_HOME || path.join(m.home, '.config');
}

function vscodeUserDir(m: Machine, product: 'Code' | 'Code - Insiders' | 'VSCodium'): string {
  if (m.platform === 'darwin') return path.join(m.home, 'Library', 'Application Support', product, 'User');
  if (m.platform === 'win32') return path.join(m.env.APPDATA || path.join(m.home, 'AppData', 'Roaming'), product, 'User');
  return path.join(xdgConfig(m), product, 'User');
}

function codeServerUserDir(m: Machine): string {
  return path.join(m.env.XDG_DATA_HOME || path.join(m.home, '.local', 'share'), 'code-server', 'User');
}

/** The user configuration file of MCP Gate itself: `MCP_GATE_CONFIG`, else `<XDG config>/mcp-gate/config.json`. */
export function gateConfigPath(m: Machine): string {
  return m.env.MCP_GATE_CONFIG ? path.resolve(m.env.MCP_GATE_CONFIG) : path.join(xdgConfig(m), 'mcp-gate', 'config.json');
}

const repo = (kind: ImportKind, relPath: string, format: Format, extra: Partial<Location> = {}): Location => ({
  kind, scope: 'repository', format, relPath, native: true, canImport: false, openTopLevel: false, ...extra,
});
const user = (kind: ImportKind, userPath: (m: Machine) => string | undefined, format: Format, extra: Partial<Location> = {}): Location => ({
  kind, scope: 'user', format, userPath, native: false, canImport: false, openTopLevel: false, ...extra,
});

export const CATALOGUE: readonly Location[] = [
  // MCP Gate's own user configuration: trusted, native, the only file besides VS Code's application settings that can grant.
  { kind: 'gate', scope: 'user', format: 'gate', userPath: gateConfigPath, native: true, canImport: true, openTopLevel: false },

  // Repository scope: travels with a clone. Always read, always gated.
  repo('vscode', '.vscode/mcp.json', 'vscode'),
  repo('claude', '.mcp.json', 'mcpServers'),
  repo('cursor', '.cursor/mcp.json', 'mcpServers'),
  repo('gemini', '.gemini/settings.json', 'gemini', { openTopLevel: true }),
  repo('codex', '.codex/config.toml', 'codex', { openTopLevel: true }),
  repo('pi', '.pi/mcp.json', 'mcpServers', { canImport: true }),
  repo('agentty', '.agentty/mcp.json', 'mcpServers', { canImport: true }),
  repo('roo', '.roo/mcp.json', 'mcpServers'),
  repo('kiro', '.kiro/settings/mcp.json', 'mcpServers'),
  repo('amazonq', '.amazonq/mcp.json', 'mcpServers'),

  // User scope of other tools: read when a configuration imports their kind.
  user('vscode', (m) => path.join(vscodeUserDir(m, 'Code'), 'mcp.json'), 'vscode'),
  user('vscode', (m) => path.join(vscodeUserDir(m, 'Code - Insiders'), 'mcp.json'), 'vscode'),
  user('vscode', (m) => path.join(codeServerUserDir(m), 'mcp.json'), 'vscode'),
  user('claude', (m) => path.join(m.home, '.claude.json'), 'claude-user', { openTopLevel: true }),
  user('cursor', (m) => path.join(m.home, '.cursor', 'mcp.json'), 'mcpServers'),
  user('gemini', (m) => path.join(m.home, '.gemini', 'settings.json'), 'gemini', { openTopLevel: true }),
  user('codex', (m) => path.join(m.env.CODEX_HOME || path.join(m.home, '.codex'), 'config.toml'), 'codex', { openTopLevel: true }),
  user('pi', (m) => path.join(m.home, '.pi', 'mcp.json'), 'mcpServers', { canImport: true }),
  user('agentty', (m) => m.env.AGENTTY_MCP_CONFIG || path.join(m.home, '.agentty', 'mcp.json'), 'mcpServers', { canImport: true }),
  user('roo', (m) => path.join(vscodeUserDir(m, 'Code'), 'globalStorage', 'rooveterinaryinc.roo-cline', 'settings', 'mcp_settings.json'), 'mcpServers'),
  user('kiro', (m) => path.join(m.home, '.kiro', 'settings', 'mcp.json'), 'mcpServers'),
  user('amazonq', (m) => path.join(m.home, '.aws', 'amazonq', 'mcp.json'), 'mcpServers'),
];

/**
 * Files a repository can carry that steer an agent but run no command: listed with a "from this repository" tag,
 * never gated. Directories are listed one level deep.
 */
export const AGENT_FILES: readonly { relPath: string; directory: boolean; what: string }[] = [
  { relPath: 'AGENTS.md', directory: false, what: 'agent instructions' },
  { relPath: '.github/copilot-instructions.md', directory: false, what: 'Copilot instructions' },
  { relPath: '.github/chatmodes', directory: true, what: 'chat mode' },
  { relPath: '.github/prompts', directory: true, what: 'prompt file' },
  { relPath: '.github/instructions', directory: true, what: 'instructions file' },
  { relPath: '.agentty/agents', directory: true, what: 'agent persona' },
];

export function isImportKind(s: string): s is ImportKind {
  return (IMPORT_KINDS as readonly string[]).includes(s);
}

/** Absolute path of a catalogue row for this project and machine, or undefined when the row has no path here. */
export function locate(loc: Location, projectDir: string, m: Machine): string | undefined {
  if (loc.scope === 'repository') return path.join(projectDir, ...loc.relPath!.split('/'));
  return loc.userPath!(m);
}
