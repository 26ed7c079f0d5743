// The trust panel's view model, computed in the extension host from the gate's reports: which servers wait for a
// person and which are decided, each with where it was declared, its exact definition (escaped, untruncated), and
// for a changed server the diff against what was approved (fields, referenced files line by line, the tool list);
// and the check every message from the webview passes before anything happens. Pure: no `vscode` import, so plain
// Node unit tests use it as the host does. (The log view's model is ../common/log-model.ts, which the webview bundles.)
import * as os from 'node:os';
import { describeContainment } from '../../src/host/sandbox/decision';
import { sandboxAvailable, type SandboxProbe } from '../../src/host/sandbox/sandbox';
import { serverIdentity } from '../../src/host/identity';
import type { UserPolicy } from '../../src/policy/user-policy';
import { decideStart } from '../../src/policy/start';
import { createHash } from 'node:crypto';
import { diffLines } from 'diff';
import { riskLine, stateLabel, summary } from '../../src/report/render';
import { diffDefinitions, diffTools, type FileChange } from '../../src/trust/approval/diff';
import { escapeText, hasHiddenCharacters, quote, renderValue } from '../../src/text/escape';
import type { GateReport, ServerReport } from '../../src/trust/report';
import { preApprovalAttempts, preApprovalLine } from '../../src/trust/sources/preapproval';
import { isUpdatable } from '../../src/trust/approval/lock-update';
import { serverKey, type ServerRef } from '../../src/trust/approval/server-ref';
import { definitionChanged, isApprovable, isRejectable, isResettable, isWaiting, STATE_ORDER } from '../../src/trust/approval/states';
import {
  PANEL_ACTIONS,
  SERVER_KEY,
  type DiffLine,
  type FieldDiffView,
  type FileDiffView,
  type PanelAction,
  type PanelModel,
  type ServerView,
  type ToolDiffView,
  type ToolsDiffView,
  type WebviewMessage,
} from '../common/protocol';
import { MAX_UI_STATE_JSON, sanitizeUiState } from '../common/ui-state';

export interface FolderInput {
  /** Display name of the workspace folder. */
  name: string;
  /** Its path (the ServerRef's `folder`). */
  path: string;
  report?: GateReport;
  error?: string;
  /** The user's policy for this folder: the panel then shows the sandbox each local server gets. */
  policy?: UserPolicy;
}

export interface BuiltModel {
  model: PanelModel;
  /** key → the server it stands for; the only way a key from the webview becomes a server. */
  refs: Map<string, ServerRef>;
}

/** The panel's key of a server: a digest of its one key (../../src/trust/approval/server-ref.ts), safe in HTML. */
export function viewKey(folder: string, source: string, name: string): string {
  return 's' + createHash('sha256').update(serverKey({ folder, source, name })).digest('hex').slice(0, 32);
}

/** What a person may do with a server from the panel — the same conditions the palette commands apply. */
function allowedActions(s: ServerReport): PanelAction[] {
  const out: PanelAction[] = [];
  if (isApprovable(s)) out.push('approve');
  if (isRejectable(s)) out.push('reject');
  if (isResettable(s)) out.push('reset');
  if (isUpdatable(s)) out.push('update');
  return out;
}

