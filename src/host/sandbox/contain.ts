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
import { defaultLibcCarrier } from '../net/libc-carrier';
import { defaultNetShim } from '../net/net-shim';
import {
  doorTarget,
  notCarried,
  transparentCarrier,
  transparentDoor,
  type CarrierOff,
  type TransparentCarrier,
} from '../net/transparent-carrier';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Resolved } from '../../policy/decide';
import { TOO_LARGE } from '../../trust/approval/workspace-manifest';
import { TRUST_ENV, type LaunchPlan } from '../../trust/plan/launch-plan';
import { copyClosure, CopyRefused, snapshotCopy, type ClosureCopy } from './closure-copy';
import { holdStateFolder, packageHashes, StateCopyError, syncPackageState } from './package-state';
import { nestedGitPaths, socketsUnder } from '../../trust/plan/git-paths';
import { buildSandbox, sandboxAvailable, type SandboxProbe } from './sandbox';
import { SandboxConfigError } from './mounts';
import type { StdioLaunch } from './stdio';
import { openDoor } from '../net/door';
import { Egress, type EgressVerdict } from '../net/egress';
import { joinCgroup, limitsWords, raiseWords, serverLimits, type ServerLimits } from './limits';
import { containmentFor, OPT_OUT_HINT, optOutWhere, unixSocketsWords, type Containment } from './decision';
import { ContainRefused, type ContainOptions, type StartPlan } from './contain-options';
import { fromImagePin, fromLock, liveIsSnapshot, notOnSnapshotWords, snapshotOf } from './approved-launch';
import { moveOldCacheDir, privateDir, serverCacheDir } from './server-folders';
import { declaredPath, foreignSockets, protectedPaths, sandboxCaches, scanWorkspace, type Contained } from './contain-paths';

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

/** An approved npm launch's locked tree (./approved-launch.ts), when the start runs one. */
type Locked = Awaited<ReturnType<typeof fromLock>>;
type Plan = LaunchPlan & { executable: string };
type Guard = ReturnType<typeof prepareGuard> | undefined;
type GuardFor = (contained: boolean, extraWrite: readonly string[]) => Guard;

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
  const guardFor: GuardFor = (contained, extraWrite) => guardOf(o, plan, locked, contained, extraWrite);
  if (c.kind === 'uncontained') return uncontainedPlan(o, plan, c, guardFor);
  if (c.kind === 'unavailable')
    throw new ContainRefused(
      `it must run contained, and the sandbox cannot start here: ${c.probe.reason}; fix: ${c.probe.fix} (${OPT_OUT_HINT(who)})`,
    );
  return containedPlan(o, plan, locked, c, guardFor);
}

/** The load guard's start for a server whose approval relies on it (./load-guard.ts); undefined for any other. */
function guardOf(o: ContainOptions, plan: Plan, locked: Locked, contained: boolean, extraWrite: readonly string[]): Guard {
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
}

