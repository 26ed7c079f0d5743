// What runs, as approved, when that is not the plan as written: an approved npm launch's locked tree from MCP
// Gate's package cache (src/trust/packages/npm-lock.ts), an approved `docker run image:tag`'s recorded digest
// (src/trust/packages/image-pin.ts), and the workspace as approved for a server that runs on its snapshot (read
// from the approval store, or, uncontained, compared with the live workspace). Each refuses the start with
// ContainRefused when what was approved cannot be used; whether the server is contained is contain.ts's to decide.
import * as fs from 'node:fs';
import { npmLaunchOf } from '../../trust/approval/approvals';
import {
  loadManifest,
  ManifestError,
  MAX_HASHED_BYTES,
  takeManifest,
  TOO_LARGE,
  type WorkspaceManifest,
} from '../../trust/approval/workspace-manifest';
import { ensureImage, imageLaunchOf, ImagePinError, pinnedArgs } from '../../trust/packages/image-pin';
import { LockError, packageCacheRoot } from '../../trust/packages/npm-lock';
import { findOnPath } from '../../trust/plan/command-line';
import type { LaunchPlan } from '../../trust/plan/launch-plan';
import { NEUTRAL_WORDS } from '../../trust/words';
import { ContainRefused, type ContainOptions } from './contain-options';

/**
 * An approved npm launch runs its lock: the verified tree in MCP Gate's package cache, its command by path (with
 * the node on MCP Gate's PATH for a JavaScript command), never `npx` resolving the spec again. Undefined when the
 * server is not an npm launch or is a user server (run as written).
 */
export async function fromLock(o: ContainOptions): Promise<{ plan: LaunchPlan & { executable: string }; tree: string } | undefined> {
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
export async function fromImagePin(o: ContainOptions): Promise<(LaunchPlan & { executable: string }) | undefined> {
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
export function snapshotOf(o: ContainOptions): WorkspaceManifest | undefined {
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
export async function liveIsSnapshot(o: ContainOptions, approved: WorkspaceManifest): Promise<void> {
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
