// lenses: one set of lenses on a .vscode/mcp.json entry. Every CodeLens on the entry's line — VS Code's own
// (its ▷Start / More…) and MCP Gate's — read through vscode.executeCodeLensProvider, as the editor shows them.
// While VS Code would start the server itself (chat.mcp.access "all"), MCP Gate's lens says its Start bypasses the
// gate; routed ("registry", as the routed run sets it), VS Code shows no Start and MCP Gate says nothing about it.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { sleep, waitFor } from './wait';

const log = (msg: string) => console.log(`      [lenses] ${msg}`);

describe("lenses: MCP Gate's lens never sits beside a Start that bypasses it without saying so", function () {
  this.timeout(60_000);

  it("on the fixture's entry: VS Code's Start only while it would start the server itself, and then MCP Gate's warning beside it", async function () {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder?.uri.fsPath.endsWith('vscode-workspace')) this.skip();
    const api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    const uri = vscode.Uri.joinPath(folder!.uri, '.vscode/mcp.json');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const entry = await waitFor('the gate report', () => api.service.servers().find((x) => x.server.name === 'fixture-echo'));
    const line = entry.server.position.line - 1;
    const wouldStart = api.routing().starts.some((s) => s.name === 'fixture-echo');
    // VS Code's own lenses appear once it has read the file; give it time in both cases.
    let titles: string[] = [];
    const end = Date.now() + (wouldStart ? 20_000 : 6000);
    do {
      const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 100)) ?? [];
      titles = lenses.filter((l) => l.range.start.line <= line + 1 && l.range.end.line >= line).map((l) => l.command?.title ?? '');
      if (wouldStart && titles.some((t) => /Start/.test(t) && !/MCP Gate/.test(t))) break;
      await sleep(500);
    } while (Date.now() < end);
    log(
      `access=${JSON.stringify(vscode.workspace.getConfiguration().get('chat.mcp.access'))} wouldStart=${wouldStart}; lenses on line ${line + 1}: ${JSON.stringify(titles)}`,
    );
    const vsCodeStart = titles.some((t) => /Start/.test(t) && !/bypasses MCP Gate/.test(t));
    const gateWarning = titles.some((t) => /VS Code's own Start bypasses MCP Gate/.test(t));
    assert.ok(
      titles.some((t) => /^(\$\([\w-]+\) )?MCP Gate: /.test(t)),
      "MCP Gate's state lens",
    );
    assert.equal(vsCodeStart, wouldStart, 'VS Code shows its Start exactly when it would start the server itself');
    assert.equal(gateWarning, wouldStart, 'MCP Gate says so exactly then');
  });
});
