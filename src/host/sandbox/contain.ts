// How a local server is started: contained (bubblewrap, src/host/sandbox/sandbox.ts) or, for a user server the user did
// not ask to contain or a server the user explicitly opted out, as a plain process. For a repository server the
// execution closure is copied and verified first and mounted read-only over the workspace, so what runs is byte
// for byte what was approved; an approved npm launch runs its locked package tree from MCP Gate's package cache
// (src/trust/packages/npm-lock.ts), mounted read-only, instead of the launcher; an approved `docker run image:tag` runs the
// image digest its approval recorded (src/trust/packages/image-pin.ts), `name@sha256:…` in place of the tag. Network inside the sandbox is
// one door to a filtering proxy (../net/egress.ts), opened when the rule `mcp.<server>.network` allows (any public host;
// ask where a person can answer) or rules `mcp.<server>.network.<host>` name hosts (those hosts); otherwise none. Where the sandbox cannot start, a server that should be contained does not
// start: the message names the cause, the fix, and the opt-out. One decision (containmentFor over the start's
// StartDecision, src/policy/start.ts — the user's settings, the network rule — and whether bubblewrap starts) is what
// startPlan runs and what describeContainment words, so the words cannot drift from what runs; nothing here asks the
// policy by another road (the door's questions at each connection go through the StartDecision too).
import { defaultGuardDir, GuardUnavailable, prepareGuard } from './load-guard';
import { defaultLibcCarrier, type LibcCarrier } from '../net/libc-carrier';
import { defaultNetShim } from '../net/net-shim';
import {
  doorTarget,
  notCarried,
  transparentCarrier,
  transparentDoor,
  type CarrierOff,
  type TransparentCarrier,
} from '../net/transparent-carrier';
import { NEUTRAL_WORDS, type FrontEndWords } from '../../trust/words';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Resolved } from '../../policy/decide';
import type { ServerIdentity } from '../../policy/identity';
import type { StartDecision } from '../../policy/start';
import type { ServerReport } from '../../trust/report';
import { npmLaunchOf } from '../../trust/approval/approvals';
import { refOf, serverKey } from '../../trust/approval/server-ref';
import { ensureImage, imageLaunchOf, ImagePinError, pinnedArgs } from '../../trust/packages/image-pin';
import { findOnPath, TRUST_ENV, type LaunchPlan } from '../../trust/plan/launch-plan';
import { LockError, packageCacheRoot, type NpmOps } from '../../trust/packages/npm-lock';
import { copyClosure, CopyRefused, snapshotCopy } from './closure-copy';
import { holdStateFolder, packageHashes, StateCopyError, syncPackageState } from './package-state';
import {
  loadManifest,
  ManifestError,
  MAX_HASHED_BYTES,
  takeManifest,
  TOO_LARGE,
  type WorkspaceManifest,
} from '../../trust/approval/workspace-manifest';
import { gitExecutedPaths, MAX_NESTED_WALK, MAX_SOCKET_WALK, nestedGitPaths, socketsUnder } from '../../trust/plan/git-paths';
import { buildSandbox, sandboxAvailable, SandboxConfigError, type SandboxDescription, type SandboxProbe } from './sandbox';
import type { StdioLaunch } from './stdio';
import { Egress, openDoor, type EgressEvent, type EgressVerdict } from '../net/egress';
import type { Resolver } from '../net/resolve';
import {
  joinCgroup,
  limitMechanism,
  limitsWords,
  raiseWords,
  serverLimits,
  type LimitMechanism,
  type LimitReached,
  type ServerLimits,
} from './limits';
import {
  containmentFor,
  OPT_OUT_HINT,
  optOutWhere,
  PROTECTED_IN_WORKSPACE,
  PROTECTED_SUFFIXES,
  SANDBOX_CACHES,
  shownSockets,
  socketsAt,
  unixSocketsWords,
} from './decision';

/**
 * The private cache folder of one server (created on first start, mode 0700), named by the server's one key
 * (src/trust/approval/server-ref.ts). A user-scope server is the same server in every project, so its folder is
 * the empty one: it keeps one cache wherever it runs; a repository server's is its project's real path.
 */
export function serverCacheDir(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  who: ServerIdentity,
  source: string,
): string {
  const ref = refOf(who.scope === 'repository' ? who.project : '', { source, name: who.name });
  return path.join(cacheBase(home, env), `${who.name}-${createHash('sha256').update(serverKey(ref)).digest('hex').slice(0, 20)}`);
}

function cacheBase(home: string, env: Readonly<Record<string, string | undefined>>): string {
  return path.join(
    env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, '.cache'),
    'mcp-gate',
    'sandbox',
  );
}

