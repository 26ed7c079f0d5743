// `mcp-gate update <server>`: an approved npm server keeps running its locked package until a person asks for
// a newer one. This resolves the spec again (src/trust/npm-lock.ts), shows what would change — the version, the
// dependencies added, removed or changed, and for a small package a file-level diff of its contents — and records
// the new lock only once the person says yes (or --yes). An approved container launch by tag pulls the tag again
// and shows the digest it now names against the approved one (src/trust/image-pin.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { decide, GateRefusal, npmLaunchOf, resolveLock } from '../trust/approvals';
import { CLI_WORDS } from './words';
import { escapeText } from '../trust/escape';
import { evaluateGate, findServer, type GateInput } from '../trust/gate';
import { imageLaunchOf, resolveImage } from '../trust/image-pin';
import type { ServerReport } from '../trust/gate';
import type { ImageLaunch } from '../trust/packages';
import { ensureInstalled, LockError, lockSummary, packageCacheRoot, type NpmLock } from '../trust/npm-lock';
import type { EventLog } from '../host/log';
import { finishBeforeStopping } from './signals';
import { out } from './output';

export interface UpdateContext {
  input: GateInput;
  name: string;
  source?: string;
  yes: boolean;
  ask: (question: string) => Promise<string | undefined>;
  log: EventLog;
}

/** A package folder's files at most this many, this large in total, get a file-level diff. */
const SMALL_FILES = 300;
const SMALL_BYTES = 2 * 1024 * 1024;
const MAX_FILE_DIFF_BYTES = 64 * 1024;
const MAX_DIFF_LINES = 400;

export async function updateCommand(c: UpdateContext): Promise<number> {
  const report = evaluateGate(c.input);
  const found = findServer(report, c.name, c.source, CLI_WORDS);
  if (!found.ok) throw new GateRefusal(found.message);
  const s = found.server;
  const container = imageLaunchOf(s);
  if (container) return updateImage(c, s, container);
  const launch = npmLaunchOf(s);
  if (!launch) throw new GateRefusal(`"${s.name}" (${s.source}) does not run an npm package or a container image MCP Gate pins; there is nothing to update`);
  const old = s.record?.decision === 'approved' ? s.record.lock : undefined;
  if (s.state !== 'approved' || !old || !s.pinned) {
    throw new GateRefusal(`"${s.name}" is ${s.state}, not approved with a package lock (${s.reason}); review it with mcp-gate approve ${s.name}`);
  }
  const fresh = (await resolveLock(c.input, s))!;
  out(`server "${escapeText(s.name)}" (${escapeText(s.source)}): ${escapeText(launch.spec)} from ${escapeText(fresh.registry)}`);
  out(`  approved  ${escapeText(lockSummary(old))}`);
  out(`  now       ${escapeText(lockSummary(fresh))}`);
  if (fresh.tree === old.tree && JSON.stringify(fresh.packages) === JSON.stringify(old.packages)) {
    out(`"${s.name}" is up to date: the registry resolves ${launch.spec} to the approved tree.`);
    return 0;
  }
  out(`  version   ${old.name} ${old.version} → ${fresh.version}`);
  for (const line of dependencyChanges(old, fresh)) out(`  ${line}`);
  for (const line of await fileChanges(c.input, old, fresh)) out(`  ${line}`);
  if (fresh.installScripts.length) out(`  install scripts NOT run: ${fresh.installScripts.join(', ')}`);
  if (!c.yes) {
    const answer = await c.ask(`\nApprove "${s.name}" running ${fresh.name} ${fresh.version} exactly as shown above? Type "yes" to approve: `);
    if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
      out(`\nnot approved; "${s.name}" keeps running ${old.name} ${old.version}`);
      return 1;
    }
  }
  const r = await finishBeforeStopping(decide(c.input, s.name, s.source, 'approved', { log: c.log, expectedDigest: s.pinned.digest, lock: fresh, detail: `update ${old.name} ${old.version} → ${fresh.version} ${fresh.integrity}` }));
  out(`approved "${r.server.name}" (${r.server.source}) running ${fresh.name} ${fresh.version}`);
  return 0;
}