/** The start of a server that runs uncontained (the user's opt-out, or a user server not asked to be contained). */
async function uncontainedPlan(
  o: ContainOptions,
  plan: Plan,
  c: Extract<Containment, { kind: 'uncontained' }>,
  guardFor: GuardFor,
): Promise<StartPlan> {
  // Python keeps its bytecode outside the workspace (a __pycache__ there is never read, so it is not pinned), in
  // this server's own folder of the user's cache — never a predictable name in the shared /tmp, where another
  // user could plant the .pyc files it would import (checked: the user's, 0700, see privateDir).
  const pycache = privateDir(path.join(serverCacheDir(o.home, o.hostEnv ?? process.env, o.who, o.server.source), 'pycache'), o.server.name);
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

/** What a contained start decided before its sandbox is built (containedPlan, then sandboxedPlan). */
interface ContainedStart {
  o: ContainOptions;
  plan: Plan;
  locked: Locked;
  c: Contained;
  network: boolean;
  env: Record<string, string>;
  cacheDir: string;
  caches: { source: string; target: string }[];
  hidden: string[];
  scanned: ReturnType<typeof nestedGitPaths>;
  foreign: string[];
  ownSockets: boolean;
  shown: VerifiedCopy;
  guard: Guard;
  egress: Egress | undefined;
  transparent: TransparentCarrier | CarrierOff | undefined;
}

/** The start of a server that runs contained: its network, caches, hidden .git, sockets, verified copy and guard. */
async function containedPlan(o: ContainOptions, plan: Plan, locked: Locked, c: Contained, guardFor: GuardFor): Promise<StartPlan> {
  const { who } = o;
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
  const caches = sandboxCaches(cacheDir);
  // The workspace's .git is hidden (an empty read-only folder) unless the user grants it: a server that runs git
  // would otherwise run code from what `git fetch` brought in (`git show origin/x:plugin.js | node -`), which no
  // approval pins. Granted, it is visible (read-only as a read path, as a protected folder; writable as a write path).
  const gitDir = path.join(o.project, '.git');
  const hidden = [...c.extraRead, ...c.extraWrite].some((p) => path.resolve(p) === gitDir) ? [] : [gitDir];
  const scanned = scanWorkspace(o.project);
  const foreign = foreignSockets(o.project, c, scanned, hidden, gitDir);
  const ownSockets = !c.unixSockets && foreign.length === 0;
  const shown = verifiedCopy(o, c, scanned, hidden, caches);
  let guard: Guard;
  try {
    guard = guardFor(true, c.extraWrite);
  } catch (e) {
    shown.copy?.remove();
    throw e;
  }
  const egress = network ? networkDoor(o, verdict) : undefined;
  const transparent = network ? (o.transparentCarrier === undefined ? transparentCarrier() : o.transparentCarrier || undefined) : undefined;
  return sandboxedPlan({
    o,
    plan,
    locked,
    c,
    network,
    env,
    cacheDir,
    caches,
    hidden,
    scanned,
    foreign,
    ownSockets,
    shown,
    guard,
    egress,
    transparent,
  });
}

interface VerifiedCopy {
  copy?: ClosureCopy;
  onSnapshot: boolean;
  /** On the snapshot: the files over the hashing bound, which it does not see. */
  notOnSnapshot: string[];
}

/** The verified copy a gated server with a pinned closure is shown (./closure-copy.ts); none for any other. */
function verifiedCopy(
  o: ContainOptions,
  c: Contained,
  scanned: ReturnType<typeof nestedGitPaths>,
  hidden: readonly string[],
  caches: readonly { target: string }[],
): VerifiedCopy {
  let copy: ClosureCopy | undefined;
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
  return { copy, onSnapshot, notOnSnapshot };
}

/** The folders a contained start holds while it runs (released by its cleanup, or when the start fails). */
interface Held {
  releaseState?: () => void;
  releaseHome?: () => void;
}

/** A contained start's sandbox, cgroup and cleanup; whatever it made is undone when it fails. */
function sandboxedPlan(s: ContainedStart): StartPlan {
  const { o, c, guard, egress } = s;
  const { copy } = s.shown;
  const h: Held = {};
  try {
    const cmd = sandboxCommand(s, h, ownState(s, h));
    const networkRule = s.network
      ? undefined
      : JSON.stringify({
          action: o.decision.networkAction,
          decision: 'allow',
          ...(o.who.scope === 'repository' ? { project: o.who.project } : {}),
        });
    const unixSocketsRefused = c.unixSockets || s.ownSockets ? undefined : { hint: unixSocketsWords(s.foreign), shown: true };
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
    const notOnSnapshot = s.shown.notOnSnapshot;
    return {
      launch: containedLaunch(o, cmd, joined, egress, s.transparent),
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
        h.releaseState?.();
        h.releaseHome?.();
        held.remove();
      },
    };
  } catch (e) {
    egress?.close();
    copy?.remove();
    guard?.cleanup();
    h.releaseState?.();
    h.releaseHome?.();
    if (e instanceof SandboxConfigError) throw new ContainRefused(`it cannot be contained as configured: ${e.message}`);
    throw e;
  }
}

/** A contained server's own state: its own home, and an npm-launched server's own package folder, when it has one. */
interface OwnState {
  ownHome: string;
  packageState?: { source: string; target: string; writable: true };
}

