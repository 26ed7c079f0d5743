// The decision, in the view that shows what is decided: CodeLens at the top and at the end of a review document
// (a read-only virtual document of the `mcp-gate` scheme, so the person scrolls and searches it to its last line
// with nothing over it). The safe choice ("Not now") is always the first lens and what every other way out means:
// closing the document's tab, the Cancel of the notification that says where the choices are. Enter types nothing
// in a read-only document and no modal or quick pick holds focus, so no key press approves: a lens has to be
// clicked (or chosen from "Show CodeLens Commands For Current Line"). Used by ./prompts.ts.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** The internal command a decision lens runs (not contributed: it is not in the palette). */
export const DECIDE_COMMAND = 'mcpGate.decide';

export interface Choice {
  id: string;
  /** The lens's title (codicons allowed). */
  title: string;
  tooltip?: string;
}

interface Open {
  token: string;
  uri: string;
  choices: Choice[];
  resolve(id: string | undefined): void;
}

function showing(uri: string): boolean {
  return vscode.window.tabGroups.all.some((g) =>
    g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri),
  );
}

export class Decisions implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly open = new Map<string, Open>();
  private readonly subs: vscode.Disposable[] = [];

  /** Registers the lens provider, the decide command and the watch on closed tabs. */
  register(): vscode.Disposable {
    this.subs.push(
      vscode.languages.registerCodeLensProvider({ scheme: 'mcp-gate' }, this),
      vscode.commands.registerCommand(DECIDE_COMMAND, (token: unknown, id: unknown) => this.decide(token, id)),
      // The review's tab closed before a choice: the safe one.
      vscode.window.tabGroups.onDidChangeTabs(() => {
        for (const o of [...this.open.values()]) if (!showing(o.uri)) this.finish(o, undefined);
      }),
    );
    return this;
  }

  /**
   * Shows `choices` as lenses above the first and the last line of the document `uri` (which must be open) and
   * resolves with the id of the one clicked, or undefined (the safe choice) when its tab is closed, the notification
   * is cancelled, or another decision replaces it on the same document. `notice`: the notification's words.
   */
  ask(uri: vscode.Uri, choices: Choice[], notice?: string): Promise<string | undefined> {
    const key = uri.toString();
    const before = this.open.get(key);
    if (before) this.finish(before, undefined);
    if (!showing(key)) return Promise.resolve(undefined);
    return new Promise<string | undefined>((resolve) => {
      const o: Open = { token: randomBytes(12).toString('hex'), uri: key, choices, resolve };
      this.open.set(key, o);
      this.changed.fire();
      if (notice) {
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: notice, cancellable: true },
          (_p, cancel) =>
            new Promise<void>((done) => {
              cancel.onCancellationRequested(() => this.finish(o, undefined));
              const wrapped = o.resolve;
              o.resolve = (id) => {
                wrapped(id);
                done();
              };
              if (this.open.get(key) !== o) done();
            }),
        );
      }
    });
  }

  /** The documents waiting for a decision now (for tests: what a person would see lenses on). */
  pending(): string[] {
    return [...this.open.keys()];
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const o = this.open.get(doc.uri.toString());
    if (!o) return [];
    const lines = [...new Set([0, Math.max(0, doc.lineCount - 1)])];
    return lines.flatMap((line) =>
      o.choices.map(
        (c) =>
          new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
            title: c.title,
            tooltip: c.tooltip,
            command: DECIDE_COMMAND,
            arguments: [o.token, c.id],
          }),
      ),
    );
  }

  private decide(token: unknown, id: unknown): boolean {
    const o = [...this.open.values()].find((x) => x.token === token);
    if (!o || typeof id !== 'string' || !o.choices.some((c) => c.id === id)) return false;
    this.finish(o, id);
    return true;
  }

  private finish(o: Open, id: string | undefined): void {
    if (this.open.get(o.uri) !== o) return;
    this.open.delete(o.uri);
    this.changed.fire();
    o.resolve(id);
  }

  dispose(): void {
    for (const o of [...this.open.values()]) this.finish(o, undefined);
    for (const s of this.subs.splice(0)) s.dispose();
    this.changed.dispose();
  }
}

/** The one instance, registered by extension.ts. */
export const decisions = new Decisions();
