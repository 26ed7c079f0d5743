// Issue 11 in a real VS Code: a repository server that VS Code starts through MCP Gate's chat gateway (the
// mcpGate MCP server definition provider) runs contained. The fixture workspace's `.mcp.json` declares
// `sandbox-probe` (sandbox-probe/server.mjs, its own package folder), whose tools try to read, write and connect
// where they are told. The test approves it, allows its tools with a project-qualified rule (a repository server),
// starts it with VS Code's own workbench.mcp.startServer, finds its process by the marker argument in
// /proc/*/cmdline (a descendant of this extension host, not bwrap itself), and checks from outside that its user,
// pid, net and mount namespaces are not the extension host's; then, through vscode.lm.invokeTool, that a file
// planted in the real HOME cannot be read (HOME is an empty folder in there), that a workspace write lands in the
// real workspace, that the approved server file cannot be overwritten (mounted read-only from the verified copy),
// and that the host's loopback (a service this test opens on 127.0.0.1) and the gateway's own socket are unreachable
// without a network rule.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpGateApi } from '../../../src/extension';
import { sleep, waitFor } from './wait';
import { collisionGrouping, gatedLabel } from '../../../src/vscode/gateway-provider';

const EXTENSION_ID = 'mcp-gate.mcp-gate';
const SERVER = 'sandbox-probe';
const MARKER = '--mcp-gate-sandbox-probe';
const NAMESPACES = ['user', 'pid', 'net', 'mnt'] as const;
const trusted = process.env.MCP_GATE_VSCODE_TRUSTED !== 'false';

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Processes below this extension host whose command line carries the marker, bwrap itself left out. */
function probeProcesses(): { pid: number; argv: string[] }[] {
  const out: { pid: number; argv: string[] }[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let argv: string[];
    try {
      argv = fs
        .readFileSync(`/proc/${d}/cmdline`, 'utf8')
        .split('\0')
        .filter((a, i, all) => a !== '' || i < all.length - 1);
    } catch {
      continue;
    }
    if (!argv.includes(MARKER) || path.basename(argv[0] ?? '') === 'bwrap') continue;
    let p: number | undefined = Number(d);
    for (let hops = 0; p && p > 1 && hops < 16; hops++) {
      p = parentOf(p);
      if (p === process.pid) {
        out.push({ pid: Number(d), argv });
        break;
      }
    }
  }
  return out;
}

const ns = (pid: number | 'self', kind: string) => fs.readlinkSync(`/proc/${pid}/ns/${kind}`);
const text = (r: vscode.LanguageModelToolResult) =>
  r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : JSON.stringify(p))).join('');

