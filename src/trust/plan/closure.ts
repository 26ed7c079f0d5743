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
// What settings files reach is read in ./project-settings.ts; the closure under the load guard is ./guarded-closure.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { TrackingReader } from '../sources/fsread';
import { loadsOf } from './loads';
import { manifestPaths, npmrcUnmodelled, TSCONFIG, tsconfigReach } from './project-settings';
import { rel, resolvePhysical, UnpinnablePathError, within } from './realpath';

/**
 * A file is pinned only whole; one larger than this blocks the server. Large enough for the native programs
 * packages install (esbuild's 11 MiB binary under tsx, swc, biome, prisma's engines).
 */
export const MAX_CLOSURE_FILE_BYTES = 64 * 1024 * 1024;
/**
 * Files in one server's closure. Large enough for the whole workspace of most repositories (the fallback of
 * every computed load): bench/RESULTS.md times a cold pin and a re-check of a 20,000-file workspace.
 */
export const MAX_CLOSURE_FILES = 32768;
/** Bytes in one server's closure. */
export const MAX_CLOSURE_BYTES = 256 * 1024 * 1024;
/** Distinct files (and bytes) hashed in one evaluation of a project, across all its servers. */
export const MAX_EVALUATION_FILES = 65536;
export const MAX_EVALUATION_BYTES = 256 * 1024 * 1024;
/** Entries (files, folders, links) one walk may list, and all walks of one evaluation: empty folders count too. */
export const MAX_WALK_ENTRIES = 65536;
export const MAX_EVALUATION_ENTRIES = 262144;
/** Text kept in memory for line diffs during one evaluation, across all files (past it, a change shows without lines). */
export const MAX_EVALUATION_TEXT = 16 * 1024 * 1024;
/** Package roots one server may reach (through imports and links). */
export const MAX_ROOTS = 64;
/** Folder depth walked below a root. */
export const MAX_DEPTH = 48;
/** Text files up to this size are kept with the approval (line diffs); at most MAX_KEPT_TEXT_TOTAL per server. */
export const MAX_KEPT_TEXT_BYTES = 64 * 1024;
export const MAX_KEPT_TEXT_TOTAL = 256 * 1024;

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

const JS_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx']);
/** How Node (and tsx/bun) try a relative specifier that has no file of its own. */
const TRY_SUFFIXES = [
  '',
  '.js',
  '.mjs',
  '.cjs',
  '.json',
  '.ts',
  '.mts',
  '.cts',
  '.node',
  '/index.js',
  '/index.mjs',
  '/index.cjs',
  '/index.ts',
  '/index.json',
];

export class ClosureError extends Error {
  constructor(message: string) {
    super(`cannot pin what this runs: ${message}`);
  }
}

export interface PinnedFile {
  sha256: string;
  size: number;
}

export interface ClosureRoot {
  /** Workspace-relative POSIX path ('.' for the workspace itself). */
  path: string;
  /** Why it is in the closure: the entry that led to it. */
  why: string;
}

export interface Closure {
  roots: ClosureRoot[];
  /**
   * A guarded closure (./guarded-closure.ts guardedClosureOf): what is left to the load guard — each load computed at run time, with
   * file and line, whose file is checked against the workspace as approved when it loads. Absent otherwise.
   */
  guarded?: string[];
  /**
   * A snapshot closure (snapshotClosureOf): what would have pinned the whole workspace. The server then runs on the
   * workspace as approved (a read-only copy made from what was recorded at approval), never on the live files; the
   * files the plan names are pinned as themselves. Absent otherwise.
   */
  snapshot?: string[];
  /** Workspace-relative path → content digest, every regular file under the roots. */
  files: Record<string, PinnedFile>;
  /** Workspace-relative path → link target text (or `<fifo>`, `<socket>`, `<device>` for special files). */
  links: Record<string, string>;
}

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

export interface Hashed {
  sha256: string;
  size: number;
  /** UTF-8 text when small enough to keep for diffs. */
  text?: string;
  /** The whole text of a JavaScript file or a package.json, whatever its size: scanned for what it loads. */
  scan?: string;
}

interface Walk {
  files: Map<string, Hashed>; // abs → hash
  links: Map<string, string>; // abs → target text
  /** Link targets inside the workspace, to be pinned by their own roots. */
  linkTargets: string[];
}

