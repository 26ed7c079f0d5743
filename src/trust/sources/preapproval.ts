// Pre-approval attempts: repository files that try to approve, trust or auto-start MCP servers or tools for an
// agent — Claude Code's `.claude/settings*.json` (`enableAllProjectMcpServers`, `enabledMcpjsonServers`,
// `enabledPlugins`, `allowedMcpServers`, `mcp__` permissions), `autoApprove`/`alwaysAllow` in the MCP files of
// Cursor, Roo, Kiro, Amazon Q and Claude, Gemini CLI's `trust: true` and `mcp.allowed`, Codex's project trust
// and approval policy, and any repository server named like MCP Gate's own agent entry (`mcp-gate`), which would
// shadow it. Each tool's adapter (./tools/) holds its own check; this file reads the files for them. A pure,
// bounded reader: it reports, and none of it changes an MCP Gate state (VS Code's `chat.mcp.*` overrides are read
// by vscode-own.ts).
import * as path from 'node:path';
import { TrackingReader } from './fsread';
import { decodeUtf8, MAX_CONFIG_BYTES, parseJsonc, parseTomlDocument, type ParsedDocument, type Position } from './parse';
import { TOOLS } from './tools';

export { GATE_ENTRY_NAME } from './tools/tool';

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

/** Runs every tool's pre-approval check (each adapter in ./tools/ knows its files and keys). */
export function preApprovalAttempts(projectDir: string, reader: TrackingReader = new TrackingReader()): PreApprovalReport {
  const attempts: PreApproval[] = [];
  const problems: string[] = [];
  const load = (rel: string): ParsedDocument | undefined => {
    const file = path.join(projectDir, ...rel.split('/'));
    const r = reader.read(file, MAX_CONFIG_BYTES);
    if (r.kind === 'missing') return undefined;
    if (r.kind === 'error') {
      problems.push(`${rel}: ${r.error.message}`);
      return undefined;
    }
    try {
      const text = decodeUtf8(rel, r.data);
      return rel.endsWith('.toml') ? parseTomlDocument(rel, text) : parseJsonc(rel, text);
    } catch (e) {
      problems.push(`${rel}: ${(e as Error).message}`);
      return undefined;
    }
  };
  for (const tool of TOOLS) {
    if (!('preApproval' in tool) || !tool.preApproval) continue;
    tool.preApproval({
      load,
      add: (file, doc, keyPath, what) =>
        attempts.push({ file, agent: tool.name, what, key: keyPath.join('.'), position: doc.positionOf(keyPath) }),
    });
  }
  return { attempts, problems };
}

/** One line a person reads: "this repository tries to approve X for agent Y". */
export function preApprovalLine(a: PreApproval): string {
  return `this repository tries to approve ${a.what} for ${a.agent} (${a.file}:${a.position.line}, ${a.key})`;
}