/**
 * Bubblewrap flags that give an uncontained server its own PID namespace and no other containment: the whole
 * filesystem as it is (`--dev-bind / /`, devices included), the host's network, its user's authority. When the
 * namespace's first process ends (MCP Gate's stop kills bwrap; `--die-with-parent` if MCP Gate itself dies), the
 * kernel ends every process in it — double-forked `setsid` daemons and `nohup` children included, which a process
 * group kill misses. Chosen by measurement over `unshare --pid --fork --kill-child` (needs root, or a user namespace
 * it does not set up itself) and cgroups (systemd-run scopes: a user manager that a CLI or a container may not
 * have); bubblewrap is already what contains repository servers. The cost: ~0.1 s more at start, `argv[0]` is the
 * program's path, and setuid programs (sudo) do not gain privileges inside (bubblewrap sets no_new_privs).
 */
export const PID_NAMESPACE_FLAGS = ['--unshare-pid', '--dev-bind', '/', '/', '--die-with-parent'] as const;

/** An uncontained launch in its own PID namespace when bubblewrap starts here; else as it is (process group stop). */
export function ownProcesses(
  plain: StdioLaunch,
  probe: SandboxProbe,
): { launch: StdioLaunch; processes: NonNullable<StartPlan['processes']> } {
  if (!probe.ok) {
    return {
      launch: plain,
      processes: {
        pidNamespace: false,
        why: `bubblewrap cannot start here (${probe.reason}), so a stop ends its process group and their descendants only; a daemon that left both may outlive it (fix: ${probe.install ?? probe.fix})`,
      },
    };
  }
  const { argv0: _argv0, ...rest } = plain;
  return {
    launch: { ...rest, command: probe.bwrap, args: [...PID_NAMESPACE_FLAGS, '--', plain.command, ...plain.args] },
    processes: { pidNamespace: true },
  };
}

/**
 * A folder MCP Gate gives a server for its own state: made (with its parents) mode 0700 when missing, and used
 * only when it is a real folder (not a link) owned by this user that no one else may write to or read; anything
 * else refuses the start with the fix. Returns the folder.
 */
export function privateDir(dir: string, server: string): string {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new ContainRefused(`"${server}" is not started: its private folder ${dir} cannot be made (${(e as Error).message})`);
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const st = fs.lstatSync(dir);
  const fix = `remove it (MCP Gate makes it again, yours, mode 0700) and look into who made it`;
  if (!st.isDirectory())
    throw new ContainRefused(`"${server}" is not started: its private folder ${dir} is not a folder (a link or a file); ${fix}`);
  if (uid !== undefined && st.uid !== uid)
    throw new ContainRefused(
      `"${server}" is not started: its private folder ${dir} belongs to uid ${st.uid}, not to you (uid ${uid}), so another user could put code in it; ${fix}`,
    );
  if ((st.mode & 0o077) !== 0)
    throw new ContainRefused(
      `"${server}" is not started: its private folder ${dir} has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, which lets other users in; ${fix}`,
    );
  return dir;
}

/**
 * Releases before the one key named the folder by a digest of `scope NUL project NUL source NUL name`; an existing
 * folder of that name is moved to the new one at the server's next start, so its packages are kept.
 */
function moveOldCacheDir(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  who: ServerIdentity,
  source: string,
  to: string,
): void {
  const old = path.join(
    cacheBase(home, env),
    `${who.name}-${createHash('sha256')
      .update(`${who.scope}\0${who.scope === 'repository' ? who.project : ''}\0${source}\0${who.name}`)
      .digest('hex')
      .slice(0, 20)}`,
  );
  try {
    if (!fs.existsSync(to) && fs.lstatSync(old).isDirectory()) fs.renameSync(old, to);
  } catch {
    // no old folder (or it cannot be moved): the server starts with an empty cache
  }
}

export class ContainRefused extends Error {}

