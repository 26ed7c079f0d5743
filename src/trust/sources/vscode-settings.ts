// VS Code's own MCP settings, as data: their keys, what each measured VS Code version reads and starts by itself
// (VSCODE_READS), the routing MCP Gate writes into a workspace file of its own (a repository cannot undo it), and a
// setting's value in a repository's settings file. What VS Code starts from them is ./vscode-own.ts.
import { parse as parseJsonc } from 'jsonc-parser';
import type { ReadResult } from './fsread';

export const ACCESS_KEY = 'chat.mcp.access';
export const DISCOVERY_KEY = 'chat.mcp.discovery.enabled';
/** Replaced by `chat.mcp.access` (VS Code migrates `false` to `none`, `true` to `all`). */
export const LEGACY_ENABLED_KEY = 'chat.mcp.enabled';
/** The MCP registry VS Code consults under `registry` (an application setting, yet a nested "chat.mcp.gallery" object of a repository reaches it: measured). */
export const GALLERY_URL_KEY = 'chat.mcp.gallery.serviceUrl';

/** Every discovery source of every measured version (VS Code 1.112 has the first four; 1.139 adds `copilot`). */
export const DISCOVERY_SOURCES = ['claude-desktop', 'windsurf', 'cursor-global', 'cursor-workspace', 'copilot'] as const;
export type DiscoverySource = (typeof DISCOVERY_SOURCES)[number];
/** Same label across sources: `disable` keeps the first registered enabled, `suffix` renames the others (VS Code 1.139). */
export const COLLISION_KEY = 'chat.mcp.collisionBehavior';
/** Application scope (a repository's value is not applied: measured), checked by VS Code at every start (1.139). */
export const ALLOWED_KEY = 'chat.mcp.allowedServers';
/** MCP Gate's gateway: every definition of its provider is HTTP on 127.0.0.1 under /mcp/ (host/gateway/gateway.ts urlFor). */
export const GATEWAY_ALLOWED_ENTRY = Object.freeze({ serverUrl: 'http://127.0.0.1:*/mcp/*' });

/** What one VS Code version reads and starts by itself, as measured (docs/vscode-own-starts.md). */
export interface VsCodeReads {
  /** The measured version this row is (major.minor). */
  measured: string;
  /** The workspace-root `.mcp.json` of each folder, as `workspace-dot-mcp.<folder index>.<name>`. */
  workspaceRootMcpJson: boolean;
  /** The keys of `chat.mcp.discovery.enabled` this version knows. */
  discovery: readonly DiscoverySource[];
  /** `chat.mcp.collisionBehavior` exists. */
  collisionBehavior: boolean;
  /**
   * A switch back to `registry` at runtime may leave the workspace's servers listed and startable until the window
   * reloads: measured in 1.139 for a window opened under `registry`, switched to `all` and back (not for a window
   * opened under `all`; the cause was not found, so any window that ran under `all` counts).
   */
  registryAfterAllKeepsWorkspaceServers: boolean;
  /** `chat.mcp.allowedServers` exists (matched by name, URL or command before every start). */
  allowedServers: boolean;
}

/** Oldest first. */
export const VSCODE_READS: readonly VsCodeReads[] = Object.freeze([
  {
    measured: '1.112',
    workspaceRootMcpJson: false,
    discovery: ['claude-desktop', 'windsurf', 'cursor-global', 'cursor-workspace'],
    collisionBehavior: false,
    registryAfterAllKeepsWorkspaceServers: false,
    allowedServers: false,
  },
  {
    measured: '1.139',
    workspaceRootMcpJson: true,
    discovery: ['claude-desktop', 'windsurf', 'cursor-global', 'cursor-workspace', 'copilot'],
    collisionBehavior: true,
    registryAfterAllKeepsWorkspaceServers: true,
    allowedServers: true,
  },
] as VsCodeReads[]);

const minorOf = (v: string): [number, number] | undefined => {
  const m = /^(\d+)\.(\d+)(?:\.|$|-)/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
};

/**
 * The row for a running VS Code version (`vscode.version`, e.g. "1.139.1"). Undefined: 1.112 (what this module
 * assumed before it knew versions). A version between two measured ones reads like the next measured one up, a
 * newer or unparseable one like the newest, one older than the oldest like the oldest: MCP Gate then reports more
 * of VS Code's own starts, never fewer.
 */
export function vscodeReads(version?: string): VsCodeReads {
  if (version === undefined) return VSCODE_READS[0];
  const v = minorOf(version);
  if (!v) return VSCODE_READS[VSCODE_READS.length - 1];
  for (const row of VSCODE_READS) {
    const [maj, min] = minorOf(row.measured)!;
    if (v[0] < maj || (v[0] === maj && v[1] <= min)) return row;
  }
  return VSCODE_READS[VSCODE_READS.length - 1];
}
// VS Code 1.112's keys: MCP Gate's own workspace file keeps them (its text is how MCP Gate knows the file; under
// "registry" no discovery runs at all, so the discovery value there only matters should access ever be "all").
const ROUTED_DISCOVERY = { 'claude-desktop': false, windsurf: false, 'cursor-global': false, 'cursor-workspace': false } as const;

