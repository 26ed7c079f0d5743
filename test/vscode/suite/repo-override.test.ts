// repo-override: a repository that sets VS Code's MCP routing back (test/fixtures/override-repo: chat.mcp.access
// "all" and discovery on, in its .vscode/settings.json and in its override.code-workspace). Runs only when that
// fixture is open; run.mjs opens it three ways (see package.json test:vscode and docs/vscode-own-starts.md):
// - the folder itself, user setting chat.mcp.access "registry": the repository's value wins, VS Code starts its
//   server itself (measured here, from /proc), and MCP Gate says so in full width (panel banner, status bar,
//   doctor) with the fix: reopen through MCP Gate's own workspace file;
// - the repository's override.code-workspace: the same, the file named being the workspace file;
// - --gated: the folder inside the one-folder workspace file MCP Gate writes: the folder's window-scope values are
//   not applied, `workbench.mcp.startServer` for VS Code's own id spawns no process, and MCP Gate says "VS Code
//   starts nothing outside the gate";
// - --expect-reopen (the folder, and the repository's override.code-workspace, with the user's routing in place and
//   mcpGate.reopenOverridden at its default): MCP Gate reopens the window by itself inside its own workspace file
//   (run.mjs waits for that, then runs this suite in the reopened window): as --gated, and the panel says why.
// The two "as shipped" runs set mcpGate.reopenOverridden: false, to measure what a repository does without it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { sleep, waitFor } from './wait';
import { inThisRun } from './run-tree';

const MARKER = '--mcp-gate-marker=override-7d1f';
const OWN_ID = 'mcp.config.ws0.override-echo';
const log = (msg: string) => console.log(`      [repo-override] ${msg}`);
const reopened = process.env.MCP_GATE_VSCODE_EXPECT_REOPEN === '1';
const workspaceFile = vscode.workspace.workspaceFile?.fsPath;
const gated = !!workspaceFile && workspaceFile.includes('/globalStorage/');
const shippedAs = process.env.MCP_GATE_VSCODE_WORKSPACE_FILE?.split('/').pop() ?? '.vscode/settings.json';
/** chat.mcp.access as VS Code's own MCP service reads it: for the window, without a resource. */
const effectiveAccess = () => vscode.workspace.getConfiguration().get('chat.mcp.access');

/**
 * Every process of this run's VS Code (not only our children: any process under its code-server) whose command line
 * carries the fixture's marker. Other runs may have the same folder open at the same time (test/vscode/all.mjs).
 */
