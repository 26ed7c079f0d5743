// What VS Code itself starts from a workspace, outside MCP Gate, and the settings that route those servers through
// MCP Gate instead. Pure: VS Code's setting values come in as plain data (the shape of
// `WorkspaceConfiguration.inspect(key)`), so the CLI and the tests can use it without VS Code.
//
// Measured in VS Code 1.112 (code-server 4.112.0); the evidence and the commands are in docs/vscode-own-starts.md:
// - `.vscode/mcp.json` of each workspace folder: VS Code lists every server as `mcp.config.ws<folder index>.<name>`
//   and starts it without any trust prompt in a trusted workspace (in Restricted Mode it asks for Workspace Trust
//   first). It ignores `"disabled": true` and does not care about MCP Gate's approval.
// - the `mcp` section of `.vscode/settings.json`, `.mcp.json`, `.gemini/…`, `.codex/…` and the other catalogue files:
//   not read by VS Code 1.112.
// - discovery (`chat.mcp.discovery.enabled`, all off by default): Claude Desktop, Windsurf, `~/.cursor/mcp.json`
//   and the workspace's `.cursor/mcp.json`; each discovered server needs a per-server trust prompt to start.
// - `chat.mcp.access`: `all` (default) reads all of the above; `registry` keeps only servers installed from an MCP
//   registry (hand-written entries and every discovery are off) while extension providers — MCP Gate's `mcpGate` —
//   still work; `none` turns off everything, MCP Gate's provider included.
// - Both settings are window-scoped: a repository's `.vscode/settings.json` overrides the user's value, in
//   Restricted Mode too. Only an enterprise policy value cannot be overridden.
// Measured in VS Code 1.139.1 (code-server 4.139.1), what changed (`VSCODE_READS` in ./vscode-settings.ts; a version
// between two measured ones is treated like the next measured one up, a newer one like the newest: report more, never
// less):
// - the workspace-root `.mcp.json` of each folder (the catalogue's `claude` file at repository scope): VS Code reads
//   it by itself, whatever `chat.mcp.workspaceRootConfig.enabled` says (that setting only picks where VS Code writes
//   new servers), lists each server as `workspace-dot-mcp.<folder index>.<name>` and starts it without a prompt in a
//   trusted workspace (Workspace Trust in Restricted Mode). It is a discovery that is not from the registry, so
//   `registry` turns it off like the others.
// - discovery has a fifth source, `copilot` (`~/.copilot/mcp-config.json`, or `$COPILOT_HOME/mcp-config.json`;
//   per-server trust), off by default;
// - `chat.mcp.collisionBehavior` (`disable`, the default, or `suffix`): servers of the same label across sources are
//   grouped and, under `disable`, only the first registered stays enabled.
// VS Code's setting keys, what each version reads, MCP Gate's own workspace file and a repository's settings file
// are read in ./vscode-settings.ts (re-exported here).
import { VSCODE_WORKSPACE_SETTINGS } from './tools/vscode';
import type { GateReport, GateState, ServerReport } from '../report';
import {
  ACCESS_KEY,
  ALLOWED_KEY,
  COLLISION_KEY,
  DISCOVERY_KEY,
  GALLERY_URL_KEY,
  GATEWAY_ALLOWED_ENTRY,
  LEGACY_ENABLED_KEY,
  vscodeReads,
  type DiscoverySource,
  type VsCodeReads,
} from './vscode-settings';

export * from './vscode-settings';

export type McpAccess = 'none' | 'registry' | 'all';
export type SettingScope = 'default' | 'user' | 'workspace' | 'workspaceFolder' | 'policy';

/** `vscode.WorkspaceConfiguration.inspect(key)` as plain data, plus the policy value when the caller knows it. */
export interface InspectedSetting {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  policyValue?: unknown;
}