// ---- A repository cannot undo the routing ------------------------------------------------------------------
// Measured in VS Code 1.112 (docs/vscode-own-starts.md, "A repository cannot undo it"): when folders are opened
// through a `.code-workspace` file, the window-scope settings of each folder's `.vscode/settings.json` are not
// applied (chat.mcp.access and chat.mcp.discovery.enabled included) — only the workspace file's and the user's. So
// MCP Gate keeps a one-folder workspace file of its own, outside the repository, with the routing in its settings,
// and reopens a repository that overrides the routing through it. A repository's own `.code-workspace` is just
// such a file: its settings do apply, so the same reopening (with the same folders) is the fix for it too.

/** What MCP Gate writes into its own workspace files: the routing, at workspace scope. */
export const GATED_WORKSPACE_SETTINGS: Readonly<Record<string, unknown>> = Object.freeze({
  [ACCESS_KEY]: 'registry',
  [DISCOVERY_KEY]: { ...ROUTED_DISCOVERY },
});

/** Marks a workspace file as MCP Gate's own (and so the settings in it as MCP Gate's, not a repository's). */
export const GATED_WORKSPACE_MARK = 'mcpGate.gatedWorkspace';

/** The text of MCP Gate's workspace file for these folders (absolute paths): the folders and the routing, nothing else. */
export function gatedWorkspaceText(folders: readonly string[]): string {
  if (!folders.length) throw new Error('a gated workspace needs at least one folder');
  for (const f of folders) if (!f.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(f)) throw new Error(`not an absolute path: ${f}`);
  return (
    JSON.stringify(
      {
        folders: folders.map((path) => ({ path })),
        settings: { ...GATED_WORKSPACE_SETTINGS },
        // Read back by MCP Gate to know the window is routed by its own file; a key VS Code ignores.
        [GATED_WORKSPACE_MARK]: 1,
      },
      null,
      2,
    ) + '\n'
  );
}

/**
 * True only for a workspace file MCP Gate itself wrote: it lies directly in MCP Gate's own folder for them (`ownDir`,
 * outside every repository; both paths real) and its text is exactly `gatedWorkspaceText` of the window's folders —
 * nothing added. The mark alone proves nothing: a repository's `.code-workspace` can carry it, beside a nested
 * `"chat.mcp": { "access": "all" }` that VS Code applies over the dotted key (found by an attacker session; see
 * docs/vscode-own-starts.md).
 */
export function isGatedWorkspace(file: { path: string; text: string }, ownDir: string, folders: readonly string[]): boolean {
  const dir = ownDir.replace(/[\\/]+$/, '');
  const parent = file.path.slice(0, Math.max(file.path.lastIndexOf('/'), file.path.lastIndexOf('\\')));
  if (!dir || parent !== dir || !file.path.endsWith('.code-workspace') || !folders.length) return false;
  try {
    return file.text === gatedWorkspaceText(folders);
  } catch {
    return false;
  }
}

/** The file name MCP Gate keeps a gated workspace under: readable, and unique per folder set. */
export function gatedWorkspaceName(folders: readonly string[], hash: (s: string) => string): string {
  const base = (folders[0].split(/[\\/]/).filter(Boolean).pop() ?? 'workspace').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
  return `${base}-${hash(folders.join('\u0000')).slice(0, 12)}.code-workspace`;
}

/** The bound on a settings file MCP Gate reads itself (VS Code's own settings files are small). */
export const SETTINGS_FILE_LIMIT = 1024 * 1024;

/**
 * A setting's value in a repository's settings file as VS Code would merge it, whatever the spelling (`"a.b.c"`,
 * `"a": {"b.c"}`, `"a": {"b": {"c"}}`); `inWorkspaceFile`: the file is a `.code-workspace` (its settings object).
 * `read` is a bounded, non-blocking reader (TrackingReader.read). Undefined when the file is missing or does not
 * set it; a file that exists but cannot be read (not a regular file, too large, unreadable) fails closed: the
 * value is reported as `{ unreadable: <why> }`, so whoever asks treats the file as setting it.
 */
export function settingInFile(
  read: (file: string, limit: number) => ReadResult,
  file: string,
  key: string,
  inWorkspaceFile = false,
): unknown {
  const r = read(file, SETTINGS_FILE_LIMIT);
  if (r.kind === 'missing') return undefined;
  if (r.kind === 'error') return { unreadable: `${file}: ${r.error.message}` };
  let root: unknown = parseJsonc(r.data.toString('utf8'), [], { allowTrailingComma: true });
  if (inWorkspaceFile) root = (root as { settings?: unknown } | undefined)?.settings;
  const find = (v: unknown, rest: string): unknown => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    let found: unknown;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      if (k === rest) found = child;
      else if (rest.startsWith(k + '.')) found = find(child, rest.slice(k.length + 1)) ?? found;
    }
    return found;
  };
  return find(root, key);
}
