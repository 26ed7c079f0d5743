// The palette (category "MCP Gate"): approve, reject, reset, show definition, set/clear secret, show log, doctor.
// Each command is a thin adapter: it picks a server, shows the core's rendering, and records the decision through
// the same core as the CLI. Definitions and reports open as read-only documents (scheme `mcp-gate`).
import * as vscode from 'vscode';
import { doctorText, policyText, sandboxText, serverText, type GrantsContext } from '../report/render';
import { defaultMasker } from '../policy/mask';
import { recordDecision, resetDecisions } from '../trust/decisions';
import { escapeText } from '../trust/escape';
import type { ServerReport } from '../trust/gate';
import { routeThroughGate } from './own-starts';
import { routingText } from './routing';
import { prompts } from './prompts';
import type { FolderState, GateService } from './service';

export const SCHEME = 'mcp-gate';

/** Identifies one server from a CodeLens, the panel or a test: folder path, source, name. */
export interface ServerRef {
  folder: string;
  source: string;
  name: string;
}

export class DocumentProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly texts = new Map<string, string>();

  show(path: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: SCHEME, path });
    this.texts.set(uri.toString(), defaultMasker.mask(text));
    this.changed.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

function label(s: ServerReport): string {
  return `${s.name}  (${s.state})`;
}

async function pick(service: GateService, filter: (s: ServerReport) => boolean, placeHolder: string): Promise<{ folder: FolderState; server: ServerReport } | undefined> {
  const items = service.servers().filter((x) => filter(x.server)).map((x) => ({
    label: escapeText(label(x.server)),
    description: escapeText(x.server.source),
    detail: escapeText(x.server.reason),
    item: x,
  }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: no server to choose from.'));
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true }))?.item;
}

function find(service: GateService, ref: ServerRef): { folder: FolderState; server: ServerReport } | undefined {
  return service.servers().find((x) => x.folder.folder.uri.fsPath === ref.folder && x.server.source === ref.source && x.server.name === ref.name);
}

export function refOf(x: { folder: FolderState; server: ServerReport }): ServerRef {
  return { folder: x.folder.folder.uri.fsPath, source: x.server.source, name: x.server.name };
}

/** The grants preview's context: the folder's project (real path) and the user's policy now. */
function grantsOf(service: GateService, x: { folder: FolderState; server: ServerReport }): GrantsContext {
  return { project: x.folder.report?.project ?? x.folder.folder.uri.fsPath, policy: service.policy(x.folder) };
}

async function showDefinition(service: GateService, docs: DocumentProvider, x: { folder: FolderState; server: ServerReport }): Promise<void> {
  const uri = docs.show(`/${x.server.name} — ${x.server.source.replace(/\//g, '∕')}.txt`, serverText(x.server, grantsOf(service, x)));
  await vscode.window.showTextDocument(uri, { preview: true, preserveFocus: false });
}

