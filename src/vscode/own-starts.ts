// VS Code's own MCP starts: servers VS Code itself reads from this workspace (its .vscode/mcp.json, discovered
// files) and would start outside MCP Gate, found by the pure core (src/trust/sources/vscode-own.ts) from the gate report and
// VS Code's settings, and the one step that routes them through the gate (user-scope settings, naming the side
// effect on the user's own mcp.json servers and offering to import them): a review document decided in it, "Not
// now" first (./decision.ts). The doctor lists them; a repository
// that sets the routing back is named as such (src/vscode/routing.ts shows it in full width, with the fix).
import * as vscode from 'vscode';
import {
  ACCESS_KEY,
  ALLOWED_KEY,
  COLLISION_KEY,
  DISCOVERY_KEY,
  GALLERY_URL_KEY,
  LEGACY_ENABLED_KEY,
  settingInFile,
  vscodeOwnStarts,
  type VsCodeOwnReport,
} from '../trust/sources/vscode-own';
import { TrackingReader } from '../trust/sources/fsread';
import { vscodeProfileMcpJson, VSCODE_WORKSPACE_SETTINGS } from '../trust/sources/tools/vscode';
import { parse as parseJsonc } from 'jsonc-parser';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { escapeText } from '../text/escape';
import { prompts } from './prompts';
import { Review, type DocumentProvider } from './review';
import type { FolderState, GateService } from './service';

// Whether this window went from chat.mcp.access "registry" to "all" (VS Code 1.139 may then keep the workspace's
// servers after the switch back to "registry" until the window reloads; vscode-own reports them then). Seen at each
// computation. A window opened under "all" and routed once (the first-run step) dropped them (measured, twice), so
// only "all" after "registry" counts.
let sawRegistry = false;
let accessWasAll = false;

/** Also for a folder MCP Gate could not check (no report): its settings overrides still count (the reopen). */
/** A repository settings file's value for `key` (bounded, non-blocking: a FIFO or a huge file cannot hang the host). */
function settingIn(file: string, key: string, inWorkspaceFile = false): unknown {
  const reader = new TrackingReader();
  return settingInFile((f, limit) => reader.read(f, limit), file, key, inWorkspaceFile);
}

export function ownStartsOf(folder: FolderState, index: number, workspaceSettingsFile?: string): VsCodeOwnReport {
  // Without a resource, as VS Code's own MCP service reads them: window-scope values of the window (the folder's
  // .vscode/settings.json in a folder window, the workspace file's in a workspace). With the folder as resource,
  // inspect() also returns a nested "chat.mcp": {…} object of a folder inside a workspace, which VS Code's MCP does
  // not apply (measured).
  const c = vscode.workspace.getConfiguration();
  const inspect = (k: string) => {
    const i = c.inspect(k);
    return i
      ? {
          defaultValue: i.defaultValue,
          globalValue: i.globalValue,
          workspaceValue: i.workspaceValue,
          workspaceFolderValue: i.workspaceFolderValue,
        }
      : undefined;
  };
  // VS Code 1.139 stable does not register chat.mcp.gallery.serviceUrl (`included: false`), and inspect() of the
  // dotted key then misses a nested "chat.mcp.gallery": { "serviceUrl" } object: read both spellings (fail closed).
  // So the repository's files are read as well, in every spelling (dotted, nested, partly nested).
  const gallery = (() => {
    const dotted = inspect(GALLERY_URL_KEY);
    const wsFile = vscode.workspace.workspaceFile?.scheme === 'file' ? vscode.workspace.workspaceFile.fsPath : undefined;
    const folderFile = path.join(folder.folder.uri.fsPath, ...VSCODE_WORKSPACE_SETTINGS.split('/'));
    return {
      defaultValue: dotted?.defaultValue,
      globalValue: dotted?.globalValue,
      workspaceValue:
        dotted?.workspaceValue ?? (wsFile ? settingIn(wsFile, GALLERY_URL_KEY, true) : settingIn(folderFile, GALLERY_URL_KEY)),
      // Inside a workspace file VS Code applies no folder's window settings (measured for chat.mcp.access).
      workspaceFolderValue: dotted?.workspaceFolderValue ?? (wsFile ? undefined : settingIn(folderFile, GALLERY_URL_KEY)),
    };
  })();
  const r = vscodeOwnStarts({
    report: folder.report,
    settings: {
      [ACCESS_KEY]: inspect(ACCESS_KEY),
      [DISCOVERY_KEY]: inspect(DISCOVERY_KEY),
      [LEGACY_ENABLED_KEY]: inspect(LEGACY_ENABLED_KEY),
      [GALLERY_URL_KEY]: gallery,
      [COLLISION_KEY]: inspect(COLLISION_KEY),
      [ALLOWED_KEY]: inspect(ALLOWED_KEY),
    },
    workspaceTrusted: vscode.workspace.isTrusted,
    // What VS Code reads by itself differs by version (1.139 also starts each folder's root .mcp.json).
    vscodeVersion: vscode.version,
    folderIndex: index,
    workspaceSettingsFile,
    accessWasAllInWindow: accessWasAll,
  });
  if (r.access.value === 'registry') sawRegistry = true;
  else if (r.access.value === 'all' && sawRegistry) accessWasAll = true;
  return r;
}

