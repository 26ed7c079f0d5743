// Secure by default, once: whether VS Code itself would start any server of this window outside MCP Gate, said in
// one line ("VS Code starts nothing outside the gate", or exactly what still would) for the status bar, the panel
// and the doctor; the first-run step (one modal that routes VS Code's own starts through the gate and offers to
// import the user's own mcp.json servers in the same answer); and the fix a repository cannot undo: once routed,
// a window whose repository sets the routing back is reopened at once (mcpGate.reopenOverridden) inside a workspace
// file MCP Gate keeps in its own storage, where a folder's window-scope chat.mcp.* values are not applied.
// Evidence: docs/vscode-own-starts.md.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  gatedWorkspaceName,
  gatedWorkspaceText,
  isGatedWorkspace,
  type OwnStart,
  type RepositoryOverride,
  type VsCodeOwnReport,
} from '../trust/sources/vscode-own';
import { escapeText } from '../text/escape';
import { ownStartsOf, ownStartsText } from './own-starts';
import type { GateService } from './service';

export const NOTHING_OUTSIDE = 'VS Code starts nothing outside the gate';
const SETUP_SHOWN_KEY = 'mcpGate.setupShown';

export interface RoutingView {
  /** One line: NOTHING_OUTSIDE, or what VS Code itself would still start. */
  status: string;
  nothingOutside: boolean;
  /** The user-scope routing settings are in place (or a policy sets them). */
  routedAtUser: boolean;
  /** This window is one of MCP Gate's own workspace files. */
  gatedWorkspace: boolean;
  starts: (OwnStart & { folder: string })[];
  overrides: (RepositoryOverride & { folder: string })[];
  /** Full-width warnings with their fix, for the panel. */
  banners: { level: 'warning' | 'info'; text: string }[];
}

/** The folder MCP Gate keeps its own workspace files in (its storage, outside every repository). */
const ownWorkspacesDir = (service: GateService) => path.join(service.storeDir, 'workspaces');

/** The window's workspace file, when it is one MCP Gate wrote: in its own folder, with exactly the text it writes. */
function gatedWorkspaceOpen(service: GateService): boolean {
  const f = vscode.workspace.workspaceFile;
  if (!f || f.scheme !== 'file') return false;
  try {
    const real = fs.realpathSync(f.fsPath);
    const st = fs.statSync(real);
    if (!st.isFile() || st.size > 64 * 1024) return false;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((w) => (w.uri.scheme === 'file' ? w.uri.fsPath : ''));
    if (folders.some((x) => !x)) return false;
    return isGatedWorkspace({ path: real, text: fs.readFileSync(real, 'utf8') }, fs.realpathSync(ownWorkspacesDir(service)), folders);
  } catch {
    return false;
  }
}

