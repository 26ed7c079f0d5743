// The npm lock of an approval: at approval, an npm launch's spec (src/trust/plan/launchers.ts) is resolved with the npm
// team's own libraries (pacote for the manifest, @npmcli/arborist for the dependency tree) to an exact version, its
// registry integrity and the whole resolved tree (a package-lock), installed once into MCP Gate's own
// content-addressed package cache ($XDG_CACHE_HOME/mcp-gate/packages/trees/<lock digest>, outside every
// repository, install scripts never run) and hashed file by file. The lock, with its own digest, is part of the
// approval record. At start the host runs that tree (ensureInstalled): it is hashed again and must match; a tree
// that is missing or does not match is installed again from the lock (every tarball checked against its
// integrity); a package that cannot be fetched or fails its check does not start. This file holds the lock and
// what reads it; the operations that use the registry and the npm libraries are in src/trust/packages/npm-resolve.ts, given
// to the core as `NpmOps` by each front end.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson, sha256 } from '../plan/digest';
import type { NpmLaunch } from '../plan/launchers';

export interface NpmLock {
  /** The spec as the repository wrote it, and the launcher. */
  spec: string;
  launcher: string;
  registry: string;
  name: string;
  version: string;
  /** The registry's integrity of the package tarball (sha512-…). */
  integrity: string;
  resolved: string;
  /** When the registry says this version was published. */
  publishedAt?: string;
  /** The command it runs: its name and its file inside the installed tree. */
  bin: { name: string; file: string };
  /** The resolved tree: package-lock v3 `packages` (every dependency with version, resolved URL and integrity). */
  packages: Record<string, Record<string, unknown>>;
  /** Packages of the tree that declare install scripts (never run by MCP Gate). */
  installScripts: string[];
  /** sha256 over the installed tree's paths, contents, executable bits and links. */
  tree: string;
  /** sha256 of everything above in canonical form: what the approval consents to. */
  digest: string;
}

export class LockError extends Error {}

/** MCP Gate's package cache: outside every repository, one per user. */
export function packageCacheRoot(home: string, env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, '.cache');
  return path.join(base, 'mcp-gate', 'packages');
}

/**
 * The registry MCP Gate resolves from: its own environment's npm_config_registry, else `registry=` in the user's
 * ~/.npmrc, else the public registry. Never a repository's .npmrc.
 */
export function registryOf(home: string, env: Readonly<Record<string, string | undefined>>): string {
  let r = env.npm_config_registry || env.NPM_CONFIG_REGISTRY;
  if (!r) {
    try {
      const m = /^\s*registry\s*=\s*(\S+)\s*$/m.exec(fs.readFileSync(path.join(home, '.npmrc'), 'utf8'));
      if (m) r = m[1];
    } catch {
      // no ~/.npmrc
    }
  }
  r = r || 'https://registry.npmjs.org/';
  return r.endsWith('/') ? r : `${r}/`;
}

export function lockDigest(lock: Omit<NpmLock, 'digest'> | NpmLock): string {
  return `sha256:${sha256(canonicalJson({ ...lock, digest: undefined }))}`;
}

/** Whether a lock read from the store is whole: its digest matches its content. */
export function lockIntact(lock: NpmLock): boolean {
  return typeof lock?.digest === 'string' && lockDigest(lock) === lock.digest;
}

/** Number of packages in the tree besides the package itself. */
export function dependencyCount(lock: NpmLock): number {
  return Object.keys(lock.packages).filter((k) => k !== '' && k !== `node_modules/${lock.name}`).length;
}

export interface ResolveOptions {
  registry: string;
  cacheRoot: string;
  /** Versions published less than this many days ago are not chosen (npm's `before`). */
  minReleaseAgeDays?: number;
  /** Stops the registry requests (a front end's cancel or time limit); the resolution then throws LockError. */
  signal?: AbortSignal;
  /**
   * The folder its temporary folders go in (default: `<cacheRoot>/tmp`). The package worker gives each job its own
   * and removes it when the job ends, however it ends.
   */
  scratch?: string;
}

/**
 * The two operations that use the registry and the npm libraries (src/trust/packages/npm-resolve.ts). The CLI and VS Code
 * run them in a worker thread (src/host/workers/package-worker.ts), outside the extension host's patched network stack,
 * where a cancel or a time limit ends them for good.
 */
export interface NpmOps {
  resolve(launch: NpmLaunch, o: ResolveOptions): Promise<NpmLock>;
  install(lock: NpmLock, cacheRoot: string, signal?: AbortSignal): Promise<{ dir: string; binFile: string }>;
}

export const COMPLETE = '.mcp-gate-complete';

export function treeDir(cacheRoot: string, lock: NpmLock): string {
  return path.join(cacheRoot, 'trees', lock.digest.slice('sha256:'.length, 'sha256:'.length + 32));
}

/** sha256 over every path of the installed node_modules (sorted), file contents, executable bits and link texts. */
export function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (rel: string) => {
    const abs = path.join(dir, rel);
    for (const name of fs.readdirSync(abs).sort()) {
      const r = `${rel}/${name}`;
      if (r === 'node_modules/.package-lock.json') continue; // arborist's own record of the install
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isSymbolicLink()) h.update(`L ${r}\0${fs.readlinkSync(path.join(dir, r))}\0`);
      else if (st.isDirectory()) {
        h.update(`D ${r}\0`);
        walk(r);
      } else if (st.isFile()) h.update(`F ${r}\0${st.mode & 0o111 ? 'x' : '-'}\0${sha256(fs.readFileSync(path.join(dir, r)))}\0`);
      else h.update(`O ${r}\0`);
    }
  };
  if (fs.existsSync(path.join(dir, 'node_modules'))) walk('node_modules');
  return `sha256:${h.digest('hex')}`;
}

/**
 * The installed tree of an approved lock when it is in the cache and its files hash to the approved tree (no npm
 * library needed: a start that finds it does not load them); undefined when it must be installed again. Throws
 * LockError for a lock whose digest does not match its content.
 */
export function installedTree(lock: NpmLock, cacheRoot: string): { dir: string; binFile: string } | undefined {
  if (!lockIntact(lock)) throw new LockError(`the lock of ${lock?.name ?? 'its package'} in the approval store does not match its digest`);
  const dir = treeDir(cacheRoot, lock);
  if (!(fs.existsSync(path.join(dir, COMPLETE)) && treeHash(dir) === lock.tree)) return undefined;
  return { dir, binFile: path.join(dir, ...lock.bin.file.split('/')) };
}

/** How long ago, in words ("3 days ago"). */
export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return 'publication date unknown';
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return 'publication date unknown';
  const days = Math.floor(ms / 86_400_000);
  if (days >= 1) return `published ${days} day${days === 1 ? '' : 's'} ago`;
  const hours = Math.floor(ms / 3_600_000);
  if (hours >= 1) return `published ${hours} hour${hours === 1 ? '' : 's'} ago`;
  return 'published less than an hour ago';
}

/** One line for the preview: "name version, sha512-…, N dependencies, published 3 days ago". */
export function lockSummary(lock: NpmLock, now = Date.now()): string {
  const n = dependencyCount(lock);
  return `${lock.name} ${lock.version}, ${lock.integrity.slice(0, 22)}…, ${n} dependenc${n === 1 ? 'y' : 'ies'}, ${ago(lock.publishedAt, now)}`;
}
