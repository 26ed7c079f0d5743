// The execution closure: the workspace content a launch can execute or load, pinned file by file. The rule
// (README, "What an approval pins"): every workspace path the launch plan names — the command, an argument, a
// flag's value, a file:// URL, the working folder for launchers that resolve code from it — is an *entry*; each
// entry pins the whole tree of its *package root*: the nearest folder at or above it (inside the workspace) that
// holds a package manifest (package.json, pyproject.toml, setup.py, …), else the entry's own folder. Code that
// can load anything (inline `-e`/`-c` code, shell scripts) pins the whole workspace. Every JavaScript or
// TypeScript file of the closure, every entry and every file a literal names is read with a parser (./loads.ts):
// the relative paths it names that reach outside the roots found so far add the roots of what they reach, and a
// load of a path computed at run time (or a file that does not parse) pins the whole workspace, naming the file
// and line. A workspace `.npmrc` with a setting MCP Gate does not model pins the whole workspace too. `.git` and
// the MCP configuration files themselves (pinned field by field already) are left out; symlinks are pinned as
// their target text and their target's root is added when it lies in the workspace. When the closure cannot be
// pinned whole within the budgets, the server is blocked ("cannot pin what this runs: …") — never pinned in part.
// Each file is read and hashed at most once per evaluation, whatever number of servers name it.
// What settings files reach is read in ./project-settings.ts; the closure under the load guard is ./guarded-closure.ts;
// the budgets, the shapes of what is pinned and the reading of files are ./closure-files.ts.
import * as path from 'node:path';
import type { TrackingReader } from '../sources/fsread';
import {
  cacheOf,
  ClosureError,
  hashFile,
  JS_EXTENSIONS,
  MAX_CLOSURE_BYTES,
  MAX_CLOSURE_FILES,
  MAX_KEPT_TEXT_TOTAL,
  MAX_ROOTS,
  NATIVE,
  NOT_CODE,
  pinGit,
  reachOf,
  readTsconfig,
  textOf,
  walkTree,
  type Closure,
  type Hashed,
  type Reach,
} from './closure-files';
import { npmrcUnmodelled, TSCONFIG } from './project-settings';
import { rel, resolvePhysical, UnpinnablePathError, within } from './realpath';

/** What Node, npm and other launchers read from a project folder (at the working folder and every folder above). */
export const PROJECT_SETTINGS = [
  '.npmrc',
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  '.yarnrc.yml',
  '.pnpmfile.cjs',
  'pnpm-workspace.yaml',
  'bunfig.toml',
  'pyproject.toml',
  'uv.toml',
  '.python-version',
  'pip.conf',
  'deno.json',
  'deno.jsonc',
  'tsconfig.json',
  'jsconfig.json',
  '.node-version',
  '.nvmrc',
];

/** Files whose presence makes a folder a package root. */
export const MANIFESTS = [
  'package.json',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'deno.json',
  'deno.jsonc',
  'Cargo.toml',
  'go.mod',
  'Gemfile',
  'composer.json',
];

export interface ClosureEntry {
  /** Absolute path as the server would see it (resolved physically by this module). */
  path: string;
  why: string;
  /** Code that can load anything (inline code, shell): the whole workspace is pinned. */
  whole?: boolean;
  /** A data argument: pinned when it exists, ignored when it does not (a missing entry pins its nearest folder). */
  optional?: boolean;
  /**
   * Pinned as itself, not through its package folder: `file` — this one file when it exists (its later creation
   * changes the closure); `tree` — this folder's tree when it exists. For what a package launcher (npx, uvx)
   * reads from the project: its settings files and node_modules.
   */
  exact?: 'file' | 'tree';
  /** With `whole`: the whole workspace unless the server runs under the load guard (./guarded-closure.ts guardedClosureOf), which checks it. */
  guardable?: boolean;
  /**
   * A file a variable names (`"env": { "DB": "data/db.json" }`): pinned as itself by closureOf; under the guard it is
   * the server's data — not pinned, writable, and checked only if it loads as code (./guarded-closure.ts guardedClosureOf).
   */
  data?: boolean;
}

/** The package root of an entry: the nearest folder at or above it, inside the workspace, holding a manifest. */
function packageRoot(workspace: string, dir: string, reader: TrackingReader): string {
  for (let d = dir; within(workspace, d); d = path.dirname(d)) {
    for (const m of MANIFESTS) if (reader.stat(path.join(d, m))) return d;
    if (d === workspace) break;
  }
  return dir;
}