/** How the workspace-scope settings file is named in messages: the .code-workspace file, or .vscode/settings.json. */
function workspaceSettingsFile(): string | undefined {
  const f = vscode.workspace.workspaceFile;
  return f && f.scheme !== 'untitled' ? path.basename(f.fsPath) : undefined;
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** The user switched the automatic reopen off (user settings only: a repository cannot). */
function reopenOff(): boolean {
  return vscode.workspace.getConfiguration('mcpGate').inspect<boolean>('reopenOverridden')?.globalValue === false;
}

/** The overrides of a view, said in one phrase: "<file> sets chat.mcp.access = "all"". */
function overridesText(overrides: RepositoryOverride[]): string {
  const byFile = new Map<string, string[]>();
  for (const o of overrides) byFile.set(o.file, [...(byFile.get(o.file) ?? []), `${o.key} = ${JSON.stringify(o.value)}`]);
  return [...byFile].map(([file, kv]) => `${escapeText(file)} sets ${kv.join(', ')}`).join('; ');
}

/** In a window MCP Gate reopened because of an override: why (set once by registerRouting, for every view). */
let reopenedBecause: string | undefined;

export function routingView(service: GateService): RoutingView {
  const gated = gatedWorkspaceOpen(service);
  const reports: { folder: string; r: VsCodeOwnReport }[] = [];
  service.folders().forEach((f, i) => {
    const r = ownStartsOf(f, i, workspaceSettingsFile());
    if (r) reports.push({ folder: f.folder.name, r });
  });
  const starts = reports.flatMap(({ folder, r }) => r.starts.map((s) => ({ ...s, folder })));
  const overrides = reports.flatMap(({ folder, r }) => r.overrides.map((o) => ({ ...o, folder })));
  const discovered = (n: string): string | undefined =>
    /Claude Desktop/.test(n) ? "Claude Desktop's servers (discovery)" : /Windsurf/.test(n) ? "Windsurf's servers (discovery)" : undefined;
  const elsewhere = [
    ...new Set(
      reports.flatMap(({ r }) => [
        ...r.unreadable.map((u) => `${u.source} (unreadable for MCP Gate)`),
        ...r.notes.map(discovered).filter((x): x is string => !!x),
      ]),
    ),
  ];
  const routedAtUser = reports.length > 0 && reports.every(({ r }) => r.routing.every((x) => x.inPlace));
  const off = reports.some(({ r }) => !r.providerReachesChat);
  const nothingOutside = !starts.length && !elsewhere.length;
  let status: string;
  if (!nothingOutside) {
    const names = starts.map((s) => escapeText(s.name));
    status = starts.length
      ? `VS Code itself would start ${starts.length} ${plural(starts.length, 'server', 'servers')} outside the gate: ${names.join(', ')}`
      : 'VS Code itself would start servers outside the gate';
    if (elsewhere.length) status += ` (also: ${elsewhere.map(escapeText).join('; ')})`;
  } else status = off ? `${NOTHING_OUTSIDE} (chat.mcp.access is "none": MCP Gate's servers do not reach chat either)` : NOTHING_OUTSIDE;

  const banners: RoutingView['banners'] = [];
  const byFile = new Map<string, (RepositoryOverride & { folder: string })[]>();
  for (const o of overrides) byFile.set(`${o.folder}\u0000${o.file}`, [...(byFile.get(`${o.folder}\u0000${o.file}`) ?? []), o]);
  for (const list of byFile.values()) {
    const o = list[0];
    const where = o.file.endsWith('.code-workspace')
      ? `the workspace file ${escapeText(o.file)}`
      : `${escapeText(o.folder)}'s ${escapeText(o.file)}`;
    banners.push({
      level: 'warning',
      text:
        `${where} sets ${list.map((x) => `${x.key} = ${JSON.stringify(x.value)}`).join(', ')}: ${escapeText(o.effect)}. ` +
        `Your user settings cannot stop it${reopenOff() ? ' (mcpGate.reopenOverridden is off, so MCP Gate does not reopen the window by itself)' : ''}. Fix: run "MCP Gate: Reopen Through MCP Gate" — it reopens ${plural(service.folders().length, 'this folder', 'these folders')} inside a workspace file MCP Gate keeps in its own storage, where ${o.file.endsWith('.code-workspace') ? "this workspace file's settings are not used" : "a folder's chat.mcp settings are not applied"}.`,
    });
  }
  if (!nothingOutside && !overrides.length) {
    banners.push({ level: 'warning', text: `${status}. Fix: run "MCP Gate: Route VS Code's Servers Through the Gate".` });
  } else if (nothingOutside) banners.push({ level: 'info', text: `${status}.` });
  if (gated && reopenedBecause) {
    banners.unshift({
      level: 'info',
      text: `MCP Gate reopened this window inside its own workspace file because ${reopenedBecause}, which would have made VS Code start the repository's servers outside the gate. That file's window settings are not applied here (mcpGate.reopenOverridden).`,
    });
  }
  return { status, nothingOutside, routedAtUser, gatedWorkspace: gated, starts, overrides, banners };
}

/** The doctor's section: the one-line status, then per folder what VS Code reads and what overrides the routing. */
export function routingText(service: GateService): string {
  return ownStartsText(service, routingView(service).status, workspaceSettingsFile());
}

/** Writes MCP Gate's own workspace file for the window's folders and reopens the window through it. */
export async function reopenThroughGate(service: GateService, open = true, because?: { text: string }): Promise<string | undefined> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  if (!folders.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: no workspace folder is open.'));
    return undefined;
  }
  const dir = ownWorkspacesDir(service);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(
    dir,
    gatedWorkspaceName(folders, (s) => crypto.createHash('sha256').update(s).digest('hex')),
  );
  fs.writeFileSync(`${file}.tmp`, gatedWorkspaceText(folders), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
  service.log.write({
    kind: 'gate.reopen',
    detail: `reopening ${folders.join(', ')} through MCP Gate's workspace file ${file} (the repository's chat.mcp settings are not applied there)${because ? `: ${because.text}` : ''}`,
  });
  // Why, for the reopened window's banner: beside the workspace file, written before the reopen (global state may not
  // be flushed before the window navigates away).
  if (because) fs.writeFileSync(`${file}.why`, because.text, { mode: 0o600 });
  if (open) await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(file), { forceReuseWindow: true });
  return file;
}

/**
 * The first-run step: the routing modal, on first activation and whenever the routing is found missing while VS
 * Code would start something of this window by itself — unless the user switched it off in user settings
 * (mcpGate.askToRoute: false, as the test runs do; the status bar, panel and doctor still say it). A contributed walkthrough was
 * tried first: VS Code 1.112's web workbench (code-server) did not open it by id, so it is not shipped.
 */
