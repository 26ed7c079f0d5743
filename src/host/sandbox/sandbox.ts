// Contained execution (issue 11, the sandbox core): turns a local server's launch into a bubblewrap (bwrap)
// command line on Linux. No vscode import; the session decides when to use it (see docs/sandbox.md).
//
// Why bubblewrap directly, not @anthropic-ai/sandbox-runtime (measured 2026-12-01 on this 2-core Debian 12
// machine, bubblewrap 0.8.0, Node 20.20, median of 21 interleaved runs; details in docs/sandbox.md):
//   /bin/true:  plain 1.6 ms · bwrap 5.1 ms · sandbox-runtime library (wrap, proxies already up) 18.7 ms ·
//               srt CLI 400.7 ms
//   node -e 0:  plain 80.4 ms · bwrap 108.3 ms · sandbox-runtime library 112.0 ms · srt CLI 535.1 ms
// On Linux sandbox-runtime is itself a bwrap command line plus a shell script, socat relays, an HTTP/SOCKS
// proxy in the parent for a domain allow-list, a seccomp helper that blocks AF_UNIX sockets, and ripgrep to
// find files to deny. Its filesystem model is deny-list for reads (everything readable unless denied), it
// needs Node >= 22.12 (MCP Gate supports 20.18), socat and ripgrep, runs the command through a shell
// string, and keeps a proxy process state per manager. MCP Gate already has a hardened network path for
// remote servers and its approvals pin no domains for stdio servers, so the proxy's domain filtering is the
// one thing it would add; not decisive against an allow-list filesystem, no shell and no dependencies.
// MCP Gate's network door (../net/egress.ts) filters by host, and by address, which sandbox-runtime's does not.
//
// What the contained process sees:
//   - the system read-only, from an allow-list, not `--ro-bind / /`: /usr, /bin, /sbin, /lib*, /etc, /opt,
//     /nix/store (symlinks such as /bin -> usr/bin recreated as symlinks). An allow-list shows nothing that
//     was not chosen: not /home (other users, other projects), /root, /srv, /mnt, /media, /var, /run or /sys.
//     A read-only bind still lets a process connect() to a Unix socket in it, so /run (docker.sock, D-Bus,
//     agent sockets) and /var/run must never be bound. /etc's secrets are masked even where the user could
//     read them (as root): shadow, gshadow, sudoers, ssh host keys, /etc/ssl/private.
//   - fresh /dev (`--dev`; with a network door doorDevArgs, no pseudo-terminals), /proc of its own PID namespace (`--proc`), a private /tmp (`--tmpfs`);
//     the root these hang from read-only (`--remount-ro /`): only the mounts listed here can be written;
//   - HOME replaced at the same path (HOME set to it) by the server's own home folder, kept between its starts
//     (profile.ownHome: what it writes there it finds again), or else by an empty tmpfs; then the listed caches
//     bound read-write into it; the real ~/.ssh, ~/.aws, ~/.config, ~/.gnupg and every other project are not there.
//     Mount points bwrap makes inside an own home are made real folders first (clearWay): a link the server left
//     there is removed, never followed;
//   - the workspace read-write, then each overlay `--ro-bind copy target` over it — a package folder's verified
//     tree, or one file (what runs is the approved copy, whatever the host does to the workspace meanwhile, and
//     the server cannot change it: EROFS on write, EBUSY on unlink/rename), then extraRead
//     read-only and extraWrite/caches read-write. Mounts are ordered by depth (a parent before anything
//     inside it), so a workspace or cache inside HOME or /tmp is bound after that tmpfs and stays visible;
//     at the same depth read-only wins over read-write.
//   - the executable file itself read-only if no other mount shows it (e.g. nvm's node under HOME; not its
//     folder, which could be HOME or /tmp); an interpreter that needs its install root gets it in extraRead.
// Namespaces and process: `--unshare-all` (user, ipc, pid, net, uts, cgroup) plus an explicit
// `--unshare-user --disable-userns` where bwrap >= 0.8 and the kernel allow it (no nested user namespace
// from inside, so no way to get capabilities over the sandbox's own mounts) — with a network door only
// `--unshare-user` (the door enters the sandbox's user namespace, which must own its network namespace) and a
// /dev built here without pseudo-terminals (doorDevArgs: `--dev` makes a second user namespace when not root), and
// the seccomp filter refuses new user namespaces in every sandbox; never `--share-net`. `--cap-drop ALL` (needed when bwrap runs as root: root keeps its capabilities otherwise;
// without root bwrap gives none anyway). `--die-with-parent`: bwrap dies with MCP Gate. `--new-session`: no
// controlling terminal, so no TIOCSTI injection into MCP Gate's terminal. No `--as-pid-1`: bwrap's own init
// is PID 1 (reaps zombies; a server as PID 1 would ignore SIGTERM without a handler), and when it dies the
// kernel kills every process of the PID namespace, so killing bwrap (SIGTERM or SIGKILL), MCP Gate dying,
// or the server exiting leaves nothing behind, double-forked setsid daemons included (tested).
// The environment is passed to spawn, never as `--setenv` arguments: a command line is readable by every
// user of the machine in /proc/<pid>/cmdline, an environment only by the same user. HOME is set to the
// hidden home and TMPDIR/TMP/TEMP (where present) to /tmp.
// Network: the sandbox always has its own network namespace, with only its own loopback: nothing on the host
// (not 127.0.0.1, not ::1, not an abstract Unix socket) is reachable, whatever the rules. With profile.network it
// also gets a door: bwrap reports its first process on fd 4 (`--info-fd 4`) and waits on fd 5 (`--block-fd 5`)
// until the caller has opened a listener on the sandbox's 127.0.0.1:3128 (../net/door.ts openDoor), the filtering
// proxy the proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, npm's) point at; there is no route around it.
// Carriers bring clients that ignore those variables to the same door: the Node and Python shims, the libc carrier
// (../net/libc-carrier.ts) and, as root, the transparent carrier (../net/transparent-carrier.ts: its forwarder started first,
// resolv.conf shown as `nameserver 127.0.0.1`, the rules set by the door helper).
// Sockets: a seccomp filter (./seccomp.ts, loaded by bwrap from fd 3: `--seccomp 3`) allows only IP and netlink
// sockets and refuses socket(AF_UNIX) and datagram socketpairs, so a server cannot connect to a socket file it can
// see (the workspace, a read path) unless the user's entry says `unixSockets: true` — or unless no socket file it
// did not make is visible to it at the start (profile.unixSockets 'own', decided by ./contain.ts: a browser's and
// a command's own IPC then work); no io_uring, no other family (AF_VSOCK reaches a VM's host). Stream and seqpacket
// pairs (child processes' stdio) work.
// Limits: the inner command is util-linux's prlimit setting the server's rlimits, then the server (./limits.ts
// says what is held how, and the cgroup a start may add outside bwrap).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROXY_ENV } from '../net/egress';
import { rlimitArgs } from './limits';
import { carrierArgv, carrierEnv, NOT_INSTALLED, PROXYCHAINS_MOUNT, type LibcCarrier } from '../net/libc-carrier';
import { NETSHIM_MOUNT, NETSHIM_PY_FILE, NETSHIM_PY_MOUNT, netShimEnv } from '../net/net-shim';
import {
  FORWARDER_MOUNT,
  notCarried,
  ROOTLESS,
  transparentArgv,
  type CarrierOff,
  type TransparentCarrier,
} from '../net/transparent-carrier';
import { SECCOMP_ARCHES, socketFilter } from './seccomp';
import {
  askedMounts,
  clearWay,
  depth,
  doorDevArgs,
  MASKED_DIRS,
  MASKED_FILES,
  mountArgs,
  mustBeAbsolute,
  RANK,
  real,
  SandboxConfigError,
  sshHostKeys,
  SYSTEM_PATHS,
  systemArgs,
  within,
  type Mount,
  type SandboxMounts,
  type SandboxOverlay,
} from './mounts';
import { BASE_FLAGS, sandboxAvailable, USERNS_FLAGS, type SandboxProbe } from './sandbox-probe';

