// own-starts: what VS Code itself (1.112, 1.139: every expectation is vscode-own's for vscode.version) lists and
// starts from the workspace, outside MCP Gate, under the settings this run uses — and that MCP Gate's provider keeps working under the settings that stop it. Every expectation
// comes from src/trust/sources/vscode-own.ts (fed with VS Code's own setting values, read here with inspect()), so the same
// tests hold in the default runs (VS Code starts the fixture's server itself) and in a run with
// --settings '{"chat.mcp.access":"registry"}' (it does not). Findings: docs/vscode-own-starts.md.
//
// How VS Code is observed from the extension host, without any proposed API:
// - listed: `workbench.mcp.showConfiguration <collection> <server id>` opens the declaring file with the server's
//   entry selected only when VS Code has that definition (a root .mcp.json server, in 1.139, has no position: the
//   file opens without a selection). Listing alone proves nothing about starting: in 1.139 a switch to "registry"
//   at runtime left a .vscode/mcp.json definition listed, so every prediction is also checked by starting;
// - started: `workbench.mcp.startServer <id> {errorOnUserInteraction}` either throws for a prompt it would show,
//   or spawns the stdio server as a child of this extension host process (read from /proc);
// - MCP Gate: its provider's definitions, its mcp.request log, and the tools VS Code adds to vscode.lm.tools.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import type { ServerReport } from '../../../src/trust/report';
import {
  ACCESS_KEY,
  ALLOWED_KEY,
  COLLISION_KEY,
  DISCOVERY_KEY,
  LEGACY_ENABLED_KEY,
  vscodeOwnStarts,
  vscodeReads,
  type InspectedSetting,
  type OwnMechanism,
  type OwnStart,
  type VsCodeOwnReport,
} from '../../../src/trust/sources/vscode-own';
import { sleep, waitFor as waitLonger } from './wait';

const waitFor = <T>(what: string, f: () => T | undefined | false | Promise<T | undefined | false>, ms = 20_000) => waitLonger(what, f, ms);

const EXTENSION_ID = 'mcp-gate.mcp-gate';
const trusted = process.env.MCP_GATE_VSCODE_TRUSTED !== 'false';
const log = (msg: string) => console.log(`      [own-starts] ${msg}`);

let api: McpGateApi;
let folder: vscode.WorkspaceFolder;
const gateFolder = () => api.service.folders()[0];

// ---- VS Code's settings, as plain data for vscodeOwnStarts ---------------------------------------------------
function inspected(key: string): InspectedSetting | undefined {
  const i = vscode.workspace.getConfiguration().inspect(key);
  if (!i) return undefined;
  return {
    defaultValue: i.defaultValue,
    globalValue: i.globalValue,
    workspaceValue: i.workspaceValue,
    workspaceFolderValue: i.workspaceFolderValue,
  };
}
// The effective access was "all" at some time in this window (vscode-own needs it for VS Code 1.139).
let accessWasAll = false;
function expected(): VsCodeOwnReport {
  const report = gateFolder().report!;
  const x = vscodeOwnStarts({
    report,
    settings: {
      [ACCESS_KEY]: inspected(ACCESS_KEY),
      [DISCOVERY_KEY]: inspected(DISCOVERY_KEY),
      [LEGACY_ENABLED_KEY]: inspected(LEGACY_ENABLED_KEY),
      [COLLISION_KEY]: inspected(COLLISION_KEY),
      [ALLOWED_KEY]: inspected(ALLOWED_KEY),
    },
    workspaceTrusted: vscode.workspace.isTrusted,
    folderIndex: folder.index,
    vscodeVersion: vscode.version,
    accessWasAllInWindow: accessWasAll,
  });
  if (x.access.value === 'all') accessWasAll = true;
  return x;
}
const reads = () => vscodeReads(vscode.version);
async function setUser(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration().update(key, value, vscode.ConfigurationTarget.Global);
  await waitFor(
    `${key} = ${JSON.stringify(value)}`,
    () => JSON.stringify(vscode.workspace.getConfiguration().inspect(key)?.globalValue) === JSON.stringify(value),
    5000,
  );
}

