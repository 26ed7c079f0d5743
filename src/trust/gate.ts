// The gate: reads every source the catalogue names for a project (and what they import), decides each
// server's state against the approval store, and reports full-block conditions. One function computes the
// state; the CLI, the extension and the host all consume its report. A per-project cache returns the previous
// report while every file it read or looked for (missing paths included) keeps its signature.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  AGENT_FILES,
  CATALOGUE,
  CATALOGUE_ENV,
  locate,
  type ImportKind,
  type Location,
  type Machine,
  type Scope,
} from './sources/catalogue';
import {
  isDisabled,
  readDeclarations,
  USER_ONLY_KEYS,
  type Declarations,
  type DeclaredServer,
  type ExposureSettings,
  type ServerDefinition,
} from './sources/declarations';
import { TrackingReader, unchanged, type Signature } from './sources/fsread';
import type { FolderWatcher } from './sources/fswatch';
import { storeInsideProject } from './approval/store-location';
import { ConfigParseError, decodeUtf8, MAX_CONFIG_BYTES, parseJsonc, parseTomlDocument, type Position } from './sources/parse';
import { ApprovalStore, type ApprovalRecord, type StoreHealth, type StoreMasker } from './approval/store';
import { recordRef, serverKey } from './approval/server-ref';
import { readAdminPolicy, registryListed, type AdminPolicy } from './sources/admin';
import { exportTarget } from './sources/log-export';
import {
  ESCAPE_HATCH_ENV,
  type FullBlock,
  type GateInput,
  type GateReport,
  type Importer,
  type ServerReport,
  type SourceReport,
} from './report';
import { NEUTRAL_WORDS } from './words';
import { decideState } from './server-state';
import { VSCODE_WORKSPACE_SETTINGS } from './sources/tools/vscode';

import type { GateState } from './approval/gate-state';

export class ProjectError extends Error {}

/** VS Code settings only user scope may set (application scope), so a workspace's .vscode/settings.json cannot. */
export const GRANTING_SETTINGS: readonly string[] = USER_ONLY_KEYS.map((k) => `mcpGate.${k}`);

/** Project identity: the real path of the workspace folder. A fork, rename or second checkout is a new project. */
function projectIdentity(dir: string): string {
  try {
    const real = fs.realpathSync(dir);
    if (!fs.statSync(real).isDirectory()) throw new ProjectError(`${dir} is not a folder`);
    return real;
  } catch (e) {
    if (e instanceof ProjectError) throw e;
    throw new ProjectError(`the project folder ${dir} cannot be opened: ${(e as Error).message}`);
  }
}

interface LoadedSource {
  report: SourceReport;
  loc: Location;
  servers: DeclaredServer[];
  imports?: { kinds: ImportKind[]; position: Position };
  settings?: ExposureSettings;
  gate?: Declarations['gate'];
}

function readSource(file: string, source: string, loc: Location, reader: TrackingReader): LoadedSource {
  const report: SourceReport = {
    file,
    source,
    scope: loc.scope,
    kind: loc.kind,
    format: loc.format,
    status: 'ok',
    problems: [],
    importedBy: [],
    trusted: loc.scope === 'user' && loc.native,
    servers: 0,
  };
  // A symbolic link that cannot be resolved (dangling, a loop) or that points into /proc or /dev/fd (a different
  // file for every process that reads it) is not "no source": it is a source that cannot be used.
  const link = badLink(file, reader);
  if (link) {
    report.status = 'unreadable';
    report.problems.push(`${file}: ${link}; replace it with a regular file or remove it`);
    return { report, loc, servers: [] };
  }
  const r = reader.read(file, MAX_CONFIG_BYTES);
  if (r.kind === 'missing') return { report: { ...report, status: 'missing' }, loc, servers: [] };
  if (r.kind === 'error') {
    report.status = 'unreadable';
    report.problems.push(`${file}: cannot be read: ${r.error.message}`);
    return { report, loc, servers: [] };
  }
  try {
    const text = decodeUtf8(file, r.data);
    const doc = loc.format === 'codex' ? parseTomlDocument(file, text) : parseJsonc(file, text);
    const d = readDeclarations(file, loc, doc);
    if (d.fileErrors.length) {
      report.status = 'invalid';
      report.problems.push(...d.fileErrors);
    }
    report.servers = d.servers.length;
    return { report, loc, servers: d.servers, imports: d.imports, settings: d.settings, gate: d.gate };
  } catch (e) {
    report.status = 'unreadable';
    report.problems.push(e instanceof ConfigParseError ? e.message : `${file}: ${(e as Error).message}`);
    return { report, loc, servers: [] };
  }
}