export interface VsCodeOwnInput {
  /** Undefined when MCP Gate could not check the folder at all: the repository's overrides are still reported. */
  report: Pick<GateReport, 'servers' | 'sources'> | undefined;
  /** inspect() of `chat.mcp.access`, `chat.mcp.discovery.enabled` and (legacy) `chat.mcp.enabled`; missing = unset. */
  settings: {
    [ACCESS_KEY]?: InspectedSetting;
    [DISCOVERY_KEY]?: InspectedSetting;
    [LEGACY_ENABLED_KEY]?: InspectedSetting;
    [GALLERY_URL_KEY]?: InspectedSetting;
    [COLLISION_KEY]?: InspectedSetting;
    [ALLOWED_KEY]?: InspectedSetting;
  };
  workspaceTrusted: boolean;
  /** The running VS Code's version (`vscode.version`, e.g. "1.139.1"); undefined = VS Code 1.112 (see `vscodeReads`). */
  vscodeVersion?: string;
  /** The effective `chat.mcp.access` was `all` at some time since this window opened (see `registryAfterAllKeepsWorkspaceServers`). */
  accessWasAllInWindow?: boolean;
  /** Index of this folder among the window's workspace folders (VS Code's ids use it). Default 0. */
  folderIndex?: number;
  /** The mcp.json of the running VS Code's user profile; user-scope `vscode` sources count only when they are this file. */
  userMcpJson?: string;
  /**
   * How to name the file that holds workspace-scope settings: `.vscode/settings.json` (the default) for a folder
   * opened by itself, the `.code-workspace` file when one is open. Folder-scope values are always the folder's
   * `.vscode/settings.json`.
   */
  workspaceSettingsFile?: string;
}

export interface SettingValue {
  key: string;
  value: unknown;
  scope: SettingScope;
}

export type OwnMechanism =
  'workspace-folder-mcp.json' | 'workspace-root-.mcp.json' | 'user-mcp.json' | 'discovery:cursor-workspace' | 'discovery:cursor-global';

export interface OwnStart {
  name: string;
  /** As the gate report shows it: workspace-relative for repository files. */
  source: string;
  file: string;
  mechanism: OwnMechanism;
  /** VS Code's server id (`workbench.mcp.startServer <id>`), where it does not depend on the connection. */
  vscodeId?: string;
  /** What VS Code asks before it starts the server. */
  needs: ('workspace-trust' | 'server-trust')[];
  /** The setting values that make VS Code read it. */
  enabledBy: SettingValue[];
  gateState: GateState;
  notes: string[];
  /** Set when VS Code may start it, or may not (a measured VS Code quirk): MCP Gate reports it all the same. */
  uncertain?: string;
}

export interface RoutingSetting extends SettingValue {
  /** Already in force at user (or policy) scope. */
  inPlace: boolean;
  why: string;
}

export interface RepositoryOverride extends SettingValue {
  file: string;
  effect: string;
}

export interface VsCodeOwnReport {
  /** The value VS Code uses, and where it came from. */
  access: SettingValue & { value: McpAccess; raw: unknown };
  /** Every source this VS Code version knows (`reads.discovery`). */
  discovery: Partial<Record<DiscoverySource, SettingValue & { value: boolean }>> &
    Record<'claude-desktop' | 'windsurf' | 'cursor-global' | 'cursor-workspace', SettingValue & { value: boolean }>;
  /** `chat.mcp.collisionBehavior` where the version has it (1.139): same-label servers across sources. */
  collision?: SettingValue & { value: 'disable' | 'suffix' };
  /** What the running version reads by itself (the measured row it is treated as). */
  reads: VsCodeReads;
  /** Servers of this workspace that VS Code itself lists and would start, outside MCP Gate. */
  starts: OwnStart[];
  /** Files VS Code reads that MCP Gate could not use: VS Code may still start what they declare. */
  unreadable: { source: string; file: string; mechanism: OwnMechanism; problems: string[] }[];
  /** User-scope values that stop VS Code's own starts while MCP Gate's provider keeps working. */
  routing: RoutingSetting[];
  /** Workspace values (the repository's) that defeat or change the routing. */
  overrides: RepositoryOverride[];
  /** MCP Gate's provider reaches chat (false only with `chat.mcp.access: none`). */
  providerReachesChat: boolean;
  notes: string[];
}

