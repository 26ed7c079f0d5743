// The verified copy of an execution closure: every pinned file is read once, hashed, compared with the digest
// the approval covers, and written from those same bytes into a private folder (0700, files read-only). Each
// package folder of the closure (its roots) is copied as a tree — its pinned files, its links, and an empty
// placeholder for every path the sandbox mounts inside it (protected folders, grants) — and the sandbox mounts
// that tree read-only over the workspace folder: a file renamed over, unlinked, added or checked out on the host
// while the server runs never reaches it (a per-file bind would be detached by a rename on the host), and the
// server cannot write into its own code folders. Pinned files outside the roots (settings above them, files a
// plan names) are mounted one by one. What runs is byte for byte what was approved; a file that no longer
// matches refuses the start. A server that runs on the approved snapshot is shown the whole workspace as it was
// approved instead (snapshotCopy), made from the content its approval kept, never from the live files.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { PinnedFile } from '../../trust/plan/closure-files';
import { MAX_CLOSURE_FILE_BYTES } from '../../trust/plan/closure-files';
import type { SandboxOverlay } from './mounts';
import { blobPath, MAX_HASHED_BYTES, TOO_LARGE, type WorkspaceManifest } from '../../trust/approval/workspace-manifest';

export class CopyRefused extends Error {}

export interface ClosureCopy {
  dir: string;
  overlays: SandboxOverlay[];
  remove(): void;
}

function readExact(file: string, limit: number): { data: Buffer; mode: number } {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new CopyRefused(`${file} is no longer a regular file`);
    if (st.size > limit) throw new CopyRefused(`${file} grew past ${limit} bytes`);
    const buf = Buffer.alloc(st.size + 1);
    let total = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > st.size) throw new CopyRefused(`${file} changed while it was read`);
    }
    return { data: buf.subarray(0, total), mode: st.mode };
  } finally {
    fs.closeSync(fd);
  }
}

/** What a copy is made from: the pinned files, and (when the approval has them) its links and package folders. */
export interface ClosureToCopy {
  files: Readonly<Record<string, PinnedFile>>;
  links?: Readonly<Record<string, string>>;
  roots?: readonly string[];
}

const within = (p: string, dir: string) => dir === '.' || p === dir || p.startsWith(`${dir}/`);

/**
 * Copies and verifies the closure of `workspace`. `mountPoints` are absolute paths the sandbox mounts over the
 * copy (they get an empty placeholder of the same kind inside a copied tree). Throws CopyRefused.
 */
export function copyClosure(workspace: string, closure: ClosureToCopy, mountPoints: readonly string[] = []): ClosureCopy {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-run-'));
  fs.chmodSync(dir, 0o700);
  const remove = () => {
    writable(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const overlays: SandboxOverlay[] = [];
  // Outermost roots only (a root inside another is part of its tree).
  const roots = [...new Set(closure.roots ?? [])].sort().filter((r, i, all) => !all.slice(0, i).some((o) => within(r, o)));
  const treeOf = (rel: string) => roots.findIndex((r) => within(rel, r));
  // The workspace's `.git` is hidden in the sandbox (src/host/sandbox/contain.ts): what of it is pinned is checked here
  // and never mounted.
  const isGit = (rel: string) => rel === '.git' || rel.startsWith('.git/');
  const rootOf = (rel: string) => (isGit(rel) ? -1 : treeOf(rel));
  const treeDir = (i: number) => path.join(dir, `tree-${i}`);
  const inTree = (i: number, rel: string) =>
    path.join(treeDir(i), ...(roots[i] === '.' ? rel : rel.slice(roots[i].length + 1)).split('/').filter(Boolean));
  try {
    roots.forEach((r, i) => {
      fs.mkdirSync(treeDir(i), { mode: 0o700 });
      overlays.push({ source: treeDir(i), target: r === '.' ? workspace : path.join(workspace, ...r.split('/')) });
    });
    let n = 0;
    for (const [rel, pinned] of Object.entries(closure.files)) {
      const source = path.join(workspace, ...rel.split('/'));
      let read;
      try {
        read = readExact(source, MAX_CLOSURE_FILE_BYTES);
      } catch (e) {
        throw e instanceof CopyRefused ? e : new CopyRefused(`${rel} cannot be read: ${(e as Error).message}`);
      }
      const digest = createHash('sha256').update(read.data).digest('hex');
      if (digest !== pinned.sha256 || read.data.length !== pinned.size) {
        throw new CopyRefused(`${rel} is not the file that was approved (it changed after the gate checked it)`);
      }
      if (isGit(rel)) continue;
      const root = rootOf(rel);
      const copy = root >= 0 ? inTree(root, rel) : path.join(dir, String(n++));
      fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o700 });
      fs.writeFileSync(copy, read.data, { mode: 0o600, flag: 'wx' });
      fs.chmodSync(copy, read.mode & 0o111 ? 0o500 : 0o400);
      if (root < 0) overlays.push({ source: copy, target: source });
    }
    for (const [rel, target] of Object.entries(closure.links ?? {})) {
      const root = rootOf(rel);
      if (root < 0) continue; // a link outside every root is the workspace's own (mounted live, read as pinned)
      const at = inTree(root, rel);
      fs.mkdirSync(path.dirname(at), { recursive: true, mode: 0o700 });
      if (target.startsWith('<') && target.endsWith('>'))
        fs.writeFileSync(at, '', { mode: 0o400, flag: 'wx' }); // a fifo, socket or device: not code
      else fs.symlinkSync(target, at);
    }
    for (const p of mountPoints) {
      const rel = path.relative(workspace, p).split(path.sep).join('/');
      if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const root = treeOf(rel || '.');
      if (root < 0) continue;
      const at = rel === '' ? treeDir(root) : inTree(root, rel);
      if (!fs.existsSync(at)) placeholder(p, at);
    }
    // Read-only folders: the server cannot add a file to its own code, even inside its private copy.
    for (let i = 0; i < roots.length; i++) chmodTree(treeDir(i));
  } catch (e) {
    remove();
    throw e;
  }
  return { dir, overlays, remove };
}

