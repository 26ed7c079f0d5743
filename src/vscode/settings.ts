// Reads MCP Gate's settings from user (application) scope only. Every key that grants something is declared
// with "scope": "application" in the manifest, and is read here through inspect().globalValue as well, so a
// workspace's .vscode/settings.json can never supply it.
import * as vscode from 'vscode';
import { USER_ONLY_KEYS } from '../trust/sources/declarations';

export const SECTION = 'mcpGate';
/** The keys read from user settings only: the one list in src/trust/sources/declarations.ts. */
export const GRANTING_KEYS = USER_ONLY_KEYS;
export const SETTINGS_LABEL = 'VS Code user settings (mcpGate.*)';

/** The user layer in MCP Gate's configuration format, for the gate (`userSettings`). */
export function readUserSettings(): { label: string; value: Record<string, unknown> } {
  const c = vscode.workspace.getConfiguration(SECTION);
  const value: Record<string, unknown> = {};
  for (const k of GRANTING_KEYS) {
    const v = c.inspect(k)?.globalValue;
    if (v !== undefined) value[k] = v;
  }
  return { label: SETTINGS_LABEL, value };
}

/**
 * Appends a rule to the user's `mcpGate.rules` (the "Always" answer to an ask), exactly as given: `action`,
 * `decision`, and `project` when the rule is for a repository server (absent, it would be for user-scope servers).
 */
export async function appendUserRule(rule: { action: string; decision: string; project?: string }): Promise<void> {
  const c = vscode.workspace.getConfiguration(SECTION);
  const current = (c.inspect<unknown[]>('rules')?.globalValue ?? []) as unknown[];
  const written = { action: rule.action, decision: rule.decision, ...(rule.project !== undefined ? { project: rule.project } : {}) };
  await c.update('rules', [...current, written], vscode.ConfigurationTarget.Global);
}
