// What a sandbox shows, as mounts (./sandbox.ts builds the bwrap command from them): the system allow-list and the
// secrets masked in it, /dev for a sandbox with a network door, the mounts a start asks for (HOME, the workspace,
// the caches and paths of its profile, the approved copies over the workspace, the hidden folders, MCP Gate's own
// binds) with the checks that refuse one that would show the whole machine or the home directory, and how each
// mount becomes bwrap arguments. It decides which host paths are shown and how; not the namespaces, the network,
// the seccomp filter or the limits (./sandbox.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SandboxProfile } from '../../policy/sandbox-profile';

/** A verified private copy of a closure file or of a package folder's tree, mounted read-only where the workspace has it. */
export interface SandboxOverlay {
  source: string;
  /** Absolute path inside the workspace. */
  target: string;
}

/**
 * The profile bwrap gets: the user's part (src/policy/sandbox-profile.ts — network, extra read and write paths),
 * and the host's additions: the server's own caches and the HOME to hide.
 */
export interface SandboxMounts extends SandboxProfile {
  /** Bound read-write (e.g. ~/.npm, ~/.cache/uv); `~/` is the profile's home. Missing ones are skipped. */
  caches: readonly (string | { source: string; target: string })[];
  /** The real HOME to hide. */
  home: string;
  /**
   * The server's own home folder, kept between its starts (MCP Gate's, outside every workspace): shown read-write at
   * HOME instead of an empty tmpfs. Missing: the empty tmpfs (and the path is listed as missing).
   */
  ownHome?: string;
}

/** The input cannot be contained as asked (a path that would defeat the sandbox, a relative path, …). */
export class SandboxConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxConfigError';
  }
}

/** System trees shown read-only (when they exist). Never /run, /var, /sys, /home, /root, /srv, /mnt, /media. */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/nix/store'];
/** Secrets in /etc hidden even from a sandbox running as root. */
export const MASKED_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/security/opasswd'];
export const MASKED_DIRS = ['/etc/sudoers.d', '/etc/ssl/private'];

/** a is b or inside b */
export function within(a: string, b: string): boolean {
  const rel = path.relative(b, a);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export function depth(p: string): number {
  return p === '/' ? 0 : p.split('/').length - 1;
}

export function mustBeAbsolute(what: string, p: string): string {
  if (typeof p !== 'string' || !path.isAbsolute(p) || p.includes('\0'))
    throw new SandboxConfigError(`${what} must be an absolute path: ${JSON.stringify(p)}`);
  return path.normalize(p).replace(/(.)\/+$/, '$1');
}

/**
 * Makes `rel` below `root` a path of real folders bwrap can make its mount point in: each part that exists and is
 * not a folder (a link, a file, a fifo the server left in its own home) is removed — a link is never followed, so a
 * mount point is never made through one. The last part may stay a regular file (a file's mount point).
 */
export function clearWay(root: string, rel: string): void {
  const parts = rel.split(path.sep).filter(Boolean);
  let at = root;
  parts.forEach((part, i) => {
    at = path.join(at, part);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      return; // absent: bwrap makes it
    }
    const last = i === parts.length - 1;
    if (st.isDirectory() || (last && st.isFile())) return;
    fs.rmSync(at, { force: true, recursive: false });
  });
}

export function real(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The system allow-list as bwrap arguments: directories bound read-only, symlinks recreated. */
export function systemArgs(): string[] {
  const out: string[] = [];
  for (const p of SYSTEM_PATHS) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) out.push('--symlink', fs.readlinkSync(p), p);
    else if (st.isDirectory()) out.push('--ro-bind', p, p);
  }
  return out;
}

/**
 * /dev of a sandbox with a network door, built here rather than by `--dev`: bubblewrap run by a user mounts `--dev`'s
 * devpts as root of a first user namespace and then makes a second one for the server, and the door must enter the
 * user namespace that owns the sandbox's network namespace (the first), which nsenter cannot reach from the second.
 * The same device nodes as `--dev` (bound from the host), the same links, a private /dev/shm — and no pseudo-terminals
 * (/dev/pts, /dev/ptmx).
 */
export function doorDevArgs(): string[] {
  const out = ['--tmpfs', '/dev'];
  for (const d of ['null', 'zero', 'full', 'random', 'urandom', 'tty'])
    if (fs.existsSync(`/dev/${d}`)) out.push('--dev-bind', `/dev/${d}`, `/dev/${d}`);
  out.push(
    '--symlink',
    '/proc/self/fd',
    '/dev/fd',
    '--symlink',
    '/proc/self/fd/0',
    '/dev/stdin',
    '--symlink',
    '/proc/self/fd/1',
    '/dev/stdout',
    '--symlink',
    '/proc/self/fd/2',
    '/dev/stderr',
    '--tmpfs',
    '/dev/shm',
  );
  return out;
}

/** Rank at equal depth: later wins, so read-only is mounted after read-write on the same path. */
export type Kind = 'tmpfs' | 'rw' | 'ro' | 'overlay' | 'mask-file' | 'mask-dir';
export const RANK: Record<Kind, number> = { tmpfs: 0, rw: 1, ro: 2, overlay: 3, 'mask-file': 4, 'mask-dir': 4 };

export interface Mount {
  kind: Kind;
  target: string;
  source: string;
}