// Whether contained execution works here is ./sandbox-probe.ts (re-exported here).
export { bubblewrapInstallCommand, diagnoseBwrapFailure, sandboxAvailable, type ProbeOptions, type SandboxProbe } from './sandbox-probe';

/** The launch to contain: `argv` are the arguments after the executable. */
export interface SandboxLaunch {
  /** Absolute real path of the program. */
  executable: string;
  argv: string[];
  /** Real path; must be inside the workspace or another visible path. */
  cwd: string;
  env: Record<string, string>;
}

export interface SandboxInput {
  launch: SandboxLaunch;
  /** Real path of the workspace folder: bound read-write. */
  workspace: string;
  overlays: SandboxOverlay[];
  profile: SandboxMounts;
  /** Folders of the workspace shown empty and read-only (the workspace's `.git`, unless the user grants it). */
  hidden?: string[];
  /**
   * MCP Gate's own files shown at fixed paths (the load guard's, ./load-guard.ts: its files, the manifest, the
   * report folder, the real interpreters, and wrappers over them): bound after everything else, read-only unless
   * `writable`.
   */
  binds?: { source: string; target: string; writable?: boolean }[];
  /**
   * The built network shim (../net/net-shim.ts, dist/netshim/net-shim.cjs): with a network door it is shown read-only at
   * NETSHIM_MOUNT and preloaded into the server's Node processes (NODE_OPTIONS), carrying fetch, http/https and raw
   * TCP through the door. Ignored without network.
   */
  netShim?: string;
  /**
   * The libc carrier (../net/libc-carrier.ts: the system's proxychains4, its daemon and MCP Gate's config): with a network
   * door the config is shown read-only at PROXYCHAINS_MOUNT, the daemon started in the sandbox before the server and
   * the library preloaded into it. `null`: proxychains4 is not installed (said in the description). Ignored without network.
   */
  libcCarrier?: LibcCarrier | null;
  /**
   * The transparent carrier (../net/transparent-carrier.ts: nft redirect, a forwarder, MCP Gate's DNS): with a network door
   * the forwarder is shown read-only at FORWARDER_MOUNT and started before the server, resolv.conf shown as
   * `nameserver 127.0.0.1`; the door helper sets the rules (./contain.ts opens the door with transparentDoor).
   * `{ off }`: not here, and why (said in the description). Ignored without network.
   */
  transparentCarrier?: TransparentCarrier | CarrierOff;
}