async function updateImage(c: UpdateContext, s: ServerReport, launch: ImageLaunch): Promise<number> {
  const old = s.record?.decision === 'approved' ? s.record.image : undefined;
  if (s.state !== 'approved' || !old || !s.pinned) {
    throw new GateRefusal(`"${s.name}" is ${s.state}, not approved with an image pin (${s.reason}); review it with mcp-gate approve ${s.name}`);
  }
  const fresh = await resolveImage(launch, s.pinned.plan?.executable, c.input.machine.env, { pull: true });
  if (!fresh.pinned) throw new GateRefusal(`"${s.name}" (${s.source}): ${fresh.why}; nothing was recorded, it keeps running ${old.pinned ?? old.image}`);
  out(`server "${escapeText(s.name)}" (${escapeText(s.source)}): ${escapeText(launch.image)} (${escapeText(launch.launcher)})`);
  out(`  approved  ${escapeText(old.pinned ?? `not pinned (${old.why ?? ''})`)}`);
  out(`  now       ${escapeText(fresh.pinned)}`);
  if (fresh.pinned === old.pinned) {
    out(`"${s.name}" is up to date: ${launch.image} names the approved image.`);
    return 0;
  }
  if (!c.yes) {
    const answer = await c.ask(`\nApprove "${s.name}" running ${fresh.pinned} exactly as shown above? Type "yes" to approve: `);
    if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
      out(`\nnot approved; "${s.name}" keeps running ${old.pinned ?? launch.image}`);
      return 1;
    }
  }
  const r = await finishBeforeStopping(decide(c.input, s.name, s.source, 'approved', { log: c.log, expectedDigest: s.pinned.digest, image: fresh, detail: `update ${old.pinned ?? launch.image} → ${fresh.pinned}` }));
  out(`approved "${r.server.name}" (${r.server.source}) running ${fresh.pinned}`);
  return 0;
}

function shortName(key: string): string {
  return key.replace(/^.*node_modules\//, '');
}

function dependencyChanges(a: NpmLock, b: NpmLock): string[] {
  const L: string[] = [];
  const root = `node_modules/${a.name}`;
  const keys = [...new Set([...Object.keys(a.packages), ...Object.keys(b.packages)])].filter((k) => k !== '' && k !== root).sort();
  for (const k of keys) {
    const x = a.packages[k];
    const y = b.packages[k];
    if (!x) L.push(`+ dependency ${shortName(k)} ${y.version}`);
    else if (!y) L.push(`- dependency ${shortName(k)} ${x.version}`);
    else if (x.version !== y.version || x.integrity !== y.integrity) L.push(`~ dependency ${shortName(k)} ${x.version} → ${y.version}`);
  }
  if (!L.length) L.push('dependencies: unchanged');
  return L;
}

function filesOf(dir: string): Map<string, Buffer> | undefined {
  const files = new Map<string, Buffer>();
  let bytes = 0;
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === 'node_modules') continue; // nested dependencies are listed above
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

/** A file-level diff of the package's own folder, old tree against new, when both are small. */
async function fileChanges(input: GateInput, a: NpmLock, b: NpmLock): Promise<string[]> {
  const cache = packageCacheRoot(input.machine.home, input.machine.env);
  let before: Map<string, Buffer> | undefined;
  let after: Map<string, Buffer> | undefined;
  try {
    const x = await ensureInstalled(a, cache);
    const y = await ensureInstalled(b, cache);
    before = filesOf(path.join(x.dir, 'node_modules', ...a.name.split('/')));
    after = filesOf(path.join(y.dir, 'node_modules', ...b.name.split('/')));
  } catch (e) {
    if (e instanceof LockError) return [`files: not compared (${e.message})`];
    throw e;
  }
  if (!before || !after) return [`files: not compared (the package has more than ${SMALL_FILES} files or ${SMALL_BYTES / 1024 / 1024} MiB)`];
  const L: string[] = ['files of the package:'];
  let budget = MAX_DIFF_LINES;
  for (const f of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const x = before.get(f);
    const y = after.get(f);
    if (x && y && x.equals(y)) continue;
    L.push(`${!x ? '+' : !y ? '-' : '~'} ${escapeText(f)}`);
    const text = (d?: Buffer) => (d && d.length <= MAX_FILE_DIFF_BYTES && !d.includes(0) ? d.toString('utf8') : undefined);
    const tx = x ? text(x) : '';
    const ty = y ? text(y) : '';
    if (tx === undefined || ty === undefined) {
      L.push('    (binary or larger than 64 KiB: not shown)');
      continue;
    }
    const patch = createTwoFilesPatch(`a/${f}`, `b/${f}`, tx, ty, '', '', { context: 2 }).split('\n').slice(2);
    for (const line of patch) {
      if (budget-- <= 0) break;
      L.push(`    ${escapeText(line)}`);
    }
    if (budget <= 0) {
      L.push('    … (diff cut here)');
      break;
    }
  }
  if (L.length === 1) L.push('  (no file of the package itself changed)');
  return L;
}
