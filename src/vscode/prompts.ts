// Every question the extension puts to a person, in one replaceable object. Approving (a pending server, a change,
// a package update) and the routing step are decided in the view that shows what is decided (`view`: a review
// document, ./review.ts) through lenses at its top and end (./decision.ts), whose first choice is the safe one and
// which no key press chooses: Enter never approves. An approval is one deliberate act: its lens names the server
// and the digest it approves, and clicking it opens a modal that names them again, whose first button (the one
// Enter presses) is "Not now" and whose second is the Approve button. Rejecting (nothing runs) is a modal; a policy `ask` is the
// asker's modal; a secret is a password input. Tests inside VS Code replace these methods through the extension's
// API, or run the real ones and click the lenses (run their commands) as a person would.
import * as vscode from 'vscode';
import type { Asker } from '../policy/decide';
import { vscodeAsker } from './asker';
import { decisions } from './decision';
import { literalIcons } from '../text/escape';

export interface Prompts {
  /**
   * A question with one affirmative action; true only when that action was chosen. With `view`: decided in that
   * document ("Not now" first, then the action); without: a modal (only for actions that grant nothing: Reject).
   */
  confirm(message: string, detail: string, action: string, view?: vscode.Uri): Promise<boolean>;
  /** A question with several actions, decided in `view` ("Not now" first); the one chosen, or undefined. */
  choose(message: string, detail: string, actions: string[], view?: vscode.Uri): Promise<string | undefined>;
  /**
   * Approving a changed server (or a package update), decided in `view` (the review's decision document, beside the
   * diff): the first choice keeps it waiting. True only when the approving one was chosen. `keep`: that first
   * choice's words, when not keeping it waiting (an update keeps the approved package).
   */
  confirmChange(
    title: string,
    approve: string,
    detail: string,
    keep?: { label: string; detail: string },
    view?: vscode.Uri,
  ): Promise<boolean>;
  /**
   * A modal with these buttons: the first is the one Enter presses (never one that grants), VS Code adds Cancel.
   * The button chosen, or undefined (Cancel, Escape). Tests replace it to read it and answer it.
   */
  modal(message: string, detail: string, buttons: string[]): Promise<string | undefined>;
  ask: Asker;
  secretValue(name: string): Promise<string | undefined>;
}

const NOT_NOW = () => ({
  label: vscode.l10n.t('Not now: keep it waiting'),
  detail: vscode.l10n.t('Nothing is recorded; it does not run.'),
});

/** The lens choices: the safe one first, then the actions; the id of each is its position ("0": safe). */
async function decide(
  view: vscode.Uri,
  notice: string,
  safe: { label: string; detail: string },
  actions: { title: string; tooltip: string }[],
): Promise<number> {
  // A lens title renders icon syntax: a server's name in it ("$(check) …") is made literal, so only our icons show.
  const literal = literalIcons;
  const chosen = await decisions.ask(
    view,
    [
      { id: '0', title: `$(circle-slash) ${literal(safe.label)}`, tooltip: safe.detail },
      ...actions.map((a, i) => ({ id: String(i + 1), title: `$(check) ${literal(a.title)}`, tooltip: a.tooltip })),
    ],
    notice,
  );
  return chosen === undefined ? 0 : Number(chosen);
}

/**
 * After the Approve lens: the modal that names what is approved (`action`: the server and the digest), "Not now"
 * its first button (Enter), the Approve button second. True only when that button was chosen.
 */
async function deliberately(message: string, detail: string, action: string, safe: string): Promise<boolean> {
  return (await prompts.modal(message, detail, [safe, action])) === action;
}

const where = () => vscode.l10n.t('the choices are above its first line and below its last; closing it or Cancel means Not now');

export const prompts: Prompts = {
  async confirm(message, detail, action, view) {
    if (!view) return (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action;
    // No notification: the review is the editor in front, its choices on its first line, and nothing covers them.
    const lens = await decide(view, '', NOT_NOW(), [{ title: action, tooltip: detail }]);
    return lens === 1 && deliberately(message, detail, action, NOT_NOW().label);
  },
  async choose(message, detail, actions, view) {
    if (!view) return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
    const i = await decide(
      view,
      '',
      { label: vscode.l10n.t('Not now'), detail: vscode.l10n.t('Nothing is changed.') },
      actions.map((a) => ({ title: a, tooltip: detail })),
    );
    return i > 0 ? actions[i - 1] : undefined;
  },
  async confirmChange(title, approve, detail, keepWords, view) {
    if (!view) return false; // no view, nothing read: nothing approved
    const safe = keepWords ?? NOT_NOW();
    const lens = await decide(
      view,
      `MCP Gate: ${title}. ${vscode.l10n.t('Read the code diff, then decide in the review document: {0}.', where())}`,
      safe,
      [{ title: approve, tooltip: detail }],
    );
    return lens === 1 && deliberately(`${title}. ${approve}?`, detail, approve, safe.label);
  },
  async modal(message, detail, buttons) {
    return vscode.window.showWarningMessage(message, { modal: true, detail }, ...buttons);
  },
  ask: (q) => vscodeAsker(q),
  async secretValue(name) {
    return vscode.window.showInputBox({
      prompt: vscode.l10n.t("Value of {0} (stored in VS Code's SecretStorage, never in a file)", name),
      password: true,
      ignoreFocusOut: true,
    });
  },
};
