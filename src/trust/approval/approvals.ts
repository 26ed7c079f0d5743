// Recording a person's approval decision (approve, reject, reset), each with its audit event. Each runs under the
// store's cross-process lock and recomputes the server's definition inside it, so what is recorded is what the gate
// sees at that moment; an approval can be bound to the digest that was shown, and is refused if it changed meanwhile.
import { evaluateGate } from '../gate';
import { findServer, type GateInput, type GateReport, type ServerReport } from '../report';
import { imageLaunchOf, imagePinForApproval, type ImagePin } from '../packages/image-pin';
import { lockIntact, LockError, packageCacheRoot, registryOf, type NpmLock, type NpmOps } from '../packages/npm-lock';
import { packageLaunchOf, type NpmLaunch } from '../plan/launchers';
import { ApprovalStore, type ApprovalRecord, type ApprovalDecision, type PinnedTools } from './store';
import { NEUTRAL_WORDS } from '../words';
import { recordRef, refOf, serverKey } from './server-ref';
import { registryListed } from '../sources/admin';
import {
  DIFF_BLOB_BYTES,
  ManifestError,
  MAX_HASHED_BYTES,
  pruneKept,
  saveManifest,
  takeManifest,
  type GuardRefusal,
  type ManifestRef,
} from './workspace-manifest';

export class GateRefusal extends Error {}

export interface DecisionResult {
  /** The project's identity (the real path of its folder). */
  project: string;
  server: ServerReport;
  previous?: ApprovalRecord;
  /** What is recorded now (absent after a reset). */
  record?: ApprovalRecord;
  unchanged: boolean;
}

/** The npm launch of a server that MCP Gate pins with a lock, if it has one. */
export function npmLaunchOf(server: ServerReport): NpmLaunch | undefined {
  const plan = server.pinned?.plan;
  const p = plan ? packageLaunchOf(plan.command, plan.args) : undefined;
  return p?.kind === 'npm' ? p : undefined;
}

/** How a front end has the registry asked: a signal that stops it, and where the npm libraries run. */
export interface LockOptions {
  signal?: AbortSignal;
  npm: NpmOps;
}

/** Resolves the lock an approval of this server records (the registry and cache of MCP Gate's own environment). */
export async function resolveLock(input: GateInput, server: ServerReport, o: LockOptions): Promise<NpmLock | undefined> {
  const launch = npmLaunchOf(server);
  if (!launch) return undefined;
  const { home, env } = input.machine;
  const report = evaluateGate(input);
  const minAge = minReleaseAge(report);
  const registry = registryOf(home, env);
  if (!registryAllowed(report, registry)) {
    throw new GateRefusal(
      `"${server.name}" (${server.source}) cannot be approved: MCP Gate resolves npm packages from ${registry}, and the administrator's policy (${report.adminPolicy.file}) allows only ${report.adminPolicy.packages.registries!.join(', ')}. Nothing was recorded; set npm_config_registry (or registry= in ~/.npmrc) to an allowed registry`,
    );
  }
  try {
    return await o.npm.resolve(launch, {
      registry,
      cacheRoot: packageCacheRoot(home, env),
      minReleaseAgeDays: minAge?.days,
      signal: o.signal,
    });
  } catch (e) {
    if (e instanceof LockError)
      throw new GateRefusal(
        `"${server.name}" (${server.source}) cannot be approved: ${e.message}${minAge ? ` (the minimum release age of ${minAge.days} ${minAge.days === 1 ? 'day' : 'days'} is set in ${minAge.file})` : ''}. Nothing was recorded; check that the registry answers and has ${launch.spec} (MCP Gate resolves from npm_config_registry, else registry= in ~/.npmrc), then try again`,
      );
    throw e;
  }
}

/**
 * The lock an approval of this server records: the one already approved with this same definition (approving
 * again after a tool change does not move the package — only `mcp-gate update` does), else a fresh resolution.
 */
export async function lockForApproval(input: GateInput, server: ServerReport, o: LockOptions): Promise<NpmLock | undefined> {
  const launch = npmLaunchOf(server);
  if (!launch) return undefined;
  const r = server.record;
  if (
    r?.decision === 'approved' &&
    r.digest === server.pinned?.digest &&
    r.lock &&
    r.lock.spec === launch.spec &&
    lockIntact(r.lock) &&
    registryAllowed(evaluateGate(input), r.lock.registry)
  )
    return r.lock;
  return resolveLock(input, server, o);
}

/**
 * The minimum release age: the larger of the user's (`"packages": { "minReleaseAgeDays": N }` in MCP Gate's
 * configuration, user scope only) and the administrator's; versions published less than N days ago are never chosen. A value that is not a number >= 0
 * refuses every npm approval (fail closed).
 */