// ---- observing VS Code ---------------------------------------------------------------------------------------
/** Stdio servers running as children of this extension host whose command line names the workspace folder. */
function serverProcesses(): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ').trim();
      // A root .mcp.json server's arguments may be relative: VS Code runs it in the folder. Then one of them must be
      // a file of the folder (VS Code's own ripgrep also runs there, with none).
      let cwd = '';
      try {
        cwd = fs.readlinkSync(`/proc/${d}/cwd`);
      } catch {
        // not ours to read
      }
      const relativeFile = () =>
        fs
          .readFileSync(`/proc/${d}/cmdline`, 'utf8')
          .split('\0')
          .slice(1)
          .some((a) => {
            try {
              return !!a && !path.isAbsolute(a) && fs.statSync(path.join(folder.uri.fsPath, a)).isFile();
            } catch {
              return false;
            }
          });
      if (cmd.includes(folder.uri.fsPath) || (cwd === folder.uri.fsPath && relativeFile())) out.push({ pid: Number(d), cmd });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * Runs workbench.mcp.showConfiguration and returns the 0-based line VS Code selected in `file`, -1 when it opened
 * the file without a selection (it knows the collection, not the server), undefined when it opened nothing.
 */
async function shownLine(collection: string, id: string, file: vscode.Uri): Promise<number | undefined> {
  // Forget any remembered selection in the file, so that only a selection VS Code sets is seen.
  const ed = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file));
  ed.selection = new vscode.Selection(0, 0, 0, 0);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await vscode.commands.executeCommand('workbench.mcp.showConfiguration', collection, id);
  // The editor opens after the command returns; on a loaded machine (CI runs three windows at once) it was seen to
  // take over 1.5 s, which read as "not listed".
  const end = Date.now() + 4000;
  while (Date.now() < end) {
    const active = vscode.window.activeTextEditor;
    if (active && active.document.uri.fsPath === file.fsPath) {
      await sleep(100);
      const line = active.selection.isEmpty && active.selection.start.line === 0 ? -1 : active.selection.start.line;
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      return line;
    }
    await sleep(50);
  }
  return undefined;
}

/** Polls until VS Code lists (or no longer lists) the server, as expected; returns what was seen last. */
async function listedAs(s: ServerReport, collection: string, id: string, expectListed: boolean): Promise<number | undefined> {
  const entryLine = s.position.line - 1;
  let seen: number | undefined;
  // VS Code re-reads its definitions after a settings switch through its own watchers: seen to take over 20 s in CI.
  const end = Date.now() + (expectListed ? 45_000 : 20_000);
  do {
    seen = await shownLine(collection, id, vscode.Uri.file(s.file));
    if ((seen === entryLine) === expectListed) return seen;
    await sleep(250);
  } while (Date.now() < end);
  return seen;
}

interface StartOutcome {
  error?: string;
  spawned: { pid: number; cmd: string }[];
  stoppedByVsCode: boolean;
}

/** Asks VS Code to start one of its own servers (no dialog: a prompt it would show comes back as an error). */
async function startByVsCode(id: string, retryMs: number): Promise<StartOutcome> {
  const before = new Set(serverProcesses().map((p) => p.pid));
  const end = Date.now() + retryMs;
  let error: string | undefined;
  let spawned: { pid: number; cmd: string }[] = [];
  do {
    try {
      await vscode.commands.executeCommand('workbench.mcp.startServer', id, { waitForLiveTools: true, errorOnUserInteraction: true });
      error = undefined;
    } catch (e) {
      error = (e as Error)?.message ?? String(e);
    }
    const settle = Date.now() + 1500;
    while (Date.now() < settle && !spawned.length) {
      spawned = serverProcesses().filter((p) => !before.has(p.pid));
      await sleep(100);
    }
  } while (!spawned.length && !error && Date.now() < end);
  let stoppedByVsCode = false;
  if (spawned.length) {
    await vscode.commands.executeCommand('workbench.mcp.stopServer', id);
    const gone = Date.now() + 10_000;
    while (Date.now() < gone && !stoppedByVsCode) {
      stoppedByVsCode = !serverProcesses().some((p) => spawned.some((s) => s.pid === p.pid));
      await sleep(100);
    }
  }
  return { error, spawned, stoppedByVsCode };
}

const gateRequests = () => api.service.log.read().filter((e) => e.kind === 'mcp.request').length;
const gateStarts = () => api.service.log.read().filter((e) => e.kind === 'server.start').length;

const echoCalls = () => api.service.log.read().filter((e) => e.kind === 'mcp.request' && (e as { about?: string }).about === 'echo').length;

