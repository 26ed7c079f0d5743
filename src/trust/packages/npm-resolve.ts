// The npm operations behind an approval's lock (the lock itself and what reads it: src/trust/packages/npm-lock.ts): resolving
// a spec with the npm team's own libraries (pacote for the manifest, @npmcli/arborist for the dependency tree) and
// installing a lock's tree into MCP Gate's package cache, hashed file by file. They use the registry. The CLI and
// VS Code run them in the package worker (src/host/workers/lock-worker.ts, started by src/host/workers/package-worker.ts), so
// neither library is in their bundles (a test reads the bundles' source maps); `inProcess` runs them in the
// calling process, for the tests and benchmarks that call the core directly.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type ArboristType from '@npmcli/arborist';
import type * as PacoteType from 'pacote';
import {
  COMPLETE,
  installedTree,
  LockError,
  lockDigest,
  treeDir,
  treeHash,
  type NpmLock,
  type NpmOps,
  type ResolveOptions,
} from './npm-lock';
import npa from 'npm-package-arg';
import type { NpmLaunch } from '../plan/launchers';

// Loaded when first used.
const pacoteLib = (): typeof PacoteType => require('pacote') as typeof PacoteType;
const arboristLib = (): typeof ArboristType => require('@npmcli/arborist') as typeof ArboristType;

type Options = ResolveOptions;

/** The operations in this process (tests and benchmarks that call the core directly). */
export const inProcess: NpmOps = {
  resolve: (launch, o) => resolveNpm(launch, o),
  install: (lock, cacheRoot) => ensureInstalled(lock, cacheRoot),
};

const libOpts = (o: Options, extra: Record<string, unknown> = {}) => ({
  registry: o.registry,
  cache: path.join(o.cacheRoot, '_cacache'),
  ignoreScripts: true,
  audit: false,
  fund: false,
  ...(o.signal ? { signal: o.signal } : {}),
  ...extra,
});

/** Throws when the front end stopped the resolution: its reason (a LockError naming why), else a plain LockError. */
function checkStopped(o: Options, spec: string): void {
  if (!o.signal?.aborted) return;
  const r: unknown = o.signal.reason;
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
  const meta = tempDir(o);
  const fresh = { cache: path.join(meta, '_cacache') };
  try {
    return await resolveWith(launch, o, fresh);
  } finally {
    fs.rmSync(meta, { recursive: true, force: true });
  }
}