export function registerCommands(context: vscode.ExtensionContext, service: GateService, docs: DocumentProvider, onDecision: () => void): void {
  const reg = (id: string, f: (...args: never[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, f));

  reg('mcpGate.approve', async (ref?: ServerRef) => {
    const x = ref ? find(service, ref) : await pick(service, (s) => s.gated && (s.state === 'pending' || s.state === 'approval-changed' || s.state === 'rejected'), vscode.l10n.t('Approve which server? Its exact definition is shown first.'));
    if (!x) return false;
    const s = x.server;
    if (!s.gated || s.state === 'blocked' || !s.pinned) {
      void vscode.window.showWarningMessage(vscode.l10n.t('MCP Gate: "{0}" cannot be approved: {1}', escapeText(s.name), escapeText(s.reason)));
      return false;
    }
    await showDefinition(service, docs, x);
    const yes = await prompts.confirm(
      vscode.l10n.t('Approve "{0}" from {1} exactly as shown?', escapeText(s.name), escapeText(s.source)),
      defaultMasker.mask(serverText(s, grantsOf(service, x))),
      vscode.l10n.t('Approve'),
    );
    if (!yes) return false;
    try {
      const r = await recordDecision(x.folder.input, s.name, s.source, 'approved', s.pinned.digest);
      service.log.write({ kind: 'gate.approve', server: s.name, source: s.source, project: x.folder.report?.project, digest: r.server.pinned?.digest });
      service.refresh(true);
      onDecision();
      void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: approved "{0}".', escapeText(s.name)));
      return true;
    } catch (e) {
      void vscode.window.showErrorMessage(vscode.l10n.t('MCP Gate: {0}', (e as Error).message));
      return false;
    }
  });

  reg('mcpGate.reject', async (ref?: ServerRef) => {
    const x = ref ? find(service, ref) : await pick(service, (s) => s.gated && s.state !== 'rejected' && s.state !== 'blocked', vscode.l10n.t('Reject which server?'));
    if (!x) return false;
    try {
      await recordDecision(x.folder.input, x.server.name, x.server.source, 'rejected');
      service.log.write({ kind: 'gate.reject', server: x.server.name, source: x.server.source, project: x.folder.report?.project });
      service.refresh(true);
      onDecision();
      return true;
    } catch (e) {
      void vscode.window.showErrorMessage(vscode.l10n.t('MCP Gate: {0}', (e as Error).message));
      return false;
    }
  });

  reg('mcpGate.reset', async (ref?: ServerRef | 'all') => {
    let target: { folder: FolderState; name?: string; source?: string } | undefined;
    if (ref === 'all') target = service.folders()[0] ? { folder: service.folders()[0] } : undefined;
    else if (ref) {
      const x = find(service, ref);
      target = x && { folder: x.folder, name: x.server.name, source: x.server.source };
    } else {
      const all = { label: vscode.l10n.t('$(clear-all) Every server of this workspace'), item: 'all' as const };
      const items = [all, ...service.servers().filter((x) => x.server.record).map((x) => ({ label: escapeText(label(x.server)), description: escapeText(x.server.source), item: x }))];
      const chosen = await vscode.window.showQuickPick(items, { placeHolder: vscode.l10n.t('Return which server to pending?') });
      if (!chosen) return false;
      target = chosen.item === 'all' ? (service.folders()[0] ? { folder: service.folders()[0] } : undefined) : { folder: chosen.item.folder, name: chosen.item.server.name, source: chosen.item.server.source };
    }
    if (!target) return false;
    const removed = await resetDecisions(target.folder.input, target.name, target.source);
    for (const r of removed) service.log.write({ kind: 'gate.reset', server: r.server, source: r.source, project: r.project, detail: `was ${r.decision}` });
    service.refresh(true);
    onDecision();
    return removed.length;
  });

  reg('mcpGate.showDefinition', async (ref?: ServerRef) => {
    const x = ref ? find(service, ref) : await pick(service, () => true, vscode.l10n.t('Show which server\'s definition?'));
    if (!x) return undefined;
    await showDefinition(service, docs, x);
    return serverText(x.server, grantsOf(service, x));
  });

  reg('mcpGate.doctor', async () => {
    const parts = service.folders().map((f) => (f.report ? `${doctorText(f.report, 'VS Code globalStorage')}\n\n${policyText(service.policy(f), () => false, 'MCP Gate: Set Secret… ')}\n\n${sandboxText(f.report, service.policy(f))}` : `${f.folder.uri.fsPath}: ${f.error}`));
    const text = parts.length ? `${parts.join('\n\n')}\n\n${routingText(service)}` : vscode.l10n.t('No workspace folder is open.');
    await vscode.window.showTextDocument(docs.show('/MCP Gate Doctor.txt', text), { preview: true });
    service.channel.info(`doctor:\n${text}`);
    return text;
  });

  reg('mcpGate.setSecret', async (name?: string) => {
    const names = [...new Set(service.folders().flatMap((f) => service.policy(f).secrets.map((e) => e.name)))];
    const chosen = name ?? (names.length ? await vscode.window.showQuickPick(names, { placeHolder: vscode.l10n.t('Which secret from mcpGate.secrets?') }) : undefined);
    if (!chosen) {
      if (!names.length) void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: the secrets block (mcpGate.secrets) names no secret yet.'));
      return false;
    }
    const value = await prompts.secretValue(chosen);
    if (!value) return false;
    await service.setSecret(chosen, value);
    service.log.write({ kind: 'secret.set', detail: `secret ${chosen} set` });
    return true;
  });

  reg('mcpGate.clearSecret', async (name?: string) => {
    const names = [...new Set(service.folders().flatMap((f) => service.policy(f).secrets.map((e) => e.name)))];
    const chosen = name ?? (names.length ? await vscode.window.showQuickPick(names, { placeHolder: vscode.l10n.t('Clear which secret?') }) : undefined);
    if (!chosen) return false;
    await service.clearSecret(chosen);
    service.log.write({ kind: 'secret.clear', detail: `secret ${chosen} cleared` });
    return true;
  });

  reg('mcpGate.showLog', () => service.channel.show(true));

  reg('mcpGate.routeVsCodeServers', () => routeThroughGate(service));
}
