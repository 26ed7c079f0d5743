// The sandbox probe (./sandbox.ts): whether contained execution works on this machine — a bubblewrap that runs
// with the flags, the seccomp filter and the limits a start uses, and util-linux's prlimit — cached per process;
// when it does not, why and the fix (diagnoseBwrapFailure, the command that installs bubblewrap).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_LIMITS } from '../../policy/sandbox-profile';
import { findOnPath } from '../../trust/plan/command-line';
import { rlimitArgs } from './limits';
import { SECCOMP_ARCHES, socketFilter } from './seccomp';
import { real, SYSTEM_PATHS, systemArgs, within } from './mounts';

export type SandboxProbe =
  | {
      ok: true;
      bwrap: string;
      version: string;
      /** `--unshare-user --disable-userns` works here */ userns: boolean;
      /** util-linux's prlimit (system paths): the sandbox's first command, it sets the limits */ prlimit: string;
    }
  | {
      ok: false;
      reason: string;
      fix: string;
      /** One command that installs bubblewrap with this machine's package manager, when that is the fix. */ install?: string;
    };

export const BASE_FLAGS = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
export const USERNS_FLAGS = ['--unshare-user', '--disable-userns'];

// ---------------------------------------------------------------------------------------------- the probe

const probeCache = new Map<string, SandboxProbe>();

export interface ProbeOptions {
  /** A bwrap to use instead of searching PATH. */
  bwrap?: string;
  /** The PATH to search (default: this process's). */
  path?: string;
  /** Ignore the per-process cache. */
  refresh?: boolean;
  /** Reads /proc/sys/<key> (for tests); undefined when absent. */
  readSysctl?: (key: string) => string | undefined;
}

function defaultReadSysctl(key: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/sys/${key}`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

const MISSING_FIX =
  'install bubblewrap: `sudo apt-get install bubblewrap` (Debian/Ubuntu), `sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)';

/** The package managers MCP Gate knows, in the order looked for, with the command that installs bubblewrap. */
const INSTALLERS: [string, string][] = [
  ['apt-get', 'apt-get install -y bubblewrap'],
  ['dnf', 'dnf install -y bubblewrap'],
  ['pacman', 'pacman -S --noconfirm bubblewrap'],
  ['zypper', 'zypper install -y bubblewrap'],
  ['apk', 'apk add bubblewrap'],
];

/** The one command that installs bubblewrap here (with sudo unless root), or undefined when no known package manager is on PATH. */
export function bubblewrapInstallCommand(searchPath = process.env.PATH ?? '', root = process.getuid?.() === 0): string | undefined {
  const hit = INSTALLERS.find(([exe]) => findOnPath(exe, searchPath) !== undefined);
  return hit ? `${root ? '' : 'sudo '}${hit[1]}` : undefined;
}

/** Why bwrap could not start a sandbox, from its stderr and the kernel's user-namespace switches. */
export function diagnoseBwrapFailure(
  stderr: string,
  readSysctl: (key: string) => string | undefined = defaultReadSysctl,
): { reason: string; fix: string } {
  const said = stderr.trim().split('\n').slice(-3).join(' / ') || 'no message';
  if (/seccomp/i.test(stderr)) {
    return {
      reason: `bwrap could not load MCP Gate's seccomp filter (sockets): ${said}`,
      fix: 'use a kernel with seccomp filters (CONFIG_SECCOMP_FILTER), or, in a container, allow prctl(PR_SET_SECCOMP) and seccomp(2)',
    };
  }
  const namespaceProblem =
    /namespace|uid map|setting up uid|RTM_NEWADDR|Operation not permitted|Permission denied|No space left on device/i.test(stderr);
  if (namespaceProblem) {
    if (readSysctl('kernel/apparmor_restrict_unprivileged_userns') === '1') {
      return {
        reason: `unprivileged user namespaces are restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later); bwrap said: ${said}`,
        fix: 'give bwrap an AppArmor profile that allows user namespaces: write /etc/apparmor.d/bwrap with `abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }` and run `sudo apparmor_parser -r /etc/apparmor.d/bwrap`; or turn the restriction off: `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (persist it in /etc/sysctl.d/)',
      };
    }
    if (readSysctl('kernel/unprivileged_userns_clone') === '0') {
      return {
        reason: `unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0); bwrap said: ${said}`,
        fix: '`sudo sysctl -w kernel.unprivileged_userns_clone=1` (persist it in /etc/sysctl.d/)',
      };
    }
    if (readSysctl('user/max_user_namespaces') === '0') {
      return {
        reason: `user namespaces are disabled (user.max_user_namespaces=0); bwrap said: ${said}`,
        fix: '`sudo sysctl -w user.max_user_namespaces=15000` (persist it in /etc/sysctl.d/)',
      };
    }
    return {
      reason: `bwrap could not create its namespaces: ${said}`,
      fix: 'allow unprivileged user namespaces (sysctls kernel.unprivileged_userns_clone, user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns); in a container, run it with a seccomp/AppArmor profile that permits unshare and mount (e.g. docker --security-opt seccomp=unconfined --security-opt apparmor=unconfined)',
    };
  }
  return {
    reason: `bwrap failed to start /bin/true: ${said}`,
    fix: 'run the probe command by hand (bwrap --unshare-all --ro-bind /usr /usr … /usr/bin/true) to see why',
  };
}

