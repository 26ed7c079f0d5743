// The documents a person compares before approving a changed server (one side each: approved, now): the pinned
// definition, each changed file whose text was kept, the tool list, the package lock; and a package update's
// comparison (the package, then each changed file of it); a file the load guard refused, against the content its
// approval kept (read by the caller: src/trust/approval/diff.ts refusedFileSides). VS Code opens them in its diff editor. Pure functions of the server's report; every text is escaped.
import { escapeLines, escapeText, renderValue } from '../text/escape';
import {
  diffDefinitions,
  pinnedSetChange,
  type FileChange as PinnedFileChange,
  type PinnedSetChange,
  type refusedFileSides,
} from '../trust/approval/diff';
import { canonicalJson, type PinnedDefinition } from '../trust/plan/digest';
import type { ServerReport } from '../trust/report';
import { definitionChanged } from '../trust/approval/states';
import type { NpmLock } from '../trust/packages/npm-lock';
import type { FileChange, LockUpdate } from '../trust/approval/lock-update';
import type { WorkspaceManifest } from '../trust/approval/workspace-manifest';
import { lockDocument, type MinAge } from './lock-text';

/** One side-by-side comparison of a changed server: what was approved and what is declared now, as plain text. */
export interface ChangeDocument {
  /** What it compares: "definition", a file's workspace-relative path, "tools". */
  label: string;
  approved: string;
  now: string;
}

function definitionDocument(p: PinnedDefinition): string {
  const { files, ...rest } = p;
  const lines = [renderValue(JSON.parse(canonicalJson(rest)))];
  lines.push('', 'files it runs (content pinned):');
  for (const [f, x] of Object.entries(files ?? {}).sort(([a], [b]) => a.localeCompare(b)))
    lines.push(`  ${escapeText(f)}  ${x.size} bytes  sha256 ${x.sha256}`);
  return lines.join('\n') + '\n';
}

/** The label of the one document listing the files that only entered or left the pinned set with a folder. */
export const PINNED_SET_LABEL = 'pinned set';

/**
 * Files that only entered (or left) what is pinned because a folder did: one document, each side the folders and
 * those files as pinned (size, digest), so the diff shows them as lines added or removed, collapsed together.
 */
function pinnedSetDocument(c: PinnedSetChange, a: PinnedDefinition, b: PinnedDefinition): ChangeDocument {
  const side = (roots: string[], files: string[], p: PinnedDefinition, what: string) => {
    const lines = [`folders it runs from that ${what}: ${roots.length ? roots.map(escapeText).join(', ') : 'none'}`];
    for (const f of files) {
      const x = p.files?.[f];
      lines.push(`  ${escapeText(f)}  ${x ? `${x.size} bytes  sha256 ${x.sha256}` : `link to ${escapeText(String(p.links?.[f]))}`}`);
    }
    return lines.join('\n') + '\n';
  };
  return {
    label: PINNED_SET_LABEL,
    approved: side(c.rootsRemoved, c.left, a, 'it no longer runs from (and their files it pinned)'),
    now: side(c.rootsAdded, c.entered, b, 'it did not run from at approval (and their files, pinned with them)'),
  };
}

/**
 * The documents a person compares before approving a changed server: the pinned definition (approved vs. now)
 * and each changed file whose text was kept with the approval; a file whose text was not kept shows its digests.
 * For a server whose tools changed, the tool list. With the package lock about to be approved (`shown`) when it is
 * not the approved one: the package, approved lock against that one. Empty when nothing changed since approval.
 * `atApproval`, the record of the workspace as approved, tells files that only entered the pinned set (collapsed
 * into one document) from files written since (each shown).
 */