/** Per-evaluation memo: each file is read and hashed once, each tree walked once, within evaluation budgets. */
class EvaluationCache {
  readonly hashes = new Map<string, Hashed | Error>();
  readonly walks = new Map<string, Walk | Error>();
  /** What a file reaches (its resolved literal targets, a computed load), whatever roots ask. */
  readonly imports = new Map<string, Reach>();
  /** Closures by their starting folders: servers that start from the same folders share one. */
  readonly closures = new Map<string, { closure: Closure; texts: Record<string, string> } | Error>();
  files = 0;
  bytes = 0;
  entries = 0;
  text = 0;
}

const caches = new WeakMap<TrackingReader, EvaluationCache>();

function cacheOf(reader: TrackingReader): EvaluationCache {
  let c = caches.get(reader);
  if (!c) caches.set(reader, (c = new EvaluationCache()));
  return c;
}

/** The UTF-8 text of a file small enough to keep for line diffs; undefined for binary or larger content. */
export function utf8Text(data: Buffer): string | undefined {
  if (data.length > MAX_KEPT_TEXT_BYTES) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
}

/** An extensionless file that starts `#!…node` (or deno, bun, tsx, ts-node): Node runs it as JavaScript. */
function nodeScript(abs: string, data: Buffer): boolean {
  if (path.extname(abs) !== '') return false;
  const first = data.subarray(0, 256).toString('latin1').split('\n')[0];
  return /^#!.*\b(node|nodejs|deno|bun|tsx|ts-node)\b/.test(first);
}

export function hashFile(reader: TrackingReader, abs: string, workspace: string): Hashed {
  const cache = cacheOf(reader);
  const hit = cache.hashes.get(abs);
  if (hit instanceof Error) throw hit;
  if (hit) return hit;
  const r = reader.read(abs, MAX_CLOSURE_FILE_BYTES);
  let out: Hashed | Error;
  if (r.kind === 'ok') {
    cache.files++;
    cache.bytes += r.data.length;
    if (cache.files > MAX_EVALUATION_FILES || cache.bytes > MAX_EVALUATION_BYTES) {
      out = new ClosureError(
        `the project's servers together load more than ${MAX_EVALUATION_FILES} files or ${MAX_EVALUATION_BYTES / 1024 / 1024} MiB, more than one check reads`,
      );
    } else {
      const scanned = JS_EXTENSIONS.has(path.extname(abs)) || path.basename(abs) === 'package.json' || nodeScript(abs, r.data);
      const text = cache.text + r.data.length <= MAX_EVALUATION_TEXT ? utf8Text(r.data) : undefined;
      if (text !== undefined) cache.text += r.data.length;
      out = {
        sha256: createHash('sha256').update(r.data).digest('hex'),
        size: r.data.length,
        text,
        scan: scanned ? (text ?? r.data.toString('utf8')) : undefined,
      };
    }
  } else if (r.kind === 'missing') {
    out = new ClosureError(`${rel(workspace, abs)} disappeared while it was being pinned; check again`);
  } else {
    out = new ClosureError(`${rel(workspace, abs)} cannot be read: ${r.error.message}`);
  }
  cache.hashes.set(abs, out);
  if (out instanceof Error) throw out;
  return out;
}

/** The package root of an entry: the nearest folder at or above it, inside the workspace, holding a manifest. */
function packageRoot(workspace: string, dir: string, reader: TrackingReader): string {
  for (let d = dir; within(workspace, d); d = path.dirname(d)) {
    for (const m of MANIFESTS) if (reader.stat(path.join(d, m))) return d;
    if (d === workspace) break;
  }
  return dir;
}

