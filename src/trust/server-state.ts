// A server's state against the approval store: blocked, trusted, rejected, approved (and whether everything recorded
// with the approval still holds), changed since approved, or pending (and whether it was decided in another folder).
// The gate (./gate.ts) decides each declared server's state here; the administrator's layer comes after.
import { pin, PinError, type Pinned } from './plan/digest';
import type { TrackingReader } from './sources/fsread';
import type { DeclaredServer } from './sources/declarations';
import { lockIntact } from './packages/npm-lock';
import { imagePinIntact } from './packages/image-pin';
import { packageLaunchOf } from './plan/launchers';
import type { ApprovalRecord } from './approval/store';
import { refOf, serverKey } from './approval/server-ref';
import { ESCAPE_HATCH_ENV, type FullBlock, type ServerReport } from './report';
import { changedFilesOnly, pinnedSetChange } from './approval/diff';
import { refusalAct, refusalWords } from './approval/workspace-manifest';
import { exactTime } from '../text/time';

export function decideState(
  s: ServerReport,
  d: DeclaredServer,
  project: string,
  reader: TrackingReader,
  records: Map<string, ApprovalRecord>,
  fullBlock: FullBlock[],
  escapeHatch: boolean,
  searchPath: string | undefined,
  guard: boolean,
): ServerReport {
  if (fullBlock.length > 0)
    return {
      ...s,
      state: 'blocked',
      reason: `the whole project is blocked: ${fullBlock.map((b) => b.files.join(', ')).join('; ')} (see the full block)`,
    };
  if (d.error) return { ...s, state: 'blocked', reason: d.error };
  if (!s.gated) return { ...s, state: 'trusted', reason: 'user scope: written by a person on this machine' };
  let pinned: Pinned;
  try {
    pinned = pin(d, project, reader, searchPath, guard);
  } catch (e) {
    if (e instanceof PinError) return { ...s, state: 'blocked', reason: `${s.source}: server "${s.name}": ${e.message}` };
    throw e;
  }
  const record = records.get(serverKey(refOf(project, s)));
  const withPin = { ...s, pinned, record };
  if (record?.decision === 'rejected') return { ...withPin, state: 'rejected', reason: `rejected on ${exactTime(record.decidedAt)}` };
  if (escapeHatch)
    return { ...withPin, state: 'approved', viaEscapeHatch: true, reason: `${ESCAPE_HATCH_ENV}=1 trusts every repository server` };
  if (record?.decision === 'approved') return approvedState(withPin, record, pinned);
  const why =
    s.importedBy.length > 0 && s.scope === 'user'
      ? `imported by repository configuration (${s.importedBy.join(', ')}); never decided`
      : 'declared by the repository; never decided';
  return { ...withPin, state: 'pending', reason: `${why}${decidedElsewhere(records, project, s, pinned.digest, reader)}` };
}

/**
 * A decision on the same server (source and name) in another folder — the clone moved, or another clone: said
 * beside "never decided", since approvals belong to the folder they were made in. The same content first.
 */
function decidedElsewhere(
  records: Map<string, ApprovalRecord>,
  project: string,
  s: { source: string; name: string },
  digest: string,
  reader: TrackingReader,
): string {
  const others = [...records.values()].filter((r) => r.project !== project && r.source === s.source && r.server === s.name);
  if (!others.length) return '';
  const r = others.find((x) => x.digest === digest) ?? others.sort((a, b) => (a.decidedAt < b.decidedAt ? 1 : -1))[0];
  const same = r.digest === digest;
  const what = same
    ? `it was ${r.decision} on ${exactTime(r.decidedAt)} in ${r.project} (the same definition and files)`
    : `a server of that name and source was ${r.decision} on ${exactTime(r.decidedAt)} in ${r.project} (with a different definition or files)`;
  return reader.stat(r.project)
    ? ` in this folder — ${what}, another copy of the repository?; approvals belong to the folder they were made in`
    : ` in this folder — ${what}, which no longer exists (moved?); approvals belong to the folder they were made in, so review it here`;
}

/**
 * The state of a server with an approval on record: approved while its digest and everything recorded with it hold,
 * else changed (a file it runs, or its definition as written).
 */