/** A line diff of two texts (already escaped renderings): every line kept, marked added, removed or unchanged. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const out: DiffLine[] = [];
  for (const part of diffLines(before, after)) {
    const kind: DiffLine['kind'] = part.added ? 'add' : part.removed ? 'del' : 'ctx';
    const lines = part.value.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    for (const text of lines) out.push({ kind, text });
  }
  return out;
}

function hunkLines(f: FileChange): DiffLine[] {
  const out: DiffLine[] = [];
  for (const h of f.hunks ?? []) {
    out.push({ kind: 'note', text: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@` });
    for (const l of h.lines) {
      const c = l[0];
      if (c === '+') out.push({ kind: 'add', text: escapeText(l.slice(1)) });
      else if (c === '-') out.push({ kind: 'del', text: escapeText(l.slice(1)) });
      else if (c === '\\') out.push({ kind: 'note', text: escapeText(l) });
      else out.push({ kind: 'ctx', text: escapeText(l.slice(1)) });
    }
  }
  return out;
}

const shown = (v: unknown) => (v === undefined ? '(absent)' : renderValue(v));

function fileDiff(f: FileChange): FileDiffView {
  const digests = [f.before ? `was sha256 ${f.before.slice(0, 12)}` : '', f.after ? `now sha256 ${f.after.slice(0, 12)}` : '']
    .filter(Boolean)
    .join(', ');
  const view: FileDiffView = { path: escapeText(f.path), change: f.change, digests, lines: hunkLines(f) };
  if (!f.hunks && f.change === 'changed')
    view.note = 'content not kept with the approval (binary or larger than 64 KiB): only its digest is compared';
  return view;
}

function toolsDiffView(s: ServerReport): ToolsDiffView | undefined {
  const r = s.record;
  if (!r?.toolsChanged || !r.tools) return undefined;
  const before = r.tools.snapshot;
  const after = r.toolsChanged.snapshot;
  const d = diffTools(before, after);
  const find = (list: Record<string, unknown>[], name: string) => list.find((t) => String(t.name) === name) ?? { name };
  const tools: ToolDiffView[] = [];
  for (const n of d.added)
    tools.push({
      name: quote(n),
      change: 'added',
      lines: renderValue(find(after.tools, n))
        .split('\n')
        .map((text) => ({ kind: 'add', text })),
    });
  for (const n of d.removed)
    tools.push({
      name: quote(n),
      change: 'removed',
      lines: renderValue(find(before.tools, n))
        .split('\n')
        .map((text) => ({ kind: 'del', text })),
    });
  for (const c of d.changed) {
    const lines: DiffLine[] = [];
    for (const f of c.fields) {
      lines.push({ kind: 'note', text: `${escapeText(f.field)}:` });
      lines.push(...lineDiff(shown(f.before), shown(f.after)));
    }
    tools.push({ name: quote(c.name), change: 'changed', lines });
  }
  const view: ToolsDiffView = { observedAt: escapeText(r.toolsChanged.observedAt), approvedAt: escapeText(r.tools.observedAt), tools };
  if (d.instructions) view.instructions = lineDiff(shown(d.instructions.before ?? ''), shown(d.instructions.after ?? ''));
  return view;
}

function hasHidden(v: unknown): boolean {
  if (typeof v === 'string') return hasHiddenCharacters(v);
  if (Array.isArray(v)) return v.some(hasHidden);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => hasHiddenCharacters(k) || hasHidden(x));
  return false;
}

function serverView(folder: FolderInput, s: ServerReport, sandbox: SandboxHere): ServerView {
  const view: ServerView = {
    key: viewKey(folder.path, s.source, s.name),
    section: isWaiting(s) ? 'waiting' : 'decided',
    folder: escapeText(folder.name),
    name: escapeText(s.name),
    state: s.state,
    stateLabel: stateLabel(s),
    reason: escapeText(s.reason),
    gated: s.gated,
    declared: {
      file: escapeText(s.file),
      line: s.position.line,
      column: s.position.column,
      scope: s.scope,
      source: escapeText(s.source),
      importedBy: s.importedBy.map(escapeText),
    },
    summary: s.definition ? summary(s) : '(invalid entry: it cannot run as written)',
    transport: s.definition?.type,
    cwd: s.definition?.cwd === undefined ? undefined : quote(s.definition.cwd),
    definition: renderValue(s.raw),
    hidden: hasHidden(s.raw) || hasHiddenCharacters(s.name),
    pinnedFiles: Object.entries(s.pinned?.pinned.files ?? {}).map(([p, f]) => ({ path: escapeText(p), size: f.size, sha256: f.sha256 })),
    actions: allowedActions(s),
  };
  const risk = isWaiting(s) ? riskLine(s) : undefined;
  if (risk) view.risk = risk;
  const plan = s.pinned?.plan;
  if (plan) {
    const env = Object.entries(plan.env);
    view.plan = {
      program: plan.executable ? escapeText(plan.executable) : `(none: ${escapeText(plan.notFound ?? '')})`,
      args: plan.args.length ? plan.args.map(quote).join(' ') : '(none)',
      folder: escapeText(plan.cwd),
      roots: plan.closure.roots.map((r) => ({
        path: escapeText(r.path === '.' ? '. (the whole workspace)' : `${r.path}/`),
        why: escapeText(r.why),
      })),
    };
    if (env.length) view.plan.variables = env.map(([k, v]) => `${escapeText(k)}=${quote(v)}`).join(' ');
    // Under the load guard: what is checked when it loads rather than pinned (src/trust/plan/closure.ts guardedClosureOf).
    const guarded = s.pinned?.pinned.guarded;
    if (guarded) view.plan.guarded = guarded.map(escapeText);
  }
  if (folder.policy && folder.report && s.definition?.type === 'stdio' && s.state !== 'blocked') {
    const lines = describeContainment(s, decideStart(folder.policy, serverIdentity(s, folder.report.project), sandbox.home), sandbox.probe);
    if (lines.length) view.sandbox = lines.map(escapeText);
  }
  const envFile = s.pinned?.pinned.envFile;
  if (envFile) view.envFile = `${escapeText(envFile.path)} ${envFile.missing ? '(missing)' : `sha256 ${envFile.sha256}`}`;
  if (s.pinned?.pinned.inputs.length) view.inputs = renderValue(s.pinned.pinned.inputs);
  if (s.pinned) view.digest = s.pinned.digest;
  if (s.record) view.decidedAt = escapeText(s.record.decidedAt);
  if (s.record?.decision === 'approved' && s.record.team) {
    const t = s.record.team;
    view.approvedBy = { by: escapeText(t.by), key: escapeText(t.key), file: escapeText(t.file), at: escapeText(t.approvedAt) };
  }
  if (s.record?.tools) view.pinnedTools = s.record.tools.snapshot.tools.map((t) => quote(String(t.name)));
  if (definitionChanged(s)) {
    const d = diffDefinitions(s.record!, s.pinned!);
    view.diff = {
      approvedAt: escapeText(s.record!.decidedAt),
      fields: d.fields.map((f): FieldDiffView => {
        const before = shown(f.before);
        const after = shown(f.after);
        return { field: escapeText(f.field), before, after, lines: lineDiff(before, after) };
      }),
      files: d.files.map(fileDiff),
    };
  }
  const tools = toolsDiffView(s);
  if (tools) view.toolsDiff = tools;
  return view;
}

/** The HOME a sandbox hides and whether bubblewrap starts here (the extension passes its cached probe). */
export interface SandboxHere {
  home: string;
  probe: () => SandboxProbe;
}

