// What a person sees without asking: the status bar item (servers waiting, Restricted Mode, the escape hatch), the
// notification when a folder declares pending or changed servers, and CodeLens above each server entry in every
// configuration file of the catalogue.
import * as vscode from 'vscode';
import { CATALOGUE } from '../trust/catalogue';
import { escapeText } from '../trust/escape';
import { refOf } from './commands';
import type { RoutingView } from './routing';
import type { GateService } from './service';

export function statusBar(service: GateService, routing?: () => RoutingView): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('mcpGate.status', vscode.StatusBarAlignment.Left, 100);
  item.name = 'MCP Gate';
  const update = () => {
    const waiting = service.waiting().length;
    const blocked = service.folders().some((f) => (f.report?.fullBlock.length ?? 0) > 0);
    const hatch = service.folders().some((f) => f.report?.escapeHatch);
    const uncontained = service.uncontained();
    if (!vscode.workspace.isTrusted) {
      item.text = '$(shield) MCP Gate: Restricted Mode';
      item.tooltip = vscode.l10n.t('Restricted Mode: no repository MCP server is offered or started, approved or not.');
    } else if (blocked) {
      item.text = '$(error) MCP Gate: blocked';
      item.tooltip = vscode.l10n.t('A repository configuration cannot be used: every tool of the project is blocked. Run MCP Gate: Doctor.');
    } else {
      item.text = `$(shield) MCP Gate${waiting ? `: ${waiting} waiting` : ''}${hatch ? ' $(warning) MCP_GATE_ALLOW_PROJECT' : ''}${uncontained.length ? ` $(unlock) ${uncontained.length} uncontained` : ''}`;
      item.tooltip = waiting ? vscode.l10n.t('{0} repository server(s) wait for your review', waiting) : vscode.l10n.t('No repository server waits for review');
      if (uncontained.length) {
        item.tooltip += '\n' + vscode.l10n.t('Running without the sandbox by your opt-out: {0}', uncontained.map((u) => `${escapeText(u.server.name)} (${escapeText(u.where)})`).join(', '));
      }
    }
    // What VS Code itself would still start outside the gate (src/vscode/routing.ts), always said.
    const r = routing?.();
    if (r) {
      if (!r.nothingOutside) item.text += ` $(warning) ${r.starts.length || '!'} outside the gate`;
      item.tooltip = `${item.tooltip}\n${r.status}${r.overrides.length ? ` — ${vscode.l10n.t('a repository setting undoes the routing: run MCP Gate: Reopen Through MCP Gate')}` : ''}`;
    }
    item.command = 'mcpGate.openPanel';
    item.backgroundColor = blocked || hatch || uncontained.length || (r && !r.nothingOutside) ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    item.show();
  };
  update();
  const sub = service.onDidChange(update);
  const trust = vscode.workspace.onDidGrantWorkspaceTrust(update);
  return vscode.Disposable.from(item, sub, trust);
}

/** One notification per newly waiting server set: names them, with Review / Approve… / Not now. */
export function notifications(service: GateService): vscode.Disposable {
  const told = new Set<string>();
  const check = async () => {
    const fresh = service.waiting().filter((x) => !told.has(`${x.folder.folder.uri.fsPath}\u0000${x.server.source}\u0000${x.server.name}\u0000${x.server.pinned?.digest}`));
    if (!fresh.length) return;
    for (const x of fresh) told.add(`${x.folder.folder.uri.fsPath}\u0000${x.server.source}\u0000${x.server.name}\u0000${x.server.pinned?.digest}`);
    const names = fresh.map((x) => `${escapeText(x.server.name)} (${x.server.state === 'pending' ? vscode.l10n.t('new') : vscode.l10n.t('changed')}, ${escapeText(x.server.source)})`).join(', ');
    const review = vscode.l10n.t('Review');
    const approve = vscode.l10n.t('Approve…');
    const later = vscode.l10n.t('Not now');
    const answer = await vscode.window.showWarningMessage(vscode.l10n.t('MCP Gate: this workspace declares MCP servers that have not been approved: {0}. None of them runs until you approve it.', names), review, approve, later);
    if (answer === review) await vscode.commands.executeCommand('mcpGate.openPanel');
    else if (answer === approve) await vscode.commands.executeCommand('mcpGate.approve', fresh.length === 1 ? refOf(fresh[0]) : undefined);
  };
  void check();
  return service.onDidChange(() => void check());
}

export class ServerCodeLens implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(private readonly service: GateService, private readonly routing?: () => RoutingView) {
    service.onDidChange(() => this.changed.fire());
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const x of this.service.servers()) {
      if (x.server.file !== doc.uri.fsPath) continue;
      const line = Math.max(0, Math.min(doc.lineCount - 1, x.server.position.line - 1));
      const range = new vscode.Range(line, 0, line, 0);
      const ref = refOf(x);
      lenses.push(new vscode.CodeLens(range, { title: `MCP Gate: ${x.server.state}`, command: 'mcpGate.showDefinition', arguments: [ref], tooltip: x.server.reason }));
      if (x.server.gated && (x.server.state === 'pending' || x.server.state === 'approval-changed' || x.server.state === 'rejected')) {
        lenses.push(new vscode.CodeLens(range, { title: vscode.l10n.t('Approve'), command: 'mcpGate.approve', arguments: [ref] }));
      }
      if (x.server.state === 'approval-changed') lenses.push(new vscode.CodeLens(range, { title: vscode.l10n.t('Show diff'), command: 'mcpGate.showDefinition', arguments: [ref] }));
      // VS Code's own ▷Start sits on the same line while it would start this server itself: say that it bypasses the gate.
      const own = this.routing?.().starts.find((s) => s.file === x.server.file && s.name === x.server.name);
      if (own) {
        const overridden = (this.routing?.().overrides.length ?? 0) > 0;
        lenses.push(new vscode.CodeLens(range, {
          title: vscode.l10n.t('$(warning) VS Code\'s own Start bypasses MCP Gate — {0}', overridden ? vscode.l10n.t('Reopen Through MCP Gate') : vscode.l10n.t('Route Through the Gate')),
          command: overridden ? 'mcpGate.reopenThroughGate' : 'mcpGate.routeVsCodeServers',
          tooltip: vscode.l10n.t('VS Code itself would start "{0}" ({1}) outside MCP Gate: unpinned, uncontained, not logged.', escapeText(x.server.name), own.vscodeId ?? own.mechanism),
        }));
      }
    }
    return lenses;
  }
}

/** Document selector covering every catalogue file of a workspace, JSON and TOML. */
export function catalogueSelector(): vscode.DocumentSelector {
  return CATALOGUE.filter((l) => l.scope === 'repository').map((l) => ({ scheme: 'file', pattern: `**/${l.relPath}` }));
}
