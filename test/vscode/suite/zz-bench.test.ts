// Benchmark inside a real VS Code, run only by `npm run bench` (which sets MCP_GATE_BENCH_OUT): the extension's
// activation time, and the extension host's memory with 8 servers connected through the gate (8 user servers
// running the fixture's echo server), against the same host before they started. Writes JSON to that file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { gatedLabel } from '../../../src/vscode/gateway-provider';

const OUT = process.env.MCP_GATE_BENCH_OUT;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

(OUT ? describe : describe.skip)('bench: activation and memory with 8 servers', function () {
  this.timeout(240_000);

  it('measures', async () => {
    const api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const server = path.join(folder, 'echo-server.mjs');
    const names = Array.from({ length: 8 }, (_, i) => `bench${i}`);
    const c = vscode.workspace.getConfiguration('mcpGate');
    await c.update(
      'servers',
      Object.fromEntries(names.map((n) => [n, { command: 'node', args: [server] }])),
      vscode.ConfigurationTarget.Global,
    );
    await c.update(
      'rules',
      names.map((n) => ({ action: `mcp.${n}.tool.echo`, decision: 'allow' })),
      vscode.ConfigurationTarget.Global,
    );
    for (let i = 0; i < 50 && (await api.gateway!.provideMcpServerDefinitions()).length < 8; i++) await sleep(100);
    global.gc?.();
    await sleep(500);
    const before = process.memoryUsage().rss;
    for (const n of names) {
      for (let i = 0; i < 100 && !vscode.lm.tools.some((t) => t.name.includes(n)); i++) {
        await vscode.commands.executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(n)}`, { waitForLiveTools: true });
        await sleep(100);
      }
    }
    const connected = names.filter((n) => vscode.lm.tools.some((t) => t.name.includes(n))).length;
    for (const n of names) {
      const tool = vscode.lm.tools.find((t) => t.name.includes(n) && t.name.endsWith('_echo'));
      if (tool) await vscode.lm.invokeTool(tool.name, { input: { text: 'x' }, toolInvocationToken: undefined });
    }
    await sleep(1000);
    const after = process.memoryUsage().rss;
    fs.writeFileSync(
      OUT!,
      JSON.stringify({
        activationMs: api.activationMs,
        firstCheckMs: api.service.firstCheckMs,
        rssBefore: before,
        rssAfter: after,
        connected,
        vscode: vscode.version,
      }),
    );
    await c.update('servers', undefined, vscode.ConfigurationTarget.Global);
    await c.update('rules', undefined, vscode.ConfigurationTarget.Global);
  });
});