export interface StartPlan {
  launch: StdioLaunch;
  /** Present when contained: what the server sees. */
  sandbox?: SandboxDescription;
  /** Contained without network: the rule that would give it the network (for a failure message). */
  networkRule?: string;
  /**
   * Contained with Unix sockets refused: what allows them, for a failure message — always said when a path the user
   * showed it is a socket (`shown`), otherwise when its error reads like a refused socket (refusedSocketError).
   */
  unixSocketsRefused?: { hint: string; shown: boolean };
  /** Present when the user's opt-out made this server run uncontained: where it is written. */
  optOut?: string;
  /**
   * Uncontained: how a stop reaches everything it started — its own PID namespace (bubblewrap), or, without
   * bubblewrap, its process group and descendants only (the line says so; a daemon that left both may survive).
   */
  processes?: { pidNamespace: true } | { pidNamespace: false; why: string };
  /** Contained: its limits (./limits.ts) — watch them once it runs, explain its exit — and the words for one reached. */
  limits?: { held: ServerLimits; reached(r: LimitReached): string };
  /** Under the load guard (./load-guard.ts): the report file its refusals are appended to (watch it once it runs). */
  guardReport?: string;
  /** Removes the verified copy and the server's cgroup (after the server stopped). */
  cleanup(): void;
}

export interface ContainOptions {
  server: ServerReport;
  who: ServerIdentity;
  project: string;
  plan: LaunchPlan & { executable: string };
  /** The environment the server gets (minimal + declared + env-bound secrets). */
  env: Record<string, string>;
  /** What the policy said at this start (src/policy/start.ts): the one road back to the policy. */
  decision: StartDecision;
  home: string;
  /** MCP Gate's own environment (for XDG_CACHE_HOME); this process's by default. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Injectable probe (tests); the real one otherwise. */
  probe?: () => SandboxProbe;
  /** Injectable limit mechanism (tests: the rlimits alone where this machine has a cgroup); the real one otherwise. */
  limits?: () => LimitMechanism;
  /** The front end's wording for the next step (src/trust/words.ts). */
  words?: FrontEndWords;
  /** Where the npm libraries run to install a locked tree again (the package worker, for the CLI and VS Code). */
  npm: NpmOps;
  /** Each connection through a contained server's network door (for the log). */
  onNetwork?: (e: EgressEvent) => void;
  /** The resolver the network door uses (tests); the system's otherwise. */
  resolver?: Resolver;
  /** The approval store's folder: the workspace manifest of a guarded server's approval is read from there. */
  storeDir?: string;
  /** MCP Gate's load guard files (dist/guard/); found beside the running bundle by default. */
  guardDir?: string;
  /** MCP Gate's network shim (dist/netshim/net-shim.cjs, ../net/net-shim.ts); found beside the running bundle by default, '' for none. */
  netShim?: string;
  /** The libc carrier (../net/libc-carrier.ts); found on this machine by default, '' for none. */
  libcCarrier?: LibcCarrier | '';
  /** The transparent carrier (../net/transparent-carrier.ts): on when this machine allows it by default, '' for none. */
  transparentCarrier?: TransparentCarrier | CarrierOff | '';
}

/**
 * An approved npm launch runs its lock: the verified tree in MCP Gate's package cache, its command by path (with
 * the node on MCP Gate's PATH for a JavaScript command), never `npx` resolving the spec again. Undefined when the
 * server is not an npm launch or is a user server (run as written).
 */
async function fromLock(o: ContainOptions): Promise<{ plan: LaunchPlan & { executable: string }; tree: string } | undefined> {
  const launch = npmLaunchOf(o.server);
  if (!launch || !o.server.gated) return undefined;
  const lock = o.server.record?.lock;
  if (!lock) {
    if (o.server.viaEscapeHatch) return undefined;
    throw new ContainRefused(
      `"${o.server.name}" has no package lock for ${launch.spec} in its approval; ${(o.words ?? NEUTRAL_WORDS).review(o.server.name)} again`,
    );
  }
  const env = o.hostEnv ?? process.env;
  let installed;
  try {
    installed = await o.npm.install(lock, packageCacheRoot(o.home, env));
  } catch (e) {
    if (e instanceof LockError)
      throw new ContainRefused(
        `"${o.server.name}" is not started: its approved package ${lock.name}@${lock.version} cannot be used: ${e.message}`,
      );
    throw e;
  }
  let head = '';
  try {
    const fd = fs.openSync(installed.binFile, 'r');
    const buf = Buffer.alloc(128);
    head = buf
      .subarray(0, fs.readSync(fd, buf, 0, 128, 0))
      .toString('utf8')
      .split('\n')[0];
    fs.closeSync(fd);
  } catch (e) {
    throw new ContainRefused(
      `"${o.server.name}" is not started: the command ${lock.bin.name} of ${lock.name}@${lock.version} cannot be read: ${(e as Error).message}`,
    );
  }
  const script = /\.[cm]?js$/.test(installed.binFile) || /^#!.*\bnode\b/.test(head);
  const node = script ? findOnPath('node', env.PATH) : undefined;
  if (script && !node)
    throw new ContainRefused(`"${o.server.name}" is not started: ${lock.name} is a Node program and node is not on MCP Gate's PATH`);
  const plan = node
    ? { ...o.plan, command: 'node', executable: node, args: [installed.binFile, ...launch.rest] }
    : { ...o.plan, command: installed.binFile, executable: installed.binFile, args: launch.rest };
  return { plan, tree: installed.dir };
}

