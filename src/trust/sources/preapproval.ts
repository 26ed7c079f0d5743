// Pre-approval attempts: repository files that try to approve, trust or auto-start MCP servers or tools for an
// agent — Claude Code's `.claude/settings*.json` (`enableAllProjectMcpServers`, `enabledMcpjsonServers`,
// `enabledPlugins`, `allowedMcpServers`, `mcp__` permissions), `autoApprove`/`alwaysAllow` in the MCP files of
// Cursor, Roo, Kiro, Amazon Q and Claude, Gemini CLI's `trust: true` and `mcp.allowed`, Codex's project trust
// and approval policy, and any repository server named like MCP Gate's own agent entry (`mcp-gate`), which would
// shadow it. A pure, bounded reader: it reports, and none of it changes an MCP Gate state (VS Code's `chat.mcp.*`
// overrides are read by vscode-own.ts).
import * as path from 'node:path';
import { TrackingReader } from './fsread';
import { decodeUtf8, MAX_CONFIG_BYTES, parseJsonc, parseTomlDocument, type ParsedDocument, type Position } from './parse';

/** The name `mcp-gate install` gives its entry in every agent's user configuration. */
export const GATE_ENTRY_NAME = 'mcp-gate';

export interface PreApproval {
  /** Relative to the project, `/`-separated. */
  file: string;
  agent: string;
  /** What the repository tries to approve, e.g. `every server of .mcp.json`. */
  what: string;
  key: string;
  position: Position;
}

export interface PreApprovalReport {
  attempts: PreApproval[];
  /** Files that exist but could not be read or parsed (the reader reports and goes on). */
  problems: string[];
}

