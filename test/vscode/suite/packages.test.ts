// Pinned npm packages in a real VS Code, against a real registry (verdaccio on loopback, started here in the
// extension host and named to MCP Gate through npm_config_registry, as a person's environment would): Approve…
// resolves the package before it asks and shows the exact version and integrity in the read-only preview; the
// approval records the lock that was shown even when a newer version is published while the person reads;
// Update Pinned Package… shows 1.0.0 → 1.0.1 and the file diff in the multi-file diff editor and moves the lock
// only when its lens is clicked (Enter does not); a locked tree that is gone is installed again at start (through the package worker) and runs; with the
// registry stopped, nothing is approved and the error says which server, package and what to do.
// Runs on test/fixtures/npm-workspace (skipped in any other workspace).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { cleanupTemp, ROOT, tempDir } from '../../unit/helpers';
import { fixturePackage, startRegistry, type Registry } from '../../unit/registry';
import { withResolution } from '../../../src/vscode/resolving';
import { gatedLabel } from '../../../src/vscode/gateway-provider';
import { multiDiffOf } from '../../../src/vscode/review';
import { answerModal, pressEnter, settled, waitingDecision } from './decide';
import { waitFor } from './wait';

const EXTENSION_ID = 'mcp-gate.mcp-gate';
const SERVER = 'pinned-fixture';
const MARKER = '// marker of 1.0.1';
const workspace = process.env.MCP_GATE_VSCODE_WORKSPACE ?? '';
const here = path.basename(workspace) === 'npm-workspace';

/** The review's open tabs: the multi-file diff editor and the review document (virtual documents of the mcp-gate scheme). */
const reviewTabs = () =>
  vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => multiDiffOf(t) || (t.input instanceof vscode.TabInputText && t.input.uri.scheme === 'mcp-gate'));
const textOf = async (uri: vscode.Uri) => (await vscode.workspace.openTextDocument(uri)).getText();