export function minReleaseAge(report: GateReport): { days: number; file: string } | undefined {
  const user = userMinReleaseAge(report);
  const admin = report.adminPolicy.packages.minReleaseAgeDays;
  if (admin !== undefined && admin > 0 && (!user || admin > user.days)) return { days: admin, file: report.adminPolicy.file };
  return user;
}

/** Whether the administrator's policy lets a package come from this registry (any, when it names none). */
export function registryAllowed(report: GateReport, registry: string): boolean {
  return registryListed(report.adminPolicy, registry);
}

function userMinReleaseAge(report: GateReport): { days: number; file: string } | undefined {
  const p = report.userPolicy.packages;
  if (p === undefined) return undefined;
  const file = report.userPolicy.file;
  const keys = p && typeof p === 'object' && !Array.isArray(p) ? Object.keys(p) : undefined;
  const days = (p as { minReleaseAgeDays?: unknown } | undefined)?.minReleaseAgeDays;
  if (
    !keys ||
    keys.some((k) => k !== 'minReleaseAgeDays') ||
    (days !== undefined && (typeof days !== 'number' || !Number.isFinite(days) || days < 0))
  ) {
    throw new GateRefusal(
      `"packages" in ${file} must be { "minReleaseAgeDays": <number of days, 0 or more> }; no npm package is approved until it is fixed`,
    );
  }
  return days === undefined ? undefined : { days, file };
}

/**
 * Records a decision. An approval of an npm launch records `lock` (the one shown to the person), of a container
 * launch `image` (its pinned digest, or why there is none); without one it is resolved here, before the store is
 * locked, with `npm` (a front end that gives none must have resolved the lock: else nothing is recorded).
 */
export async function recordDecision(
  input: GateInput,
  name: string,
  source: string | undefined,
  decision: ApprovalDecision,
  expectedDigest?: string,
  lock?: NpmLock,
  image?: ImagePin,
  npm?: NpmOps,
): Promise<DecisionResult> {
  if (decision === 'approved' && (!lock || !image)) ({ lock, image } = await packagesForApproval(input, name, source, lock, image, npm));
  const manifest = decision === 'approved' ? await manifestForApproval(input, name, source) : undefined;
  const store = new ApprovalStore(input.storeDir, input.masker);
  const result = await store.update<DecisionResult>((records) => {
    const report = evaluateGate(input);
    if (report.fullBlock.length > 0) {
      throw new GateRefusal(`the project is blocked, so nothing can be ${decision}: ${report.fullBlock.map((b) => b.reason).join('; ')}`);
    }
    const found = findServer(report, name, source, input.words);
    if (!found.ok) throw new GateRefusal(found.message);
    const server = found.server;
    if (!server.gated)
      throw new GateRefusal(`"${server.name}" comes from user scope (${server.source}); it is trusted and needs no decision`);
    if (server.state === 'blocked' || !server.pinned) throw new GateRefusal(`"${server.name}" is blocked: ${server.reason}`);
    if (expectedDigest && expectedDigest !== server.pinned.digest) {
      throw new GateRefusal(
        `"${server.name}" changed while it was being reviewed (shown ${expectedDigest}, now ${server.pinned.digest}); nothing was recorded — review it again`,
      );
    }
    const key = serverKey(refOf(report.project, server));
    const index = records.findIndex((r) => serverKey(recordRef(r)) === key);
    const previous = index >= 0 ? records[index] : undefined;
    const launch = npmLaunchOf(server);
    if (decision === 'approved' && launch && (!lock || lock.spec !== launch.spec)) {
      throw new GateRefusal(
        `"${server.name}" changed while it was being reviewed (it now runs ${launch.spec}); nothing was recorded — review it again`,
      );
    }
    const newLock = decision === 'approved' && launch ? lock : undefined;
    const container = imageLaunchOf(server);
    if (decision === 'approved' && container && (!image || image.image !== container.image || image.runtime !== container.runtime)) {
      throw new GateRefusal(
        `"${server.name}" changed while it was being reviewed (it now runs the image ${container.image}); nothing was recorded — review it again`,
      );
    }
    const newImage = decision === 'approved' && container ? image : undefined;
    const recorded = !!(server.pinned.pinned.guarded || server.pinned.pinned.snapshot);
    const newManifest = decision === 'approved' && recorded ? manifest : undefined;
    if (decision === 'approved' && recorded && !newManifest) {
      throw new GateRefusal(
        `"${server.name}" changed while it was being reviewed (it now runs ${server.pinned.pinned.snapshot ? 'on the workspace as approved' : 'with its loads checked against the workspace as approved'}); nothing was recorded — review it again`,
      );
    }
    if (
      previous &&
      previous.decision === decision &&
      previous.digest === server.pinned.digest &&
      !previous.toolsChanged &&
      !previous.guardRefused &&
      previous.manifest?.sha256 === newManifest?.sha256 &&
      previous.lock?.digest === newLock?.digest &&
      previous.image?.digest === newImage?.digest
    ) {
      return { records, result: { project: report.project, server, previous, record: previous, unchanged: true } };
    }
    const record: ApprovalRecord = {
      project: report.project,
      source: server.source,
      server: server.name,
      decision,
      digest: server.pinned.digest,
      pinned: server.pinned.pinned,
      texts: server.pinned.texts,
      decidedAt: new Date().toISOString(),
      ...(newLock ? { lock: newLock } : {}),
      ...(newImage ? { image: newImage } : {}),
      ...(newManifest ? { manifest: newManifest } : {}),
    };
    // Approving again after a tool change consents to the tools that were shown; otherwise they are pinned anew
    // at the next start.
    if (
      decision === 'approved' &&
      previous?.digest === server.pinned.digest &&
      previous.lock?.digest === newLock?.digest &&
      previous.image?.digest === newImage?.digest
    ) {
      const tools = previous.toolsChanged ?? previous.tools;
      if (tools) record.tools = tools;
    }
    if (index >= 0) records[index] = record;
    else records.push(record);
    return { records, result: { project: report.project, server, previous, record, unchanged: false } };
  });
  if (!result.unchanged && result.previous?.manifest) await pruneReplaced(input, store);
  return result;
}

