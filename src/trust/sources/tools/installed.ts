// What the install-able agents' files hold of MCP Gate now, for doctor and for `install --managed`: each agent's
// "mcp-gate" entry whose program is gone, the gate command a working entry runs, each administrator layer and
// whether it is in place, the user's own servers an allowlist MCP Gate wrote leaves out, and a repository's servers
// that take a user server's name. Pure functions of the files' text (a read function), over ./index.ts's list.
import * as path from 'node:path';
import { isObj, parseToml, readJson, valueAt, type GateCommand, type ReadText } from './edits';
import { AGENT_TOOLS, agentTool, MANAGED_AGENTS, managedEdits, type Agent, type ManagedAgent } from './index';
import { GATE_ENTRY_NAME, type AllowlistGap, type Machine, type ManagedLayer } from './tool';

export type { AllowlistGap, ManagedLayer, UserServer } from './tool';

/** An agent's "mcp-gate" entry whose program or CLI file is gone (the checkout it was installed from moved, say). */
export interface BrokenGateEntry {
  agent: Agent;
  file: string;
  /** The absolute path the entry runs that does not exist. */
  missing: string;
}

/** MCP Gate's entry in one of an agent's user files (undefined when the file or the entry is absent). */
function gateEntry(read: ReadText, f: { file: string; format: 'json' | 'toml' }): Record<string, unknown> | undefined {
  const text = read(f.file);
  if (text === undefined) return undefined;
  const v = f.format === 'toml' ? parseToml(f.file, text) : readJson(f.file, text);
  const entry = valueAt(v, [f.format === 'toml' ? 'mcp_servers' : 'mcpServers', GATE_ENTRY_NAME]);
  return isObj(entry) ? entry : undefined;
}

/** An agent's "mcp-gate" entry in one of its user files: the command line the agent starts. */
export interface GateEntry {
  agent: Agent;
  file: string;
  command: string;
  args: string[];
}

/** Every user-level agent file that holds an "mcp-gate" entry (doctor says each agent behind the gate). */
export function gateEntries(read: ReadText, m: Machine): GateEntry[] {
  const out: GateEntry[] = [];
  for (const t of AGENT_TOOLS) {
    for (const f of t.agent.files(m)) {
      const entry = gateEntry(read, f);
      if (!entry || typeof entry.command !== 'string') continue;
      out.push({
        agent: t.kind,
        file: f.file,
        command: entry.command,
        args: Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [],
      });
    }
  }
  return out;
}

/**
 * Every user-level agent file whose "mcp-gate" entry names an absolute command or CLI file that no longer exists
 * (doctor says so: the agent then fails to start MCP Gate, often silently). Unreadable files are not guessed at.
 */
export function brokenGateEntries(read: ReadText, m: Machine, exists: (file: string) => boolean): BrokenGateEntry[] {
  const out: BrokenGateEntry[] = [];
  for (const e of gateEntries(read, m)) {
    const paths = [e.command, ...e.args.filter((a) => /\.[cm]?js$/.test(a))].filter((p) => path.isAbsolute(p));
    const missing = paths.find((p) => !exists(p));
    if (missing) out.push({ agent: e.agent, file: e.file, missing });
  }
  return out;
}

/**
 * The gate command an agent's user-level "mcp-gate" entry runs now, when its program and CLI file exist (what a
 * managed layer must then admit, so that the user's entry keeps working under it); undefined otherwise.
 */
export function installedGateOf(agent: Agent, read: ReadText, m: Machine, exists: (file: string) => boolean): GateCommand | undefined {
  for (const f of agentTool(agent).agent.files(m)) {
    let entry: Record<string, unknown> | undefined;
    try {
      entry = gateEntry(read, f);
    } catch {
      return undefined;
    }
    if (!entry || typeof entry.command !== 'string' || !Array.isArray(entry.args)) continue;
    const args = entry.args.filter((a): a is string => typeof a === 'string');
    if (args.length !== 2 || args[1] !== 'serve' || !path.isAbsolute(entry.command) || !path.isAbsolute(args[0])) continue;
    if (exists(entry.command) && exists(args[0])) return { command: entry.command, args };
  }
  return undefined;
}

/**
 * Each administrator layer MCP Gate knows, whether `install --managed` is in it, and (Gemini CLI, Codex CLI) the
 * user's own servers it leaves out (added after install: the agent then does not start them).
 */
export function managedLayers(
  read: ReadText,
  m: Machine,
  gateOf: (agent: ManagedAgent) => GateCommand,
): { layers: ManagedLayer<ManagedAgent>[]; gaps: AllowlistGap[] } {
  const layers: ManagedLayer<ManagedAgent>[] = [];
  const gaps: AllowlistGap[] = [];
  for (const agent of MANAGED_AGENTS) {
    const r = managedEdits(agent).layer(read, m, gateOf(agent));
    if (!r) continue;
    layers.push({ ...r.layer, agent });
    gaps.push(...r.gaps);
  }
  return { layers, gaps };
}

/** The user's servers that the allowlists install wrote at user level leave out, agent by agent. */
export function userAllowlistGaps(
  read: ReadText,
  listDir: (dir: string) => string[],
  m: Machine,
  gateOf: (agent: Agent) => GateCommand,
): AllowlistGap[] {
  return AGENT_TOOLS.flatMap((t) => t.agent.allowlistGaps?.(read, listDir, m, gateOf(t.kind)) ?? []);
}

/** A repository server that takes the place of a user server of the same name, with doctor's line for it. */
export interface NameTaken {
  agent: Agent;
  name: string;
  note: string;
}

/** The repository's servers (by catalogue source) that take a user server's name where the agent allows by name. */
export function namesTaken(read: ReadText, m: Machine, repositoryServers: readonly { name: string; source: string }[]): NameTaken[] {
  const out: NameTaken[] = [];
  for (const t of AGENT_TOOLS) {
    const s = t.agent.nameShadowing;
    if (!s) continue;
    const mine = new Set(s.userServers(read, m));
    for (const r of repositoryServers)
      if (r.source === s.source && mine.has(r.name)) out.push({ agent: t.kind, name: r.name, note: s.note(r.name, m) });
  }
  return out;
}