/**
 * VS Code names MCP tools mcp_<label>_<tool> and numbers clashing labels (fixture-echo, fixture-echo2, …) in an
 * order of its own, so with its own server of the same name a tool name can lead to either. Calls every echo tool
 * (until `done`) and sorts the names by whether the call reached MCP Gate (its log) or not.
 */
async function callEchoTools(
  done: (r: { through: Set<string>; outside: Set<string> }) => boolean,
): Promise<{ through: Set<string>; outside: Set<string> }> {
  const r = { through: new Set<string>(), outside: new Set<string>() };
  await waitFor('tool calls', async () => {
    for (const tool of vscode.lm.tools.filter((t) => t.name.startsWith('mcp_') && t.name.endsWith('_echo'))) {
      const before = echoCalls();
      const result = await vscode.lm.invokeTool(tool.name, { input: { text: `to ${tool.name}` }, toolInvocationToken: undefined });
      assert.equal(result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join(''), `to ${tool.name}`);
      const viaGate = await waitFor('', () => echoCalls() > before, 2000).catch(() => false);
      (viaGate ? r.through : r.outside).add(tool.name);
    }
    return done(r);
  }).catch((e) => {
    throw new Error(
      `${(e as Error).message}: through the gate ${[...r.through]}; outside it ${[...r.outside]}; tools ${vscode.lm.tools.filter((t) => t.name.startsWith('mcp_')).map((t) => t.name)}`,
    );
  });
  return r;
}

/** The workspace's .vscode/mcp.json servers, from MCP Gate's report. */
const workspaceServers = () => (gateFolder().report?.servers ?? []).filter((s) => s.kind === 'vscode' && s.scope === 'repository');
/** The workspace's root .mcp.json servers (read by VS Code itself from 1.139), from MCP Gate's report. */
const rootServers = () => (gateFolder().report?.servers ?? []).filter((s) => s.kind === 'claude' && s.scope === 'repository');

/** VS Code's collection and server id for a workspace server of this mechanism. */
function vscodeIdOf(s: ServerReport, mechanism: OwnMechanism): { collection: string; id: string } {
  const collection = mechanism === 'workspace-root-.mcp.json' ? `workspace-dot-mcp.${folder.index}` : `mcp.config.ws${folder.index}`;
  return { collection, id: `${collection}.${s.name}` };
}

/**
 * Asks VS Code to start its own id of a workspace server and checks the outcome against the prediction: started
 * without a prompt, a process MCP Gate did not start; or waiting for Workspace Trust; or — not predicted — no
 * process at all, whatever else VS Code says (tried for `quietMs`: a late start fails the test too).
 */
async function assertStartAsPredicted(s: ServerReport, id: string, predicted: OwnStart | undefined, quietMs = 0): Promise<StartOutcome> {
  const stateBefore = s.state;
  const [req0, start0] = [gateRequests(), gateStarts()];
  let r = await startByVsCode(id, predicted && !predicted.needs.length ? 20_000 : 0);
  for (const end = Date.now() + quietMs; !predicted && !r.spawned.length && Date.now() < end;) r = await startByVsCode(id, 0);
  // Right after a settings switch VS Code may list the definition before its registry can start it (startServer
  // then returns quietly, 1.112 in CI): ask again until the trust prompt is what it answers, or 10 s pass.
  for (const end = Date.now() + 10_000; predicted?.needs.length && !r.error && !r.spawned.length && Date.now() < end;)
    r = await startByVsCode(id, 0);
  log(
    `startServer ${id}: error=${r.error ?? 'none'} spawned=${JSON.stringify(r.spawned)} stoppedByVsCode=${r.stoppedByVsCode}; predicted ${predicted ? (predicted.uncertain ? 'maybe started' : predicted.needs.length ? `needs ${predicted.needs}` : 'started') : 'not started'}`,
  );
  if (predicted?.uncertain) {
    // vscode-own says VS Code may start it (a quirk measured in 1.139): either outcome is what it reports; a prompt
    // in a trusted window is not.
    if (!predicted.needs.length) assert.ok(r.spawned.length || !/User interaction required/.test(r.error ?? ''), r.error);
  } else if (predicted && !predicted.needs.length) {
    assert.equal(predicted.vscodeId, id);
    assert.equal(r.error, undefined, 'VS Code wanted a prompt');
    assert.equal(r.spawned.length, 1, 'VS Code did not spawn the server');
    assert.ok(r.spawned[0].cmd.includes(String(s.definition?.command ?? '')), r.spawned[0].cmd);
    assert.ok(r.stoppedByVsCode, 'workbench.mcp.stopServer did not end the process');
    assert.equal(gateStarts(), start0, 'MCP Gate started something meanwhile');
    assert.equal(gateRequests(), req0, 'a request went through MCP Gate meanwhile');
    assert.equal(
      (gateFolder().report?.servers ?? []).find((w) => w.name === s.name && w.source === s.source)?.state,
      stateBefore,
      "MCP Gate's decision did not change: VS Code ran it regardless",
    );
  } else if (predicted) {
    // Restricted Mode: VS Code would ask for Workspace Trust first (a modal dialog), and starts nothing until then.
    assert.deepEqual(predicted.needs, ['workspace-trust']);
    assert.match(r.error ?? '', /User interaction required: workspaceTrust/);
    assert.deepEqual(r.spawned, []);
  } else {
    assert.deepEqual(r.spawned, [], 'VS Code started a server vscode-own says it does not start');
  }
  return r;
}