/**
 * The lock and image pin an approval records, those given else resolved now (before the store is locked) for a
 * server that may be approved: an npm launch's lock with `npm` (refused without it), a container launch's pin.
 */
async function packagesForApproval(
  input: GateInput,
  name: string,
  source: string | undefined,
  lock: NpmLock | undefined,
  image: ImagePin | undefined,
  npm: NpmOps | undefined,
): Promise<{ lock: NpmLock | undefined; image: ImagePin | undefined }> {
  const found = findServer(evaluateGate(input), name, source);
  if (found.ok && found.server.gated && found.server.pinned && found.server.state !== 'blocked') {
    if (!lock && npmLaunchOf(found.server) && !npm)
      throw new GateRefusal(
        `"${found.server.name}" (${found.server.source}) runs an npm package whose lock was not resolved before approving; nothing was recorded. Approve it again`,
      );
    lock ??= npm ? await lockForApproval(input, found.server, { npm }) : undefined;
    image ??= await imagePinForApproval(input, found.server);
  }
  return { lock, image };
}

/**
 * The workspace as it is now, for a server under the load guard (what its loads are checked against, its smaller
 * files kept for diffs) or on the approved snapshot (every file kept: what it is shown); undefined for any other.
 */
async function manifestForApproval(input: GateInput, name: string, source: string | undefined): Promise<ManifestRef | undefined> {
  const found = findServer(evaluateGate(input), name, source);
  const pinned = found.ok && found.server.gated ? found.server.pinned?.pinned : undefined;
  if (!found.ok || !pinned || !(pinned.guarded || pinned.snapshot)) return undefined;
  try {
    const m = await takeManifest(input.projectDir, undefined, {
      storeDir: input.storeDir,
      maxBytes: pinned.snapshot ? MAX_HASHED_BYTES : DIFF_BLOB_BYTES,
    });
    // The files its review showed are the files recorded: else one changed in between.
    for (const [rel, f] of Object.entries(pinned.files)) {
      if (!Object.prototype.hasOwnProperty.call(m.files, rel)) continue; // .git's files, or one that went (the digest check below refuses)
      if (m.files[rel] !== f.sha256)
        throw new GateRefusal(
          `"${found.server.name}" changed while it was being approved (${rel}); nothing was recorded — review it again`,
        );
    }
    return await saveManifest(input.storeDir, m);
  } catch (e) {
    if (e instanceof ManifestError) throw new GateRefusal(`"${found.server.name}" cannot be approved: ${e.message}; nothing was recorded`);
    throw e;
  }
}

/** What no approval refers to any more (a record and kept files replaced by this one) goes once it is old enough. */
async function pruneReplaced(input: GateInput, store: ApprovalStore): Promise<void> {
  try {
    const now = store.read();
    if (now.health.status === 'ok')
      await pruneKept(
        input.storeDir,
        now.records.flatMap((r) => (r.manifest ? [r.manifest] : [])),
      );
  } catch {
    // best effort: kept files are removed at a later approval
  }
}