/** The closure's tables from what was pinned: sorted, workspace-relative, with the texts kept for diffs. */
export function closureTables(
  workspace: string,
  roots: ReadonlyMap<string, string>,
  files: ReadonlyMap<string, Hashed>,
  links: ReadonlyMap<string, string>,
): { closure: Closure; texts: Record<string, string> } {
  let bytes = 0;
  const closure: Closure = { roots: [], files: {}, links: {} };
  for (const [r, why] of [...roots].sort(([a], [b]) => (a < b ? -1 : 1))) closure.roots.push({ path: rel(workspace, r), why });
  const texts: Record<string, string> = {};
  let kept = 0;
  for (const [f, h] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    bytes += h.size;
    closure.files[rel(workspace, f)] = { sha256: h.sha256, size: h.size };
    if (h.text !== undefined && kept + h.text.length <= MAX_KEPT_TEXT_TOTAL) {
      texts[rel(workspace, f)] = h.text;
      kept += h.text.length;
    }
  }
  if (bytes > MAX_CLOSURE_BYTES) throw new ClosureError(`the files it may load add up to more than ${MAX_CLOSURE_BYTES / 1024 / 1024} MiB`);
  for (const [f, t] of [...links].sort(([a], [b]) => (a < b ? -1 : 1))) closure.links[rel(workspace, f)] = t;
  return { closure, texts };
}

/** An entry's path as the kernel resolves it (recorded for the gate cache: the spelling and the real path). */
export function resolveEntry(
  e: { path: string; why: string },
  workspace: string,
  reader: TrackingReader,
): ReturnType<typeof resolvePhysical> {
  let r;
  try {
    r = resolvePhysical(e.path, workspace);
  } catch (err) {
    if (err instanceof UnpinnablePathError) throw new ClosureError(`${e.why}: ${err.message}`);
    throw err;
  }
  reader.stat(e.path);
  reader.stat(r.real);
  return r;
}

/**
 * Thrown by closureOf when asked not to walk the whole workspace (`snapshot`) and the closure would be it: the
 * server can run on the approved snapshot instead (snapshotClosureOf).
 */
export class WholeWorkspace extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/**
 * The closure of a server that runs on the approved snapshot of its workspace (what would otherwise pin the whole
 * workspace): the files the plan names, pinned as themselves (a change to one is a change to what the person
 * reviewed), and `snapshot` saying why. Every other file is what the approval recorded, shown to the server as a
 * read-only copy (src/host/sandbox/closure-copy.ts snapshotCopy): an edit on the host neither reaches nor stops it.
 */
export function snapshotClosureOf(
  workspace: string,
  entries: readonly ClosureEntry[],
  excluded: ReadonlySet<string>,
  reader: TrackingReader,
  why: string,
): { closure: Closure; texts: Record<string, string> } {
  const files = new Map<string, Hashed>();
  for (const e of entries) {
    if (e.whole) continue;
    const r = resolveEntry(e, workspace, reader);
    if (!r.exists || !within(workspace, r.real) || excluded.has(rel(workspace, r.real))) continue;
    if (reader.stat(r.real)?.isFile()) files.set(r.real, hashFile(reader, r.real, workspace));
  }
  const out = closureTables(workspace, new Map(), files, new Map());
  out.closure.snapshot = [why];
  return out;
}

/**
 * The closure of a set of entries, with the text of small files for diffs. Throws ClosureError. With `snapshot`,
 * throws WholeWorkspace instead of walking the whole workspace.
 */