/**
 * An approved container launch by tag runs the digest its approval recorded: the runtime must have that image
 * (pulled by digest when it does not), and the image argument becomes `name@sha256:…`. Undefined when the server
 * is not such a launch, is a user server, or was approved without a digest (the preview said "not pinned").
 */
async function fromImagePin(o: ContainOptions): Promise<(LaunchPlan & { executable: string }) | undefined> {
  const launch = imageLaunchOf(o.server);
  if (!launch || !o.server.gated) return undefined;
  const pin = o.server.record?.image;
  const words = o.words ?? NEUTRAL_WORDS;
  if (!pin) {
    if (o.server.viaEscapeHatch) return undefined;
    throw new ContainRefused(
      `"${o.server.name}" has no image pin for ${launch.image} in its approval; ${words.review(o.server.name)} again`,
    );
  }
  if (!pin.pinned) return undefined;
  try {
    const args = pinnedArgs(o.plan.args, launch, pin);
    await ensureImage(o.plan.executable, pin, o.hostEnv ?? process.env);
    return { ...o.plan, args };
  } catch (e) {
    if (e instanceof ImagePinError) {
      throw new ContainRefused(
        `"${o.server.name}" is not started: its approved image ${pin.pinned} (pinned from ${pin.image}) cannot be used: ${e.message}; make that image available to ${pin.runtime} (e.g. ${pin.runtime} pull ${pin.pinned} where the registry is reachable), or approve what ${pin.image} names now (mcp-gate update ${o.server.name})`,
      );
    }
    throw e;
  }
}

/** The workspace as approved, for a server that runs on the approved snapshot (verified against its approval). */
function snapshotOf(o: ContainOptions): WorkspaceManifest | undefined {
  if (!o.server.pinned?.pinned.snapshot || o.server.viaEscapeHatch) return undefined;
  if (!o.storeDir)
    throw new ContainRefused(`"${o.server.name}" runs on the workspace as approved, and this start has no approval store to read it from`);
  if (!o.server.record?.manifest)
    throw new ContainRefused(
      `"${o.server.name}" was approved without a copy of the workspace as it was, which it runs on; approve it again`,
    );
  try {
    return loadManifest(o.storeDir, o.server.record.manifest);
  } catch (e) {
    if (e instanceof ManifestError) throw new ContainRefused(`${e.message}; "${o.server.name}" is not started — approve it again`);
    throw e;
  }
}

/** The sandbox line for files the approved snapshot leaves out. */
export function notOnSnapshotWords(files: readonly string[]): string {
  return `not on the workspace as approved: ${files.slice(0, 3).join(', ')}${files.length > 3 ? ` and ${files.length - 3} more` : ''} — over ${MAX_HASHED_BYTES / (1024 * 1024)} MiB, never hashed, so MCP Gate cannot show ${files.length === 1 ? 'it' : 'them'} as approved; the server does not see ${files.length === 1 ? 'it' : 'them'}`;
}

/**
 * Uncontained, a server cannot be shown the approved snapshot: it starts only while the live workspace is still
 * what was approved (every file), else it is refused naming what changed.
 */
async function liveIsSnapshot(o: ContainOptions, approved: WorkspaceManifest): Promise<void> {
  let now: WorkspaceManifest;
  try {
    now = await takeManifest(o.project);
  } catch (e) {
    throw new ContainRefused(
      `"${o.server.name}" runs on the workspace as approved, which cannot be compared with the live one: ${(e as Error).message}`,
    );
  }
  // A file too large to hash is the same only while its size, time and inode are what the approval recorded (an
  // approval without that record cannot tell: changed; red team 7p, case 06).
  const sameLarge = (f: string) => {
    const a = approved.large?.[f];
    const n = now.large?.[f];
    return !!a && !!n && a.size === n.size && a.mtimeNs === n.mtimeNs && a.ino === n.ino;
  };
  const changed = Object.keys(now.files).filter((f) => approved.files[f] !== now.files[f] || (now.files[f] === TOO_LARGE && !sameLarge(f)));
  const links = Object.keys({ ...now.links, ...approved.links }).filter((f) => now.links?.[f] !== approved.links?.[f]);
  const all = [...changed, ...links];
  if (all.length) {
    throw new ContainRefused(
      `"${o.server.name}" runs on the workspace as approved, and it runs uncontained here, so it sees the live files: ${all.slice(0, 3).join(', ')}${all.length > 3 ? ` and ${all.length - 3} more` : ''} changed since it was approved; it is not started — approve it again (or let it run contained, where it is shown the workspace as approved)`,
    );
  }
}