export interface SandboxDescription {
  network: boolean;
  /** Unix sockets allowed (the seccomp filter lets the server make them). */
  unixSockets: boolean;
  readWrite: string[];
  readOnly: string[];
  overlays: string[];
  /** Paths replaced by an empty tmpfs (/tmp, and HOME when it has no own home). */
  empty: string[];
  /** The server's own home shown at HOME (kept between its starts), if it has one. */
  ownHome?: string;
  /** Paths asked for that do not exist (skipped). */
  missing: string[];
  /** One line per aspect, for the log and the preview. */
  text: string;
}

/** What to spawn: `command` is bwrap, `args` its arguments and then the inner command; pass `env` to spawn. */
export interface SandboxCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Where to spawn bwrap (the inner process gets `--chdir launch.cwd`). */
  cwd: string;
  /**
   * The seccomp program bwrap reads from fd 3 (`--seccomp 3` is in args): spawn with a fourth stdio pipe and write
   * it there (./stdio.ts StdioTransport does). Without it bwrap does not start the server.
   */
  seccomp: Buffer;
  /**
   * With profile.network: bwrap writes its info JSON (`child-pid`) to fd 4 and waits for a byte on fd 5; open the
   * door into that process's namespaces in between (./stdio.ts does, with StdioLaunch.door). Without it bwrap waits.
   */
  door: boolean;
  description: SandboxDescription;
}

export class SandboxUnavailableError extends Error {
  constructor(
    readonly reason: string,
    readonly fix: string,
  ) {
    super(`contained execution is not available: ${reason} (fix: ${fix})`);
    this.name = 'SandboxUnavailableError';
  }
}

// ---------------------------------------------------------------------------------------------- the command

/**
 * The network helpers a sandbox with network shows (the network shim, the libc carrier, the transparent carrier),
 * each checked to exist and its mounts added to `mounts`; none without network.
 */
