// The approval store: one JSON file outside every repository (VS Code's globalStorage for the extension; the CLI
// finds the same file). Each record is a person's decision about one server of one project, keyed by
// (project real path, source file, server name) — the server's identity and its one key (./server-ref.ts), with the digest it was made for and the pinned definition
// kept for diffs. Writes are atomic (write-file-atomic) and locked across processes (proper-lockfile). A file
// that fails validation approves nothing, is copied to a backup before anything is written over it, and is
// reported as corrupt. Every write passes the records through the masking function the store is made with (the
// one masker of src/policy, injected by the CLI and the extension): a secret a server puts in its tool
// descriptions or instructions never reaches the file raw, and each write re-masks what an earlier one kept.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import writeFileAtomic from 'write-file-atomic';
import { sha256, type PinnedDefinition } from '../plan/digest';
import { TrackingReader } from '../sources/fsread';
import type { ImagePin } from '../packages/image-pin';
import type { NpmLock } from '../packages/npm-lock';
import { recordRef, serverKey } from './server-ref';
import type { GuardRefusal, ManifestRef } from './workspace-manifest';

export const STORE_FILE = 'approvals.json';
const MAX_STORE_BYTES = 64 * 1024 * 1024;

/** A person's decision on a server (a rule's allow/ask/deny is policy/rules.ts `Decision`). */
export type ApprovalDecision = 'approved' | 'rejected';

/** What a server offered when it was first started after approval: pinned so a later change re-gates it. */
export interface PinnedTools {
  digest: string;
  /** Tool names, titles, descriptions, schemas, annotations, and the server's instructions, as the server sent them. */
  snapshot: { instructions?: string; tools: Record<string, unknown>[] };
  observedAt: string;
}

export interface ApprovalRecord {
  /** Pinned at the first start after approval (absent until then). */
  tools?: PinnedTools;
  /** A different tool list seen at a later start: the server is re-gated until approved again. */
  toolsChanged?: PinnedTools;
  project: string;
  source: string;
  server: string;
  decision: ApprovalDecision;
  digest: string;
  pinned: PinnedDefinition;
  texts: Record<string, string>;
  decidedAt: string;
  /** For an npm launch: the exact package tree approved (src/trust/packages/npm-lock.ts); what the host runs. */
  lock?: NpmLock;
  /** For a container launch by tag: the image digest approved (src/trust/packages/image-pin.ts), or why there is none. */
  image?: ImagePin;
  /** Imported from a team file (./team.ts): who signed the approval, with which key, from which file. */
  team?: { by: string; key: string; file: string; approvedAt: string };
  /** For a server under the load guard: the workspace as it was at approval (./workspace-manifest.ts). */
  manifest?: ManifestRef;
  /** The load guard refused a file since approval (the server was stopped): it waits for a review again. */
  guardRefused?: GuardRefusal;
}

export type StoreHealth = { status: 'ok' } | { status: 'missing' } | { status: 'corrupt'; problem: string; backup?: string };

export interface StoreSnapshot {
  file: string;
  health: StoreHealth;
  records: ApprovalRecord[];
}

const RECORD_KEYS = [
  'project',
  'source',
  'server',
  'decision',
  'digest',
  'pinned',
  'texts',
  'decidedAt',
  'tools',
  'toolsChanged',
  'lock',
  'image',
  'team',
  'manifest',
  'guardRefused',
];

function validTools(v: unknown): boolean {
  if (v === undefined) return true;
  if (typeof v !== 'object' || v === null) return false;
  const t = v as Record<string, unknown>;
  const snap = t.snapshot as Record<string, unknown> | undefined;
  return (
    typeof t.digest === 'string' && typeof t.observedAt === 'string' && !!snap && typeof snap === 'object' && Array.isArray(snap.tools)
  );
}