(here ? describe : describe.skip)('pinned packages in VS Code (verdaccio)', function () {
  this.timeout(240_000);
  let api: McpGateApi;
  let reg: Registry;
  const server = () => api.service.servers().find((x) => x.server.name === SERVER)!;
  const ref = () => ({ folder: server().folder.folder.uri.fsPath, source: '.vscode/mcp.json', name: SERVER });
  const approvedLock = () => (server().server.record?.decision === 'approved' ? server().server.record!.lock : undefined);
  const errors: string[] = [];
  let showError: typeof vscode.window.showErrorMessage;
  let real: McpGateApi['prompts'];

  before(async () => {
    reg = await startRegistry();
    reg.publish(fixturePackage('1.0.0'));
    process.env.npm_config_registry = reg.url;
    api = await vscode.extensions.getExtension<McpGateApi>(EXTENSION_ID)!.activate();
    real = { ...api.prompts };
    for (let i = 0; i < 200 && !server(); i++) await new Promise((r) => setTimeout(r, 150));
    assert.ok(server(), `the workspace declares ${SERVER}`);
    // The error notifications the extension shows (a notification cannot be read back from the extension host).
    showError = vscode.window.showErrorMessage;
    (vscode.window as { showErrorMessage: unknown }).showErrorMessage = (m: string, ...rest: unknown[]) => {
      errors.push(m);
      return (showError as (...a: unknown[]) => Thenable<unknown>)(m, ...rest);
    };
  });
  after(async () => {
    if (showError) (vscode.window as { showErrorMessage: unknown }).showErrorMessage = showError;
    delete process.env.npm_config_registry;
    await reg?.stop();
    cleanupTemp();
  });

  it('Approve… resolves first and shows the exact version and integrity; the lock recorded is the one shown, though a newer one was published meanwhile', async () => {
    assert.equal(server().server.state, 'pending');
    let text = '';
    let detail = '';
    api.prompts.confirm = async (_message, d) => {
      detail = d;
      text = vscode.window.activeTextEditor?.document.uri.scheme === 'mcp-gate' ? vscode.window.activeTextEditor.document.getText() : '';
      // While the person reads, the registry gets a newer version under the same spec.
      reg.publish(fixturePackage('1.0.1', MARKER));
      return true;
    };
    assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref()), true);
    assert.match(text, /\n {2}package {5}fixture-server 1\.0\.0, sha512-\S{15}…, 0 dependencies, published less than an hour ago\n/, text);
    const integrity = /\n {14}integrity (sha512-\S+)\n/.exec(text)?.[1];
    const lockDigest = /; lock (sha256:[0-9a-f]{64})\n/.exec(text)?.[1];
    assert.ok(integrity && lockDigest, text);
    // The modal says it briefly: name, exact version, integrity shortened, dependencies, age.
    assert.match(detail, /\npackage fixture-server 1\.0\.0, sha512-\S{15}…, 0 dependencies, published less than an hour ago$/);
    const lock = approvedLock();
    assert.equal(lock?.version, '1.0.0', 'the approved lock is the one shown, not 1.0.1');
    assert.equal(lock?.integrity, integrity);
    assert.equal(lock?.digest, lockDigest);
    assert.equal(server().server.state, 'approved');
  });

  it("Update Pinned Package… shows 1.0.0 → 1.0.1 in the multi-file diff editor, the package's files first; Enter keeps 1.0.0, the approving lens records 1.0.1", async () => {
    Object.assign(api.prompts, real);
    const updates = () =>
      api.service.log
        .read()
        .filter((e) => e.kind === 'gate.approve' && /update fixture-server/.test(String((e as { detail?: string }).detail))).length;
    const seen: { front: string; files: string[]; left: string; right: string; file: string; titles: string[]; text: string }[] = [];
    const review = async () => {
      const front = await waitFor('the multi-file diff in front', () => {
        const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
        const m = tab && multiDiffOf(tab);
        return m && m.textDiffs.length >= 3 && { tab: tab!, m };
      });
      const pkg = front.m.textDiffs.find((d) => d.modified.path.endsWith('/package'))!;
      const file = front.m.textDiffs.find((d) => d.modified.path.endsWith('/package file server.js'))!;
      const w = await waitingDecision(api);
      seen.push({
        front: front.tab.label,
        files: front.m.textDiffs.map((d) => d.modified.path.split('/').pop()!),
        left: await textOf(pkg.original),
        right: await textOf(pkg.modified),
        file: await textOf(file.modified),
        titles: w.titles,
        text: w.text,
      });
      return w;
    };
    const first = Promise.resolve(vscode.commands.executeCommand<boolean>('mcpGate.updatePackage', ref()));
    const w1 = await review();
    await pressEnter();
    assert.equal(await settled(first), false, 'Enter decided nothing');
    assert.equal(approvedLock()?.version, '1.0.0', 'Enter: nothing moved');
    await w1.click(/Not now/);
    assert.equal(await first, false);
    assert.equal(approvedLock()?.version, '1.0.0', 'declined: nothing moved');
    assert.equal(updates(), 0);
    const second = Promise.resolve(vscode.commands.executeCommand<boolean>('mcpGate.updatePackage', ref()));
    const modal = answerModal(api, 'approve');
    try {
      await (await review()).click(/Approve "pinned-fixture" running fixture-server 1\.0\.1/);
      assert.equal(await second, true);
    } finally {
      modal.restore();
    }
    // The modal the Approve lens opens names the package and its integrity; "Not now" is its first button (Enter).
    assert.deepEqual(modal.shown[0].buttons, ['Not now: keep fixture-server 1.0.0', seen[0].titles[1].replace('$(check) ', '')]);
    for (const s of seen) {
      assert.match(s.front, new RegExp(`^${SERVER}: what changed \\(approved ↔ update\\)( \\(3 files\\))?$`));
      assert.deepEqual(s.files, ['package file package.json', 'package file server.js', 'package'], "the package's own files first");
      assert.deepEqual(s.titles, [
        '$(circle-slash) Not now: keep fixture-server 1.0.0',
        `$(check) Approve "${SERVER}" running fixture-server 1.0.1 · ${approvedLock()!.integrity.slice(0, 19)}…`,
      ]);
      assert.match(s.text, new RegExp(`^Update "${SERVER}": fixture-server 1\\.0\\.0 → 1\\.0\\.1\\. What changed`));
      assert.match(s.left, /^package {6}fixture-server\nversion {6}1\.0\.0\nintegrity {4}sha512-/);
      assert.match(s.right, /^package {6}fixture-server\nversion {6}1\.0\.1\nintegrity {4}sha512-/);
      assert.match(s.right, /\nfiles {8}2 of the package's own files changed/);
      assert.ok(s.file.includes(MARKER), s.file);
    }
    const lock = approvedLock();
    assert.equal(lock?.version, '1.0.1');
    assert.match(
      seen[1].right,
      new RegExp(`\\nintegrity {4}${lock!.integrity.replace(/[+/=]/g, '\\$&')}\\n`),
      'the lock approved is the one shown',
    );
    assert.deepEqual(
      reviewTabs().map((t) => t.label),
      [],
      'the review closed',
    );
    assert.equal(updates(), 1);
  });

  it('at start, a locked tree whose files and cached tarballs are gone is installed again from the registry, and that version runs', async () => {
    const cache = path.join(process.env.XDG_CACHE_HOME!, 'mcp-gate', 'packages');
    for (const d of ['trees', '_cacache']) fs.rmSync(path.join(cache, d), { recursive: true, force: true });
    await vscode.workspace
      .getConfiguration('mcpGate')
      .update(
        'rules',
        [{ action: `mcp.${SERVER}.tool.version`, decision: 'allow', project: ref().folder }],
        vscode.ConfigurationTarget.Global,
      );
    const tool = () => vscode.lm.tools.find((t) => t.name.startsWith('mcp_') && t.name.includes('pinned') && t.name.endsWith('_version'));
    for (let i = 0; i < 60 && !tool(); i++) {
      await vscode.commands.executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER)}`, {
        waitForLiveTools: true,
      });
      if (!tool()) await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(tool(), `the server started through the gate: ${vscode.lm.tools.map((t) => t.name).join(', ')}`);
    const r = await vscode.lm.invokeTool(tool()!.name, { input: {}, toolInvocationToken: undefined });
    assert.equal(r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join(''), 'fixture-server 1.0.1');
    assert.ok(fs.readdirSync(path.join(cache, 'trees')).length > 0, 'the tree is back in the package cache');
  });

  it('a resolution past its time limit stops: its work is told to stop, and the error says why', async () => {
    let stoppedWork: unknown;
    const never = (signal: AbortSignal) =>
      new Promise<never>((_r, reject) => signal.addEventListener('abort', () => reject((stoppedWork = signal.reason))));
    await assert.rejects(
      withResolution('MCP Gate: resolving (test)…', never, (why) => `"x" was not approved: resolving pkg ${why}`, 300),
      (e: Error) => e.message === '"x" was not approved: resolving pkg took longer than 1 s',
    );
    assert.ok(stoppedWork instanceof Error && /took longer than/.test(stoppedWork.message), 'the work got the stop');
  });

  it('with the registry stopped, Approve… records nothing and the error names the server, the package and what to do', async () => {
    assert.equal(await vscode.commands.executeCommand('mcpGate.reset', ref()), 1);
    assert.equal(server().server.state, 'pending');
    await reg.stop();
    let asked = false;
    api.prompts.confirm = async () => (asked = true);
    errors.length = 0;
    assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref()), false);
    assert.equal(asked, false, 'nothing was shown to approve');
    assert.equal(server().server.state, 'pending');
    assert.equal(server().server.record, undefined);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(
      errors[0],
      /^MCP Gate: "pinned-fixture" \(\.vscode\/mcp\.json\) cannot be approved: the package fixture-server cannot be resolved at http:\/\/127\.0\.0\.1:\d+\//,
    );
    assert.match(errors[0], /Nothing was recorded; check that the registry answers and has fixture-server/);
    assert.deepEqual(
      reviewTabs().map((t) => t.label),
      [],
    );
  });
});
