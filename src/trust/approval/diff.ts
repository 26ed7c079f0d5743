// A structured diff between what was approved and what is declared now: field by field over the pinned
// definition, and line by line for referenced files whose text was kept with the approval. Line diffs are
// bounded (edit length and text size) so a repository cannot make showing a change slow: past the bound a file
// is reported as changed, too large to show line by line. A file the load guard refused is shown against the
// content its approval kept (refusedFileDiff).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { structuredPatch } from 'diff';
import { blobPath, loadManifest, TOO_LARGE, type WorkspaceManifest } from './workspace-manifest';
import { canonicalJson, type Pinned, type PinnedDefinition } from '../plan/digest';
import type { ApprovalRecord } from './store';

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface FileChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
  before?: string; // sha256
  after?: string;
  /** Unified hunks when both texts are known and the change is within the bounds below. */
  hunks?: { oldStart: number; oldLines: number; newStart: number; newLines: number; lines: string[] }[];
  /** Both texts are known, but the change is over the bounds: shown as changed, not line by line. */
  tooLarge?: true;
}

/**
 * At most this many added plus removed lines are diffed line by line. Myers' diff costs about (lines × edits);
 * past 1,000 edits a listing would be too long to read anyway. Deterministic (no time limit), so the same change
 * always shows the same way.
 */
export const MAX_DIFF_EDITS = 1000;
/** Texts longer than this (characters, each side) are not diffed line by line. */
export const MAX_DIFF_CHARS = 256 * 1024;

export interface DefinitionDiff {
  fields: FieldChange[];
  files: FileChange[];
}

function flatten(p: PinnedDefinition): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(p.definition)) out[k] = v;
  for (const [k, v] of Object.entries(p.extra)) out[`extra.${k}`] = v;
  out.inputs = p.inputs;
  out.envFile = p.envFile;
  return out;
}

export function diffDefinitions(approved: Pick<ApprovalRecord, 'pinned' | 'texts'>, current: Pinned): DefinitionDiff {
  const a = flatten(approved.pinned);
  const b = flatten(current.pinned);
  const fields: FieldChange[] = [];
  for (const field of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (canonicalJson(a[field]) !== canonicalJson(b[field])) fields.push({ field, before: a[field], after: b[field] });
  }
  const files: FileChange[] = [];
  const fa = approved.pinned.files ?? {};
  const fb = current.pinned.files;
  const textKey = (p: string) => p;
  const envA = approved.pinned.envFile;
  const envB = current.pinned.envFile;
  const pairs: [string, string | undefined, string | undefined, string][] = [];
  for (const p of [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort()) pairs.push([p, fa[p]?.sha256, fb[p]?.sha256, textKey(p)]);
  if (envA?.sha256 !== envB?.sha256 && (envA?.path ?? envB?.path)) {
    const p = (envB?.path ?? envA?.path)!;
    pairs.push([`envFile ${p}`, envA?.sha256, envB?.sha256, `envFile:${p}`]);
  }
  for (const [p, before, after, key] of pairs) {
    if (before === after) continue;
    const change: FileChange = {
      path: p,
      change: before === undefined ? 'added' : after === undefined ? 'removed' : 'changed',
      before,
      after,
    };
    const ta = approved.texts?.[key] ?? (before === undefined ? '' : undefined);
    const tb = current.texts[key] ?? (after === undefined ? '' : undefined);
    lineDiff(change, ta, tb);
    files.push(change);
  }
  return { fields, files };
}

/** Adds the line diff (or `tooLarge`) to a change when both texts are known. */
function lineDiff(change: FileChange, ta: string | undefined, tb: string | undefined): void {
  if (ta === undefined || tb === undefined) return;
  const patch =
    ta.length > MAX_DIFF_CHARS || tb.length > MAX_DIFF_CHARS
      ? undefined
      : structuredPatch(change.path, change.path, ta, tb, '', '', { context: 3, maxEditLength: MAX_DIFF_EDITS });
  if (patch) {
    change.hunks = patch.hunks.map((h) => ({
      oldStart: h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newStart,
      newLines: h.newLines,
      lines: h.lines,
    }));
  } else change.tooLarge = true;
}

/** UTF-8 text of a file of at most MAX_DIFF_CHARS bytes (never following a link); undefined otherwise. */
function smallText(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0));
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > MAX_DIFF_CHARS) return undefined;
    const buf = Buffer.alloc(st.size);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, n));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Both sides of a file the load guard refused (refusedFileSides). */
export interface RefusedSides {
  path: string;
  /** Digests: what the approval recorded, and the file now (absent where there is none). */
  before?: string;
  after?: string;
  /** Texts where there are (not kept, binary, over MAX_DIFF_CHARS, absent: undefined). */
  approved?: string;
  now?: string;
  approvedState: 'text' | 'absent' | 'not-kept';
  nowState: 'text' | 'absent' | 'not-text';
}