export function changeDocuments(
  s: ServerReport,
  shown?: { lock?: NpmLock; minAge?: MinAge },
  refused?: ReturnType<typeof refusedFileSides>,
  atApproval?: Pick<WorkspaceManifest, 'files' | 'links'>,
): ChangeDocument[] {
  const out: ChangeDocument[] = [];
  // The file the load guard refused when it loaded: first, it is why the server stopped.
  if (refused && s.state === 'approval-changed') {
    const side = (state: string, text: string | undefined, what: string) =>
      state === 'absent'
        ? `(absent ${what})\n`
        : text === undefined
          ? `(content not kept or not text: ${what === 'at approval' ? 'binary or larger than 1 MiB' : 'binary or larger than 256 KiB'})\n`
          : escapeLines(text);
    out.push({
      label: `${escapeText(refused.path)} (refused when it loaded)`,
      approved: side(refused.approvedState, refused.approved, 'at approval'),
      now: side(refused.nowState, refused.now, 'now'),
    });
  }
  if (definitionChanged(s)) {
    const r = s.record!;
    const p = s.pinned!;
    out.push({ label: 'definition', approved: definitionDocument(r.pinned), now: definitionDocument(p.pinned) });
    // The code first: files whose content changed, then files new to (or gone from) what it loads; files that only
    // entered or left the pinned set with a folder are one document, listed, not each shown as absent → added.
    // Only a file that was there, as it is, at approval is collapsed; without the record of the workspace, none is.
    const set = pinnedSetChange(r.pinned, p.pinned, atApproval ?? { files: {}, links: {} });
    const moved = new Set([...set.entered, ...set.left]);
    const rank = (f: PinnedFileChange) => (f.before === undefined ? 1 : f.after === undefined ? 2 : 0);
    const files = diffDefinitions(r, p).files.filter((f) => !moved.has(f.path));
    for (const f of [...files].sort((a, b) => rank(a) - rank(b))) {
      const key = f.path.startsWith('envFile ') ? `envFile:${f.path.slice(8)}` : f.path;
      const side = (texts: Record<string, string> | undefined, digest: string | undefined) => {
        if (digest === undefined) return '(absent)\n';
        const t = texts?.[key];
        return t === undefined ? `(content not kept: binary or larger than 64 KiB)\nsha256 ${digest}\n` : escapeLines(t);
      };
      out.push({ label: escapeText(f.path), approved: side(r.texts, f.before), now: side(p.texts, f.after) });
    }
    if (moved.size) out.push(pinnedSetDocument(set, r.pinned, p.pinned));
  }
  if (s.record?.toolsChanged && s.record.tools) {
    const doc = (t: { instructions?: string; tools: Record<string, unknown>[] }) =>
      `${renderValue(JSON.parse(canonicalJson({ instructions: t.instructions ?? '', tools: [...t.tools].sort((a, b) => String(a.name).localeCompare(String(b.name))) })))}\n`;
    out.push({ label: 'tools', approved: doc(s.record.tools.snapshot), now: doc(s.record.toolsChanged.snapshot) });
  }
  const lock = shown?.lock;
  const approved = s.record?.decision === 'approved' ? s.record.lock : undefined;
  if (out.length && lock && lock.digest !== approved?.digest) {
    out.push({
      label: 'package',
      approved: approved ? lockDocument(approved, shown?.minAge) : '(no package lock approved)\n',
      now: lockDocument(lock, shown?.minAge),
    });
  }
  return out;
}

function fileSide(f: FileChange['before']): string {
  if (!f) return '(absent)\n';
  return f.text === undefined ? `(binary or larger than 64 KiB: not shown)\nsha256 ${f.sha256}\n` : escapeLines(f.text);
}

/**
 * The update as diff documents: first the package (version, integrity, dependencies), then one per changed
 * file of the package's own folder (hidden characters escaped; the documents' provider masks them).
 */
export function updateDocuments(u: LockUpdate, minAge?: MinAge, now = Date.now()): ChangeDocument[] {
  const files = u.files.compared
    ? u.files.files.length
      ? `files        ${u.files.files.length} of the package's own files changed (one diff each, beside this one)`
      : 'files        no file of the package itself changed'
    : `files        not compared (${escapeText(u.files.why)})`;
  const out: ChangeDocument[] = [
    { label: 'package', approved: lockDocument(u.old, minAge, now), now: `${lockDocument(u.fresh, minAge, now)}${files}\n` },
  ];
  if (u.files.compared) {
    for (const f of u.files.files)
      out.push({ label: `package file ${escapeText(f.path)}`, approved: fileSide(f.before), now: fileSide(f.after) });
  }
  return out;
}