const routedDiscovery = (reads: VsCodeReads): Partial<Record<DiscoverySource, boolean>> =>
  Object.fromEntries(reads.discovery.map((d) => [d, false]));

// Highest precedence first. A folder value counts like a workspace value: both are the repository's.
const LEVELS: { scope: SettingScope; field: keyof InspectedSetting }[] = [
  { scope: 'policy', field: 'policyValue' },
  { scope: 'workspaceFolder', field: 'workspaceFolderValue' },
  { scope: 'workspace', field: 'workspaceValue' },
  { scope: 'user', field: 'globalValue' },
  { scope: 'default', field: 'defaultValue' },
];

/** How VS Code 1.112 treats a value: only `none` and `registry` restrict; anything else reads everything. */
function accessBehaviour(value: unknown): McpAccess {
  return value === 'none' ? 'none' : value === 'registry' ? 'registry' : 'all';
}

/** `chat.mcp.access` at one level, with the legacy `chat.mcp.enabled` (false = none, true = all) where it is unset. */
function accessAt(input: VsCodeOwnInput, field: keyof InspectedSetting): unknown {
  const v = input.settings[ACCESS_KEY]?.[field];
  if (v !== undefined) return v;
  if (field === 'defaultValue') return 'all';
  const legacy = input.settings[LEGACY_ENABLED_KEY]?.[field];
  return legacy === false ? 'none' : legacy === true ? 'all' : undefined;
}

function effectiveAccess(input: VsCodeOwnInput): VsCodeOwnReport['access'] {
  for (const { scope, field } of LEVELS) {
    const raw = accessAt(input, field);
    if (raw !== undefined) return { key: ACCESS_KEY, value: accessBehaviour(raw), raw, scope };
  }
  return { key: ACCESS_KEY, value: 'all', raw: 'all', scope: 'default' };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One discovery source at one level: a boolean decides every source, an object only the sources it names. */
function discoveryAt(value: unknown, source: DiscoverySource): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (isObject(value) && Object.prototype.hasOwnProperty.call(value, source)) return value[source] === true;
  return undefined;
}

function effectiveDiscovery(input: VsCodeOwnInput, reads: VsCodeReads): VsCodeOwnReport['discovery'] {
  const inspected = input.settings[DISCOVERY_KEY];
  const out = {} as VsCodeOwnReport['discovery'];
  for (const source of reads.discovery) {
    out[source] = { key: `${DISCOVERY_KEY}.${source}`, value: false, scope: 'default' };
    for (const { scope, field } of LEVELS) {
      const v = discoveryAt(inspected?.[field], source);
      if (v !== undefined) {
        out[source] = { key: `${DISCOVERY_KEY}.${source}`, value: v, scope };
        break;
      }
    }
  }
  return out;
}

const repositoryScope = (s: SettingScope) => s === 'workspace' || s === 'workspaceFolder';

export function vscodeOwnStarts(input: VsCodeOwnInput): VsCodeOwnReport {
  const settingsFile = input.workspaceSettingsFile ?? VSCODE_WORKSPACE_SETTINGS;
  const reads = vscodeReads(input.vscodeVersion);
  const access = effectiveAccess(input);
  const discovery = effectiveDiscovery(input, reads);
  const mechanismOf = mechanisms(input, reads, access, discovery);
  const starts = ownStarts(input.report?.servers ?? [], mechanismOf, allowListBlocker(input, reads));
  const unreadable: VsCodeOwnReport['unreadable'] = [];
  for (const src of input.report?.sources ?? []) {
    if (src.status !== 'unreadable' && src.status !== 'invalid') continue;
    const m = mechanismOf(src);
    if (m?.on) unreadable.push({ source: src.source, file: src.file, mechanism: m.mechanism, problems: src.problems });
  }

  const notes: string[] = discoveryNotes(access, discovery);
  const collision = collisionOf(input, reads, starts, notes);
  const routing = routingOf(input, reads, notes);
  const distinct = repositoryOverrides(input, reads, settingsFile);
  return {
    access,
    discovery,
    collision,
    reads,
    starts,
    unreadable,
    routing,
    overrides: distinct,
    providerReachesChat: access.value !== 'none',
    notes,
  };
}

