// `ask` decisions where a person can answer: a modal that names the action and the rule, with Deny first (the
// button Enter presses: Enter never allows anything), then Allow once / Always (writes the narrowest allow rule to the user's settings — for a repository server it carries that
// server's "project", so it grants nothing to a server of the same name elsewhere) / Deny.
import * as vscode from 'vscode';
import type { Asker } from '../policy/decide';
import { ruleText } from '../policy/rules';
import { appendUserRule } from './settings';

export const vscodeAsker: Asker = async (q) => {
  const once = vscode.l10n.t('Allow once');
  const always = vscode.l10n.t('Always');
  const deny = vscode.l10n.t('Deny');
  const answer = await vscode.window.showWarningMessage(
    vscode.l10n.t('MCP Gate: allow {0}?', q.action),
    {
      modal: true,
      detail: vscode.l10n.t(
        'The rule {0} says ask. "Always" adds {1} to your user settings (mcpGate.rules).',
        ruleText(q.rule),
        ruleText(q.permittedBy),
      ),
    },
    deny,
    once,
    always,
  );
  if (answer === once) return 'once';
  if (answer === always) {
    await appendUserRule(q.permittedBy);
    return 'always';
  }
  return 'deny';
};