/** A refusal of a workspace file (not one written outside it, not a sink), whose path stays inside the workspace. */
const workspaceRefusal = (g: NonNullable<ApprovalRecord['guardRefused']>) =>
  !path.isAbsolute(g.file) && g.why !== 'scratch' && g.why !== 'sink' && !g.file.split('/').some((p) => p === '..' || p === '');

/**
 * The file the load guard refused, both sides for a review: the content its approval kept (workspace-manifest.ts:
 * files up to DIFF_BLOB_BYTES) and the file as it is now. Undefined when the server has no refusal of a workspace
 * file or no readable record of the workspace.
 */
export function refusedFileSides(
  storeDir: string,
  project: string,
  record: Pick<ApprovalRecord, 'guardRefused' | 'manifest'>,
): RefusedSides | undefined {
  const g = record.guardRefused;
  if (!g || !record.manifest || !workspaceRefusal(g)) return undefined;
  let files: Record<string, string>;
  try {
    files = loadManifest(storeDir, record.manifest).files;
  } catch {
    return undefined;
  }
  const before = Object.prototype.hasOwnProperty.call(files, g.file) ? files[g.file] : undefined;
  let approved: string | undefined;
  if (before !== undefined && before !== TOO_LARGE) {
    try {
      approved = smallText(blobPath(storeDir, before));
    } catch {
      approved = undefined;
    }
  }
  const live = path.join(project, ...g.file.split('/'));
  let after: string | undefined;
  try {
    after = fs.lstatSync(live).isFile() ? createHash('sha256').update(fs.readFileSync(live)).digest('hex') : undefined;
  } catch {
    after = undefined;
  }
  const now = after === undefined ? undefined : smallText(live);
  return {
    path: g.file,
    before,
    after,
    approved,
    now,
    approvedState: before === undefined ? 'absent' : approved === undefined ? 'not-kept' : 'text',
    nowState: after === undefined ? 'absent' : now === undefined ? 'not-text' : 'text',
  };
}

/**
 * The file the load guard refused, as a change against what was approved (refusedFileSides, line by line). A file
 * that was not there at approval is `added` (its whole text); one outside the workspace (written to /tmp or HOME)
 * is `added` with no text. Undefined when the server has no refusal or no record of the workspace.
 */
export function refusedFileDiff(
  storeDir: string,
  project: string,
  record: Pick<ApprovalRecord, 'guardRefused' | 'manifest'>,
): FileChange | undefined {
  const g = record.guardRefused;
  if (!g || !record.manifest) return undefined;
  if (!workspaceRefusal(g)) return { path: g.file, change: 'added' };
  const sides = refusedFileSides(storeDir, project, record);
  if (!sides) return undefined;
  const change: FileChange = {
    path: sides.path,
    change: sides.before === undefined ? 'added' : sides.after === undefined ? 'removed' : 'changed',
    before: sides.before,
    after: sides.after,
  };
  lineDiff(change, sides.approvedState === 'absent' ? '' : sides.approved, sides.nowState === 'absent' ? '' : sides.now);
  return change;
}

/** What the definition is without its closure: the fields a person wrote (command, args, env, url, …). */
function written(p: PinnedDefinition): string {
  return canonicalJson({
    definition: p.definition,
    extra: p.extra,
    inputs: p.inputs,
    envFile: p.envFile ? { path: p.envFile.path, missing: p.envFile.missing ?? false } : null,
    cwd: p.cwd ?? null,
  });
}

/**
 * The files it runs that changed, when nothing else did: the entry as written is the same and only the content of
 * its execution closure (a script, a module it loads, its envFile's content, a link) differs. Undefined when the
 * definition itself changed, or when nothing did. Tells "a file it runs changed" from "its definition changed".
 */
export function changedFilesOnly(approved: PinnedDefinition, current: PinnedDefinition): string[] | undefined {
  if (written(approved) !== written(current)) return undefined;
  const paths = new Set<string>();
  const fa = approved.files ?? {};
  const fb = current.files ?? {};
  for (const p of new Set([...Object.keys(fa), ...Object.keys(fb)])) if (fa[p]?.sha256 !== fb[p]?.sha256) paths.add(p);
  const la = approved.links ?? {};
  const lb = current.links ?? {};
  for (const p of new Set([...Object.keys(la), ...Object.keys(lb)])) if (la[p] !== lb[p]) paths.add(p);
  for (const r of new Set([...(approved.roots ?? []), ...(current.roots ?? [])]))
    if (!(approved.roots ?? []).includes(r) || !current.roots?.includes(r)) paths.add(`${r}/`);
  if (approved.envFile?.sha256 !== current.envFile?.sha256 && current.envFile) paths.add(current.envFile.path);
  return paths.size ? [...paths].sort() : undefined;
}

export interface ToolsDiff {
  added: string[];
  removed: string[];
  changed: { name: string; fields: FieldChange[] }[];
  instructions?: FieldChange;
}

