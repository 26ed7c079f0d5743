// Issue 28 in a real VS Code: a change on disk to a file of a running server's closure shows at once. The fixture
// (test/fixtures/watch-repo, opened as a copy: this suite changes it) declares `lazy-probe`, whose one tool loads
// tools/lib.js afresh at every call. The test approves it, lets VS Code start it through MCP Gate's chat gateway
// (workbench.mcp.startServer on the provider's definition), calls it once (the approved lib.js answers), opens the
// trust panel, then renames a changed lib.js over the approved one as editors and git do — a lib.js that, if it
// ever ran, would write a marker file into the workspace. Within 1000 ms of the write (polled; the deadline is the
// assertion) the status bar, the gate's state and the panel's model must all say the server changed since its
// approval; the next tool call is refused, and the marker never appears. The times measured are printed.
// Runs only on test/fixtures/watch-repo (test/vscode/all.mjs).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { gatedLabel } from '../../../src/vscode/gateway-provider';
import { sleep, waitFor } from './wait';

const SERVER = 'lazy-probe';
const APPROVED = 'the approved lib.js answers';
const CHANGED = 'the changed lib.js answers';
const DEADLINE_MS = 1000;
const here = path.basename(process.env.MCP_GATE_VSCODE_WORKSPACE ?? '') === 'watch-repo';
const text = (r: vscode.LanguageModelToolResult) =>
  r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : JSON.stringify(p))).join('');