describe("own-starts: VS Code's own MCP starts from the workspace, outside MCP Gate", function () {
  this.timeout(180_000);

  before(async () => {
    api = await vscode.extensions.getExtension<McpGateApi>(EXTENSION_ID)!.activate();
    folder = vscode.workspace.workspaceFolders![0];
    await waitFor('the gate report', () => gateFolder()?.report);
    const x = expected();
    log(
      `VS Code ${vscode.version}; trusted=${vscode.workspace.isTrusted}; ${ACCESS_KEY}=${JSON.stringify(x.access)}; discovery=${JSON.stringify(Object.values(x.discovery).map((d) => `${d.key}=${d.value}@${d.scope}`))}`,
    );
    log(
      `predicted own starts: ${JSON.stringify(x.starts.map((s) => [s.source, s.name, s.mechanism, s.vscodeId, s.needs]))}; overrides: ${JSON.stringify(x.overrides)}`,
    );
  });

  it('VS Code declares the MCP settings with the defaults measured for its version (access "all", no discovery of the sources vscode-own knows, autostart "newAndOutdated")', () => {
    const c = vscode.workspace.getConfiguration();
    const row = reads();
    log(`VS Code ${vscode.version} is treated as ${row.measured}: ${JSON.stringify(row)}`);
    assert.equal(c.inspect(ACCESS_KEY)?.defaultValue, 'all');
    assert.deepEqual(c.inspect(DISCOVERY_KEY)?.defaultValue, Object.fromEntries(row.discovery.map((d) => [d, false])));
    assert.equal(c.inspect(COLLISION_KEY)?.defaultValue, row.collisionBehavior ? 'disable' : undefined);
    assert.equal(c.inspect('chat.mcp.autostart')?.defaultValue, 'newAndOutdated');
    assert.equal(
      c.inspect(LEGACY_ENABLED_KEY)?.defaultValue,
      undefined,
      'chat.mcp.enabled is no longer declared (migrated to chat.mcp.access)',
    );
  });

  it('VS Code lists each .vscode/mcp.json server as mcp.config.ws<i>.<name> exactly when vscode-own predicts it', async () => {
    const x = expected();
    const servers = workspaceServers();
    assert.ok(servers.length > 0, 'the workspace declares no .vscode/mcp.json server');
    for (const s of servers) {
      const predicted = x.starts.find((p) => p.name === s.name && p.mechanism === 'workspace-folder-mcp.json');
      const id = `mcp.config.ws${folder.index}.${s.name}`;
      const seen = await listedAs(s, `mcp.config.ws${folder.index}`, id, !!predicted);
      log(
        `showConfiguration ${id}: ${seen === undefined ? 'nothing opened' : `${path.basename(s.file)} line ${seen + 1}`}; predicted ${predicted ? 'listed' : 'not listed'}`,
      );
      if (predicted) {
        assert.equal(predicted.vscodeId, id);
        assert.equal(seen, s.position.line - 1, `VS Code does not list ${id}`);
      } else {
        assert.equal(seen, undefined, `VS Code lists ${id} although ${ACCESS_KEY} is ${JSON.stringify(x.access.raw)}`);
      }
    }
  });

  it('MCP Gate\'s provider still reaches chat under these settings: VS Code starts an approved server through the gate (or, with access "none", not at all)', async function () {
    if (!trusted) this.skip(); // In Restricted Mode the provider offers no repository server (gate.test.ts).
    const x = expected();
    const s = workspaceServers()[0];
    const own = x.starts.find((p) => p.name === s.name && p.mechanism === 'workspace-folder-mcp.json');
    const ref = { folder: folder.uri.fsPath, source: s.source, name: s.name };
    // Earlier suites may have left user rules and a secrets block (gate.test.ts binds one to this server): this test
    // sets its own and puts theirs back.
    const rules = vscode.workspace.getConfiguration('mcpGate').inspect('rules')?.globalValue;
    const secrets = vscode.workspace.getConfiguration('mcpGate').inspect('secrets')?.globalValue;
    const confirm = api.prompts.confirm;
    api.prompts.confirm = async () => true;
    try {
      assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref), true);
    } finally {
      api.prompts.confirm = confirm;
    }
    try {
      await setUser('mcpGate.secrets', undefined);
      await setUser('mcpGate.rules', [{ action: `mcp.${s.name}.tool.*`, decision: 'allow', project: folder.uri.fsPath }]); // a repository server: the rule names its project
      const defs = await waitFor('the provider offering the server', async () => {
        const d = await api.gateway!.provideMcpServerDefinitions();
        return d.length > 0 && d;
      });
      const gateId = `${EXTENSION_ID}/${defs[0].label}`;
      const req0 = gateRequests();
      if (!x.providerReachesChat) {
        for (let i = 0; i < 10; i++)
          await vscode.commands.executeCommand('workbench.mcp.startServer', gateId, {
            waitForLiveTools: true,
            errorOnUserInteraction: true,
          });
        await sleep(2000);
        assert.equal(gateRequests(), req0, `${ACCESS_KEY} "none": VS Code must not start MCP Gate's server`);
        return;
      }
      await waitFor(
        'VS Code starting the server through the gate',
        async () => {
          // Stopped first: VS Code may still count a connection from an earlier approval (gate.test.ts) as running.
          await vscode.commands.executeCommand('workbench.mcp.stopServer', gateId);
          await vscode.commands.executeCommand('workbench.mcp.startServer', gateId, {
            waitForLiveTools: true,
            errorOnUserInteraction: true,
          });
          return gateRequests() > req0;
        },
        30_000,
      ).catch((e) => {
        throw new Error(`${(e as Error).message}; MCP Gate's log ends with ${JSON.stringify(api.service.log.read().slice(-3))}`);
      });
      const first = await callEchoTools((r) => r.through.size > 0);
      log(
        `${ACCESS_KEY}=${JSON.stringify(x.access.raw)}: started ${gateId} through MCP Gate; calls through the gate: ${[...first.through]}; outside it: ${[...first.outside].join(', ') || 'none'}`,
      );
      assert.equal(first.through.size, 1, "not exactly one tool name leads to MCP Gate's server");
      if (own && !own.needs.length) {
        // VS Code's own server of the same name: VS Code starts it beside the gate's, and a tool name leads to it,
        // outside the gate — a chat that picks that name bypasses MCP Gate's policy and log.
        assert.equal((await startByVsCode(own.vscodeId!, 20_000)).spawned.length, 1, 'VS Code did not start its own server');
        const second = await callEchoTools((r) => r.outside.size > 0);
        log(
          `after VS Code started its own ${own.vscodeId}: calls through the gate: ${[...second.through].join(', ') || 'none'}; outside it: ${[...second.outside].join(', ') || 'none'}`,
        );
        assert.ok(second.outside.size > 0, "no tool name leads to VS Code's own server");
        await vscode.commands.executeCommand('workbench.mcp.stopServer', own.vscodeId);
      } else {
        assert.deepEqual([...first.outside], [], "with VS Code's own start of the server off, every call goes through MCP Gate");
      }
    } finally {
      await vscode.commands.executeCommand('mcpGate.reset', ref);
      await setUser('mcpGate.rules', rules);
      await setUser('mcpGate.secrets', secrets);
    }
  });

  it('VS Code starts the server itself — a process MCP Gate did not start, no prompt — or, as predicted, does not', async () => {
    const x = expected();
    for (const s of workspaceServers()) {
      const predicted = x.starts.find((p) => p.name === s.name && p.mechanism === 'workspace-folder-mcp.json');
      await assertStartAsPredicted(s, vscodeIdOf(s, 'workspace-folder-mcp.json').id, predicted, predicted ? 0 : 3000);
    }
  });

  it("the folder's root .mcp.json: VS Code lists and starts each server as workspace-dot-mcp.<i>.<name> exactly when vscode-own predicts it (1.139 yes, 1.112 never)", async () => {
    const x = expected();
    const servers = rootServers();
    assert.ok(servers.length > 0, 'the workspace declares no .mcp.json server');
    for (const s of servers) {
      const predicted = x.starts.find((p) => p.name === s.name && p.source === s.source && p.mechanism === 'workspace-root-.mcp.json');
      const { collection, id } = vscodeIdOf(s, 'workspace-root-.mcp.json');
      // Its definitions carry no position: a listed server's file opens without a selection (-1).
      const end = Date.now() + (predicted ? 20_000 : 3000);
      let seen: number | undefined;
      do {
        seen = await shownLine(collection, id, vscode.Uri.file(s.file));
      } while ((seen !== undefined) !== !!predicted && Date.now() < end);
      log(
        `showConfiguration ${id}: ${seen === undefined ? 'nothing opened' : `${path.basename(s.file)} opened${seen < 0 ? ' without a selection' : ` at line ${seen + 1}`}`}; predicted ${predicted ? 'listed' : 'not listed'}`,
      );
      assert.equal(seen !== undefined, !!predicted, `VS Code ${seen === undefined ? 'does not list' : 'lists'} ${id}`);
      await assertStartAsPredicted(s, id, predicted, predicted ? 0 : 3000);
    }
  });

  it('switching chat.mcp.access at user scope changes what VS Code starts as vscode-own predicts ("all" starts, "registry" does not — unless the workspace sets its own value)', async () => {
    const original = vscode.workspace.getConfiguration().inspect(ACCESS_KEY)?.globalValue;
    const s = workspaceServers()[0];
    const { collection, id } = vscodeIdOf(s, 'workspace-folder-mcp.json');
    try {
      for (const value of ['all', 'registry', 'all']) {
        await setUser(ACCESS_KEY, value);
        const x = expected();
        const predicted = x.starts.find((p) => p.vscodeId === id);
        const seen = await listedAs(s, collection, id, !!predicted);
        const listed = seen === s.position.line - 1;
        log(
          `user ${ACCESS_KEY}=${value} (effective ${JSON.stringify(x.access)}): ${id} ${listed ? 'listed' : 'not listed'}; predicted ${predicted ? 'listed' : 'not listed'}`,
        );
        // Listed whenever predicted; a definition VS Code keeps listing after the switch (1.139) must still not start.
        if (predicted && !predicted.uncertain) assert.ok(listed, `VS Code does not list ${id}`);
        else if (!predicted) assert.ok(!listed, `VS Code lists ${id}`);
        await assertStartAsPredicted(s, id, predicted, predicted ? 0 : 3000);
        // Unless a workspace value wins, the user's value decides (or, after "all" in this window, may not: 1.139).
        if (x.access.scope === 'user') assert.equal(!!predicted && !predicted.uncertain, value === 'all');
      }
    } finally {
      await setUser(ACCESS_KEY, original);
    }
  });

  it('discovery (Claude Desktop\'s config): VS Code lists it only with access "all" and discovery on, and asks per server before starting it', async function () {
    // Only inside run.mjs, whose XDG_CONFIG_HOME is a fresh folder of the run: never write a real user's config.
    const results = process.env.MCP_GATE_VSCODE_RESULTS;
    const xdg = process.env.XDG_CONFIG_HOME;
    if (!results || !xdg || !path.resolve(xdg).startsWith(path.dirname(path.resolve(results)) + path.sep)) this.skip();
    const config = vscode.Uri.file(path.join(xdg!, 'Claude', 'claude_desktop_config.json'));
    fs.mkdirSync(path.dirname(config.fsPath), { recursive: true });
    fs.writeFileSync(
      config.fsPath,
      JSON.stringify({ mcpServers: { 'desktop-echo': { command: 'node', args: [path.join(folder.uri.fsPath, 'no-such-server.mjs')] } } }),
    );
    // VS Code's id for it: claude-desktop.<remote authority>.<name>; in code-server the authority is vscode.env.remoteName.
    const collection = `claude-desktop.${vscode.env.remoteName}`;
    const original = vscode.workspace.getConfiguration().inspect(DISCOVERY_KEY)?.globalValue;
    try {
      for (const discoveryOn of [false, true]) {
        await setUser(DISCOVERY_KEY, discoveryOn ? { 'claude-desktop': true } : undefined);
        const x = expected();
        const predicted = x.access.value === 'all' && x.discovery['claude-desktop'].value;
        const end = Date.now() + (predicted ? 20_000 : 3000);
        let seen: number | undefined;
        do {
          seen = await shownLine(collection, `${collection}.desktop-echo`, config);
        } while ((seen !== undefined) !== predicted && Date.now() < end);
        log(
          `discovery claude-desktop=${x.discovery['claude-desktop'].value} ${ACCESS_KEY}=${x.access.value}: ${seen === undefined ? 'not listed' : 'listed'}; predicted ${predicted ? 'listed' : 'not listed'}`,
        );
        assert.equal(seen !== undefined, predicted);
        if (predicted) {
          const r = await startByVsCode(`${collection}.desktop-echo`, 10_000);
          log(`startServer ${collection}.desktop-echo: ${r.error}`);
          assert.match(r.error ?? '', /User interaction required: serverTrust/);
          assert.deepEqual(r.spawned, []);
        }
      }
    } finally {
      await setUser(DISCOVERY_KEY, original);
      fs.rmSync(path.dirname(config.fsPath), { recursive: true, force: true });
    }
  });
  it('chat.mcp.access "registry" also hides the user\'s own hand-written servers in the profile mcp.json (import them into MCP Gate instead)', async function () {
    // The profile of this run (run.mjs --user-data-dir), found from MCP Gate's globalStorage folder inside it.
    const results = process.env.MCP_GATE_VSCODE_RESULTS;
    const userDir = path.dirname(path.dirname(api.service.storeDir));
    if (!results || !path.resolve(userDir).startsWith(path.dirname(path.resolve(results)) + path.sep)) this.skip();
    const file = vscode.Uri.file(path.join(userDir, 'mcp.json'));
    assert.equal(fs.existsSync(file.fsPath), false, "the run's profile already has an mcp.json");
    fs.writeFileSync(
      file.fsPath,
      JSON.stringify(
        { servers: { 'user-echo': { type: 'stdio', command: 'node', args: [path.join(folder.uri.fsPath, 'no-such-server.mjs')] } } },
        null,
        2,
      ),
    );
    // code-server keeps the profile on the server: VS Code 1.112's collection is the remote user's; 1.139 reads a
    // default profile's mcp.json as the local user's (it asks for the remote profile's only for other profiles).
    // Both are asked: listed = either lists it.
    const collections = vscode.env.remoteName ? ['mcp.config.usrremote', 'mcp.config.usrlocal'] : ['mcp.config.usrlocal'];
    const original = vscode.workspace.getConfiguration().inspect(ACCESS_KEY)?.globalValue;
    try {
      for (const value of ['all', 'registry']) {
        await setUser(ACCESS_KEY, value);
        const predicted = expected().access.value === 'all';
        // 1.139 picks up a new profile mcp.json through its file watcher, seen to take over 20 s on a loaded machine.
        const end = Date.now() + (predicted ? 45_000 : 3000);
        let seen: number | undefined;
        let by = '';
        do {
          for (const collection of collections) {
            seen = await shownLine(collection, `${collection}.user-echo`, file);
            by = collection;
            if (seen === 2) break;
          }
        } while ((seen === 2) !== predicted && Date.now() < end);
        log(
          `user ${ACCESS_KEY}=${value}: ${seen === 2 ? `${by}.user-echo listed` : `user-echo not listed (asked ${collections.join(', ')})`}; predicted ${predicted ? 'listed' : 'not listed'}`,
        );
        // VS Code 1.139, in a window whose access was switched at runtime before (the first-run and routing suites
        // do), was seen not to list a new profile mcp.json under "all" at all: MCP Gate then reports a start that does
        // not happen (more, never less), which is the safe side. Listed where MCP Gate predicts not listed still fails.
        if (predicted && seen !== 2 && vscodeReads(vscode.version).registryAfterAllKeepsWorkspaceServers) {
          log('1.139 after runtime switches: not listed although predicted; MCP Gate over-reports here');
          continue;
        }
        assert.equal(seen === 2, predicted);
      }
    } finally {
      await setUser(ACCESS_KEY, original);
      fs.rmSync(file.fsPath, { force: true });
    }
  });
});
