// Approving is reading: before a decision, what is decided opens as a read-only review document (a virtual one of
// the `mcp-gate` scheme: masked, scrolled and searched like any editor, nothing over it), and the decision is made
// in that document (./decision.ts: lenses at its top and end, the safe one first). For a changed server the code
// comes first: VS Code's multi-file diff editor (`vscode.changes`) opens in front with every changed file, approved
// (the text kept with the approval) against now, then the definition, the tool list and the package lock; the
// review document with the decision is the tab beside it. An update of a pinned package opens the same way (the
// package's changed files, then the package: version, integrity, dependencies). After the decision the review's
// tabs close and focus returns where it was. Every review document is in the MCP Gate language mode (a side named
// mcp.json is not checked as JSON), so none of them adds to Problems.
import * as vscode from 'vscode';
import { defaultMasker } from '../policy/mask';
import type { ChangeDocument } from '../report/change-text';

export const SCHEME = 'mcp-gate';
/** The language mode of every `mcp-gate` document (package.json contributes it, with syntaxes/mcp-gate.tmLanguage.json). */
export const LANGUAGE = 'mcp-gate';

/**
 * Opens an `mcp-gate` document in the "MCP Gate" language mode (headings, digests, quoted values and log events
 * coloured; the status bar names it) and shows it. The mode is set before the tab opens, so no tab closes for it.
 */
export async function showDocument(uri: vscode.Uri, options: vscode.TextDocumentShowOptions): Promise<vscode.TextEditor> {
  let doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== LANGUAGE) doc = await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE);
  return vscode.window.showTextDocument(doc, options);
}

/** Sets an `mcp-gate` document's language mode to MCP Gate's own (no language's checks, so nothing in Problems). */
async function reviewLanguage(uri: vscode.Uri): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== LANGUAGE) await vscode.languages.setTextDocumentLanguage(doc, LANGUAGE);
}

/** The read-only documents of the `mcp-gate` scheme: definitions, reviews, reports. Every text is masked. */
export class DocumentProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly texts = new Map<string, string>();

  show(path: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: SCHEME, path });
    this.texts.set(uri.toString(), defaultMasker.mask(text));
    this.changed.fire(uri);
    return uri;
  }

  forget(prefix: string): void {
    for (const k of [...this.texts.keys()]) if (vscode.Uri.parse(k).path.startsWith(prefix)) this.texts.delete(k);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }
}

/** A file-name-safe part of a virtual path (a source like .vscode/mcp.json has slashes). */
function part(s: string): string {
  return s.replace(/[/\\]/g, '∕');
}

let reviews = 0;

/** Where focus was when a review began: the active tab's editor, if it was a text editor. */
interface Focus {
  uri?: vscode.Uri;
  column?: vscode.ViewColumn;
}

/** VS Code's multi-file diff tab input (vscode.TabInputTextMultiDiff: in 1.112 and 1.139, newer than @types/vscode here). */
export interface MultiDiffInput {
  textDiffs: readonly { original: vscode.Uri; modified: vscode.Uri }[];
}

export function multiDiffOf(tab: vscode.Tab): MultiDiffInput | undefined {
  const C = (vscode as unknown as { TabInputTextMultiDiff?: new (...a: never[]) => MultiDiffInput }).TabInputTextMultiDiff;
  return C && tab.input instanceof C ? (tab.input as MultiDiffInput) : undefined;
}

function tabUris(tab: vscode.Tab): vscode.Uri[] {
  const i = tab.input;
  if (i instanceof vscode.TabInputTextDiff) return [i.original, i.modified];
  if (i instanceof vscode.TabInputText) return [i.uri];
  const m = multiDiffOf(tab);
  if (m) return m.textDiffs.flatMap((d) => [d.original, d.modified]);
  return [];
}

/** Labels of what a change compares besides the files: they come after the code in the multi-file diff. */
const META = new Set(['definition', 'tools', 'package']);

/** One review of one server: the documents it opened, closed together when the decision is made. */
export class Review {
  private readonly prefix = `/review-${++reviews}/`;
  private readonly focus: Focus;
  private readonly titles: string[] = [];

  constructor(private readonly docs: DocumentProvider) {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const uri = tab && tabUris(tab)[0];
    this.focus = uri && uri.scheme !== SCHEME ? { uri, column: tab.group.viewColumn } : {};
  }

  /**
   * Opens the review document (what is decided, in full; the decision's lenses go on it) and returns its URI.
   * `name`: its file name (the tab's label). `background`: opened without taking focus (a diff goes in front next).
   */
  async document(s: { name: string; source: string }, name: string, text: string, background = false): Promise<vscode.Uri> {
    const uri = this.docs.show(`${this.dir(s)}/${part(name)}`, text);
    await showDocument(uri, { preview: false, preserveFocus: background });
    return uri;
  }

  /**
   * A changed server (or an update): the multi-file diff editor in front, every changed file first (approved ↔ now,
   * from the texts kept with the approval), then the definition, tool list and package lock. Returns how many.
   */
  async diffs(s: { name: string; source: string }, changes: readonly ChangeDocument[], sides: string): Promise<number> {
    if (!changes.length) return 0;
    const dir = this.dir(s);
    const ordered = [...changes.filter((c) => !META.has(c.label)), ...changes.filter((c) => META.has(c.label))];
    const resources = ordered.map((c) => {
      const name = part(c.label);
      const left = this.docs.show(`${dir}/approved/${name}`, c.approved);
      const right = this.docs.show(`${dir}/now/${name}`, c.now);
      return [right, left, right] as const;
    });
    // In the MCP Gate language mode before the diff opens: by its file name (mcp.json, x.ts) a side would be checked
    // by that language's extension, and a side that is no code ("(absent)", a digest) would fill Problems.
    await Promise.all(resources.flatMap(([, l, r]) => [reviewLanguage(l), reviewLanguage(r)]));
    // VS Code's tab label is this title, with " (N files)" after it.
    const title = vscode.l10n.t('{0}: what changed ({1})', s.name, sides);
    this.titles.push(title);
    await vscode.commands.executeCommand('vscode.changes', title, resources);
    return changes.length;
  }

  /** The review document's title line for a changed server: what changed, where the diff is. */
  static changedHeading(s: { name: string }, changes: readonly ChangeDocument[], sides: string): string {
    const files = changes.filter((c) => !META.has(c.label)).map((c) => c.label);
    const other = changes.filter((c) => META.has(c.label)).map((c) => c.label);
    return vscode.l10n.t(
      'What changed (the tab "{0}"): {1}.',
      vscode.l10n.t('{0}: what changed ({1})', s.name, sides),
      [...files, ...other].join(', '),
    );
  }

  private dir(s: { name: string; source: string }): string {
    return `${this.prefix}${part(s.name)} — ${part(s.source)}`;
  }

  private mine(t: vscode.Tab): boolean {
    return (
      tabUris(t).some((u) => u.scheme === SCHEME && u.path.startsWith(this.prefix)) ||
      (!!multiDiffOf(t) && this.titles.some((x) => t.label.startsWith(x)))
    );
  }

  /** Closes every tab of this review and returns focus where it was before it began. */
  async close(): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => this.mine(t));
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    this.docs.forget(this.prefix);
    if (this.focus.uri) {
      await vscode.window
        .showTextDocument(this.focus.uri, { viewColumn: this.focus.column, preserveFocus: false, preview: false })
        .then(undefined, () => undefined);
    }
  }
}
