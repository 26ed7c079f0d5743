// The extension as a user gets it: loaded by a real VS Code (1.112, code-server) from the repository's
// package.json and dist/extension.js, in a window on test/fixtures/vscode-workspace.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import * as vscode from 'vscode';

const EXTENSION_ID = 'mcp-gate.mcp-gate';

describe('MCP Gate in VS Code', function () {
  this.timeout(60_000);

  it('runs in VS Code 1.101 or later, which has vscode.lm.registerMcpServerDefinitionProvider', () => {
    console.log(`  VS Code ${vscode.version} (${vscode.env.appName}, ${vscode.UIKind[vscode.env.uiKind]}), extension host node ${process.version}`);
    const [major, minor] = vscode.version.split('.').map(Number);
    assert.ok(major > 1 || (major === 1 && minor >= 101), `VS Code ${vscode.version} is older than 1.101`);
    assert.equal(typeof vscode.lm?.registerMcpServerDefinitionProvider, 'function');
  });

  it(`has the extension ${EXTENSION_ID}, and it activates`, async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded`);
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  it('registers mcpGate.doctor, and running it does not throw', async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('mcpGate.doctor'), 'mcpGate.doctor is not registered');
    await vscode.commands.executeCommand('mcpGate.doctor');
  });

  it('has the fixture workspace open, with its .vscode/mcp.json declaring a stdio server', async () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1, 'expected exactly one workspace folder');
    const expected = process.env.MCP_GATE_VSCODE_WORKSPACE;
    if (expected) assert.equal(path.resolve(folders[0].uri.fsPath), path.resolve(expected));
    // run.mjs --untrusted opens it in Restricted Mode.
    assert.equal(vscode.workspace.isTrusted, process.env.MCP_GATE_VSCODE_TRUSTED !== 'false');

    // Found through VS Code's own file search (the ripgrep binary that the host installer provides).
    const found = await vscode.workspace.findFiles('.vscode/mcp.json');
    assert.deepEqual(found.map((u) => vscode.workspace.asRelativePath(u)), ['.vscode/mcp.json']);

    const text = Buffer.from(await vscode.workspace.fs.readFile(found[0])).toString('utf8');
    const config = parseJsonc(text) as { servers?: Record<string, { type?: string; command?: string }> };
    const stdio = Object.entries(config.servers ?? {}).filter(([, s]) => s.type === 'stdio' && s.command);
    assert.deepEqual(stdio.map(([name]) => name), ['fixture-echo']);
  });
});
