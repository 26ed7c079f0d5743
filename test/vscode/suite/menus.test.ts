// Where commands appear, in a real VS Code: the context keys package.json's `when` clauses read follow what the
// gate decides (a decision recorded by the core, as the CLI would, flips them within the service's next check);
// the CodeLens carries the server's actions menu; that menu and the context menu of .vscode/mcp.json offer only
// what applies, and Enter in them picks Show Definition, never Approve — nothing is recorded.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { recordDecision, resetDecisions } from '../../../src/trust/approval/approvals';
import { waitFor } from './wait';

const SERVER = 'fixture-echo';

describe('menus: commands where they apply', function () {
  this.timeout(90_000);
  let api: McpGateApi;
  const folder = () => api.service.folders()[0]!;
  const server = () => api.service.servers().find((x) => x.server.name === SERVER)!;
  const ref = () => ({ folder: folder().folder.uri.fsPath, source: '.vscode/mcp.json', name: SERVER });
  const mcpJson = () => vscode.Uri.joinPath(folder().folder.uri, '.vscode', 'mcp.json');
  /** Accepts the quick pick's focused (first) item once it is open, as Enter would. */
  const pressEnter = async () => {
    await new Promise((r) => setTimeout(r, 600));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  };

  before(async function () {
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    if (!vscode.workspace.isTrusted) this.skip();
    await waitFor('the first check', () => api.service.ready && server());
    await resetDecisions(folder().input, SERVER, '.vscode/mcp.json');
    await waitFor('the fixture server pending', () => server()?.server.state === 'pending');
  });
  after(async () => {
    if (api && vscode.workspace.isTrusted) await resetDecisions(folder().input, SERVER, '.vscode/mcp.json');
  });

  it('the context keys follow the gate: approve and reset apply only when a server can take them', async () => {
    const keys = await waitFor('the keys', () => api.contextKeys()['mcpGate.canApprove'] === true && api.contextKeys());
    assert.equal(keys['mcpGate.hasServers'], true);
    const resettable = () => api.service.servers().some((x) => x.server.gated && !!x.server.record);
    assert.equal(keys['mcpGate.canReset'], resettable());
    await recordDecision(folder().input, SERVER, '.vscode/mcp.json', 'approved');
    await waitFor('canReset and hasApproved set', () => api.contextKeys()['mcpGate.canReset'] && api.contextKeys()['mcpGate.hasApproved']);
    await resetDecisions(folder().input, SERVER, '.vscode/mcp.json');
    await waitFor('the server pending again', () => server().server.state === 'pending');
    assert.equal(api.contextKeys()['mcpGate.canReset'], resettable());
    assert.equal(api.contextKeys()['mcpGate.canApprove'], true);
    assert.equal(api.contextKeys()['mcpGate.sandboxMissing'], api.service.cannotStartHere() !== undefined);
  });

  it("the CodeLens carries the server's actions menu; Enter in it shows the definition and approves nothing", async () => {
    const lenses = await waitFor('the lenses', async () => {
      const l = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', mcpJson())) ?? [];
      return l.some((c) => c.command?.command === 'mcpGate.serverActions') && l;
    });
    const menu = lenses.find((c) => c.command?.command === 'mcpGate.serverActions')!;
    assert.deepEqual(menu.command!.arguments, [ref()]);
    const ran = vscode.commands.executeCommand<string | undefined>('mcpGate.serverActions', ref());
    await pressEnter();
    assert.equal(await ran, 'mcpGate.showDefinition', 'the first, safe action');
    assert.equal(server().server.state, 'pending', 'nothing recorded');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('the context menu of .vscode/mcp.json reviews its server; Enter there approves nothing either', async () => {
    const ran = vscode.commands.executeCommand<string | undefined>('mcpGate.reviewFile', mcpJson());
    await pressEnter();
    assert.equal(await ran, 'mcpGate.showDefinition');
    assert.equal(server().server.state, 'pending', 'nothing recorded');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // A file that declares no server says so and runs nothing.
    assert.equal(
      await vscode.commands.executeCommand('mcpGate.reviewFile', vscode.Uri.joinPath(folder().folder.uri, 'echo-server.mjs')),
      undefined,
    );
  });
});
