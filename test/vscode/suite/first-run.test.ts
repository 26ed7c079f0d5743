// first-run: secure by default, once. The step (a review document MCP Gate opens on first activation, decided in
// it; that it shows on open is asserted by Playwright in test/e2e/run.mjs, "first run"; Enter on it by
// ./route.test.ts) names
// what VS Code would start itself and the side effect on the user's own mcp.json servers, and routes and imports
// them in one answer, after which the status bar's source, the panel's banner and the doctor say "VS Code starts
// nothing outside the gate". Settings are put back.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { waitFor } from './wait';
import { vscodeReads } from '../../../src/trust/sources/vscode-own';

const log = (msg: string) => console.log(`      [first-run] ${msg}`);

describe("first-run: one step routes VS Code's own MCP starts through the gate", function () {
  this.timeout(60_000);
  let api: McpGateApi;
  const keys = ['chat.mcp.access', 'chat.mcp.discovery.enabled', 'mcpGate.imports'];
  const previous = new Map<string, unknown>();
  let userMcpJson = '';
  const rootMcpJson = vscodeReads(vscode.version).workspaceRootMcpJson;

  before(async function () {
    if (!vscode.workspace.workspaceFolders?.[0].uri.fsPath.endsWith('vscode-workspace')) this.skip();
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    for (const k of keys) previous.set(k, vscode.workspace.getConfiguration().inspect(k)?.globalValue);
    if (previous.get('chat.mcp.access') !== undefined) this.skip(); // this run already routes
    userMcpJson = path.join(api.service.storeDir, '..', '..', 'mcp.json');
  });
  after(async () => {
    if (!api) return;
    for (const [k, v] of previous) await vscode.workspace.getConfiguration().update(k, v, vscode.ConfigurationTarget.Global);
    fs.rmSync(userMcpJson, { force: true });
  });

  it('before the step: the status line names the server VS Code would start itself, and the panel banner the fix', async () => {
    // 1.139 also starts the folder's root .mcp.json by itself (src/trust/sources/vscode-own.ts, per version).
    assert.match(
      api.routing().status,
      rootMcpJson
        ? /^VS Code itself would start 2 servers outside the gate: fixture-echo, sandbox-probe$/
        : /^VS Code itself would start 1 server outside the gate: fixture-echo$/,
    );
    assert.ok(
      api.routing().banners.some((b) => b.level === 'warning' && /Route VS Code's Servers Through the Gate/.test(b.text)),
      'the panel banner names the fix',
    );
  });

  it("routes and imports the user's own mcp.json servers in one answer, after which nothing starts outside the gate", async () => {
    fs.writeFileSync(userMcpJson, JSON.stringify({ servers: { 'my-notes': { type: 'stdio', command: 'node', args: ['notes.mjs'] } } }));
    const choose = api.prompts.choose;
    let detail = '';
    let actions: string[] = [];
    try {
      api.prompts.choose = async (m, d, a) => ((detail = d), (actions = a), 'Route and Import My Servers');
      assert.equal(await vscode.commands.executeCommand('mcpGate.routeVsCodeServers'), true);
    } finally {
      api.prompts.choose = choose;
    }
    log(`actions=${JSON.stringify(actions)}\n${detail}`);
    assert.deepEqual(actions, ['Route and Import My Servers', 'Route through MCP Gate']);
    assert.match(
      detail,
      rootMcpJson
        ? /VS Code itself would start, outside the gate and without a prompt: fixture-echo \(\.vscode\/mcp\.json\), sandbox-probe \(\.mcp\.json\)/
        : /VS Code itself would start, outside the gate and without a prompt: fixture-echo \(\.vscode\/mcp\.json\)/,
    );
    assert.match(detail, /no longer starts the servers you wrote in your own mcp\.json \(my-notes\)/);
    const c = () => vscode.workspace.getConfiguration();
    assert.equal(c().inspect('chat.mcp.access')?.globalValue, 'registry');
    assert.deepEqual(c().inspect('mcpGate.imports')?.globalValue, ['vscode']);
    await waitFor('the routed status', () => api.routing().status === 'VS Code starts nothing outside the gate', 10_000);
    assert.deepEqual(api.routing().banners, [{ level: 'info', text: 'VS Code starts nothing outside the gate.' }]);
    const doctor = (await vscode.commands.executeCommand('mcpGate.doctor')) as string;
    assert.match(doctor, /VS Code's own MCP starts \(outside MCP Gate\):\n {2}VS Code starts nothing outside the gate\n/);
    // Asked again: nothing left to do, nothing asked.
    let askedAgain = false;
    api.prompts.choose = async () => ((askedAgain = true), undefined);
    try {
      assert.equal(await vscode.commands.executeCommand('mcpGate.routeVsCodeServers'), false);
    } finally {
      api.prompts.choose = choose;
    }
    assert.equal(askedAgain, false);
  });
});
