// Words a person reads in VS Code: the extension's wording for the core's next steps (VS Code commands, not CLI
// flags), counts with their plural forms and relative times, all through vscode.l10n.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { relativeTime as relative, whenText } from '../text/time';
import { escapeText } from '../text/escape';
import type { FrontEndWords } from '../trust/words';

export const VSCODE_WORDS: FrontEndWords = {
  review: () => vscode.l10n.t('review it with MCP Gate: Approve… or in the trust panel'),
  reviewAll: vscode.l10n.t('review each one in MCP Gate: Open Trust Panel, then approve or reject it'),
  chooseSource: vscode.l10n.t('choose the entry from the list'),
  storeOutside: vscode.l10n.t("open a folder that does not contain VS Code's own storage"),
  setSecret: () => vscode.l10n.t('set it with MCP Gate: Set Secret…'),
  doctor: vscode.l10n.t('MCP Gate: Doctor'),
  showGrants: () => vscode.l10n.t('MCP Gate: Show Definition shows them'),
  resetServer: () => vscode.l10n.t('MCP Gate: Reset Approvals… returns it to pending'),
  showTools: () => vscode.l10n.t('the trust panel'),
};

/** "1 server" / "3 servers" (each form its own l10n message, so a translation can say it its own way). */
export function serverCount(n: number): string {
  return n === 1 ? vscode.l10n.t('1 server') : vscode.l10n.t('{0} servers', n);
}

/** "1 repository server waits for your review" / "3 repository servers wait for your review". */
export function waitingText(n: number): string {
  if (n === 0) return vscode.l10n.t('No repository server waits for review');
  return n === 1
    ? vscode.l10n.t('1 repository server waits for your review')
    : vscode.l10n.t('{0} repository servers wait for your review', n);
}

/** "3 minutes ago", in VS Code's display language. */
export function relativeTime(iso: string, now = Date.now()): string {
  return relative(iso, now, vscode.env.language || 'en');
}

/** "3 minutes ago (2026-12-01 19:35:53 UTC)": the one time format of plain text (src/text/time.ts). */
export function timeText(iso: string, now = Date.now()): string {
  return whenText(iso, now, vscode.env.language || 'en');
}

/** A file as a person of this workspace knows it: relative to its folder when inside it. */
export function workspacePath(file: string, folder: string): string {
  const rel = path.relative(folder, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** A digest as read: "sha256:0123456789ab…" (the full one goes into hovers and copies). */
export function shortDigest(d: string): string {
  return d.length > 19 ? `${d.slice(0, 19)}…` : d;
}

/** What the window says when the sandbox cannot start here: which servers, why, and the fix (one sentence, one place). */
export function sandboxMissingText(c: { reason: string; fix: string; install?: string; servers: { server: { name: string } }[] }): string {
  const names = c.servers.map((s) => `"${escapeText(s.server.name)}"`).join(', ');
  return vscode.l10n.t(
    'Repository servers cannot start on this machine ({0}): {1}. Fix: {2} (MCP Gate: Install the Sandbox…).',
    names,
    escapeText(c.reason),
    escapeText(c.install ?? c.fix),
  );
}