export async function startPlan(o: ContainOptions): Promise<StartPlan> {
  const locked = await fromLock(o);
  const plan = locked?.plan ?? (await fromImagePin(o)) ?? o.plan;
  const { who } = o;
  const c = containmentFor(o.decision, o.probe ?? sandboxAvailable, o.limits);
  if (c.kind === 'refused') {
    throw new ContainRefused(
      `your sandbox settings cannot be used, so no server that should be contained starts: ${c.problems.join('; ')}`,
    );
  }
  // A server whose approval relies on the load guard starts only under it (./load-guard.ts).
  const guardFor = (contained: boolean, extraWrite: readonly string[]) => {
    if (!o.server.gated || o.server.viaEscapeHatch || !o.server.pinned?.pinned.guarded) return undefined;
    try {
      if (!o.storeDir)
        throw new GuardUnavailable(
          `"${o.server.name}" runs only under the load guard, and this start has no approval store to read the workspace as approved from`,
        );
      // An npm launch's own package folder is a copy it may write (./package-state.ts): its approved files load from there.
      const own =
        locked && o.server.record?.lock ? path.join(locked.tree, 'node_modules', ...o.server.record.lock.name.split('/')) : undefined;
      return prepareGuard({
        server: o.server.name,
        project: o.project,
        storeDir: o.storeDir,
        manifest: o.server.record?.manifest,
        guardDir: o.guardDir ?? defaultGuardDir(),
        executable: plan.executable,
        args: plan.args,
        env: o.env,
        argv0: declaredPath(plan.command, plan.cwd, plan.executable),
        contained,
        home: o.home,
        extraWrite,
        closure: Object.keys(o.server.pinned.pinned.files),
        ...(own ? { approved: packageHashes(own) } : {}),
      });
    } catch (e) {
      if (e instanceof GuardUnavailable) throw new ContainRefused(e.message);
      throw e;
    }
  };
  if (c.kind === 'uncontained') {
    // Python keeps its bytecode outside the workspace (a __pycache__ there is never read, so it is not pinned), in
    // this server's own folder of the user's cache — never a predictable name in the shared /tmp, where another
    // user could plant the .pyc files it would import (checked: the user's, 0700, see privateDir).
    const pycache = privateDir(path.join(serverCacheDir(o.home, o.hostEnv ?? process.env, who, o.server.source), 'pycache'), o.server.name);
    const snapshot = o.server.gated ? snapshotOf(o) : undefined;
    if (snapshot) await liveIsSnapshot(o, snapshot);
    const guard = guardFor(false, []);
    const plain: StdioLaunch = {
      command: plan.executable,
      argv0: plan.command,
      args: guard?.args ?? plan.args,
      cwd: plan.cwd,
      env: { ...(guard?.env ?? o.env), PYTHONPYCACHEPREFIX: pycache },
    };
    const own = ownProcesses(plain, (o.probe ?? sandboxAvailable)());
    return {
      launch: own.launch,
      processes: own.processes,
      optOut: c.optOut ? optOutWhere(c.optOut) : undefined,
      guardReport: guard?.report,
      cleanup: () => guard?.cleanup(),
    };
  }
  if (c.kind === 'unavailable')
    throw new ContainRefused(
      `it must run contained, and the sandbox cannot start here: ${c.probe.reason}; fix: ${c.probe.fix} (${OPT_OUT_HINT(who)})`,
    );
  const { probe } = c;

  // The door opens when the bare rule allows (any public host) or a rule names hosts for it (those hosts only).
  const verdict = await o.decision.ask(c.network);
  const network = verdict.decision === 'allow' || c.networkHosts.length > 0;
  // Without network, package launchers work from their caches at once instead of retrying the registry for
  // minutes: npm/npx offline (a package not in ~/.npm fails with ENOTCACHED), uv offline.
  const base = { ...o.env, PYTHONPYCACHEPREFIX: '/tmp/mcp-gate-pycache' }; // the sandbox's private /tmp
  const env = network ? base : { ...base, npm_config_offline: 'true', UV_OFFLINE: '1' };

  // This server's own caches and its own home, kept between its starts in its private folder.
  const cacheDir = serverCacheDir(o.home, o.hostEnv ?? process.env, who, o.server.source);
  moveOldCacheDir(o.home, o.hostEnv ?? process.env, who, o.server.source, cacheDir);
  const caches = SANDBOX_CACHES.map((target) => ({
    source: path.join(cacheDir, target.slice(2).replace(/^\./, '').replace(/\//g, '-')),
    target,
  }));
  for (const c of caches) {
    try {
      fs.mkdirSync(c.source, { recursive: true, mode: 0o700 });
    } catch {
      // a cache that cannot be made is skipped by the sandbox
    }
  }
  // The workspace's .git is hidden (an empty read-only folder) unless the user grants it: a server that runs git
  // would otherwise run code from what `git fetch` brought in (`git show origin/x:plugin.js | node -`), which no
  // approval pins. Granted, it is visible (read-only as a read path, as a protected folder; writable as a write path).
  const gitDir = path.join(o.project, '.git');
  const hidden = [...c.extraRead, ...c.extraWrite].some((p) => path.resolve(p) === gitDir) ? [] : [gitDir];
  const scanned = scanWorkspace(o.project);
  // Unix sockets: the server may make its own (a browser's, the tsx command's IPC) while no socket file it did not
  // make is visible to it (the workspace, your read and write paths, a granted .git); abstract sockets are its
  // network namespace's. Else refused unless your entry allows them.
  const foreign = c.unixSockets
    ? []
    : [
        ...shownSockets(c),
        ...scanned.sockets,
        ...(scanned.socketsTruncated
          ? [`${o.project} (more than ${MAX_SOCKET_WALK.toLocaleString('en-US')} entries: not searched whole)`]
          : []),
        ...(hidden.length ? [] : socketsAt(gitDir)),
      ];
  const ownSockets = !c.unixSockets && foreign.length === 0;
  let copy: ReturnType<typeof copyClosure> | undefined;
  let onSnapshot = false;
  let notOnSnapshot: string[] = [];
  if (o.server.gated && o.server.pinned) {
    const mountPoints = [
      ...protectedPaths(o.project, c.extraWrite, scanned),
      ...hidden,
      ...c.extraRead,
      ...c.extraWrite,
      ...caches.map((x) => x.target),
    ];
    try {
      const snapshot = snapshotOf(o);
      // The files the plan names are checked as they are now (they are what the person reviewed); a server on the
      // approved snapshot is then shown the workspace as it was approved.
      copy = copyClosure(o.project, o.server.pinned.pinned, snapshot ? [] : mountPoints);
      if (snapshot) {
        onSnapshot = true;
        copy.remove();
        copy = snapshotCopy(o.project, o.storeDir!, snapshot, o.server.record!.manifest!.sha256, mountPoints);
        // A file over the hashing bound was never hashed: nothing can show it as approved (red team 7p, case 07).
        notOnSnapshot = Object.keys(snapshot.files).filter((f) => snapshot.files[f] === TOO_LARGE);
      }
    } catch (e) {
      if (e instanceof CopyRefused) throw new ContainRefused(`${e.message}; it is not started — review it again before it can start`);
      throw e;
    }
  }
  let guard: ReturnType<typeof guardFor>;
  try {
    guard = guardFor(true, c.extraWrite);
  } catch (e) {
    copy?.remove();
    throw e;
  }
  const egress = network ? networkDoor(o, verdict) : undefined;
  const transparent = network ? (o.transparentCarrier === undefined ? transparentCarrier() : o.transparentCarrier || undefined) : undefined;
  const carried = transparent && !('off' in transparent) ? transparent : undefined;
  // The carrier fails soft: when the door helper cannot set it up at this start, the door opens without it (an event says so).
  const carrierOff = (why: string) =>
    o.onNetwork?.({
      outcome: 'failed',
      host: '(transparent carrier)',
      port: 0,
      detail: `${notCarried(why)} at this start; the door is open for the other clients`,
    });
  let releaseState: (() => void) | undefined;
  let releaseHome: (() => void) | undefined;
  try {
    // Its own home (issue 44, item 3): what it writes under HOME — ~/.config, ~/.local/share, a dot-folder of its
    // own — it finds at its next start. One start at a time holds it; a second start while one runs gets an empty
    // HOME, as before. Code it leaves there is no approved file: the load guard refuses it, as anything new.
    const ownHome = path.join(cacheDir, 'home');
    try {
      fs.mkdirSync(ownHome, { recursive: true, mode: 0o700 });
      releaseHome = holdStateFolder(ownHome);
    } catch {
      releaseHome = undefined; // its own home cannot be made: an empty HOME, as before (the sandbox line says which)
    }
    // An npm-launched server's own package folder: its private copy, kept between its starts, read-write (./package-state.ts).
    let packageState: { source: string; target: string; writable: true } | undefined;
    const lock = locked ? o.server.record?.lock : undefined;
    if (locked && lock) {
      const target = path.join(locked.tree, 'node_modules', ...lock.name.split('/'));
      const copy = path.join(cacheDir, 'package-state', lock.digest.replace(/[^A-Za-z0-9]/g, '').slice(0, 32));
      releaseState = fs.existsSync(target) ? holdStateFolder(copy) : undefined; // another start of it holds it: read-only
      if (releaseState) {
        try {
          packageState = { source: syncPackageState(target, copy), target, writable: true };
        } catch (e) {
          releaseState();
          releaseState = undefined;
          if (!(e instanceof StateCopyError)) throw e; // too large: it runs from the read-only tree, as before
        }
      }
    }
    // The certificate files your own environment names (TRUST_ENV), when the server's environment still names them
    // (a repository's value is never shown: it could name any file of yours).
    const host = o.hostEnv ?? process.env;
    const trust = [
      ...new Set(
        TRUST_ENV.map((k) => host[k]).filter(
          (v, i): v is string =>
            !!v && (env as Record<string, string | undefined>)[TRUST_ENV[i]] === v && path.isAbsolute(v) && fs.existsSync(v),
        ),
      ),
    ];
    const cmd = buildSandbox(
      {
        // The guard's own variables for the server's start (the name it was declared by), beside the server's.
        launch: { executable: plan.executable, argv: plan.args, cwd: plan.cwd, env: { ...env, ...guard?.env } },
        workspace: o.project,
        overlays: copy?.overlays ?? [],
        hidden,
        binds: [...(guard?.binds ?? []), ...(packageState ? [packageState] : [])],
        netShim: network ? (o.netShim === undefined ? defaultNetShim() : o.netShim || undefined) : undefined,
        libcCarrier: network ? (o.libcCarrier === undefined ? (defaultLibcCarrier() ?? null) : o.libcCarrier || undefined) : undefined,
        transparentCarrier: transparent,
        // On the approved snapshot the whole workspace is the approved copy, read-only: the live protected folders are
        // not mounted over it (they would show files changed since approval).
        profile: {
          network,
          unixSockets: c.unixSockets !== undefined ? true : ownSockets ? 'own' : false,
          limits: c.limits.values,
          extraRead: [
            ...c.extraRead,
            ...trust,
            ...(onSnapshot ? [] : protectedPaths(o.project, c.extraWrite, scanned)),
            ...(locked ? [locked.tree] : []),
          ],
          extraWrite: c.extraWrite,
          caches,
          home: o.home,
          ...(releaseHome ? { ownHome } : {}),
        },
      },
      probe,
    );
    const networkRule = network
      ? undefined
      : JSON.stringify({
          action: o.decision.networkAction,
          decision: 'allow',
          ...(who.scope === 'repository' ? { project: who.project } : {}),
        });
    const unixSocketsRefused = c.unixSockets || ownSockets ? undefined : { hint: unixSocketsWords(foreign), shown: true };
    let held: ServerLimits;
    try {
      held = serverLimits(c.limits.values, c.mechanism);
    } catch (e) {
      throw new ContainRefused(
        `"${o.server.name}" is not started: ${(e as Error).message}; its limits cannot be held as this machine's probe said they would (fix: make the cgroup hierarchies writable again, or restart MCP Gate to probe again)`,
      );
    }
    const joined = joinCgroup(held.procsFiles, cmd.command, cmd.args);
    const limits = c.limits;
    return {
      launch: {
        command: joined.command,
        args: joined.args,
        cwd: cmd.cwd,
        env: cmd.env,
        seccomp: cmd.seccomp,
        ...(egress && cmd.door
          ? {
              door: (pid: number) =>
                carried
                  ? openDoor(doorTarget(carried, pid), egress, undefined, transparentDoor(carried, egress, carrierOff))
                  : openDoor(pid, egress),
            }
          : {}),
      },
      sandbox: {
        ...cmd.description,
        text: `${cmd.description.text}\n${limitsWords(limits, c.mechanism)}${guard ? `\n${guard.text}` : ''}${notOnSnapshot.length ? `\n${notOnSnapshotWords(notOnSnapshot)}` : ''}`,
      },
      networkRule,
      unixSocketsRefused,
      guardReport: guard?.report,
      limits: {
        held,
        reached: (r) =>
          `${r.detail}; MCP Gate stopped it and everything it started; if it needs more, ${raiseWords(r.limit, limits, optOutWhere)}`,
      },
      cleanup: () => {
        egress?.close();
        copy?.remove();
        guard?.cleanup();
        releaseState?.();
        releaseHome?.();
        held.remove();
      },
    };
  } catch (e) {
    egress?.close();
    copy?.remove();
    guard?.cleanup();
    releaseState?.();
    releaseHome?.();
    if (e instanceof SandboxConfigError) throw new ContainRefused(`it cannot be contained as configured: ${e.message}`);
    throw e;
  }
}

/**
 * The filtering proxy behind a contained server's network door (../net/egress.ts): each host by the rules as they are
 * at that connection. A host rule (`mcp.<server>.network.<host>`) decides its host — `ask` asked once per host for
 * this start, where a person can answer; otherwise the bare rule's verdict at start (`bare`, asked then) decides,
 * for public addresses only.
 */
function networkDoor(o: ContainOptions, bare: Resolved): Egress {
  return new Egress({ resolver: o.resolver, onEvent: (e) => o.onNetwork?.(e), decide: networkDecider(o, bare) });
}

/**
 * The door's decision for one host, by the policy in force at that connection (`livePolicy`, else the start's): a
 * bare rule removed or turned to deny since the start closes the public hosts at once; a bare `ask` keeps its answer
 * at start (`bare`).
 */
export function networkDecider(o: ContainOptions, bare: Resolved): (host: string) => Promise<EgressVerdict> {
  const asked = new Map<string, Promise<Resolved>>();
  return async (host) => {
    const r = o.decision.reach(host, bare);
    let v = r.verdict as Resolved;
    if (r.byHostRule) {
      let pending = asked.get(host);
      if (!pending) {
        pending = o.decision.ask(r.verdict);
        if (r.verdict.decision === 'ask') asked.set(host, pending);
      }
      v = await pending;
    }
    return {
      allow: v.decision === 'allow',
      named: r.named && v.decision === 'allow',
      reason: v.reason,
      permit: r.permit,
    };
  };
}

/** The line of a server's stderr that reads like a Unix socket the seccomp filter refused (Node, Go, Python, docker CLI wordings), if one does. */
export function refusedSocketError(stderr: string): string | undefined {
  // Python names the path for a file's EPERM ("…permitted: '/x'") and none for socket(): only the bare line counts.
  return stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => /\b(listen|connect|bind) EPERM\b|socket: operation not permitted|\[Errno 1\] Operation not permitted$/i.test(l))
    ?.slice(0, 300);
}

/** The workspace walked once per start: every nested .git (and what it names), every entry tools obey in a folder of it, and every Unix socket file in it. */
function scanWorkspace(project: string): ReturnType<typeof nestedGitPaths> {
  // What tools obey in a monorepo's folders too (a nested .vscode, .claude, AGENTS.md, .envrc…); .git is walked as such.
  const nested = nestedGitPaths(
    project,
    PROTECTED_IN_WORKSPACE.filter((n) => n !== '.git'),
    PROTECTED_SUFFIXES,
  );
  if (nested.truncated)
    throw new ContainRefused(
      `the workspace ${project} holds more than ${MAX_NESTED_WALK.toLocaleString('en-US')} files and folders outside node_modules, more than MCP Gate walks to find every .git a contained server must not write; open a smaller folder as the workspace`,
    );
  return nested;
}

function protectedPaths(project: string, writable: readonly string[], nested: ReturnType<typeof nestedGitPaths>): string[] {
  const out: string[] = [];
  // The workspace entries tools read as configuration, and what the repository's git config names for git to run.
  // Every .git below the workspace's own too: git run there obeys it (a nested repository, a submodule).
  for (const p of [...PROTECTED_IN_WORKSPACE.map((name) => path.join(project, name)), ...gitExecutedPaths(project), ...nested.paths]) {
    if (writable.some((w) => path.resolve(w) === p)) continue;
    try {
      // Only a real entry of the workspace: a link out of it must not make its target visible in the sandbox.
      if (!fs.lstatSync(p).isSymbolicLink() && fs.realpathSync(p) === p) out.push(p);
    } catch {
      // absent: nothing to protect (a server may create it; see README)
    }
  }
  return out;
}

/** The program as the definition names it by a path (`.venv/bin/python`), when that is not its real path. */
function declaredPath(command: string, cwd: string, executable: string | undefined): string | undefined {
  if (!executable || !(command.includes('/') || command.includes('\\'))) return undefined;
  const named = path.resolve(cwd, command);
  return named === executable ? undefined : named;
}
