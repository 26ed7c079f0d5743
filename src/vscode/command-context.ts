// What every palette command works with (./commands.ts): the context extension.ts wires, a server of a folder
// (Entry), and the small steps each command shares — finding or picking the server it acts on, what the store
// knows of it (grants, the file the load guard refused, the workspace as approved), and saying an error.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { serverText, type GrantsContext } from '../report/render';
import { refusedFileSides } from '../trust/approval/diff';
import { loadManifest, type WorkspaceManifest } from '../trust/approval/workspace-manifest';
import { escapeLabel } from '../text/escape';
import type { ServerReport } from '../trust/report';
import { asRef, refOf as refIn, sameRef, type ServerRef } from '../trust/approval/server-ref';
import { STATE_CODICON, stateWords } from '../trust/approval/states';
import type { GatewayProvider } from './gateway-provider';
import type { Prompts } from './prompts';
import { showDocument, type DocumentProvider } from './review';
import type { FolderState, GateService } from './service';
import { relativeTime, VSCODE_WORDS, workspacePath } from './words';

/** What every command works with. */
export interface Ctx {
  context: vscode.ExtensionContext;
  service: GateService;
  docs: DocumentProvider;
  prompts: Prompts;
  /** After a decision: VS Code asks the gateway provider for its definitions again. */
  decided(): void;
  /** The chat gateway's provider (absent where VS Code has no MCP API): "Try a Tool…" calls through it. */
  gateway?: GatewayProvider;
}

export type Entry = { folder: FolderState; server: ServerReport };

export function refOf(x: Entry): ServerRef {
  return refIn(x.folder.folder.uri.fsPath, x.server);
}

export function find(ctx: Ctx, ref: ServerRef): Entry | undefined {
  return ctx.service.servers().find((x) => sameRef(refOf(x), ref));
}

/** A quick-pick row: the state's codicon and name; state, folder and source; the reason. */
export function item(ctx: Ctx, x: Entry) {
  const s = x.server;
  const multi = ctx.service.folders().length > 1;
  const decided = s.record ? ` · ${vscode.l10n.t('decided {0}', relativeTime(s.record.decidedAt))}` : '';
  return {
    label: `$(${STATE_CODICON[s.state]}) ${escapeLabel(s.name)}`,
    description: `${vscode.l10n.t(stateWords(s))}${multi ? ` · ${escapeLabel(x.folder.folder.name)}` : ''} · ${escapeLabel(s.source)}${decided}`,
    detail: escapeLabel(s.reason),
    item: x,
  };
}

export async function pick(ctx: Ctx, filter: (s: ServerReport) => boolean, placeHolder: string): Promise<Entry | undefined> {
  const items = ctx.service
    .servers()
    .filter((x) => filter(x.server))
    .map((x) => item(ctx, x));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: no server to choose from.'));
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder, matchOnDescription: true }))?.item;
}

/** The server a command is about: the one its argument names, or the one a person picks. */
export async function target(
  ctx: Ctx,
  arg: unknown,
  filter: (s: ServerReport) => boolean,
  placeHolder: string,
): Promise<Entry | undefined> {
  const ref = asRef(arg);
  return ref ? find(ctx, ref) : pick(ctx, filter, placeHolder);
}

/** The grants preview's context: the folder's project (real path) and the user's policy now. */
export function grantsOf(ctx: Ctx, x: Entry): GrantsContext {
  return {
    project: x.folder.report?.project ?? x.folder.folder.uri.fsPath,
    policy: ctx.service.policy(x.folder),
    words: VSCODE_WORDS,
    home: os.homedir(),
    sandbox: ctx.service.probeSandbox(),
    storeDir: ctx.service.storeDir,
  };
}

/** The file the load guard refused for this server, both sides as text, when there is one. */
export function refusedOf(ctx: Ctx, x: Entry): ReturnType<typeof refusedFileSides> {
  const r = x.server.record;
  return r?.guardRefused ? refusedFileSides(ctx.service.storeDir, x.folder.report?.project ?? x.folder.folder.uri.fsPath, r) : undefined;
}

/** The record of the workspace as this server's approval saw it (undefined when there is none or it cannot be read). */
export function approvedWorkspaceOf(ctx: Ctx, x: Entry): WorkspaceManifest | undefined {
  const m = x.server.record?.manifest;
  try {
    return m ? loadManifest(ctx.service.storeDir, m) : undefined;
  } catch {
    return undefined;
  }
}

export async function showDefinition(ctx: Ctx, x: Entry): Promise<void> {
  const uri = ctx.docs.show(`/${x.server.name} — ${x.server.source.replace(/\//g, '∕')}`, serverText(x.server, grantsOf(ctx, x)));
  await showDocument(uri, { preview: true, preserveFocus: false });
}

export function failed(e: unknown): false {
  void vscode.window.showErrorMessage(vscode.l10n.t('MCP Gate: {0}', (e as Error).message));
  return false;
}

/** Where a server is declared, as a person of this workspace reads it. */
export function where(x: Entry): string {
  return `${workspacePath(x.server.file, x.folder.folder.uri.fsPath)}:${x.server.position.line}`;
}
