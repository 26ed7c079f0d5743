// Gemini CLI: its files, what a repository of it pre-approves, and what `mcp-gate install gemini` changes.
//
// Where its files are (read from the npm build 0.61.0): user settings in `<GEMINI_CLI_HOME or home>/.gemini/
// settings.json` (its Storage takes GEMINI_CLI_HOME as the home folder when set); a repository's in
// `.gemini/settings.json`, whose `mcpServers` sit among many unrelated keys.
//
// Measured with Gemini CLI 0.61.0: it starts servers with the project folder as cwd, and only in trusted folders.
// A user-level `mcp.allowed` blocks every other server name; a repository's `mcp.allowed` cannot admit its own, but
// a repository server named `mcp-gate` replaces the user's entry (doctor reports it). System settings (`install
// gemini --managed`): /etc/gemini-cli/settings.json on Linux, merged last (over the workspace's): `mcpServers`
// merge per name, so the system's `mcp-gate` wins over a repository server of that name; `mcp.allowed` is the
// intersection of every scope's list (a repository can narrow it, not widen it). GEMINI_CLI_SYSTEM_SETTINGS_PATH
// moves the file for whoever sets it, so MCP Gate writes the default. It reads its settings files with comments
// stripped, then JSON.parse: a trailing comma is an error there.
import * as path from 'node:path';
import { escapeText } from '../../../text/escape';
import { isObj, jsonChange, readJson, runsGate, strictJsonc, valueAt, type FileChange, type GateCommand, type ReadText } from './edits';
import {
  GATE_ENTRY_NAME,
  quotedList,
  repoFile,
  shadowsGate,
  strings,
  tildify,
  userFile,
  type AgentEdits,
  type AllowlistGap,
  type Machine,
  type ManagedEdits,
  type Tool,
} from './tool';

const REPOSITORY_SETTINGS = '.gemini/settings.json';

/** Its user settings: `<GEMINI_CLI_HOME or home>/.gemini/settings.json`. */
export function geminiUserSettingsFile(m: Machine): string {
  return path.join(m.env.GEMINI_CLI_HOME || m.home, '.gemini', 'settings.json');
}

/** Where Gemini CLI reads system settings by default (GEMINI_CLI_SYSTEM_SETTINGS_PATH is not followed: whoever sets it moves it). */
export function geminiSystemSettingsFile(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin') return '/Library/Application Support/GeminiCli/settings.json';
  if (platform === 'win32') return 'C:\\ProgramData\\gemini-cli\\settings.json';
  return '/etc/gemini-cli/settings.json';
}

/** The user's own Gemini CLI servers in its user settings (not MCP Gate's entry). */
export function geminiUserServers(settings: Record<string, unknown>): string[] {
  return isObj(settings.mcpServers) ? Object.keys(settings.mcpServers).filter((n) => n !== GATE_ENTRY_NAME) : [];
}

/**
 * `install gemini --managed`: the system settings define `mcp-gate` (merged last, so a repository's server of that
 * name no longer takes its place) and `mcp.allowed` = what it held, `mcp-gate` and the user's own server names.
 */
export function geminiManagedChanges(read: ReadText, userSettings: string, systemFile: string, gate: GateCommand): FileChange[] {
  const user = readJson(userSettings, read(userSettings));
  const text = read(systemFile);
  const sys = strictJsonc(systemFile, text, 'Gemini CLI');
  const allowed = isObj(sys.mcp) && Array.isArray(sys.mcp.allowed) ? [...(sys.mcp.allowed as unknown[])] : [];
  for (const n of [GATE_ENTRY_NAME, ...geminiUserServers(user)]) if (!allowed.includes(n)) allowed.push(n);
  return [
    jsonChange(systemFile, text, [
      { path: ['mcpServers', GATE_ENTRY_NAME], value: { command: gate.command, args: gate.args } },
      { path: ['mcp', 'allowed'], value: allowed },
    ]),
  ];
}

