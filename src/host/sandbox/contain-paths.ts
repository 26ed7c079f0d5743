// What a contained start shows and keeps of the machine, apart from the start itself (./contain.ts): the server's
// own caches, the Unix socket files it did not make, the workspace walked once for every nested .git and the
// entries tools obey (kept read-only), and the program's path as the definition names it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitExecutedPaths, MAX_NESTED_WALK, MAX_SOCKET_WALK, nestedGitPaths } from '../../trust/plan/git-paths';
import { PROTECTED_IN_WORKSPACE, PROTECTED_SUFFIXES, SANDBOX_CACHES, shownSockets, socketsAt, type Containment } from './decision';
import { ContainRefused } from './contain-options';

/** The sandbox decision of a start that runs contained (src/host/sandbox/decision.ts). */
export type Contained = Extract<Containment, { kind: 'contained' }>;
/** This server's own caches in its private folder (SANDBOX_CACHES), each made when missing. */
export function sandboxCaches(cacheDir: string): { source: string; target: string }[] {
  const caches = SANDBOX_CACHES.map((target) => ({
    source: path.join(cacheDir, target.slice(2).replace(/^\./, '').replace(/\//g, '-')),
    target,
  }));
  for (const c of caches) {
    try {
      fs.mkdirSync(c.source, { recursive: true, mode: 0o700 });
    } catch {
      // a cache that cannot be made is skipped by the sandbox
    }
  }
  return caches;
}

/** The Unix socket files a contained server would see that it did not make (none when its entry allows sockets). */
export function foreignSockets(
  project: string,
  c: Contained,
  scanned: ReturnType<typeof nestedGitPaths>,
  hidden: readonly string[],
  gitDir: string,
): string[] {
  // Unix sockets: the server may make its own (a browser's, the tsx command's IPC) while no socket file it did not
  // make is visible to it (the workspace, your read and write paths, a granted .git); abstract sockets are its
  // network namespace's. Else refused unless your entry allows them.
  return c.unixSockets
    ? []
    : [
        ...shownSockets(c),
        ...scanned.sockets,
        ...(scanned.socketsTruncated
          ? [`${project} (more than ${MAX_SOCKET_WALK.toLocaleString('en-US')} entries: not searched whole)`]
          : []),
        ...(hidden.length ? [] : socketsAt(gitDir)),
      ];
}

/** What a contained repository server is shown of its workspace: the verified copy of its closure, or the approved snapshot. */
/** The workspace walked once per start: every nested .git (and what it names), every entry tools obey in a folder of it, and every Unix socket file in it. */
export function scanWorkspace(project: string): ReturnType<typeof nestedGitPaths> {
  // What tools obey in a monorepo's folders too (a nested .vscode, .claude, AGENTS.md, .envrc…); .git is walked as such.
  const nested = nestedGitPaths(
    project,
    PROTECTED_IN_WORKSPACE.filter((n) => n !== '.git'),
    PROTECTED_SUFFIXES,
  );
  if (nested.truncated)
    throw new ContainRefused(
      `the workspace ${project} holds more than ${MAX_NESTED_WALK.toLocaleString('en-US')} files and folders outside node_modules, more than MCP Gate walks to find every .git a contained server must not write; open a smaller folder as the workspace`,
    );
  return nested;
}

export function protectedPaths(project: string, writable: readonly string[], nested: ReturnType<typeof nestedGitPaths>): string[] {
  const out: string[] = [];
  // The workspace entries tools read as configuration, and what the repository's git config names for git to run.
  // Every .git below the workspace's own too: git run there obeys it (a nested repository, a submodule).
  for (const p of [...PROTECTED_IN_WORKSPACE.map((name) => path.join(project, name)), ...gitExecutedPaths(project), ...nested.paths]) {
    if (writable.some((w) => path.resolve(w) === p)) continue;
    try {
      // Only a real entry of the workspace: a link out of it must not make its target visible in the sandbox.
      if (!fs.lstatSync(p).isSymbolicLink() && fs.realpathSync(p) === p) out.push(p);
    } catch {
      // absent: nothing to protect (a server may create it; see README)
    }
  }
  return out;
}

/** The program as the definition names it by a path (`.venv/bin/python`), when that is not its real path. */
export function declaredPath(command: string, cwd: string, executable: string | undefined): string | undefined {
  if (!executable || !(command.includes('/') || command.includes('\\'))) return undefined;
  const named = path.resolve(cwd, command);
  return named === executable ? undefined : named;
}
