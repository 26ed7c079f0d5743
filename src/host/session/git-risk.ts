// Whether git could run something from a `.git` a contained server made (./new-repos.ts): its config keys (read by
// git itself, no includes followed) against a short list of inert ones, its hooks, a config or gitdir: file that is
// also another file, a `gitdir:` or a link to a place that is not a repository that was already there.
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
    return undefined; // gone again
  }
  if (st.isSymbolicLink()) return 'it is a link, which makes git use whatever it points to';
  if (st.isFile()) {
    if (st.size > 4096) return 'it is a file too large to be a gitdir: line';
    if (st.nlink > 1) return 'it is also another file (a hard link), which can change it unseen';
    // As git's read_gitfile: `gitdir: ` at the very start, the rest of the file the path, only line ends stripped (a
    // trailing space is part of the name: `../.git ` is another folder than `../.git`; red team 8, case 01).
    const text = fs.readFileSync(gitPath, 'utf8');
    const m = text.startsWith('gitdir: ') ? [text, text.slice('gitdir: '.length).replace(/[\r\n]+$/, '')] : null;
    if (!m || !m[1]) return undefined; // not a gitdir: file: git does not take it for a repository
    // As git reads it: joined as text and resolved by the system, a link before each `..` (path.resolve would drop
    // `link/..` as text and name another folder than git uses; red team 7, case 10).
    const target = path.isAbsolute(m[1]) ? m[1] : `${path.dirname(gitPath)}/${m[1]}`;
    let real: string;
    try {
      real = fs.realpathSync.native(target);
    } catch {
      return `its gitdir: names ${m[1]}, which does not exist yet`;
    }
    for (const k of known) if (real === k || real.startsWith(k + path.sep)) return undefined;
    return `its gitdir: names ${m[1]}, which is not a repository that was there before the server started`;
  }
  if (!st.isDirectory()) return undefined;
  return gitDirRisk(gitPath);
}

/** Why git could run something from the git folder `dir` (a `.git`, or a folder of a bare repository's shape). */
export async function gitDirRisk(dir: string): Promise<string | undefined> {
  const gitPath = dir;
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
    if (c.nlink > 1) return 'its config is also another file (a hard link), which can change it unseen';
    size = c.size;
  } catch {
    return undefined; // no config (yet): looked at again when it is written
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
    execFile(
      'git',
      ['config', '--file', file, '--no-includes', '--name-only', '--list', '-z'],
      {
        timeout: 5000,
        maxBuffer: 1 << 20,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' },
      },
      (err, stdout) => {
        if (err) {
          // No git on this machine: nothing here can make git run anything; else it is unreadable to git.
          resolve((err as NodeJS.ErrnoException).code === 'ENOENT' ? [] : undefined);
          return;
        }
        resolve(
          stdout
            .split('\0')
            .filter(Boolean)
            .map((k) => {
              const first = k.indexOf('.');
              const last = k.lastIndexOf('.');
              return first === last
                ? k.toLowerCase()
                : `${k.slice(0, first).toLowerCase()}${k.slice(first, last)}${k.slice(last).toLowerCase()}`;
            }),
        );
      },
    );
  });
}
