// What git runs or obeys from a worktree, read from the repository's own `.git/config` and the files it includes:
// `core.hooksPath` (git runs the hooks there on the user's next commit, outside every sandbox), `core.fsmonitor`,
// filter, diff and merge drivers, pagers, editors, credential helpers, and any other value that names a path in
// the workspace. The sandbox keeps each such path read-only, like `.git` itself, so a contained server cannot
// plant code that the user's own git later runs. A superset on purpose: every value token that reads as a path
// inside the workspace counts. Bounded: at most 16 included files, each at most 1 MiB. The same for every `.git`
// below the workspace's own (nestedGitPaths): a nested repository, a submodule or worktree's `gitdir:` file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { within } from './realpath';

const MAX_INCLUDES = 16;
const MAX_CONFIG_BYTES = 1024 * 1024;

/** `key = value` pairs of a git config text, keys as `section.subsection.name` lower-cased (subsection kept). */
export function gitConfigEntries(text: string): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  let section = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (sec) {
      section = sec[2] !== undefined ? `${sec[1].toLowerCase()}.${sec[2]}` : sec[1].toLowerCase();
      const rest = sec[3].trim();
      if (!rest) continue;
      // `[core] hooksPath = x` on one line
      const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(rest);
      if (kv) out.push({ key: `${section}.${kv[1].toLowerCase()}`, value: unquote(kv[2] ?? 'true') });
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (kv && section) out.push({ key: `${section}.${kv[1].toLowerCase()}`, value: unquote(kv[2] ?? 'true') });
  }
  return out;
}

function unquote(v: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < v.length) out += v[++i] === 'n' ? '\n' : v[i] === 't' ? '\t' : v[i];
    else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return out.trim();
}

/**
 * Workspace paths (real, absolute) that the repository's git configuration names as something git runs or reads
 * as configuration: the sandbox mounts each that exists read-only (one that does not exist yet is listed too; the
 * sandbox cannot mount it, and says so in its description).
 */
