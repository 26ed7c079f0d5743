// Updating a pinned npm package, for every front end (`mcp-gate update`, VS Code's Update Pinned Package… and the
// trust panel's Update): an approved npm server keeps running its locked tree until a person asks for a newer
// one. This says which servers can be updated, resolves the spec again (../packages/npm-lock.ts, through ./approvals.ts)
// and compares the approved lock with the new one: the version, the dependencies added, removed or changed, and
// for a small package its own files, old against new. Recording the new lock is ./approvals.ts's `approveOrReject`.
import { createHash } from 'node:crypto';
import { stateWords } from './gate-state';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GateRefusal, npmLaunchOf, resolveLock, type LockOptions } from './approvals';
import type { GateInput, ServerReport } from '../report';
import { NEUTRAL_WORDS } from '../words';
import { LockError, packageCacheRoot, type NpmLock } from '../packages/npm-lock';

/** A package folder's files at most this many, this large in total, get a file-level diff. */
export const SMALL_FILES = 300;
export const SMALL_BYTES = 2 * 1024 * 1024;
/** A file larger than this (or with a NUL byte) is compared by its sha256 only. */
export const MAX_FILE_TEXT_BYTES = 64 * 1024;

export interface DependencyChange {
  change: 'added' | 'removed' | 'changed';
  name: string;
  before?: string;
  after?: string;
}

/** One file of the package's own folder that differs. A text is undefined when it is binary or too large. */
export interface FileChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
  before?: { sha256: string; text?: string };
  after?: { sha256: string; text?: string };
}

export type FileComparison = { compared: true; files: FileChange[] } | { compared: false; why: string };

export interface LockUpdate {
  server: ServerReport;
  spec: string;
  /** The lock approved now, and the one the registry resolves the spec to today. */
  old: NpmLock;
  fresh: NpmLock;
  /** The registry resolves the spec to the approved tree: nothing to approve. */
  upToDate: boolean;
  dependencies: DependencyChange[];
  files: FileComparison;
}

/** The approved lock of a server whose package can be updated (approved, or approved once and changed since). */
function approvedLock(s: ServerReport): NpmLock | undefined {
  const launch = npmLaunchOf(s);
  const r = s.record;
  if (!launch || !s.gated || !s.pinned || r?.decision !== 'approved' || !r.lock || r.lock.spec !== launch.spec) return undefined;
  return s.state === 'approved' || s.state === 'approval-changed' ? r.lock : undefined;
}

/** Whether a server's pinned package can be updated now (the palette's filter, the panel's Update button). */
export function isUpdatable(s: ServerReport): boolean {
  return approvedLock(s) !== undefined;
}

/**
 * Resolves the server's spec again and compares it with the approved lock. Network: the registry. Throws
 * GateRefusal naming the server, the package and what to do.
 */
export async function planUpdate(input: GateInput, s: ServerReport, o: LockOptions): Promise<LockUpdate> {
  const launch = npmLaunchOf(s);
  if (!launch) throw new GateRefusal(`"${s.name}" (${s.source}) does not run an npm package MCP Gate pins; there is nothing to update`);
  const old = approvedLock(s);
  if (!old)
    throw new GateRefusal(
      `"${s.name}" is ${stateWords(s)}, not approved with a package lock (${s.reason}); ${(input.words ?? NEUTRAL_WORDS).review(s.name)}`,
    );
  const fresh = (await resolveLock(input, s, o))!;
  const upToDate = fresh.tree === old.tree && JSON.stringify(fresh.packages) === JSON.stringify(old.packages);
  return {
    server: s,
    spec: launch.spec,
    old,
    fresh,
    upToDate,
    dependencies: upToDate ? [] : dependencyChanges(old, fresh),
    files: upToDate ? { compared: true, files: [] } : await fileChanges(input, old, fresh, o),
  };
}

const shortName = (key: string) => key.replace(/^.*node_modules\//, '');

function dependencyChanges(a: NpmLock, b: NpmLock): DependencyChange[] {
  const out: DependencyChange[] = [];
  const root = `node_modules/${a.name}`;
  const keys = [...new Set([...Object.keys(a.packages), ...Object.keys(b.packages)])].filter((k) => k !== '' && k !== root).sort();
  for (const k of keys) {
    const x = a.packages[k];
    const y = b.packages[k];
    if (!x) out.push({ change: 'added', name: shortName(k), after: String(y.version) });
    else if (!y) out.push({ change: 'removed', name: shortName(k), before: String(x.version) });
    else if (x.version !== y.version || x.integrity !== y.integrity)
      out.push({ change: 'changed', name: shortName(k), before: String(x.version), after: String(y.version) });
  }
  return out;
}

function filesOf(dir: string): Map<string, Buffer> | undefined {
  const files = new Map<string, Buffer>();
  let bytes = 0;
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === 'node_modules') continue; // nested dependencies are compared by version above
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (st.isFile()) {
        bytes += st.size;
        if (files.size >= SMALL_FILES || bytes > SMALL_BYTES) throw new RangeError('large');
        files.set(r, fs.readFileSync(path.join(dir, r)));
      }
    }
  };
  try {
    walk('');
    return files;
  } catch (e) {
    if (e instanceof RangeError) return undefined;
    throw e;
  }
}

function side(d: Buffer | undefined): FileChange['before'] {
  if (!d) return undefined;
  const sha256 = createHash('sha256').update(d).digest('hex');
  return d.length <= MAX_FILE_TEXT_BYTES && !d.includes(0) ? { sha256, text: d.toString('utf8') } : { sha256 };
}

/** The package's own folder, old tree against new, when both are small. */
async function fileChanges(input: GateInput, a: NpmLock, b: NpmLock, o: LockOptions): Promise<FileComparison> {
  const cache = packageCacheRoot(input.machine.home, input.machine.env);
  let before: Map<string, Buffer> | undefined;
  let after: Map<string, Buffer> | undefined;
  try {
    const npm = o.npm;
    const x = await npm.install(a, cache, o.signal);
    const y = await npm.install(b, cache, o.signal);
    before = filesOf(path.join(x.dir, 'node_modules', ...a.name.split('/')));
    after = filesOf(path.join(y.dir, 'node_modules', ...b.name.split('/')));
  } catch (e) {
    if (e instanceof LockError) return { compared: false, why: e.message };
    throw e;
  }
  if (!before || !after)
    return { compared: false, why: `the package has more than ${SMALL_FILES} files or ${SMALL_BYTES / 1024 / 1024} MiB` };
  const files: FileChange[] = [];
  for (const f of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const x = before.get(f);
    const y = after.get(f);
    if (x && y && x.equals(y)) continue;
    files.push({ path: f, change: !x ? 'added' : !y ? 'removed' : 'changed', before: side(x), after: side(y) });
  }
  return { compared: true, files };
}
