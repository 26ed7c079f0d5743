// What every view of the panel shares: the UI state (tab, filters, what is expanded, scroll), the last model the
// host sent, and the way to post to the host. The UI state is kept two ways: the webview's own state
// (getState/setState, restored by VS Code with the panel) and a copy in the host (workspaceState, written at once),
// because VS Code for the web may restore a webview state older than the last setState after a quick reload. The
// newer copy wins.
import type { PanelModel, UiState, WebviewMessage } from '../common/protocol';
import { sanitizeUiState } from '../common/ui-state';

export interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: UiState): void;
}

export class PanelContext {
  ui: UiState;
  model: PanelModel | undefined;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private hostTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly vscode: VsCodeApi) {
    this.ui = sanitizeUiState(vscode.getState());
  }

  post(m: WebviewMessage): void {
    this.vscode.postMessage(m);
  }

  /** Keeps `ui` (now stamped) in the webview's state and, a little later, in the host's copy. */
  save(): void {
    this.ui.savedAt = Date.now();
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = undefined;
      this.vscode.setState(this.ui);
    }, 100);
    this.hostTimer ??= setTimeout(() => {
      this.hostTimer = undefined;
      this.post({ type: 'state', state: this.ui });
    }, 300);
  }
}