function approvedState(withPin: ServerReport, record: ApprovalRecord, pinned: Pinned): ServerReport {
  if (record.digest === pinned.digest) {
    const stale = staleApproval(withPin, record, pinned);
    if (stale) return stale;
    const snapshot =
      pinned.pinned.snapshot && record.manifest
        ? `; it runs on the workspace as it was then (later edits reach it when you approve it again)`
        : '';
    return {
      ...withPin,
      state: 'approved',
      reason: `${record.team ? `approved by ${record.team.by} (key ${record.team.key}, team file ${record.team.file}), imported on ${exactTime(record.decidedAt)}` : `approved on ${exactTime(record.decidedAt)}`}${snapshot}`,
    };
  }
  // "A file it runs changed" (the entry as written is the same) is told apart from "its definition changed".
  const files = changedFilesOnly(record.pinned, pinned.pinned);
  if (files) {
    // Said as what happened: a file of its folders added or removed is not a file it ran, a folder is no file, and a
    // file that entered (or left) what is pinned with a folder is counted with that folder, not as a change.
    const c = pinnedSetChange(record.pinned, pinned.pinned);
    const list = (l: string[]) => `${l.slice(0, 3).join(', ')}${l.length > 3 ? ', …' : ''}`;
    const n = (k: number, one: string, many: string) => (k === 1 ? one : `${k} ${many}`);
    const within = (k: number) => (k ? `, ${n(k, 'a file', 'files')} in it now pinned` : '');
    const which = [
      c.changed.length ? `${n(c.changed.length, 'a file it runs', 'files it runs')} changed (${list(c.changed)})` : '',
      c.added.length ? `${n(c.added.length, 'a file was', 'files were')} added to a folder it runs from (${list(c.added)})` : '',
      c.removed.length ? `${n(c.removed.length, 'a file it may load was', 'files it may load were')} removed (${list(c.removed)})` : '',
      c.rootsAdded.length
        ? `it runs from ${n(c.rootsAdded.length, 'a folder', 'folders')} it did not (${list(c.rootsAdded)}${within(c.entered.length)})`
        : '',
      c.rootsRemoved.length
        ? `it no longer runs from ${n(c.rootsRemoved.length, 'a folder', 'folders')} (${list(c.rootsRemoved)}${c.left.length ? `, ${n(c.left.length, 'a file', 'files')} in it no longer pinned` : ''})`
        : '',
    ]
      .filter(Boolean)
      .join(' and ');
    return {
      ...withPin,
      state: 'approval-changed',
      reason: `${which} since it was approved on ${exactTime(record.decidedAt)}; its definition as written is the same`,
    };
  }
  return {
    ...withPin,
    state: 'approval-changed',
    reason: `its definition changed since it was approved on ${exactTime(record.decidedAt)}`,
  };
}

/**
 * An approval whose digest still holds but whose record no longer covers what runs: no package lock or image pin (or
 * one that does not match), tools changed, a load the guard refused, no record of the workspace it runs on or is
 * checked against. Undefined when the approval holds.
 */
function staleApproval(withPin: ServerReport, record: ApprovalRecord, pinned: Pinned): ServerReport | undefined {
  const pkg = pinned.plan ? packageLaunchOf(pinned.plan.command, pinned.plan.args) : undefined;
  if (record.digest === pinned.digest && pkg?.kind === 'npm') {
    if (!record.lock)
      return {
        ...withPin,
        state: 'approval-changed',
        reason: `approved on ${exactTime(record.decidedAt)}, before MCP Gate pinned the packages a server downloads: approve it again to pin ${pkg.spec} to an exact version and integrity`,
      };
    if (!lockIntact(record.lock) || record.lock.spec !== pkg.spec)
      return {
        ...withPin,
        state: 'approval-changed',
        reason: `the package lock recorded with its approval does not match its digest or its spec (edited in the store?): approve it again`,
      };
  }
  if (record.digest === pinned.digest && pkg?.kind === 'image') {
    if (!record.image)
      return {
        ...withPin,
        state: 'approval-changed',
        reason: `approved on ${exactTime(record.decidedAt)}, before MCP Gate pinned container images: approve it again to pin ${pkg.image} to its digest`,
      };
    if (!imagePinIntact(record.image) || record.image.image !== pkg.image || record.image.runtime !== pkg.runtime)
      return {
        ...withPin,
        state: 'approval-changed',
        reason: `the image pin recorded with its approval does not match its digest or its image (edited in the store?): approve it again`,
      };
  }
  if (record.digest === pinned.digest && record.toolsChanged) {
    return {
      ...withPin,
      state: 'approval-changed',
      reason: `the tools it offers changed since it was approved (seen ${exactTime(record.toolsChanged.observedAt)})`,
    };
  }
  if (record.digest === pinned.digest && record.guardRefused) {
    const g = record.guardRefused;
    return {
      ...withPin,
      state: 'approval-changed',
      reason: `${refusalWords(g)} (on ${exactTime(record.decidedAt)}); ${g.took ? refusalAct(g, 'it', ` on ${exactTime(g.at)}`) : `it tried to load it on ${exactTime(g.at)}: the load guard refused it`} and MCP Gate stopped the server`,
    };
  }
  if (record.digest === pinned.digest && pinned.pinned.guarded && !record.manifest) {
    return {
      ...withPin,
      state: 'approval-changed',
      reason: `approved on ${exactTime(record.decidedAt)} without a record of the workspace as it was, which its loads are checked against now: approve it again`,
    };
  }
  if (record.digest === pinned.digest && pinned.pinned.snapshot && !record.manifest) {
    return {
      ...withPin,
      state: 'approval-changed',
      reason: `approved on ${exactTime(record.decidedAt)} without a copy of the workspace as it was, which it runs on now: approve it again`,
    };
  }
  return undefined;
}
