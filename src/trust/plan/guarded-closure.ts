// The closure of a server whose every Node or Python process runs under the load guard (src/guard/): the files
// the plan names and what their literal paths reach, the settings files around them and git's own files, pinned
// file by file from the execution closure's parts (./closure.ts, ./closure-files.ts); what is computed at run time
// is left to the guard.
import * as path from 'node:path';
import type { TrackingReader } from '../sources/fsread';
import { closureTables, PROJECT_SETTINGS, resolveEntry, type ClosureEntry } from './closure';
import {
  ClosureError,
  hashFile,
  MAX_CLOSURE_FILES,
  NATIVE,
  NOT_CODE,
  pinGit,
  reachOf,
  readTsconfig,
  textOf,
  type Closure,
  type Hashed,
} from './closure-files';
import { npmrcUnmodelled, TSCONFIG } from './project-settings';
import { rel, within } from './realpath';

/**
 * The closure of a server whose every Node or Python process runs under the load guard (src/guard/), which checks
 * each file that becomes code against the workspace as approved when it loads. What is pinned here is what the
 * person reviews and what is checked before a start: the files the plan names, the files their literal paths reach
 * (transitively), the settings files Node, npm and Python read in their folders and above, and git's own files —
 * never a package folder's whole tree nor the whole workspace. A load computed at run time is left to the guard,
 * named in `guarded`. Returns `{ fallback }` with the first reason when something here is not a load of a file
 * (code built from strings, a child process, a shell, npm's script settings) or names a package launcher's tree:
 * the server is then pinned by closureOf, as before.
 */
export function guardedClosureOf(
  workspace: string,
  entries: readonly ClosureEntry[],
  excluded: ReadonlySet<string>,
  reader: TrackingReader,
): { closure: Closure; texts: Record<string, string> } | { fallback: string } {
  const whole = entries.find((e) => (e.whole && !e.guardable) || e.exact === 'tree');
  if (whole) return { fallback: whole.why };
  const guarded: string[] = [];
  entries = entries.filter((e) => {
    if (e.guardable) guarded.push(`${e.why}: each file it loads is checked when it loads`);
    if (e.data) guarded.push(`${e.why} names ${rel(workspace, e.path)}: its data (writable, not pinned), checked if it loads as code`);
    return !e.guardable && !e.data;
  });
  const files = new Map<string, Hashed>();
  const links = new Map<string, string>();
  const toScan: { abs: string; strict: boolean }[] = [];
  const dirs = new Set<string>();
  let fallback: string | undefined;
  const settings = (f: string, h: Hashed) => {
    const base = path.basename(f);
    if (base === '.npmrc') {
      const key = npmrcUnmodelled(h.text ?? textOf(reader, f) ?? '\0');
      if (key !== undefined) fallback ??= `${rel(workspace, f)} sets ${key}, which npm can use to run code MCP Gate does not model`;
    } else if (TSCONFIG.test(base)) {
      const r = readTsconfig(f, h, workspace, reader);
      if (r.computed) guarded.push(r.computed);
      // What its paths reach loads as files, each checked by the guard; the configs of its chain are pinned.
      for (const t of r.targets)
        if (within(workspace, t.path) && TSCONFIG.test(path.basename(t.path)) && reader.stat(t.path)?.isFile()) pinFile(t.path, false);
    }
  };
  const pinFile = (abs: string, scan: boolean): void => {
    if (files.has(abs) || excluded.has(rel(workspace, abs))) return;
    const h = hashFile(reader, abs, workspace);
    files.set(abs, h);
    if (files.size > MAX_CLOSURE_FILES) throw new ClosureError(`it names more than ${MAX_CLOSURE_FILES} files`);
    dirs.add(path.dirname(abs));
    settings(abs, h);
    if (scan && !NOT_CODE.test(abs) && !NATIVE.test(abs)) toScan.push({ abs, strict: h.scan !== undefined });
  };
  const add = (e: ClosureEntry) => {
    const r = resolveEntry(e, workspace, reader);
    if (!within(workspace, r.real)) return;
    const st = r.exists ? reader.stat(r.real) : undefined;
    if (st?.isFile()) return pinFile(r.real, true);
    // A data argument that is a folder (`server-filesystem .`) or not there: no code of it, and no settings above it.
    if (e.exact === 'file') return;
    dirs.add(st?.isDirectory() ? r.real : r.exists ? path.dirname(r.real) : r.existingDir);
    // A folder (`python -m` from the working folder, `node lib/`) or a missing entry: what loads from it is checked.
    if (!e.exact && !e.optional)
      guarded.push(
        `${e.why} (${rel(workspace, r.real)}${st?.isDirectory() ? '/' : ', not there now'}): what it loads from there is checked when it loads`,
      );
  };
  for (const e of entries) add(e);
  const scanAll = () => {
    while (toScan.length && fallback === undefined) {
      const { abs, strict } = toScan.shift()!;
      const h = hashFile(reader, abs, workspace);
      const text = h.scan ?? h.text ?? textOf(reader, abs);
      if (text === undefined) {
        fallback = `${rel(workspace, abs)} cannot be read again for what it does`;
        return;
      }
      const reach = reachOf(abs, text, strict, workspace, reader);
      if (reach.code) fallback = reach.code;
      else if (reach.computed) guarded.push(reach.computed);
      for (const t of reach.targets) {
        const st = reader.stat(t);
        if (st?.isFile()) {
          if (NATIVE.test(t)) guarded.push(`${rel(workspace, abs)} loads the native addon ${rel(workspace, t)}: checked when it loads`);
          pinFile(t, true);
        } else if (st?.isDirectory() && reader.stat(path.join(t, 'package.json'))?.isFile()) pinFile(path.join(t, 'package.json'), true);
      }
    }
  };
  scanAll();
  // What Node, npm and Python read from each folder of a pinned file up to the workspace (module type, imports
  // maps, .npmrc, tsconfig paths, pyproject): pinned as files, also when they appear later.
  const seen = new Set<string>();
  for (let pass = 0; pass < 2 && fallback === undefined; pass++) {
    for (const start of [...dirs]) {
      for (let d = start; within(workspace, d) && !seen.has(d); d = path.dirname(d)) {
        seen.add(d);
        for (const name of PROJECT_SETTINGS) {
          const p = path.join(d, name);
          if (reader.stat(p)?.isFile()) pinFile(p, name === 'package.json');
        }
        if (d === workspace) break;
      }
    }
    scanAll();
  }
  if (fallback !== undefined) return { fallback };
  pinGit(workspace, excluded, reader, files, links);
  const out = closureTables(workspace, new Map(), files, links);
  out.closure.guarded = [...new Set(guarded)];
  return out;
}