function networkMounts(
  input: SandboxInput,
  mounts: Mount[],
): {
  netShim: string | undefined;
  carrier: LibcCarrier | undefined;
  tc: TransparentCarrier | CarrierOff | undefined;
  transparent: TransparentCarrier | undefined;
} {
  const { profile } = input;
  const netShim = profile.network && input.netShim ? mustBeAbsolute('the network shim', input.netShim) : undefined;
  if (netShim) {
    if (!fs.existsSync(netShim)) throw new SandboxConfigError(`the network shim ${netShim} does not exist (npm run build makes it)`);
    mounts.push({ kind: 'ro', target: NETSHIM_MOUNT, source: netShim });
    const py = path.join(path.dirname(netShim), NETSHIM_PY_FILE);
    if (fs.existsSync(py)) mounts.push({ kind: 'ro', target: NETSHIM_PY_MOUNT, source: py });
  }
  const carrier = profile.network && input.libcCarrier ? input.libcCarrier : undefined;
  if (carrier) {
    for (const [what, p] of [
      ['the proxychains4 library', carrier.library],
      ['proxychains4-daemon', carrier.daemon],
      ['the proxychains config', carrier.conf],
      ['sleep', carrier.sleep],
    ] as const) {
      if (!fs.existsSync(mustBeAbsolute(what, p))) throw new SandboxConfigError(`${what} ${p} does not exist`);
    }
    mounts.push({ kind: 'ro', target: PROXYCHAINS_MOUNT, source: carrier.conf });
  }
  const tc = profile.network && input.transparentCarrier ? input.transparentCarrier : undefined;
  const transparent = tc && !('off' in tc) ? tc : undefined;
  if (transparent) {
    for (const [what, p] of [
      ['perl', transparent.perl],
      ['the forwarder', transparent.forwarder],
      ['the sandbox resolv.conf', transparent.resolvConf],
    ] as const) {
      if (!fs.existsSync(mustBeAbsolute(what, p))) throw new SandboxConfigError(`${what} ${p} does not exist`);
    }
    mounts.push({ kind: 'ro', target: FORWARDER_MOUNT, source: transparent.forwarder });
    if (transparent.resolvTarget)
      mounts.push({
        kind: 'ro',
        target: mustBeAbsolute('the resolv.conf target', transparent.resolvTarget),
        source: transparent.resolvConf,
      });
  }
  return { netShim, carrier, tc, transparent };
}

/** The bwrap arguments of a sandbox: its namespaces, the system, /dev, /proc, the ordered mounts, then prlimit and the server. */
function bwrapArgs(
  input: SandboxInput,
  probeResult: Extract<SandboxProbe, { ok: true }>,
  ordered: readonly Mount[],
  cwd: string,
  executable: string,
  transparent: TransparentCarrier | undefined,
  carrier: LibcCarrier | undefined,
): string[] {
  const { launch, profile } = input;
  // Not root, the transparent carrier's network namespace is made first by unshare (../net/transparent-carrier.ts):
  // bubblewrap keeps it, and runs the server as the user's own uid and gid.
  const rootless = transparent?.unshare;
  return [
    ...(rootless ? [...ROOTLESS, probeResult.bwrap] : []),
    ...BASE_FLAGS,
    ...(rootless ? ['--share-net', '--uid', String(process.getuid?.() ?? 0), '--gid', String(process.getgid?.() ?? 0)] : []),
    // A door enters the sandbox's user namespace from outside: it must be the one that owns its network namespace.
    ...(profile.network ? ['--unshare-user', '--info-fd', '4', '--block-fd', '5'] : probeResult.userns ? USERNS_FLAGS : []),
    ...systemArgs(),
    ...(profile.network ? doorDevArgs() : ['--dev', '/dev']),
    '--proc',
    '/proc',
    ...ordered.flatMap(mountArgs),
    // The root the mounts hang from (bwrap's own tmpfs) read-only: nothing can be written beside the mounts (a file
    // under /run or / would be neither workspace nor scratch to the load guard, and is nobody's business anyway).
    '--remount-ro',
    '/',
    '--chdir',
    cwd,
    '--seccomp',
    '3',
    '--',
    probeResult.prlimit,
    ...rlimitArgs(profile.limits),
    '--',
    ...(transparent ? transparentArgv(transparent) : []),
    ...(carrier ? carrierArgv(carrier) : []),
    executable,
    ...launch.argv,
  ];
}

