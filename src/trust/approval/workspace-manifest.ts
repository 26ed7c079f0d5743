// What the workspace was when a server was approved: the content digest of every regular file of the workspace
// (the workspace's own `.git` folder left out), recorded with the approval of a server whose Node or Python
// processes run under the load guard (src/guard/). The guard checks each file that becomes code against it when
// it loads: a file whose content differs, or that was not there, fails to load. The manifest is kept beside the
// approval store, named by its own digest (`manifests/<sha256>.json`), and the record carries that digest: a
// manifest that is missing or does not hash to it is refused at start, never trusted. A file larger than
// MAX_HASHED_BYTES is recorded unhashed (`TOO_LARGE`): it may be there, but it can never load as code.
// The content itself is kept too (`blobs/<aa>/<sha256>`, each file once whatever approvals share it): every file
// of a server that runs on the approved snapshot (it is shown that copy, never the live files), and the smaller
// files of a guarded server (a refused file is shown as a diff against what was approved).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import writeFileAtomic from 'write-file-atomic';

/** The folder of manifests inside the approval store's folder. */
export const MANIFEST_DIR = 'manifests';
/** A file larger than this is recorded without its digest: it never loads as code under the guard. */
export const MAX_HASHED_BYTES = 256 * 1024 * 1024;
/** Bounds of one manifest: entries walked (files, folders, links) and bytes hashed. */
export const MAX_MANIFEST_ENTRIES = 1_000_000;
export const MAX_MANIFEST_BYTES = 8 * 1024 * 1024 * 1024;
/** The folder of kept file contents inside the approval store's folder. */
export const BLOB_DIR = 'blobs';
/** What a guarded server's approval keeps of each file, for diffs: files up to this size. */
export const DIFF_BLOB_BYTES = 1024 * 1024;
/** The value recorded for a file too large to hash. */
export const TOO_LARGE = 'too-large';

export class ManifestError extends Error {}

/** What is recorded of a file too large to hash: a change of any of these is a change of the file. */
export interface LargeFile {
  size: number;
  mtimeNs: string;
  ino: string;
}

export interface WorkspaceManifest {
  version: 1;
  /** Real path of the workspace. */
  root: string;
  /** Workspace-relative POSIX path → sha256 hex (or TOO_LARGE). */
  files: Record<string, string>;
  /** Symbolic links: workspace-relative path → link text (not followed). */
  links?: Record<string, string>;
  /** Files with an execute bit. */
  exec?: string[];
  /** Each TOO_LARGE file's size, modification time (ns) and inode at approval: the guards compare them, as it is not hashed. */
  large?: Record<string, LargeFile>;
  /**
   * Folders holding no file or link at approval (the others are known from `files` and `links`): a folder's name is
   * content to the guards, so a new empty one is a change and an approved one is not.
   */
  folders?: string[];
  takenAt: string;
}

/** Where the content of a kept file is. */
export function blobPath(storeDir: string, sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new ManifestError(`a malformed content digest (${sha256.slice(0, 80)})`);
  return path.join(storeDir, BLOB_DIR, sha256.slice(0, 2), sha256);
}

/** What to keep while hashing: the content of every file up to `maxBytes`, in the store at `storeDir`. */
export interface KeepContent {
  storeDir: string;
  maxBytes: number;
}

/** What an approval record carries about its manifest. */
export interface ManifestRef {
  /** sha256 hex of the manifest file's bytes. */
  sha256: string;
  files: number;
  takenAt: string;
}

let tmpCount = 0;
/** Files up to this size are read whole once (hashed, and kept from the same bytes); larger ones are streamed. */
const IN_MEMORY_BYTES = 8 * 1024 * 1024;

/** Reads a file in chunks into the hash (and `out` when given); returns the digest. */
async function streamHash(abs: string, out?: fs.promises.FileHandle): Promise<string> {
  const h = createHash('sha256');
  const f = await fs.promises.open(abs, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  try {
    const buf = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await f.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      if (out) await out.write(buf, 0, bytesRead);
    }
  } finally {
    await f.close();
  }
  return h.digest('hex');
}

/**
 * Hashes a file, and with `keep` keeps its content in the store when no file of that content is kept yet: a small
 * file from the bytes it was hashed from, a large one copied and hashed again (a file that changed in between is
 * refused). Content already kept is not written again.
 */
