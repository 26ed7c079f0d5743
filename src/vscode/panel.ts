// The trust panel (a webview): waiting and decided servers with their exact definitions and diffs, and the exchange
// log. This side computes the view model (webview/node/model.ts), masks everything it sends, follows the gate and the
// log file so that a change made anywhere (the palette, the CLI, another window, a file edit) shows within a
// second, and checks every message from the webview before acting. Actions run the palette's own commands
// (mcpGate.approve / reject / reset / updatePackage) with a ServerRef found by a key of the current state, never built from what
// the webview sent. The webview loads only from dist/webview and media/ under a CSP with a per-load nonce.
import { randomBytes } from 'node:crypto';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { defaultMasker } from '../policy/mask';
import { LogTail, toBatch } from '../../webview/node/log-tail';
import { buildModel, checkMessage, describeMessage, panelHtml, type BuiltModel, type FolderInput } from '../../webview/node/model';
import { VIEW_TYPE, type HostMessage, type PanelAction, type PanelModel } from '../../webview/common/protocol';
import { sanitizeUiState } from '../../webview/common/ui-state';
import { routingView } from './routing';
import { refOf, sameRef, type ServerRef } from '../trust/approval/server-ref';
import { CMD } from './command-ids';
import type { GateService } from './service';
import { sandboxMissingText } from './words';

export const OPEN_PANEL_COMMAND = CMD.openPanel;
const TITLE = 'MCP Gate: Trust Panel';
/** While the panel is visible: how often the gate (stat-only) and the log file are re-checked. */
const POLL_MS = 250;
const COMMAND: Record<PanelAction, string> = { approve: CMD.approve, reject: CMD.reject, reset: CMD.reset, update: CMD.updatePackage };
const MAX_DROP_LINES = 50;
/** The host's copy of the webview's UI state, per workspace (see webview/main.ts: the newer copy wins). */
const UI_STATE_KEY = 'mcpGate.trustPanel.ui';

function resourceRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')];
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, enableCommandUris: false, localResourceRoots: resourceRoots(extensionUri) };
}

export class TrustPanel implements vscode.Disposable {
  static current: TrustPanel | undefined;

  /** What the open panel last sent its webview (the tests read what a person sees), or undefined. */
  static shown(): PanelModel | undefined {
    return TrustPanel.current?.ready ? TrustPanel.current.sent : undefined;
  }

  private built: BuiltModel = buildModel([], { restricted: false });
  private lastModel = '';
  private sent: PanelModel | undefined;
  private readonly tail: LogTail;
  private ready = false;
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private acting = false;
  private droppedLines = 0;
  private disposed = false;
  private readonly disposables: vscode.Disposable[] = [];