/** The sandbox's description, line by line: its network, what it reads and writes, what is empty, its sockets. */
function descriptionText(
  input: SandboxInput,
  probeResult: Extract<SandboxProbe, { ok: true }>,
  { netShim, carrier, tc, transparent }: ReturnType<typeof networkMounts>,
  shown: {
    readWrite: string[];
    readOnly: string[];
    overlays: string[];
    hiddenHere: string[];
    home: string;
    ownHome: string | undefined;
    missing: string[];
  },
): string {
  const { profile } = input;
  const { readWrite, readOnly, overlays, hiddenHere, home, ownHome, missing } = shown;
  return [
    `contained by bubblewrap ${probeResult.version}: network ${profile.network ? `its own namespace with one door, MCP Gate's filtering proxy at ${PROXY_ENV.HTTPS_PROXY} (hosts by your rules; never this machine's addresses)${netShim ? "; Node's fetch, http/https and raw TCP, and Python's raw TCP (guarded), carried through it without a proxy setting (MCP Gate's network shims preloaded)" : ''}${carrier ? `; libc clients (libpq, curl, C extensions${transparent ? '' : '; not Go or static binaries'}) carried through it by name without a proxy setting (proxychains4 preloaded)` : input.libcCarrier === null ? `; ${NOT_INSTALLED}` : ''}${transparent ? '; Go, static binaries and any other TCP client carried through it by name without a proxy setting (MCP Gate answers its DNS with stand-in addresses; nftables sends its TCP to a forwarder that asks the door)' : tc && 'off' in tc ? `; ${notCarried(tc.off)}` : ''}` : 'none (own loopback only)'}`,
    `read-write: ${readWrite.join(', ') || '(none)'}`,
    `read-only: ${readOnly.join(', ')}`,
    `approved copies mounted read-only: ${overlays.length ? overlays.join(', ') : '(none)'}`,
    ...(ownHome ? [`HOME: ${home} is its own home, kept between its starts (${ownHome}; not yours)`] : []),
    `empty: ${ownHome ? '' : `${home} (HOME), `}/tmp${hiddenHere.length ? `, ${hiddenHere.join(', ')} (hidden: grant it as a read or write path to show it)` : ''}; not visible: everything else (other homes, /root, /run, /var, /sys, /mnt, /media, /srv)`,
    `sockets (seccomp): IP and netlink; ${profile.unixSockets === 'own' ? 'Unix sockets allowed: no socket file it did not make is visible to it (checked at this start), so it reaches only its own' : profile.unixSockets ? 'Unix sockets allowed (your setting unixSockets: true): it can connect to any socket file it can see' : 'no Unix socket, so no socket file it can see is reachable'}; no other family, no io_uring`,
    ...(missing.length ? [`missing, skipped: ${missing.join(', ')}`] : []),
  ].join('\n');
}

/**
 * The bwrap command that runs `input.launch` contained (see the header for what it sees). Throws
 * SandboxUnavailableError when bwrap cannot run here (`available`: a probe result, default sandboxAvailable()), SandboxConfigError for an input that cannot be
 * contained as asked (relative paths; a bound path equal to HOME or to /; an overlay outside the workspace;
 * a cwd the sandbox would not see).
 */