export function ownStartsText(service: GateService, status: string, workspaceSettingsFile?: string): string {
  const L: string[] = ["VS Code's own MCP starts (outside MCP Gate):", `  ${status}`];
  service.folders().forEach((f, i) => {
    const r = ownStartsOf(f, i, workspaceSettingsFile);
    if (!r) return;
    L.push(`  chat.mcp.access = ${JSON.stringify(r.access.raw)} (${r.access.scope})`);
    if (!r.starts.length) L.push('  none: VS Code starts no server of this workspace by itself');
    for (const s of r.starts) {
      L.push(
        `  ${escapeText(s.name)} from ${escapeText(s.source)} (${s.mechanism}${s.vscodeId ? `, id ${s.vscodeId}` : ''}; MCP Gate state ${s.gateState})`,
      );
      for (const n of [...(s.uncertain ? [s.uncertain] : []), ...s.notes]) L.push(`    ${escapeText(n)}`);
    }
    for (const o of r.overrides)
      L.push(
        `  REPOSITORY OVERRIDE: ${escapeText(o.file)} sets ${o.key} = ${JSON.stringify(o.value)}: ${escapeText(o.effect)} (fix: MCP Gate: Reopen Through MCP Gate)`,
      );
    const todo = r.routing.filter((x) => !x.inPlace);
    if (todo.length)
      L.push(
        `  to route them through MCP Gate, set in your user settings: ${todo.map((x) => `"${x.key}": ${JSON.stringify(x.value)}`).join(', ')} (MCP Gate: Route VS Code's Servers Through the Gate)`,
      );
    for (const n of r.notes) L.push(`  note: ${escapeText(n)}`);
  });
  return L.join('\n');
}

/** The servers the user wrote in this profile's own mcp.json (User/mcp.json beside MCP Gate's globalStorage). */
export function userMcpJsonServers(service: GateService): { file: string; names: string[] } {
  const file = vscodeProfileMcpJson(service.storeDir);
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > 1024 * 1024) return { file, names: [] };
    const v = parseJsonc(fs.readFileSync(file, 'utf8')) as { servers?: unknown };
    return { file, names: v && typeof v.servers === 'object' && v.servers ? Object.keys(v.servers) : [] };
  } catch {
    return { file, names: [] };
  }
}

/**
 * The one step that routes VS Code's own starts through the gate: writes the user-scope routing settings after the
 * person chose to in a review document that names what VS Code would start by itself and the side effect on the
 * user's own mcp.json servers, and offers to import those into MCP Gate in the same choice ("Not now" first; no key
 * press chooses). Returns true when the routing was written.
 */