/** What a server's mechanism is (and whether it is on): the workspace as VS Code treats it under these settings. */
type Mechanism = {
  mechanism: OwnMechanism;
  on: boolean;
  enabledBy: SettingValue[];
  needs: OwnStart['needs'];
  id?: (name: string) => string;
  uncertain?: string;
};

/**
 * Which mechanism VS Code uses for a server (or a source) of the report, and whether it is on; undefined for one
 * VS Code does not start itself.
 */
function mechanisms(
  input: VsCodeOwnInput,
  reads: VsCodeReads,
  access: VsCodeOwnReport['access'],
  discovery: VsCodeOwnReport['discovery'],
): (s: Pick<ServerReport, 'kind' | 'scope' | 'file'>) => Mechanism | undefined {
  const folderIndex = input.folderIndex ?? 0;
  const accessValue: SettingValue = { key: ACCESS_KEY, value: access.raw, scope: access.scope };
  // Which mechanism VS Code uses for a server of this report, and whether it is on.
  // A window that ran under "all" and is now under "registry": VS Code 1.139 was seen to keep (and start) the
  // workspace's servers until the window reloads. Reported as possible starts: more, never less.
  const sticky =
    access.value === 'registry' && reads.registryAfterAllKeepsWorkspaceServers && input.accessWasAllInWindow === true
      ? `VS Code ${reads.measured} may still start it: this window ran with ${ACCESS_KEY} "all", and a switch back to "registry" at runtime was seen to leave the workspace's servers startable until the window reloads (Developer: Reload Window)`
      : undefined;
  const workspaceOn = access.value === 'all' || sticky !== undefined;
  return (s: Pick<ServerReport, 'kind' | 'scope' | 'file'>): Mechanism | undefined => {
    if (s.kind === 'vscode' && s.scope === 'repository') {
      return {
        mechanism: 'workspace-folder-mcp.json',
        on: workspaceOn,
        enabledBy: [accessValue],
        needs: input.workspaceTrusted ? [] : ['workspace-trust'],
        id: (n) => `mcp.config.ws${folderIndex}.${n}`,
        uncertain: access.value === 'all' ? undefined : sticky,
      };
    }
    if (reads.workspaceRootMcpJson && s.kind === 'claude' && s.scope === 'repository') {
      // The folder's root .mcp.json: a discovery VS Code trusts by itself (no per-server prompt), not from the registry.
      return {
        mechanism: 'workspace-root-.mcp.json',
        on: workspaceOn,
        enabledBy: [accessValue],
        needs: input.workspaceTrusted ? [] : ['workspace-trust'],
        id: (n) => `workspace-dot-mcp.${folderIndex}.${n}`,
        uncertain: access.value === 'all' ? undefined : sticky,
      };
    }
    if (s.kind === 'vscode' && s.scope === 'user') {
      if (!input.userMcpJson || s.file !== input.userMcpJson) return undefined;
      return { mechanism: 'user-mcp.json', on: access.value === 'all', enabledBy: [accessValue], needs: [] };
    }
    if (s.kind === 'cursor') {
      const source: DiscoverySource = s.scope === 'repository' ? 'cursor-workspace' : 'cursor-global';
      const d = discovery[source]!;
      const needs: OwnStart['needs'] =
        s.scope === 'repository' && !input.workspaceTrusted ? ['workspace-trust', 'server-trust'] : ['server-trust'];
      return {
        mechanism: `discovery:${source}`,
        on: access.value === 'all' && d.value,
        enabledBy: [accessValue, d],
        needs,
        id: s.scope === 'repository' ? (n) => `cursor-workspace.${folderIndex}.${n}` : undefined,
      };
    }
    return undefined;
  };
}

