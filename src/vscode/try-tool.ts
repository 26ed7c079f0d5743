// "MCP Gate: Try a Tool…": one tool call through the gate end to end, as VS Code chat makes it, for a person who
// wants to see the gate work (and where chat is not available, as offline). The server is started the way VS
// Code's own start goes (GatewayProvider.endpoint: the same checks and session), then a client asks the gateway
// over HTTP as chat does (src/host/gateway/gateway-client.ts): the tools it lists are the ones chat would see, the call
// is checked by the policy at call time, and the log lines it wrote are shown with the result in a read-only
// document. A tool the policy hides from chat is offered too, marked, and choosing it says which rule allows it.
import * as vscode from 'vscode';
import { GatewayClient, type ListedTool } from '../host/gateway/gateway-client';
import type { LoggedEvent } from '../host/log/log';
import { logLine } from '../report/log-line';
import { argumentSkeleton, resultLines } from '../report/tool-text';
import { asRef, refOf, sameRef } from '../trust/approval/server-ref';
import { escapeLabel, escapeText } from '../text/escape';
import type { ServerReport } from '../trust/report';
import type { GatewayProvider } from './gateway-provider';
import { showDocument, type DocumentProvider } from './review';
import type { FolderState, GateService } from './service';
import { CMD } from './command-ids';
import { markTried } from './walkthrough';

type Entry = { folder: FolderState; server: ServerReport };

/** What a test (or a caller) may pass instead of picking: the server, the tool and its arguments. */
export interface TryArgs {
  server?: unknown;
  tool?: string;
  arguments?: Record<string, unknown>;
}

/** What one try did, for the tests: the call's result as shown and the log lines it wrote, or the hidden tool's rule. */
export type Tried =
  | { kind: 'called'; server: string; tool: string; ok: boolean; text: string; log: string[]; uri: vscode.Uri }
  | { kind: 'hidden'; server: string; tool: string; allow: string[]; reason: string };

function parseArgs(text: string): Record<string, unknown> | string {
  try {
    const v = JSON.parse(text || '{}') as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v))
      return vscode.l10n.t('The arguments must be a JSON object, such as {"message": "hi"}.');
    return v as Record<string, unknown>;
  } catch (e) {
    return vscode.l10n.t('Not JSON: {0}', (e as Error).message);
  }
}

async function pickServer(service: GateService, entries: Entry[]): Promise<Entry | undefined> {
  const multi = service.folders().length > 1;
  const items = entries.map((x) => ({
    label: escapeLabel(x.server.name),
    description: `${escapeLabel(x.server.source)}${multi ? ` · ${escapeLabel(x.folder.folder.name)}` : ''}`,
    x,
  }));
  return (await vscode.window.showQuickPick(items, { placeHolder: vscode.l10n.t('Which server? (the ones VS Code chat is offered now)') }))
    ?.x;
}

type ToolItem = vscode.QuickPickItem & { tool?: ListedTool; hidden?: { name: string; allow: string[]; reason: string } };

async function pickTool(
  listed: ListedTool[],
  hidden: Array<{ name: string; allow: string[]; reason: string }>,
): Promise<ToolItem | undefined> {
  const items: ToolItem[] = listed.map((t) => ({
    label: escapeLabel(t.name),
    description: escapeLabel(t.title ?? ''),
    detail: escapeLabel((t.description ?? '').split('\n')[0].slice(0, 200)),
    tool: t,
  }));
  if (hidden.length) {
    items.push({ label: vscode.l10n.t('Hidden from chat by your policy'), kind: vscode.QuickPickItemKind.Separator });
    for (const h of hidden) items.push({ label: `$(circle-slash) ${escapeLabel(h.name)}`, detail: escapeLabel(h.reason), hidden: h });
  }
  return vscode.window.showQuickPick(items, {
    placeHolder: vscode.l10n.t('Which tool? (as chat lists them; the hidden ones say which rule allows them)'),
    matchOnDetail: true,
  });
}

