// Approvals a team shares (issue 27 item 2). `mcp-gate approvals export` writes a project's approvals — the digest of
// exactly what runs (definition and closure), the package lock or image pin, the tools pinned, who signed and when
// — to a team file, each entry signed with the signer's SSH key (./signatures.ts). `mcp-gate approvals import`
// records an entry on this machine only when (1) its signature verifies for the principal it names against an
// allowed-signers file the user chose (never one inside the project), and (2) its digest equals the digest of what
// this machine would run for that server now; its lock and image pin must be intact and name what the definition
// launches. The record is an ordinary approval with `team` saying who approved: a server that changes later re-gates
// as any other. `check --team` uses the same verification without writing the user's store.
import * as fs from 'node:fs';
import * as path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { evaluateGate } from '../gate';
import { type GateInput, type GateReport, type ServerReport } from '../report';
import { canonicalJson } from '../plan/digest';
import { imageLaunchOf, imagePinIntact, type ImagePin } from '../packages/image-pin';
import { lockIntact, type NpmLock } from '../packages/npm-lock';
import { GateRefusal, npmLaunchOf, type AuditLog } from './approvals';
import { recordRef, refOf, serverKey } from './server-ref';
import { sign, verify } from './signatures';
import { ApprovalStore, type ApprovalRecord, type PinnedTools } from './store';
import { NEUTRAL_WORDS, type FrontEndWords } from '../words';
import {
  loadManifest,
  ManifestError,
  MAX_HASHED_BYTES,
  saveManifest,
  takeManifest,
  TOO_LARGE,
  type ManifestRef,
  type WorkspaceManifest,
} from './workspace-manifest';

/** The format tag of a team file (and of every signed entry). */
export const TEAM_FORMAT = 'mcp-gate team approvals 1';
const MAX_TEAM_FILE_BYTES = 16 * 1024 * 1024;
const MAX_ENTRIES = 1000;

/** One server's approval as a team shares it. */
export interface TeamEntry {
  /** The configuration file (workspace-relative) that declares it, and its name there. */
  source: string;
  server: string;
  /** What runs, pinned: the same digest a local approval records (definition, closure; machine paths excluded). */
  digest: string;
  /** What it runs, in words, for a person reading the file. Not trusted for anything. */
  runs: string;
  lock?: NpmLock;
  image?: ImagePin;
  tools?: PinnedTools;
  /**
   * For a server under the load guard or on the approved snapshot: the workspace as the signer approved it
   * (workspace-relative path → sha256). An import records it, not this machine's workspace, so what loads here is
   * checked against what was reviewed; a server on the snapshot is shown only this clone's files that match it.
   */
  workspace?: Record<string, string>;
  /** The principal (as in the allowed-signers file) whose key signed the entry. */
  approvedBy: string;
  approvedAt: string;
  /** `ssh-keygen -Y sign` output over {@link entryPayload}. */
  signature: string;
}

export interface TeamFile {
  format: typeof TEAM_FORMAT;
  entries: TeamEntry[];
}

/** Who approved a record imported from a team file (kept in the store; shown by the CLI and the panel). */
export interface TeamApproval {
  by: string;
  /** The fingerprint of the key that signed. */
  key: string;
  /** The team file it was imported from. */
  file: string;
  approvedAt: string;
}

/** The bytes an entry's signature covers: every field but the signature, in canonical JSON, with the format tag. */
export function entryPayload(e: Omit<TeamEntry, 'signature'> & { signature?: string }): string {
  const { signature: _s, ...rest } = e;
  return canonicalJson({ format: TEAM_FORMAT, ...rest });
}