export async function routeThroughGate(service: GateService, docs: DocumentProvider): Promise<boolean> {
  const reports = service
    .folders()
    .map((f, i) => ownStartsOf(f, i))
    .filter((r): r is VsCodeOwnReport => !!r);
  const todo = new Map<string, unknown>();
  for (const r of reports) for (const x of r.routing) if (!x.inPlace) todo.set(x.key, x.value);
  if (!todo.size) {
    void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: VS Code already starts no workspace server by itself.'));
    return false;
  }
  const starts = reports.flatMap((r) => r.starts);
  const mine = userMcpJsonServers(service);
  const imports = vscode.workspace.getConfiguration('mcpGate').inspect<string[]>('imports')?.globalValue ?? [];
  const importable = mine.names.length > 0 && !imports.includes('vscode');
  const detail = [
    starts.length
      ? vscode.l10n.t(
          'Today VS Code itself would start, outside the gate and without a prompt: {0}.',
          starts.map((s) => `${escapeText(s.name)} (${escapeText(s.source)})`).join(', '),
        )
      : vscode.l10n.t("VS Code itself starts the servers of every repository's .vscode/mcp.json, outside the gate and without a prompt."),
    vscode.l10n.t('MCP Gate sets in your user settings:') + '\n' + [...todo].map(([k, v]) => `"${k}": ${JSON.stringify(v)}`).join('\n'),
    mine.names.length
      ? vscode.l10n.t(
          'Side effect: VS Code then no longer starts the servers you wrote in your own mcp.json ({0}).',
          mine.names.map(escapeText).join(', '),
        ) +
        (importable
          ? ' ' + vscode.l10n.t('"Route and Import My Servers" adds "vscode" to mcpGate.imports, so they run through MCP Gate instead.')
          : ' ' + vscode.l10n.t('mcpGate.imports already has "vscode": they run through MCP Gate.'))
      : vscode.l10n.t(
          'Side effect: VS Code no longer starts servers written by hand in your own mcp.json either (it has none now); add "vscode" to mcpGate.imports to run them through MCP Gate.',
        ),
    vscode.l10n.t(
      "A repository's .vscode/settings.json or .code-workspace can set these back; MCP Gate then shows it across the panel, with the fix.",
    ),
  ].join('\n\n');
  const routeOnly = vscode.l10n.t('Route through MCP Gate');
  const routeImport = vscode.l10n.t('Route and Import My Servers');
  const question = vscode.l10n.t("Route VS Code's own MCP starts through MCP Gate?");
  const review = new Review(docs);
  let answer: string | undefined;
  try {
    const view = await review.document(
      { name: 'VS Code', source: 'settings' },
      vscode.l10n.t("Route VS Code's own MCP starts through MCP Gate"),
      `${question}\n${vscode.l10n.t('Choose above the first line or below the last. Closing this tab means Not now.')}\n\n${detail}\n`,
    );
    answer = await prompts.choose(question, detail, importable ? [routeImport, routeOnly] : [routeOnly], view);
  } finally {
    await review.close();
  }
  if (answer !== routeOnly && answer !== routeImport) return false;
  const c = vscode.workspace.getConfiguration();
  for (const [k, v] of todo) await c.update(k, v, vscode.ConfigurationTarget.Global);
  if (answer === routeImport)
    await vscode.workspace.getConfiguration('mcpGate').update('imports', [...imports, 'vscode'], vscode.ConfigurationTarget.Global);
  service.log.write({
    kind: 'gate.route',
    detail: `user settings set: ${[...todo.keys()].join(', ')}${answer === routeImport ? ', mcpGate.imports += vscode' : ''} (VS Code's own MCP starts routed through MCP Gate)`,
  });
  // The step is confirmed to the person, with what it changed.
  void vscode.window.showInformationMessage(
    vscode.l10n.t(
      "MCP Gate: VS Code's own MCP starts now go through MCP Gate ({0} set in your user settings{1}).",
      [...todo.keys()].join(', '),
      answer === routeImport ? vscode.l10n.t('; your own mcp.json servers run through MCP Gate') : '',
    ),
  );
  return true;
}