const managed: ManagedEdits = {
  file: geminiSystemSettingsFile,
  format: 'json',
  changes: geminiManagedChanges,
  layer(read, m, gate) {
    const file = geminiSystemSettingsFile(m.platform);
    const sys = readJson(file, read(file));
    const installed = runsGate(valueAt(sys, ['mcpServers', GATE_ENTRY_NAME]), gate);
    const gaps: AllowlistGap[] = [];
    const allowed = valueAt(sys, ['mcp', 'allowed']);
    if (installed && Array.isArray(allowed)) {
      const user = geminiUserSettingsFile(m);
      for (const name of geminiUserServers(readJson(user, read(user)))) {
        if (!allowed.some((a) => typeof a === 'string' && a.toLowerCase().trim() === name.toLowerCase().trim()))
          gaps.push({
            server: { name, scope: 'user' },
            allowlist: file,
            fix: 'mcp-gate install gemini --managed',
            agent: 'Gemini CLI',
            key: 'mcp.allowed',
          });
      }
    }
    return { layer: { agent: 'gemini', file, installed }, gaps };
  },
  effect:
    'starts `mcp-gate` as these system settings define it (a repository server of that name no longer takes its place) and allows only the names listed (MCP Gate and your own)',
  closes: 'a repository server named "mcp-gate" cannot take the gate\'s place',
};

const agent: AgentEdits & { managed: ManagedEdits } = {
  files: (m) => [{ file: geminiUserSettingsFile(m), format: 'json' }],
  install(read, files, gate) {
    const f = files[0].file;
    const text = read(f);
    const v = readJson(f, text);
    const allowed = isObj(v.mcp) && Array.isArray(v.mcp.allowed) ? [...(v.mcp.allowed as unknown[])] : [];
    const names = [GATE_ENTRY_NAME, ...(isObj(v.mcpServers) ? Object.keys(v.mcpServers) : [])];
    for (const n of names) if (!allowed.includes(n)) allowed.push(n);
    return [
      jsonChange(f, text, [
        { path: ['mcpServers', GATE_ENTRY_NAME], value: { command: gate.command, args: gate.args } },
        { path: ['mcp', 'allowed'], value: allowed },
      ]),
    ];
  },
  // Its allowlist is by name: a repository server named like one of the user's takes its place.
  nameShadowing: {
    source: REPOSITORY_SETTINGS,
    userServers: (read, m) => {
      const f = geminiUserSettingsFile(m);
      return geminiUserServers(readJson(f, read(f)));
    },
    note: (name, m) =>
      `this repository's ${REPOSITORY_SETTINGS} defines a server named ${escapeText(JSON.stringify(name))}, as your ${escapeText(tildify(geminiUserSettingsFile(m), m.home))} does: in a trusted folder Gemini CLI runs the repository's command under your allowlisted name (its allowlist is by name; neither install closes this: rename your server, or keep the folder untrusted)`,
  },
  managed,
};

export const gemini: Tool<'gemini'> & { agent: AgentEdits & { managed: ManagedEdits } } = {
  kind: 'gemini',
  name: 'Gemini CLI',
  sources: [
    repoFile(REPOSITORY_SETTINGS, 'gemini', { openTopLevel: true }),
    userFile(geminiUserSettingsFile, 'gemini', { openTopLevel: true }),
  ],
  env: ['GEMINI_CLI_HOME'],
  preApproval(scan) {
    const rel = REPOSITORY_SETTINGS;
    const doc = scan.load(rel);
    if (!doc || !isObj(doc.value)) return;
    const servers = doc.value.mcpServers;
    shadowsGate(scan, rel, doc, servers, ['mcpServers']);
    if (isObj(servers)) {
      for (const [name, def] of Object.entries(servers)) {
        if (isObj(def) && def.trust === true)
          scan.add(rel, doc, ['mcpServers', name, 'trust'], `every tool call of "${name}" without confirmation (trust: true)`);
      }
    }
    const allowed = isObj(doc.value.mcp) ? strings(doc.value.mcp.allowed) : [];
    if (allowed.length) scan.add(rel, doc, ['mcp', 'allowed'], `the servers ${quotedList(allowed)} on the MCP allowlist`);
    if (isObj(doc.value.security) && isObj(doc.value.security.folderTrust) && doc.value.security.folderTrust.enabled === false) {
      scan.add(
        rel,
        doc,
        ['security', 'folderTrust', 'enabled'],
        'this folder without the folder-trust question (folderTrust.enabled: false)',
      );
    }
  },
  agent,
};