/** Its own home and package folder, held for this start in `h` (what cannot be held is left out). */
function ownState(s: ContainedStart, h: Held): OwnState {
  const { o, locked, cacheDir } = s;
  // Its own home (issue 44, item 3): what it writes under HOME — ~/.config, ~/.local/share, a dot-folder of its
  // own — it finds at its next start. One start at a time holds it; a second start while one runs gets an empty
  // HOME, as before. Code it leaves there is no approved file: the load guard refuses it, as anything new.
  const ownHome = path.join(cacheDir, 'home');
  try {
    fs.mkdirSync(ownHome, { recursive: true, mode: 0o700 });
    h.releaseHome = holdStateFolder(ownHome);
  } catch {
    h.releaseHome = undefined; // its own home cannot be made: an empty HOME, as before (the sandbox line says which)
  }
  // An npm-launched server's own package folder: its private copy, kept between its starts, read-write (./package-state.ts).
  let packageState: { source: string; target: string; writable: true } | undefined;
  const lock = locked ? o.server.record?.lock : undefined;
  if (locked && lock) {
    const target = path.join(locked.tree, 'node_modules', ...lock.name.split('/'));
    const copy = path.join(cacheDir, 'package-state', lock.digest.replace(/[^A-Za-z0-9]/g, '').slice(0, 32));
    h.releaseState = fs.existsSync(target) ? holdStateFolder(copy) : undefined; // another start of it holds it: read-only
    if (h.releaseState) {
      try {
        packageState = { source: syncPackageState(target, copy), target, writable: true };
      } catch (e) {
        h.releaseState();
        h.releaseState = undefined;
        if (!(e instanceof StateCopyError)) throw e; // too large: it runs from the read-only tree, as before
      }
    }
  }
  return { ownHome, packageState };
}

/** The bubblewrap command of a contained start (./sandbox.ts). */
function sandboxCommand(s: ContainedStart, h: Held, { ownHome, packageState }: OwnState): ReturnType<typeof buildSandbox> {
  const { o, plan, c, network, env, guard, locked } = s;
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
  return buildSandbox(
    {
      // The guard's own variables for the server's start (the name it was declared by), beside the server's.
      launch: { executable: plan.executable, argv: plan.args, cwd: plan.cwd, env: { ...env, ...guard?.env } },
      workspace: o.project,
      overlays: s.shown.copy?.overlays ?? [],
      hidden: s.hidden,
      binds: [...(guard?.binds ?? []), ...(packageState ? [packageState] : [])],
      netShim: network ? (o.netShim === undefined ? defaultNetShim() : o.netShim || undefined) : undefined,
      libcCarrier: network ? (o.libcCarrier === undefined ? (defaultLibcCarrier() ?? null) : o.libcCarrier || undefined) : undefined,
      transparentCarrier: s.transparent,
      // On the approved snapshot the whole workspace is the approved copy, read-only: the live protected folders are
      // not mounted over it (they would show files changed since approval).
      profile: {
        network,
        unixSockets: c.unixSockets !== undefined ? true : s.ownSockets ? 'own' : false,
        limits: c.limits.values,
        extraRead: [
          ...c.extraRead,
          ...trust,
          ...(s.shown.onSnapshot ? [] : protectedPaths(o.project, c.extraWrite, s.scanned)),
          ...(locked ? [locked.tree] : []),
        ],
        extraWrite: c.extraWrite,
        caches: s.caches,
        home: o.home,
        ...(h.releaseHome ? { ownHome } : {}),
      },
    },
    c.probe,
  );
}

/** A contained start's launch: the sandbox joined to its cgroup, and its network door when it has one. */
function containedLaunch(
  o: ContainOptions,
  cmd: ReturnType<typeof buildSandbox>,
  joined: { command: string; args: string[] },
  egress: Egress | undefined,
  transparent: TransparentCarrier | CarrierOff | undefined,
): StdioLaunch {
  const carried = transparent && !('off' in transparent) ? transparent : undefined;
  // The carrier fails soft: when the door helper cannot set it up at this start, the door opens without it (an event says so).
  const carrierOff = (why: string) =>
    o.onNetwork?.({
      outcome: 'failed',
      host: '(transparent carrier)',
      port: 0,
      detail: `${notCarried(why)} at this start; the door is open for the other clients`,
    });
  return {
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
  };
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