/** Whether `chat.mcp.allowedServers` keeps VS Code from starting a server itself. */
function allowListBlocker(input: VsCodeOwnInput, reads: VsCodeReads): (s: Pick<ServerReport, 'name' | 'definition'>) => boolean {
  // chat.mcp.allowedServers (application scope: only the policy or the user value counts): a stdio server VS Code
  // starts itself passes only an entry of its name or any command entry (not matched here: counted as passing).
  const allowed = reads.allowedServers ? (input.settings[ALLOWED_KEY]?.policyValue ?? input.settings[ALLOWED_KEY]?.globalValue) : undefined;
  const allowList = Array.isArray(allowed) ? allowed.filter(isObject) : undefined;
  return (s) => {
    if (!allowList) return false;
    const http = typeof (s.definition as { url?: unknown } | undefined)?.url === 'string';
    return !allowList.some(
      (e) => e.serverName === s.name || (!http && Array.isArray(e.serverCommand)) || (http && typeof e.serverUrl === 'string'),
    );
  };
}

/** The servers of the report VS Code would start itself, each with how and what MCP Gate says of it. */
function ownStarts(
  servers: readonly ServerReport[],
  mechanismOf: (s: ServerReport) => Mechanism | undefined,
  blockedByAllowList: (s: ServerReport) => boolean,
): OwnStart[] {
  const starts: OwnStart[] = [];
  for (const s of servers) {
    const m = mechanismOf(s);
    if (!m || !m.on || blockedByAllowList(s)) continue;
    const serverNotes: string[] = [];
    if (s.disabled) serverNotes.push('switched off in its file, but VS Code ignores "disabled" and starts it');
    // Gated servers' labels say "· MCP Gate" (1.139): a server VS Code starts itself under such a name imitates one.
    if (/mcp[\s_-]*gate/i.test(s.name))
      serverNotes.push('its name imitates a server of MCP Gate, but VS Code starts it itself, outside the gate');
    if (s.state === 'blocked') serverNotes.push(`MCP Gate blocks it (${s.reason}), VS Code does not`);
    else if (s.state === 'approved' || s.state === 'trusted')
      serverNotes.push("VS Code starts it itself as well: its calls bypass MCP Gate's policy and log");
    starts.push({
      name: s.name,
      source: s.source,
      file: s.file,
      mechanism: m.mechanism,
      vscodeId: m.id?.(s.name),
      needs: m.needs,
      enabledBy: m.enabledBy,
      gateState: s.state,
      notes: serverNotes,
      ...(m.uncertain ? { uncertain: m.uncertain } : {}),
    });
  }
  return starts;
}

/** Discovery of files MCP Gate does not read (Claude Desktop, Windsurf, Copilot), said when it is on. */
function discoveryNotes(access: VsCodeOwnReport['access'], discovery: VsCodeOwnReport['discovery']): string[] {
  const notes: string[] = [];
  const on = (d: DiscoverySource) => discovery[d]?.value === true;
  if (access.value === 'all') {
    const files: Partial<Record<DiscoverySource, string>> = {
      'claude-desktop': "Claude Desktop's claude_desktop_config.json",
      windsurf: "Windsurf's ~/.codeium/windsurf/mcp_config.json",
      copilot: "GitHub Copilot's ~/.copilot/mcp-config.json (or $COPILOT_HOME/mcp-config.json)",
    };
    for (const source of ['claude-desktop', 'windsurf', 'copilot'] as const) {
      if (on(source))
        notes.push(`VS Code also starts the servers of ${files[source]} (${discovery[source]!.key} is on), a file MCP Gate does not read`);
    }
  }
  return notes;
}

/** `chat.mcp.collisionBehavior` where this version has it; a note when it keeps VS Code's own server of a label. */
function collisionOf(
  input: VsCodeOwnInput,
  reads: VsCodeReads,
  starts: readonly OwnStart[],
  notes: string[],
): VsCodeOwnReport['collision'] {
  // VS Code 1.139 groups same-label servers across sources; under "disable" only the first registered stays
  // enabled, and VS Code's own files register before extension providers such as MCP Gate's.
  let collision: VsCodeOwnReport['collision'];
  if (reads.collisionBehavior) {
    const i = input.settings[COLLISION_KEY];
    const level = LEVELS.find((l) => i?.[l.field] !== undefined);
    const raw = level ? i![level.field] : 'disable';
    collision = { key: COLLISION_KEY, value: raw === 'suffix' ? 'suffix' : 'disable', scope: level?.scope ?? 'default' };
    if (collision.value === 'disable' && starts.length) {
      notes.push(
        `${COLLISION_KEY} is "disable": where one of MCP Gate's servers has the label of a server VS Code starts itself (${starts.map((s) => s.name).join(', ')}), VS Code keeps only the first registered enabled — its own`,
      );
    }
  }
  return collision;
}