/** Strict validation: an unknown key or a wrong type makes the whole file corrupt (fail closed). */
function validate(v: unknown): ApprovalRecord[] {
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isObj(v)) throw new Error('the top level is not an object');
  const keys = Object.keys(v).sort().join(',');
  if (keys !== 'records,version') throw new Error(`unexpected top-level keys (${Object.keys(v).join(', ')})`);
  if (v.version !== 1) throw new Error(`unknown store version ${JSON.stringify(v.version)}`);
  if (!Array.isArray(v.records)) throw new Error('"records" is not a list');
  const seen = new Set<string>();
  return v.records.map((r, i) => {
    if (!isObj(r)) throw new Error(`record ${i} is not an object`);
    for (const k of Object.keys(r)) if (!RECORD_KEYS.includes(k)) throw new Error(`record ${i} has an unknown key "${k}"`);
    for (const k of ['project', 'source', 'server', 'digest', 'decidedAt'])
      if (typeof r[k] !== 'string') throw new Error(`record ${i}: "${k}" is not a string`);
    if (r.decision !== 'approved' && r.decision !== 'rejected')
      throw new Error(`record ${i}: unknown decision ${JSON.stringify(r.decision)}`);
    if (!/^sha256:[0-9a-f]{64}$/.test(r.digest as string)) throw new Error(`record ${i}: malformed digest`);
    if (!isObj(r.pinned) || !isObj(r.texts)) throw new Error(`record ${i}: "pinned" or "texts" is not an object`);
    if (!validTools(r.tools) || !validTools(r.toolsChanged)) throw new Error(`record ${i}: malformed pinned tools`);
    if (r.lock !== undefined && (!isObj(r.lock) || typeof r.lock.digest !== 'string' || !isObj(r.lock.packages)))
      throw new Error(`record ${i}: malformed package lock`);
    if (r.image !== undefined && (!isObj(r.image) || typeof r.image.digest !== 'string' || typeof r.image.image !== 'string'))
      throw new Error(`record ${i}: malformed image pin`);
    if (
      r.team !== undefined &&
      (!isObj(r.team) || ['by', 'key', 'file', 'approvedAt'].some((k) => typeof (r.team as Record<string, unknown>)[k] !== 'string'))
    )
      throw new Error(`record ${i}: malformed team approval`);
    if (
      r.manifest !== undefined &&
      (!isObj(r.manifest) ||
        typeof r.manifest.sha256 !== 'string' ||
        !/^[0-9a-f]{64}$/.test(r.manifest.sha256) ||
        typeof r.manifest.files !== 'number' ||
        typeof r.manifest.takenAt !== 'string')
    )
      throw new Error(`record ${i}: malformed workspace manifest`);
    if (
      r.guardRefused !== undefined &&
      (!isObj(r.guardRefused) ||
        typeof r.guardRefused.file !== 'string' ||
        !['changed', 'new', 'scratch', 'sink'].includes(r.guardRefused.why as string) ||
        typeof r.guardRefused.at !== 'string' ||
        (r.guardRefused.took !== undefined && r.guardRefused.took !== true) ||
        (r.guardRefused.how !== undefined && typeof r.guardRefused.how !== 'string'))
    )
      throw new Error(`record ${i}: malformed load-guard refusal`);
    const key = serverKey(recordRef(r as { project: string; source: string; server: string }));
    if (seen.has(key)) throw new Error(`record ${i} duplicates an earlier record for the same server`);
    seen.add(key);
    return r as unknown as ApprovalRecord;
  });
}

export class StoreLockError extends Error {}

/** The masking the store writes through (src/policy's Masker satisfies it; trust does not import policy). */
export interface StoreMasker {
  maskDeep<T>(value: T): T;
}

export class ApprovalStore {
  readonly file: string;

  /** `masker` is required: there is no way to write the store without it. */
  constructor(
    readonly dir: string,
    private readonly masker: StoreMasker,
  ) {
    if (!masker || typeof masker.maskDeep !== 'function') throw new TypeError('the approval store needs a masker');
    this.file = path.join(dir, STORE_FILE);
  }

  /** Reads the store. Never throws for a bad file: a corrupt store approves nothing and is backed up. */
  read(reader: TrackingReader = new TrackingReader()): StoreSnapshot {
    const r = reader.read(this.file, MAX_STORE_BYTES);
    if (r.kind === 'missing') return { file: this.file, health: { status: 'missing' }, records: [] };
    if (r.kind === 'error') return { file: this.file, health: { status: 'corrupt', problem: r.error.message }, records: [] };
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(r.data);
      return { file: this.file, health: { status: 'ok' }, records: validate(JSON.parse(text)) };
    } catch (e) {
      const backup = this.backup(r.data);
      return { file: this.file, health: { status: 'corrupt', problem: (e as Error).message, backup }, records: [] };
    }
  }

  /** Copies unreadable store content beside the store, named by its digest, so it is never lost. */
  private backup(data: Buffer): string | undefined {
    const target = path.join(this.dir, `${STORE_FILE}.corrupt-${sha256(data).slice(0, 12)}`);
    try {
      if (!fs.existsSync(target)) fs.writeFileSync(target, data, { mode: 0o600, flag: 'wx' });
      return target;
    } catch {
      return undefined;
    }
  }

  /**
   * Read-modify-write under a cross-process lock. `change` receives the current records (empty when the file is
   * missing or corrupt — a corrupt file is backed up first) and returns the records to write.
   */
  async update<T>(change: (records: ApprovalRecord[], snapshot: StoreSnapshot) => { records: ApprovalRecord[]; result: T }): Promise<T> {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    let compromised: Error | undefined;
    let release: () => Promise<void>;
    try {
      release = await lockfile.lock(this.file, {
        realpath: false,
        stale: 10_000,
        update: 2_000,
        retries: { retries: 600, factor: 1.2, minTimeout: 10, maxTimeout: 200, randomize: true }, // up to about two minutes behind other writers
        onCompromised: (err) => {
          compromised = err;
        },
      });
    } catch (e) {
      throw new StoreLockError(
        `cannot lock the approval store ${this.file}: ${(e as Error).message}. Another MCP Gate may be writing; try again.`,
      );
    }
    try {
      const snapshot = this.read();
      if (snapshot.health.status === 'corrupt' && !snapshot.health.backup) {
        throw new Error(
          `the approval store ${this.file} is unreadable (${snapshot.health.problem}) and could not be backed up; nothing was written. Move it aside and try again.`,
        );
      }
      const { records, result } = change(snapshot.records.slice(), snapshot);
      if (compromised) throw new StoreLockError(`lost the lock on ${this.file} (${compromised.message}); nothing was written`);
      const body = JSON.stringify({ version: 1, records: this.masker.maskDeep(records) }, null, 1) + '\n';
      await writeFileAtomic(this.file, body, { mode: 0o600, fsync: true });
      return result;
    } finally {
      await release().catch(() => undefined);
    }
  }
}
