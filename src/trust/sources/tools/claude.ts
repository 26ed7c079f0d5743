// Claude Code: its files, what a repository of it pre-approves, and what `mcp-gate install claude` changes.
//
// Where its files are (read from the npm build 2.1.332, whose bundled code computes the global file as
// `join(process.env.CLAUDE_CONFIG_DIR || os.homedir(), ".claude" + <oauth suffix> + ".json")`, the suffix empty in
// the production build, and its config folder as CLAUDE_CONFIG_DIR, else ~/.claude): user servers live in the
// top-level `mcpServers` of `~/.claude.json` — `$CLAUDE_CONFIG_DIR/.claude.json` while CLAUDE_CONFIG_DIR is set —
// and settings in `settings.json` of the config folder. (A non-empty legacy `.config.json` in the config folder is
// still preferred by it over .claude.json; MCP Gate does not follow that old layout.) A repository declares servers
// in `.mcp.json` and settings in `.claude/settings.json` and `.claude/settings.local.json`.
//
// Measured with Claude Code 2.1.332: it starts a user server with the folder it runs in as cwd (and
// CLAUDE_PROJECT_DIR). A user-level `allowedMcpServers` in settings.json keeps every server it does not list out,
// `.mcp.json` servers included; a repository's own `allowedMcpServers` is added to the list (it can admit its
// servers) — doctor reports that as an attempt. `enableAllProjectMcpServers` of a repository's
// .claude/settings.json approves its servers once the folder is trusted; install sets it false at user level.
// Managed settings (`install claude --managed`, docs/agents.md has the evidence): a fixed path per platform (Linux
// /etc/claude-code/managed-settings.json; CLAUDE_CODE_MANAGED_SETTINGS_PATH has no effect in the npm build).
// `allowManagedMcpServersOnly: true` there makes Claude Code read `allowedMcpServers` only from managed settings
// (a repository's list no longer adds to it); the flag without a managed list is dropped.
import * as path from 'node:path';
import { AgentFileError, isObj, jsonChange, readJson, sameJson, valueAt, type FileChange, type GateCommand, type ReadText } from './edits';
import {
  GATE_ENTRY_NAME,
  mcpServersPreApproval,
  quotedList,
  repoFile,
  strings,
  userFile,
  type AgentEdits,
  type AllowlistGap,
  type Machine,
  type ManagedEdits,
  type Tool,
  type UserServer,
} from './tool';

/** Claude Code's config folder: CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeConfigDir(m: Machine): string {
  return m.env.CLAUDE_CONFIG_DIR || path.join(m.home, '.claude');
}

/** The file of its user servers: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`. */
export function claudeJsonFile(m: Machine): string {
  return m.env.CLAUDE_CONFIG_DIR ? path.join(m.env.CLAUDE_CONFIG_DIR, '.claude.json') : path.join(m.home, '.claude.json');
}

/** Where Claude Code reads managed settings on this platform (fixed by Claude Code; nothing overrides it). */
export function claudeManagedSettingsFile(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return '/Library/Application Support/ClaudeCode/managed-settings.json';
  if (platform === 'win32') return 'C:\\Program Files\\ClaudeCode\\managed-settings.json';
  return '/etc/claude-code/managed-settings.json';
}

type Entry = NonNullable<UserServer['entry']>;

/** The user's own Claude Code servers (not MCP Gate's entry), each with the allowlist entry that admits it. */
export function claudeUserServers(claudeJson: Record<string, unknown>, withGate = false): UserServer[] {
  const found: UserServer[] = [];
  const take = (servers: unknown, scope: string) => {
    if (!isObj(servers)) return;
    for (const [name, s] of Object.entries(servers)) {
      if (scope === 'user' && name === GATE_ENTRY_NAME && !withGate) continue;
      if (!isObj(s)) continue;
      const entry: Entry | undefined =
        typeof s.command === 'string'
          ? { serverCommand: [s.command, ...(Array.isArray(s.args) ? s.args.map(String) : [])] }
          : typeof s.url === 'string'
            ? { serverUrl: s.url }
            : undefined;
      found.push({ name, scope, entry });
    }
  };
  take(claudeJson.mcpServers, 'user');
  if (isObj(claudeJson.projects))
    for (const [dir, p] of Object.entries(claudeJson.projects)) if (isObj(p)) take(p.mcpServers, `local (${dir})`);
  return found;
}

