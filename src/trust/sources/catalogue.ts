// The sources catalogue: every place an MCP server can be declared, in one table. Each row says the tool it
// belongs to (its import kind), whether a person on this machine writes it (user) or it travels with a clone
// (repository), its format, and whether MCP Gate reads it by itself or only when a configuration imports it.
// The rows are built from the tools' adapters (./tools/); nothing else in the project may hard-code a
// configuration path.
import * as os from 'node:os';
import * as path from 'node:path';
import { IMPORT_KINDS, TOOLS, toolEnv, type ImportKind } from './tools';
import { xdgConfig, type Machine, type SteeringFile, type ToolSource } from './tools/tool';

export { IMPORT_KINDS, type ImportKind } from './tools';
export type { Format, Machine, Scope } from './tools/tool';

export function currentMachine(): Machine {
  return { home: os.homedir(), env: process.env, platform: process.platform };
}

export interface Location extends ToolSource {
  /** The tool the file belongs to; `gate` is MCP Gate itself. */
  kind: ImportKind | 'gate';
}

/** The user configuration file of MCP Gate itself: `MCP_GATE_CONFIG`, else `<XDG config>/mcp-gate/config.json`. */
export function gateConfigPath(m: Machine): string {
  return m.env.MCP_GATE_CONFIG ? path.resolve(m.env.MCP_GATE_CONFIG) : path.join(xdgConfig(m), 'mcp-gate', 'config.json');
}

const rows = (scope: Location['scope']): Location[] =>
  TOOLS.flatMap((t) => t.sources.filter((s) => s.scope === scope).map((s): Location => ({ kind: t.kind, ...s })));

export const CATALOGUE: readonly Location[] = [
  // MCP Gate's own user configuration: trusted, native, the only file besides VS Code's application settings that can grant.
  { kind: 'gate', scope: 'user', format: 'gate', userPath: gateConfigPath, native: true, canImport: true, openTopLevel: false },
  // Repository scope: travels with a clone. Always read, always gated (each tool's adapter in ./tools/ has its rows).
  ...rows('repository'),
  // User scope of other tools: read when a configuration imports their kind.
  ...rows('user'),
];

/** Every environment variable a catalogue path reads: MCP Gate's own, then the tools'. */
export const CATALOGUE_ENV: readonly string[] = [...new Set(['MCP_GATE_CONFIG', 'XDG_CONFIG_HOME', ...toolEnv()])];

/**
 * Files a repository can carry that steer an agent but run no command: listed with a "from this repository" tag,
 * never gated. Directories are listed one level deep. `AGENTS.md` is read by many agents; the rest are the tools'.
 */
export const AGENT_FILES: readonly SteeringFile[] = [
  { relPath: 'AGENTS.md', directory: false, what: 'agent instructions' },
  ...TOOLS.flatMap((t): readonly SteeringFile[] => ('steering' in t ? (t.steering ?? []) : [])),
];

export function isImportKind(s: string): s is ImportKind {
  return (IMPORT_KINDS as readonly string[]).includes(s);
}

/** Absolute path of a catalogue row for this project and machine, or undefined when the row has no path here. */
export function locate(loc: Location, projectDir: string, m: Machine): string | undefined {
  if (loc.scope === 'repository') return path.join(projectDir, ...loc.relPath!.split('/'));
  return loc.userPath!(m);
}