function walkTree(root: string, workspace: string, excluded: ReadonlySet<string>, reader: TrackingReader): Walk {
  const cache = cacheOf(reader);
  // A closure that can run anything (excluded is then empty) keeps what others leave out: its own walk.
  const open = excluded.size === 0;
  const key = `${root}\0${open ? 'all' : 'code'}`;
  const hit = cache.walks.get(key);
  if (hit instanceof Error) throw hit;
  if (hit) return hit;
  const walk: Walk = { files: new Map(), links: new Map(), linkTargets: [] };
  let listed = 0;
  try {
    const queue: [string, number][] = [[root, 0]];
    while (queue.length) {
      const [dir, depth] = queue.shift()!;
      if (depth > MAX_DEPTH) throw new ClosureError(`${rel(workspace, dir)} is nested more than ${MAX_DEPTH} folders deep`);
      reader.stat(dir); // its signature changes when an entry is added or removed
      // Read entry by entry, so a folder of a million entries costs no more than the budget.
      const entries: fs.Dirent[] = [];
      let handle: fs.Dir | undefined;
      try {
        handle = fs.opendirSync(dir);
        for (let e = handle.readSync(); e; e = handle.readSync()) {
          entries.push(e);
          if (listed + entries.length > MAX_WALK_ENTRIES) break;
        }
      } catch (e) {
        throw new ClosureError(`the folder ${rel(workspace, dir)} cannot be listed: ${(e as Error).message}`);
      } finally {
        handle?.closeSync();
      }
      listed += entries.length;
      cache.entries += entries.length;
      if (listed > MAX_WALK_ENTRIES)
        throw new ClosureError(
          `${rel(workspace, root)} holds more than ${MAX_WALK_ENTRIES} files, folders and links (MCP Gate pins every file a server may load, and blocks rather than pin part of them)`,
        );
      if (cache.entries > MAX_EVALUATION_ENTRIES)
        throw new ClosureError(
          `the project's servers together reach more than ${MAX_EVALUATION_ENTRIES} files, folders and links, more than one check lists`,
        );
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of entries) {
        const abs = path.join(dir, e.name);
        // `__pycache__` is pinned like any folder: a Python MCP Gate starts writes none there (PYTHONPYCACHEPREFIX
        // points outside), but a child that ignores the environment (`python3 -E`) would read a planted `.pyc`.
        if ((e.name === '.git' && dir === workspace) || excluded.has(rel(workspace, abs))) continue;
        if (e.isDirectory()) queue.push([abs, depth + 1]);
        else if (e.isFile()) {
          walk.files.set(abs, hashFile(reader, abs, workspace));
          if (walk.files.size > MAX_CLOSURE_FILES) {
            throw new ClosureError(
              `${rel(workspace, root)} holds more than ${MAX_CLOSURE_FILES} files (MCP Gate pins every file a server may load, and blocks rather than pin part of them)`,
            );
          }
        } else if (e.isSymbolicLink()) {
          const target = fs.readlinkSync(abs);
          // Resolved by the process that follows it, from where it stands: MCP Gate cannot say what it names.
          if (/^\/(proc|dev\/fd)(\/|$)/.test(target))
            throw new ClosureError(
              `the link ${rel(workspace, abs)} → ${target} points into /proc or /dev/fd, which the server resolves at run time`,
            );
          walk.links.set(abs, target);
          reader.stat(abs);
          let r;
          try {
            r = resolvePhysical(abs, dir);
          } catch (err) {
            throw new ClosureError(`the link ${rel(workspace, abs)} → ${target}: ${(err as Error).message}`);
          }
          if (within(workspace, r.real) && !within(root, r.real)) walk.linkTargets.push(r.exists ? r.real : r.existingDir);
        } else {
          walk.links.set(abs, e.isFIFO() ? '<fifo>' : e.isSocket() ? '<socket>' : '<device>');
        }
      }
    }
  } catch (e) {
    cache.walks.set(key, e as Error);
    throw e;
  }
  cache.walks.set(key, walk);
  return walk;
}

/**
 * What a literal may name that no loader runs as JavaScript: JSON (parsed as data). CommonJS runs every other
 * name as JavaScript (`require('./x.md')`), so every other file is read — one that does not parse is not code.
 */
export const NOT_CODE = /\.json$/i;
/** A native addon: its machine code can open any file. */
export const NATIVE = /\.node$/i;

/** The text of a file already hashed (read again: only files too large to keep come here), or undefined. */
export function textOf(reader: TrackingReader, abs: string): string | undefined {
  const r = reader.read(abs, MAX_CLOSURE_FILE_BYTES);
  return r.kind === 'ok' ? r.data.toString('utf8') : undefined;
}

/** What a scanned file reaches: the files its relative literals name (resolved), and a load computed at run time. */
interface Reach {
  targets: string[];
  computed?: string;
  /** What it does at run time that is not a load of a file (./loads.ts `code`): a load guard cannot check it. */
  code?: string;
}

/**
 * What a file can load (./loads.ts; a package.json: its main, bin, exports, imports). `strict` for a file Node
 * runs as JavaScript by its name (a .js/.ts/… file, a node script): one that does not parse can load anything.
 * Otherwise (an entry, a data argument, a target of any other name) a file that does not parse is not code.
 */