export function closureOf(
  workspace: string,
  entries: readonly ClosureEntry[],
  excluded: ReadonlySet<string>,
  reader: TrackingReader,
  snapshot = false,
): { closure: Closure; texts: Record<string, string> } {
  const queue: { dir: string; why: string }[] = [];
  const exactFiles: { abs: string; why: string }[] = [];
  /** Files to read for what they load: entries, data arguments, literal targets (whatever their name). */
  const toScan: string[] = [];
  const addEntry = (abs: string, why: string, whole = false, optional = false, exact?: 'file' | 'tree') => {
    let r;
    try {
      r = resolvePhysical(abs, workspace);
    } catch (e) {
      if (e instanceof UnpinnablePathError) throw new ClosureError(`${why}: ${e.message}`);
      throw e;
    }
    // Recorded for the gate cache: the spelling (a retargeted link anywhere on it changes what it stats to) and
    // the real path (a missing one that appears later).
    reader.stat(abs);
    reader.stat(r.real);
    if (!within(workspace, r.real)) return;
    if (whole) {
      if (snapshot) throw new WholeWorkspace(why);
      return queue.push({ dir: workspace, why });
    }
    if (exact) {
      if (!r.exists) return;
      const st = reader.stat(r.real);
      if (exact === 'file' && st?.isFile()) {
        exactFiles.push({ abs: r.real, why });
        toScan.push(r.real);
      } else if (exact === 'tree' && st?.isDirectory()) queue.push({ dir: r.real, why });
      return;
    }
    if (optional && !r.exists) return;
    const st = r.exists ? reader.stat(r.real) : undefined;
    if (st?.isFile()) toScan.push(r.real);
    const dir = st?.isDirectory() ? r.real : r.exists ? path.dirname(r.real) : r.existingDir;
    if (!within(workspace, dir)) return;
    const root = packageRoot(workspace, dir, reader);
    // Said when it surprises: a single file with no manifest at or above its folder pins that whole folder.
    const unpackaged = root === dir && !MANIFESTS.some((m) => reader.stat(path.join(dir, m)));
    queue.push({
      dir: root,
      why: unpackaged && st?.isFile() ? `${why} (no package manifest at or above its folder, so the folder is its package)` : why,
    });
  };
  for (const e of entries) addEntry(e.path, e.why, e.whole, e.optional, e.exact);
  // Code that can run anything (a shell) can also run an MCP configuration file as a script: then nothing is left out.
  if (entries.some((e) => e.whole)) excluded = new Set();
  // Servers that start from the same folders have the same closure: computed once per evaluation.
  const key = JSON.stringify([[...new Set(queue.map((q) => q.dir))].sort(), exactFiles.map((f) => f.abs).sort(), excluded.size, snapshot]);
  const memo = cacheOf(reader).closures;
  const hit = memo.get(key);
  if (hit instanceof Error) throw hit;
  if (hit) {
    const whyOf = new Map(queue.map((q) => [rel(workspace, q.dir), q.why]));
    return {
      closure: { ...hit.closure, roots: hit.closure.roots.map((r) => ({ path: r.path, why: whyOf.get(r.path) ?? r.why })) },
      texts: hit.texts,
    };
  }
  try {
    const result = computeClosure(workspace, queue, exactFiles, toScan, excluded, reader, addEntry, snapshot);
    memo.set(key, result);
    return result;
  } catch (e) {
    if (e instanceof ClosureError) memo.set(key, e);
    throw e;
  }
}