const ENTRY_KEYS = new Set([
  'source',
  'server',
  'digest',
  'runs',
  'lock',
  'image',
  'tools',
  'workspace',
  'approvedBy',
  'approvedAt',
  'signature',
]);
const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Reads and validates a team file strictly; anything unexpected refuses the whole file, naming it. */
export function readTeamFile(file: string): TeamFile {
  let text: string;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) throw new Error('it is not a regular file');
    if (st.size > MAX_TEAM_FILE_BYTES) throw new Error(`it is ${st.size} bytes, over the ${MAX_TEAM_FILE_BYTES}-byte bound`);
    text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(file));
  } catch (e) {
    throw new GateRefusal(`the team file ${file} cannot be read: ${(e as Error).message}; nothing was imported`);
  }
  const bad = (why: string): never => {
    throw new GateRefusal(`the team file ${file} is not valid: ${why}; nothing was imported`);
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return bad(`it is not JSON (${(e as Error).message})`);
  }
  if (!isObj(v) || v.format !== TEAM_FORMAT || !Array.isArray(v.entries) || Object.keys(v).some((k) => k !== 'format' && k !== 'entries')) {
    return bad(`it must be {"format": "${TEAM_FORMAT}", "entries": […]}`);
  }
  if (v.entries.length > MAX_ENTRIES) bad(`it has ${v.entries.length} entries; at most ${MAX_ENTRIES}`);
  const seen = new Set<string>();
  v.entries.forEach((e, i) => {
    if (!isObj(e)) return bad(`entry ${i} is not an object`);
    for (const k of Object.keys(e)) if (!ENTRY_KEYS.has(k)) bad(`entry ${i} has an unknown key "${k}"`);
    for (const k of ['source', 'server', 'digest', 'runs', 'approvedBy', 'approvedAt', 'signature'])
      if (typeof e[k] !== 'string') bad(`entry ${i}: "${k}" is not a string`);
    if (!/^sha256:[0-9a-f]{64}$/.test(e.digest as string)) bad(`entry ${i}: malformed digest`);
    if (e.lock !== undefined && (!isObj(e.lock) || typeof e.lock.digest !== 'string' || !isObj(e.lock.packages)))
      bad(`entry ${i}: malformed package lock`);
    if (e.image !== undefined && (!isObj(e.image) || typeof e.image.digest !== 'string' || typeof e.image.image !== 'string'))
      bad(`entry ${i}: malformed image pin`);
    if (
      e.tools !== undefined &&
      (!isObj(e.tools) ||
        typeof e.tools.digest !== 'string' ||
        !isObj(e.tools.snapshot) ||
        !Array.isArray((e.tools.snapshot as Record<string, unknown>).tools))
    )
      bad(`entry ${i}: malformed pinned tools`);
    if (e.workspace !== undefined && (!isObj(e.workspace) || Object.values(e.workspace).some((h) => typeof h !== 'string')))
      bad(`entry ${i}: malformed workspace record`);
    const key = JSON.stringify([e.source, e.server]);
    if (seen.has(key)) bad(`entry ${i} repeats ${e.server} (${e.source})`);
    seen.add(key);
  });
  return v as unknown as TeamFile;
}

/** What the definition of a server runs, in words (the plan's command line, or the URL). */
function runsOf(s: ServerReport): string {
  const plan = s.pinned?.plan;
  if (plan) return [plan.command, ...plan.args].join(' ');
  return s.pinned?.pinned.definition.url ?? s.pinned?.pinned.definition.command ?? '';
}

/**
 * Writes the approvals of the project's repository servers to `file`, each signed with `key` as `principal`: entries
 * for the same servers already in the file are replaced, others kept; with nothing to export nothing is written.
 * Returns the servers written and why the others were not.
 */
