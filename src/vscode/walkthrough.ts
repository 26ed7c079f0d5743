// The "Get Started with MCP Gate" walkthrough (package.json contributes.walkthroughs, id firstRun) follows the
// person: a step is ticked once it is done — routed, a server approved, a tool called through the gate — not when
// its command is merely run. Each such step completes on a context key (`onContext:`, set by src/vscode/menus.ts).
// VS Code's walkthrough service only ticks on a key that *changes* to true after it registered the walkthrough
// (a key already true then is recorded as seen and never ticks that session; it registers an extension's
// walkthrough up to 5 s after start, measured in 1.112 and 1.139): so a step done before that — a server approved
// with the CLI, a routing made in an earlier window — is also marked with the workbench's own
// `welcome.markStepComplete` (the command behind the walkthrough's "Mark Done"; it keeps the mark even before the
// walkthrough is registered). Where that command is missing, the completion events still tick what happens later.
import * as vscode from 'vscode';
import { CONTEXT_KEYS, type ContextKey } from './command-ids';

export const WALKTHROUGH_ID = 'mcp-gate.mcp-gate#firstRun';

/** The step each key completes (its completionEvents in package.json say the same). */
export const STEP_OF_KEY: Partial<Record<ContextKey, string>> = {
  [CONTEXT_KEYS.routed]: 'route',
  [CONTEXT_KEYS.hasApproved]: 'approve',
  [CONTEXT_KEYS.triedTool]: 'try',
};

const tried = new vscode.EventEmitter<void>();
let triedOnce = false;
/** A tool was called through the gate (Try a Tool…): the walkthrough's last step is done. */
export const onDidTryTool = tried.event;
export const hasTriedTool = (): boolean => triedOnce;
export function markTried(): void {
  if (triedOnce) return;
  triedOnce = true;
  tried.fire();
}

const marked = new Set<string>();
/** Ticks the steps whose keys are true now (once a window). */
export function tickSteps(values: Partial<Record<ContextKey, boolean>>): void {
  for (const [key, step] of Object.entries(STEP_OF_KEY)) {
    if (!values[key as ContextKey] || marked.has(step)) continue;
    marked.add(step);
    void Promise.resolve(vscode.commands.executeCommand('welcome.markStepComplete', `${WALKTHROUGH_ID}#${step}`)).catch(() => {});
  }
}