export function mountArgs(m: Mount): string[] {
  switch (m.kind) {
    case 'tmpfs':
      return ['--tmpfs', m.target];
    case 'rw':
      return ['--bind', m.source, m.target];
    case 'ro':
    case 'overlay':
      return ['--ro-bind', m.source, m.target];
    case 'mask-file':
      return ['--ro-bind', '/dev/null', m.target];
    case 'mask-dir':
      return ['--tmpfs', m.target, '--remount-ro', m.target];
  }
}

export function sshHostKeys(): string[] {
  try {
    return fs
      .readdirSync('/etc/ssh')
      .filter((f) => /^ssh_host_.*_key$/.test(f))
      .map((f) => `/etc/ssh/${f}`);
  } catch {
    return [];
  }
}

/**
 * The mounts `input` asks for, in its order — /tmp, HOME (its own home or empty), the workspace, the caches and paths of
 * its profile, the overlays, the hidden folders and the binds — and the paths it names that do not exist (skipped).
 * Throws SandboxConfigError for one that would show the whole machine or the home directory, or is not where it must be.
 */
export function askedMounts(
  input: {
    profile: SandboxMounts;
    overlays: readonly SandboxOverlay[];
    hidden?: readonly string[];
    binds?: readonly { source: string; target: string; writable?: boolean }[];
  },
  home: string,
  workspace: string,
): { mounts: Mount[]; missing: string[]; ownHome: string | undefined } {
  const { profile } = input;
  const expand = (p: string) => (p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p);

  const mounts: Mount[] = [];
  const missing: string[] = [];
  const refuseExposing = (what: string, p: string) => {
    if (p === '/') throw new SandboxConfigError(`${what} is /: that would show the whole machine`);
    if (p === home)
      throw new SandboxConfigError(`${what} is the home directory ${home}: that would show ~/.ssh, ~/.aws and every other project`);
  };

  refuseExposing('the workspace', workspace);
  mounts.push({ kind: 'tmpfs', target: '/tmp', source: '' });
  const ownHome = profile.ownHome === undefined ? undefined : real(mustBeAbsolute('its own home', profile.ownHome));
  if (profile.ownHome !== undefined && ownHome === undefined) missing.push(profile.ownHome);
  if (ownHome !== undefined) {
    refuseExposing('its own home', ownHome);
    if (within(ownHome, workspace) || within(workspace, ownHome))
      throw new SandboxConfigError(`its own home ${ownHome} and the workspace ${workspace} overlap`);
  }
  mounts.push(ownHome ? { kind: 'rw', target: home, source: ownHome } : { kind: 'tmpfs', target: home, source: '' });
  mounts.push({ kind: 'rw', target: workspace, source: workspace });

  const addBind = (kind: 'rw' | 'ro', what: string, raw: string) => {
    const p = mustBeAbsolute(what, expand(raw));
    const r = real(p);
    if (r === undefined) {
      missing.push(p);
      return;
    }
    refuseExposing(what, r);
    mounts.push({ kind, target: r, source: r });
  };
  for (const c of profile.caches) {
    if (typeof c === 'string') {
      addBind('rw', 'a cache', c);
      continue;
    }
    // A private cache folder shown at a path of the hidden HOME (e.g. MCP Gate's own per-server npm cache as ~/.npm).
    const source = real(mustBeAbsolute('a cache source', c.source));
    const target = mustBeAbsolute('a cache target', expand(c.target));
    if (source === undefined) {
      missing.push(c.source);
      continue;
    }
    refuseExposing('a cache', source);
    mounts.push({ kind: 'rw', target, source });
  }
  for (const p of profile.extraWrite) addBind('rw', 'an extraWrite path', p);
  for (const p of profile.extraRead) addBind('ro', 'an extraRead path', p);

  for (const o of input.overlays) {
    const source = mustBeAbsolute('an overlay source', o.source);
    const target = mustBeAbsolute('an overlay target', o.target);
    if (!within(target, workspace)) throw new SandboxConfigError(`overlay target ${target} is not inside the workspace ${workspace}`);
    const rt = real(target);
    if (rt !== undefined && (!within(rt, workspace) || rt !== target))
      throw new SandboxConfigError(`overlay target ${target} is not a real path inside the workspace (it resolves to ${rt})`);
    if (!fs.existsSync(source)) throw new SandboxConfigError(`overlay source ${source} does not exist`);
    mounts.push({ kind: 'overlay', target, source });
  }

  for (const h of input.hidden ?? []) {
    const target = mustBeAbsolute('a hidden folder', h);
    if (!within(target, workspace) || target === workspace)
      throw new SandboxConfigError(`hidden folder ${target} is not a folder inside the workspace ${workspace}`);
    if (real(target) === target && fs.statSync(target).isDirectory()) mounts.push({ kind: 'mask-dir', target, source: '' });
  }
  for (const b of input.binds ?? []) {
    const source = mustBeAbsolute('a bind source', b.source);
    if (!fs.existsSync(source)) throw new SandboxConfigError(`bind source ${source} does not exist`);
    mounts.push({ kind: b.writable ? 'rw' : 'ro', target: mustBeAbsolute('a bind target', b.target), source });
  }
  return { mounts, missing, ownHome };
}
