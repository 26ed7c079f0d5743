// A git repository a contained server creates while it runs (issue 44, item 5). Every `.git` that exists when a
// server starts is read-only to it (src/host/contain.ts protectedPaths), but a new one cannot be mounted over before
// it exists, and git obeys what it finds there — VS Code's git extension opens a repository that appears in the
// workspace by itself about half a second later and runs `git status`, whose `core.fsmonitor` is a program. So,
// while a contained server runs, its workspace's folders are watched (inotify, one watch a folder; not inside
// `node_modules` or a `.git`), and a `.git` that appears is looked at at once and again at each change inside it:
// one that can make git run something — a config key outside a short list of inert ones, a hook, a `gitdir:` or a
// link to a place that is not a repository that was already there — is moved aside (`.git.held-by-mcp-gate`), which
// no git and no editor takes for a repository, and the log says so. A plain `git init` or `git clone` stays.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Config keys git only reads as data (lower-cased section and name; a subsection as `*`). Anything else is held. */
const INERT_KEYS = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath)$/,
  /^remote\..+\.(url|pushurl|fetch|push|tagopt|prune|mirror)$/,
  /^branch\..+\.(remote|pushremote|merge|rebase)$/,
  /^submodule\..+\.(url|active|branch)$/,
  /^(user\.(name|email)|init\.defaultbranch|pull\.(rebase|ff)|push\.(default|autosetupremote)|extensions\.(objectformat|refstorage|noop)|lfs\.repositoryformatversion|gc\.auto)$/,
];
/** Folders watched at most for one server (each an inotify watch): beyond, a new repository is looked for at its stop. */
export const MAX_REPO_WATCHES = 20_000;
const SKIP = new Set(['node_modules', '.git']);
export const HELD_SUFFIX = '.held-by-mcp-gate';

/**
 * Why git could run something from `gitPath` (a `.git` folder, file or link), or undefined when it holds only data.
 * `known`: real paths of the repositories' git folders that existed before (a `gitdir:` into one is a worktree or a
 * submodule git made there, not the server's).
 */
export async function gitRisk(gitPath: string, known: ReadonlySet<string>): Promise<string | undefined> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(gitPath);
  } catch {
    return undefined;                                   // gone again
  }
  if (st.isSymbolicLink()) return 'it is a link, which makes git use whatever it points to';
  if (st.isFile()) {
    if (st.size > 4096) return 'it is a file too large to be a gitdir: line';
    const m = /^gitdir: (.+?)\s*$/m.exec(fs.readFileSync(gitPath, 'utf8'));
    if (!m) return undefined;                           // not a gitdir: file: git does not take it for a repository
    const target = path.resolve(path.dirname(gitPath), m[1]);
    let real: string;
    try {
      real = fs.realpathSync(target);
    } catch {
      return `its gitdir: names ${m[1]}, which does not exist yet`;
    }
    for (const k of known) if (real === k || real.startsWith(k + path.sep)) return undefined;
    return `its gitdir: names ${m[1]}, which is not a repository that was there before the server started`;
  }
  if (!st.isDirectory()) return undefined;
  for (const name of ['commondir', 'config.worktree']) {
    if (fs.existsSync(path.join(gitPath, name))) return `it has a ${name} file`;
  }
  const hooks = path.join(gitPath, 'hooks');
  let hookNames: string[] = [];
  try {
    hookNames = fs.readdirSync(hooks);
  } catch {
    // no hooks folder
  }
  const hook = hookNames.find((h) => !h.endsWith('.sample'));
  if (hook) return `it has a hook, hooks/${hook}`;
  const config = path.join(gitPath, 'config');
  let size: number;
  try {
    const c = fs.lstatSync(config);
    if (c.isSymbolicLink()) return 'its config is a link';
    size = c.size;
  } catch {
    return undefined;                                   // no config (yet): looked at again when it is written
  }
  if (size > 64 * 1024) return 'its config is larger than a repository git made itself would have';
  const keys = await configKeys(config);
  if (keys === undefined) return 'its config cannot be read by git';
  const risky = keys.find((k) => !INERT_KEYS.some((re) => re.test(k)));
  return risky ? `its config sets ${risky}, which can make git run a program` : undefined;
}

