// Where MCP Gate's commands appear: the context keys that package.json's `menus` read in their `when` clauses
// (set here from the service after every check, so "Approve Server…" shows in the palette only while a server can
// be approved, "Reopen Through MCP Gate" only while a repository setting undoes the routing, and so on), the
// command behind the context menu of an MCP configuration file (explorer and editor), and the actions menu of a
// server's CodeLens. Every action this menu offers runs the same command as the palette; the first, safe choice
// (Show Definition) is what Enter picks.
import * as vscode from 'vscode';
import { escapeLabel } from '../text/escape';
import { isUpdatable } from '../trust/approval/lock-update';
import { refOf, sameRef, type ServerRef } from '../trust/approval/server-ref';
import { isApprovable, isRejectable, isResettable, stateWords, STATE_CODICON } from '../trust/approval/states';
import { CMD, CONTEXT_KEYS, type ContextKey } from './command-ids';

export { CONTEXT_KEYS, type ContextKey } from './command-ids';
import type { RoutingView } from './routing';
import { hasTriedTool, onDidTryTool, tickSteps } from './walkthrough';
import type { GateService } from './service';

/** What each key is now, from the service's last check and the routing view. */
export function contextValues(service: GateService, routing?: () => RoutingView): Record<ContextKey, boolean> {
  const servers = service.servers().map((x) => x.server);
  const r = routing?.();
  return {
    [CONTEXT_KEYS.hasServers]: servers.length > 0,
    [CONTEXT_KEYS.canApprove]: servers.some(isApprovable),
    [CONTEXT_KEYS.canReject]: servers.some(isRejectable),
    [CONTEXT_KEYS.canReset]: servers.some(isResettable),
    [CONTEXT_KEYS.canUpdatePackage]: servers.some(isUpdatable),
    [CONTEXT_KEYS.startsOutside]: !!r && !r.nothingOutside,
    [CONTEXT_KEYS.nothingOutside]: !!r && r.nothingOutside,
    [CONTEXT_KEYS.routingOverridden]: (r?.overrides.length ?? 0) > 0,
    [CONTEXT_KEYS.sandboxMissing]: service.cannotStartHere() !== undefined,
    [CONTEXT_KEYS.hasApproved]: servers.some((s) => s.gated && s.state === 'approved'),
    [CONTEXT_KEYS.routed]: !!r && (r.routedAtUser || r.gatedWorkspace),
    [CONTEXT_KEYS.triedTool]: hasTriedTool(),
  } as Record<ContextKey, boolean>;
}

/** Keeps the context keys current; `current()` is what was last set (tests read it: VS Code offers no getter). */
export function contextKeys(
  service: GateService,
  routing?: () => RoutingView,
): vscode.Disposable & { current(): Record<ContextKey, boolean> } {
  let last: Record<string, boolean> = {};
  const update = () => {
    const next = contextValues(service, routing);
    for (const [k, v] of Object.entries(next)) if (last[k] !== v) void vscode.commands.executeCommand('setContext', k, v);
    last = next;
    tickSteps(next);
  };
  if (service.ready) update();
  const subs = [
    service.onDidChange(update),
    vscode.workspace.onDidGrantWorkspaceTrust(update),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('chat.mcp') && update()),
    onDidTryTool(update),
  ];
  return Object.assign(vscode.Disposable.from(...subs), { current: () => ({ ...last }) as Record<ContextKey, boolean> });
}

type Entry = ReturnType<GateService['servers']>[number];
const refOfEntry = (x: Entry): ServerRef => refOf(x.folder.folder.uri.fsPath, x.server);

/** The actions that apply to one server now, safe ones first; each is a command of the palette. */
export function serverActions(x: Entry): { label: string; command: string }[] {
  const s = x.server;
  const out: { label: string; command: string }[] = [{ label: vscode.l10n.t('$(file-code) Show Definition'), command: CMD.showDefinition }];
  if (isApprovable(s)) out.push({ label: vscode.l10n.t('$(check) Approve…'), command: CMD.approve });
  if (isUpdatable(s)) out.push({ label: vscode.l10n.t('$(cloud-download) Update Pinned Package…'), command: CMD.updatePackage });
  if (isRejectable(s)) out.push({ label: vscode.l10n.t('$(close) Reject…'), command: CMD.reject });
  if (isResettable(s)) out.push({ label: vscode.l10n.t('$(discard) Reset Approval…'), command: CMD.reset });
  out.push({ label: vscode.l10n.t('$(shield) Open Trust Panel'), command: CMD.openPanel });
  return out;
}

/** The CodeLens's menu: one server's applicable actions in a quick pick; the command chosen runs for that server. */
export async function showServerActions(service: GateService, arg?: unknown): Promise<string | undefined> {
  const x = service.servers().find((e) => sameRef(refOfEntry(e), arg as ServerRef));
  if (!x) return undefined;
  const items = serverActions(x);
  const chosen = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t(
      'MCP Gate: "{0}" ({1}, {2})',
      escapeLabel(x.server.name),
      vscode.l10n.t(stateWords(x.server)),
      escapeLabel(x.server.source),
    ),
    placeHolder: vscode.l10n.t('What to do with this server'),
  });
  if (!chosen) return undefined;
  await vscode.commands.executeCommand(chosen.command, chosen.command === CMD.openPanel ? undefined : refOfEntry(x));
  return chosen.command;
}

/** The context menu of an MCP configuration file: its servers, then the chosen one's actions. */
export async function reviewFile(service: GateService, arg?: unknown): Promise<string | undefined> {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  const inFile = uri ? service.servers().filter((x) => x.server.file === uri.fsPath) : [];
  if (!inFile.length) {
    void vscode.window.showInformationMessage(
      uri
        ? vscode.l10n.t('MCP Gate: no MCP server of an open folder is declared in {0}.', vscode.workspace.asRelativePath(uri))
        : vscode.l10n.t('MCP Gate: open an MCP configuration file first.'),
    );
    return undefined;
  }
  let x = inFile[0];
  if (inFile.length > 1) {
    const picked = await vscode.window.showQuickPick(
      inFile.map((e) => ({
        label: `$(${STATE_CODICON[e.server.state]}) ${escapeLabel(e.server.name)}`,
        description: vscode.l10n.t(stateWords(e.server)),
        detail: escapeLabel(e.server.reason),
        e,
      })),
      { title: vscode.l10n.t('MCP Gate: the servers of {0}', vscode.workspace.asRelativePath(uri!)) },
    );
    if (!picked) return undefined;
    x = picked.e;
  }
  return showServerActions(service, refOfEntry(x));
}
