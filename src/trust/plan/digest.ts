// What an approval consents to, pinned by a SHA-256 digest: the repository-owned fragment of a server's
// definition in canonical form (sorted keys, every field of the entry as written), the VS Code inputs it uses,
// its envFile's content, and — for a local server — its launch plan's execution closure: every workspace file the
// plan can execute or load (src/trust/plan/closure.ts), its package roots and links. Changing any of these changes
// the digest. The program's absolute path outside the workspace is machine-owned and not part of it.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { DeclaredServer, ServerDefinition } from '../sources/declarations';
import type { TrackingReader } from '../sources/fsread';
import { CATALOGUE } from '../sources/catalogue';
import { ClosureError, MAX_CLOSURE_FILE_BYTES, utf8Text, type PinnedFile } from './closure-files';
import { PlanError } from './command-line';
import { planLaunch, substitute, type LaunchPlan } from './launch-plan';
export type { PinnedFile } from './closure-files';

/** A referenced file (envFile, a file a variable names) is pinned only whole: the closure's bound. */
export const MAX_PINNED_FILE_BYTES = MAX_CLOSURE_FILE_BYTES;

export interface PinnedDefinition {
  definition: ServerDefinition;
  /** Fields of the entry other than the normalised ones (tool-specific switches such as `trust`, `alwaysAllow`). */
  extra: Record<string, unknown>;
  inputs: Record<string, unknown>[];
  envFile?: { path: string; sha256?: string; missing?: true };
  /** The execution closure: workspace-relative path (POSIX) → content digest of every file the launch can load. */
  files: Record<string, PinnedFile>;
  /** Package folders whose trees are pinned (absent in approvals made before closures). */
  roots?: string[];
  /** Symlinks and special files in the closure: path → link text. */
  links?: Record<string, string>;
  /** The working folder relative to the workspace, as the kernel resolves it. */
  cwd?: string;
  /**
   * Present when its Node or Python processes run under the load guard (guarded-closure.ts guardedClosureOf): the loads
   * left to the guard, each checked against the workspace as approved when it loads (may be empty).
   */
  guarded?: string[];
  /**
   * Present when it runs on the approved snapshot of the workspace (closure.ts snapshotClosureOf): why it would
   * otherwise pin the whole workspace. `files` then holds only the files the plan names.
   */
  snapshot?: string[];
}

export interface Pinned {
  pinned: PinnedDefinition;
  digest: string;
  /** Text of small closure files (and the envFile), for diffs. Not part of the digest. */
  texts: Record<string, string>;
  /** What will be executed (local servers). The spawner runs this plan; not part of the digest beyond the pinned fields. */
  plan?: LaunchPlan;
}

const NORMALISED_FIELDS = new Set([
  'type',
  'transport',
  'command',
  'args',
  'cwd',
  'env',
  'envFile',
  'url',
  'httpUrl',
  'headers',
  'http_headers',
]);

/** JSON with object keys sorted at every level: the one canonical form every digest is computed over. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.keys(v as object)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export class PinError extends Error {}

/** Canonical JSON of closure file tables, by identity: servers that share a closure share its table. */
const filesJson = new WeakMap<object, string>();

/** The digest of a pinned definition: the canonical JSON of every field, the closure's file table included. */
export function digestOf(pinned: PinnedDefinition): string {
  let files = filesJson.get(pinned.files);
  if (files === undefined) filesJson.set(pinned.files, (files = canonicalJson(pinned.files)));
  return `sha256:${sha256(`${canonicalJson({ ...pinned, files: undefined })}\nfiles:${files}`)}`;
}

function inside(projectDir: string, p: string): boolean {
  const rel = path.relative(projectDir, p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Repository-relative paths of every MCP configuration file: pinned field by field, so left out of closures. */
export const CONFIG_FILES: ReadonlySet<string> = new Set(
  CATALOGUE.filter((l) => l.scope === 'repository' && l.relPath).map((l) => l.relPath!),
);

/**
 * Computes the pinned fragment and its digest. `searchPath` is MCP Gate's own PATH (where a bare command is
 * found). `guard`: its Node or Python processes will run under the load guard, so its closure is the guarded one
 * where it can be (./launch-plan.ts). Throws PinError when something cannot be pinned or is refused (the server is
 * then blocked).
 */
export function pin(
  server: DeclaredServer,
  projectDir: string,
  reader: TrackingReader,
  searchPath: string | undefined,
  guard = false,
): Pinned {
  const def = server.definition!;
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(server.raw)) if (!NORMALISED_FIELDS.has(k)) extra[k] = v;
  const texts: Record<string, string> = {};
  const pinned: PinnedDefinition = { definition: def, extra, inputs: server.inputs, files: {} };

  if (def.envFile) {
    const p = path.resolve(projectDir, substitute(def.envFile, projectDir));
    const rel = inside(projectDir, p) ? path.relative(projectDir, p).split(path.sep).join('/') : p;
    const r = reader.read(p, MAX_PINNED_FILE_BYTES);
    if (r.kind === 'missing') pinned.envFile = { path: rel, missing: true };
    else if (r.kind === 'error') throw new PinError(`envFile ${p} cannot be read: ${r.error.message}`);
    else {
      pinned.envFile = { path: rel, sha256: sha256(r.data) };
      const t = utf8Text(r.data);
      if (t !== undefined) texts[`envFile:${rel}`] = t;
    }
  }

  let plan: LaunchPlan | undefined;
  if (def.type === 'stdio') {
    try {
      const planned = planLaunch(def, projectDir, { searchPath, configFiles: CONFIG_FILES, gated: true, guard }, reader);
      plan = planned.plan;
      Object.assign(texts, planned.texts);
    } catch (e) {
      if (e instanceof PlanError || e instanceof ClosureError) throw new PinError(e.message);
      throw e;
    }
    pinned.files = plan.closure.files;
    pinned.roots = plan.closure.roots.map((r) => r.path);
    pinned.links = plan.closure.links;
    pinned.cwd = plan.cwdInWorkspace ?? '(outside the workspace)';
    if (plan.closure.guarded) pinned.guarded = plan.closure.guarded;
    if (plan.closure.snapshot) pinned.snapshot = plan.closure.snapshot;
  }
  return { pinned, digest: digestOf(pinned), texts, plan };
}