/** The user-scope values that route VS Code's own starts through MCP Gate; notes where a step is the person's to take. */
function routingOf(input: VsCodeOwnInput, reads: VsCodeReads, notes: string[]): RoutingSetting[] {
  // Routing: `registry` at user scope (or by policy) stops every hand-written and discovered server; discovery off
  // as well, so that nothing is discovered should access ever be `all` again.
  const user = (f: 'globalValue' | 'policyValue', key: string) =>
    key === ACCESS_KEY ? accessAt(input, f) : input.settings[DISCOVERY_KEY]?.[f];
  const routed = routedDiscovery(reads);
  const userAccess = user('policyValue', ACCESS_KEY) ?? user('globalValue', ACCESS_KEY);
  const routing: RoutingSetting[] = [
    {
      key: ACCESS_KEY,
      value: 'registry',
      scope: 'user',
      inPlace: accessBehaviour(userAccess ?? 'all') === 'registry',
      why: `VS Code then reads no hand-written mcp.json entry${reads.workspaceRootMcpJson ? " nor any folder's root .mcp.json" : ''} and runs no discovery, while extension providers (MCP Gate's "mcpGate") keep working; "none" would switch MCP Gate off too`,
    },
    {
      key: DISCOVERY_KEY,
      value: { ...routed },
      scope: 'user',
      inPlace: reads.discovery.every((src) => {
        const u = discoveryAt(user('policyValue', DISCOVERY_KEY), src) ?? discoveryAt(user('globalValue', DISCOVERY_KEY), src);
        return u !== true;
      }),
      why: `no discovery of Claude Desktop, Windsurf${reads.discovery.includes('copilot') ? ', GitHub Copilot' : ''} or Cursor configurations (the default)`,
    },
  ];
  // VS Code 1.139 stable does not register the setting (`included: false`): it reads a value written into
  // settings.json by hand, but refuses an extension's write ("not a registered configuration"). So it is part of the
  // routing step only where it is registered (inspect() then has a default), and otherwise a note for the person.
  const allowedRegistered = input.settings[ALLOWED_KEY]?.defaultValue !== undefined;
  if (
    reads.allowedServers &&
    !allowedRegistered &&
    !Array.isArray(input.settings[ALLOWED_KEY]?.globalValue) &&
    input.settings[ALLOWED_KEY]?.policyValue === undefined
  ) {
    notes.push(
      `for a routing no repository can undo, add "${ALLOWED_KEY}": [${JSON.stringify(GATEWAY_ALLOWED_ENTRY)}] to your user settings.json by hand (an application setting VS Code reads but lets no extension write): VS Code then starts only MCP Gate's servers and those you list`,
    );
  }
  if (reads.allowedServers && allowedRegistered) {
    // Measured in 1.139: with this at user scope MCP Gate's provider works and VS Code starts no .vscode/mcp.json or
    // .mcp.json server, also where a repository sets access "all", allowedServers null or a nested "chat.mcp"
    // object, and after a switch back to "registry" at runtime. The user's own entries are kept beside it.
    const mine = Array.isArray(input.settings[ALLOWED_KEY]?.globalValue) ? (input.settings[ALLOWED_KEY]!.globalValue as unknown[]) : [];
    const has = (v: unknown) => Array.isArray(v) && v.some((e) => isObject(e) && e.serverUrl === GATEWAY_ALLOWED_ENTRY.serverUrl);
    routing.push({
      key: ALLOWED_KEY,
      value: has(mine) ? mine : [...mine, { ...GATEWAY_ALLOWED_ENTRY }],
      scope: 'user',
      inPlace: has(input.settings[ALLOWED_KEY]?.policyValue) || (input.settings[ALLOWED_KEY]?.policyValue === undefined && has(mine)),
      why: "VS Code then starts only servers on MCP Gate's gateway (127.0.0.1, /mcp/) and those you list yourself; an application setting, so no repository can set it back",
    });
  }
  if (accessBehaviour(userAccess ?? 'all') === 'none') {
    notes.push(
      'chat.mcp.access is "none" in your settings: VS Code starts nothing, and MCP Gate\'s servers do not reach chat either; "registry" keeps MCP Gate working',
    );
  }
  return routing;
}

