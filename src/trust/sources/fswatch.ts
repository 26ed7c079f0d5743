// Folder watches that let the gate cache skip its stat walk: one non-recursive `fs.watch` (inotify on Linux) per
// folder the gate looked into, and a clock that every event or error in a folder advances for that folder. A
// cached report whose folders saw no event since it was last verified is still true — for what the kernel reports
// through those folders. What a watch cannot see (a write through a hard link that lies elsewhere, a write
// through a shared mapping, a lost event) the stat walk sees: the gate cache runs it at least every
// FULL_CHECK_MS, and every start re-checks exactly (a fresh evaluation), never from watches. Watches are for
// showing a change quickly and cheaply, never for deciding that something may run.
import * as fs from 'node:fs';

/** Folders one watcher watches at most (each is an inotify watch, a per-user kernel resource). */
export const MAX_WATCHED_FOLDERS = 8192;

export class FolderWatcher {
  private clock = 0;
  /** Folder → the clock of its last event (0: none since it is watched). */
  private readonly lastEvent = new Map<string, number>();
  private readonly watches = new Map<string, fs.FSWatcher>();
  private closed = false;

  /** The current clock: a verification that starts now is valid while its folders' events stay at or below it. */
  now(): number {
    return this.clock;
  }

  /**
   * Watches each folder not watched yet; returns false when one of them is not watched (missing, unwatchable or
   * over budget: its paths are stat-checked on every re-check).
   */
  watch(dirs: Iterable<string>): boolean {
    let all = true;
    for (const d of dirs) {
      if (this.watches.has(d)) continue;
      if (this.closed || this.watches.size >= MAX_WATCHED_FOLDERS) {
        all = false;
        continue;
      }
      try {
        const w = fs.watch(d, { persistent: false }, () => this.bump(d));
        w.on('error', () => this.lose(d));
        w.on('close', () => this.lose(d));
        this.watches.set(d, w);
        this.bump(d); // newly watched: changed for every verification that began before its watch
      } catch {
        all = false; // missing or unwatchable now: its paths are stat-checked, and it is tried again next time
      }
    }
    return all;
  }

  /** True when every folder is watched and none saw an event after `since`. */
  quietSince(dirs: readonly string[], since: number): boolean {
    for (const d of dirs) {
      if (!this.watches.has(d)) return false;
      if ((this.lastEvent.get(d) ?? Infinity) > since) return false;
    }
    return true;
  }

  /** Folders watched now (for tests and the benchmark). */
  get size(): number {
    return this.watches.size;
  }

  close(): void {
    this.closed = true;
    for (const w of this.watches.values()) w.close();
    this.watches.clear();
  }

  private bump(d: string): void {
    this.lastEvent.set(d, ++this.clock);
  }

  /** A watch that ended (its folder removed, an error): the folder counts as changed, and is watched again on demand. */
  private lose(d: string): void {
    if (this.closed) return;
    this.bump(d);
    const w = this.watches.get(d);
    this.watches.delete(d);
    try {
      w?.close();
    } catch {
      /* already closed */
    }
  }
}