  private constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly context: vscode.ExtensionContext,
    private readonly service: GateService,
  ) {
    const extensionUri = context.extensionUri;
    this.tail = new LogTail(service.log.file);
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'shield.svg');
    panel.webview.options = webviewOptions(extensionUri);
    panel.webview.html = this.html();
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((m) => void this.receive(m)),
      panel.onDidChangeViewState(() => this.visibility()),
      service.onDidChange(() => this.schedule()),
      { dispose: service.log.onEvent(() => this.schedule()) },
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.schedule()),
    );
    this.visibility();
  }

  static show(context: vscode.ExtensionContext, service: GateService): TrustPanel {
    if (TrustPanel.current) {
      TrustPanel.current.panel.reveal(undefined, false);
      return TrustPanel.current;
    }
    const panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      TITLE,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      {
        ...webviewOptions(context.extensionUri),
        enableFindWidget: true,
        retainContextWhenHidden: false,
      },
    );
    TrustPanel.current = new TrustPanel(panel, context, service);
    return TrustPanel.current;
  }

  /** A panel VS Code restored after a reload or restart (its webview state comes back through getState). */
  static revive(panel: vscode.WebviewPanel, context: vscode.ExtensionContext, service: GateService): TrustPanel {
    TrustPanel.current?.dispose();
    panel.title = TITLE;
    TrustPanel.current = new TrustPanel(panel, context, service);
    return TrustPanel.current;
  }

  private html(): string {
    const w = this.panel.webview;
    const uri = (...p: string[]) => w.asWebviewUri(vscode.Uri.joinPath(this.context.extensionUri, ...p)).toString();
    return panelHtml({
      cspSource: w.cspSource,
      nonce: randomBytes(18).toString('base64'),
      script: uri('dist', 'webview', 'panel.js'),
      styles: [uri('media', 'panel.css')],
      codicons: uri('dist', 'webview', 'codicons', 'codicon.css'),
    });
  }

  private visibility(): void {
    if (!this.panel.visible) {
      // Without retainContextWhenHidden the webview is torn down while hidden; it says "ready" when it is back.
      this.ready = false;
      if (this.timer) clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    if (!this.timer) {
      this.timer = setInterval(() => {
        this.service.refresh();
        this.pushLog();
      }, POLL_MS);
    }
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.pushModel();
      this.pushLog();
    }, 10);
  }

  private post(m: HostMessage): void {
    if (!this.ready) return;
    // Every byte the webview receives passes the one masking function (README, "Policy": one masking function for every writer).
    void this.panel.webview.postMessage(defaultMasker.maskDeep(m));
  }

  private rebuild(): BuiltModel {
    const folders: FolderInput[] = this.service.folders().map((f) => ({
      name: f.folder.name,
      path: f.folder.uri.fsPath,
      report: f.report,
      error: f.error,
      policy: f.report ? this.service.policy(f) : undefined,
    }));
    this.built = buildModel(folders, {
      restricted: vscode.workspace.isTrusted === false,
      sandbox: { home: os.homedir(), probe: this.service.probeSandbox },
    });
    const cannot = this.service.cannotStartHere();
    if (cannot) this.built.model.banners.unshift({ level: 'warning', text: sandboxMissingText(cannot) });
    this.built.model.banners.push(...routingView(this.service).banners);
    return this.built;
  }

  private pushModel(force = false): void {
    const { model } = this.rebuild();
    const sig = JSON.stringify({ ...model, generatedAt: '' });
    if (!force && sig === this.lastModel) return;
    this.lastModel = sig;
    this.post({ type: 'model', model });
    if (this.ready) this.sent = model;
  }

  private pushLog(): void {
    if (!this.ready) return;
    const r = this.tail.poll();
    if (r.reset) this.post({ type: 'log', reset: true, batch: toBatch(this.tail.entries), truncated: this.tail.dropped });
    else if (r.added.length) this.post({ type: 'log', reset: false, batch: toBatch(r.added) });
  }

  private drop(raw: unknown, why: string): void {
    if (this.droppedLines < MAX_DROP_LINES) {
      this.service.channel.warn(`trust panel: dropped a message from the webview (${why}): ${describeMessage(raw)}`);
    } else if (this.droppedLines === MAX_DROP_LINES) {
      this.service.channel.warn(
        'trust panel: more messages from the webview were dropped; no further ones are logged until the panel is reopened',
      );
    }
    this.droppedLines++;
  }

  private async receive(raw: unknown): Promise<void> {
    // A message that names a server is checked against the state as it is now, not as the webview last saw it.
    const names =
      typeof raw === 'object' &&
      raw !== null &&
      ((raw as { type?: unknown }).type === 'action' || (raw as { type?: unknown }).type === 'open');
    if (names) {
      this.service.refresh();
      this.rebuild();
    }
    const v = checkMessage(raw, this.built);
    if (!v.ok) return this.drop(raw, v.why);
    const m = v.message;
    if (m.type === 'ready') {
      this.ready = true;
      this.lastModel = '';
      this.pushModel(true);
      this.tail.poll();
      this.post({ type: 'log', reset: true, batch: toBatch(this.tail.entries), truncated: this.tail.dropped });
      const saved = this.context.workspaceState.get<unknown>(UI_STATE_KEY);
      if (saved) this.post({ type: 'ui', state: sanitizeUiState(saved) });
      return;
    }
    if (m.type === 'state') {
      await this.context.workspaceState.update(UI_STATE_KEY, m.state);
      return;
    }
    const ref: ServerRef = v.ref!;
    if (m.type === 'open') {
      const x = this.service.servers().find((s) => sameRef(refOf(s.folder.folder.uri.fsPath, s.server), ref));
      if (!x) return;
      const pos = new vscode.Position(Math.max(0, x.server.position.line - 1), Math.max(0, x.server.position.column - 1));
      await vscode.window.showTextDocument(vscode.Uri.file(x.server.file), {
        selection: new vscode.Range(pos, pos),
        viewColumn: vscode.ViewColumn.Beside,
        preview: true,
      });
      return;
    }
    if (this.acting) return this.drop(raw, 'another action is in progress');
    this.acting = true;
    let ok = false;
    let text: string;
    try {
      // The palette's command: Approve shows the exact definition (and the diff of a changed server) and asks.
      const result = await vscode.commands.executeCommand<unknown>(COMMAND[m.action], ref);
      ok = m.action === 'reset' ? typeof result === 'number' && result > 0 : result === true;
      const name = v.server!.name;
      text = ok
        ? {
            approve: `Approved ${name}.`,
            reject: `Rejected ${name}.`,
            reset: `Reset ${name}: it is pending again.`,
            update: `Approved the new package of ${name}.`,
          }[m.action]
        : {
            approve: `${name} was not approved.`,
            reject: `${name} was not rejected.`,
            reset: `${name} had no decision to reset.`,
            update: `${name} keeps its approved package.`,
          }[m.action];
    } catch (e) {
      text = `${m.action} failed: ${(e as Error).message}`;
    } finally {
      this.acting = false;
    }
    if (m.action === 'approve' || m.action === 'update') this.panel.reveal(this.panel.viewColumn, false);
    this.pushModel();
    this.post({ type: 'result', action: m.action, key: m.key, ok, text });
    this.pushLog();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (TrustPanel.current === this) TrustPanel.current = undefined;
    if (this.timer) clearInterval(this.timer);
    if (this.pending) clearTimeout(this.pending);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}

/** The serializer that restores the panel after a reload or restart (its command is in ./commands.ts). */
export function registerTrustPanel(context: vscode.ExtensionContext, service: GateService): void {
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      async deserializeWebviewPanel(panel: vscode.WebviewPanel) {
        TrustPanel.revive(panel, context, service);
      },
    }),
    { dispose: () => TrustPanel.current?.dispose() },
  );
}
