// git after taking in, for the load guard (src/guard/CONTRACT.md, "git after taking in"): the files git obeys when
// it starts — configuration (system, global, every repository found from its working folder up, named by an
// argument or by a remote's local URL, their config.worktree, commondir and include.path) and hooks. git runs
// what they say (an alias `!…`, core.fsmonitor, core.hooksPath, a hook, a filter or a pager), so once this process
// took in what is not as approved, each of them that is in the workspace or a scratch folder and not as approved
// may hold only the table's `config_keys`, and no hook may be such a file (red team 19: a repository made in
// /tmp, a bare one laid out in the workspace, a `gitdir:` file, a ~/.gitconfig the process wrote). The table is
// shared with the Python guard (gitfiles.py).
import fs = require('node:fs');
import path = require('node:path');
import table from '../python/mcp_gate_guard_parts/command_lines.json';
import { F, real } from './base';
import { getConfig } from './manifest';
import { asApproved } from './taken';

const KEYS: readonly RegExp[] = table.git.config_keys.map((k) => new RegExp(k));
/** At most this many repositories and configuration files are looked at; more is not safe (bounded work). */
const MAX = 64;
const MAX_BYTES = 1024 * 1024;

const isDir = (p: string): boolean => {
  try {
    return F.statSync(p).isDirectory();
  } catch {
    return false;
  }
};
const isLink = (p: string): boolean => {
  try {
    return F.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
};
const isFile = (p: string): boolean => {
  try {
    return F.statSync(p).isFile();
  } catch {
    return false;
  }
};

/** The `section.name` keys (section and name lower-cased, a subsection kept) and values of a config text, or null when a line is none git and this parser read alike. */
export function configEntries(text: string): { key: string; value: string }[] | null {
  const out: { key: string; value: string }[] = [];
  let section: string | null = null;
  for (const raw of text.split('\n')) {
    let line = raw.replace(/\r$/, '').trim();
    if (!line || line[0] === '#' || line[0] === ';') continue;
    if (/\\$/.test(line.replace(/\\\\/g, ''))) return null; // (a value continued on the next line)
    const sec = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (sec) {
      const name = sec[1].toLowerCase();
      // ([section.sub] is the old spelling of [section "sub"])
      section = sec[2] !== undefined ? `${name}.${sec[2].replace(/\\(.)/g, '$1')}` : name;
      line = sec[3].trim();
      if (!line || line[0] === '#' || line[0] === ';') continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv || section === null) return null;
    out.push({ key: `${section}.${kv[1].toLowerCase()}`, value: unquote(kv[2] ?? 'true') });
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

/** A value naming a local path (a remote's URL, an include), made absolute from `from`; null for a URL of a host. */
function localPath(v: string, from: string, home: string | undefined): string | null {
  if (v.startsWith('file://')) return v.slice('file://'.length);
  if (v.startsWith('~/') && home) return path.join(home, v.slice(2));
  if (/^[A-Za-z][A-Za-z0-9+.-]*::?/.test(v) && !v.startsWith('/')) return null; // (scheme://, host:path, ext::)
  return path.resolve(from, v);
}

/**
 * Why git, started in `dir` with the words after its subcommand `args` and the environment `env`, may obey a file
 * that is not as approved — 'git, obeying <file> (<key>)' or 'git, with the hook <file>' — or null.
 */
export function gitObeysChanged(dir: string, args: readonly string[], env: ReadonlyMap<string, string>): string | null {
  const home = env.get('HOME');
  const configs: string[] = [];
  const gitDirs: string[] = [];
  const hookDirs: string[] = [];
  const seen = new Set<string>();
  const once = (p: string): boolean => (seen.has(p) ? false : (seen.add(p), true));
  const repo = (d: string): void => {
    const dot = path.join(d, '.git');
    if (isDir(dot)) gitDirs.push(dot);
    else if (isFile(dot)) {
      // (as git reads it: the whole text after "gitdir: ", only its trailing CR and LF taken off — red team 21)
      const t = (readText(dot) ?? '').replace(/[\r\n]+$/, '');
      if (t.startsWith('gitdir: ')) gitDirs.push(path.resolve(d, t.slice('gitdir: '.length)));
    }
    // (a bare repository: git takes a folder with HEAD and objects/ and refs/, or a commondir file, as one; a folder
    // with HEAD and a config is taken as one here too)
    const head = isFile(path.join(d, 'HEAD')) || isLink(path.join(d, 'HEAD')); // (a HEAD link into refs/: red team 21)
    if (head && (isDir(path.join(d, 'objects')) || isFile(path.join(d, 'commondir')) || isFile(path.join(d, 'config')))) gitDirs.push(d);
  };
  const global = env.get('GIT_CONFIG_GLOBAL');
  if (global !== undefined) configs.push(path.resolve(dir, global));
  else if (home)
    configs.push(path.join(home, '.gitconfig'), path.join(env.get('XDG_CONFIG_HOME') || path.join(home, '.config'), 'git', 'config'));
  configs.push(env.get('GIT_CONFIG_SYSTEM') ?? '/etc/gitconfig');
  if (env.get('GIT_DIR')) gitDirs.push(path.resolve(dir, env.get('GIT_DIR')!));
  for (let d = dir; ; d = path.dirname(d)) {
    repo(d);
    if (path.dirname(d) === d) break;
  }
  // (a local path names the repository git opens there, or at <path>.git: receive-pack's and upload-pack's own
  // lookup — red team 21, g04)
  const local = (p: string | null): void => {
    if (p === null) return;
    if (isDir(p)) repo(p);
    if (isDir(`${p}.git`)) repo(`${p}.git`);
  };
  for (const a of args) if (!a.startsWith('-')) local(localPath(a, dir, home));
  let g = 0;
  let c = 0;
  for (;;) {
    if (g < gitDirs.length) {
      const d = gitDirs[g++];
      if (!once(`d:${d}`)) continue;
      configs.push(path.join(d, 'config'), path.join(d, 'config.worktree'));
      hookDirs.push(path.join(d, 'hooks'));
      const common = readText(path.join(d, 'commondir'));
      if (common !== null) gitDirs.push(path.resolve(d, common.trim()));
      continue;
    }
    if (c >= configs.length) break;
    const f = configs[c++];
    if (!once(`c:${f}`) || !isFile(f)) continue;
    if (seen.size > MAX) return `git, obeying more than ${MAX} repositories and configuration files`;
    const approved = unchanged(f);
    const text = readText(f);
    const entries = text === null ? null : configEntries(text);
    if (entries === null) {
      if (!approved) return `git, obeying ${f}, which is not as approved and not plain git configuration`;
      continue;
    }
    for (const { key, value } of entries) {
      if (!approved && !KEYS.some((k) => k.test(key))) return `git, obeying ${f} (${key}), which is not as approved`;
      if (/^(include|includeif\..*)\.path$/.test(key)) {
        const p = localPath(value, path.dirname(f), home);
        if (p !== null) configs.push(p);
      } else if (key === 'core.hookspath') {
        const p = localPath(value, dir, home);
        if (p !== null) hookDirs.push(p);
      } else if (/^remote\..*\.(url|pushurl)$/.test(key)) {
        local(localPath(value, dir, home));
      }
    }
  }
  for (const h of hookDirs) {
    if (!once(`h:${h}`)) continue;
    let names: string[];
    try {
      names = F.readdirSync(h) as string[];
    } catch {
      continue;
    }
    for (const n of names)
      if (!n.endsWith('.sample') && !unchanged(path.join(h, n))) return `git, with the hook ${path.join(h, n)}, which is not as approved`;
  }
  return null;
}

/**
 * A file git obeys is as approved, or outside the workspace and scratch folders and not changed since the approval
 * began (a configuration the process's own git wrote in another folder — `git init /elsewhere`, then `git config`:
 * red team 21, g01 — is not, when the process can write it).
 */
function unchanged(p: string): boolean {
  if (!asApproved(p)) return false;
  const cfg = getConfig();
  const rp = real(p);
  if (rp === null || cfg === null || cfg.since === null) return true;
  try {
    const st = F.statSync(rp);
    if (st.ctimeMs <= cfg.since) return true;
    F.accessSync(rp, fs.constants.W_OK);
    return false; // (changed since, and writable by this process)
  } catch {
    return true;
  }
}

/** A file's text (at most MAX_BYTES), or null when it cannot be read or is larger. */
function readText(p: string): string | null {
  try {
    const rp = real(p);
    if (rp === null || F.statSync(rp).size > MAX_BYTES) return null;
    return F.readFileSync(rp, 'utf8');
  } catch {
    return null;
  }
}
