// What an approval consents to, pinned by a SHA-256 digest: the repository-owned fragment of a server's
// definition in canonical form (sorted keys, every field of the entry as written), the VS Code inputs it uses,
// its envFile's content, and the content of every file inside the workspace that its command or arguments
// name (`node server.js`, `./run.sh`, `--config=tools.yaml`). Changing any of these changes the digest.
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { DeclaredServer, ServerDefinition } from './declarations';
import type { TrackingReader } from './fsread';

/** Referenced files larger than this cannot be pinned; the server is blocked rather than pinned partially. */
export const MAX_PINNED_FILE_BYTES = 8 * 1024 * 1024;
/** At most this many referenced files per server. */
export const MAX_PINNED_FILES = 32;
/** Referenced text files up to this size are kept with the approval so a change can be shown line by line. */
export const MAX_KEPT_TEXT_BYTES = 64 * 1024;
/** At most this much kept text per server, so the store stays small enough to read at every check. */
export const MAX_KEPT_TEXT_TOTAL = 256 * 1024;

export interface PinnedFile {
  sha256: string;
  size: number;
}

export interface PinnedDefinition {
  definition: ServerDefinition;
  /** Fields of the entry other than the normalised ones (tool-specific switches such as `trust`, `alwaysAllow`). */
  extra: Record<string, unknown>;
  inputs: Record<string, unknown>[];
  envFile?: { path: string; sha256?: string; missing?: true };
  /** Workspace-relative path (POSIX) → content digest. */
  files: Record<string, PinnedFile>;
}

export interface Pinned {
  pinned: PinnedDefinition;
  digest: string;
  /** Text of small referenced files (and the envFile), for diffs. Not part of the digest. */
  texts: Record<string, string>;
}

const NORMALISED_FIELDS = new Set(['type', 'transport', 'command', 'args', 'cwd', 'env', 'envFile', 'url', 'httpUrl', 'headers', 'http_headers']);

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

function substitute(s: string, projectDir: string): string {
  return s
    .replace(/\$\{workspaceFolder\}/g, projectDir)
    .replace(/\$\{workspaceFolderBasename\}/g, path.basename(projectDir))
    .replace(/\$\{workspaceRoot\}/g, projectDir);
}

function inside(projectDir: string, p: string): boolean {
  const rel = path.relative(projectDir, p);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** Paths the command line could run or load: the command when it is a path, and every non-flag argument. */
export function candidatePaths(def: ServerDefinition): string[] {
  const out: string[] = [];
  if (def.command && (def.command.includes('/') || def.command.includes('\\') || def.command.startsWith('.'))) out.push(def.command);
  for (const a of def.args) {
    if (a.includes('://')) continue;
    if (a.startsWith('-')) {
      const eq = a.indexOf('=');
      if (eq > 0 && eq < a.length - 1) out.push(a.slice(eq + 1));
      continue;
    }
    if (a.length > 0 && a.length < 4096) out.push(a);
  }
  return out;
}

function utf8Text(data: Buffer): string | undefined {
  if (data.length > MAX_KEPT_TEXT_BYTES) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
}

/** Computes the pinned fragment and its digest. Throws PinError when something cannot be pinned (the server is then blocked). */
export function pin(server: DeclaredServer, projectDir: string, reader: TrackingReader): Pinned {
  const def = server.definition!;
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(server.raw)) if (!NORMALISED_FIELDS.has(k)) extra[k] = v;
  const texts: Record<string, string> = {};
  const pinned: PinnedDefinition = { definition: def, extra, inputs: server.inputs, files: {} };

  const cwd = def.cwd ? path.resolve(projectDir, substitute(def.cwd, projectDir)) : projectDir;

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

  for (const cand of candidatePaths(def)) {
    const abs = path.resolve(cwd, substitute(cand, projectDir));
    if (!inside(projectDir, abs)) continue;
    const rel = path.relative(projectDir, abs).split(path.sep).join('/');
    if (pinned.files[rel]) continue;
    const st = reader.stat(abs);
    if (!st || !st.isFile()) continue; // directories and missing paths are not content; the path itself is pinned in args
    if (Object.keys(pinned.files).length >= MAX_PINNED_FILES) throw new PinError(`the command names more than ${MAX_PINNED_FILES} workspace files; cannot pin them all`);
    const r = reader.read(abs, MAX_PINNED_FILE_BYTES);
    if (r.kind !== 'ok') {
      throw new PinError(`${rel} is run or loaded by the command but cannot be pinned: ${r.kind === 'error' ? r.error.message : 'it disappeared'}`);
    }
    pinned.files[rel] = { sha256: sha256(r.data), size: r.data.length };
    const t = utf8Text(r.data);
    if (t !== undefined) texts[rel] = t;
  }
  let total = 0;
  for (const k of Object.keys(texts)) {
    total += texts[k].length;
    if (total > MAX_KEPT_TEXT_TOTAL) delete texts[k];
  }
  return { pinned, digest: `sha256:${sha256(canonicalJson(pinned))}`, texts };
}
