// Codex CLI: its files, what a repository of it pre-approves, and what `mcp-gate install codex` changes.
//
// Where its files are: `config.toml` in CODEX_HOME, else ~/.codex (`[mcp_servers.<name>]` tables among unrelated
// keys); a repository's in `.codex/config.toml`.
//
// Measured with Codex CLI 0.171.0: it reads a project's .codex/config.toml only for a project its user config marks
// trusted; it has no setting that keeps the MCP servers of a trusted project out. Its requirements (`install codex
// --managed`): /etc/codex/requirements.toml, `[mcp_servers.<name>.identity]` tables: an allowlist by name and
// command (or URL); every other server, a trusted project's included, is disabled ("requirements
// (/etc/codex/requirements.toml)"), and so is a server of a listed name whose command does not match. No variable
// moves that file. Install's edits are appended blocks, checked with smol-toml, so the user's TOML stays as it is.
import * as path from 'node:path';
import { parseTomlDocument } from '../parse';
import {
  AgentFileError,
  appendBlock,
  isObj,
  parseToml,
  tomlKey,
  tomlString,
  type FileChange,
  type GateCommand,
  type ReadText,
} from './edits';
import {
  GATE_ENTRY_NAME,
  repoFile,
  shadowsGate,
  userFile,
  type AgentEdits,
  type AllowlistGap,
  type Machine,
  type ManagedEdits,
  type Tool,
} from './tool';

const REPOSITORY_CONFIG = '.codex/config.toml';

/** Its user configuration: `config.toml` in CODEX_HOME, else in ~/.codex. */
export function codexConfigFile(m: Machine): string {
  return path.join(m.env.CODEX_HOME || path.join(m.home, '.codex'), 'config.toml');
}

/** Where Codex CLI reads requirements (the path in its Unix binary; none is known for Windows). */
export function codexRequirementsFile(platform: NodeJS.Platform = process.platform): string | undefined {
  return platform === 'win32' ? undefined : '/etc/codex/requirements.toml';
}

export const CODEX_BLOCK_MARK = '# mcp-gate: added by `mcp-gate install codex`; `mcp-gate uninstall codex` removes it';
export const CODEX_MANAGED_BEGIN =
  '# mcp-gate: begin: added by `mcp-gate install codex --managed`; `mcp-gate uninstall codex --managed` removes it';
export const CODEX_MANAGED_END = '# mcp-gate: end';

export function codexBlock(gate: GateCommand): string {
  return `${CODEX_BLOCK_MARK}\n[mcp_servers.${GATE_ENTRY_NAME}]\ncommand = ${tomlString(gate.command)}\nargs = [${gate.args.map(tomlString).join(', ')}]\nstartup_timeout_sec = 60\n`;
}

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
  return isObj(config.mcp_servers)
    ? Object.entries(config.mcp_servers)
        .filter(([n]) => n !== GATE_ENTRY_NAME)
        .map(([name, def]) => ({ name, identity: codexIdentity(def) }))
    : [];
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
export function codexManagedChanges(read: ReadText, userConfig: string, reqFile: string, gate: GateCommand): FileChange[] {
  const user = parseToml(userConfig, read(userConfig));
  const text = read(reqFile);
  const region = text === undefined ? undefined : codexManagedRegion(text);
  const outside = text === undefined ? '' : region ? text.slice(0, region.start) + text.slice(region.end) : text;
  const theirs = parseToml(reqFile, outside);
  const held = isObj(theirs.mcp_servers) ? theirs.mcp_servers : {};
  if (GATE_ENTRY_NAME in held)
    throw new AgentFileError(
      `${reqFile} already has a [mcp_servers.${GATE_ENTRY_NAME}] that MCP Gate did not write; remove it first, nothing was changed`,
    );
  const lines = [CODEX_MANAGED_BEGIN];
  const entry = (name: string, identity: string) => lines.push(`[mcp_servers.${tomlKey(name)}.identity]`, identity, '');
  entry(GATE_ENTRY_NAME, codexIdentity({ command: gate.command, args: gate.args }) as string);
  for (const s of codexUserServers(user)) if (s.identity && !(s.name in held)) entry(s.name, s.identity);
  lines.push(CODEX_MANAGED_END, '');
  const block = lines.join('\n');
  const after = region && text !== undefined ? text.slice(0, region.start) + block + text.slice(region.end) : appendBlock(text, block);
  try {
    parseTomlDocument(reqFile, after);
  } catch (e) {
    throw new AgentFileError(
      `${reqFile}: adding MCP Gate's [mcp_servers] entries would not be valid TOML here (${(e as Error).message.split('\n')[0]}); nothing was changed`,
    );
  }
  return [{ file: reqFile, before: text, after, block }];
}

