// The list of foreign tools MCP Gate knows, one adapter each, and what is built from it: the import kinds, the
// agents `mcp-gate install` supports (and those with an administrator layer), the environment variables the
// tools' paths read, and the workspace entries the sandbox protects. A tool is added by writing its adapter and
// listing it here; its catalogue rows, pre-approval checks and protected folder follow from that.
import { agentty } from './agentty';
import { amazonq } from './amazonq';
import { claude } from './claude';
import { codex } from './codex';
import { cursor } from './cursor';
import { gemini } from './gemini';
import { kiro } from './kiro';
import { pi } from './pi';
import { roo } from './roo';
import { topLevel, type AgentEdits, type ManagedEdits, type Tool } from './tool';
import { vscode } from './vscode';

/** In this order the catalogue lists their rows and `imports` names them. */
export const TOOLS = [vscode, claude, cursor, gemini, codex, pi, agentty, roo, kiro, amazonq] as const;

export type ImportKind = (typeof TOOLS)[number]['kind'];
export const IMPORT_KINDS: readonly ImportKind[] = TOOLS.map((t) => t.kind);

type AgentTool = Extract<(typeof TOOLS)[number], { agent: AgentEdits }>;
type ManagedTool = Extract<AgentTool, { agent: { managed: ManagedEdits } }>;
/** An agent `mcp-gate install` supports. */
export type Agent = AgentTool['kind'];
/** An agent with an administrator layer `install --managed` writes. */
export type ManagedAgent = ManagedTool['kind'];

export const AGENT_TOOLS: readonly AgentTool[] = TOOLS.filter((t): t is AgentTool => 'agent' in t && t.agent !== undefined);
export const AGENTS: readonly Agent[] = AGENT_TOOLS.map((t) => t.kind);
export const MANAGED_AGENTS: readonly ManagedAgent[] = AGENT_TOOLS.filter((t): t is ManagedTool => t.agent.managed !== undefined).map(
  (t) => t.kind,
);

export function isAgent(s: string): s is Agent {
  return (AGENTS as readonly string[]).includes(s);
}

export function isManagedAgent(s: string): s is ManagedAgent {
  return (MANAGED_AGENTS as readonly string[]).includes(s);
}

export function agentTool(agent: Agent): AgentTool {
  return AGENT_TOOLS.find((t) => t.kind === agent)!;
}

export function managedEdits(agent: ManagedAgent): ManagedEdits {
  return (agentTool(agent) as ManagedTool).agent.managed;
}

/** How messages name an agent ("Claude Code"). */
export function agentName(agent: Agent): string {
  return agentTool(agent).name;
}

/** Every environment variable the tools' configuration paths read, once each. */
export function toolEnv(tools: readonly Pick<Tool, 'env'>[] = TOOLS): string[] {
  return [...new Set(tools.flatMap((t) => t.env))];
}

/**
 * The workspace entries (top-level names) a contained server must not write for these tools: the top-level entry
 * of every repository source (so a new source protects its file by itself) and what each adapter adds.
 */
export function workspaceProtection(tools: readonly Pick<Tool, 'sources' | 'protect'>[] = TOOLS): string[] {
  const out: string[] = [];
  for (const t of tools) {
    for (const s of t.sources) if (s.scope === 'repository' && s.relPath !== undefined) out.push(topLevel(s.relPath));
    out.push(...(t.protect ?? []));
  }
  return [...new Set(out)];
}