const MCP_FILES: [string, string][] = [
  ['.mcp.json', 'Claude Code'],
  ['.cursor/mcp.json', 'Cursor'],
  ['.roo/mcp.json', 'Roo Code'],
  ['.kiro/settings/mcp.json', 'Kiro'],
  ['.amazonq/mcp.json', 'Amazon Q'],
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const list = (xs: string[]) => xs.slice(0, 10).map((x) => JSON.stringify(x)).join(', ') + (xs.length > 10 ? `, … (${xs.length} in all)` : '');

export function preApprovalAttempts(projectDir: string, reader: TrackingReader = new TrackingReader()): PreApprovalReport {
  const attempts: PreApproval[] = [];
  const problems: string[] = [];
  const load = (rel: string, toml = false): ParsedDocument | undefined => {
    const file = path.join(projectDir, ...rel.split('/'));
    const r = reader.read(file, MAX_CONFIG_BYTES);
    if (r.kind === 'missing') return undefined;
    if (r.kind === 'error') {
      problems.push(`${rel}: ${r.error.message}`);
      return undefined;
    }
    try {
      const text = decodeUtf8(rel, r.data);
      return toml ? parseTomlDocument(rel, text) : parseJsonc(rel, text);
    } catch (e) {
      problems.push(`${rel}: ${(e as Error).message}`);
      return undefined;
    }
  };
  const add = (file: string, agent: string, doc: ParsedDocument, keyPath: string[], what: string) =>
    attempts.push({ file, agent, what, key: keyPath.join('.'), position: doc.positionOf(keyPath) });
  const shadow = (file: string, agent: string, doc: ParsedDocument, servers: unknown, keyPath: string[]) => {
    if (isObj(servers) && Object.prototype.hasOwnProperty.call(servers, GATE_ENTRY_NAME)) {
      add(file, agent, doc, [...keyPath, GATE_ENTRY_NAME], `its own server under the name "${GATE_ENTRY_NAME}", in place of MCP Gate's entry`);
    }
  };

  for (const rel of ['.claude/settings.json', '.claude/settings.local.json']) {
    const doc = load(rel);
    if (!doc || !isObj(doc.value)) continue;
    const v = doc.value;
    if (v.enableAllProjectMcpServers === true) add(rel, 'Claude Code', doc, ['enableAllProjectMcpServers'], 'every server of .mcp.json');
    const enabled = strings(v.enabledMcpjsonServers);
    if (enabled.length) add(rel, 'Claude Code', doc, ['enabledMcpjsonServers'], `the .mcp.json servers ${list(enabled)}`);
    if (isObj(v.enabledPlugins)) {
      const plugins = Object.entries(v.enabledPlugins).filter(([, on]) => on === true).map(([k]) => k);
      if (plugins.length) add(rel, 'Claude Code', doc, ['enabledPlugins'], `the plugins ${list(plugins)} (a plugin can bring MCP servers)`);
    }
    if (Array.isArray(v.allowedMcpServers) && v.allowedMcpServers.length) add(rel, 'Claude Code', doc, ['allowedMcpServers'], 'servers of its choice on the MCP allowlist');
    const perms = isObj(v.permissions) ? strings(v.permissions.allow).filter((p) => p.startsWith('mcp__')) : [];
    if (perms.length) add(rel, 'Claude Code', doc, ['permissions', 'allow'], `calls to the MCP tools ${list(perms)} without asking`);
  }

  for (const [rel, agent] of MCP_FILES) {
    const doc = load(rel);
    if (!doc || !isObj(doc.value) || !isObj(doc.value.mcpServers)) continue;
    shadow(rel, agent, doc, doc.value.mcpServers, ['mcpServers']);
    for (const [name, def] of Object.entries(doc.value.mcpServers)) {
      if (!isObj(def)) continue;
      for (const key of ['autoApprove', 'alwaysAllow']) {
        const tools = strings(def[key]);
        if (tools.length) add(rel, agent, doc, ['mcpServers', name, key], `calls to the tools ${list(tools)} of "${name}" without asking`);
      }
    }
  }

  const gemini = load('.gemini/settings.json');
  if (gemini && isObj(gemini.value)) {
    const rel = '.gemini/settings.json';
    const servers = gemini.value.mcpServers;
    shadow(rel, 'Gemini CLI', gemini, servers, ['mcpServers']);
    if (isObj(servers)) {
      for (const [name, def] of Object.entries(servers)) {
        if (isObj(def) && def.trust === true) add(rel, 'Gemini CLI', gemini, ['mcpServers', name, 'trust'], `every tool call of "${name}" without confirmation (trust: true)`);
      }
    }
    const allowed = isObj(gemini.value.mcp) ? strings(gemini.value.mcp.allowed) : [];
    if (allowed.length) add(rel, 'Gemini CLI', gemini, ['mcp', 'allowed'], `the servers ${list(allowed)} on the MCP allowlist`);
    if (isObj(gemini.value.security) && isObj(gemini.value.security.folderTrust) && gemini.value.security.folderTrust.enabled === false) {
      add(rel, 'Gemini CLI', gemini, ['security', 'folderTrust', 'enabled'], 'this folder without the folder-trust question (folderTrust.enabled: false)');
    }
  }

  const codex = load('.codex/config.toml', true);
  if (codex && isObj(codex.value)) {
    const rel = '.codex/config.toml';
    shadow(rel, 'Codex CLI', codex, codex.value.mcp_servers, ['mcp_servers']);
    if (isObj(codex.value.projects)) {
      for (const [dir, p] of Object.entries(codex.value.projects)) {
        if (isObj(p) && p.trust_level === 'trusted') add(rel, 'Codex CLI', codex, ['projects', dir, 'trust_level'], `the project ${JSON.stringify(dir)} as trusted (trust_level = "trusted")`);
      }
    }
    if (codex.value.approval_policy === 'never') add(rel, 'Codex CLI', codex, ['approval_policy'], 'every command and tool call without asking (approval_policy = "never")');
  }
  return { attempts, problems };
}

/** One line a person reads: "this repository tries to approve X for agent Y". */
export function preApprovalLine(a: PreApproval): string {
  return `this repository tries to approve ${a.what} for ${a.agent} (${a.file}:${a.position.line}, ${a.key})`;
}