async function hashFile(abs: string, size: number, keep?: KeepContent): Promise<string> {
  if (size > MAX_HASHED_BYTES) return TOO_LARGE;
  let data: Buffer | undefined;
  let sha: string;
  if (size <= IN_MEMORY_BYTES) {
    const f = await fs.promises.open(abs, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
    try {
      data = await f.readFile();
    } finally {
      await f.close();
    }
    sha = createHash('sha256').update(data).digest('hex');
  } else sha = await streamHash(abs);
  if (!keep || size > keep.maxBytes) return sha;
  const to = blobPath(keep.storeDir, sha);
  if (fs.existsSync(to)) return sha;
  const tmp = path.join(keep.storeDir, BLOB_DIR, `.tmp-${process.pid}-${Date.now()}-${tmpCount++}`);
  try {
    fs.mkdirSync(path.dirname(tmp), { recursive: true, mode: 0o700 });
    const out = await fs.promises.open(tmp, 'wx', 0o600);
    let again: string;
    try {
      if (data) {
        await out.writeFile(data);
        again = sha;
      } else again = await streamHash(abs, out);
    } finally {
      await out.close();
    }
    if (again !== sha) throw new ManifestError(`${abs} changed while it was being recorded; approve it again`);
    fs.mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
    await fs.promises.chmod(tmp, 0o400);
    await fs.promises.rename(tmp, to);
  } catch (e) {
    await fs.promises.rm(tmp, { force: true });
    if (e instanceof ManifestError) throw e;
    throw new ManifestError(`the content of ${abs} cannot be kept in ${path.dirname(to)}: ${(e as Error).message}`);
  }
  return sha;
}

/**
 * Walks the workspace and hashes every regular file, a few at a time and asynchronously (the extension host stays
 * responsive while a large workspace is read). Links are not followed (a load through one is checked at its
 * target's real path); special files are left out. Rejects with ManifestError naming the bound or the file that
 * cannot be read.
 */
export async function takeManifest(workspace: string, now: () => Date = () => new Date(), keep?: KeepContent): Promise<WorkspaceManifest> {
  // (the time the measure began: a file whose metadata changed after it, even to content as recorded, is told apart
  // by the guards by its ctime — src/guard/CONTRACT.md)
  const takenAt = now().toISOString();
  const root = fs.realpathSync(workspace);
  const files: Record<string, string> = {};
  const links: Record<string, string> = {};
  const exec: string[] = [];
  const large: Record<string, LargeFile> = {};
  let entries = 0;
  let bytes = 0;
  const toHash: { rel: string; abs: string; size: number }[] = [];
  const dirs: string[] = [];
  const queue: string[] = [''];
  while (queue.length) {
    const relDir = queue.pop()!;
    const dir = relDir ? path.join(root, relDir) : root;
    let list: fs.Dirent[];
    try {
      list = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch (e) {
      throw new ManifestError(
        `the folder ${dir} cannot be read (${(e as Error).message}): MCP Gate records every file of the workspace with the approval`,
      );
    }
    for (const d of list) {
      if (++entries > MAX_MANIFEST_ENTRIES)
        throw new ManifestError(
          `the workspace ${root} holds more than ${MAX_MANIFEST_ENTRIES} files and folders, more than an approval records`,
        );
      const rel = relDir ? `${relDir}/${d.name}` : d.name;
      if (!relDir && d.name === '.git') continue;
      if (d.isDirectory()) {
        queue.push(rel);
        dirs.push(rel.split(path.sep).join('/'));
      } else if (d.isFile()) toHash.push({ rel, abs: path.join(root, rel), size: 0 });
      else if (d.isSymbolicLink()) {
        try {
          links[rel.split(path.sep).join('/')] = await fs.promises.readlink(path.join(root, rel));
        } catch {
          // removed while walking
        }
      }
    }
  }
  const one = async (t: { rel: string; abs: string }) => {
    try {
      const st = await fs.promises.lstat(t.abs, { bigint: true });
      if (!st.isFile()) return;
      const size = Number(st.size);
      bytes += Math.min(size, MAX_HASHED_BYTES + 1);
      if (bytes > MAX_MANIFEST_BYTES)
        throw new ManifestError(
          `the workspace ${root} holds more than ${MAX_MANIFEST_BYTES / 1024 ** 3} GiB of files, more than an approval records`,
        );
      const rel = t.rel.split(path.sep).join('/');
      files[rel] = await hashFile(t.abs, size, keep);
      if (files[rel] === TOO_LARGE) large[rel] = { size, mtimeNs: String(st.mtimeNs), ino: String(st.ino) };
      if (Number(st.mode) & 0o111) exec.push(rel);
    } catch (e) {
      if (e instanceof ManifestError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ELOOP') return; // removed or replaced by a link while walking
      throw new ManifestError(
        `${t.abs} cannot be read (${(e as Error).message}): MCP Gate records every file of the workspace with the approval`,
      );
    }
  };
  let next = 0;
  const lane = async () => {
    while (next < toHash.length) await one(toHash[next++]);
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  const sorted: Record<string, string> = {};
  for (const k of Object.keys(files).sort()) sorted[k] = files[k];
  const sortedLinks: Record<string, string> = {};
  for (const k of Object.keys(links).sort()) sortedLinks[k] = links[k];
  const sortedLarge: Record<string, LargeFile> = {};
  for (const k of Object.keys(large).sort()) sortedLarge[k] = large[k];
  return {
    version: 1,
    root,
    files: sorted,
    links: sortedLinks,
    exec: exec.sort(),
    ...(Object.keys(large).length ? { large: sortedLarge } : {}),
    folders: emptyFolders(dirs, files, links),
    takenAt,
  };
}

/** The folders of `dirs` that hold no file and no link (at any depth), sorted. */
function emptyFolders(dirs: string[], files: Record<string, string>, links: Record<string, string>): string[] {
  const holding = new Set<string>();
  for (const k of [...Object.keys(files), ...Object.keys(links)])
    for (let i = k.indexOf('/'); i > 0; i = k.indexOf('/', i + 1)) holding.add(k.slice(0, i));
  return dirs.filter((d) => !holding.has(d)).sort();
}

/** Writes a manifest beside the store (named by its digest) and returns the reference an approval keeps. */
export async function saveManifest(storeDir: string, m: WorkspaceManifest): Promise<ManifestRef> {
  const body = `${JSON.stringify(m)}\n`;
  const sha256 = createHash('sha256').update(body).digest('hex');
  const dir = path.join(storeDir, MANIFEST_DIR);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${sha256}.json`);
  if (!fs.existsSync(file)) await writeFileAtomic(file, body, { mode: 0o600, fsync: true });
  return { sha256, files: Object.keys(m.files).length, takenAt: m.takenAt };
}

/** Reads the manifest an approval refers to, verified against its digest. Throws ManifestError. */
export function loadManifest(storeDir: string, ref: ManifestRef): WorkspaceManifest {
  if (!/^[0-9a-f]{64}$/.test(ref.sha256)) throw new ManifestError(`the approval names a malformed manifest digest`);
  const file = path.join(storeDir, MANIFEST_DIR, `${ref.sha256}.json`);
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    throw new ManifestError(`the record of the workspace as approved (${file}) cannot be read: ${(e as Error).message}`);
  }
  if (createHash('sha256').update(data).digest('hex') !== ref.sha256)
    throw new ManifestError(`the record of the workspace as approved (${file}) does not match its approval (it was changed)`);
  try {
    const m = JSON.parse(data.toString('utf8')) as WorkspaceManifest;
    if (m.version !== 1 || typeof m.root !== 'string' || typeof m.files !== 'object' || m.files === null) throw new Error('unknown shape');
    if ((m.links !== undefined && (typeof m.links !== 'object' || m.links === null)) || (m.exec !== undefined && !Array.isArray(m.exec)))
      throw new Error('unknown shape');
    if (m.folders !== undefined && (!Array.isArray(m.folders) || m.folders.some((f) => typeof f !== 'string')))
      throw new Error('unknown shape');
    return m;
  } catch (e) {
    throw new ManifestError(`the record of the workspace as approved (${file}) cannot be parsed: ${(e as Error).message}`);
  }
}

/** A file the load guard refused to load: changed since approval, not there then, or written outside the workspace. */
export interface GuardRefusal {
  /** Workspace-relative path, or the absolute path of a file outside the workspace. */
  file: string;
  why: 'changed' | 'new' | 'scratch' | 'sink';
  at: string;
  /**
   * The rule that refused the file, when the server was not loading it itself (a library found beside native code
   * it loaded, a walk's size bound): said instead of the words of `why`.
   */
  rule?: string;
  /** The file is in the server's own home, which MCP Gate keeps between its starts: approving again cannot help. */
  home?: true;
  /**
   * The server did not load the file: it took it in (read it, or looked at it) and then turned text into code —
   * `how` says which way (eval, exec, new Function…).
   */
  took?: true;
  how?: string;
}

/** What a refusal means, in the words the gate's reason, the log and the session use. */
/**
 * A refusal by a rule that approving again cannot satisfy (a guard's rule text ends with this: src/guard/CONTRACT.md):
 * the hint is to fix what it names, not to approve.
 */
export const approvingCannotHelp = (r: GuardRefusal): boolean => !!r.rule && r.rule.includes('approving again does not change this');

/**
 * What the server (`who`: `"s"`, or `it`) did that the guard refused, as a clause: `"s" tried to load it, the load
 * guard refused it`; for text turned into code after it took the file in, that.
 */
export function refusalAct(r: GuardRefusal, who: string, when = ''): string {
  if (r.rule) return `the load guard refused what ${who} was loading${when}`;
  if (r.took)
    return `${who} took it in${when} and then turned text into code${r.how ? ` (${r.how.split(' (')[0]})` : ''}, which the load guard refused, since that text may come from it`;
  return `${who} tried to load it${when}, the load guard refused it`;
}

export function refusalWords(r: GuardRefusal): string {
  if (r.home)
    return `${r.file} is in the server's own home, which MCP Gate keeps between its starts, and is no file that was approved; approving again does not remove it (delete it)`;
  if (r.rule) return `${r.file}: ${r.rule}`;
  if (r.why === 'sink')
    return `${r.file} asked for a module that runs code it is given (vm, child_process, …) by a name computed at run time, or for a program started with settings in its environment that make it load code no guard sees, which its approval does not cover`;
  return r.why === 'changed'
    ? `${r.file} changed since it was approved`
    : r.why === 'new'
      ? `${r.file} was not there when it was approved`
      : `${r.file} was written outside the workspace and is no file that was approved`;
}

/** Kept content and records no approval refers to are removed once they are this old (an approval in progress is younger). */
export const PRUNE_AFTER_MS = 60 * 60 * 1000;

/**
 * Removes the records of workspaces (`manifests/`) and the kept contents (`blobs/`) that no approval in the store
 * refers to any more, when older than PRUNE_AFTER_MS (a record being made by another process is newer). `referenced`
 * are the manifests the store's records name; a referenced manifest that cannot be read keeps every blob (nothing
 * is removed on a failed read). Best effort: returns what was removed.
 */
export async function pruneKept(
  storeDir: string,
  referenced: readonly ManifestRef[],
  now = Date.now(),
): Promise<{ manifests: number; blobs: number }> {
  const removed = { manifests: 0, blobs: 0 };
  const keepManifests = new Set(referenced.map((r) => r.sha256));
  const keepBlobs = new Set<string>();
  for (const ref of referenced) {
    try {
      for (const sha of Object.values(loadManifest(storeDir, ref).files)) keepBlobs.add(sha);
    } catch {
      return removed; // unreadable: what it needs is unknown, so nothing goes
    }
  }
  const old = (file: string) => {
    try {
      return now - fs.lstatSync(file).mtimeMs > PRUNE_AFTER_MS;
    } catch {
      return false;
    }
  };
  const mdir = path.join(storeDir, MANIFEST_DIR);
  for (const name of fs.existsSync(mdir) ? await fs.promises.readdir(mdir) : []) {
    const m = /^([0-9a-f]{64})\.json$/.exec(name);
    if (!m || keepManifests.has(m[1]) || !old(path.join(mdir, name))) continue;
    await fs.promises.rm(path.join(mdir, name), { force: true });
    removed.manifests++;
  }
  const bdir = path.join(storeDir, BLOB_DIR);
  for (const sub of fs.existsSync(bdir) ? await fs.promises.readdir(bdir) : []) {
    const dir = path.join(bdir, sub);
    if (sub.startsWith('.tmp-')) {
      if (old(dir)) await fs.promises.rm(dir, { force: true });
      continue;
    }
    if (!/^[0-9a-f]{2}$/.test(sub)) continue;
    for (const name of await fs.promises.readdir(dir)) {
      if (keepBlobs.has(name) || !old(path.join(dir, name))) continue;
      await fs.promises.rm(path.join(dir, name), { force: true });
      removed.blobs++;
    }
  }
  return removed;
}