export function gitExecutedPaths(workspace: string, worktree = workspace, gitDir = path.join(worktree, '.git')): string[] {
  const out = new Set<string>();
  const seen = new Set<string>();
  const queue = [path.join(gitDir, 'config')];
  const add = (p: string) => {
    const abs = path.resolve(p);
    if (within(workspace, abs) && abs !== workspace && !within(gitDir, abs)) out.add(abs);
  };
  while (queue.length && seen.size < MAX_INCLUDES) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    let text: string;
    try {
      const st = fs.statSync(file);
      if (!st.isFile() || st.size > MAX_CONFIG_BYTES) continue;
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const { key, value } of gitConfigEntries(text)) {
      if (key === 'include.path' || (key.startsWith('includeif.') && key.endsWith('.path'))) {
        const target = path.resolve(path.dirname(file), value.replace(/^~(?=\/)/, '\0'));
        if (!target.includes('\0')) {
          queue.push(target);
          add(target);
        }
        continue;
      }
      if (key === 'core.hookspath') {
        add(path.resolve(worktree, value));
        continue;
      }
      // Commands and other paths: every token that reads as a relative or absolute path.
      for (const token of value.split(/[\s'"=:]+/)) {
        if (!token || /^[a-z][a-z0-9+.-]*:\/\//i.test(token)) continue;
        if (token.startsWith('/') || token.startsWith('./') || token.startsWith('../') || token.includes('/'))
          add(path.resolve(worktree, token));
      }
    }
  }
  return [...out].sort();
}

/** Entries a nested walk reads at most (folders, files, links); past it the walk stops and says so. */
export const MAX_NESTED_WALK = 200_000;

/**
 * Every `.git` below the workspace's own (a nested repository, a submodule's or worktree's `gitdir:` file, a
 * vendored checkout, a git dependency in `node_modules`), with what each one's configuration names for git to run,
 * and the folder a `gitdir:` file points to when it lies in the workspace: git run there by the user, VS Code (a
 * file of it opened in an editor) or an agent obeys them. Also every entry named in `nested` below the workspace's
 * root (outside `node_modules`): what tools obey in a folder of a monorepo as in the root (`.vscode`, `.claude`,
 * `AGENTS.md`, `.envrc`…; an entry with a `/` such as `.github/copilot-instructions.md` is looked for under its
 * first part). Links are not followed; in `node_modules` only `.git` and sockets are looked for; the workspace's own
 * `.git` is not walked. The same walk lists the Unix socket files it meets (`sockets`: a contained server may make
 * Unix sockets only while none it did not make is visible to it). `suffixes`: entries named by their ending, in any
 * folder, the root too. `truncated` when the walk met its bound.
 */
export function nestedGitPaths(
  workspace: string,
  nested: readonly string[] = [],
  suffixes: readonly string[] = [],
): { paths: string[]; sockets: string[]; truncated: boolean; socketsTruncated: boolean } {
  const out = new Set<string>();
  const sockets: string[] = [];
  const ownGit = path.join(workspace, '.git');
  // A nested repository's configuration, and a submodule's or worktree's: what git run there obeys.
  const obeyed = (gitDir: string, worktree: string) => {
    for (const p of gitExecutedPaths(workspace, worktree, gitDir)) out.add(p);
  };
  // The nested names by their first part: '' for the entry itself, else what to look for below it.
  const byFirst = new Map<string, string[]>();
  for (const n of nested) {
    const [first, ...rest] = n.split('/');
    byFirst.set(first, [...(byFirst.get(first) ?? []), rest.join('/')]);
  }
  // [folder, what is looked for there: 'all' (the workspace), 'modules' (.git and sockets), 'sockets' (in a .git)]
  const queue: [string, 'all' | 'modules' | 'sockets'][] = [[workspace, 'all']];
  let entries = 0;
  let all = 0;
  let socketsTruncated = false;
  while (queue.length) {
    const [dir, mode] = queue.pop()!;
    let list: fs.Dirent[];
    try {
      list = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    // A folder git takes for a repository by its shape (HEAD, objects, refs: a bare repository, a test fixture):
    // obeyed like a .git when git runs in it. Protected whole; in the workspace's root, what git obeys in it.
    if (mode !== 'sockets' && ['HEAD', 'objects', 'refs'].every((n) => list.some((d) => d.name === n))) {
      if (dir !== workspace) out.add(dir);
      else
        for (const n of ['HEAD', 'config', 'hooks', 'commondir', 'config.worktree'])
          if (list.some((d) => d.name === n)) out.add(path.join(dir, n));
      obeyed(dir, dir);
    }
    for (const d of list) {
      if (++all > MAX_SOCKET_WALK) {
        socketsTruncated = true;
        if (mode !== 'all') break;
      }
      if (mode === 'all' && ++entries > MAX_NESTED_WALK)
        return { paths: [...out].sort(), sockets, truncated: true, socketsTruncated: true };
      const abs = path.join(dir, d.name);
      if (d.isSocket()) {
        sockets.push(abs);
        continue;
      }
      if (mode !== 'sockets' && d.name === '.git') {
        if (dir === workspace) continue; // the workspace's own: hidden or protected as itself (its modules too)
        out.add(abs);
        if (d.isDirectory()) {
          obeyed(abs, dir);
          if (!socketsTruncated) queue.push([abs, 'sockets']); // git's fsmonitor socket lives there
        } else if (d.isFile()) {
          const target = gitdirOf(abs);
          if (target && within(workspace, target) && target !== workspace && !within(ownGit, target)) out.add(target);
          // A submodule's or worktree's git folder (inside the own .git too): its config is obeyed in `dir`.
          if (target) obeyed(target, dir);
        }
        continue;
      }
      // A name by its ending (`*.code-workspace`: VS Code runs the tasks and obeys the settings of the one it opens), root included.
      if (mode === 'all' && !d.isSymbolicLink() && suffixes.some((x) => d.name.endsWith(x))) out.add(abs);
      if (mode === 'all' && dir !== workspace && byFirst.has(d.name) && !d.isSymbolicLink()) {
        for (const rest of byFirst.get(d.name)!) {
          const p = rest ? path.join(abs, rest) : abs;
          if (!rest || fs.existsSync(p)) out.add(p);
        }
      }
      if (!d.isDirectory()) continue;
      const next = mode === 'all' ? (d.name === 'node_modules' ? 'modules' : 'all') : mode;
      if (next === 'all' || !socketsTruncated) queue.push([abs, next]);
    }
  }
  // Nothing inside the workspace's own .git: it is hidden (or protected whole) already, and a mount inside a hidden
  // folder cannot be made.
  return { paths: [...out].filter((p) => !within(ownGit, p)).sort(), sockets: sockets.sort(), truncated: false, socketsTruncated };
}

/**
 * The Unix socket files below `dir` (links not followed), reading at most `max` entries: `truncated` past it (then
 * it counts as holding one). For a folder a person shows a contained server (src/host/sandbox/contain.ts).
 */
export function socketsUnder(dir: string, max: number): { sockets: string[]; truncated: boolean } {
  const sockets: string[] = [];
  const queue = [dir];
  let n = 0;
  while (queue.length) {
    const d = queue.pop()!;
    let list: fs.Dirent[];
    try {
      list = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of list) {
      if (++n > max) return { sockets, truncated: true };
      if (e.isSocket()) sockets.push(path.join(d, e.name));
      else if (e.isDirectory()) queue.push(path.join(d, e.name));
    }
  }
  return { sockets, truncated: false };
}

/** Entries the socket search reads at most (node_modules and nested .git included); past it, it counts as one found. */
export const MAX_SOCKET_WALK = 400_000;

/** The folder a `gitdir: <path>` file names (resolved against the file's folder), when it reads as one. */
function gitdirOf(file: string): string | undefined {
  try {
    if (fs.statSync(file).size > 4096) return undefined;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(file, 'utf8'));
    return m ? path.resolve(path.dirname(file), m[1]) : undefined;
  } catch {
    return undefined;
  }
}