async function resolveWith(launch: NpmLaunch, o: Options, fresh: { cache: string }): Promise<NpmLock> {
  let manifest: Record<string, unknown>;
  try {
    manifest = await pacoteLib().manifest(launch.spec, libOpts(o, { fullMetadata: true, preferOnline: true, ...fresh, ...before(o) }));
  } catch (e) {
    checkStopped(o, launch.spec);
    const age = o.minReleaseAgeDays
      ? ` published at least ${o.minReleaseAgeDays} ${o.minReleaseAgeDays === 1 ? 'day' : 'days'} ago (the minimum release age)`
      : '';
    throw new LockError(`the package ${launch.spec}${age} cannot be resolved at ${o.registry}: ${npmError(e)}`);
  }
  const name = String(manifest.name);
  const version = String(manifest.version);
  // The registry's manifest must be of the package the repository names: a registry may answer for one name with
  // another package's manifest, and the approval would then name one package and run another.
  const asked = npa(launch.spec).name;
  if (name !== asked)
    throw new LockError(
      `the registry answered for ${asked} with the manifest of another package (${name}@${version}); it cannot be pinned`,
    );
  const work = tempDir(o);
  let packages: Record<string, Record<string, unknown>>;
  try {
    fs.writeFileSync(
      path.join(work, 'package.json'),
      JSON.stringify({ name: 'mcp-gate-lock', version: '0.0.0', private: true, dependencies: { [name]: version } }),
    );
    const tree = await new (arboristLib())({ path: work, ...libOpts(o, { preferOnline: true, ...fresh, ...before(o) }) }).buildIdealTree();
    packages = tree.meta.commit().packages as Record<string, Record<string, unknown>>;
  } catch (e) {
    checkStopped(o, launch.spec);
    throw new LockError(`the dependencies of ${name}@${version} cannot be resolved at ${o.registry}: ${npmError(e)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const root = packages[`node_modules/${name}`];
  if (!root || typeof root.integrity !== 'string')
    throw new LockError(`the registry gave no integrity for ${name}@${version}; it cannot be pinned`);
  for (const [k, p] of Object.entries(packages)) {
    if (k === '' || p.link) continue;
    // A dependency that is a folder on this machine (`file:`), not a registry package: nothing to pin it by.
    if (!/(^|\/)node_modules\//.test(k) || String(p.resolved ?? '').startsWith('file:'))
      throw new LockError(
        `a dependency of ${name}@${version} is a folder on this machine (${k}), not a registry package; it cannot be pinned`,
      );
    if (typeof p.integrity !== 'string')
      throw new LockError(`the registry gave no integrity for ${k.replace(/^.*node_modules\//, '')}; ${name} cannot be pinned`);
  }
  const bins = (root.bin ?? {}) as Record<string, string>;
  const binName = launch.command ?? chooseBin(name, bins);
  const binFile =
    launch.command !== undefined ? binOfTree(packages, launch.command) : `node_modules/${name}/${path.posix.normalize(bins[binName])}`;
  if (!binFile) throw new LockError(`${launch.command} is not a command of ${name}@${version} or its dependencies`);
  const partial: Omit<NpmLock, 'digest' | 'tree'> = {
    spec: launch.spec,
    launcher: launch.launcher,
    registry: o.registry,
    name,
    version,
    integrity: root.integrity as string,
    resolved: String(root.resolved ?? manifest._resolved),
    publishedAt: typeof manifest._time === 'string' ? manifest._time : undefined,
    bin: { name: binName, file: binFile },
    packages,
    installScripts: Object.entries(packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([k]) => k.replace(/^.*node_modules\//, '')),
  };
  // Installed now, so what is approved includes the hash of the very files that will run.
  checkStopped(o, launch.spec);
  const dir = tempDir(o);
  try {
    try {
      await install(packages, dir, o, `${name}@${version}`);
    } catch (e) {
      checkStopped(o, launch.spec);
      throw e;
    }
    // The command must be a file of the installed tree (a manifest may name a bin that is not there, or outside it).
    const bin = path.resolve(dir, ...binFile.split('/'));
    let binOk = false;
    try {
      const real = fs.realpathSync(bin);
      binOk = real.startsWith(path.join(fs.realpathSync(dir), 'node_modules') + path.sep) && fs.statSync(real).isFile();
    } catch {
      // not there
    }
    if (!binOk)
      throw new LockError(
        `the command ${binName} of ${name}@${version} is ${binFile}, which is not a file of the installed package; it cannot be pinned`,
      );
    const lock = { ...partial, tree: treeHash(dir) } as NpmLock;
    lock.digest = lockDigest(lock);
    const target = treeDir(o.cacheRoot, lock);
    if (!fs.existsSync(path.join(target, COMPLETE))) putInCache(dir, target, lock);
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
  throw new LockError(
    names.length === 0
      ? `${name} has no command to run (no "bin" in its package.json)`
      : `${name} has several commands (${names.join(', ')}) and none is named ${own}; name one with --package=${name} <command>`,
  );
}

function binOfTree(packages: Record<string, Record<string, unknown>>, command: string): string | undefined {
  for (const [k, p] of Object.entries(packages)) {
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(k)) continue; // top level only: what npx puts on PATH
    const bins = (p.bin ?? {}) as Record<string, string>;
    if (bins[command]) return `${k}/${path.posix.normalize(bins[command])}`;
  }
  return undefined;
}

function tempDir(o: { cacheRoot: string; scratch?: string }): string {
  const d = path.join(o.scratch ?? path.join(o.cacheRoot, 'tmp'), `${process.pid}-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  return d;
}

/** Installs exactly `packages` into `dir` (Arborist reify from the lock, scripts off, tarballs checked). */
async function install(packages: Record<string, Record<string, unknown>>, dir: string, o: Options, what: string): Promise<void> {
  const rootPkg = packages[''] ?? {};
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'mcp-gate-lock', version: '0.0.0', private: true, dependencies: rootPkg.dependencies ?? {} }),
  );
  fs.writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'mcp-gate-lock', version: '0.0.0', lockfileVersion: 3, requires: true, packages }),
  );
  try {
    await new (arboristLib())({ path: dir, ...libOpts(o, { preferOffline: true }) }).reify({ save: false });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const why =
      code === 'EINTEGRITY'
        ? 'a tarball does not match the integrity recorded in the approval'
        : code === 'ENOTCACHED' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? 'it is not in the cache and the registry cannot be reached'
          : 'it cannot be installed';
    throw new LockError(`${what}: ${why} (${npmError(e)})`);
  }
}

/**
 * Moves a whole, verified install into its place in the cache. When another approval or start put the same lock
 * there meanwhile, theirs is used if it verifies.
 */
function putInCache(work: string, target: string, lock: NpmLock): void {
  fs.writeFileSync(path.join(work, COMPLETE), lock.digest);
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  try {
    fs.renameSync(work, target);
  } catch (e) {
    if (!(fs.existsSync(path.join(target, COMPLETE)) && treeHash(target) === lock.tree))
      throw new LockError(`${lock.name}@${lock.version} cannot be put into the package cache ${target}: ${(e as Error).message}`);
  }
}

/**
 * The installed tree of an approved lock, verified: returns its folder and the absolute path of its command.
 * Installs it again from the lock when it is missing or its files no longer hash to the approved tree. Throws
 * LockError when it cannot be fetched or does not verify.
 */
export async function ensureInstalled(lock: NpmLock, cacheRoot: string, scratch?: string): Promise<{ dir: string; binFile: string }> {
  const ready = installedTree(lock, cacheRoot);
  if (ready) return ready;
  const dir = treeDir(cacheRoot, lock);
  const result = () => ({ dir, binFile: path.join(dir, ...lock.bin.file.split('/')) });
  const work = tempDir({ cacheRoot, scratch });
  try {
    await install(lock.packages, work, { registry: lock.registry, cacheRoot }, `${lock.name}@${lock.version}`);
    const got = treeHash(work);
    if (got !== lock.tree)
      throw new LockError(
        `${lock.name}@${lock.version}: the installed files do not match the approved tree (${got}, approved ${lock.tree})`,
      );
    putInCache(work, dir, lock);
    return result();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