export function registerRouting(
  context: vscode.ExtensionContext,
  service: GateService,
): { view: () => RoutingView; disposable: vscode.Disposable; stepDone: Promise<void> } {
  // Settled once the first-run step is answered or closed (at once when there is none to show): what else MCP Gate
  // asks on open (the servers waiting for approval) comes after it, one prompt at a time.
  let stepSettled!: () => void;
  const stepDone = new Promise<void>((resolve) => (stepSettled = resolve));
  // The reopened window: why MCP Gate reopened it, said once in its own banner (the note is consumed here).
  const wsFile = vscode.workspace.workspaceFile?.scheme === 'file' ? vscode.workspace.workspaceFile.fsPath : undefined;
  if (wsFile && path.dirname(wsFile) === ownWorkspacesDir(service)) {
    try {
      reopenedBecause = fs.readFileSync(`${wsFile}.why`, 'utf8').slice(0, 4096);
      fs.rmSync(`${wsFile}.why`, { force: true });
    } catch {
      reopenedBecause = undefined; // opened again later, or by hand: nothing to say
    }
  }
  // Read at the first check (right after activation: ./service.ts), or when something asks before.
  let view: RoutingView | undefined;
  const current = () => (view ??= routingView(service));
  let shownFor = '';
  let reopening = false;
  /**
   * A repository that undoes the routing the user chose: VS Code's own servers of the window are stopped and the
   * window reopened at once inside MCP Gate's workspace file — unless the user switched that off. Between the
   * window opening and this, VS Code starts a repository server only when the user or a chat request asks it to
   * (docs/vscode-own-starts.md).
   */
  const guard = async () => {
    const v = current();
    if (reopening || !v.overrides.length || v.gatedWorkspace || !v.routedAtUser || reopenOff()) return;
    reopening = true;
    for (const s of v.starts) {
      if (s.vscodeId) await Promise.resolve(vscode.commands.executeCommand('workbench.mcp.stopServer', s.vscodeId)).catch(() => undefined);
    }
    try {
      await reopenThroughGate(service, true, { text: overridesText(v.overrides) });
    } catch (e) {
      reopening = false;
      void vscode.window.showErrorMessage(
        vscode.l10n.t(
          'MCP Gate could not reopen this window through its own workspace file ({0}); VS Code may start this repository\'s servers by itself. Run "MCP Gate: Reopen Through MCP Gate".',
          escapeText((e as Error)?.message ?? String(e)),
        ),
      );
    }
  };
  const update = () => {
    const v = (view = routingView(service));
    // A repository that undoes the routing: shown in full width (the trust panel's banner), once per override set
    // (and, in a window MCP Gate reopened, once to say why).
    const key = JSON.stringify(v.overrides.map((o) => [o.folder, o.file, o.key, o.value]));
    if ((v.overrides.length || reopenedBecause) && key !== shownFor) void vscode.commands.executeCommand('mcpGate.openPanel');
    shownFor = key;
    void vscode.commands.executeCommand('setContext', 'mcpGate.routed', v.routedAtUser || v.gatedWorkspace);
    void vscode.commands.executeCommand('setContext', 'mcpGate.nothingOutside', v.nothingOutside);
    void guard();
  };
  const subs = [
    // The first check fires this too (right after activation).
    service.onDidChange(update),
    vscode.workspace.onDidGrantWorkspaceTrust(update),
    // A checkout that changes .vscode/settings.json while the window is open, or the user's own routing change.
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('chat.mcp') || e.affectsConfiguration('mcpGate.reopenOverridden')) update();
    }),
  ];
  if (service.ready) update();
  // The first-run step, once the first check has run.
  subs.push(
    service.whenReady(() => {
      const v = current();
      const first = !context.globalState.get<boolean>(SETUP_SHOWN_KEY);
      const missing = !v.routedAtUser && !v.gatedWorkspace;
      const allowed = vscode.workspace.getConfiguration('mcpGate').inspect<boolean>('askToRoute')?.globalValue !== false;
      if (missing && allowed && (first || !v.nothingOutside)) {
        void context.globalState.update(SETUP_SHOWN_KEY, true);
        // The one step is the routing modal itself (src/vscode/own-starts.ts routeThroughGate): it names what VS Code
        // would start by itself, the side effect on the user's own mcp.json servers, and offers to import them. Once
        // it has routed, a repository override met later reopens the window (guard above).
        const t = setTimeout(
          () => void Promise.resolve(vscode.commands.executeCommand('mcpGate.routeVsCodeServers')).then(stepSettled, stepSettled),
          0,
        );
        subs.push({ dispose: () => (clearTimeout(t), stepSettled()) });
      } else stepSettled();
    }),
  );
  return { view: current, disposable: vscode.Disposable.from(...subs), stepDone };
}