/** Why the source path is a symbolic link that cannot be used, or undefined (no link, or a usable one). */
function badLink(file: string, reader: TrackingReader): string | undefined {
  const st = reader.lstat(file);
  if (!st?.isSymbolicLink()) return undefined;
  let at = file;
  for (let hop = 0; hop < 40; hop++) {
    let target: string;
    try {
      target = path.resolve(path.dirname(at), fs.readlinkSync(at));
    } catch {
      break;
    }
    if (/^\/(proc|dev\/fd)(\/|$)|^\/dev\/std(in|out|err)$/.test(target))
      return `is a symbolic link to ${target}, which names a different file for every process that reads it`;
    let next: fs.Stats;
    try {
      next = fs.lstatSync(target);
    } catch (e) {
      return `is a symbolic link that cannot be resolved (${target}: ${(e as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    if (!next.isSymbolicLink()) break;
    at = target;
  }
  try {
    fs.realpathSync(file);
  } catch (e) {
    return `is a symbolic link that cannot be resolved (${(e as NodeJS.ErrnoException).code === 'ELOOP' ? 'a loop' : ((e as NodeJS.ErrnoException).code ?? 'error')})`;
  }
  return undefined;
}

const SETTINGS_LOCATION: Location = { kind: 'gate', scope: 'user', format: 'gate', native: true, canImport: true, openTopLevel: false };

/** The extension's settings as a source: same format and checks as MCP Gate's user configuration file. */
function settingsSource(label: string, value: Record<string, unknown>): LoadedSource {
  const report: SourceReport = {
    file: label,
    source: label,
    scope: 'user',
    kind: 'gate',
    format: 'gate',
    status: 'ok',
    problems: [],
    importedBy: [],
    trusted: true,
    servers: 0,
  };
  const d = readDeclarations(label, SETTINGS_LOCATION, { value, positionOf: () => ({ line: 1, column: 1 }) });
  if (d.fileErrors.length) {
    report.status = 'invalid';
    report.problems.push(...d.fileErrors);
  }
  report.servers = d.servers.length;
  return { report, loc: SETTINGS_LOCATION, servers: d.servers, imports: d.imports, settings: d.settings, gate: d.gate };
}

/** Whether a source's servers are gated (everything not trusted as the user's own). */
const gatedSource = (s: LoadedSource) => !s.report.trusted;
const display = (loc: Location, file: string) => (loc.scope === 'repository' ? loc.relPath! : file);

/** Reads the extension's settings (when given) and every native source of the catalogue that exists for this project. */
function readNativeSources(input: GateInput, project: string, reader: TrackingReader): Map<string, LoadedSource> {
  const m = input.machine;
  const loaded = new Map<string, LoadedSource>();
  if (input.userSettings) loaded.set(input.userSettings.label, settingsSource(input.userSettings.label, input.userSettings.value));
  for (const loc of CATALOGUE) {
    if (!loc.native) continue;
    const file = locate(loc, project, m);
    if (!file || loaded.has(file)) continue;
    loaded.set(file, readSource(file, display(loc, file), loc, reader));
  }
  return loaded;
}

/** Imports: only files read by themselves may import (an imported file's own imports are not followed). Reads the
 * imported files into `loaded`. */
function followImports(
  loaded: Map<string, LoadedSource>,
  project: string,
  m: Machine,
  reader: TrackingReader,
): Pick<GateReport, 'importers' | 'missingImportTargets'> {
  const importers: Importer[] = [];
  const missingImportTargets: GateReport['missingImportTargets'] = [];
  for (const src of [...loaded.values()]) {
    if (!src.imports || src.report.status !== 'ok') continue;
    importers.push({ file: src.report.file, scope: src.loc.scope, kinds: src.imports.kinds, position: src.imports.position });
    for (const kind of src.imports.kinds) {
      for (const loc of CATALOGUE) {
        if (loc.kind !== kind) continue;
        const file = locate(loc, project, m);
        if (!file) continue;
        let target = loaded.get(file);
        if (!target) {
          target = readSource(file, display(loc, file), loc, reader);
          loaded.set(file, target);
        }
        target.report.importedBy.push({ file: src.report.file, scope: src.loc.scope });
        if (loc.scope === 'user' && src.loc.scope === 'user') target.report.trusted = true;
        if (target.report.status === 'missing' && loc.scope === 'user') {
          const existing = missingImportTargets.find((t) => t.file === file);
          if (existing) existing.importedBy.push(src.report.file);
          else missingImportTargets.push({ kind, file, importedBy: [src.report.file] });
        }
      }
    }
  }
  for (const src of loaded.values()) {
    if (src.imports && src.report.importedBy.length > 0 && !src.loc.native) {
      src.report.problems.push(`${src.report.file}: its own "imports" are not followed, because it was itself imported`);
    }
  }
  return { importers, missingImportTargets };
}

/** Full block: a gated source that exists but cannot be read or parsed; MCP Gate's own configuration broken. */
function unusableSourceBlocks(sources: readonly LoadedSource[], fullBlock: FullBlock[]): void {
  for (const s of sources) {
    if (s.report.status !== 'unreadable' && s.report.status !== 'invalid') continue;
    if (s.loc.kind === 'gate') {
      fullBlock.push({
        reason: `your MCP Gate configuration cannot be used, so no rule or server from it can be trusted; fix it: ${s.report.problems.join('; ')}`,
        files: [s.report.file],
      });
    } else if (s.loc.scope === 'repository') {
      fullBlock.push({
        reason: `repository source ${s.report.source} exists but cannot be used, and a present but unreadable source is not an empty one; fix or remove it: ${s.report.problems.join('; ')}`,
        files: [s.report.file],
      });
    } else if (gatedSource(s) && s.report.importedBy.length > 0) {
      fullBlock.push({
        reason: `${s.report.file} is imported by repository configuration (${s.report.importedBy.map((i) => i.file).join(', ')}) but cannot be used: ${s.report.problems.join('; ')}`,
        files: [s.report.file, ...s.report.importedBy.map((i) => i.file)],
      });
    }
  }
}

/**
 * Full block: tools exposed without a server prefix. Each tool reads its own files only — its user file, then
 * its repository file (MCP Gate's own configuration and settings are a kind of their own) — so settings are
 * merged per tool kind: another tool's file cannot switch the prefix back on for it. Where it is not known how
 * a tool merges (the files it imports; all layers as one, as before), those merges are judged too: any unsafe
 * merge with a repository or gated contributor blocks.
 */
function unprefixedToolBlocks(sources: readonly LoadedSource[], fullBlock: FullBlock[]): void {
  const layers = [...sources].filter(
    (s) => s.settings && (s.report.trusted || s.loc.scope === 'repository' || s.report.importedBy.length > 0),
  );
  layers.sort((a, b) => Number(a.loc.scope === 'repository') - Number(b.loc.scope === 'repository'));
  const merges: { what: string; layers: LoadedSource[] }[] = [];
  for (const kind of [...new Set(layers.map((s) => s.loc.kind))])
    merges.push({ what: `${kind === 'gate' ? 'MCP Gate' : kind}'s settings`, layers: layers.filter((s) => s.loc.kind === kind) });
  for (const src of sources) {
    if (!src.imports) continue;
    const imported = layers.filter((l) => l !== src && l.report.importedBy.some((i) => i.file === src.report.file));
    if (imported.length)
      merges.push({
        what: `${src.report.source} with the files it imports`,
        layers: [...layers.filter((s) => s.loc.kind === src.loc.kind), ...imported],
      });
  }
  merges.push({ what: 'all settings merged as one', layers });
  const blockedBy = new Set<string>();
  for (const m of merges) {
    let directTools: ExposureSettings['directTools'];
    let toolPrefix: ExposureSettings['toolPrefix'];
    const contributors: LoadedSource[] = [];
    for (const s of m.layers) {
      if (s.settings!.directTools !== undefined) directTools = s.settings!.directTools;
      if (s.settings!.toolPrefix !== undefined) toolPrefix = s.settings!.toolPrefix;
      if (s.settings!.directTools !== undefined || s.settings!.toolPrefix !== undefined) contributors.push(s);
    }
    const exposes = directTools === true || (Array.isArray(directTools) && directTools.length > 0);
    if (!exposes || toolPrefix !== 'none' || !contributors.some((s) => s.loc.scope === 'repository' || gatedSource(s))) continue;
    const files = contributors.map((s) => s.report.file);
    if (blockedBy.has(files.join('\n'))) continue;
    blockedBy.add(files.join('\n'));
    fullBlock.push({
      reason: `direct tools are exposed with toolPrefix "none" (${m.what}: ${contributors.map((s) => s.report.source).join(', ')}), so a tool's server cannot be recovered and approvals cannot be enforced; set toolPrefix to "server" or turn directTools off in those files`,
      files,
    });
  }
}

/** What only user scope may set, found in a repository file (the workspace's .vscode/settings.json). */
function ignoredGrantsIn(project: string, reader: TrackingReader): GateReport['ignoredGrants'] {
  const ignoredGrants: GateReport['ignoredGrants'] = [];
  const wsSettings = path.join(project, ...VSCODE_WORKSPACE_SETTINGS.split('/'));
  const ws = reader.read(wsSettings, MAX_CONFIG_BYTES);
  if (ws.kind === 'ok') {
    try {
      const doc = parseJsonc(wsSettings, decodeUtf8(wsSettings, ws.data)).value;
      if (doc && typeof doc === 'object') {
        for (const key of Object.keys(doc)) if (GRANTING_SETTINGS.includes(key)) ignoredGrants.push({ file: wsSettings, key });
      }
    } catch {
      // Not an MCP source: VS Code itself reports a broken settings file; nothing here can grant anyway.
    }
  }
  return ignoredGrants;
}

/** States: each declared server against the approval store. */
function serverStates(
  sources: readonly LoadedSource[],
  project: string,
  reader: TrackingReader,
  store: ApprovalStore,
  fullBlock: FullBlock[],
  escapeHatch: boolean,
  m: Machine,
  admin: AdminPolicy,
  guard: boolean,
): { snapshot: ReturnType<ApprovalStore['read']>; servers: ServerReport[] } {
  const snapshot = store.read(reader);
  const records = new Map(snapshot.records.map((r) => [serverKey(recordRef(r)), r]));
  const servers: ServerReport[] = [];
  for (const s of sources) {
    for (const d of s.servers) {
      const gated = gatedSource(s);
      const base: ServerReport = {
        name: d.name,
        source: s.report.source,
        file: s.report.file,
        position: d.position,
        scope: s.loc.scope,
        kind: s.loc.kind,
        gated,
        importedBy: s.report.importedBy.map((i) => i.file),
        state: 'pending',
        reason: '',
        viaEscapeHatch: false,
        disabled: isDisabled(d.raw),
        definition: d.definition,
        raw: d.raw,
      };
      servers.push(adminBlock(decideState(base, d, project, reader, records, fullBlock, escapeHatch, m.env.PATH, guard), admin));
    }
  }
  return { snapshot, servers };
}

/** Agent instruction files in the project (shown, never gated). */
function agentFilesIn(project: string, reader: TrackingReader): GateReport['agentFiles'] {
  const agentFiles: GateReport['agentFiles'] = [];
  for (const a of AGENT_FILES) {
    const p = path.join(project, ...a.relPath.split('/'));
    if (a.directory) for (const name of reader.list(p)) agentFiles.push({ path: `${a.relPath}/${name}`, what: a.what });
    else if (reader.stat(p)?.isFile()) agentFiles.push({ path: a.relPath, what: a.what });
  }
  return agentFiles;
}

/** Computes the gate report from scratch. `reader` records every path looked at (for the cache). */
export function evaluateGate(input: GateInput, reader: TrackingReader = new TrackingReader()): GateReport {
  const project = projectIdentity(input.projectDir);
  const m = input.machine;
  const admin = readAdminPolicy(reader);
  const escapeHatch = m.env[ESCAPE_HATCH_ENV] === '1' && admin.escapeHatch;
  const escapeHatchRefused =
    m.env[ESCAPE_HATCH_ENV] === '1' && !escapeHatch
      ? `${ESCAPE_HATCH_ENV}=1 is ignored: ${admin.status === 'ok' ? `the administrator's policy ${admin.file} turns the escape hatch off` : `the administrator's policy ${admin.file} cannot be used`}`
      : undefined;
  const store = new ApprovalStore(input.storeDir, input.masker);
  const fullBlock: FullBlock[] = [];
  if (admin.status === 'invalid') {
    fullBlock.push({
      reason: `the administrator's policy ${admin.file} cannot be used (${admin.problems.join('; ')}), so no repository server runs until an administrator fixes it`,
      files: [admin.file],
    });
  }

  if (storeInsideProject(project, input.storeDir)) {
    fullBlock.push({
      reason: `the approval store ${input.storeDir} is inside the project (its real path is under ${project}), where the repository could write its own approvals; ${(input.words ?? NEUTRAL_WORDS).storeOutside}`,
      files: [input.storeDir],
    });
  }

  const loaded = readNativeSources(input, project, reader);

  const { importers, missingImportTargets } = followImports(loaded, project, m, reader);
  const sources = [...loaded.values()];

  unusableSourceBlocks(sources, fullBlock);
  unprefixedToolBlocks(sources, fullBlock);
  const ignoredGrants = ignoredGrantsIn(project, reader);
  const { snapshot, servers } = serverStates(sources, project, reader, store, fullBlock, escapeHatch, m, admin, input.loadGuard === true);
  const agentFiles = agentFilesIn(project, reader);

  const gateSources = sources.filter((s) => s.loc.kind === 'gate');
  const gateSource = gateSources.find((s) => s.report.file !== input.userSettings?.label) ?? gateSources[0];
  return {
    project,
    store: { file: snapshot.file, health: snapshot.health },
    sources: sources.map((s) => s.report),
    servers,
    fullBlock,
    importers,
    missingImportTargets,
    escapeHatch,
    agentFiles,
    userPolicy: { file: gateSource?.report.file ?? '', ...(gateSource?.report.status === 'ok' ? gateSource.gate : {}) },
    userPolicyLayers: [
      ...(admin.status === 'ok'
        ? [
            {
              file: admin.file,
              layer: 'admin' as const,
              rules: admin.rules,
              sandbox: { required: admin.sandboxRequired },
              lineOf: admin.lineOf,
            },
          ]
        : []),
      ...gateSources.map((g) => ({ file: g.report.file, ...(g.report.status === 'ok' ? g.gate : {}) })),
    ],
    adminPolicy: admin,
    ...(escapeHatchRefused ? { escapeHatchRefused } : {}),
    requireLog: gateSources.some((g) => g.loc.scope === 'user' && g.report.status === 'ok' && g.gate?.requireLog === true),
    ...exportTarget(
      admin,
      gateSources.filter((g) => g.loc.scope === 'user' && g.report.status === 'ok').map((g) => ({ file: g.report.file, ...g.gate })),
    ),
    ignoredGrants,
  };
}

/**
 * What the administrator's layer does to a server's state. A server it keeps blocked: every server of that name
 * (any scope), or, with a digest, the definition with that digest — whoever approved it, whatever the escape hatch
 * says. An approval whose package lock came from a registry the layer does not list no longer holds: the server
 * waits for approval again, which resolves from an allowed registry (src/trust/approval/approvals.ts).
 */
function adminBlock(s: ServerReport, admin: AdminPolicy): ServerReport {
  const b = admin.blockedServers.find((x) => x.server === s.name && (x.digest === undefined || x.digest === s.pinned?.digest));
  if (b) {
    const what = b.digest ? `this definition of "${s.name}" (${b.digest})` : `every server named "${s.name}"`;
    return {
      ...s,
      state: 'blocked',
      viaEscapeHatch: false,
      reason: `blocked by the administrator's policy ${admin.file}, which blocks ${what}${b.why ? `: ${b.why}` : ''}`,
    };
  }
  const lock = s.state === 'approved' && !s.viaEscapeHatch ? s.record?.lock : undefined;
  if (lock && !registryListed(admin, lock.registry)) {
    return {
      ...s,
      state: 'approval-changed',
      reason: `its package lock was resolved from ${lock.registry}, and the administrator's policy ${admin.file} allows packages only from ${admin.packages.registries!.join(', ')}: approve it again to resolve ${lock.spec} from an allowed registry`,
    };
  }
  return s;
}

/** Without an event, the stat walk still runs this often: what no watch reports (a write through a hard link elsewhere) shows. */
export const FULL_CHECK_MS = 30_000;

interface CacheEntry {
  report: GateReport;
  seen: ReadonlyMap<string, Signature>;
  /** The recorded paths by the folder whose watch reports their change (a folder: also its own entries). */
  byDir: Map<string, [string, Signature][]>;
  /** The watcher's clock when the last full verification began (undefined: not verified with every watch live). */
  verifiedAt?: number;
  /** When the stat walk last ran over every path. */
  fullAt: number;
}

function groupByDir(seen: ReadonlyMap<string, Signature>): Map<string, [string, Signature][]> {
  const byDir = new Map<string, [string, Signature][]>();
  const add = (d: string, p: string, sig: Signature) => {
    let g = byDir.get(d);
    if (!g) byDir.set(d, (g = []));
    g.push([p, sig]);
  };
  for (const [p, sig] of seen) {
    add(path.dirname(p), p, sig);
    if (sig.startsWith('dir:')) add(p, p, sig);
  }
  return byDir;
}

/**
 * Caches one report per (project, store, environment) and recomputes only when a recorded signature changed.
 * With a FolderWatcher (./sources/fswatch.ts), a re-check stats only the paths of folders that saw an event (and
 * of folders it cannot watch), and the whole stat walk runs at least every FULL_CHECK_MS; `exact` (before a
 * start) always runs the stat walk. Without one, every re-check is the stat walk.
 */
export class GateCache {
  private entries = new Map<string, CacheEntry>();

  constructor(
    private readonly watcher?: FolderWatcher,
    private readonly clock: () => number = Date.now,
  ) {}

  get(input: GateInput, opts: { exact?: boolean } = {}): GateReport {
    const env = input.machine.env;
    const key = JSON.stringify([
      projectIdentity(input.projectDir),
      input.storeDir,
      input.userSettings ? JSON.stringify(input.userSettings.value) : '',
      input.machine.home,
      env[ESCAPE_HATCH_ENV],
      ...CATALOGUE_ENV.map((v) => env[v]),
      env.PATH,
    ]);
    const hit = this.entries.get(key);
    if (hit && this.stillTrue(hit, opts.exact === true)) return hit.report;
    const reader = new TrackingReader();
    const report = evaluateGate(input, reader);
    const entry: CacheEntry = { report, seen: reader.seen, byDir: groupByDir(reader.seen), fullAt: this.clock() };
    // Watched after the reads: verified with live watches on the next re-check, by one stat walk.
    this.watcher?.watch(entry.byDir.keys());
    this.entries.set(key, entry);
    return report;
  }

  private stillTrue(e: CacheEntry, exact: boolean): boolean {
    const w = this.watcher;
    const now = this.clock();
    if (w && !exact && e.verifiedAt !== undefined && now - e.fullAt < FULL_CHECK_MS) {
      const started = w.now();
      for (const [dir, paths] of e.byDir) {
        if (w.quietSince([dir], e.verifiedAt)) continue;
        if (!unchanged(new Map(paths))) return false;
      }
      // Quiet folders saw nothing since the last verification, the others were stat-checked after `started`.
      e.verifiedAt = started;
      return true;
    }
    w?.watch(e.byDir.keys());
    const started = w?.now();
    if (!unchanged(e.seen)) return false;
    e.fullAt = now;
    // Watches began before the walk: a change after a path's stat is an event from now on (a folder watched
    // later counts as changed since; one that cannot be watched is stat-checked every time).
    e.verifiedAt = started;
    return true;
  }

  /** Forgets every report (the watcher, if any, is the caller's to close). */
  clear(): void {
    this.entries.clear();
  }
}