/** Runs the command: returns what it did (undefined when the person cancelled or nothing could be tried). */
export async function tryTool(
  service: GateService,
  docs: DocumentProvider,
  provider: GatewayProvider | undefined,
  given: TryArgs = {},
): Promise<Tried | undefined> {
  if (!provider) {
    void vscode.window.showWarningMessage(
      vscode.l10n.t('MCP Gate: this VS Code has no MCP server API (vscode.lm), so there is no chat gateway to try a tool through.'),
    );
    return undefined;
  }
  service.refresh(true);
  const entries = provider.offeredServers();
  const ref = given.server !== undefined ? asRef(given.server) : undefined;
  let x: Entry | undefined;
  if (ref) x = entries.find((e) => sameRef(refOf(e.folder.folder.uri.fsPath, e.server), ref));
  else if (entries.length) x = entries.length === 1 ? entries[0] : await pickServer(service, entries);
  if (!x) {
    if (ref || !entries.length) {
      const approve = vscode.l10n.t('Approve Server…');
      void vscode.window
        .showInformationMessage(
          ref
            ? vscode.l10n.t('MCP Gate: that server cannot run now (approve it first, or see why in MCP Gate: Doctor).')
            : vscode.l10n.t('MCP Gate: no server can run now. Approve one first.'),
          approve,
        )
        .then((c) => (c === approve ? vscode.commands.executeCommand(CMD.approve) : undefined));
    }
    return undefined;
  }
  const name = x.server.name;
  const end = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('MCP Gate: starting "{0}" through the gate…', name) },
    () => provider.endpoint(x!, `Try a Tool asked to start ${name}`),
  );
  if (typeof end === 'string') {
    void vscode.window.showWarningMessage(vscode.l10n.t('MCP Gate did not start "{0}": {1}', name, end));
    return undefined;
  }
  let client: GatewayClient | undefined;
  try {
    client = await GatewayClient.connect(end.launch, 'mcp-gate-try-a-tool');
    const listed = await client.listTools();
    const hidden = end.hidden();
    let tool: ListedTool | undefined;
    if (given.tool !== undefined) {
      tool = listed.find((t) => t.name === given.tool);
      const h = hidden.find((t) => t.name === given.tool);
      if (!tool && h) return hiddenMessage(name, h);
      // not listed (unknown, or frozen out): asked anyway, as a client that names it would, so the gate's answer shows
      tool ??= { name: given.tool };
    } else {
      if (!listed.length && !hidden.length) {
        void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: "{0}" offers no tool.', name));
        return undefined;
      }
      const chosen = await pickTool(listed, hidden);
      if (!chosen) return undefined;
      if (chosen.hidden) return hiddenMessage(name, chosen.hidden);
      tool = chosen.tool!;
    }
    const args = given.arguments || (await askArguments(tool));
    if (!args) return undefined;
    const events: LoggedEvent[] = [];
    const stop = service.log.onEvent((e) => {
      if ((e as { server?: string }).server === name) events.push(e);
    });
    let result;
    try {
      result = await client.call(tool.name, args);
    } finally {
      stop();
    }
    const ok = !result.isError;
    const log = events.map((e) => logLine(e));
    const text = triedText(tool, x.server, args, result, log);
    const uri = docs.show(`/Try a Tool/${name.replace(/[/\\]/g, '∕')} — ${tool.name.replace(/[/\\]/g, '∕')}`, text);
    await showDocument(uri, { preview: true });
    markTried();
    return { kind: 'called', server: name, tool: tool.name, ok, text, log, uri };
  } catch (e) {
    void vscode.window.showWarningMessage(
      vscode.l10n.t('MCP Gate: trying a tool of "{0}" failed: {1}', name, e instanceof Error ? e.message : String(e)),
    );
    return undefined;
  } finally {
    await client?.close();
  }
}

/** Asks the person for a tool's arguments (a JSON object, prefilled from its input schema); undefined when cancelled. */
async function askArguments(tool: ListedTool): Promise<Record<string, unknown> | undefined> {
  const typed = await vscode.window.showInputBox({
    title: vscode.l10n.t('Arguments of {0} (JSON)', escapeText(tool.name)),
    prompt: vscode.l10n.t("A JSON object; the tool's input schema is shown in the result document."),
    value: JSON.stringify(argumentSkeleton(tool.inputSchema)),
    validateInput: (t) => {
      const r = parseArgs(t);
      return typeof r === 'string' ? r : undefined;
    },
    ignoreFocusOut: true,
  });
  if (typed === undefined) return undefined;
  return parseArgs(typed) as Record<string, unknown>;
}

/** The result document of a call tried: the tool, its arguments, its result, the log lines it made, its input schema. */
function triedText(
  tool: ListedTool,
  server: ServerReport,
  args: Record<string, unknown>,
  result: Awaited<ReturnType<GatewayClient['call']>>,
  log: string[],
): string {
  return [
    vscode.l10n.t(
      'MCP Gate: Try a Tool — "{0}" of "{1}" ({2}), called through MCP Gate\'s gateway as VS Code chat calls it.',
      escapeText(tool.name),
      escapeText(server.name),
      escapeText(server.source),
    ),
    '',
    vscode.l10n.t('Arguments:'),
    JSON.stringify(args, null, 2),
    '',
    !result.isError ? vscode.l10n.t('Result:') : vscode.l10n.t('Result (a tool error: what chat would be shown):'),
    ...resultLines(result),
    '',
    vscode.l10n.t('The exchange log recorded (MCP Gate: Show Log shows it all):'),
    ...(log.length ? log : [vscode.l10n.t('(nothing)')]),
    ...(tool.inputSchema
      ? ['', vscode.l10n.t('Input schema of {0}:', escapeText(tool.name)), JSON.stringify(tool.inputSchema, null, 2)]
      : []),
    '',
  ].join('\n');
}

function hiddenMessage(server: string, h: { name: string; allow: string[]; reason: string }): Tried {
  const copy = vscode.l10n.t('Copy the rule');
  const msg = h.allow.length
    ? vscode.l10n.t(
        'MCP Gate: chat is not shown "{0}" of "{1}": {2}. Adding {3} to mcpGate.rules in your user settings allows it.',
        h.name,
        server,
        h.reason,
        h.allow.join(' and '),
      )
    : vscode.l10n.t('MCP Gate: chat is not shown "{0}" of "{1}": {2}.', h.name, server, h.reason);
  void vscode.window
    .showInformationMessage(msg, ...(h.allow.length ? [copy] : []))
    .then((c) => (c === copy ? vscode.env.clipboard.writeText(h.allow.join('\n')) : undefined));
  return { kind: 'hidden', server, tool: h.name, allow: h.allow, reason: h.reason };
}