export async function exportApprovals(
  input: GateInput,
  o: { file: string; key: string; principal: string; only?: string },
): Promise<{ written: string[]; skipped: string[] }> {
  const report = evaluateGate(input);
  const existing = fs.existsSync(o.file) ? readTeamFile(o.file).entries : [];
  const written: string[] = [];
  const skipped: string[] = [];
  const fresh: TeamEntry[] = [];
  for (const s of report.servers) {
    if (!s.gated || (o.only !== undefined && s.name !== o.only)) continue;
    const r = s.record;
    if (s.state !== 'approved' || s.viaEscapeHatch || !r || r.decision !== 'approved' || !s.pinned || r.digest !== s.pinned.digest) {
      skipped.push(
        `${s.name} (${s.source}): ${s.state === 'approved' && s.viaEscapeHatch ? 'trusted by the escape hatch, not approved' : s.reason}`,
      );
      continue;
    }
    let workspace: Record<string, string> | undefined;
    if (s.pinned.pinned.guarded || s.pinned.pinned.snapshot) {
      try {
        workspace = r.manifest ? loadManifest(input.storeDir, r.manifest).files : undefined;
      } catch (e) {
        if (!(e instanceof ManifestError)) throw e;
      }
      if (!workspace) {
        skipped.push(
          `${s.name} (${s.source}): its approval has no readable record of the workspace it was approved with; approve it again, then export`,
        );
        continue;
      }
    }
    const unsigned: Omit<TeamEntry, 'signature'> = {
      source: s.source,
      server: s.name,
      digest: s.pinned.digest,
      runs: runsOf(s),
      ...(r.lock ? { lock: r.lock } : {}),
      ...(r.image ? { image: r.image } : {}),
      ...(r.tools ? { tools: r.tools } : {}),
      ...(workspace ? { workspace } : {}),
      approvedBy: o.principal,
      approvedAt: new Date().toISOString(),
    };
    fresh.push({ ...unsigned, signature: sign(o.key, entryPayload(unsigned)) });
    written.push(`${s.name} (${s.source})`);
  }
  if (o.only !== undefined && written.length === 0) {
    throw new GateRefusal(
      skipped.length ? `"${o.only}" cannot be exported: ${skipped.join('; ')}` : `no repository server "${o.only}" in ${report.project}`,
    );
  }
  if (fresh.length === 0) return { written, skipped };
  const replaced = new Set(fresh.map((e) => JSON.stringify([e.source, e.server])));
  const entries = [...existing.filter((e) => !replaced.has(JSON.stringify([e.source, e.server]))), ...fresh];
  fs.mkdirSync(path.dirname(path.resolve(o.file)), { recursive: true });
  await writeFileAtomic(o.file, JSON.stringify({ format: TEAM_FORMAT, entries }, null, 2) + '\n', { mode: 0o644 });
  return { written, skipped };
}

/** What became of one entry of a team file. */
export interface ImportOutcome {
  server: string;
  source: string;
  outcome: 'approved' | 'unchanged' | 'refused';
  /** For `refused`: why, in words. For the others: who signed, with which key. */
  detail: string;
  by?: string;
  key?: string;
}

function inside(file: string, dir: string): boolean {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const f = real(file);
  const d = real(dir);
  return f === d || f.startsWith(d + path.sep);
}

/**
 * Whether an entry may approve the server it names on this machine: its signature (for its principal, by
 * `allowedSigners`), then the server as this machine sees it now (declared, a repository server, not blocked, the
 * same digest), then its lock and image pin. Returns the record to write, or why not.
 */
