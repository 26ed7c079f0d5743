// The npm lock of an approval: at approval, an npm launch's spec (src/trust/packages.ts) is resolved with the npm
// team's own libraries (pacote for the manifest, @npmcli/arborist for the dependency tree) to an exact version, its
// registry integrity and the whole resolved tree (a package-lock), installed once into MCP Gate's own
// content-addressed package cache ($XDG_CACHE_HOME/mcp-gate/packages/trees/<lock digest>, outside every
// repository, install scripts never run) and hashed file by file. The lock, with its own digest, is part of the
// approval record. At start the host runs that tree (ensureInstalled): it is hashed again and must match; a tree
// that is missing or does not match is installed again from the lock (every tarball checked against its
// integrity); a package that cannot be fetched or fails its check does not start.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type ArboristType from '@npmcli/arborist';
import type * as PacoteType from 'pacote';
import { canonicalJson, sha256 } from './digest';
import type { NpmLaunch } from './packages';

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

// Loaded when first used: the gate reads locks on every evaluation and needs neither library for that.
const pacoteLib = (): typeof PacoteType => require('pacote');
const arboristLib = (): typeof ArboristType => require('@npmcli/arborist');

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
}

type Options = ResolveOptions;

/**
 * The two operations that use the registry and the npm libraries. The CLI runs them here (`inProcess`); VS Code runs
 * them in a worker thread (src/host/lock-worker.ts), outside the extension host's patched network stack, where a
 * cancel or a time limit ends them for good.
 */
export interface NpmOps {
  resolve(launch: NpmLaunch, o: ResolveOptions): Promise<NpmLock>;
  install(lock: NpmLock, cacheRoot: string, signal?: AbortSignal): Promise<{ dir: string; binFile: string }>;
}

export const inProcess: NpmOps = {
  resolve: (launch, o) => resolveNpm(launch, o),
  install: (lock, cacheRoot) => ensureInstalled(lock, cacheRoot),
};

const libOpts = (o: Options, extra: Record<string, unknown> = {}) => ({
  registry: o.registry, cache: path.join(o.cacheRoot, '_cacache'), ignoreScripts: true, audit: false, fund: false, ...(o.signal ? { signal: o.signal } : {}), ...extra,
});

/** Throws when the front end stopped the resolution: its reason (a LockError naming why), else a plain LockError. */
function checkStopped(o: Options, spec: string): void {
  if (!o.signal?.aborted) return;
  const r = o.signal.reason;
  throw r instanceof LockError ? r : new LockError(`resolving ${spec} at ${o.registry} was stopped`);
}

function before(o: Options): { before?: Date } {
  return o.minReleaseAgeDays ? { before: new Date(Date.now() - o.minReleaseAgeDays * 86_400_000) } : {};
}

function npmError(e: unknown): string {
  const x = e as { code?: string; message?: string };
  return `${x.code ? `${x.code}: ` : ''}${(x.message ?? String(e)).split('\n')[0]}`;
}

/** Resolves an npm launch to its lock (and installs it into the cache). Network: the registry. Throws LockError. */
export async function resolveNpm(launch: NpmLaunch, o: Options): Promise<NpmLock> {
  // The registry itself answers, never a cached copy: npm's cache serves a stale copy when the registry cannot be
  // reached, and an approval would then pin, or an update call "up to date", what the registry never said today.
  // The metadata (the package's and its dependencies') goes to a cache of this resolution only.
  const meta = tempDir(o.cacheRoot);
  const fresh = { cache: path.join(meta, '_cacache') };
  try {
    return await resolveWith(launch, o, fresh);
  } finally {
    fs.rmSync(meta, { recursive: true, force: true });
  }
}