/** Tool-level diff between the tools pinned at approval and the tools a server offers now. */
export function diffTools(
  before: { instructions?: string; tools: Record<string, unknown>[] },
  after: { instructions?: string; tools: Record<string, unknown>[] },
): ToolsDiff {
  const byName = (l: Record<string, unknown>[]) => new Map(l.map((t) => [String(t.name), t]));
  const a = byName(before.tools);
  const b = byName(after.tools);
  const out: ToolsDiff = {
    added: [...b.keys()].filter((n) => !a.has(n)).sort(),
    removed: [...a.keys()].filter((n) => !b.has(n)).sort(),
    changed: [],
  };
  for (const [name, tb] of b) {
    const ta = a.get(name);
    if (!ta) continue;
    const fields: FieldChange[] = [];
    for (const f of [...new Set([...Object.keys(ta), ...Object.keys(tb)])].sort()) {
      if (canonicalJson(ta[f]) !== canonicalJson(tb[f])) fields.push({ field: f, before: ta[f], after: tb[f] });
    }
    if (fields.length) out.changed.push({ name, fields });
  }
  if ((before.instructions ?? '') !== (after.instructions ?? ''))
    out.instructions = { field: 'instructions', before: before.instructions, after: after.instructions };
  return out;
}

/** The pinned files of a change, by what matters to a person reviewing it (pinnedSetChange). */
export interface PinnedSetChange {
  /** In both, with other content (or another link target): the code that changed. */
  changed: string[];
  /** New to what it loads: not pinned at approval, in a folder it already ran from or named by itself. */
  added: string[];
  /** Pinned at approval, gone from a folder it still runs from (or no longer named). */
  removed: string[];
  /** Folders it runs from now and did not (`./`, `tools/`), and the reverse: folders, never counted as files. */
  rootsAdded: string[];
  rootsRemoved: string[];
  /** Files that only entered the pinned set with a folder in rootsAdded (or left it with one in rootsRemoved). */
  entered: string[];
  left: string[];
}

/** The folder of a root as said (`./`, `tools/`). */
const rootWords = (r: string) => (r === '.' || r === '' ? './' : `${r}/`);
const under = (root: string, p: string) => root === '.' || root === '' || p.startsWith(`${root}/`);

/**
 * What changed in what a server pins, told apart: content changes first, then files added to or removed from what
 * it loads, then folders and the files that merely entered or left the pinned set with them (a file under a folder
 * it did not run from at approval was not reviewed as its code, nor removed from it: its content is not the change).
 * With `atApproval` (the workspace as approved, workspace-manifest.ts), a file or link counts as having only
 * entered when it was there at approval with the same content; any other new file is `added`, shown in full: a file
 * written after the approval into a folder that entered the set is new code, not noise.
 */
export function pinnedSetChange(
  approved: PinnedDefinition,
  current: PinnedDefinition,
  atApproval?: Pick<WorkspaceManifest, 'files' | 'links'>,
): PinnedSetChange {
  const fa = approved.files ?? {};
  const fb = current.files ?? {};
  const la = approved.links ?? {};
  const lb = current.links ?? {};
  const ra = approved.roots ?? [];
  const rb = current.roots ?? [];
  const out: PinnedSetChange = { changed: [], added: [], removed: [], rootsAdded: [], rootsRemoved: [], entered: [], left: [] };
  // A folder inside one it ran from (or runs from now) is no news of its own.
  out.rootsAdded = rb.filter((r) => !ra.includes(r) && !ra.some((x) => under(x, r))).map(rootWords);
  out.rootsRemoved = ra.filter((r) => !rb.includes(r) && !rb.some((x) => under(x, r))).map(rootWords);
  const newRoot = (p: string) => rb.some((r) => !ra.includes(r) && under(r, p)) && !ra.some((r) => under(r, p));
  const goneRoot = (p: string) => ra.some((r) => !rb.includes(r) && under(r, p)) && !rb.some((r) => under(r, p));
  const own = (o: Record<string, string> | undefined, p: string) => (o && Object.prototype.hasOwnProperty.call(o, p) ? o[p] : undefined);
  const wasThere = (p: string) => !atApproval || (p in fb ? own(atApproval.files, p) === fb[p].sha256 : own(atApproval.links, p) === lb[p]);
  const sides = (a: Record<string, unknown>, b: Record<string, unknown>, same: (p: string) => boolean) => {
    for (const p of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (p in a && p in b) {
        if (!same(p)) out.changed.push(p);
      } else if (p in b) (newRoot(p) && wasThere(p) ? out.entered : out.added).push(p);
      else (goneRoot(p) ? out.left : out.removed).push(p);
    }
  };
  sides(fa, fb, (p) => fa[p].sha256 === fb[p].sha256);
  sides(la, lb, (p) => la[p] === lb[p]);
  if (approved.envFile?.sha256 !== current.envFile?.sha256 && current.envFile) out.changed.push(current.envFile.path);
  for (const l of Object.values(out) as string[][]) l.sort();
  return out;
}
