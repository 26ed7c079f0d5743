// A repository that declares the same server in .vscode/mcp.json and in the root .mcp.json, opened in a routed
// window (chat.mcp.access "registry"), both approved: VS Code switches neither gated definition off (their labels
// name their source and say they are gated), the chat's tool is the gated one and named after the server, its call
// is logged, and VS Code's own ids of the two entries (1.139 has one for .mcp.json too) start no process.
// Runs only on test/fixtures/same-name-repo (test/vscode/all.mjs).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { collisionGrouping, gatedLabel } from '../../../src/vscode/gateway-provider';
import { vscodeReads } from '../../../src/trust/sources/vscode-own';
import { sleep, waitFor } from './wait';

const SERVER = 'notes';
const text = (r: vscode.LanguageModelToolResult) =>
  r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : JSON.stringify(p))).join('');

/** Plain `node …echo-server.mjs` children of this extension host: VS Code's own starts (gated ones run under bwrap). */
function ownProcesses(folder: string): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const cwd = fs.readlinkSync(`/proc/${d}/cwd`);
      if (/^\S*node /.test(cmd) && cmd.includes('echo-server.mjs') && (cmd.includes(folder) || cwd === folder)) out.push(cmd);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('same-named servers in .vscode/mcp.json and .mcp.json', function () {
  this.timeout(120_000);
  let api: McpGateApi;
  let folder: string;

  before(async function () {
    if (!vscode.workspace.workspaceFolders?.[0].uri.fsPath.endsWith('same-name-repo')) this.skip();
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    await waitFor('the gate report', () => api.service.folders()[0]?.report);
    folder = api.service.folders()[0].folder.uri.fsPath;
  });

  it("routed and approved: the chat's tool is the gated one, named after the server, and nothing starts outside the gate", async () => {
    assert.equal(vscode.workspace.getConfiguration().get('chat.mcp.access'), 'registry', "this run routes VS Code's own starts");
    const confirm = api.prompts.confirm;
    api.prompts.confirm = async () => true;
    try {
      for (const source of ['.vscode/mcp.json', '.mcp.json'])
        assert.equal(await vscode.commands.executeCommand('mcpGate.approve', { folder, source, name: SERVER }), true, source);
    } finally {
      api.prompts.confirm = confirm;
    }
    await vscode.workspace
      .getConfiguration('mcpGate')
      .update('rules', [{ action: `mcp.${SERVER}.tool.echo`, decision: 'allow', project: folder }], vscode.ConfigurationTarget.Global);
    const defs = await waitFor('both gated definitions', async () => {
      const d = (await api.gateway!.provideMcpServerDefinitions()).filter((x) => x.label.startsWith(SERVER));
      return d.length === 2 && d;
    });
    assert.deepEqual(defs.map((d) => d.label).sort(), [gatedLabel(SERVER, '.mcp.json'), gatedLabel(SERVER, '.vscode/mcp.json')].sort());

    const known = new Set(vscode.lm.tools.map((t) => t.name));
    const fresh = () => vscode.lm.tools.find((t) => !known.has(t.name) && t.name.endsWith('_echo'));
    const tool = await waitFor('VS Code starting the .mcp.json copy through the gate', async () => {
      if (!fresh())
        await vscode.commands.executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER, '.mcp.json')}`, {
          waitForLiveTools: true,
        });
      return fresh();
    });
    // 1.139 names tools after initialize's serverInfo.name (the server's name); 1.112 after the label, which names
    // the source when two servers share a name (mcp_notes__mcp_js_echo): the server's name leads either way.
    const tools = `tools: ${vscode.lm.tools.map((t) => t.name).filter((n) => n.startsWith('mcp_'))}`;
    if (collisionGrouping()) assert.equal(tool.name, `mcp_${SERVER}_echo`, tools);
    else assert.match(tool.name, new RegExp(`^mcp_${SERVER}_`), tools);
    const r = await vscode.lm.invokeTool(tool.name, { input: { text: 'same name, gated' }, toolInvocationToken: undefined });
    assert.equal(text(r), 'same name, gated');
    const calls = api.service.log
      .read()
      .filter(
        (e) => e.kind === 'mcp.request' && (e as { server?: string }).server === SERVER && (e as { about?: string }).about === 'echo',
      );
    assert.equal(calls.length, 1, 'the call went through the gate and was logged');

    // VS Code's own ids of both entries: routed, they start nothing.
    const ids = ['mcp.config.ws0.notes', ...(vscodeReads(vscode.version).workspaceRootMcpJson ? ['workspace-dot-mcp.0.notes'] : [])];
    for (const id of ids) {
      await vscode.commands
        .executeCommand('workbench.mcp.startServer', id, { errorOnUserInteraction: true })
        .then(undefined, () => undefined);
      await sleep(3000);
      assert.deepEqual(ownProcesses(folder), [], `VS Code's own ${id} started a process outside the gate`);
    }
  });

  after(async () => {
    if (!api) return;
    await vscode.workspace.getConfiguration('mcpGate').update('rules', undefined, vscode.ConfigurationTarget.Global);
  });
});
