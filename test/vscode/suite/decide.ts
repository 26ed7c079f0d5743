// Deciding in a review document as a person would (src/vscode/decision.ts): wait for the document that waits for
// a decision, read its lenses as the editor shows them (vscode.executeCodeLensProvider), press Enter, and click a
// lens (run its command with its arguments, which is what a click does).
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { sleep, waitFor } from './wait';

export interface Waiting {
  uri: vscode.Uri;
  text: string;
  /** The lenses' titles at the top, in order (the same ones are below the last line). */
  titles: string[];
  click(titlePart: RegExp): Promise<void>;
}

/** The review document waiting for a decision now (the newest), with its lenses. */
export async function waitingDecision(api: McpGateApi): Promise<Waiting> {
  const key = await waitFor('a review document waiting for a decision', () => api.decisions.pending().at(-1));
  const uri = vscode.Uri.parse(key);
  const lenses = await waitFor('its lenses', async () => {
    const l = ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? []).filter(
      (c) => c.command?.command === 'mcpGate.decide',
    );
    return l.length > 0 && l;
  });
  const doc = await vscode.workspace.openTextDocument(uri);
  const top = lenses.filter((l) => l.range.start.line === 0);
  const bottom = lenses.filter((l) => l.range.start.line === doc.lineCount - 1);
  assert.deepEqual(
    bottom.map((l) => l.command!.title),
    top.map((l) => l.command!.title),
    'the same choices below the last line',
  );
  return {
    uri,
    text: doc.getText(),
    titles: top.map((l) => l.command!.title),
    async click(titlePart) {
      const lens = top.find((l) => titlePart.test(l.command!.title));
      assert.ok(lens, `a lens ${titlePart} among ${top.map((l) => l.command!.title).join(' | ')}`);
      await vscode.commands.executeCommand(lens.command!.command, ...((lens.command!.arguments ?? []) as unknown[]));
    },
  };
}

/**
 * Enter, everywhere a key press could land: in the editor in front (the review is read-only: it types nothing),
 * on a quick pick (none is open), and on a notification's primary button if one had focus. Then a second in which
 * anything could have happened.
 */
export async function pressEnter(): Promise<void> {
  await Promise.resolve(vscode.commands.executeCommand('type', { text: '\n' })).catch(() => undefined);
  await Promise.resolve(vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem')).catch(() => undefined);
  await sleep(1000);
}

/** Closes the review document's tab (what "Not now" also is). */
export async function closeTab(uri: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString());
  await vscode.window.tabGroups.close(tabs);
}

/** Whether a promise has settled within a moment (a decision that must still be waiting has not). */
export async function settled(p: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    sleep(50).then(() => false),
  ]);
}

export interface Modal {
  message: string;
  detail: string;
  /** In order: the first is the one Enter presses. */
  buttons: string[];
}

/**
 * Stands in for the modal the Approve lens opens (api.prompts.modal, a real VS Code modal otherwise): records what
 * it shows and answers as `answer` says (`'enter'`: the first button, what Enter presses; `'approve'`: the button
 * that starts with "Approve"). `restore()` puts the real one back.
 */
export function answerModal(api: McpGateApi, answer: 'enter' | 'approve'): { shown: Modal[]; restore(): void } {
  const real = api.prompts.modal;
  const shown: Modal[] = [];
  api.prompts.modal = async (message, detail, buttons) => {
    shown.push({ message, detail, buttons });
    return answer === 'enter' ? buttons[0] : buttons.find((b) => b.startsWith('Approve'));
  };
  return { shown, restore: () => (api.prompts.modal = real) };
}