/** Claude Code's allowlist: what it held, MCP Gate's command, and every server the user configured himself. */
function claudeAllowlist(claudeJson: Record<string, unknown>, settings: Record<string, unknown>, gate: GateCommand): unknown[] {
  const out: unknown[] = Array.isArray(settings.allowedMcpServers) ? [...(settings.allowedMcpServers as unknown[])] : [];
  const add = (e: Entry) => {
    if (!out.some((x) => sameJson(x, e))) out.push(e);
  };
  add({ serverCommand: [gate.command, ...gate.args] });
  for (const s of claudeUserServers(claudeJson)) if (s.entry) add(s.entry);
  return out;
}

/** `install claude --managed`: the managed settings file admits only its own list: the gate and the user's servers. */
export function claudeManagedChanges(read: ReadText, claudeJsonPath: string, managedFile: string, gate: GateCommand): FileChange[] {
  const cjText = read(claudeJsonPath);
  const claudeJson = readJson(claudeJsonPath, cjText);
  const text = read(managedFile);
  const managed = readJson(managedFile, text);
  if (text !== undefined && text.trim() !== '') {
    try {
      JSON.parse(text);
    } catch {
      // Measured: Claude Code 2.1.332 then refuses to start ("could not be parsed as a JSON object").
      throw new AgentFileError(
        `${managedFile} is not strict JSON (a comment or a trailing comma?), which Claude Code reads it as: it would refuse to start with it; fix it first, nothing was changed`,
      );
    }
  }
  return [
    jsonChange(managedFile, text, [
      { path: ['allowManagedMcpServersOnly'], value: true },
      { path: ['allowedMcpServers'], value: claudeAllowlist(claudeJson, managed, gate) },
    ]),
  ];
}

/** Glob match of Claude Code's serverUrl entries (`*` matches any run of characters). */
function urlMatches(pattern: string, url: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*') +
      '$',
  );
  return re.test(url);
}

/**
 * Whether an allowlist admits a server, as Claude Code matches (observed with 2.1.332): a stdio server must match a
 * `serverCommand` entry exactly once the list has any; a remote one a `serverUrl` pattern once it has any;
 * otherwise a `serverName` entry admits it by name.
 */
export function claudeAllows(list: unknown[], server: UserServer): boolean {
  const entries = list.filter(isObj);
  if (server.entry && 'serverCommand' in server.entry) {
    const commands = entries.filter((e) => Array.isArray(e.serverCommand));
    if (commands.length)
      return commands.some((e) => sameJson(e.serverCommand, (server.entry as { serverCommand: string[] }).serverCommand));
  } else if (server.entry && 'serverUrl' in server.entry) {
    const urls = entries.filter((e) => typeof e.serverUrl === 'string');
    if (urls.length) return urls.some((e) => urlMatches(e.serverUrl as string, (server.entry as { serverUrl: string }).serverUrl));
  }
  return entries.some((e) => e.serverName === server.name);
}

/**
 * The user's Claude Code servers that an allowlist install wrote does not admit: the user-level one (when it holds
 * MCP Gate's entry) and the managed one (when it is in force: allowManagedMcpServersOnly with a list). The managed
 * list is managed-settings.json's with those of the drop-in folder beside it (`managed-settings.d/*.json`, not
 * dot files), which Claude Code adds to it (measured).
 */
export function claudeAllowlistGaps(read: ReadText, listDir: (dir: string) => string[], m: Machine, gate: GateCommand): AllowlistGap[] {
  const cj = claudeJsonFile(m);
  const st = path.join(claudeConfigDir(m), 'settings.json');
  const servers = claudeUserServers(readJson(cj, read(cj)), true);
  const gaps: AllowlistGap[] = [];
  const check = (file: string, list: unknown, fix: string) => {
    if (!Array.isArray(list)) return;
    for (const s of servers) if (!claudeAllows(list, s)) gaps.push({ server: s, allowlist: file, fix });
  };
  const managedFile = claudeManagedSettingsFile(m.platform);
  const dropInDir = path.join(path.dirname(managedFile), 'managed-settings.d');
  const docs = [
    managedFile,
    ...listDir(dropInDir)
      .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
      .sort()
      .map((n) => path.join(dropInDir, n)),
  ].map((f) => readJson(f, read(f)));
  const lists = docs.filter((d) => Array.isArray(d.allowedMcpServers)).flatMap((d) => d.allowedMcpServers as unknown[]);
  const managedInForce = docs.some((d) => d.allowManagedMcpServersOnly === true) && docs.some((d) => Array.isArray(d.allowedMcpServers));
  if (managedInForce) check(managedFile, lists, 'mcp-gate install claude --managed');
  const settings = readJson(st, read(st));
  const list = settings.allowedMcpServers;
  const ours = Array.isArray(list) && list.some((e) => isObj(e) && sameJson(e.serverCommand, [gate.command, ...gate.args]));
  if (ours && !managedInForce) check(st, list, 'mcp-gate install claude');
  return gaps;
}

