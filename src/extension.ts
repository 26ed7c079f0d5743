// VS Code entry point: wires the adapters in src/vscode to the shared core. Activation stays cheap: it registers
// commands, the status bar, CodeLens and the chat gateway provider; the first gate check (stats and small files)
// runs right after it returns, or at once when VS Code asks a provider first (src/vscode/service.ts). No server
// starts until VS Code asks the provider to resolve one.
import * as vscode from 'vscode';
import { packageWorker } from './vscode/resolving';
import { registerCommands } from './vscode/commands';
import { decisions, type Decisions } from './vscode/decision';
import { DocumentProvider, SCHEME } from './vscode/review';
import { GatewayProvider, PROVIDER_ID } from './vscode/gateway-provider';
import { registerTrustPanel, TrustPanel } from './vscode/panel';
import type { PanelModel } from '../webview/common/protocol';
import { prompts, type Prompts } from './vscode/prompts';
import { registerRouting, type RoutingView } from './vscode/routing';
import { GateService } from './vscode/service';
import { contextKeys, type ContextKey } from './vscode/menus';
import { catalogueSelector, notifications, sandboxNotice, ServerCodeLens, statusBar } from './vscode/ui';

/** What tests (and other extensions) can observe. Holds no secret. */
export interface McpGateApi {
  service: GateService;
  gateway?: GatewayProvider;
  /** The questions; tests inside VS Code replace their methods, or run them and click their lenses (./vscode/decision.ts). */
  prompts: Prompts;
  /** The review documents waiting for a decision (each with its lenses: ./vscode/decision.ts). */
  decisions: Decisions;
  /** Whether VS Code itself would start anything outside the gate, as the status bar, panel and doctor say it. */
  routing: () => RoutingView;
  /** The status bar item (tests read what a person sees on it). */
  status: vscode.StatusBarItem;
  /** The context keys package.json's menus read, as last set (src/vscode/menus.ts). */
  contextKeys: () => Record<ContextKey, boolean>;
  /** What the open trust panel last sent its webview (tests read what a person sees in it); undefined while none is open. */
  panel: () => PanelModel | undefined;
  /** How long activate() took, in milliseconds (for the benchmark). */
  activationMs: number;
}

/** The gate service of the running extension (its export is flushed at deactivation). */
let active: GateService | undefined;

export function activate(context: vscode.ExtensionContext): McpGateApi {
  const started = performance.now();
  const channel = vscode.window.createOutputChannel('MCP Gate', { log: true });
  const service = new GateService(context.globalStorageUri.fsPath, context.secrets, channel);
  active = service;
  const docs = new DocumentProvider();
  context.subscriptions.push(channel, service, vscode.workspace.registerTextDocumentContentProvider(SCHEME, docs), decisions.register());

  let gateway: GatewayProvider | undefined;
  if (typeof vscode.lm?.registerMcpServerDefinitionProvider === 'function') {
    gateway = new GatewayProvider(service, packageWorker(context));
    context.subscriptions.push(gateway, vscode.lm.registerMcpServerDefinitionProvider(PROVIDER_ID, gateway));
  }
  registerCommands({ context, service, docs, prompts, decided: () => gateway?.decisionsChanged(), gateway });
  registerTrustPanel(context, service);
  const routing = registerRouting(context, service);
  const status = statusBar(service, routing.view);
  const keys = contextKeys(service, routing.view);
  context.subscriptions.push(
    keys,
    routing.disposable,
    status,
    vscode.languages.registerCodeLensProvider(catalogueSelector(), new ServerCodeLens(service, routing.view)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => gateway?.decisionsChanged()),
    // A definition edited on disk, a decision made by the CLI, a settings change: re-offer, and end sessions of
    // servers that are no longer allowed.
    service.onDidChange(() => gateway?.decisionsChanged()),
  );
  if (vscode.workspace.isTrusted === false) channel.info('Restricted Mode: no repository MCP server is offered or started.');
  context.subscriptions.push(
    service.whenReady(() => {
      for (const f of service.folders())
        if (f.report?.escapeHatch)
          service.log.write({
            kind: 'gate.escape-hatch',
            project: f.report.project,
            detail: 'MCP_GATE_ALLOW_PROJECT=1 trusts every repository server',
          });
    }),
  );
  context.subscriptions.push(notifications(service, routing.stepDone), sandboxNotice(service));
  return {
    service,
    gateway,
    prompts,
    decisions,
    routing: routing.view,
    status: status.item,
    contextKeys: () => keys.current(),
    panel: () => TrustPanel.shown(),
    activationMs: performance.now() - started,
  };
}

/** Sends what is left of the log's export (src/vscode/service.ts) before the extension host stops. */
export function deactivate(): Promise<void> {
  return active?.closeExport() ?? Promise.resolve();
}
