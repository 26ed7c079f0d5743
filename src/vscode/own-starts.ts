// VS Code's own MCP starts: servers VS Code itself reads from this workspace (its .vscode/mcp.json, discovered
// files) and would start outside MCP Gate, found by the pure core (src/trust/vscode-own.ts) from the gate report and
// VS Code's settings. The extension says so once per set (with the user-scope settings that route them through
// the gate, which "Route through MCP Gate" writes after a modal that names the side effect), and the doctor lists
// them. A repository that sets the routing settings back in its .vscode/settings.json is named as such.
import * as vscode from 'vscode';
import { ACCESS_KEY, DISCOVERY_KEY, LEGACY_ENABLED_KEY, vscodeOwnStarts, type VsCodeOwnReport } from '../trust/vscode-own';
import { escapeText } from '../trust/escape';
import { prompts } from './prompts';
import type { FolderState, GateService } from './service';

export function ownStartsOf(folder: FolderState, index: number): VsCodeOwnReport | undefined {
  if (!folder.report) return undefined;
  const c = vscode.workspace.getConfiguration(undefined, folder.folder.uri);
  const inspect = (k: string) => {
    const i = c.inspect(k);
    return i ? { defaultValue: i.defaultValue, globalValue: i.globalValue, workspaceValue: i.workspaceValue, workspaceFolderValue: i.workspaceFolderValue } : undefined;
  };
  return vscodeOwnStarts({
    report: folder.report,
    settings: { [ACCESS_KEY]: inspect(ACCESS_KEY), [DISCOVERY_KEY]: inspect(DISCOVERY_KEY), [LEGACY_ENABLED_KEY]: inspect(LEGACY_ENABLED_KEY) },
    workspaceTrusted: vscode.workspace.isTrusted,
    folderIndex: index,
  });
}

export function ownStartsText(service: GateService): string {
  const L: string[] = ['VS Code\'s own MCP starts (outside MCP Gate):'];
  service.folders().forEach((f, i) => {
    const r = ownStartsOf(f, i);
    if (!r) return;
    L.push(`  chat.mcp.access = ${JSON.stringify(r.access.raw)} (${r.access.scope})`);
    if (!r.starts.length) L.push('  none: VS Code starts no server of this workspace by itself');
    for (const s of r.starts) L.push(`  ${escapeText(s.name)} from ${escapeText(s.source)} (${s.mechanism}${s.vscodeId ? `, id ${s.vscodeId}` : ''}; MCP Gate state ${s.gateState})`);
    for (const o of r.overrides) L.push(`  REPOSITORY OVERRIDE: ${escapeText(o.file)} sets ${o.key} = ${JSON.stringify(o.value)}: ${escapeText(o.effect)}`);
    const todo = r.routing.filter((x) => !x.inPlace);
    if (todo.length) L.push(`  to route them through MCP Gate, set in your user settings: ${todo.map((x) => `"${x.key}": ${JSON.stringify(x.value)}`).join(', ')} (MCP Gate: Route VS Code's Servers Through the Gate)`);
    for (const n of r.notes) L.push(`  note: ${escapeText(n)}`);
  });
  return L.join('\n');
}

/** Writes the user-scope routing settings after a modal that names what they also switch off. */
export async function routeThroughGate(service: GateService): Promise<boolean> {
  const reports = service.folders().map((f, i) => ownStartsOf(f, i)).filter((r): r is VsCodeOwnReport => !!r);
  const todo = new Map<string, unknown>();
  for (const r of reports) for (const x of r.routing) if (!x.inPlace) todo.set(x.key, x.value);
  if (!todo.size) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: VS Code already starts no workspace server by itself.'));
    return false;
  }
  const detail = [...todo].map(([k, v]) => `"${k}": ${JSON.stringify(v)}`).join('\n') +
    '\n\n' + vscode.l10n.t('chat.mcp.access "registry" also hides the servers you wrote in your own profile mcp.json from VS Code; to keep them, add "vscode" to mcpGate.imports so they run through MCP Gate. A repository can set these settings back in its .vscode/settings.json; MCP Gate will tell you when one does.');
  const yes = await prompts.confirm(vscode.l10n.t('Set these in your user settings so that VS Code starts workspace MCP servers only through MCP Gate?'), detail, vscode.l10n.t('Route through MCP Gate'));
  if (!yes) return false;
  const c = vscode.workspace.getConfiguration();
  for (const [k, v] of todo) await c.update(k, v, vscode.ConfigurationTarget.Global);
  service.log.write({ kind: 'gate.approve', detail: `user settings set: ${[...todo.keys()].join(', ')} (VS Code's own MCP starts routed through MCP Gate)` });
  return true;
}

/** One warning per distinct set of own starts or overrides. */
export function ownStartsWarnings(service: GateService): vscode.Disposable {
  let told = '';
  const check = async () => {
    const reports = service.folders().map((f, i) => ownStartsOf(f, i)).filter((r): r is VsCodeOwnReport => !!r);
    const starts = reports.flatMap((r) => r.starts);
    const overrides = reports.flatMap((r) => r.overrides);
    const key = JSON.stringify([starts.map((s) => [s.source, s.name]), overrides.map((o) => [o.file, o.key, o.value])]);
    if ((!starts.length && !overrides.length) || key === told) return;
    told = key;
    const route = vscode.l10n.t('Route through MCP Gate');
    const msg = overrides.length
      ? vscode.l10n.t('MCP Gate: this repository\'s settings ({0}) make VS Code start MCP servers itself, outside the gate, whatever your user settings say.', overrides.map((o) => `${o.key} = ${JSON.stringify(o.value)}`).join(', '))
      : vscode.l10n.t('MCP Gate: VS Code itself would start {0} server(s) of this workspace outside the gate: {1}.', starts.length, starts.map((s) => escapeText(s.name)).join(', '));
    const answer = await vscode.window.showWarningMessage(msg, route);
    if (answer === route) await vscode.commands.executeCommand('mcpGate.routeVsCodeServers');
  };
  void check();
  return vscode.Disposable.from(service.onDidChange(() => void check()), vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('chat.mcp')) void check();
  }));
}
