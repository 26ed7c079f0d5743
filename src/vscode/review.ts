// Approving is reading: before a decision, the server's definition opens as a read-only document — and for a
// changed server, what was approved against what is declared now opens in VS Code's own diff editor, one diff for
// the definition and one per changed file (or tool list, or package lock). An update of a pinned package opens
// the same way: the package (version, integrity, dependencies) approved against the new lock, and one diff per
// changed file of the package. Every document is a virtual one of the `mcp-gate` scheme (masked, read-only).
// After the decision the review's tabs close and focus returns where it was.
import * as vscode from 'vscode';
import { defaultMasker } from '../policy/mask';
import { changeDocuments, type ChangeDocument } from '../report/change-text';
import type { MinAge } from '../report/lock-text';
import type { NpmLock } from '../trust/packages/npm-lock';
import type { ServerReport } from '../trust/report';

export const SCHEME = 'mcp-gate';

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

function tabUris(tab: vscode.Tab): vscode.Uri[] {
  const i = tab.input;
  if (i instanceof vscode.TabInputTextDiff) return [i.original, i.modified];
  if (i instanceof vscode.TabInputText) return [i.uri];
  return [];
}

/** One review of one server: the documents it opened, closed together when the decision is made. */
export class Review {
  private readonly prefix = `/review-${++reviews}/`;
  private readonly focus: Focus;

  constructor(private readonly docs: DocumentProvider) {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const uri = tab && tabUris(tab)[0];
    this.focus = uri && uri.scheme !== SCHEME ? { uri, column: tab.group.viewColumn } : {};
  }

  /**
   * Opens the definition (a new server) or the diffs (a changed one); `shown` is the package lock the approval
   * would record (in the definition, or its own diff when it is not the approved one). Returns how many diffs opened.
   */
  async open(s: ServerReport, definitionText: string, shown?: { lock?: NpmLock; minAge?: MinAge }): Promise<number> {
    const changes = changeDocuments(s, shown);
    if (!changes.length) {
      const uri = this.docs.show(`${this.dir(s)}/definition.txt`, definitionText);
      await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: false });
      return 0;
    }
    return this.diffs(s, changes, vscode.l10n.t('approved ↔ now'));
  }

  /** Opens one diff per document, the first in front and each other one a tab beside it. Returns how many. */
  async diffs(s: ServerReport, changes: readonly ChangeDocument[], sides: string): Promise<number> {
    const dir = this.dir(s);
    // The first diff is opened last, so it is the one in front.
    const ordered = [...changes.slice(1), changes[0]];
    for (const c of ordered) {
      const name = part(c.label);
      const left = this.docs.show(`${dir}/approved/${name}`, c.approved);
      const right = this.docs.show(`${dir}/now/${name}`, c.now);
      const title = vscode.l10n.t('{0}: {1} ({2})', s.name, c.label, sides);
      await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: false, preserveFocus: false });
    }
    return changes.length;
  }

  private dir(s: ServerReport): string {
    return `${this.prefix}${part(s.name)} — ${part(s.source)}`;
  }

  /** Closes every tab of this review and returns focus where it was before it began. */
  async close(): Promise<void> {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => tabUris(t).some((u) => u.scheme === SCHEME && u.path.startsWith(this.prefix)));
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    this.docs.forget(this.prefix);
    if (this.focus.uri) {
      await vscode.window.showTextDocument(this.focus.uri, { viewColumn: this.focus.column, preserveFocus: false, preview: false }).then(undefined, () => undefined);
    }
  }
}