const managed: ManagedEdits = {
  file: codexRequirementsFile,
  format: 'toml',
  changes: codexManagedChanges,
  layer(read, m) {
    const file = codexRequirementsFile(m.platform);
    if (file === undefined) return undefined;
    const text = read(file);
    const installed = text !== undefined && text.includes(CODEX_MANAGED_BEGIN);
    const gaps: AllowlistGap[] = [];
    if (installed) {
      const req = parseToml(file, text);
      const listed = isObj(req.mcp_servers) ? req.mcp_servers : {};
      const user = codexConfigFile(m);
      for (const s of codexUserServers(parseToml(user, read(user)))) {
        if (!(s.name in listed))
          gaps.push({
            server: { name: s.name, scope: 'user' },
            allowlist: file,
            fix: 'mcp-gate install codex --managed',
            agent: 'Codex CLI',
            key: '[mcp_servers]',
          });
      }
    }
    return { layer: { agent: 'codex', file, installed }, gaps };
  },
  effect:
    "starts only the servers these requirements list, each by its exact command (MCP Gate and your own); every other server, a trusted project's included, is disabled",
  closes: "a trusted project's servers are disabled",
  userEntryMissing: (read, file) => !(read(file) ?? '').includes(`[mcp_servers.${GATE_ENTRY_NAME}]`),
};

const agent: AgentEdits & { managed: ManagedEdits } = {
  files: (m) => [{ file: codexConfigFile(m), format: 'toml' }],
  install(read, files, gate) {
    const f = files[0].file;
    const text = read(f);
    const v = parseToml(f, text);
    const block = codexBlock(gate);
    if (text?.includes(block)) return [{ file: f, before: text, after: text, block }];
    if (isObj(v.mcp_servers) && GATE_ENTRY_NAME in v.mcp_servers) {
      throw new AgentFileError(
        `${f} already has a [mcp_servers.${GATE_ENTRY_NAME}] that MCP Gate did not write; remove it first, nothing was changed`,
      );
    }
    const after = appendBlock(text, block);
    try {
      parseTomlDocument(f, after);
    } catch (e) {
      throw new AgentFileError(
        `${f}: adding [mcp_servers.${GATE_ENTRY_NAME}] would not be valid TOML here (${(e as Error).message.split('\n')[0]}); nothing was changed`,
      );
    }
    return [{ file: f, before: text, after, block }];
  },
  managed,
};

export const codex: Tool<'codex'> & { agent: AgentEdits & { managed: ManagedEdits } } = {
  kind: 'codex',
  name: 'Codex CLI',
  sources: [repoFile(REPOSITORY_CONFIG, 'codex', { openTopLevel: true }), userFile(codexConfigFile, 'codex', { openTopLevel: true })],
  env: ['CODEX_HOME'],
  preApproval(scan) {
    const rel = REPOSITORY_CONFIG;
    const doc = scan.load(rel);
    if (!doc || !isObj(doc.value)) return;
    shadowsGate(scan, rel, doc, doc.value.mcp_servers, ['mcp_servers']);
    if (isObj(doc.value.projects)) {
      for (const [dir, p] of Object.entries(doc.value.projects)) {
        if (isObj(p) && p.trust_level === 'trusted')
          scan.add(rel, doc, ['projects', dir, 'trust_level'], `the project ${JSON.stringify(dir)} as trusted (trust_level = "trusted")`);
      }
    }
    if (doc.value.approval_policy === 'never')
      scan.add(rel, doc, ['approval_policy'], 'every command and tool call without asking (approval_policy = "never")');
  },
  agent,
};
