// Every question the extension puts to a person, in one replaceable object: a modal confirmation, the choice
// that approves a changed server (a quick pick that Enter alone cannot approve), the answer to a policy `ask`,
// and a password input. The defaults are VS Code's dialogs; tests running inside VS Code replace
// them through the extension's API (a modal cannot be clicked from the extension host).
import * as vscode from 'vscode';
import type { Asker } from '../policy/decide';
import { vscodeAsker } from './asker';

export interface Prompts {
  /** A modal question with one affirmative action; true only when that action was chosen. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
  /** A modal question with several actions; the one chosen, or undefined when dismissed. */
  choose(message: string, detail: string, actions: string[]): Promise<string | undefined>;
  /**
   * Approving a changed server: a quick pick whose first (active) item keeps it waiting, so Enter alone never
   * approves; the approving item must be chosen. True only when it was. `keep`: that first item's words, when
   * not keeping it waiting (an update keeps the approved package).
   */
  confirmChange(title: string, approve: string, detail: string, keep?: { label: string; detail: string }): Promise<boolean>;
  ask: Asker;
  secretValue(name: string): Promise<string | undefined>;
}

export const prompts: Prompts = {
  async confirm(message, detail, action) {
    return (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action;
  },
  async choose(message, detail, actions) {
    return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
  },
  async confirmChange(title, approve, detail, keepWords) {
    const keep = { label: `$(circle-slash) ${keepWords?.label ?? vscode.l10n.t('Not now: keep it waiting')}`, detail: keepWords?.detail ?? vscode.l10n.t('Nothing is recorded; it does not run.'), yes: false };
    const yes = { label: `$(check) ${approve}`, detail, yes: true };
    const chosen = await vscode.window.showQuickPick([keep, yes], { title, placeHolder: vscode.l10n.t('Read the changes in the diff editor, then choose'), ignoreFocusOut: true });
    return chosen?.yes === true;
  },
  ask: (q) => vscodeAsker(q),
  async secretValue(name) {
    return vscode.window.showInputBox({ prompt: vscode.l10n.t('Value of {0} (stored in VS Code\'s SecretStorage, never in a file)', name), password: true, ignoreFocusOut: true });
  },
};
