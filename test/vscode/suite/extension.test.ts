// The extension as a user gets it: loaded by a real VS Code (1.112, code-server) from the repository's
// package.json and dist/extension.js, in a window on test/fixtures/vscode-workspace.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import type { GateService } from '../../../src/vscode/service';

const EXTENSION_ID = 'mcp-gate.mcp-gate';

describe('MCP Gate in VS Code', function () {
  this.timeout(60_000);

  it('runs in a VS Code its engines.vscode admits (1.112, the oldest tested), which has vscode.lm.registerMcpServerDefinitionProvider', () => {
    console.log(
      `  VS Code ${vscode.version} (${vscode.env.appName}, ${vscode.UIKind[vscode.env.uiKind]}), extension host node ${process.version}`,
    );
    const [major, minor] = vscode.version.split('.').map(Number);
    assert.ok(major > 1 || (major === 1 && minor >= 112), `VS Code ${vscode.version} is older than 1.112`);
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
    assert.deepEqual(
      found.map((u) => vscode.workspace.asRelativePath(u)),
      ['.vscode/mcp.json'],
    );

    const text = Buffer.from(await vscode.workspace.fs.readFile(found[0])).toString('utf8');
    const config = parseJsonc(text) as { servers?: Record<string, { type?: string; command?: string }> };
    const stdio = Object.entries(config.servers ?? {}).filter(([, s]) => s.type === 'stdio' && s.command);
    assert.deepEqual(
      stdio.map(([name]) => name),
      ['fixture-echo'],
    );
  });

  it('activation only registers; the gate is checked right after, and whatever reads it first runs the check there and then', async () => {
    const api = await vscode.extensions.getExtension<McpGateApi>(EXTENSION_ID)!.activate();
    assert.equal(api.service.ready, true, 'checked once activation is over');
    // Two more services of the extension's own class, on a store of their own.
    const Service = api.service.constructor as new (...a: ConstructorParameters<typeof GateService>) => GateService;
    const store = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-first-check-'));
    const secrets = {
      get: async () => undefined,
      store: async () => undefined,
      delete: async () => undefined,
      keys: async () => [],
      onDidChange: new vscode.EventEmitter<vscode.SecretStorageChangeEvent>().event,
    } as vscode.SecretStorage;
    const channel = vscode.window.createOutputChannel('MCP Gate first check (test)', { log: true });
    const early = new Service(store, secrets, channel);
    const later = new Service(store, secrets, channel);
    try {
      // Read before its first check: the read runs it, and the servers are there, with their states.
      assert.equal(early.ready, false);
      const read = early.servers();
      assert.equal(early.ready, true);
      assert.ok(
        read.some((x) => x.server.name === 'fixture-echo' && x.server.state === 'pending'),
        JSON.stringify(read.map((x) => [x.server.name, x.server.state])),
      );
      // Left alone: the first check comes by itself right after, and says so once.
      let fired = 0;
      later.onDidChange(() => fired++);
      assert.equal(later.ready, false);
      await new Promise((r) => setImmediate(r));
      assert.equal(later.ready, true);
      assert.equal(fired, 1);
      assert.deepEqual(
        later.servers().map((x) => x.server.name),
        read.map((x) => x.server.name),
      );
    } finally {
      early.dispose();
      later.dispose();
      channel.dispose();
      fs.rmSync(store, { recursive: true, force: true });
    }
  });
});