export function buildModel(
  folders: readonly FolderInput[],
  opts: { restricted: boolean; now?: Date; /** default: this process's HOME, probed now */ sandbox?: SandboxHere },
): BuiltModel {
  const refs = new Map<string, ServerRef>();
  const servers: ServerView[] = [];
  const banners: PanelModel['banners'] = [];
  if (opts.restricted)
    banners.push({ level: 'info', text: 'Restricted Mode: no repository MCP server is offered or started, approved or not.' });
  const names = new Set<string>();
  for (const f of folders) {
    if (f.error) banners.push({ level: 'error', text: `${escapeText(f.name)}: ${escapeText(f.error)}` });
    const r = f.report;
    if (!r) continue;
    for (const b of r.fullBlock)
      banners.push({
        level: 'error',
        text: `Full block: no tool of this project may be called until this is fixed: ${escapeText(b.reason)}`,
        files: b.files.map(escapeText),
      });
    if (r.escapeHatch)
      banners.push({ level: 'warning', text: 'MCP_GATE_ALLOW_PROJECT=1 is set: every repository server is trusted without review.' });
    // A repository's files that try to approve servers for another agent: reported, never a state (src/trust/sources/preapproval.ts).
    const pre = preApprovalAttempts(r.project);
    for (const a of pre.attempts)
      banners.push({
        level: 'warning',
        text: `${escapeText(f.name)}: ${escapeText(preApprovalLine(a))}. MCP Gate ignores it: no state changes, and nothing runs without your approval.`,
        files: [escapeText(a.file)],
      });
    const h = r.store.health;
    if (h.status === 'corrupt')
      banners.push({
        level: 'error',
        text: `The approval store ${escapeText(r.store.file)} is corrupt (${escapeText(h.problem)}): nothing is approved until you approve again.${h.backup ? ` The unreadable file is kept as ${escapeText(h.backup)}.` : ''}`,
      });
    for (const s of r.servers) {
      const v = serverView(f, s, opts.sandbox ?? { home: os.homedir(), probe: sandboxAvailable });
      refs.set(v.key, { folder: f.path, source: s.source, name: s.name });
      servers.push(v);
      names.add(v.name);
    }
  }
  servers.sort(
    (a, b) =>
      (STATE_ORDER[a.state as keyof typeof STATE_ORDER] ?? 9) - (STATE_ORDER[b.state as keyof typeof STATE_ORDER] ?? 9) ||
      a.name.localeCompare(b.name) ||
      a.declared.source.localeCompare(b.declared.source),
  );
  const model: PanelModel = {
    generatedAt: (opts.now ?? new Date()).toISOString(),
    folders: folders.map((f) => ({
      name: escapeText(f.name),
      project: escapeText(f.report?.project ?? f.path),
      ...(f.error ? { error: escapeText(f.error) } : {}),
    })),
    banners,
    servers,
    counts: {
      waiting: servers.filter((s) => s.section === 'waiting').length,
      decided: servers.filter((s) => s.section === 'decided').length,
    },
    serverNames: [...names].sort(),
    restricted: opts.restricted,
  };
  return { model, refs };
}