/** The repository's values that defeat or change the routing (each once, though VS Code may report it twice). */
function repositoryOverrides(input: VsCodeOwnInput, reads: VsCodeReads, settingsFile: string): RepositoryOverride[] {
  // The repository's own values: they win over the user's (window scope), even in Restricted Mode. A policy wins over them.
  const overrides: RepositoryOverride[] = [];
  if (input.settings[ACCESS_KEY]?.policyValue === undefined) {
    for (const { scope, field } of LEVELS.filter((l) => repositoryScope(l.scope))) {
      const raw = accessAt(input, field);
      if (raw === undefined) continue;
      const b = accessBehaviour(raw);
      if (b === 'registry') continue; // what MCP Gate recommends anyway
      const key = input.settings[ACCESS_KEY]?.[field] !== undefined ? ACCESS_KEY : LEGACY_ENABLED_KEY;
      const value = key === ACCESS_KEY ? raw : input.settings[LEGACY_ENABLED_KEY]?.[field];
      overrides.push({
        key,
        value,
        scope,
        file: scope === 'workspaceFolder' ? VSCODE_WORKSPACE_SETTINGS : settingsFile,
        effect:
          b === 'all'
            ? `makes VS Code read this workspace's .vscode/mcp.json${reads.workspaceRootMcpJson ? ' and .mcp.json' : ''} and start its servers itself, over your user setting`
            : "switches off MCP in this workspace, MCP Gate's servers included",
      });
    }
  }
  if (input.settings[DISCOVERY_KEY]?.policyValue === undefined) {
    for (const { scope, field } of LEVELS.filter((l) => repositoryScope(l.scope))) {
      const v = input.settings[DISCOVERY_KEY]?.[field];
      if (v === undefined) continue;
      const turnedOn = reads.discovery.filter((src) => discoveryAt(v, src) === true);
      if (!turnedOn.length) continue;
      overrides.push({
        key: DISCOVERY_KEY,
        value: v,
        scope,
        file: scope === 'workspaceFolder' ? VSCODE_WORKSPACE_SETTINGS : settingsFile,
        effect: `turns on VS Code's discovery of ${turnedOn.join(', ')}`,
      });
    }
  }

  // The registry VS Code trusts under "registry", chosen by the repository: what that registry vouches for is what
  // "registry" lets VS Code start. Nothing was seen to start through it offline; it is an override all the same.
  if (input.settings[GALLERY_URL_KEY]?.policyValue === undefined) {
    for (const { scope, field } of LEVELS.filter((l) => repositoryScope(l.scope))) {
      const v = input.settings[GALLERY_URL_KEY]?.[field];
      if (v === undefined) continue;
      overrides.push({
        key: GALLERY_URL_KEY,
        value: v,
        scope,
        file: scope === 'workspaceFolder' ? VSCODE_WORKSPACE_SETTINGS : settingsFile,
        effect: 'points VS Code at an MCP registry the repository chooses, whose servers "registry" lets VS Code start itself',
      });
    }
  }

  // A folder opened by itself: VS Code reports its .vscode/settings.json as both the workspace and the folder value.
  const seen = new Set<string>();
  const distinct = overrides.filter((o) => {
    const k = JSON.stringify([o.key, o.file, o.value]);
    return !seen.has(k) && !!seen.add(k);
  });
  return distinct;
}
