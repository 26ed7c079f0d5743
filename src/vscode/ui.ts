// What a person sees without asking: the status bar item (servers waiting, Restricted Mode, the escape hatch), the
// notification when a folder declares pending or changed servers, and CodeLens above each server entry in every
// configuration file of the catalogue.
import * as vscode from 'vscode';
import { CATALOGUE } from '../trust/sources/catalogue';
import { escapeText } from '../text/escape';
import { serverKey } from '../trust/approval/server-ref';
import { announcementKey } from '../trust/approval/gate-state';
import { changedSinceApproval, isApprovable, STATE_CODICON, stateWords } from '../trust/approval/states';
import { CMD } from './command-ids';
import { refOf } from './commands';
import type { RoutingView } from './routing';
import type { GateService } from './service';
import { sandboxMissingText, serverCount, timeText, waitingText } from './words';
import { waitingWords } from '../report/risk-text';

/** Once per window: the sandbox cannot start here, with the button that opens a terminal holding the install command. */
export function sandboxNotice(service: GateService): vscode.Disposable {
  let told = false;
  const check = async () => {
    const c = told ? undefined : service.cannotStartHere();
    if (!c) return;
    told = true;
    const fix = vscode.l10n.t('Install bubblewrap…');
    if ((await vscode.window.showErrorMessage(`MCP Gate: ${sandboxMissingText(c)}`, fix)) === fix)
      await vscode.commands.executeCommand(CMD.installSandbox);
  };
  if (service.ready) void check();
  return service.onDidChange(() => void check());
}

/** The status bar's text and tooltip now (kept apart from the item so a test can read what a person sees). */
export function statusBarText(service: GateService, routing?: () => RoutingView): { text: string; tooltip: string; warn: boolean } {
  const waiting = service.waiting();
  const blocked = service.folders().some((f) => (f.report?.fullBlock.length ?? 0) > 0);
  const hatch = service.folders().some((f) => f.report?.escapeHatch);
  const uncontained = service.uncontained();
  const warn = blocked || !!hatch || uncontained.length > 0 || service.cannotStartHere() !== undefined;
  if (!vscode.workspace.isTrusted) {
    return {
      text: '$(shield) MCP Gate: Restricted Mode',
      tooltip: vscode.l10n.t('Restricted Mode: no repository MCP server is offered or started, approved or not.'),
      warn,
    };
  }
  if (blocked) {
    return {
      text: '$(error) MCP Gate: blocked',
      tooltip: vscode.l10n.t('A repository configuration cannot be used: every tool of the project is blocked. Run MCP Gate: Doctor.'),
      warn,
    };
  }
  const cannot = service.cannotStartHere();
  // What waits, in words: "1 changed · 2 new".
  const words = waitingWords(
    waiting.map((x) => x.server.state),
    { changed: (n) => vscode.l10n.t('{0} changed', n), fresh: (n) => vscode.l10n.t('{0} new', n) },
  );
  const text = `$(shield) MCP Gate${words ? `: ${words}` : ''}${hatch ? ' $(warning) MCP_GATE_ALLOW_PROJECT' : ''}${uncontained.length ? ` $(unlock) ${vscode.l10n.t('{0} uncontained', uncontained.length)}` : ''}${cannot ? ` $(error) ${vscode.l10n.t('no sandbox')}` : ''}`;
  let tooltip: string;
  const folders = service.folders();
  if (folders.length > 1) {
    // One line per folder: each is gated with its own identity.
    tooltip = folders
      .map((f) => {
        const n = waiting.filter((x) => x.folder === f).length;
        const all = f.report?.servers.length ?? 0;
        return `${f.folder.name}: ${f.error ? escapeText(f.error) : `${serverCount(all)}, ${n ? vscode.l10n.t('{0} waiting', n) : vscode.l10n.t('none waiting')}`}`;
      })
      .join('\n');
    tooltip = `${waitingText(waiting.length)}\n${tooltip}`;
  } else tooltip = waitingText(waiting.length);
  if (uncontained.length) {
    tooltip +=
      '\n' +
      vscode.l10n.t(
        'Running without the sandbox by your opt-out: {0}',
        uncontained.map((u) => `${escapeText(u.server.name)} (${escapeText(u.where)})`).join(', '),
      );
  }
  if (cannot) tooltip += '\n' + sandboxMissingText(cannot);
  // What VS Code itself would still start outside the gate (src/vscode/routing.ts), always said.
  const r = routing?.();
  if (!r) return { text, tooltip, warn };
  return {
    text: r.nothingOutside ? text : `${text} $(warning) ${vscode.l10n.t('{0} outside the gate', r.starts.length || '!')}`,
    tooltip: `${tooltip}\n${r.status}${r.overrides.length ? ` — ${vscode.l10n.t('a repository setting undoes the routing: run MCP Gate: Reopen Through MCP Gate')}` : ''}`,
    warn: warn || !r.nothingOutside,
  };
}