function admit(
  report: GateReport,
  e: TeamEntry,
  allowedSigners: string,
  file: string,
  words?: FrontEndWords,
  manifest?: ManifestRef,
): { record: ApprovalRecord; key: string } | { why: string } {
  const v = verify(allowedSigners, e.approvedBy, entryPayload(e), e.signature);
  if (!v.ok) return { why: v.why };
  const s = report.servers.find((x) => x.name === e.server && x.source === e.source);
  if (!s) return { why: `this project (${report.project}) declares no server "${e.server}" in ${e.source}` };
  if (!s.gated) return { why: `"${e.server}" is your own (user-scope) server here; it needs no approval` };
  if (s.state === 'blocked' || !s.pinned) return { why: `"${e.server}" is blocked here: ${s.reason}` };
  if (s.pinned.digest !== e.digest)
    return {
      why: `what would run here differs from what ${e.approvedBy} approved (approved ${e.digest}, here ${s.pinned.digest}): ${(words ?? NEUTRAL_WORDS).review(e.server)}`,
    };
  const npm = npmLaunchOf(s);
  if (npm && (!e.lock || !lockIntact(e.lock) || e.lock.spec !== npm.spec))
    return {
      why: `it runs the npm package ${npm.spec}, and the entry ${e.lock ? 'carries a lock that does not match its digest or that spec' : 'carries no package lock'}`,
    };
  if (!npm && e.lock) return { why: 'the entry carries a package lock, and the server here runs no npm package' };
  const container = imageLaunchOf(s);
  if (container && (!e.image || !imagePinIntact(e.image) || e.image.image !== container.image || e.image.runtime !== container.runtime))
    return {
      why: `it runs the image ${container.image}, and the entry ${e.image ? 'carries an image pin that does not match its digest or that image' : 'carries no image pin'}`,
    };
  if (!container && e.image) return { why: 'the entry carries an image pin, and the server here runs no container image' };
  if (s.pinned.pinned.snapshot && !manifest)
    return {
      why: 'it runs on the workspace as its signer approved it, and the entry carries no record of it (exported by an earlier MCP Gate): export it again, or approve it on this machine',
    };
  if (s.pinned.pinned.guarded && !manifest)
    return {
      why: 'its loads are checked against the workspace its signer approved, and the entry carries no record of it (exported by an earlier MCP Gate): export it again, or approve it on this machine',
    };
  const record: ApprovalRecord = {
    project: report.project,
    source: s.source,
    server: s.name,
    decision: 'approved',
    digest: s.pinned.digest,
    pinned: s.pinned.pinned,
    texts: s.pinned.texts,
    decidedAt: new Date().toISOString(),
    ...(e.lock ? { lock: e.lock } : {}),
    ...(e.image ? { image: e.image } : {}),
    ...(e.tools ? { tools: e.tools } : {}),
    team: { by: e.approvedBy, key: v.key, file: path.resolve(file), approvedAt: e.approvedAt },
    ...((s.pinned.pinned.guarded || s.pinned.pinned.snapshot) && manifest ? { manifest } : {}),
  };
  return { record, key: v.key };
}

/**
 * The workspace each verified entry with one was approved on, saved. A server under the load guard has its loads
 * checked against the workspace the signer approved (never this machine's as it is now, which the signer did not
 * see): the record each verified entry carries is kept. A server on the approved snapshot is shown this clone's files
 * that are byte for byte what the signer approved; a file that differs or that the signer did not have is left out
 * of what it is shown (and said: `leftOut`).
 */
async function teamManifests(
  input: GateInput,
  entries: readonly TeamEntry[],
  allowedSigners: string,
): Promise<{ manifests: Map<TeamEntry, ManifestRef>; leftOut: Map<TeamEntry, string[]> }> {
  const manifests = new Map<TeamEntry, ManifestRef>();
  const leftOut = new Map<TeamEntry, string[]>();
  const before = evaluateGate(input);
  const project = before.project;
  let local: WorkspaceManifest | undefined;
  for (const e of entries) {
    if (!e.workspace || !verify(allowedSigners, e.approvedBy, entryPayload(e), e.signature).ok) continue;
    const snapshot = before.servers.find((x) => x.name === e.server && x.source === e.source)?.pinned?.pinned.snapshot;
    if (!snapshot) {
      // (takenAt is when this machine's files were compared: the guards count a later metadata change as a change, and
      // the team's own time is another machine's)
      manifests.set(
        e,
        await saveManifest(input.storeDir, { version: 1, root: project, files: e.workspace, takenAt: new Date().toISOString() }),
      );
      continue;
    }
    try {
      local ??= await takeManifest(input.projectDir, undefined, { storeDir: input.storeDir, maxBytes: MAX_HASHED_BYTES });
    } catch (err) {
      if (err instanceof ManifestError) throw new GateRefusal(`"${e.server}" cannot be imported: ${err.message}; nothing was recorded`);
      throw err;
    }
    const files: Record<string, string> = {};
    const differ: string[] = [];
    for (const [rel, sha] of Object.entries(local.files)) {
      if (Object.prototype.hasOwnProperty.call(e.workspace, rel) && e.workspace[rel] === sha && sha !== TOO_LARGE) files[rel] = sha;
      else differ.push(rel);
    }
    const exec = (local.exec ?? []).filter((f) => f in files);
    manifests.set(e, await saveManifest(input.storeDir, { version: 1, root: project, files, exec, takenAt: local.takenAt }));
    if (differ.length) leftOut.set(e, differ);
  }
  return { manifests, leftOut };
}