function versionAtLeast(version: string, major: number, minor: number): boolean {
  const m = /(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  return Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) >= minor);
}

/**
 * Whether contained execution works here: finds bwrap and actually starts `/bin/true` in a sandbox like the
 * ones buildSandbox makes. Cached per process (per bwrap/PATH asked for).
 */
export function sandboxAvailable(options: ProbeOptions = {}): SandboxProbe {
  const key = `${options.bwrap ?? ''}\0${options.path ?? process.env.PATH ?? ''}`;
  const cached = probeCache.get(key);
  if (cached && !options.refresh && !options.readSysctl) return cached;
  const result = probe(options);
  if (!options.readSysctl) probeCache.set(key, result);
  return result;
}

function probe(options: ProbeOptions): SandboxProbe {
  if (process.platform !== 'linux') {
    return {
      ok: false,
      reason: `contained execution uses bubblewrap, which runs on Linux only (this is ${process.platform})`,
      fix: 'run on Linux, or run the server without containment',
    };
  }
  let bwrap: string | undefined;
  if (options.bwrap !== undefined) {
    try {
      fs.accessSync(options.bwrap, fs.constants.X_OK);
      bwrap = fs.realpathSync(options.bwrap);
    } catch {
      return {
        ok: false,
        reason: `bubblewrap not found at ${options.bwrap}`,
        fix: MISSING_FIX,
        install: bubblewrapInstallCommand(options.path),
      };
    }
  } else {
    bwrap = findOnPath('bwrap', options.path ?? process.env.PATH ?? '');
    if (!bwrap)
      return {
        ok: false,
        reason: 'bubblewrap (bwrap) not found on PATH',
        fix: MISSING_FIX,
        install: bubblewrapInstallCommand(options.path),
      };
  }
  const v = spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (v.error || v.status !== 0)
    return { ok: false, reason: `${bwrap} --version failed: ${v.error?.message ?? v.stderr.trim()}`, fix: MISSING_FIX };
  const version = v.stdout.trim().replace(/^bubblewrap\s+/, '');
  let trueBin = '/usr/bin/true';
  try {
    trueBin = fs.realpathSync('/bin/true');
  } catch {
    // keep /usr/bin/true
  }
  // The probe loads the Unix-socket filter as every contained start does (from fd 0 here: /bin/true reads nothing).
  const filter = socketFilter({ unixSockets: false });
  if (!filter)
    return {
      ok: false,
      reason: `MCP Gate's seccomp filter (sockets) is built for ${SECCOMP_ARCHES.join(' and ')}, not ${process.arch}`,
      fix: 'run the server without containment (the opt-out), on a machine of those architectures',
    };
  // The limits are set inside by util-linux's prlimit, from the system paths the sandbox shows; the probe runs it.
  const prlimit = SYSTEM_PATHS.map((d) => real(path.join(d, 'prlimit'))).find(
    (p) => p !== undefined && SYSTEM_PATHS.some((root) => within(p, root) || within(p, real(root) ?? root)),
  );
  if (!prlimit)
    return {
      ok: false,
      reason: "prlimit (util-linux), which sets a contained server's limits, is not in /usr/bin or /bin",
      fix: 'install util-linux (`sudo apt-get install util-linux`, `sudo dnf install util-linux`)',
    };
  const attempt = (userns: boolean) =>
    spawnSync(
      bwrap!,
      [
        ...BASE_FLAGS,
        ...(userns ? USERNS_FLAGS : []),
        ...systemArgs(),
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--seccomp',
        '0',
        '--',
        prlimit,
        ...rlimitArgs(DEFAULT_LIMITS),
        '--',
        trueBin,
      ],
      { encoding: 'utf8', timeout: 10_000, env: {}, input: filter },
    );
  const tryUserns = versionAtLeast(version, 0, 8);
  let r = attempt(tryUserns);
  let userns = tryUserns;
  if (r.status !== 0 && tryUserns) {
    const plain = attempt(false);
    if (plain.status === 0) {
      r = plain;
      userns = false;
    }
  }
  // EPIPE: it ran and ended before reading its filter from stdin (a bwrap that refuses seccomp); its status and stderr say why.
  if (r.error && (r.error as NodeJS.ErrnoException).code !== 'EPIPE')
    return { ok: false, reason: `${bwrap} did not run: ${r.error.message}`, fix: MISSING_FIX };
  if (r.status !== 0) return { ok: false, ...diagnoseBwrapFailure(r.stderr ?? '', options.readSysctl) };
  return { ok: true, bwrap, version, userns, prlimit };
}
