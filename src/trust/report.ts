// What the gate reports: the shapes every front end, the host and the shared renderings read (sources, servers with
// their state and pinned definition, full-block conditions, the user's policy layers), and finding one server in a
// report. The gate (./gate.ts) computes a report; nothing here reads a file.
import * as path from 'node:path';
import type { ImportKind, Location, Machine, Scope } from './sources/catalogue';
import type { ServerDefinition } from './sources/declarations';
import type { Pinned } from './plan/digest';
import type { GateState } from './approval/gate-state';
import type { Position } from './sources/parse';
import type { ApprovalRecord, StoreHealth, StoreMasker } from './approval/store';
import { NEUTRAL_WORDS, type FrontEndWords } from './words';

export type { GateState } from './approval/gate-state';

import type { AdminPolicy } from './sources/admin';
import type { LogExportTarget } from './sources/log-export';

export const ESCAPE_HATCH_ENV = 'MCP_GATE_ALLOW_PROJECT';

export interface GateInput {
  projectDir: string;
  storeDir: string;
  machine: Machine;
  /**
   * The extension's application-scope settings (`mcpGate.servers`, `mcpGate.imports`, `mcpGate.settings`,
   * `mcpGate.rules`, …) as one trusted user layer, in MCP Gate's configuration format. Never a workspace value.
   */
  userSettings?: { label: string; value: Record<string, unknown> };
  /** What every write of the approval store masks through (the process's one masker). */
  masker: StoreMasker;
  /** The front end's wording for the next step in messages (./words.ts). */
  words?: FrontEndWords;
  /**
   * Local servers' Node and Python processes run under the load guard (src/guard/), so a closure is pinned in its
   * guarded form where it can be (src/trust/plan/closure.ts guardedClosureOf). The CLI and the extension set it;
   * without it every closure is pinned as a prediction (what the guarded form falls back to).
   */
  loadGuard?: boolean;
}

export interface SourceReport {
  file: string;
  /** How it is shown and keyed: workspace-relative for repository files, absolute for user files. */
  source: string;
  scope: Scope;
  kind: Location['kind'];
  format: Location['format'];
  status: 'ok' | 'missing' | 'unreadable' | 'invalid';
  problems: string[];
  /** Files whose `imports` brought this one in (empty for a file read by itself). */
  importedBy: { file: string; scope: Scope }[];
  /** A person on this machine chose this file: it is user scope and read natively or imported by a user file. */
  trusted: boolean;
  servers: number;
}

export interface ServerReport {
  name: string;
  source: string;
  file: string;
  position: Position;
  scope: Scope;
  kind: Location['kind'];
  gated: boolean;
  importedBy: string[];
  state: GateState;
  reason: string;
  viaEscapeHatch: boolean;
  /** Switched off in its own file (`"disabled": true`, Codex `enabled = false`): listed, never started. */
  disabled: boolean;
  definition?: ServerDefinition;
  raw: Record<string, unknown>;
  pinned?: Pinned;
  record?: ApprovalRecord;
}

export interface FullBlock {
  reason: string;
  files: string[];
}

export interface Importer {
  file: string;
  scope: Scope;
  kinds: ImportKind[];
  position: Position;
}

export interface GateReport {
  project: string;
  store: { file: string; health: StoreHealth };
  sources: SourceReport[];
  servers: ServerReport[];
  fullBlock: FullBlock[];
  importers: Importer[];
  missingImportTargets: { kind: ImportKind; file: string; importedBy: string[] }[];
  escapeHatch: boolean;
  agentFiles: { path: string; what: string }[];
  /** Raw policy blocks of MCP Gate's user configuration (validated by src/policy). */
  userPolicy: {
    file: string;
    rules?: unknown;
    secrets?: unknown;
    localExceptions?: unknown;
    sandbox?: unknown;
    packages?: unknown;
    lineOf?: (keyPath: string[]) => number;
  };
  /**
   * Every layer that may hold policy: the administrator's (first, `layer: 'admin'`, when its file is in force), the
   * extension's settings (when given) and the configuration file.
   */
  userPolicyLayers: (GateReport['userPolicy'] & { layer?: 'admin' })[];
  /** The administrator's layer (./sources/admin.ts): absent, in force, or invalid (then a full block). */
  adminPolicy: AdminPolicy;
  /** MCP_GATE_ALLOW_PROJECT=1 was set, and the administrator's layer turned the escape hatch off. */
  escapeHatchRefused?: string;
  /** A user layer says `requireLog`: calls are refused while the exchange log cannot be written. */
  requireLog: boolean;
  /** Where the exchange log is exported (./sources/log-export.ts): the administrator's target, else the user's. */
  logExport?: LogExportTarget;
  /** Repository settings that try to set what only user scope may set (ignored: a repository cannot grant). */
  ignoredGrants: { file: string; key: string }[];
}

export type ServerLookup = { ok: true; server: ServerReport } | { ok: false; message: string };

/** Finds a server by name (and source, when the name is declared in several files). */
export function findServer(report: GateReport, name: string, source?: string, words: FrontEndWords = NEUTRAL_WORDS): ServerLookup {
  const matches = report.servers.filter(
    (s) => s.name === name && (!source || s.source === source || s.file === path.resolve(report.project, source)),
  );
  if (matches.length === 1) return { ok: true, server: matches[0] };
  if (matches.length === 0) {
    const names = [...new Set(report.servers.map((s) => s.name))].sort();
    return {
      ok: false,
      message: `no server "${name}"${source ? ` in ${source}` : ''} in ${report.project}${names.length ? ` (servers: ${names.join(', ')})` : ' (no servers declared)'}`,
    };
  }
  return {
    ok: false,
    message: `"${name}" is declared in ${matches.length} files (${matches.map((s) => s.source).join(', ')}); ${words.chooseSource}`,
  };
}