/**
 * Imports a team file into the approval store: each entry that {@link admit}s is recorded (under the store's lock,
 * checked again inside it), with one `gate.approve` event naming the signer; every other entry is reported with
 * why. A rejection recorded on this machine is never overturned by a team file.
 */
export async function importApprovals(
  input: GateInput,
  file: string,
  o: { allowedSigners: string; log?: AuditLog },
): Promise<ImportOutcome[]> {
  if (!fs.existsSync(o.allowedSigners))
    throw new GateRefusal(
      `the allowed-signers file ${o.allowedSigners} does not exist: it lists the keys whose approvals you accept (one "<principal> <key type> <public key>" per line; see ssh-keygen(1), ALLOWED SIGNERS)`,
    );
  if (inside(o.allowedSigners, input.projectDir))
    throw new GateRefusal(
      `the allowed-signers file ${o.allowedSigners} lies inside the project: a repository cannot say whose approvals you accept; keep it in your own configuration folder`,
    );
  const team = readTeamFile(file);
  const { manifests, leftOut } = await teamManifests(input, team.entries, o.allowedSigners);
  const store = new ApprovalStore(input.storeDir, input.masker);
  const outcomes = await store.update((records) => {
    const report = evaluateGate(input);
    if (report.fullBlock.length > 0)
      throw new GateRefusal(`the project is blocked, so nothing can be imported: ${report.fullBlock.map((b) => b.reason).join('; ')}`);
    const result: ImportOutcome[] = [];
    for (const e of team.entries) {
      const base = { server: e.server, source: e.source };
      const a = admit(report, e, o.allowedSigners, file, input.words, manifests.get(e));
      if ('why' in a) {
        result.push({ ...base, outcome: 'refused', detail: a.why });
        continue;
      }
      const key = serverKey(refOf(report.project, { name: e.server, source: e.source }));
      const index = records.findIndex((r) => serverKey(recordRef(r)) === key);
      const previous = index >= 0 ? records[index] : undefined;
      if (previous?.decision === 'rejected') {
        result.push({
          ...base,
          outcome: 'refused',
          detail: `you rejected "${e.server}" on this machine; a team file does not overturn that; ${(input.words ?? NEUTRAL_WORDS).resetServer(e.server)}, then import again`,
        });
        continue;
      }
      const signed = `signed by ${e.approvedBy} (${a.key})`;
      if (
        previous?.decision === 'approved' &&
        previous.digest === a.record.digest &&
        previous.lock?.digest === a.record.lock?.digest &&
        previous.image?.digest === a.record.image?.digest &&
        !previous.toolsChanged
      ) {
        result.push({
          ...base,
          outcome: 'unchanged',
          detail: `already approved with this digest; ${signed}`,
          by: e.approvedBy,
          key: a.key,
        });
        continue;
      }
      if (index >= 0) records[index] = a.record;
      else records.push(a.record);
      const out = leftOut.get(e);
      const note = out
        ? `; it runs on the files of this clone that are what ${e.approvedBy} approved: ${out.length === 1 ? '1 file differs or is new here and is' : `${out.length} files differ or are new here and are`} left out of what it is shown (${out.slice(0, 3).join(', ')}${out.length > 3 ? ', …' : ''})`
        : '';
      result.push({ ...base, outcome: 'approved', detail: `${signed}${note}`, by: e.approvedBy, key: a.key });
    }
    return { records, result };
  });
  const report = o.log ? evaluateGate(input) : undefined;
  for (const x of outcomes) {
    if (x.outcome !== 'approved' || !o.log || !report) continue;
    const e = team.entries.find((t) => t.server === x.server && t.source === x.source)!;
    o.log.write({
      kind: 'gate.approve',
      server: x.server,
      source: x.source,
      project: report.project,
      digest: e.digest,
      detail: `team approval ${x.detail}, from ${path.resolve(file)}`,
    });
  }
  return outcomes;
}