function computeClosure(
  workspace: string,
  queue: { dir: string; why: string }[],
  exactFiles: readonly { abs: string; why: string }[],
  toScan: string[],
  excluded: ReadonlySet<string>,
  reader: TrackingReader,
  addEntry: (abs: string, why: string) => void,
  snapshot: boolean,
): { closure: Closure; texts: Record<string, string> } {
  // Once a file can load a path computed at run time, the whole workspace is pinned (configuration files
  // included: such code could run what another server's entry says) and nothing more needs reading.
  const all = queue.find((q) => q.dir === workspace);
  if (snapshot && all) throw new WholeWorkspace(all.why);
  let whole = !!all && excluded.size === 0;
  const pinWhole = (why: string) => {
    if (whole) return;
    whole = true;
    excluded = new Set();
    queue.push({ dir: workspace, why: `${why}: MCP Gate pins the whole workspace for this server` });
  };
  /** Settings files that change what runs: an .npmrc's settings, a tsconfig's import paths. */
  const settings = (f: string, h: Hashed) => {
    const base = path.basename(f);
    if (base === '.npmrc') {
      const key = npmrcUnmodelled(h.text ?? textOf(reader, f) ?? '\0');
      if (key !== undefined) pinWhole(`${rel(workspace, f)} sets ${key}, which npm can use to run code MCP Gate does not model`);
    } else if (TSCONFIG.test(base)) tsconfig(f, h);
  };
  /** A tsconfig's import paths, those of what it extends, its JSX runtime (./tsconfigReach), each root config once. */
  const tsconfigsRead = new Set<string>();
  const tsconfig = (f: string, h: Hashed): void => {
    if (tsconfigsRead.has(f)) return;
    tsconfigsRead.add(f);
    const r = readTsconfig(f, h, workspace, reader);
    if (r.computed) return pinWhole(r.computed);
    for (const t of r.targets) if (within(workspace, t.path)) addEntry(t.path, t.why);
  };
  const scanned = new Set<string>();
  const follow = (file: string, reach: Reach, rootList: readonly string[]) => {
    if (reach.computed) return pinWhole(reach.computed);
    for (const t of reach.targets) {
      if (NATIVE.test(t) && reader.stat(t)?.isFile())
        return pinWhole(`${rel(workspace, file)} loads the native addon ${rel(workspace, t)}, whose machine code can open any file`);
      if (!rootList.some((r) => within(r, t))) addEntry(t, `named by ${rel(workspace, file)}`);
      else if (!JS_EXTENSIONS.has(path.extname(t)) && !NOT_CODE.test(t)) toScan.push(t);
    }
  };
  const scanNamed = (rootList: readonly string[]) => {
    while (toScan.length && !whole) {
      const f = toScan.shift()!;
      if (scanned.has(f) || NOT_CODE.test(f) || !reader.stat(f)?.isFile()) continue;
      scanned.add(f);
      const h = hashFile(reader, f, workspace);
      const text = h.scan ?? h.text ?? textOf(reader, f);
      // Fail closed: what cannot be read for what it loads can load anything.
      if (text === undefined) return pinWhole(`${rel(workspace, f)} cannot be read again for what it loads`);
      follow(f, reachOf(f, text, h.scan !== undefined, workspace, reader), rootList);
    }
  };
  const roots = new Map<string, string>(); // abs root → why

  const files = new Map<string, Hashed>();
  for (const f of exactFiles) {
    const h = hashFile(reader, f.abs, workspace);
    files.set(f.abs, h); // named by the plan: never left out
    settings(f.abs, h);
  }
  // git runs what .git/config and .git/hooks say (aliases, fsmonitor, hooks) for any server that calls it.
  const links = new Map<string, string>();
  if (queue.length || exactFiles.length) pinGit(workspace, excluded, reader, files, links);
  while (queue.length) {
    const { dir, why } = queue.shift()!;
    if (snapshot && dir === workspace) throw new WholeWorkspace(why);
    if ([...roots.keys()].some((r) => within(r, dir))) continue;
    for (const r of [...roots.keys()]) if (within(dir, r)) roots.delete(r);
    roots.set(dir, why);
    if (roots.size > MAX_ROOTS) throw new ClosureError(`it reaches more than ${MAX_ROOTS} package folders`);
    const walk = walkTree(dir, workspace, excluded, reader);
    for (const [f, h] of walk.files) files.set(f, h);
    for (const [f, t] of walk.links) links.set(f, t);
    if (files.size > MAX_CLOSURE_FILES) throw new ClosureError(`its package folders hold more than ${MAX_CLOSURE_FILES} files`);
    for (const t of walk.linkTargets) addEntry(t, `${why}, through a link`);
    const rootList = [...roots.keys()];
    for (const [f, h] of walk.files) {
      if (whole) break;
      settings(f, h);
      if (h.scan !== undefined) follow(f, reachOf(f, h.scan, true, workspace, reader), rootList);
    }
    scanNamed(rootList);
    // Above the root, up to the workspace: what Node, npm and other launchers read from every parent folder —
    // package.json (module type, imports, workspaces), .npmrc, lock files, and node_modules (bare requires and
    // npm's PATH of node_modules/.bin resolve there).
    for (let d = path.dirname(dir); within(workspace, d) && d !== dir; d = path.dirname(d)) {
      for (const name of PROJECT_SETTINGS) {
        const p = path.join(d, name);
        if (!reader.stat(p)?.isFile() || excluded.has(rel(workspace, p))) continue;
        const h = hashFile(reader, p, workspace);
        files.set(p, h);
        settings(p, h);
      }
      const nm = path.join(d, 'node_modules');
      if (reader.stat(nm)?.isDirectory())
        queue.push({ dir: nm, why: `packages above ${rel(workspace, dir)} (Node resolves bare imports in every folder above)` });
      if (d === workspace) break;
    }
  }

  return closureTables(workspace, roots, files, links);
}