const managed: ManagedEdits = {
  file: claudeManagedSettingsFile,
  format: 'json',
  changes: claudeManagedChanges,
  layer(read, m, gate) {
    const file = claudeManagedSettingsFile(m.platform);
    const v = readJson(file, read(file));
    const installed =
      v.allowManagedMcpServersOnly === true &&
      Array.isArray(v.allowedMcpServers) &&
      v.allowedMcpServers.some((e) => isObj(e) && sameJson(e.serverCommand, [gate.command, ...gate.args]));
    return { layer: { agent: 'claude', file, installed }, gaps: [] };
  },
  effect:
    "admits only the servers this managed allowlist lists (MCP Gate and your own); a repository's allowedMcpServers no longer adds to it",
  closes: "a repository's allowedMcpServers adds nothing",
  userEntryMissing: (read, file) => valueAt(readJson(file, read(file)), ['mcpServers', GATE_ENTRY_NAME]) === undefined,
};

const agent: AgentEdits & { managed: ManagedEdits } = {
  files: (m) => [
    { file: claudeJsonFile(m), format: 'json' },
    { file: path.join(claudeConfigDir(m), 'settings.json'), format: 'json' },
  ],
  install(read, files, gate) {
    const [cj, st] = files;
    const cjText = read(cj.file);
    const stText = read(st.file);
    const claudeJson = readJson(cj.file, cjText);
    const settings = readJson(st.file, stText);
    return [
      jsonChange(cj.file, cjText, [
        { path: ['mcpServers', GATE_ENTRY_NAME], value: { type: 'stdio', command: gate.command, args: gate.args, env: {} } },
      ]),
      jsonChange(st.file, stText, [
        { path: ['enableAllProjectMcpServers'], value: false },
        { path: ['allowedMcpServers'], value: claudeAllowlist(claudeJson, settings, gate) },
      ]),
    ];
  },
  allowlistGaps: claudeAllowlistGaps,
  managed,
};

const PROJECT_SETTINGS = ['.claude/settings.json', '.claude/settings.local.json'];

export const claude: Tool<'claude'> & { agent: AgentEdits & { managed: ManagedEdits } } = {
  kind: 'claude',
  name: 'Claude Code',
  sources: [repoFile('.mcp.json', 'mcpServers'), userFile(claudeJsonFile, 'claude-user', { openTopLevel: true })],
  env: ['CLAUDE_CONFIG_DIR'],
  // .claude/ holds its project settings (pre-approval, hooks that run commands), agents and commands.
  protect: ['.claude'],
  preApproval(scan) {
    for (const rel of PROJECT_SETTINGS) {
      const doc = scan.load(rel);
      if (!doc || !isObj(doc.value)) continue;
      const v = doc.value;
      if (v.enableAllProjectMcpServers === true) scan.add(rel, doc, ['enableAllProjectMcpServers'], 'every server of .mcp.json');
      const enabled = strings(v.enabledMcpjsonServers);
      if (enabled.length) scan.add(rel, doc, ['enabledMcpjsonServers'], `the .mcp.json servers ${quotedList(enabled)}`);
      if (isObj(v.enabledPlugins)) {
        const plugins = Object.entries(v.enabledPlugins)
          .filter(([, on]) => on === true)
          .map(([k]) => k);
        if (plugins.length) scan.add(rel, doc, ['enabledPlugins'], `the plugins ${quotedList(plugins)} (a plugin can bring MCP servers)`);
      }
      if (Array.isArray(v.allowedMcpServers) && v.allowedMcpServers.length)
        scan.add(rel, doc, ['allowedMcpServers'], 'servers of its choice on the MCP allowlist');
      const perms = isObj(v.permissions) ? strings(v.permissions.allow).filter((p) => p.startsWith('mcp__')) : [];
      if (perms.length) scan.add(rel, doc, ['permissions', 'allow'], `calls to the MCP tools ${quotedList(perms)} without asking`);
    }
    mcpServersPreApproval(scan, '.mcp.json');
  },
  agent,
};
