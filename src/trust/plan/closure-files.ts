// The execution closure's files (./closure.ts): its budgets, the shapes of what is pinned, the per-evaluation
// cache, and reading them — each file hashed once, a package folder walked, what a file's literal paths reach
// (./loads.ts), a tsconfig read (./project-settings.ts), git's own files pinned.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { TrackingReader } from '../sources/fsread';
import { loadsOf } from './loads';
import { manifestPaths, tsconfigReach } from './project-settings';
import { rel, resolvePhysical, within } from './realpath';

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

export const JS_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx']);
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
   * A snapshot closure (./closure.ts snapshotClosureOf): what would have pinned the whole workspace. The server then runs on the
   * workspace as approved (a read-only copy made from what was recorded at approval), never on the live files; the
   * files the plan names are pinned as themselves. Absent otherwise.
   */
  snapshot?: string[];
  /** Workspace-relative path → content digest, every regular file under the roots. */
  files: Record<string, PinnedFile>;
  /** Workspace-relative path → link target text (or `<fifo>`, `<socket>`, `<device>` for special files). */
  links: Record<string, string>;
}

export interface Hashed {
  sha256: string;
  size: number;
  /** UTF-8 text when small enough to keep for diffs. */
  text?: string;
  /** The whole text of a JavaScript file or a package.json, whatever its size: scanned for what it loads. */
  scan?: string;
}

export interface Walk {
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

export function cacheOf(reader: TrackingReader): EvaluationCache {
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

export function walkTree(root: string, workspace: string, excluded: ReadonlySet<string>, reader: TrackingReader): Walk {
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
export interface Reach {
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