// ---- messages from the webview ------------------------------------------------------------------------------

/** The result of checking one message from the webview (not a policy `Verdict`). */
export type MessageCheck = { ok: true; message: WebviewMessage; server?: ServerView; ref?: ServerRef } | { ok: false; why: string };

const SHAPES: Record<WebviewMessage['type'], readonly string[]> = {
  ready: ['type'],
  action: ['action', 'key', 'type'],
  open: ['key', 'type'],
  state: ['state', 'type'],
};

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A short, escaped description of a message for the log line that records why it was dropped. */
export function describeMessage(raw: unknown): string {
  let s: string;
  try {
    s = isPlainObject(raw)
      ? `{${Object.keys(raw)
          .slice(0, 8)
          .map((k) => `${k}: ${typeof raw[k] === 'string' ? JSON.stringify(raw[k]) : typeof raw[k]}`)
          .join(', ')}}`
      : `${raw === null ? 'null' : Array.isArray(raw) ? 'array' : typeof raw}`;
  } catch {
    s = 'unprintable';
  }
  s = escapeText(s);
  return s.length > 200 ? `${s.slice(0, 200)}… (${s.length} characters)` : s;
}

/**
 * Checks one message from the webview against the current model: its shape (exact keys, types), its type, the
 * server key (must name a server of the current state) and the action (must be one the server allows now).
 * Anything else is refused with the reason, and the caller drops it.
 */
export function checkMessage(raw: unknown, current: BuiltModel): MessageCheck {
  if (!isPlainObject(raw)) return { ok: false, why: 'not an object' };
  const type = raw.type;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(SHAPES, type)) return { ok: false, why: 'unknown type' };
  const keys = Object.keys(raw).sort();
  const expected = SHAPES[type as WebviewMessage['type']];
  if (keys.length !== expected.length || keys.some((k, i) => k !== expected[i]))
    return { ok: false, why: `wrong fields for "${type}" (expected ${expected.join(', ')})` };
  if (type === 'ready') return { ok: true, message: { type: 'ready' } };
  if (type === 'state') {
    let json: string;
    try {
      json = JSON.stringify(raw.state) ?? '';
    } catch {
      return { ok: false, why: 'state is not JSON' };
    }
    if (!raw.state || typeof raw.state !== 'object' || Array.isArray(raw.state)) return { ok: false, why: 'state is not an object' };
    if (json.length > MAX_UI_STATE_JSON) return { ok: false, why: 'state too large' };
    return { ok: true, message: { type: 'state', state: sanitizeUiState(raw.state) } };
  }
  const key = raw.key;
  if (typeof key !== 'string' || !SERVER_KEY.test(key)) return { ok: false, why: 'malformed server key' };
  const ref = current.refs.get(key);
  const server = current.model.servers.find((s) => s.key === key);
  if (!ref || !server) return { ok: false, why: 'no such server' };
  if (type === 'open') return { ok: true, message: { type: 'open', key }, server, ref };
  const action = raw.action;
  if (typeof action !== 'string' || !(PANEL_ACTIONS as readonly string[]).includes(action)) return { ok: false, why: 'unknown action' };
  if (!server.actions.includes(action as PanelAction))
    return { ok: false, why: `"${action}" is not allowed for a server in state ${server.state}` };
  return { ok: true, message: { type: 'action', action: action as PanelAction, key }, server, ref };
}

// ---- the webview's document ---------------------------------------------------------------------------------

export interface HtmlParts {
  /** The webview's own origin for resources (webview.cspSource). */
  cspSource: string;
  /** Per-load nonce (base64 of 16+ random bytes). */
  nonce: string;
  script: string;
  styles: string[];
  codicons: string;
}

function attr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The Content-Security-Policy of the panel: nothing by default; scripts only with the nonce. */
export function panelCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    "img-src 'none'",
    "connect-src 'none'",
    "frame-src 'none'",
    "worker-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The panel's HTML: static markup only; everything else is built by the script as DOM text nodes. */
export function panelHtml(p: HtmlParts): string {
  if (!/^[A-Za-z0-9+/]{22,}={0,2}$/.test(p.nonce)) throw new Error('the nonce must be base64 of at least 16 random bytes');
  const n = attr(p.nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(panelCsp(p.cspSource, p.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" id="vscode-codicon-stylesheet" href="${attr(p.codicons)}" nonce="${n}">
${p.styles.map((s) => `<link rel="stylesheet" href="${attr(s)}" nonce="${n}">`).join('\n')}
<title>MCP Gate</title>
</head>
<body>
<div id="app" aria-busy="true"></div>
<script nonce="${n}" src="${attr(p.script)}"></script>
</body>
</html>`;
}
