// Noticing a change on disk while an approved server runs: its package folders (recursively) and the folders of
// its other pinned files are watched (fs.watch, inotify on Linux). The server itself never sees the change — it
// runs its verified read-only copy (src/host/sandbox/closure-copy.ts) — but what it was approved for no longer matches the
// workspace, so the session stops it at once and refuses its calls until a person reviews it; the front ends'
// next check (VS Code's, every second) shows it as changed. The start-time check stays the fallback for what a
// watch cannot see (a watch that fails to start is logged, and the server runs on its verified copy).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerReport } from '../../trust/report';
import { PROJECT_SETTINGS } from '../../trust/plan/closure';

/** Names Node and npm look up in every folder above a package folder. */
const LOOKED_UP = new Set([...PROJECT_SETTINGS, 'node_modules']);

/**
 * Watches what `server`'s approval pins; calls `changed` once with the first changed path, and `live` when the
 * running server can see that path (a name looked up above its folders that is not in its verified copy: a
 * `node_modules` or `package.json` created there after approval). Returns a stopper.
 */
export function watchClosure(
  project: string,
  server: ServerReport,
  changed: (what: string, live: boolean) => void,
): { stop(): void; problem?: string } {
  const pinned = server.pinned?.pinned;
  if (!server.gated || !pinned) return { stop() {} };
  const roots = [...new Set(pinned.roots ?? [])];
  const inRoot = (rel: string) => roots.some((r) => r === '.' || rel === r || rel.startsWith(`${r}/`));
  const single = Object.keys(pinned.files).filter((f) => !inRoot(f) || f.startsWith('.git/'));
  const watchers: fs.FSWatcher[] = [];
  let fired = false;
  const fire = (rel: string, live = false) => {
    if (fired) return;
    fired = true;
    changed(rel, live);
  };
  let problem: string | undefined;
  const watch = (dir: string, recursive: boolean, relevant: (name: string) => string | undefined) => {
    try {
      const w = fs.watch(dir, { recursive, persistent: false }, (_event, name) => {
        const rel = relevant(name === null ? '' : name.toString());
        if (rel !== undefined) fire(rel);
      });
      w.on('error', () => undefined);
      watchers.push(w);
    } catch (e) {
      problem ??= `${path.relative(project, dir) || '.'} cannot be watched (${(e as Error).message})`;
    }
  };
  for (const r of roots) {
    const dir = r === '.' ? project : path.join(project, ...r.split('/'));
    watch(dir, true, (name) => {
      const rel = path.posix.join(r, name.split(path.sep).join('/'));
      // The workspace's .git changes with every git command: what of it is pinned is watched on its own.
      return r === '.' && (rel === '.git' || rel.startsWith('.git/')) ? undefined : rel;
    });
  }
  const byDir = new Map<string, Set<string>>();
  for (const f of single) {
    const dir = path.posix.dirname(f);
    byDir.set(dir, (byDir.get(dir) ?? new Set()).add(path.posix.basename(f)));
  }
  for (const [dir, names] of byDir)
    watch(path.join(project, ...dir.split('/')), false, (name) => (names.has(name) ? path.posix.join(dir, name) : undefined));
  // Above each package folder, up to the workspace: what Node and npm look up in every parent folder. One that
  // exists was pinned (and is mounted from the copy); one created while the server runs is live in its view.
  const above = new Set<string>();
  for (const r of roots) {
    if (r === '.') continue;
    for (let d = path.posix.dirname(r); ; d = path.posix.dirname(d)) {
      above.add(d);
      if (d === '.' || d === '/') break;
    }
  }
  for (const dir of above) {
    const names = byDir.get(dir);
    watch(dir === '.' ? project : path.join(project, ...dir.split('/')), false, (name) => {
      if (!LOOKED_UP.has(name)) return undefined;
      const rel = path.posix.join(dir, name);
      if (!names?.has(name)) fire(rel, true);
      return undefined;
    });
  }
  return {
    stop: () => {
      for (const w of watchers) w.close();
    },
    problem,
  };
}