async function resolveWith(launch: NpmLaunch, o: Options, fresh: { cache: string }): Promise<NpmLock> {
  let manifest: Record<string, any>;
  try {
    manifest = await pacoteLib().manifest(launch.spec, libOpts(o, { fullMetadata: true, preferOnline: true, ...fresh, ...before(o) }));
  } catch (e) {
    checkStopped(o, launch.spec);
    const age = o.minReleaseAgeDays ? ` published at least ${o.minReleaseAgeDays} day(s) ago (your minimum release age)` : '';
    throw new LockError(`the package ${launch.spec}${age} cannot be resolved at ${o.registry}: ${npmError(e)}`);
  }
  const name = String(manifest.name);
  const version = String(manifest.version);
  const work = tempDir(o.cacheRoot);
  let packages: Record<string, Record<string, unknown>>;
  try {
    fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'mcp-gate-lock', version: '0.0.0', private: true, dependencies: { [name]: version } }));
    const tree = await new (arboristLib())({ path: work, ...libOpts(o, { preferOnline: true, ...fresh, ...before(o) }) }).buildIdealTree();
    packages = tree.meta.commit().packages as Record<string, Record<string, unknown>>;
  } catch (e) {
    checkStopped(o, launch.spec);
    throw new LockError(`the dependencies of ${name}@${version} cannot be resolved at ${o.registry}: ${npmError(e)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const root = packages[`node_modules/${name}`];
  if (!root || typeof root.integrity !== 'string') throw new LockError(`the registry gave no integrity for ${name}@${version}; it cannot be pinned`);
  for (const [k, p] of Object.entries(packages)) {
    if (k !== '' && !p.link && typeof p.integrity !== 'string') throw new LockError(`the registry gave no integrity for ${k.replace(/^.*node_modules\//, '')}; ${name} cannot be pinned`);
  }
  const bins = (root.bin ?? {}) as Record<string, string>;
  const binName = launch.command ?? chooseBin(name, bins);
  const binFile = launch.command !== undefined
    ? binOfTree(packages, launch.command)
    : `node_modules/${name}/${path.posix.normalize(bins[binName])}`;
  if (!binFile) throw new LockError(`${launch.command} is not a command of ${name}@${version} or its dependencies`);
  const partial: Omit<NpmLock, 'digest' | 'tree'> = {
    spec: launch.spec, launcher: launch.launcher, registry: o.registry, name, version, integrity: root.integrity as string,
    resolved: String(root.resolved ?? manifest._resolved), publishedAt: typeof manifest._time === 'string' ? manifest._time : undefined,
    bin: { name: binName, file: binFile }, packages,
    installScripts: Object.entries(packages).filter(([, p]) => p.hasInstallScript).map(([k]) => k.replace(/^.*node_modules\//, '')),
  };
  // Installed now, so what is approved includes the hash of the very files that will run.
  checkStopped(o, launch.spec);
  const dir = tempDir(o.cacheRoot);
  try {
    try {
      await install(packages, dir, o, `${name}@${version}`);
    } catch (e) {
      checkStopped(o, launch.spec);
      throw e;
    }
    const lock = { ...partial, tree: treeHash(dir) } as NpmLock;
    lock.digest = lockDigest(lock);
    const target = treeDir(o.cacheRoot, lock);
    if (!fs.existsSync(path.join(target, COMPLETE))) {
      fs.writeFileSync(path.join(dir, COMPLETE), lock.digest);
      fs.rmSync(target, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      try {
        fs.renameSync(dir, target);
      } catch (e) {
        // Another approval installed the same lock meanwhile: theirs is used if it verifies.
        if (!(fs.existsSync(path.join(target, COMPLETE)) && treeHash(target) === lock.tree)) throw new LockError(`${name}@${version} cannot be put into the package cache ${target}: ${(e as Error).message}`);
      }
    }
    return lock;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** npx's choice: the only bin, else the bin named like the package (without its scope). */
function chooseBin(name: string, bins: Record<string, string>): string {
  const names = Object.keys(bins);
  if (names.length === 1) return names[0];
  const own = name.replace(/^@[^/]+\//, '');
  if (bins[own]) return own;
  throw new LockError(names.length === 0 ? `${name} has no command to run (no "bin" in its package.json)` : `${name} has several commands (${names.join(', ')}) and none is named ${own}; name one with --package=${name} <command>`);
}

function binOfTree(packages: Record<string, Record<string, unknown>>, command: string): string | undefined {
  for (const [k, p] of Object.entries(packages)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(k)) continue; // top level only: what npx puts on PATH
    const bins = (p.bin ?? {}) as Record<string, string>;
    if (bins[command]) return `${k}/${path.posix.normalize(bins[command])}`;
  }
  return undefined;
}

const COMPLETE = '.mcp-gate-complete';

function treeDir(cacheRoot: string, lock: NpmLock): string {
  return path.join(cacheRoot, 'trees', lock.digest.slice('sha256:'.length, 'sha256:'.length + 32));
}

function tempDir(cacheRoot: string): string {
  const d = path.join(cacheRoot, 'tmp', `${process.pid}-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
}

/** Installs exactly `packages` into `dir` (Arborist reify from the lock, scripts off, tarballs checked). */
async function install(packages: Record<string, Record<string, unknown>>, dir: string, o: Options, what: string): Promise<void> {
  const rootPkg = packages[''] ?? {};
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'mcp-gate-lock', version: '0.0.0', private: true, dependencies: rootPkg.dependencies ?? {} }));
  fs.writeFileSync(path.join(dir, 'package-lock.json'), JSON.stringify({ name: 'mcp-gate-lock', version: '0.0.0', lockfileVersion: 3, requires: true, packages }));
  try {
    await new (arboristLib())({ path: dir, ...libOpts(o, { preferOffline: true }) }).reify({ save: false });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why = code === 'EINTEGRITY' ? 'a tarball does not match the integrity recorded in the approval' : code === 'ENOTCACHED' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'it is not in the cache and the registry cannot be reached' : 'it cannot be installed';
    throw new LockError(`${what}: ${why} (${npmError(e)})`);
  }
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
 * The installed tree of an approved lock, verified: returns its folder and the absolute path of its command.
 * Installs it again from the lock when it is missing or its files no longer hash to the approved tree. Throws
 * LockError when it cannot be fetched or does not verify.
 */
export async function ensureInstalled(lock: NpmLock, cacheRoot: string): Promise<{ dir: string; binFile: string }> {
  if (!lockIntact(lock)) throw new LockError(`the lock of ${lock?.name ?? 'its package'} in the approval store does not match its digest`);
  const dir = treeDir(cacheRoot, lock);
  const result = () => ({ dir, binFile: path.join(dir, ...lock.bin.file.split('/')) });
  if (fs.existsSync(path.join(dir, COMPLETE)) && treeHash(dir) === lock.tree) return result();
  const work = tempDir(cacheRoot);
  try {
    await install(lock.packages, work, { registry: lock.registry, cacheRoot }, `${lock.name}@${lock.version}`);
    const got = treeHash(work);
    if (got !== lock.tree) throw new LockError(`${lock.name}@${lock.version}: the installed files do not match the approved tree (${got}, approved ${lock.tree})`);
    fs.writeFileSync(path.join(work, COMPLETE), lock.digest);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
    try {
      fs.renameSync(work, dir);
    } catch (e) {
      // Another start installed it meanwhile: use theirs if it verifies.
      if (!(fs.existsSync(path.join(dir, COMPLETE)) && treeHash(dir) === lock.tree)) throw e;
    }
    return result();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
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