export function buildSandbox(input: SandboxInput, available?: SandboxProbe): SandboxCommand {
  const probeResult = available ?? sandboxAvailable();
  if (!probeResult.ok) throw new SandboxUnavailableError(probeResult.reason, probeResult.fix);
  const { launch, profile } = input;
  const home = mustBeAbsolute('profile.home', profile.home);
  const workspace = mustBeAbsolute('workspace', input.workspace);
  const executable = mustBeAbsolute('launch.executable', launch.executable);
  const cwd = mustBeAbsolute('launch.cwd', launch.cwd);
  const { mounts, missing, ownHome } = askedMounts(input, home, workspace);
  const { netShim, carrier, tc, transparent } = networkMounts(input, mounts);
  for (const f of [...MASKED_FILES, ...sshHostKeys()]) if (fs.existsSync(f)) mounts.push({ kind: 'mask-file', target: f, source: '' });
  for (const d of MASKED_DIRS) if (fs.existsSync(d)) mounts.push({ kind: 'mask-dir', target: d, source: '' });

  // Visible = under a system tree or a bind (not merely under a tmpfs, where nothing of the host is, nor under the
  // server's own home, which shows its own folder at HOME: nvm's node under the real HOME is not in it).
  const visible = (p: string) =>
    SYSTEM_PATHS.some((root) => within(p, root) || within(p, real(root) ?? root)) ||
    mounts.some(
      (m) =>
        (m.kind === 'rw' || m.kind === 'ro' || m.kind === 'overlay') &&
        !(ownHome && m.source === ownHome && m.target === home) &&
        within(p, m.target),
    );
  let executableNote: string | undefined;
  if (!visible(executable)) {
    // The file alone: its folder could be HOME, /tmp or hold anything else.
    mounts.push({ kind: 'ro', target: executable, source: executable });
    executableNote = executable;
  }
  if (!visible(cwd)) {
    throw new SandboxConfigError(
      `the working folder ${cwd} would not be visible in the sandbox (it must be inside the workspace or a listed path)`,
    );
  }

  // Parents before children; at the same depth by rank; duplicates dropped (same kind and target).
  const seen = new Set<string>();
  const ordered = mounts
    .map((m, i) => ({ m, i }))
    .sort((a, b) => depth(a.m.target) - depth(b.m.target) || RANK[a.m.kind] - RANK[b.m.kind] || a.i - b.i)
    .map(({ m }) => m)
    .filter((m) => {
      const k = `${m.kind}\0${m.source}\0${m.target}`;
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });

  // bwrap makes the mount points of what is shown inside HOME; in an own home they are folders of the host's disk.
  if (ownHome) for (const m of ordered) if (m.target !== home && within(m.target, home)) clearWay(ownHome, path.relative(home, m.target));

  // Not root, the transparent carrier's unshare starts bubblewrap (bwrapArgs).
  const rootless = transparent?.unshare;
  const args = bwrapArgs(input, probeResult, ordered, cwd, executable, transparent, carrier);
  const seccomp = socketFilter({ unixSockets: profile.unixSockets !== false });
  if (!seccomp)
    throw new SandboxUnavailableError(
      `MCP Gate's seccomp filter (sockets) is built for ${SECCOMP_ARCHES.join(' and ')}, not ${process.arch}`,
      'run the server without containment (the opt-out)',
    );

  const env: Record<string, string> = { ...launch.env, HOME: home, ...(profile.network ? PROXY_ENV : {}) };
  if (netShim) Object.assign(env, netShimEnv(env));
  if (carrier) Object.assign(env, carrierEnv());
  for (const k of ['TMPDIR', 'TMP', 'TEMP']) if (env[k] !== undefined) env[k] = '/tmp';

  const readWrite = ordered.filter((m) => m.kind === 'rw').map((m) => m.target);
  const readOnly = [
    ...SYSTEM_PATHS.filter((p) => fs.existsSync(p)).map((p) => `${p} (system)`),
    ...ordered.filter((m) => m.kind === 'ro').map((m) => (m.target === executableNote ? `${m.target} (the executable)` : m.target)),
  ];
  const overlays = ordered.filter((m) => m.kind === 'overlay').map((m) => m.target);
  const hiddenHere = ordered.filter((m) => m.kind === 'mask-dir' && within(m.target, workspace)).map((m) => m.target);
  const empty = ['/tmp', ...(ownHome ? [] : [home]), ...hiddenHere];
  const text = descriptionText(
    input,
    probeResult,
    { netShim, carrier, tc, transparent },
    { readWrite, readOnly, overlays, hiddenHere, home, ownHome, missing },
  );

  return {
    command: rootless ?? probeResult.bwrap,
    args,
    env,
    cwd: workspace,
    seccomp,
    door: profile.network,
    description: {
      network: profile.network,
      unixSockets: profile.unixSockets !== false,
      readWrite,
      readOnly,
      overlays,
      empty,
      missing,
      text,
      ...(ownHome ? { ownHome } : {}),
    },
  };
}