export function statusBar(service: GateService, routing?: () => RoutingView): vscode.Disposable & { item: vscode.StatusBarItem } {
  const item = vscode.window.createStatusBarItem('mcpGate.status', vscode.StatusBarAlignment.Left, 100);
  item.name = 'MCP Gate';
  const update = () => {
    const t = statusBarText(service, routing);
    item.text = t.text;
    item.tooltip = t.tooltip;
    item.command = CMD.openPanel;
    item.backgroundColor = t.warn ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    item.show();
  };
  if (service.ready) update();
  else {
    // Until the first check, right after activation (./service.ts).
    item.text = '$(sync~spin) MCP Gate';
    item.tooltip = vscode.l10n.t('Checking the MCP servers of this workspace…');
    item.command = CMD.openPanel;
    item.show();
  }
  const sub = service.onDidChange(update);
  const trust = vscode.workspace.onDidGrantWorkspaceTrust(update);
  return Object.assign(vscode.Disposable.from(item, sub, trust), { item });
}

/**
 * One notification per newly waiting server set: names them, with Review / Approve… / Not now. Not before `after`
 * (the first-run routing step, answered or closed): one prompt at a time on opening a repository.
 */
export function notifications(service: GateService, after: Promise<void> = Promise.resolve()): vscode.Disposable {
  const told = new Set<string>();
  const check = async () => {
    await after;
    const seen = (x: ReturnType<GateService['waiting']>[number]) =>
      announcementKey(x.server.state, serverKey(refOf(x)), x.server.pinned?.digest);
    const fresh = service.waiting().filter((x) => !told.has(seen(x)));
    if (!fresh.length) return;
    for (const x of fresh) told.add(seen(x));
    const names = fresh
      .map(
        (x) =>
          `${escapeText(x.server.name)} (${x.server.state === 'pending' ? vscode.l10n.t('new') : vscode.l10n.t('changed')}, ${escapeText(x.server.source)})`,
      )
      .join(', ');
    const review = vscode.l10n.t('Review');
    const approve = vscode.l10n.t('Approve…');
    const later = vscode.l10n.t('Not now');
    const answer = await vscode.window.showWarningMessage(
      vscode.l10n.t(
        'MCP Gate: this workspace declares MCP servers that have not been approved: {0}. None of them runs until you approve it.',
        names,
      ),
      review,
      approve,
      later,
    );
    if (answer === review) await vscode.commands.executeCommand(CMD.openPanel);
    else if (answer === approve) await vscode.commands.executeCommand(CMD.approve, fresh.length === 1 ? refOf(fresh[0]) : undefined);
  };
  if (service.ready) void check();
  return service.onDidChange(() => void check());
}

export class ServerCodeLens implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(
    private readonly service: GateService,
    private readonly routing?: () => RoutingView,
  ) {
    service.onDidChange(() => this.changed.fire());
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const x of this.service.servers()) {
      if (x.server.file !== doc.uri.fsPath) continue;
      const line = Math.max(0, Math.min(doc.lineCount - 1, x.server.position.line - 1));
      const range = new vscode.Range(line, 0, line, 0);
      const ref = refOf(x);
      const decided = x.server.record ? `\n${vscode.l10n.t('decided {0}', timeText(x.server.record.decidedAt))}` : '';
      lenses.push(
        new vscode.CodeLens(range, {
          title: `$(${STATE_CODICON[x.server.state]}) MCP Gate: ${vscode.l10n.t(stateWords(x.server))}`,
          command: CMD.showDefinition,
          arguments: [ref],
          tooltip: `${x.server.reason}${decided}`,
        }),
      );
      if (isApprovable(x.server))
        lenses.push(new vscode.CodeLens(range, { title: vscode.l10n.t('Approve'), command: CMD.approve, arguments: [ref] }));
      if (changedSinceApproval(x.server))
        lenses.push(new vscode.CodeLens(range, { title: vscode.l10n.t('Show diff'), command: CMD.showDefinition, arguments: [ref] }));
      // The lens's menu: every action that applies to this server (src/vscode/menus.ts).
      lenses.push(
        new vscode.CodeLens(range, {
          title: '$(ellipsis)',
          command: CMD.serverActions,
          arguments: [ref],
          tooltip: vscode.l10n.t('More actions for "{0}"', escapeText(x.server.name)),
        }),
      );
      // VS Code's own ▷Start sits on the same line while it would start this server itself: say that it bypasses the gate.
      const own = this.routing?.().starts.find((s) => s.file === x.server.file && s.name === x.server.name);
      if (own) {
        const overridden = (this.routing?.().overrides.length ?? 0) > 0;
        lenses.push(
          new vscode.CodeLens(range, {
            title: vscode.l10n.t(
              "$(warning) VS Code's own Start bypasses MCP Gate — {0}",
              overridden ? vscode.l10n.t('Reopen Through MCP Gate') : vscode.l10n.t('Route Through the Gate'),
            ),
            command: overridden ? CMD.reopenThroughGate : CMD.routeVsCodeServers,
            tooltip: vscode.l10n.t(
              'VS Code itself would start "{0}" ({1}) outside MCP Gate: unpinned, uncontained, not logged.',
              escapeText(x.server.name),
              own.vscodeId ?? own.mechanism,
            ),
          }),
        );
      }
    }
    return lenses;
  }
}

/** Document selector covering every catalogue file of a workspace, JSON and TOML. */
export function catalogueSelector(): vscode.DocumentSelector {
  return CATALOGUE.filter((l) => l.scope === 'repository').map((l) => ({ scheme: 'file', pattern: `**/${l.relPath}` }));
}