/** Returns servers of the project to pending. With no name, every decision of the project is removed. */
export async function resetDecisions(input: GateInput, name: string | undefined, source: string | undefined): Promise<ApprovalRecord[]> {
  const store = new ApprovalStore(input.storeDir, input.masker);
  return store.update((records) => {
    const report = evaluateGate(input);
    let match: (r: ApprovalRecord) => boolean;
    if (name === undefined) match = (r) => r.project === report.project;
    else {
      const candidates = records.filter((r) => r.project === report.project && r.server === name && (!source || r.source === source));
      if (candidates.length === 0) {
        const found = findServer(report, name, source, input.words);
        if (!found.ok) throw new GateRefusal(found.message);
        return { records, result: [] };
      }
      if (candidates.length > 1)
        throw new GateRefusal(
          `"${name}" has decisions in ${candidates.length} files (${candidates.map((c) => c.source).join(', ')}); ${(input.words ?? NEUTRAL_WORDS).chooseSource}`,
        );
      match = (r) => r === candidates[0];
    }
    const removed = records.filter(match);
    return { records: records.filter((r) => !match(r)), result: removed };
  });
}

/**
 * Records the tools a server offered at a start after approval: pinned the first time; a different list later
 * is kept as `toolsChanged`, which re-gates the server. Returns what happened. Only for an approved record whose
 * definition digest is still the one given.
 */
export async function observeTools(
  store: ApprovalStore,
  project: string,
  source: string,
  server: string,
  definitionDigest: string,
  observed: PinnedTools,
): Promise<'pinned' | 'same' | 'changed' | 'not-approved'> {
  return store.update((records) => {
    const key = serverKey({ folder: project, source, name: server });
    const r = records.find((x) => serverKey(recordRef(x)) === key);
    if (!r || r.decision !== 'approved' || r.digest !== definitionDigest) return { records, result: 'not-approved' as const };
    if (!r.tools) {
      r.tools = observed;
      return { records, result: 'pinned' as const };
    }
    if (r.tools.digest === observed.digest) return { records, result: 'same' as const };
    if (r.toolsChanged?.digest !== observed.digest) r.toolsChanged = observed;
    return { records, result: 'changed' as const };
  });
}

/**
 * Records that the load guard refused a file of an approved server (it was stopped): the server is changed since
 * approval until a person approves it again (which takes the workspace anew). Only for an approved record whose
 * definition digest is still the one given; the first refusal is kept.
 */
export async function observeGuardRefusal(
  store: ApprovalStore,
  project: string,
  source: string,
  server: string,
  definitionDigest: string,
  refusal: GuardRefusal,
): Promise<'recorded' | 'kept' | 'not-approved'> {
  return store.update((records) => {
    const key = serverKey({ folder: project, source, name: server });
    const r = records.find((x) => serverKey(recordRef(x)) === key);
    if (!r || r.decision !== 'approved' || r.digest !== definitionDigest) return { records, result: 'not-approved' as const };
    if (r.guardRefused) return { records, result: 'kept' as const };
    r.guardRefused = refusal;
    return { records, result: 'recorded' as const };
  });
}

/** Where a decision's audit event goes (the host's EventLog; trust does not import it). */
export interface AuditLog {
  write(e: {
    kind: 'gate.approve' | 'gate.reject' | 'gate.reset';
    server?: string;
    source?: string;
    project?: string;
    digest?: string;
    detail?: string;
  }): void;
}

/**
 * A person's approval or rejection, as one operation: recorded under the store's lock, then its `gate.*` event
 * written, then `after` (a front end's refresh). The CLI and the extension both record a decision through this (policy decisions are src/policy/decide.ts).
 */
export async function approveOrReject(
  input: GateInput,
  name: string,
  source: string | undefined,
  decision: ApprovalDecision,
  o: { log: AuditLog; expectedDigest?: string; lock?: NpmLock; image?: ImagePin; npm?: NpmOps; detail?: string; after?: () => void },
): Promise<DecisionResult> {
  const r = await recordDecision(input, name, source, decision, o.expectedDigest, o.lock, o.image, o.npm);
  const lock = decision === 'approved' ? (r.server.record?.lock ?? o.lock) : undefined;
  const image = decision === 'approved' ? r.record?.image : undefined;
  const detail =
    o.detail ??
    (lock
      ? `package ${lock.name}@${lock.version} ${lock.integrity}`
      : image
        ? `image ${image.pinned ?? `${image.image} not pinned`}`
        : undefined);
  o.log.write({
    kind: decision === 'approved' ? 'gate.approve' : 'gate.reject',
    server: r.server.name,
    source: r.server.source,
    project: r.project,
    digest: r.server.pinned?.digest,
    ...(detail ? { detail } : {}),
  });
  o.after?.();
  return r;
}

/** Returning servers to pending, as one operation: removed under the lock, one `gate.reset` per record, then `after`. */
export async function reset(
  input: GateInput,
  name: string | undefined,
  source: string | undefined,
  o: { log: AuditLog; after?: () => void },
): Promise<ApprovalRecord[]> {
  const removed = await resetDecisions(input, name, source);
  for (const r of removed)
    o.log.write({ kind: 'gate.reset', server: r.server, source: r.source, project: r.project, detail: `was ${r.decision}` });
  o.after?.();
  return removed;
}