(trusted ? describe : describe.skip)(
  'contained execution: a repository server started through the chat gateway runs in the sandbox',
  function () {
    this.timeout(120_000);
    let api: McpGateApi;
    let folder: string;
    let ref: { folder: string; source: string; name: string };
    let rules: unknown;
    const planted = path.join(os.homedir(), `.mcp-gate-planted-${randomUUID()}`);
    const secret = `planted-secret-${randomUUID()}`;
    const written = () => path.join(folder, `sandbox-probe-wrote-${process.pid}.txt`);
    // On 1.139 VS Code's own copy of this .mcp.json server (unrouted in the default run, and started by the own-starts
    // suite before this one) keeps its tool names registered, and the gated server's same-named tools are then not
    // listed; this suite is about containment, so it routes VS Code's own starts first (restored after), as a user does.
    let previousAccess: unknown;
    const tool = (name: string) =>
      vscode.lm.tools.find((t) => t.name.startsWith('mcp_') && t.name.includes(SERVER) && t.name.endsWith(`_${name}`));
    const call = async (name: string, input: Record<string, unknown>) =>
      text(await vscode.lm.invokeTool(tool(name)!.name, { input, toolInvocationToken: undefined }));

    before(async () => {
      api = await vscode.extensions.getExtension<McpGateApi>(EXTENSION_ID)!.activate();
      await waitFor('the gate report', () => api.service.folders()[0]?.report);
      folder = api.service.folders()[0].folder.uri.fsPath;
      ref = { folder, source: '.mcp.json', name: SERVER };
      rules = vscode.workspace.getConfiguration('mcpGate').inspect('rules')?.globalValue;
      // The real HOME of this extension host (run.mjs gives it a fresh one): what a server must never see.
      assert.ok(
        path.resolve(os.homedir()) !== '/' && !path.resolve(folder).startsWith(path.resolve(os.homedir()) + path.sep),
        'the workspace is not inside HOME',
      );
      fs.writeFileSync(planted, secret, { mode: 0o600 });
      previousAccess = vscode.workspace.getConfiguration().inspect('chat.mcp.access')?.globalValue;
      if (collisionGrouping() && previousAccess === undefined) {
        await vscode.workspace.getConfiguration().update('chat.mcp.access', 'registry', vscode.ConfigurationTarget.Global);
        await waitFor("VS Code's own copy gone from the tools", () => !vscode.lm.tools.some((t) => t.name.includes(SERVER)), 20_000).catch(
          () => undefined,
        );
      }
    });

    after(async () => {
      fs.rmSync(planted, { force: true });
      fs.rmSync(written(), { force: true });
      await vscode.commands
        .executeCommand('workbench.mcp.stopServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER)}`)
        .then(undefined, () => undefined);
      await vscode.commands.executeCommand('mcpGate.reset', ref);
      await vscode.workspace.getConfiguration('mcpGate').update('rules', rules, vscode.ConfigurationTarget.Global);
      if (collisionGrouping() && previousAccess === undefined)
        await vscode.workspace.getConfiguration().update('chat.mcp.access', undefined, vscode.ConfigurationTarget.Global);
    });

    it("VS Code starts it through the gateway; its user, pid, net and mount namespaces are not the extension host's; HOME, the approved files and the host loopback are out of reach; the workspace is writable", async () => {
      const s = api.service.servers().find((x) => x.server.name === SERVER && x.server.source === '.mcp.json');
      assert.ok(s, 'the fixture workspace declares sandbox-probe in .mcp.json');
      assert.equal(s.server.scope, 'repository');
      const confirm = api.prompts.confirm;
      api.prompts.confirm = async () => true;
      try {
        assert.equal(await vscode.commands.executeCommand('mcpGate.approve', ref), true);
      } finally {
        api.prompts.confirm = confirm;
      }
      // A repository server: its tool rule names its project.
      await vscode.workspace
        .getConfiguration('mcpGate')
        .update('rules', [{ action: `mcp.${SERVER}.tool.*`, decision: 'allow', project: folder }], vscode.ConfigurationTarget.Global);
      const def = await waitFor('the provider offering sandbox-probe', async () =>
        (await api.gateway!.provideMcpServerDefinitions()).find((d) => d.label === gatedLabel(SERVER)),
      );
      assert.ok(def);
      // A service of the host on its loopback, which the server must not reach.
      const hostService = net.createServer((c) => c.end('host service\n'));
      await new Promise<void>((r) => hostService.listen(0, '127.0.0.1', r));
      const hostPort = (hostService.address() as net.AddressInfo).port;
      await waitFor('VS Code starting sandbox-probe through the gate', async () => {
        await vscode.commands.executeCommand('workbench.mcp.startServer', `mcp-gate.mcp-gate/${gatedLabel(SERVER)}`, {
          waitForLiveTools: true,
        });
        return tool('read') && tool('write') && tool('connect');
      }).catch((e) => {
        throw new Error(`${(e as Error).message}; MCP Gate's log ends with ${JSON.stringify(api.service.log.read().slice(-4))}`);
      });
      const start = api.service.log
        .read()
        .filter((e) => e.kind === 'server.start' && (e as { server?: string }).server === SERVER)
        .at(-1) as { detail?: string } | undefined;
      assert.match(String(start?.detail), /contained: /, `server.start says it is contained: ${JSON.stringify(start)}`);

      // Its process, seen from outside.
      const procs = await waitFor(
        'the sandbox-probe process',
        () => {
          const p = probeProcesses();
          return p.length > 0 && p;
        },
        10_000,
      );
      assert.equal(procs.length, 1, JSON.stringify(procs));
      const { pid, argv } = procs[0];
      assert.ok(
        argv.some((a) => a.endsWith('sandbox-probe/server.mjs')),
        argv.join(' '),
      );
      const chain: string[] = [];
      for (let p: number | undefined = parentOf(pid); p && p !== process.pid; p = parentOf(p)) {
        chain.push(path.basename(fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0]));
      }
      assert.ok(chain.includes('bwrap'), `started by bwrap: parents ${chain.join(' < ')}`);
      for (const kind of NAMESPACES) {
        const mine = ns('self', kind);
        const its = ns(pid, kind);
        console.log(`      [sandbox] ${kind}: extension host ${mine}, sandbox-probe (pid ${pid}) ${its}`);
        assert.notEqual(its, mine, `the ${kind} namespace is the extension host's`);
      }

      // The control: it reads its own workspace file.
      assert.match(await call('read', { path: path.join(folder, 'sandbox-probe', 'package.json') }), /"name": "sandbox-probe"/);
      // HOME: the file planted in the real HOME does not exist in there.
      assert.equal(fs.readFileSync(planted, 'utf8'), secret, 'the planted file is there for the extension host');
      const read = await call('read', { path: planted });
      assert.match(read, /^failed: ENOENT/, read);
      assert.doesNotMatch(read, new RegExp(secret));
      // The approved server file is the verified copy, mounted read-only.
      const serverFile = path.join(folder, 'sandbox-probe', 'server.mjs');
      const before = fs.readFileSync(serverFile, 'utf8');
      const overwrite = await call('write', { path: serverFile, text: '// replaced by the server\n' });
      const after = fs.readFileSync(serverFile, 'utf8');
      if (after !== before) fs.writeFileSync(serverFile, before); // put the fixture back before failing
      assert.match(overwrite, /^failed: (EROFS|EACCES|EPERM|EBUSY)/, overwrite);
      assert.equal(after, before, 'the server changed its approved file in the real workspace');
      // No network rule: the host's loopback (a service listening on 127.0.0.1) is not reachable.
      const connect = await call('connect', { port: hostPort });
      hostService.close();
      assert.match(connect, /^failed: (ECONNREFUSED|ENETUNREACH|EADDRNOTAVAIL|timeout)/, connect);
      // Nor is the gateway's own socket (a private folder of the host's /tmp).
      const end = await api.gateway!.endpoint(s, 'the sandbox test');
      assert.ok(typeof end !== 'string', String(end));
      const socket = end.launch.env.MCP_GATE_GATEWAY;
      assert.ok(fs.statSync(socket).isSocket());
      assert.match(await call('read', { path: socket }), /^failed: ENOENT/);
      // The workspace is read-write: the write lands in the real folder.
      const token = `written inside the sandbox ${randomUUID()}`;
      assert.match(await call('write', { path: written(), text: token }), /^wrote /);
      assert.equal(fs.readFileSync(written(), 'utf8'), token);
      // Its calls went through the gate.
      const calls = api.service.log
        .read()
        .filter((e) => e.kind === 'mcp.request' && (e as { server?: string }).server === SERVER)
        .map((e) => (e as { about?: string }).about);
      assert.ok(calls.includes('read') && calls.includes('write') && calls.includes('connect'), calls.join(' '));
    });
  },
);