(here ? describe : describe.skip)(
  "running closure: a change on disk to a running server's code shows in VS Code within a second",
  function () {
    this.timeout(120_000);
    let api: McpGateApi;
    let folder: string;
    let ref: { folder: string; source: string; name: string };
    const tool = () => vscode.lm.tools.find((t) => t.name.startsWith('mcp_') && t.name.includes('lazy') && t.name.endsWith('_answer'));
    const state = () => api.service.servers().find((x) => x.server.name === SERVER)?.server.state;
    const panelState = () => api.panel()?.servers.find((s) => s.name === SERVER)?.state;

    before(async () => {
      api = await vscode.extensions.getExtension<McpGateApi>('mcp-gate.mcp-gate')!.activate();
      await waitFor('the gate report', () => api.service.folders()[0]?.report);
      folder = api.service.folders()[0].folder.uri.fsPath;
      ref = { folder, source: '.mcp.json', name: SERVER };
      assert.ok(
        !path.relative(path.resolve(process.env.MCP_GATE_VSCODE_WORKSPACE!), folder),
        `the window shows the run's copy (${folder})`,
      );
    });

    after(async () => {
      if (!api) return;
      await vscode.commands
        .executeCommand('workbench.mcp.stopServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER)}`)
        .then(undefined, () => undefined);
      await vscode.commands.executeCommand('mcpGate.reset', ref);
      await vscode.workspace.getConfiguration('mcpGate').update('rules', undefined, vscode.ConfigurationTarget.Global);
    });

    it('a changed lib.js renamed over the approved one while it runs: status bar, gate and panel say "changed" within 1000 ms; the next call is refused and the changed code never runs', async () => {
      assert.equal(state(), 'pending', 'nothing is approved yet');
      const confirm = api.prompts.confirm;
      api.prompts.confirm = async () => true;
      try {
        assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref), true);
      } finally {
        api.prompts.confirm = confirm;
      }
      await vscode.workspace
        .getConfiguration('mcpGate')
        .update('rules', [{ action: `mcp.${SERVER}.tool.answer`, decision: 'allow', project: folder }], vscode.ConfigurationTarget.Global);
      assert.equal(state(), 'approved');
      await waitFor('the provider offering lazy-probe', async () =>
        (await api.gateway!.provideMcpServerDefinitions()).find((d) => d.label === gatedLabel(SERVER)),
      );
      const t = await waitFor('VS Code starting lazy-probe through the gate', async () => {
        if (!tool())
          await vscode.commands.executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER)}`, {
            waitForLiveTools: true,
          });
        return tool();
      }).catch((e) => {
        throw new Error(`${(e as Error).message}; MCP Gate's log ends with ${JSON.stringify(api.service.log.read().slice(-4))}`);
      });
      const call = async () => {
        try {
          return text(await vscode.lm.invokeTool(t.name, { input: {}, toolInvocationToken: undefined }));
        } catch (e) {
          return `threw: ${(e as Error).message}`;
        }
      };
      // The control: it runs, contained, and loads the approved lib.js at the call.
      assert.equal(await call(), APPROVED);
      const start = api.service.log
        .read()
        .filter((e) => e.kind === 'server.start' && (e as { server?: string }).server === SERVER)
        .at(-1) as { detail?: string } | undefined;
      assert.match(String(start?.detail), /contained: /, JSON.stringify(start));
      // Only the files it names are approved copies (lib.js among them: a literal require): the workspace, where the
      // marker would go, stays writable for it.
      assert.match(String(start?.detail), /approved copies mounted read-only: [^;]*\/watch-repo\/tools\/lib\.js/, JSON.stringify(start));

      await vscode.commands.executeCommand('mcpGate.openPanel');
      await waitFor('the trust panel showing lazy-probe approved', () => panelState() === 'approved');
      assert.doesNotMatch(api.status.text, /changed|new/, `before the change: ${api.status.text}`);

      // The change, as an editor, git checkout or git pull makes it: a new file renamed over the old one.
      const lib = path.join(folder, 'tools', 'lib.js');
      const marker = path.join(folder, `changed-code-ran-${process.pid}`);
      const tmp = path.join(folder, 'tools', '.lib.js.tmp');
      const wrote = Date.now();
      fs.writeFileSync(
        tmp,
        `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nmodule.exports = ${JSON.stringify(CHANGED)};\n`,
      );
      fs.renameSync(tmp, lib);
      const seen: { status?: number; gate?: number; panel?: number } = {};
      for (;;) {
        const now = Date.now() - wrote;
        if (seen.status === undefined && /\b1 changed\b/.test(api.status.text)) seen.status = now;
        if (seen.gate === undefined && state() === 'approval-changed') seen.gate = now;
        if (seen.panel === undefined && panelState() === 'approval-changed') seen.panel = now;
        if (seen.status !== undefined && seen.gate !== undefined && seen.panel !== undefined) break;
        assert.ok(
          now <= DEADLINE_MS,
          `${DEADLINE_MS} ms after the write not everything says changed: status bar "${api.status.text}" (${seen.status ?? '-'} ms), gate ${state()} (${seen.gate ?? '-'} ms), panel ${panelState()} (${seen.panel ?? '-'} ms)`,
        );
        await sleep(5);
      }
      // The server was stopped within the same second: by the session's watch ("changed on disk while it ran"), or by
      // the window's own check of the gate if that saw the change first (it ends the sessions of servers no longer
      // approved). The log's times have milliseconds.
      const stopped = () =>
        api.service.log
          .read()
          .find((e) => e.kind === 'server.stop' && (e as { server?: string }).server === SERVER && Date.parse(e.at) >= wrote - 5);
      const stop = await waitFor('the server stopping', stopped, 2000).catch(() =>
        assert.fail(`the server was not stopped: ${JSON.stringify(api.service.log.read().slice(-4))}`),
      );
      const by = /changed on disk while it ran/.test(String((stop as { detail?: string }).detail))
        ? "the session's watch"
        : "the gate's check";
      assert.ok(Date.parse(stop.at) - wrote <= DEADLINE_MS, `the server was stopped ${Date.parse(stop.at) - wrote} ms after the write`);
      console.log(
        `      [running-closure] VS Code ${vscode.version}: write → gate approval-changed ${seen.gate} ms, status bar "${api.status.text}" ${seen.status} ms, panel ${seen.panel} ms; server stopped by ${by} ${Date.parse(stop.at) - wrote} ms (a whole check of this window took ${api.service.firstCheckMs?.toFixed(0)} ms at activation)`,
      );

      // The next call: refused (the gateway says why, or VS Code has dropped the server's tools); never the new code.
      const after = await call();
      console.log(`      [running-closure] the call after the change: ${after}`);
      assert.doesNotMatch(after, new RegExp(`${CHANGED}|${APPROVED}`), 'a call after the change was answered');
      assert.match(after, /^threw: |changed on disk|approval-changed/, after);
      assert.equal(fs.readFileSync(lib, 'utf8').includes(CHANGED), true, 'the changed lib.js is on disk');
      assert.equal(fs.existsSync(marker), false, 'the changed lib.js ran');
      const refused = api.service.log
        .read()
        .filter(
          (e) => e.kind === 'mcp.request' && (e as { server?: string }).server === SERVER && (e as { about?: string }).about === 'answer',
        );
      assert.ok(
        !refused.slice(1).some((e) => (e as { outcome?: string }).outcome === 'answered'),
        `no call was answered after the change: ${JSON.stringify(refused)}`,
      );
      // Starting it again is refused (the gate says approval-changed), and a call still never reaches the new code.
      await Promise.race([
        vscode.commands
          .executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER)}`, { waitForLiveTools: true })
          .then(undefined, () => undefined),
        sleep(5000),
      ]);
      const again = tool() ? await call() : 'threw: no tool listed';
      console.log(`      [running-closure] a call after VS Code was asked to start it again: ${again}`);
      assert.doesNotMatch(again, new RegExp(`${CHANGED}|${APPROVED}`), 'a call after the change was answered');
      assert.equal(fs.existsSync(marker), false, 'the changed lib.js ran');
      assert.equal(state(), 'approval-changed');
    });
  },
);
