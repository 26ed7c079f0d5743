// Resolves a path the way the kernel will when the server runs, without relying on the gate's own process
// state: `/proc/self/cwd` and `/proc/thread-self/cwd` mean the server's working folder (not the gate's),
// `/proc/self/root` means `/`, symlinks are followed one component at a time (so a spelling longer than
// PATH_MAX, `..` after a symlink, or a loop all resolve to what the kernel would open), and a missing component
// ends the walk with the part that exists. Any other path under /proc or /dev/fd names something that is not a
// file MCP Gate can pin, and is refused.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A path MCP Gate cannot pin (a process file, a descriptor, a symlink loop). */
export class UnpinnablePathError extends Error {}

export interface Resolved {
  /** The physical path (every symlink followed); for a missing path, the existing prefix plus the rest as written. */
  real: string;
  exists: boolean;
  /** The deepest folder of `real` that exists. */
  existingDir: string;
}

const MAX_LINK_HOPS = 40;

function isUnder(p: string, prefix: string): boolean {
  return p === prefix || p.startsWith(prefix + '/');
}

/** Rewrites the /proc spellings that name the server's own folders; refuses the ones that name anything else. */
export function rewriteProcPath(p: string, cwd: string): string {
  for (const self of ['/proc/self', '/proc/thread-self']) {
    if (isUnder(p, `${self}/cwd`)) return cwd + p.slice(`${self}/cwd`.length);
    if (isUnder(p, `${self}/root`)) return '/' + p.slice(`${self}/root`.length).replace(/^\/+/, '');
  }
  if (isUnder(p, '/proc') || isUnder(p, '/dev/fd') || /^\/dev\/std(in|out|err)$/.test(p)) {
    throw new UnpinnablePathError(`${p} is a process or descriptor path whose target MCP Gate cannot pin`);
  }
  return p;
}

/** Physical resolution of `p` (absolute, or relative to `cwd`), component by component. */
export function resolvePhysical(p: string, cwd: string): Resolved {
  let pending = (path.isAbsolute(p) ? p : `${cwd}/${p}`).split('/').filter((c) => c !== '' && c !== '.');
  let current = '/';
  let hops = 0;
  while (pending.length) {
    const part = pending.shift()!;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = current === '/' ? `/${part}` : `${current}/${part}`;
    // Process paths are decided on the spelling reached so far, before anything is read through them.
    if (isUnder(next, '/proc') || isUnder(next, '/dev/fd')) {
      const rest = [next, ...pending].join('/');
      const rewritten = rewriteProcPath(rest.startsWith('/') ? rest : `/${rest}`, cwd);
      if (hops++ > MAX_LINK_HOPS) throw new UnpinnablePathError(`${p}: too many levels of links`);
      pending = rewritten.split('/').filter((c) => c !== '' && c !== '.');
      current = '/';
      continue;
    }
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch {
      const real = [next, ...pending].join('/');
      return { real: path.normalize(real), exists: false, existingDir: current };
    }
    if (st.isSymbolicLink()) {
      if (++hops > MAX_LINK_HOPS) throw new UnpinnablePathError(`${p}: too many levels of symbolic links (a loop?)`);
      const target = fs.readlinkSync(next);
      pending = [...target.split('/').filter((c) => c !== '' && c !== '.'), ...pending];
      if (target.startsWith('/')) current = '/';
      continue;
    }
    current = next;
    if (!st.isDirectory() && pending.length) {
      // A file used as a folder: the kernel says ENOTDIR; nothing under it exists.
      return { real: [current, ...pending].join('/'), exists: false, existingDir: path.dirname(current) };
    }
  }
  let isDir = false;
  try {
    isDir = fs.statSync(current).isDirectory();
  } catch {
    // resolved above; a race only
  }
  return { real: current, exists: true, existingDir: isDir ? current : path.dirname(current) };
}

/** True when `p` is `dir` itself or below it (both physical paths). */
export function within(dir: string, p: string): boolean {
  return isUnder(p, dir.replace(/\/+$/, '') || '/');
}

/** A path as workspace-relative POSIX ('.' for the workspace itself). */
export function rel(workspace: string, abs: string): string {
  // The common case (a path under the workspace, as every walk makes them) without path.relative's resolving.
  if (
    path.sep === '/' &&
    abs.length > workspace.length + 1 &&
    abs.startsWith(workspace) &&
    abs[workspace.length] === '/' &&
    !workspace.endsWith('/')
  ) {
    return abs.slice(workspace.length + 1);
  }
  const r = path.relative(workspace, abs).split(path.sep).join('/');
  return r === '' ? '.' : r;
}