/** The keys of a git config file, as git reads them (no includes followed); undefined when git cannot read it. */
function configKeys(file: string): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    execFile('git', ['config', '--file', file, '--no-includes', '--name-only', '--list', '-z'], { timeout: 5000, maxBuffer: 1 << 20, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' } }, (err, stdout) => {
      if (err) {
        // No git on this machine: nothing here can make git run anything; else it is unreadable to git.
        resolve((err as NodeJS.ErrnoException).code === 'ENOENT' ? [] : undefined);
        return;
      }
      resolve(stdout.split('\0').filter(Boolean).map((k) => {
        const first = k.indexOf('.');
        const last = k.lastIndexOf('.');
        return first === last ? k.toLowerCase() : `${k.slice(0, first).toLowerCase()}${k.slice(first, last)}${k.slice(last).toLowerCase()}`;
      }));
    });
  });
}

export interface HeldRepository { rel: string; heldAs: string; why: string }

/**
 * Watches `project` while a contained server runs; calls `held` for each new `.git` moved aside. `stop()` looks
 * through the folders once more (what no watch saw) before it resolves.
 */
export function watchNewRepositories(project: string, held: (h: HeldRepository) => void): { stop(): Promise<void>; problem?: string } {
  const watches = new Map<string, fs.FSWatcher>();
  const before = new Set<string>();                     // `.git` entries there at the start (read-only to the server)
  const known = new Set<string>();                      // their real paths, and the workspace's own
  let problem: string | undefined;
  let stopped = false;
  const pending = new Set<Promise<void>>();

  const consider = (gitPath: string): void => {
    if (before.has(gitPath) || stopped) return;
    const p = (async () => {
      const why = await gitRisk(gitPath, known);
      if (!why) return;
      let heldAs = `${gitPath}${HELD_SUFFIX}`;
      for (let i = 2; fs.existsSync(heldAs); i++) heldAs = `${gitPath}${HELD_SUFFIX}-${i}`;
      try {
        fs.renameSync(gitPath, heldAs);
      } catch {
        return;                                         // gone or moved already
      }
      held({ rel: path.relative(project, gitPath).split(path.sep).join('/'), heldAs: path.relative(project, heldAs).split(path.sep).join('/'), why });
    })().catch(() => undefined);
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  const watchGit = (gitPath: string): void => {
    // A new repository is looked at again whenever something in it or in its hooks folder changes (a hooks folder
    // made later is watched from the event that shows it). Watched before it is looked at, so that nothing written
    // between the two goes unseen.
    for (const d of [gitPath, path.join(gitPath, 'hooks')]) {
      if (watches.has(d)) continue;
      try {
        const w = fs.watch(d, { persistent: false }, () => { watchGit(gitPath); consider(gitPath); });
        w.on('error', () => undefined);
        watches.set(d, w);
      } catch {
        // not a folder (a gitdir: file) or gone
      }
    }
  };

  const add = (dir: string, atStart: boolean): void => {
    if (watches.has(dir) || stopped) return;
    if (watches.size >= MAX_REPO_WATCHES) {
      problem ??= `more than ${MAX_REPO_WATCHES} folders: a repository made deeper is looked for when the server stops`;
      return;
    }
    let w: fs.FSWatcher;
    try {
      w = fs.watch(dir, { persistent: false }, (_e, name) => {
        if (name === null) return;
        const entry = path.join(dir, name.toString());
        if (name.toString() === '.git') {
          watchGit(entry);
          consider(entry);
        } else if (!SKIP.has(name.toString())) {
          let st: fs.Stats | undefined;
          try { st = fs.lstatSync(entry); } catch { /* gone */ }
          if (st?.isDirectory()) add(entry, false);
        }
      });
    } catch (e) {
      problem ??= `${path.relative(project, dir) || '.'} cannot be watched (${(e as Error).message})`;
      return;
    }
    w.on('error', () => undefined);
    watches.set(dir, w);
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.name === '.git') {
        if (atStart) {
          before.add(p);
          try { known.add(fs.realpathSync(p)); } catch { /* a broken link */ }
        } else {
          watchGit(p);
          consider(p);
        }
      } else if (e.isDirectory() && !SKIP.has(e.name)) add(p, atStart);
    }
  };

  add(project, true);
  const sweep = (dir: string, depth: number): void => {
    if (depth > 64) return;
    let entries: fs.Dirent[] = [];
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.name === '.git') consider(p);
      else if (e.isDirectory() && !SKIP.has(e.name)) sweep(p, depth + 1);
    }
  };
  return {
    problem,
    stop: async () => {
      if (stopped) return;
      sweep(project, 0);                                // what no watch saw (an event lost, a folder over the budget)
      await Promise.all([...pending]);
      stopped = true;
      for (const w of watches.values()) w.close();
      watches.clear();
    },
  };
}