export function reachOf(file: string, text: string, strict: boolean, workspace: string, reader: TrackingReader): Reach {
  const cache = cacheOf(reader);
  const key = `${strict ? 's' : 'l'}\0${file}`;
  const hit = cache.imports.get(key);
  if (hit) return hit;
  const specs: string[] = [];
  let computed: string | undefined;
  let code: string | undefined;
  if (path.basename(file) === 'package.json') {
    specs.push(...manifestPaths(text));
    const proc = specs.find((x) => /^\/(proc|dev\/fd)\//.test(x));
    if (proc) computed = `${rel(workspace, file)} names ${proc.slice(0, 60)}, a path the process resolves at run time`;
  } else {
    const l = loadsOf(file, text);
    specs.push(...l.specs);
    const unparsed = l.computed && l.specs.length === 0 && /^it cannot be read as /.test(l.computed.what);
    if (l.computed && (strict || !unparsed)) computed = `${rel(workspace, file)}:${l.computed.line} ${l.computed.what}`;
    if (l.code && (strict || !unparsed)) code = `${rel(workspace, file)}:${l.code.line} ${l.code.what}`;
  }
  const targets: string[] = [];
  for (const spec of specs) {
    const lexical = path.resolve(path.dirname(file), spec);
    if (!within(workspace, lexical)) continue;
    let found: string | undefined;
    for (const s of TRY_SUFFIXES) {
      const st = reader.stat(lexical + s);
      if (st?.isFile()) {
        found = lexical + s;
        break;
      }
    }
    targets.push(found ?? lexical);
  }
  const out = { targets, computed, code };
  cache.imports.set(key, out);
  return out;
}

/** What a tsconfig `f` (hashed as `h`) makes reachable (./project-settings.ts tsconfigReach), read through `reader`. */
export function readTsconfig(f: string, h: Hashed, workspace: string, reader: TrackingReader): ReturnType<typeof tsconfigReach> {
  const read = (file: string) =>
    file === f ? (h.text ?? textOf(reader, f)) : reader.stat(file)?.isFile() ? textOf(reader, file) : undefined;
  return tsconfigReach(
    f,
    workspace,
    read,
    (p) => !!reader.stat(p)?.isFile(),
    (p) => !!reader.stat(p)?.isDirectory(),
    jsonFilesUnder,
  );
}

/**
 * The JSON files under a folder (a package a tsconfig extends), node_modules below it left out.
 * Undefined past `max`, or for a linked folder or JSON file (the caller fails closed).
 */
function jsonFilesUnder(dir: string, max: number): string[] | undefined {
  const out: string[] = [];
  const queue = [dir];
  let listed = 0;
  while (queue.length) {
    const d = queue.shift()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    if ((listed += entries.length) > MAX_WALK_ENTRIES) return undefined;
    for (const e of entries) {
      const p = path.join(d, e.name);
      let kind: 'dir' | 'file' | undefined = e.isDirectory() ? 'dir' : e.isFile() ? 'file' : undefined;
      if (e.isSymbolicLink()) {
        try {
          const st = fs.statSync(p);
          // A linked folder or JSON file could be the config, resolved from a folder MCP Gate does not model: fail closed.
          if (st.isDirectory() || /\.json$/i.test(e.name)) return undefined;
          kind = undefined;
        } catch {
          kind = undefined;
        }
      }
      if (kind === 'dir' && e.name !== 'node_modules') queue.push(p);
      else if (kind === 'file' && /\.json$/i.test(e.name)) out.push(p);
      if (out.length > max) return undefined;
    }
  }
  return out;
}

/**
 * git runs what .git/config and .git/hooks say (aliases, fsmonitor, hooks) for any server that calls it: those
 * files, and the hooks and info folders walked as themselves (the whole workspace's walk leaves .git out).
 */
export function pinGit(
  workspace: string,
  excluded: ReadonlySet<string>,
  reader: TrackingReader,
  files: Map<string, Hashed>,
  links: Map<string, string>,
): void {
  const gitConfig = path.join(workspace, '.git', 'config');
  if (reader.stat(gitConfig)?.isFile()) files.set(gitConfig, hashFile(reader, gitConfig, workspace));
  const gitFile = path.join(workspace, '.git');
  if (reader.stat(gitFile)?.isFile()) files.set(gitFile, hashFile(reader, gitFile, workspace));
  for (const name of ['commondir', 'config.worktree']) {
    const p = path.join(workspace, '.git', name);
    if (reader.stat(p)?.isFile()) files.set(p, hashFile(reader, p, workspace));
  }
  for (const name of ['hooks', 'info']) {
    const d = path.join(workspace, '.git', name);
    if (!reader.stat(d)?.isDirectory()) continue;
    const walk = walkTree(d, workspace, excluded, reader);
    for (const [f, h] of walk.files) files.set(f, h);
    for (const [f, t] of walk.links) links.set(f, t);
  }
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
