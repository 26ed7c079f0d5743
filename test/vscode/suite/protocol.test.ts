// Both MCP revisions through the chat gateway in a real VS Code: a 2026-07-28-only server (SDK v2 fixture, over
// stdio and over HTTP on loopback) and a 2025-11-25 server (SDK 1.x fixture, stdio), declared as user servers;
// VS Code starts each through MCP Gate's provider, calls its tool, and the log names the revision each spoke.
// Needs the test build (out/test/fixtures, from `npx tsc -p tsconfig.test.json`; `npm run test:all` builds it).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { sleep, waitFor } from './wait';
import { gatedLabel } from '../../../src/vscode/gateway-provider';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const MODERN = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'modern-server.js');
const LEGACY = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');
const trusted = process.env.MCP_GATE_VSCODE_TRUSTED !== 'false';
const text = (r: vscode.LanguageModelToolResult) =>
  r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : JSON.stringify(p))).join('');

(trusted ? describe : describe.skip)('both protocol revisions through the gateway', function () {
  this.timeout(120_000);
  let api: McpGateApi;
  let http: ChildProcess | undefined;
  const c = () => vscode.workspace.getConfiguration('mcpGate');

  after(async () => {
    http?.kill('SIGKILL');
    await c().update('servers', undefined, vscode.ConfigurationTarget.Global);
    await c().update('rules', undefined, vscode.ConfigurationTarget.Global);
    await c().update('localExceptions', undefined, vscode.ConfigurationTarget.Global);
  });

  it("a 2026-07-28-only server (stdio and HTTP) and a 2025-11-25 server answer VS Code's calls; the log names each revision", async () => {
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    http = spawn(process.execPath, [MODERN], {
      env: { ...process.env, FIXTURE_HTTP_PORT: '0', FIXTURE_HTTP_HOST: '::' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('the HTTP fixture did not start')), 20_000);
      http!.stdout!.on('data', (d: Buffer) => {
        const m = /PORT (\d+)/.exec(d.toString());
        if (m) {
          clearTimeout(t);
          resolve(Number(m[1]));
        }
      });
    });
    await c().update(
      'servers',
      {
        'rev-modern': { command: 'node', args: [MODERN] },
        'rev-modern-http': { url: `http://localhost:${port}/mcp` },
        'rev-legacy': { command: 'node', args: [LEGACY], env: { FIXTURE_READONLY: '1', FIXTURE_TOOLS: '1' } },
      },
      vscode.ConfigurationTarget.Global,
    );
    await c().update('localExceptions', [{ server: 'rev-modern-http', allowLoopback: true }], vscode.ConfigurationTarget.Global);
    await c().update(
      'rules',
      [
        { action: 'mcp.rev-modern.tool.echo', decision: 'allow' },
        { action: 'mcp.rev-modern-http.host.localhost', decision: 'allow' },
        { action: 'mcp.rev-modern-http.tool.echo', decision: 'allow' },
        { action: 'mcp.rev-legacy.tool.t0', decision: 'allow' },
      ],
      vscode.ConfigurationTarget.Global,
    );
    await waitFor(
      'the provider offering the three servers',
      async () => (await api.gateway!.provideMcpServerDefinitions()).filter((d) => d.label.startsWith('rev-')).length === 3,
    );
    const calls: Array<[string, string, string, RegExp]> = [
      ['rev-modern', '_echo', 'echo', /echo: through the gate/],
      ['rev-modern-http', '_echo', 'echo', /echo: through the gate .*mcp-method=tools\/call/],
      ['rev-legacy', '_t0', 't0', /t0: through the gate/],
    ];
    for (const [name, suffix, , expected] of calls) {
      // VS Code names a server's tools after its label, shortened; the new tool after this start is the server's
      const known = new Set(vscode.lm.tools.map((t) => t.name));
      // (other suites' servers, such as fixture-echo's echo, may register tools meanwhile: only this run's rev-* count)
      const find = () =>
        vscode.lm.tools.find((t) => !known.has(t.name) && t.name.startsWith('mcp_') && t.name.includes('rev') && t.name.endsWith(suffix));
      const tool = await waitFor(
        `VS Code starting ${name} through the gate (tools: ${[...known].filter((n) => n.startsWith('mcp_')).join(', ')})`,
        async () => {
          if (!find()) {
            await vscode.commands.executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(name)}`, {
              waitForLiveTools: true,
            });
            await sleep(100);
          }
          return find();
        },
      );
      const r = await vscode.lm.invokeTool(tool.name, { input: { text: 'through the gate' }, toolInvocationToken: undefined });
      assert.match(text(r), expected, `${name}: ${text(r)}`);
    }
    const starts = api.service.log.read().filter((e) => e.kind === 'server.start') as Array<{ server?: string; detail?: string }>;
    const revision = (n: string) =>
      starts
        .filter((e) => e.server === n)
        .map((e) => e.detail ?? '')
        .join(' | ');
    assert.match(revision('rev-modern'), /protocol 2026-07-28/);
    assert.match(revision('rev-modern-http'), /protocol 2026-07-28/);
    assert.match(revision('rev-legacy'), /protocol 2025-11-25/);
  });
});