function markerProcesses(): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (cmd.includes(MARKER) && cmd.includes(vscode.workspace.workspaceFolders![0].uri.fsPath) && inThisRun(Number(d)))
        out.push({ pid: Number(d), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Asks VS Code to start its own server (no dialog) and watches /proc for the marker for a few seconds. */
async function startOwn(): Promise<{ error?: string; spawned: { pid: number; cmd: string }[] }> {
  const before = new Set(markerProcesses().map((p) => p.pid));
  let error: string | undefined;
  let spawned: { pid: number; cmd: string }[] = [];
  const end = Date.now() + 8000;
  do {
    try {
      await vscode.commands.executeCommand('workbench.mcp.startServer', OWN_ID, { waitForLiveTools: true, errorOnUserInteraction: true });
      error = undefined;
    } catch (e) {
      error = (e as Error)?.message ?? String(e);
    }
    const settle = Date.now() + 1500;
    while (Date.now() < settle && !spawned.length) {
      spawned = markerProcesses().filter((p) => !before.has(p.pid));
      await sleep(100);
    }
  } while (!spawned.length && Date.now() < end);
  if (spawned.length) {
    await vscode.commands.executeCommand('workbench.mcp.stopServer', OWN_ID);
    await waitFor(
      'VS Code to stop its own server',
      () => !markerProcesses().some((p) => spawned.some((s) => s.pid === p.pid)),
      10_000,
    ).catch(() => undefined);
  }
  return { error, spawned };
}

describe('repo-override: a repository that sets chat.mcp.access back cannot make VS Code start its servers outside the gate unseen', function () {
  this.timeout(90_000);
  let api: McpGateApi;

  before(async function () {
    // A window opened on a workspace file (MCP Gate's, after a reopen) can start its extension host before VS Code
    // has read the file's folders: wait for them rather than skip.
    if (vscode.workspace.workspaceFile)
      await waitFor("the workspace file's folders", () => vscode.workspace.workspaceFolders?.length, 30_000).catch(() => undefined);
    const f = vscode.workspace.workspaceFolders?.[0];
    log(
      `folder ${f?.uri.fsPath ?? 'none'}; override.code-workspace there: ${f ? fs.existsSync(`${f.uri.fsPath}/override.code-workspace`) : false}`,
    );
    if (!f || !fs.existsSync(`${f.uri.fsPath}/override.code-workspace`)) this.skip();
    api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
    await waitFor('the gate report', () => api.service.folders()[0]?.report);
    const i = vscode.workspace.getConfiguration(undefined, f.uri).inspect('chat.mcp.access');
    const d = vscode.workspace.getConfiguration(undefined, f.uri).inspect('chat.mcp.discovery.enabled');
    log(
      `VS Code ${vscode.version}; workspaceFile=${vscode.workspace.workspaceFile?.fsPath ?? 'none'}; chat.mcp.access user=${JSON.stringify(i?.globalValue)} workspace=${JSON.stringify(i?.workspaceValue)} folder=${JSON.stringify(i?.workspaceFolderValue)} effective=${JSON.stringify(vscode.workspace.getConfiguration(undefined, f.uri).get('chat.mcp.access'))}; discovery workspace=${JSON.stringify(d?.workspaceValue)} folder=${JSON.stringify(d?.workspaceFolderValue)}`,
    );
  });

  it(
    gated
      ? "inside MCP Gate's workspace file: the folder's \"all\" is not applied and VS Code's own start spawns no process"
      : 'opened as the repository ships it: VS Code applies the repository\'s "all" and starts the server itself (the attack, measured)',
    async () => {
      const effective = effectiveAccess();
      const r = await startOwn();
      log(`startServer ${OWN_ID}: error=${r.error ?? 'none'} spawned=${JSON.stringify(r.spawned)}`);
      if (gated) {
        assert.equal(effective, 'registry', "the gated workspace file's value applies, not the folder's");
        assert.deepEqual(r.spawned, [], 'no process with the marker');
      } else {
        assert.equal(effective, 'all');
        assert.equal(r.spawned.length, 1, "VS Code starts the repository's server itself");
      }
    },
  );

  it(
    gated
      ? 'MCP Gate says "VS Code starts nothing outside the gate" in the status bar, doctor and panel'
      : 'MCP Gate names the override in full width (panel banner, status bar, doctor) with the fix',
    async () => {
      const routing = await waitFor('the routing state', () => api.routing?.());
      const doctor = (await vscode.commands.executeCommand('mcpGate.doctor')) as string;
      const banners = api.routing!()
        .banners.map((b) => b.text)
        .join('\n');
      log(
        `status=${routing.status} doctor: ${doctor.slice(doctor.indexOf("VS Code's own MCP starts")).split('\n').slice(0, 6).join(' | ')}`,
      );
      if (gated) {
        assert.equal(routing.status, 'VS Code starts nothing outside the gate');
        assert.match(doctor, /VS Code starts nothing outside the gate/);
        assert.deepEqual(
          api.routing!().banners.filter((b) => b.level === 'warning'),
          [],
          'no warning left',
        );
        assert.match(banners, /VS Code starts nothing outside the gate\.$/);
        if (reopened) {
          // The window MCP Gate reopened by itself: its panel says why, naming the repository's file and values.
          assert.match(
            banners,
            new RegExp(
              `^MCP Gate reopened this window inside its own workspace file because ${shippedAs.replace(/\./g, '\\.')} sets chat\\.mcp\\.(access = "all"|enabled = true|gallery\\.serviceUrl = )`,
            ),
          );
          const logged = fs.readFileSync(api.service.log.file!, 'utf8');
          assert.ok(
            logged.includes(`reopening ${vscode.workspace.workspaceFolders![0].uri.fsPath} through MCP Gate's workspace file`),
            'the reopen is in the log',
          );
        } else assert.doesNotMatch(banners, /MCP Gate reopened/);
      } else {
        const file = shippedAs;
        assert.match(routing.status, /VS Code itself would start 1 server outside the gate: override-echo/);
        assert.ok(banners.includes(file), `the banner names ${file}: ${banners}`);
        assert.match(banners, /chat\.mcp\.access = "all"/);
        assert.match(banners, /Reopen Through MCP Gate/);
        assert.match(banners, /mcpGate\.reopenOverridden is off/, 'the banner says why MCP Gate did not reopen the window itself');
        assert.match(doctor, new RegExp(`REPOSITORY OVERRIDE: ${file.replace(/\./g, '\\.')} sets chat\\.mcp\\.access = "all"`));
      }
    },
  );
});
