// The folders of a checkout that are projects of their own for the agents: a folder below the root that declares MCP
// servers (any repository row of the catalogue: `.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`, …) or holds a
// file an agent reads as a pre-approval (`.claude/settings.json`, …). An agent started in such a folder of a monorepo
// reads its files, not the root's, so `mcp-gate check` evaluates each as a project (issue 47, item 5). The markers
// come from the same tables the gate reads at a root: the catalogue's repository rows and the files each adapter's
// pre-approval check opens, learnt by running that check on an empty folder (nothing else names a path here).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CATALOGUE } from './catalogue';
import { TrackingReader } from './fsread';
import { preApprovalAttempts } from './preapproval';

/** Entries (files, folders, links) a walk reads at most; past it the walk stops and says so. */
export const MAX_PROJECT_WALK = 200_000;

/** Folders never walked: installed packages and git's own (what they declare is no project of this checkout). */
const SKIPPED = new Set(['node_modules', '.git']);

let markerCache: string[] | undefined;

/** Paths, relative to a project's root (POSIX), whose presence makes a folder a project for the agents. */
export function projectMarkers(): string[] {
  if (markerCache) return markerCache;
  const rels = new Set<string>();
  for (const s of CATALOGUE) if (s.scope === 'repository' && s.relPath) rels.add(s.relPath);
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-markers-'));
  try {
    const reader = new TrackingReader();
    preApprovalAttempts(empty, reader);
    for (const p of reader.seen.keys()) rels.add(path.relative(empty, p).split(path.sep).join('/'));
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
  markerCache = [...rels].filter((r) => r && !r.startsWith('..')).sort();
  return markerCache;
}

export interface NestedProjects {
  /** Real paths of the folders below `root` (not `root` itself) that hold a marker, sorted. */
  folders: string[];
  /** The walk met MAX_PROJECT_WALK entries and stopped: folders past it are not known. */
  truncated: boolean;
  /** Folders that could not be listed (what they declare is not known), each with why. */
  unreadable: string[];
  /** Folders of `skip` the walk met and did not enter (real paths), sorted. */
  skipped: string[];
}

/**
 * Every folder below `root` (links not followed; node_modules and .git skipped) that is a project for the agents.
 * Folders in `skip` (real paths below root, the person's choice: fixtures of a test suite) are not entered, and said.
 */
export function nestedProjects(root: string, max = MAX_PROJECT_WALK, skip: ReadonlySet<string> = new Set()): NestedProjects {
  const markers = projectMarkers();
  const folders: string[] = [];
  const queue = [root];
  const unreadable: string[] = [];
  const skipped: string[] = [];
  let entries = 0;
  const result = (truncated: boolean): NestedProjects => ({ folders: folders.sort(), truncated, unreadable, skipped: skipped.sort() });
  while (queue.length) {
    const dir = queue.pop()!;
    if (skip.has(dir)) {
      skipped.push(dir);
      continue;
    }
    let list: fs.Dirent[];
    try {
      list = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      // Gone meanwhile is nothing to check; a folder that cannot be listed may declare servers: said, fails closed.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') unreadable.push(`${dir}: ${(e as Error).message}`);
      continue;
    }
    if (dir !== root && markers.some((m) => fs.existsSync(path.join(dir, ...m.split('/'))))) folders.push(dir);
    for (const d of list) {
      if (++entries > max) return result(true);
      if (d.isDirectory() && !d.isSymbolicLink() && !SKIPPED.has(d.name)) queue.push(path.join(dir, d.name));
    }
  }
  return result(false);
}
