// A git repository a contained server creates while it runs (issue 44, item 5). Every `.git` that exists when a
// server starts is read-only to it (src/host/sandbox/contain-paths.ts protectedPaths), but a new one cannot be mounted over before
// it exists, and git obeys what it finds there — VS Code's git extension opens a repository that appears in the
// workspace by itself about half a second later and runs `git status`, whose `core.fsmonitor` is a program. So,
// while a contained server runs, its workspace's folders are watched (inotify, one watch a folder, `node_modules`
// included; not inside a `.git`), and a `.git` that appears — or a `.git` that was there, replaced by another (its
// inode) — is looked at at once and again at each change inside it: one that can make git run something — a config
// key outside a short list of inert ones, a hook, a config or gitdir: file that is also another file (a hard link
// written through its other name), a `gitdir:` or a link to a place that is not a repository that was already there
// — is moved aside (`.git.held-by-mcp-gate`), which no git and no editor takes for a repository, and the log says
// so. A folder git takes for a repository by its shape alone (`HEAD`, `objects/`, `refs/`: a bare repository, which
// git finds with safe.bareRepository at its default) is looked at the same way when an entry of that shape appears
// or changes in it, and held by moving its `HEAD` aside. Past the watch budget (a server can make more folders than
// that) the whole workspace is looked through again every few seconds while it runs. A plain `git init` or `git
// clone` stays.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gitDirRisk, gitRisk } from './git-risk';

/** Folders watched at most for one server (each an inotify watch): beyond, the workspace is looked through again every few seconds. */
export const MAX_REPO_WATCHES = 20_000;
/** The look-through past the budget: the next one waits this long at least, and ten times the last one's duration. */
export const SWEEP_EVERY_MS = 2000;
/** The look-through while every folder is watched: the watches see the rest, so it is a slow net. */
const QUIET_SWEEP_MS = 30_000;
/** Events within one second that make a look-through follow half a second later (a queue may have overflowed). */
const BURST_EVENTS = 1000;
/** Folders one look-through reads at most (beyond, what is deeper is said in `problem`). */
const MAX_SWEEP_FOLDERS = 500_000;
const SKIP = new Set(['.git']);
/** The entries that make a folder a repository by its shape (git's is_git_directory), and those git obeys in one. */
const SHAPE = ['HEAD', 'objects', 'refs'];
const GIT_DIR_ENTRIES = new Set([...SHAPE, 'config', 'hooks', 'commondir', 'config.worktree']);
export const HELD_SUFFIX = '.held-by-mcp-gate';

export interface HeldRepository {
  rel: string;
  heldAs: string;
  why: string;
}

/**
 * `act()` on a folder of the workspace; when the server made `folder` unreadable or unwritable to its owner (the
 * user, whose uid it runs as: red team 8, cases 03 and 05), its owner's rights are given back and `act` runs again.
 */
