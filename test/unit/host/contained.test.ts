// Contained execution end to end, through the built CLI as a user runs it: an approved repository server that
// tries to read the user's keys, write into HOME and outside the workspace, reach this machine's loopback and a
// peer in another network namespace, and leave a daemon behind. Only the workspace write succeeds; with the
// user's rule naming the peer it reaches the peer through its network door, never the host's loopback, and the log
// has both; the bare `mcp.<server>.network` refuses a private peer with the rule that would allow it; a user-scope extra read path works and the
// same field in the repository's file does not; nothing of the server remains after the CLI ends (also on
// SIGINT/SIGTERM); an opt-out runs it uncontained and is logged.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { cliAsNobody, toNobody } from '../nobody';
import { createNetns, type Netns } from '../../fixtures/host/netns';
import { CLI, cleanupTemp, cli, processesWith, ROOT, tempDir, until, world, type World } from '../helpers';

const PROBE = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'probe-server.js');
const PEER = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'tcp-peer.js');
const PEER_PORT = 9555;
const PEER_HTTP_PORT = 9556;

const remaining = (marker: string, exclude = -1) => processesWith(marker, { exclude, skipZombies: true });

function userConfig(w: World, config: Record<string, unknown>): void {
  const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(config));
}

describe('contained execution (bubblewrap) through the CLI', function () {
  this.timeout(120_000);
  let listener: ChildProcess;
  let loopbackPort = 0;
  let netns: Netns;

  before(async () => {
    // In its own process: the CLI runs with spawnSync, which would block a listener in this one.
    const probe = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    loopbackPort = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    listener = spawn(process.execPath, [PEER], {
      env: { PEER_HOST: '127.0.0.1', PEER_PORT: String(loopbackPort) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => listener.stdout!.on('data', (d: Buffer) => d.toString().includes('READY') && resolve()));
    netns = createNetns();
    await netns.startNode(PEER, { PEER_HOST: netns.peerAddress, PEER_PORT: String(PEER_PORT), PEER_HTTP_PORT: String(PEER_HTTP_PORT) });
  });
  after(async () => {
    listener.kill();
    await netns?.destroy();
    cleanupTemp();
  });

  function project(extraEntry: Record<string, unknown> = {}): {
    w: World;
    marker: string;
    args: Record<string, unknown>;
    outsideWrite: string;
  } {
    const w = world();
    w.input.loadGuard = true; // approved as the CLI pins it
    // In a folder of its own: that folder is its code (the approved copy, read-only); the rest of the workspace is data.
    fs.mkdirSync(path.join(w.project, 'srv'));
    fs.copyFileSync(PROBE, path.join(w.project, 'srv', 'probe-server.js'));
    fs.writeFileSync(
      path.join(w.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { probe: { command: 'node', args: ['srv/probe-server.js'], ...extraEntry } } }),
    );
    fs.mkdirSync(path.join(w.home, '.ssh'), { recursive: true });
    fs.mkdirSync(path.join(w.home, '.npm'), { recursive: true });
    fs.mkdirSync(path.join(w.project, '.git', 'hooks'), { recursive: true });
    fs.writeFileSync(path.join(w.project, '.git', 'config'), '[core]\n');
    fs.mkdirSync(path.join(w.project, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(w.project, '.vscode', 'settings.json'), '{}');
    fs.writeFileSync(path.join(w.home, '.ssh', 'id_test'), 'PRIVATE KEY');
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
    const marker = `mcpgate-probe-${randomBytes(6).toString('hex')}`;
    const outsideWrite = path.join(outside, 'pwned.txt');
    return {
      w,
      marker,
      outsideWrite,
      args: {
        marker,
        outsideSecret: path.join(outside, 'secret.txt'),
        outsideWrite,
        loopbackPort,
        peerHost: netns.peerAddress,
        peerPort: PEER_PORT,
        peerHttpPort: PEER_HTTP_PORT,
      },
    };
  }

  const rules = (w: World, extra: unknown[] = []) => [{ action: 'mcp.probe.tool.*', decision: 'allow', project: w.project }, ...extra];

  async function callProbe(
    w: World,
    args: Record<string, unknown>,
  ): Promise<Record<string, { ok: boolean; value?: string; code?: string }>> {
    await recordDecision(w.input, 'probe', undefined, 'approved');
    const r = cli(w, ['call', 'probe', 'probe', '--args', JSON.stringify(args)], { env: { PATH: process.env.PATH! } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const text = /\{"home".*\}/.exec(r.stdout)?.[0];
    assert.ok(text, r.stdout);
    return JSON.parse(text);
  }

  it('by default: no keys, no HOME, nothing outside the workspace, no network; a workspace that is all its closure is read-only; no daemon survives', async () => {
    const { w, marker, args, outsideWrite } = project();
    userConfig(w, { rules: rules(w) });
    const r = await callProbe(w, args);
    assert.equal(r.readSsh.ok, false, 'reads ~/.ssh');
    assert.equal(r.writeHome.ok, true, 'HOME is an empty scratch folder inside the sandbox');
    assert.equal(fs.existsSync(path.join(w.home, 'pwned')), false, 'the write must not reach the real HOME');
    assert.equal(r.writeNpm.ok, true, 'its own npm cache is writable');
    assert.equal(fs.existsSync(path.join(w.home, '.npm', 'planted.js')), false, "never the user's own ~/.npm (npx there runs on the host)");
    assert.equal(r.readOutside.ok, false, 'reads outside the workspace');
    assert.equal(r.writeOutside.ok, false, 'writes outside the workspace');
    assert.equal(fs.existsSync(outsideWrite), false);
    assert.equal(r.writeSelf.ok, false, 'the server cannot change the file it runs');
    assert.equal(r.gitHook.ok, false, 'a git hook would run on the host at the next commit');
    assert.equal(r.gitRename.ok, false, 'a replaced .git would run its config on the host at the next git status');
    assert.equal(r.vscodeTask.ok, false, 'a folder-open task would run in VS Code on the host');
    assert.equal(r.mcpConfig.ok, false, 'the MCP configuration files are read-only inside');
    assert.equal(fs.existsSync(path.join(w.project, '.git', 'hooks', 'pre-commit')), false);
    assert.equal(r.loopback.ok, false, "reaches this machine's loopback");
    assert.equal(r.peer.ok, false, 'reaches a peer in another network namespace');
    // It starts programs, so its closure is the whole workspace: it sees the approved workspace, read-only.
    assert.equal(r.writeWorkspace.ok, false, 'writes into a workspace that is all its approved code');
    assert.equal(fs.existsSync(path.join(w.project, 'written-inside.txt')), false);
    assert.ok(await until(() => remaining(marker).length === 0, 5000), `left behind: ${remaining(marker)}`);
    const log = fs.readFileSync(path.join(w.store, 'log.jsonl'), 'utf8');
    assert.match(log, /"kind":"server.start".*contained: /);
    // One line in `mcp-gate log`: the containment's parts joined by "; ", never a newline shown as \n.
    const start = log.split('\n').find((l) => l.includes('"kind":"server.start"') && l.includes('contained: '))!;
    assert.doesNotMatch(JSON.parse(start).detail, /\n/);
    assert.match(cli(w, ['log']).stdout, /server\.start .*contained: contained by bubblewrap [^\n]*; read-write: /);
  });

  it("with a rule naming the peer, the server reaches it through its door only, and never this machine's loopback; both are in the log", async () => {
    const { w, args } = project();
    userConfig(w, { rules: rules(w, [{ action: `mcp.probe.network.[${netns.peerAddress}]`, decision: 'allow', project: w.project }]) });
    const r = await callProbe(w, args);
    assert.deepEqual(r.peerProxied, { ok: true, value: 'peer' }, JSON.stringify(r.peerProxied));
    // With no proxy setting of its own: raw TCP (as a database driver connects) and Node's built-in fetch reach the
    // peer through the door too, carried by MCP Gate's network shim (src/netshim, issue 44).
    assert.deepEqual(r.peer, { ok: true, value: 'peer' }, `raw TCP: ${JSON.stringify(r.peer)}`);
    assert.deepEqual(r.peerFetch, { ok: true, value: '200 peer over http' }, `fetch: ${JSON.stringify(r.peerFetch)}`);
    assert.equal(r.loopback.ok, false, `the host's loopback: ${JSON.stringify(r.loopback)}`);
    assert.equal(r.loopbackProxied.code, 'HTTP 403', JSON.stringify(r.loopbackProxied));
    assert.equal(r.readSsh.ok, false);
    const log = cli(w, ['log']).stdout;
    assert.match(
      log,
      new RegExp(`network\\.connect server=probe host=${netns.peerAddress.replace(/\./g, '\\.')}:${PEER_HTTP_PORT} `),
      'the fetch went through the door',
    );
    assert.match(
      log,
      new RegExp(
        `network\\.connect server=probe host=${netns.peerAddress.replace(/\./g, '\\.')}:${PEER_PORT} address=${netns.peerAddress.replace(/\./g, '\\.')} .*— mcp\\.probe\\.network\\.\\[${netns.peerAddress.replace(/\./g, '\\.')}\\] is allowed by rule`,
      ),
    );
    assert.match(
      log,
      new RegExp(
        `network\\.blocked server=probe host=127\\.0\\.0\\.1:${loopbackPort} .*— .*127\\.0\\.0\\.1 is an address no rule opens to a contained server`,
      ),
    );
  });

  it("as an unprivileged user (nobody) the door opens the same way: the named peer through it, never the host's loopback", async () => {
    const { w, args } = project();
    userConfig(w, { rules: rules(w, [{ action: `mcp.probe.network.[${netns.peerAddress}]`, decision: 'allow', project: w.project }]) });
    await recordDecision(w.input, 'probe', undefined, 'approved');
    toNobody(w);
    const run = cliAsNobody(w, ['call', 'probe', 'probe', '--args', JSON.stringify(args)]);
    assert.equal(run.code, 0, run.out);
    const r = JSON.parse(/\{"home".*\}/.exec(run.stdout)![0]);
    assert.deepEqual(r.peerProxied, { ok: true, value: 'peer' }, JSON.stringify(r.peerProxied));
    assert.deepEqual(r.peer, { ok: true, value: 'peer' }, `raw TCP, through the network shim: ${JSON.stringify(r.peer)}`);
    assert.deepEqual(
      r.peerFetch,
      { ok: true, value: '200 peer over http' },
      `fetch, through the network shim: ${JSON.stringify(r.peerFetch)}`,
    );
    assert.equal(r.loopback.ok, false);
    assert.equal(r.loopbackProxied.code, 'HTTP 403', JSON.stringify(r.loopbackProxied));
  });

  it('with the bare mcp.<server>.network rule, a private peer is refused, and the log names the rule that would allow it', async () => {
    const { w, args } = project();
    userConfig(w, { rules: rules(w, [{ action: 'mcp.probe.network', decision: 'allow', project: w.project }]) });
    const r = await callProbe(w, args);
    assert.equal(r.peerProxied.code, 'HTTP 403', JSON.stringify(r.peerProxied));
    assert.match(r.peerProxied.value!, /private addresses are refused: only a rule that names the host reaches a private address/);
    // Raw TCP and the built-in fetch, carried by the network shim, are refused the same way, and say which rule would allow it.
    const allow = JSON.stringify({ action: `mcp.probe.network.[${netns.peerAddress}]`, decision: 'allow', project: w.project }).replace(
      /[[\]{}.]/g,
      (c) => `\\${c}`,
    );
    assert.equal(r.peer.code, 'ECONNREFUSED', JSON.stringify(r.peer));
    assert.match(
      r.peer.value!,
      new RegExp(
        `through MCP Gate's network door refused: HTTP/1\\.1 403 Forbidden — .*private addresses are refused.*the rule ${allow} would allow it`,
      ),
    );
    assert.equal(r.peerFetch.ok, false, JSON.stringify(r.peerFetch));
    assert.match(r.peerFetch.value!, new RegExp(`^fetch failed: .*HTTP/1\\.1 403 Forbidden — .*the rule ${allow} would allow it`));
    assert.equal(r.loopback.ok, false, "never the host's loopback, whatever the rule");
    const events = fs
      .readFileSync(path.join(w.store, 'log.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const blocked = events.find((e) => e.kind === 'network.blocked' && e.host === `${netns.peerAddress}:${PEER_PORT}`);
    assert.ok(blocked, JSON.stringify(events.filter((e) => String(e.kind).startsWith('network'))));
    assert.equal(
      blocked.rule,
      JSON.stringify({ action: `mcp.probe.network.[${netns.peerAddress}]`, decision: 'allow', project: w.project }),
    );
  });

  it('a network rule without "project" (for a user server of that name) gives the repository server no network', async () => {
    const { w, args } = project();
    userConfig(w, { rules: [...rules(w), { action: 'mcp.probe.network', decision: 'allow' }] });
    const r = await callProbe(w, args);
    assert.equal(r.peer.ok, false);
  });

  it('a user-scope extra read path works; the same field in the repository file does not', async () => {
    const extra = path.join(tempDir(), 'data.txt');
    fs.writeFileSync(extra, 'shared data');
    const repo = project({ sandbox: { read: [extra] }, sandboxEnabled: false });
    userConfig(repo.w, { rules: rules(repo.w) });
    const r1 = await callProbe(repo.w, { ...repo.args, extraRead: extra });
    assert.equal(r1.extraRead.ok, false, 'the repository cannot widen its own sandbox');

    const user = project();
    userConfig(user.w, { rules: rules(user.w), sandbox: { servers: [{ server: 'probe', project: user.w.project, read: [extra] }] } });
    const r2 = await callProbe(user.w, { ...user.args, extraRead: extra });
    assert.equal(r2.extraRead.ok, true, JSON.stringify(r2.extraRead));
    assert.equal(r2.extraRead.value, 'shared data');
  });

  it('the workspace .git is hidden (code git fetch brought in is never pinned); granting it as a read path shows it, read-only', async () => {
    const hidden = project();
    userConfig(hidden.w, { rules: rules(hidden.w) });
    const gitConfig = path.join(hidden.w.project, '.git', 'config');
    const r1 = await callProbe(hidden.w, { ...hidden.args, extraRead: gitConfig });
    assert.equal(r1.extraRead.ok, false, JSON.stringify(r1.extraRead));
    // What the start logs says so, and how to show it.
    assert.match(
      fs.readFileSync(path.join(hidden.w.store, 'log.jsonl'), 'utf8'),
      /\.git \(hidden: grant it as a read or write path to show it\)/,
    );

    const granted = project();
    const git = path.join(granted.w.project, '.git');
    userConfig(granted.w, {
      rules: rules(granted.w),
      sandbox: { servers: [{ server: 'probe', project: granted.w.project, read: [git] }] },
    });
    const r2 = await callProbe(granted.w, { ...granted.args, extraRead: path.join(git, 'config') });
    assert.equal(r2.extraRead.ok, true, JSON.stringify(r2.extraRead));
    assert.equal(r2.extraRead.value, '[core]\n');
    assert.equal(r2.gitHook.ok, false, 'granted as a read path, it stays read-only');
  });

  it('the opt-out runs it uncontained, and each start is logged', async () => {
    const { w, args } = project();
    userConfig(w, { rules: rules(w), sandbox: { servers: [{ server: 'probe', project: w.project, off: true }] } });
    const r = await callProbe(w, args);
    assert.equal(r.readSsh.ok, true, "uncontained: it has the user's authority (that is what the opt-out means)");
    const log = fs.readFileSync(path.join(w.store, 'log.jsonl'), 'utf8');
    assert.match(log, /"kind":"sandbox.off".*runs uncontained: your opt-out/);
  });

  it('an invalid sandbox setting refuses the start, naming the item', async () => {
    const { w } = project();
    userConfig(w, { rules: rules(w), sandbox: { servers: [{ server: 'probe', read: ['relative/path'] }] } });
    await recordDecision(w.input, 'probe', undefined, 'approved');
    const r = cli(w, ['tools', 'probe'], { env: { PATH: process.env.PATH! } });
    assert.match(
      r.stdout + r.stderr,
      /your sandbox settings cannot be used, so no server that should be contained starts: .*sandbox\.servers\[0\]\.read: "relative\/path" is not an absolute path/,
    );
  });

  it("get and approve show the launch plan, the closure (small files in full) and the sandbox it will get; doctor reports the profile and ignores a repository's own sandbox fields", async () => {
    const { w } = project({ sandboxEnabled: false, sandbox: { network: true } });
    userConfig(w, { rules: rules(w, [{ action: 'mcp.probe.network', decision: 'allow', project: w.project }]) });
    const shown = cli(w, ['approve', 'probe'], { input: 'no\n' });
    assert.match(shown.stdout, /launch plan \(what will be executed\):\n {4}program {3}\/\S+\/node/);
    // It starts programs (a daemon, for the test below): it runs on the approved snapshot, and the preview says why.
    assert.match(shown.stdout, /runs the workspace as it is when you approve: a read-only copy, never the live files/);
    assert.match(
      shown.stdout,
      /why not checked file by file: srv\/probe-server\.js:\d+ spawn\(\) starts a program, which can run any file of the workspace/,
    );
    assert.match(shown.stdout, /files it names \(content pinned\): 1 file, \d+ bytes/);
    assert.match(
      shown.stdout,
      /workspace: the workspace as approved, read-only \(a copy made from what the approval kept, verified against it; never the live files\)/,
    );
    assert.match(shown.stdout, /file srv\/probe-server\.js {2}\d+ bytes {2}sha256 [0-9a-f]{64}\n {6}\| \/\/ A hostile repository server/);
    assert.match(shown.stdout, /sandbox {5}contained \(bubblewrap\)/);
    assert.match(
      shown.stdout,
      /network: any public host, through its own network namespace, whose one way out is MCP Gate's filtering proxy \(never this machine/,
    );
    const doctor = cli(w, ['doctor']);
    assert.match(doctor.stdout, /bubblewrap \S+ \S+: available/);
    assert.match(
      doctor.stdout,
      /probe \(\.mcp\.json\): contained \(bubblewrap\); network: any public host, through its own network namespace/,
    );
    assert.match(doctor.stdout, /ignored: "sandbox", "sandboxEnabled" in \.mcp\.json — a repository cannot set its own sandbox/);
    userConfig(w, { sandbox: { servers: [{ server: 'probe', project: w.project, off: true }] } });
    assert.match(cli(w, ['doctor']).stdout, /probe \(\.mcp\.json\): NOT contained: your opt-out in .*config\.json:1/);
  });

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} to the CLI mid-call leaves no process of the server`, async () => {
      const { w, marker } = project();
      userConfig(w, { rules: rules(w) });
      await recordDecision(w.input, 'probe', undefined, 'approved');
      const env: Record<string, string> = { PATH: process.env.PATH!, MCP_GATE_STORE: w.store };
      for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
      const child = spawn(process.execPath, [CLI, 'call', 'probe', 'hang', '--args', JSON.stringify({ marker }), '--project', w.project], {
        env,
        stdio: 'ignore',
      });
      assert.ok(await until(() => remaining(marker, child.pid).length > 0, 20_000), 'the server started its daemon');
      child.kill(sig);
      await new Promise((r) => child.once('exit', r));
      assert.ok(await until(() => remaining(marker).length === 0, 5000), `left behind after ${sig}: ${remaining(marker)}`);
      assert.equal(evaluateGate(w.input).servers[0].state, 'approved');
    });
  }
});
