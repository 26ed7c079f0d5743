// Routing VS Code's own MCP starts through the gate, in a real VS Code: the doctor names the fixture's server that
// VS Code would start by itself, and "Route VS Code's Servers Through the Gate" writes chat.mcp.access = "registry"
// to user settings only after its lens is clicked in the step's review document (Enter and closing it write
// nothing) — after which the doctor finds nothing VS Code starts alone.
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { closeTab, pressEnter, settled, waitingDecision } from './decide';

describe("routing VS Code's own MCP starts through MCP Gate", function () {
  this.timeout(60_000);
  let api: McpGateApi;
  let previous: unknown;

  before(async () => {
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    previous = vscode.workspace.getConfiguration().inspect('chat.mcp.access')?.globalValue;
  });
  after(async () => {
    await vscode.workspace.getConfiguration().update('chat.mcp.access', previous, vscode.ConfigurationTarget.Global);
  });

  it('names the server VS Code would start itself, and routes it only after the deliberate choice', async function () {
    const access = vscode.workspace.getConfiguration().inspect('chat.mcp.access');
    if (access?.workspaceValue !== undefined || access?.globalValue === 'registry' || access?.globalValue === 'none') this.skip();
    const doctor = (await vscode.commands.executeCommand('mcpGate.doctor')) as string;
    assert.match(
      doctor,
      /VS Code's own MCP starts \(outside MCP Gate\):[\s\S]*fixture-echo from \.vscode\/mcp\.json \(workspace-folder-mcp\.json, id mcp\.config\.ws0\.fixture-echo/,
    );
    const written = () => vscode.workspace.getConfiguration().inspect('chat.mcp.access')?.globalValue === 'registry';
    // The real step: a review document with the decision in it, "Not now" first.
    const first = Promise.resolve(vscode.commands.executeCommand<boolean>('mcpGate.routeVsCodeServers'));
    const w = await waitingDecision(api);
    assert.match(w.text, /^Route VS Code's own MCP starts through MCP Gate\?\n/);
    assert.match(w.text, /"chat\.mcp\.access": "registry"/);
    assert.match(w.text, /mcpGate\.imports/);
    assert.match(w.text, /fixture-echo \(\.vscode\/mcp\.json\)/, 'names what VS Code would start by itself');
    assert.equal(w.titles[0], '$(circle-slash) Not now');
    assert.ok(w.titles.includes('$(check) Route through MCP Gate'), w.titles.join(' | '));
    // Enter routes nothing; closing the document is Not now.
    await pressEnter();
    assert.equal(await settled(first), false);
    assert.equal(written(), false, 'nothing written on Enter');
    await closeTab(w.uri);
    assert.equal(await first, false);
    assert.equal(written(), false, 'nothing written without the choice');
    // The deliberate choice.
    const second = Promise.resolve(vscode.commands.executeCommand<boolean>('mcpGate.routeVsCodeServers'));
    await (await waitingDecision(api)).click(/^\$\(check\) Route through MCP Gate$/);
    assert.equal(await second, true);
    assert.deepEqual(api.decisions.pending(), []);
    assert.equal(vscode.workspace.getConfiguration().inspect('chat.mcp.access')?.globalValue, 'registry');
    // The step is its own event in the log (not an approval of a server with no name).
    const routed = api.service.log.read().filter((e) => e.kind === 'gate.route');
    assert.ok(
      routed.some((e) => /user settings set: .*chat\.mcp\.access/.test(String((e as { detail?: string }).detail))),
      JSON.stringify(routed),
    );
    assert.ok(
      !api.service.log.read().some((e) => e.kind === 'gate.approve' && !(e as { server?: string }).server),
      'no gate.approve without a server',
    );
    const after = (await vscode.commands.executeCommand('mcpGate.doctor')) as string;
    // VS Code 1.139 was seen to keep a window's workspace servers startable after registry → all → registry at
    // runtime (the own-starts suite switches it in this window): then MCP Gate says they may still start until a
    // reload, and never "nothing".
    if (api.routing().starts.some((s) => s.uncertain)) {
      for (const s of api.routing().starts)
        assert.match(s.uncertain ?? '', /may still start it: this window ran with chat\.mcp\.access "all".*until the window reloads/);
      assert.notEqual(api.routing().status, 'VS Code starts nothing outside the gate');
      return;
    }
    assert.match(after, /none: VS Code starts no server of this workspace by itself/);
    assert.match(after, /VS Code's own MCP starts \(outside MCP Gate\):\n  VS Code starts nothing outside the gate\n/);
    assert.equal(api.routing().status, 'VS Code starts nothing outside the gate');
  });
});