function asOwner<T>(folder: string, act: () => T): T {
  try {
    return act();
  } catch (e) {
    if (!['EACCES', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    fs.chmodSync(folder, fs.statSync(folder).mode | 0o700);
    return act();
  }
}

/**
 * Takes apart, in place, what makes git use `gitPath` as a repository: a gitdir: file or a link is removed; in a
 * folder, HEAD (without it git takes no folder for a repository), commondir and config. Returns what was removed.
 */
function defuse(gitPath: string): string | undefined {
  try {
    const st = fs.lstatSync(gitPath);
    if (!st.isDirectory()) {
      fs.rmSync(gitPath, { force: true });
      return st.isSymbolicLink() ? 'link' : 'gitdir: file';
    }
    try {
      fs.chmodSync(gitPath, st.mode | 0o700);
    } catch {
      // not ours to change: try anyway
    }
    const gone: string[] = [];
    for (const n of ['HEAD', 'commondir', 'config', 'config.worktree']) {
      try {
        fs.rmSync(path.join(gitPath, n), { force: false, recursive: false });
        gone.push(n);
      } catch {
        // absent
      }
    }
    return fs.existsSync(path.join(gitPath, 'HEAD')) ? undefined : gone.join(', ') || 'HEAD';
  } catch {
    return undefined;
  }
}

/** The identity of an entry (device and inode), or undefined when it is gone. */
function idOf(p: string): string | undefined {
  try {
    const st = fs.lstatSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** Whether a folder's entries give it a bare repository's shape (HEAD, objects, refs). */
const hasShape = (names: ReadonlySet<string>): boolean => SHAPE.every((n) => names.has(n)) || (names.has('HEAD') && names.has('commondir')); // objects and refs may be the commondir's (git's is_git_directory)

/** What a bare-shaped folder is now, for telling whether it changed: the ids and sizes of what git obeys in it. */
function shapeSignature(dir: string): string {
  let config = '-';
  try {
    config = createHash('sha256')
      .update(fs.readFileSync(path.join(dir, 'config')))
      .digest('hex');
  } catch {
    // none, or not a file
  }
  const part = (name: string) => {
    try {
      const st = fs.lstatSync(path.join(dir, name));
      return `${st.ino}:${st.size}:${st.mtimeMs}:${st.nlink}`;
    } catch {
      return '-';
    }
  };
  let hooks: string[] = [];
  try {
    hooks = fs.readdirSync(path.join(dir, 'hooks')).sort();
  } catch {
    // none
  }
  return [...GIT_DIR_ENTRIES].map(part).join('|') + '|' + config + '|' + hooks.join('/');
}

/**
 * Watches `project` while a contained server runs; calls `held` for each new repository moved aside. `stop()` looks
 * through the folders once more (what no watch saw) before it resolves.
 */
export interface WatchOptions {
  /** Folders watched at most (MAX_REPO_WATCHES). */
  budget?: number;
  /** Called once when the server made more folders than can be watched: the session stops it. */
  blind?: (why: string) => void;
  /**
   * Entries agents and editors obey without asking (`AGENTS.md`, `.vscode`, `.github/copilot-instructions.md`…):
   * one that appears while it runs, in any folder outside node_modules, is told (`appeared`, workspace-relative) —
   * not held: it may be yours (an editor's settings, an agent's /init), and nothing here tells who wrote it.
   */
  obeyed?: { names: readonly string[]; suffixes?: readonly string[]; appeared: (rel: string) => void };
}

/**
 * The watch of one workspace while a contained server runs (watchNewRepositories): what was there at its start, the
 * folders watched, the look-throughs and what they found, as fields; each step a method.
 */
class RepoWatch {
  private readonly budget: number;
  private readonly blind: (why: string) => void;
  // The obeyed entries by their last part, with the parts before it ('' for a name alone).
  private readonly obeyedByLast = new Map<string, string[]>();
  private readonly presentAtStart = new Set<string>();
  private readonly told = new Set<string>();
  private readonly watches = new Map<string, { w: fs.FSWatcher; id?: string }>(); // by path, with the folder's id when watched
  private readonly before = new Map<string, string>(); // `.git` entries there at the start (read-only to it), by id
  private readonly beforeShape = new Map<string, string>(); // bare-shaped folders there at the start, by signature
  private readonly known = new Set<string>(); // their real paths, and the workspace's own
  problem: string | undefined;
  private stopped = false;
  private starting = true; // the first walk: folders that were there
  private overAtStart = false;
  private blinded = false;
  private sweeping: NodeJS.Timeout | undefined;
  private readonly pending = new Set<Promise<void>>();
  private burst = { since: 0, events: 0 };
  private soon: NodeJS.Timeout | undefined;

  constructor(
    private readonly project: string,
    private readonly held: (h: HeldRepository) => void,
    private readonly opts: WatchOptions,
  ) {
    this.budget = opts.budget ?? MAX_REPO_WATCHES;
    this.blind = opts.blind ?? (() => undefined);
    for (const n of opts.obeyed?.names ?? []) {
      const parts = n.split('/');
      const last = parts.pop()!;
      this.obeyedByLast.set(last, [...(this.obeyedByLast.get(last) ?? []), parts.join('/')]);
    }
  }

  private isObeyed(dir: string, name: string): boolean {
    const parts = path.relative(this.project, dir).split(path.sep);
    if (parts.includes('node_modules')) return false;
    if ((this.opts.obeyed?.suffixes ?? []).some((x) => name.endsWith(x))) return true;
    const before = this.obeyedByLast.get(name);
    if (!before) return false;
    return before.some((b) => !b || `/${parts.join('/')}/`.endsWith(`/${b}/`));
  }
  private noteObeyed(dir: string, name: string, atStart: boolean): void {
    if (!this.opts.obeyed || !this.isObeyed(dir, name)) return;
    const p = path.join(dir, name);
    if (atStart) {
      this.presentAtStart.add(p);
      return;
    }
    if (this.presentAtStart.has(p) || this.told.has(p) || !fs.existsSync(p)) return;
    this.told.add(p);
    this.opts.obeyed.appeared(this.rel(p));
  }
  // The server made more folders than can be watched, or more than a look-through reads: it could make a repository
  // nothing sees before git is run there. Said once; the session stops the server (fail closed).
  private goBlind(why: string): void {
    if (this.blinded || this.stopped) return;
    this.blinded = true;
    this.blind(why);
  }
  private rel(p: string): string {
    return path.relative(this.project, p).split(path.sep).join('/') || '.';
  }

  private hold(p: Promise<void>): void {
    const q = p.catch(() => undefined);
    this.pending.add(q);
    void q.finally(() => this.pending.delete(q));
  }
  private moveAside(what: string, shown: string, why: string): void {
    let heldAs = `${what}${HELD_SUFFIX}`;
    for (let i = 2; fs.existsSync(heldAs); i++) heldAs = `${what}${HELD_SUFFIX}-${i}`;
    const parent = path.dirname(what);
    try {
      asOwner(parent, () => fs.renameSync(what, heldAs));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; // gone or moved already
      // It cannot be moved (a folder made read-only to us, a full disk: red team 8, cases 05 and 06): what makes git
      // take it for a repository is removed in place (removing needs no space); failing that, the server is stopped.
      const defused = defuse(what);
      this.held({
        rel: this.rel(shown),
        heldAs: defused
          ? `${this.rel(what)} (its ${defused} removed in place: it could not be moved, ${(e as NodeJS.ErrnoException).code})`
          : this.rel(what),
        why,
      });
      if (!defused)
        this.goBlind(
          `a repository it made at ${this.rel(shown)} (${why}) could neither be moved aside nor taken apart (${(e as NodeJS.ErrnoException).code})`,
        );
      return;
    }
    // A held .git folder keeps a repository's shape: its HEAD goes aside too, so that git run in it (opening the
    // held folder in an editor to look at it) does not take it for a bare repository.
    try {
      if (fs.lstatSync(heldAs).isDirectory()) fs.renameSync(path.join(heldAs, 'HEAD'), path.join(heldAs, `HEAD${HELD_SUFFIX}`));
    } catch {
      // no HEAD in it
    }
    this.held({ rel: this.rel(shown), heldAs: this.rel(heldAs), why });
  }

  private consider(gitPath: string): void {
    if (this.stopped) return;
    const was = this.before.get(gitPath);
    if (was !== undefined && was === idOf(gitPath)) return;
    this.hold(
      (async () => {
        const why = await gitRisk(gitPath, this.known);
        if (why) this.moveAside(gitPath, gitPath, why);
      })(),
    );
  }

  // A folder that has (or gets) a bare repository's shape: held by moving its HEAD aside, which git needs to take it
  // for one. One that was there at the start is looked at only once it changed.
  private considerShape(dir: string): void {
    if (this.stopped) return;
    let names: Set<string>;
    try {
      names = new Set(fs.readdirSync(dir));
    } catch {
      return;
    }
    if (!hasShape(names)) return;
    if (this.beforeShape.get(dir) === shapeSignature(dir)) return;
    this.hold(
      (async () => {
        const why = await gitDirRisk(dir);
        if (why) this.moveAside(path.join(dir, 'HEAD'), dir, `git takes it for a repository by its shape (HEAD, objects, refs) and ${why}`);
      })(),
    );
  }

  private watchGit(gitPath: string): void {
    // A new repository is looked at again whenever something in it or in its hooks folder changes (a hooks folder
    // made later is watched from the event that shows it). Watched before it is looked at, so that nothing written
    // between the two goes unseen.
    for (const d of [gitPath, path.join(gitPath, 'hooks')]) {
      if (this.watches.has(d)) continue;
      try {
        const w = fs.watch(d, { persistent: false }, () => {
          this.watchGit(gitPath);
          this.consider(gitPath);
        });
        w.on('error', () => undefined);
        this.watches.set(d, { w });
      } catch {
        // not a folder (a gitdir: file) or gone
      }
    }
  }

  private overBudget(): void {
    if (!this.starting && !this.overAtStart) {
      this.goBlind(`it made more folders than the ${this.budget.toLocaleString('en-US')} MCP Gate watches for new git repositories`);
      return;
    }
    this.overAtStart = true;
    this.problem ??= `more than ${this.budget.toLocaleString('en-US')} folders: the rest is looked through every few seconds while it runs, and once more when it stops`;
  }

  // The workspace looked through again while it runs: every few seconds where watches are short (over the budget,
  // at most a tenth of one core), else every half minute (a twentieth at most) — and half a second after a burst
  // of events: the kernel drops events when its queue overflows, and Node's watch says nothing of it (red team 8,
  // case 04), but the flood that fills the queue arrives first.
  private look(): number {
    const t0 = Date.now();
    if (!this.sweep(MAX_SWEEP_FOLDERS))
      this.goBlind(
        `its workspace holds more than ${MAX_SWEEP_FOLDERS.toLocaleString('en-US')} folders, more than MCP Gate looks through for new git repositories while it runs`,
      );
    return Date.now() - t0;
  }
  private lookThrough(wait: number): void {
    this.sweeping = setTimeout(() => {
      const took = this.look();
      if (!this.stopped) this.lookThrough(this.overAtStart ? Math.max(SWEEP_EVERY_MS, 10 * took) : Math.max(QUIET_SWEEP_MS, 20 * took));
    }, wait);
    this.sweeping.unref();
  }
  private noteEvent(): void {
    const now = Date.now();
    if (now - this.burst.since > 1000) this.burst = { since: now, events: 0 };
    if (++this.burst.events < BURST_EVENTS || this.soon || this.stopped) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      if (!this.stopped) this.look();
    }, 500);
    this.soon.unref();
  }

  private add(dir: string, atStart: boolean): void {
    if (this.stopped) return;
    const id = idOf(dir);
    if (id === undefined) return; // gone again
    const had = this.watches.get(dir);
    if (had) {
      if (had.id === id) return;
      had.w.close(); // the folder once here was moved away (its watch went with it)
      this.watches.delete(dir);
    }
    if (this.watches.size >= this.budget) {
      this.overBudget();
      return;
    }
    let w: fs.FSWatcher;
    try {
      w = asOwner(dir, () =>
        fs.watch(dir, { persistent: false }, (_e, name) => {
          this.noteEvent();
          if (name === null) return;
          if (this.watches.get(dir)?.w !== w) return; // replaced: this watch follows a folder moved elsewhere
          if (idOf(dir) !== id) {
            this.add(dir, false); // what is at this path now is another folder
            return;
          }
          const n = name.toString();
          const entry = path.join(dir, n);
          if (n === '.git') {
            this.watchGit(entry);
            this.consider(entry);
            return;
          }
          this.noteObeyed(dir, n, false);
          if (GIT_DIR_ENTRIES.has(n)) this.considerShape(dir);
          if (path.basename(dir) === 'hooks') this.considerShape(path.dirname(dir));
          if (!SKIP.has(n)) {
            let st: fs.Stats | undefined;
            try {
              st = fs.lstatSync(entry);
            } catch {
              /* gone */
            }
            if (st?.isDirectory()) this.add(entry, false);
          }
        }),
      );
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return; // gone again
      if (code === 'ENOSPC' || code === 'EMFILE') {
        this.problem ??= `${this.rel(dir)} cannot be watched (${(e as Error).message})`;
        this.overBudget();
        return;
      }
      // A folder it made that cannot be read or watched (its mode taken away: red team 8, case 03): nothing in it
      // can be seen.
      this.problem ??= `${this.rel(dir)} cannot be looked into (${(e as Error).message})`;
      if (!this.starting) this.goBlind(`it made ${this.rel(dir)}, which MCP Gate cannot look into (${code ?? (e as Error).message})`);
      return;
    }
    w.on('error', () => undefined);
    this.watches.set(dir, { w, id });
    let entries: fs.Dirent[] = [];
    try {
      entries = asOwner(dir, () => fs.readdirSync(dir, { withFileTypes: true }));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && !this.starting)
        this.goBlind(`it made ${this.rel(dir)}, which MCP Gate cannot look into (${(e as NodeJS.ErrnoException).code})`);
      return;
    }
    const names = new Set(entries.map((e) => e.name));
    if (hasShape(names)) {
      if (atStart) this.beforeShape.set(dir, shapeSignature(dir));
      else this.considerShape(dir);
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      this.noteObeyed(dir, e.name, atStart);
      if (e.name === '.git') {
        if (atStart) {
          const id = idOf(p);
          if (id) this.before.set(p, id);
          try {
            this.known.add(fs.realpathSync(p));
          } catch {
            /* a broken link */
          }
        } else {
          this.watchGit(p);
          this.consider(p);
        }
      } else if (e.isDirectory() && !SKIP.has(e.name)) this.add(p, atStart);
    }
  }

  // Every folder once, without a depth bound (an explicit stack): each `.git` and each bare-shaped folder considered.
  // False when it stopped at `cap` folders (the last look-through at the stop has none).
  private sweep(cap = Infinity): boolean {
    const stack = [this.project];
    let read = 0;
    while (stack.length) {
      const dir = stack.pop()!;
      if (++read > cap) return false;
      let entries: fs.Dirent[] = [];
      try {
        entries = asOwner(dir, () => fs.readdirSync(dir, { withFileTypes: true }));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
          this.goBlind(`MCP Gate cannot look into ${this.rel(dir)} (${(e as NodeJS.ErrnoException).code})`);
        continue;
      }
      if (hasShape(new Set(entries.map((e) => e.name)))) this.considerShape(dir);
      for (const e of entries) {
        const p = path.join(dir, e.name);
        if (!this.overAtStart) this.noteObeyed(dir, e.name, false);
        if (e.name === '.git') this.consider(p);
        else if (e.isDirectory() && !SKIP.has(e.name)) stack.push(p);
      }
    }
    return true;
  }

  /** The first walk (the folders that were there), then the look-throughs while it runs. */
  start(): void {
    this.add(this.project, true);
    this.starting = false;
    this.lookThrough(this.overAtStart ? SWEEP_EVERY_MS : QUIET_SWEEP_MS);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    if (this.sweeping) clearTimeout(this.sweeping);
    if (this.soon) clearTimeout(this.soon);
    this.sweep(); // what no watch saw (an event lost, a folder over the budget)
    await Promise.all([...this.pending]);
    this.stopped = true;
    for (const { w } of this.watches.values()) w.close();
    this.watches.clear();
  }
}

export function watchNewRepositories(
  project: string,
  held: (h: HeldRepository) => void,
  opts: WatchOptions = {},
): { stop(): Promise<void>; problem?: string } {
  const watch = new RepoWatch(project, held, opts);
  watch.start();
  return {
    problem: watch.problem,
    stop: () => watch.stop(),
  };
}