/**
 * Removes the unfinished snapshot trees of processes that ended (their pid is in the name), and finished trees no
 * start has shown for TREE_IDLE_MS.
 */
function pruneRuns(runs: string, now = Date.now()): void {
  for (const name of fs.readdirSync(runs)) {
    if (name.startsWith('tree-')) {
      let idle = false;
      try {
        idle = now - fs.statSync(path.join(runs, name, COMPLETE)).mtimeMs > TREE_IDLE_MS;
      } catch {
        idle = false;
      }
      if (idle) {
        writable(path.join(runs, name));
        fs.rmSync(path.join(runs, name), { recursive: true, force: true });
      }
      continue;
    }
    const m = /^(?:snapshot|building)-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue; // still running: its servers may be using it
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    const dir = path.join(runs, name);
    writable(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** An empty stand-in at `at` for what the sandbox mounts from `host` there: a folder, or a file for a file. */
function placeholder(host: string, at: string): void {
  let isDir = true;
  try {
    isDir = fs.statSync(host).isDirectory();
  } catch {
    // missing on the host: a folder placeholder (the sandbox mounts what exists)
  }
  fs.mkdirSync(isDir ? at : path.dirname(at), { recursive: true, mode: 0o700 });
  if (!isDir) fs.writeFileSync(at, '', { mode: 0o400, flag: 'wx' });
}

/** Gives the folders back their write bit, so the copy can be removed by a user who is not root. */
function writable(d: string): void {
  try {
    fs.chmodSync(d, 0o700);
    for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) writable(path.join(d, e.name));
  } catch {
    // gone already
  }
}

function chmodTree(d: string): void {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) chmodTree(path.join(d, e.name));
  fs.chmodSync(d, 0o500);
}

/**
 * The approved snapshot of a workspace (a server that runs on it: src/trust/plan/closure.ts snapshotClosureOf),
 * made from the content its approval kept (src/trust/approval/workspace-manifest.ts): every recorded file, each
 * verified against its digest, linked (or copied) into a private tree beside the store that the sandbox mounts
 * read-only over the workspace; the recorded links; an empty placeholder for every path mounted inside it. A file
 * too large to record is left out. The tree is made once per record and set of mount points (`runs/tree-<key>`,
 * finished by an atomic rename) and shown again at later starts; unused for 30 days, it is removed. Throws
 * CopyRefused naming a kept file that is missing or does not match.
 */
export function snapshotCopy(
  workspace: string,
  storeDir: string,
  manifest: WorkspaceManifest,
  manifestSha: string,
  mountPoints: readonly string[] = [],
): ClosureCopy {
  const runs = path.join(storeDir, 'runs');
  fs.mkdirSync(runs, { recursive: true, mode: 0o700 });
  pruneRuns(runs);
  // One tree per record and set of mount points, made and verified once, then shown read-only at every start.
  const points = mountPoints
    .map((p) => path.relative(workspace, p).split(path.sep).join('/'))
    .filter((r) => r !== '' && !r.startsWith('..') && !path.isAbsolute(r));
  const kinds = [...new Set(points)].sort().map((r) => `${r}:${kindOf(path.join(workspace, ...r.split('/')))}`);
  const key = createHash('sha256')
    .update(JSON.stringify([manifestSha, kinds]))
    .digest('hex')
    .slice(0, 32);
  const ready = path.join(runs, `tree-${key}`);
  const shown = (d: string): ClosureCopy => ({
    dir: d,
    overlays: [{ source: path.join(d, 'tree'), target: workspace }],
    remove: () => undefined,
  });
  if (fs.existsSync(path.join(ready, COMPLETE))) {
    touch(path.join(ready, COMPLETE));
    return shown(ready);
  }
  const dir = fs.mkdtempSync(path.join(runs, `building-${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  const tree = path.join(dir, 'tree');
  const remove = () => {
    writable(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const at = (rel: string) => path.join(tree, ...rel.split('/'));
  try {
    fs.mkdirSync(tree, { mode: 0o700 });
    layOutKeptFiles(storeDir, manifest, at);
    for (const [rel, target] of Object.entries(manifest.links ?? {})) {
      if (rel.split('/').some((part) => part === '' || part === '.' || part === '..'))
        throw new CopyRefused(`the record of the workspace names ${JSON.stringify(rel)}, which is no path inside it`);
      fs.mkdirSync(path.dirname(at(rel)), { recursive: true, mode: 0o700 });
      fs.symlinkSync(target, at(rel));
    }
    for (const p of mountPoints) {
      const rel = path.relative(workspace, p).split(path.sep).join('/');
      if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const to = at(rel);
      let there = true;
      try {
        fs.lstatSync(to);
      } catch {
        there = false;
      }
      if (!there) placeholder(p, to);
    }
    chmodTree(tree);
    fs.writeFileSync(path.join(dir, COMPLETE), '', { mode: 0o400 });
  } catch (e) {
    remove();
    if (e instanceof CopyRefused) throw e;
    throw new CopyRefused(`the workspace as approved cannot be laid out in ${dir}: ${(e as Error).message}`);
  }
  try {
    fs.renameSync(dir, ready);
  } catch {
    // another start made the same tree at the same time: that one is shown
    remove();
    if (!fs.existsSync(path.join(ready, COMPLETE))) throw new CopyRefused(`the workspace as approved cannot be laid out in ${ready}`);
  }
  return shown(ready);
}

/**
 * Writes every file the record of the workspace kept into `tree` (at `at(rel)`), each verified against its digest:
 * linked to its copy in the store (read-only), or copied when it is executable or cannot be linked. A file too
 * large to record is left out. Throws CopyRefused naming a kept file that is missing or does not match.
 */
function layOutKeptFiles(storeDir: string, manifest: WorkspaceManifest, at: (rel: string) => string): void {
  const exec = new Set(manifest.exec ?? []);
  for (const [rel, sha] of Object.entries(manifest.files)) {
    if (sha === TOO_LARGE) continue;
    if (rel.split('/').some((part) => part === '' || part === '.' || part === '..'))
      throw new CopyRefused(`the record of the workspace names ${JSON.stringify(rel)}, which is no path inside it`);
    let blob: string;
    try {
      blob = blobPath(storeDir, sha);
    } catch (e) {
      throw new CopyRefused(`the record of the workspace as approved is malformed at ${rel}: ${(e as Error).message}`);
    }
    let read;
    try {
      read = readExact(blob, MAX_HASHED_BYTES);
    } catch (e) {
      throw new CopyRefused(`the copy of ${rel} its approval kept (${blob}) cannot be read: ${(e as Error).message}`);
    }
    if (createHash('sha256').update(read.data).digest('hex') !== sha)
      throw new CopyRefused(`the copy of ${rel} its approval kept (${blob}) does not match it (changed in the store)`);
    const to = at(rel);
    fs.mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
    if (exec.has(rel)) {
      fs.writeFileSync(to, read.data, { mode: 0o500, flag: 'wx' });
      continue;
    }
    try {
      fs.linkSync(blob, to); // the same bytes, read-only (0400) in the store
    } catch {
      fs.writeFileSync(to, read.data, { mode: 0o400, flag: 'wx' });
    }
  }
}

/** Marks a snapshot tree made whole (a tree without it is one a start did not finish). */
const COMPLETE = '.complete';
/** A snapshot tree no start showed for this long is removed (its record may still be approved: made again). */
const TREE_IDLE_MS = 30 * 24 * 60 * 60 * 1000;

function kindOf(p: string): string {
  try {
    return fs.statSync(p).isDirectory() ? 'dir' : 'file';
  } catch {
    return 'missing';
  }
}

function touch(file: string): void {
  try {
    const now = new Date();
    fs.utimesSync(file, now, now);
  } catch {
    // best effort: only pruning reads it
  }
}
