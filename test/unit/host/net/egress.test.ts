// The network door of a contained server, as an attacker meets it: a REAL bubblewrap sandbox with the door
// (src/host/sandbox/sandbox.ts + src/host/sandbox/stdio.ts + src/host/net/egress.ts), the user's rules through the real policy code
// (parseRules, mayReachNetwork), a peer host in a network namespace this test creates (198.18.N.2) and the host's
// own services on 127.0.0.1, ::1, an abstract socket and the host side of the veth pair (an address of this
// machine). A hostile server (test/fixtures/sandbox/egress-probe.js) tries each way out; every outcome is asserted
// together with the event the door reports for it. Names resolve through an injected resolver (peer.test,
// rebind.test, …), as a DNS server under an attacker's control would answer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildSandbox, sandboxAvailable, type SandboxProbe } from '../../../../src/host/sandbox/sandbox';
import { openDoor } from '../../../../src/host/net/door';
import { Egress, type EgressEvent } from '../../../../src/host/net/egress';
import { StdioTransport } from '../../../../src/host/sandbox/stdio';
import { mayReachNetwork } from '../../../../src/policy/decide';
import { parseRules, ruleText } from '../../../../src/policy/rules';
import { DEFAULT_LIMITS } from '../../../../src/policy/sandbox-profile';
import type { Resolver } from '../../../../src/host/net/resolve';
import { createNetns, type Netns } from '../../../fixtures/host/netns';
import { cleanupTemp, ROOT, tempDir } from '../../helpers';
import { decideBy, probeFolders } from '../door-fixture';

const PROBE = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'egress-probe.js');
const PEER = path.join(ROOT, 'test', 'fixtures', 'host', 'egress-peer.js');
const NODE = fs.realpathSync(process.execPath);
const PEER_PORT = 8080;
const ABSTRACT = `mcp-gate-egress-test-${process.pid}`;

type Via = { status: number; body: string; code?: string };
type Direct = { ok: boolean; value?: string; code?: string };
interface ProbeResult {
  error?: string;
  proxyEnv: Record<string, string | undefined>;
  hostLoopback4: Direct;
  hostLoopback6: Direct;
  peerDirect?: Direct;
  abstract?: Direct;
  dns: Direct;
  via: Record<string, Via>;
  devices: Record<string, unknown>;
}

describe("host/egress: a contained server's network door (bubblewrap, a peer in a network namespace)", function () {
  this.timeout(120_000);
  let available: SandboxProbe;
  let netns: Netns;
  let host4: net.Server;
  let host6: net.Server;
  let hostVeth: net.Server;
  let abstract: net.Server;
  const hits: string[] = [];
  const transports: StdioTransport[] = [];
  const egresses: Egress[] = [];

  const listen = async (where: string, port: number | string, host?: string) => {
    const s = net.createServer((sock) => {
      hits.push(where);
      sock.on('error', () => undefined);
      sock.end(`host service ${where}`);
    });
    await new Promise<void>((r) => (host === undefined ? s.listen(port, r) : s.listen(port as number, host, r)));
    return s;
  };

  before(async () => {
    const p = sandboxAvailable();
    if (!p.ok) throw new Error(`bubblewrap sandbox unavailable: ${p.reason} — fix: ${p.fix}`);
    available = p;
    netns = createNetns();
    await netns.startNode(PEER, { PEER_HOST: netns.peerAddress, PEER_PORT: String(PEER_PORT) });
    host4 = await listen('127.0.0.1', 0, '127.0.0.1');
    host6 = await listen('::1', 0, '::1');
    hostVeth = await listen(netns.hostAddress, PEER_PORT, netns.hostAddress);
    abstract = await listen('abstract', `\0${ABSTRACT}`);
  });

  after(async () => {
    for (const t of transports) await t.close().catch(() => undefined);
    for (const e of egresses) e.close();
    for (const s of [host4, host6, hostVeth, abstract]) s?.close();
    await netns?.destroy();
    cleanupTemp();
  });

  /** Runs the probe contained with a door deciding by `rules`; returns what it saw and the door's events. */
  async function run(
    rules: object[],
    targets: { name: string; host: string; port?: number; get?: boolean; path?: string; raw?: string }[],
    resolver: Resolver,
    env: Record<string, string> = {},
  ): Promise<{ r: ProbeResult; events: EgressEvent[] }> {
    const { workspace, home, result } = probeFolders('mcp-gate-egress-', PROBE, 'probe.js');
    const events: EgressEvent[] = [];
    const egress = new Egress({ decide: decideBy(rules), onEvent: (e) => events.push(e), resolver, connectTimeoutMs: 3000 });
    egresses.push(egress);
    const c = buildSandbox(
      {
        launch: {
          executable: NODE,
          argv: [path.join(workspace, 'probe.js')],
          cwd: workspace,
          env: {
            PATH: '/usr/bin:/bin',
            PROBE_RESULT: result,
            PROBE_TARGETS: JSON.stringify(targets.map((t) => ({ port: PEER_PORT, ...t }))),
            PROBE_HOST_PORT: String((host4.address() as net.AddressInfo).port),
            PROBE_HOST_PORT6: String((host6.address() as net.AddressInfo).port),
            PROBE_PEER: netns.peerAddress,
            PROBE_PEER_PORT: String(PEER_PORT),
            PROBE_ABSTRACT: ABSTRACT,
            ...env,
          },
        },
        workspace,
        overlays: [],
        profile: { network: true, unixSockets: true, extraRead: [], extraWrite: [], caches: [], home, limits: DEFAULT_LIMITS },
      },
      available,
    );
    assert.equal(c.door, true);
    assert.ok(!c.args.includes('--share-net'), "never the host's network namespace");
    const t = new StdioTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      env: c.env,
      seccomp: c.seccomp,
      door: (pid) => openDoor(pid, egress),
    });
    transports.push(t);
    await t.start();
    const end = Date.now() + 60_000;
    for (;;) {
      try {
        const text = fs.readFileSync(result, 'utf8');
        if (text.endsWith('}')) return { r: JSON.parse(text), events };
      } catch {
        // not yet
      }
      if (Date.now() > end) throw new Error(`no probe result: ${t.stderrText()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const peerResolver = (answers: Record<string, string[][]>): Resolver => {
    const asked = new Map<string, number>();
    return async (name) => {
      const list = answers[name];
      if (!list) throw Object.assign(new Error(`no such name ${name}`), { code: 'ENOTFOUND' });
      const n = asked.get(name) ?? 0;
      asked.set(name, n + 1);
      return list[Math.min(n, list.length - 1)];
    };
  };

  it('a rule naming a host lets the server reach it through the door, and nothing of this machine whatever the rules say; each refusal is an event with the rule that would allow it', async () => {
    const peer = () => netns.peerAddress;
    const resolver = peerResolver({
      'peer.test': [[peer()]],
      'evil.test': [[peer()]],
      'loop.test': [['127.0.0.1']],
      'rebind.test': [[peer()], ['127.0.0.1']],
      'meta.test': [['169.254.169.254']],
    });
    const rules = [
      { action: 'mcp.probe.network.test.peer', decision: 'allow' },
      { action: 'mcp.probe.network.test.rebind', decision: 'allow' },
      { action: 'mcp.probe.network.test.loop', decision: 'allow' },
      { action: 'mcp.probe.network.test.meta', decision: 'allow' },
      { action: `mcp.probe.network.[${netns.hostAddress}]`, decision: 'allow' },
      { action: 'mcp.probe.network.[169.254.169.254]', decision: 'allow' },
      { action: 'mcp.probe.network.test.nowhere', decision: 'allow' },
    ];
    const hostPort = (host4.address() as net.AddressInfo).port;
    const { r, events } = await run(
      rules,
      [
        { name: 'named', host: 'peer.test' },
        { name: 'namedGet', host: 'peer.test', get: true },
        { name: 'unnamedName', host: 'evil.test' },
        { name: 'unnamedLiteral', host: peer() },
        { name: 'loopName', host: 'loop.test', port: hostPort },
        { name: 'loopLiteral', host: '127.0.0.1', port: hostPort },
        { name: 'loop6Literal', host: '::1', port: (host6.address() as net.AddressInfo).port },
        { name: 'rebindFirst', host: 'rebind.test' },
        { name: 'rebindSecond', host: 'rebind.test' },
        { name: 'metadataName', host: 'meta.test', port: 80 },
        { name: 'metadataLiteral', host: '169.254.169.254', port: 80 },
        { name: 'thisMachine', host: netns.hostAddress },
        { name: 'unknownName', host: 'nowhere.test' },
        { name: 'theDoorItself', host: '127.0.0.1', port: 3128 },
        { name: 'zoneId', host: 'x', raw: 'CONNECT [::1%lo]:80 HTTP/1.1\r\nHost: x\r\n\r\n' },
        // Hostile answers of an allowed host: none may take the gate down or leave the connection hanging.
        { name: 'statusZero', host: 'peer.test', get: true, path: '/zero' },
        { name: 'upgrade', host: 'peer.test', get: true, path: '/upgrade' },
        { name: 'truncated', host: 'peer.test', get: true, path: '/truncated' },
      ],
      resolver,
    );
    assert.equal(r.error, undefined);
    assert.match(r.proxyEnv.HTTPS_PROXY ?? '', /^http:\/\/127\.0\.0\.1:3128$/);
    assert.deepEqual(r.devices, { null: true, urandom: true, pts: false }, 'its /dev: the usual devices, no pseudo-terminals');
    // No way out but the door: not the host's loopback (v4, v6), not its abstract socket, no route, no DNS.
    assert.equal(r.hostLoopback4.ok, false, JSON.stringify(r.hostLoopback4));
    assert.equal(r.hostLoopback6.ok, false, JSON.stringify(r.hostLoopback6));
    assert.equal(r.abstract!.ok, false, `an abstract socket of the host (Unix sockets allowed here): ${JSON.stringify(r.abstract)}`);
    assert.deepEqual(r.peerDirect, { ok: false, code: 'ENETUNREACH' }, 'a direct connection has no route');
    assert.equal(r.dns.ok, false, 'no DNS inside');
    // Through the door: the named host, by CONNECT and by an absolute-form GET.
    assert.equal(r.via.named.status, 200);
    assert.equal(r.via.named.body, 'peer: hello');
    assert.equal(r.via.namedGet.status, 200);
    assert.match(r.via.namedGet.body, /peer http: \/from-sandbox/);
    // Refused: a host no rule names (by name, by IP literal), this machine (loopback by name and literal, v4 and v6,
    // its own interface address even with a rule naming it), metadata (named or not), the rebound second answer.
    for (const k of [
      'unnamedName',
      'unnamedLiteral',
      'loopName',
      'loopLiteral',
      'loop6Literal',
      'rebindSecond',
      'metadataName',
      'metadataLiteral',
      'thisMachine',
    ]) {
      assert.equal(r.via[k].status, 403, `${k}: ${JSON.stringify(r.via[k])}`);
    }
    assert.equal(r.via.rebindFirst.status, 200, 'the first answer was the named peer');
    assert.equal(r.via.unknownName.status, 502, 'a named host that does not resolve');
    assert.equal(r.via.theDoorItself.status, 403);
    assert.equal(r.via.zoneId.status, 400);
    assert.match(events.find((e) => e.host === '(malformed CONNECT)')?.detail ?? '', /CONNECT "\[::1%lo\]:80" was refused/);
    assert.equal(r.via.statusZero.status, 502, JSON.stringify(r.via.statusZero));
    assert.match(r.via.statusZero.body, /answered what cannot be passed on/);
    assert.equal(r.via.upgrade.status, 502, JSON.stringify(r.via.upgrade));
    assert.equal(r.via.truncated.code, undefined, `a body cut short ends the connection: ${JSON.stringify(r.via.truncated)}`);
    assert.deepEqual(hits, [], `a host service was reached: ${hits.join(', ')}`);
    // The events: one per connection, with the host, and the rule that would allow a host no rule names.
    const blocked = (host: string) => events.filter((e) => e.outcome === 'blocked' && e.host === host);
    assert.equal(
      events.filter((e) => e.outcome === 'connected' && e.host === 'peer.test').length,
      5,
      'CONNECT, GET and the three hostile answers',
    );
    assert.equal(events.filter((e) => e.outcome === 'connected' && e.host === 'rebind.test' && e.address === peer()).length, 1);
    assert.equal(blocked('evil.test')[0].permit, '{"action":"mcp.probe.network.test.evil","decision":"allow"}');
    assert.match(
      blocked('evil.test')[0].detail,
      /^mcp\.probe\.network\.test\.evil is refused: no rule names this host, and mcp\.probe\.network is denied/,
    );
    assert.equal(blocked(peer())[0].permit, `{"action":"mcp.probe.network.[${peer()}]","decision":"allow"}`);
    for (const h of ['loop.test', '127.0.0.1', '::1', 'rebind.test', 'meta.test', '169.254.169.254', netns.hostAddress]) {
      assert.ok(blocked(h).length >= 1, `${h}: ${JSON.stringify(events)}`);
      assert.ok(
        blocked(h).every((e) => e.permit === undefined),
        `no rule allows ${h}`,
      );
    }
    assert.match(blocked('loop.test')[0].detail, /127\.0\.0\.1 is loopback/);
    assert.match(blocked('rebind.test')[0].detail, /127\.0\.0\.1 is loopback/);
    assert.match(blocked('meta.test')[0].detail, /169\.254\.169\.254 is cloud metadata service.*refused always/);
    assert.match(blocked(netns.hostAddress)[0].detail, /an address of this machine/);
    assert.equal(events.find((e) => e.host === 'nowhere.test')?.outcome, 'failed');
  });

  it('the bare rule mcp.<server>.network reaches public hosts only: a private address needs a rule that names it (said in the event)', async () => {
    const resolver = peerResolver({ 'peer.test': [[netns.peerAddress]], 'public.test': [['192.0.2.10']] });
    const { r, events } = await run(
      [{ action: 'mcp.probe.network', decision: 'allow' }],
      [
        { name: 'privateName', host: 'peer.test' },
        { name: 'privateLiteral', host: netns.peerAddress },
        { name: 'public', host: 'public.test', port: 9 },
      ],
      resolver,
    );
    assert.equal(r.via.privateName.status, 403, JSON.stringify(r.via.privateName));
    assert.equal(r.via.privateLiteral.status, 403);
    assert.match(
      r.via.privateName.body,
      /only a rule that names the host reaches a private address \(the rule \{"action":"mcp\.probe\.network\.test\.peer","decision":"allow"\} would allow it\)/,
    );
    const blocked = events.find((e) => e.host === 'peer.test')!;
    assert.equal(blocked.outcome, 'blocked');
    assert.equal(blocked.permit, '{"action":"mcp.probe.network.test.peer","decision":"allow"}');
    // A public address is let through (this machine has no route to one: the door tries and reports it).
    assert.equal(r.via.public.status, 502, JSON.stringify(r.via.public));
    assert.equal(events.find((e) => e.host === 'public.test')?.outcome, 'failed');
    assert.equal(events.find((e) => e.host === 'public.test')?.address, '192.0.2.10');
  });

  it("a deny rule for a host beats the bare allow; a wildcard names a domain's hosts", async () => {
    const resolver = peerResolver({
      'a.peer.test': [[netns.peerAddress]],
      'b.peer.test': [[netns.peerAddress]],
      'public.test': [['192.0.2.10']],
    });
    const { r, events } = await run(
      [
        { action: 'mcp.probe.network', decision: 'allow' },
        { action: 'mcp.probe.network.test.peer.*', decision: 'allow' },
        { action: 'mcp.probe.network.test.peer.b', decision: 'deny' },
        { action: 'mcp.probe.network.test.public', decision: 'deny' },
      ],
      [
        { name: 'a', host: 'a.peer.test' },
        { name: 'b', host: 'b.peer.test' },
        { name: 'public', host: 'public.test', port: 9 },
      ],
      resolver,
    );
    assert.equal(r.via.a.status, 200, JSON.stringify(r.via.a));
    assert.equal(r.via.b.status, 403);
    assert.equal(r.via.public.status, 403);
    assert.match(
      events.find((e) => e.host === 'b.peer.test')!.detail,
      /is denied by rule \{"action":"mcp\.probe\.network\.test\.peer\.b","decision":"deny"\}/,
    );
  });

  it('an address of this machine on an interface without carrier (not listed by os.networkInterfaces) is refused even when a rule names it', async function () {
    const n = 64 + (process.pid % 64);
    const dev = `mgd${process.pid.toString(36)}`;
    const address = `198.18.${n}.1`;
    // A veth pair whose other end stays down: this end has no carrier, and its address is still this machine's.
    execFileSync('ip', ['link', 'add', dev, 'type', 'veth', 'peer', 'name', `${dev}p`]);
    try {
      execFileSync('ip', ['addr', 'add', `${address}/30`, 'dev', dev]);
      execFileSync('ip', ['link', 'set', dev, 'up']);
      assert.ok(
        !Object.values(os.networkInterfaces())
          .flat()
          .some((a) => a?.address === address),
        'os.networkInterfaces() lists it after all: the case is not made',
      );
      const listener = await listen(`down ${address}`, PEER_PORT + 1, address);
      try {
        const { r, events } = await run(
          [{ action: `mcp.probe.network.[${address}]`, decision: 'allow' }],
          [{ name: 'down', host: address, port: PEER_PORT + 1 }],
          peerResolver({}),
        );
        assert.equal(r.via.down.status, 403, JSON.stringify(r.via.down));
        assert.match(events.find((e) => e.host === address)?.detail ?? '', /is an address of this machine/);
        assert.ok(!hits.includes(`down ${address}`), 'the host service on the down interface was reached');
      } finally {
        listener.close();
      }
    } finally {
      execFileSync('ip', ['link', 'del', dev]);
    }
  });

  it('floods: the first 500 events one by one, then a summary, and a new host reached is named all the same; connections to hosts, pipelined requests and request heads are bounded', async () => {
    const events: EgressEvent[] = [];
    const resolver = peerResolver({ 'peer.test': [[netns.peerAddress]] });
    const egress = new Egress({
      decide: decideBy([{ action: 'mcp.probe.network.test.peer', decision: 'allow' }]),
      onEvent: (e) => events.push(e),
      resolver,
      headTimeoutMs: 500,
      maxUpstreams: 4,
    });
    egresses.push(egress);
    // A plain listener on the host's loopback stands in for a door (serve takes any listener).
    const door = net.createServer();
    await new Promise<void>((r) => door.listen(0, '127.0.0.1', r));
    egress.serve(door);
    const port = (door.address() as net.AddressInfo).port;
    const open = (first: string) => {
      const s = net.connect(port, '127.0.0.1', () => s.write(first));
      let got = '';
      s.on('data', (d) => (got += d));
      s.on('error', () => undefined);
      return {
        s,
        text: () => got,
        status: new Promise<string>((resolve) => {
          const check = () => (got.includes('\r\n') ? resolve(got.split('\r\n')[0]) : undefined);
          s.on('data', check);
          s.on('close', () => resolve(got.split('\r\n')[0]));
        }),
        closed: new Promise<void>((r) => s.on('close', () => r())),
      };
    };
    for (let i = 0; i < 600; i += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, k) => open(`CONNECT flood${i + k}.test:443 HTTP/1.1\r\nHost: x\r\n\r\n`).status),
      );
      assert.ok(
        answers.every((a) => a === 'HTTP/1.1 403 Forbidden'),
        answers.find((a) => a !== 'HTTP/1.1 403 Forbidden'),
      );
    }
    assert.equal(events.length, 500);
    // Past the budget, a host reached for the first time is still logged by name.
    const tunnels = Array.from({ length: 4 }, () => open(`CONNECT peer.test:${PEER_PORT} HTTP/1.1\r\nHost: x\r\n\r\n`));
    assert.deepEqual(await Promise.all(tunnels.map((t) => t.status)), Array(4).fill('HTTP/1.1 200 Connection Established'));
    assert.equal(events.length, 501);
    assert.deepEqual([events[500].outcome, events[500].host], ['connected', 'peer.test']);
    // Four tunnels are open: a fifth connection to a host is refused, whatever the door holds.
    assert.equal(await open(`CONNECT peer.test:${PEER_PORT} HTTP/1.1\r\nHost: x\r\n\r\n`).status, 'HTTP/1.1 503 Service Unavailable');
    for (const t of tunnels) t.s.destroy();
    await Promise.all(tunnels.map((t) => t.closed));
    await new Promise((r) => setTimeout(r, 100));
    // Pipelining: more than 8 requests before their answers close the connection.
    const piped = open(Array.from({ length: 20 }, () => `GET http://peer.test:${PEER_PORT}/p HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    await piped.closed;
    assert.ok((piped.text().match(/HTTP\/1\.1 /g) ?? []).length < 20, 'all 20 pipelined requests were answered');
    // A request head that never ends is cut off.
    const t0 = Date.now();
    await open('CONNECT slow.test:443 HTTP/1.1\r\nHost: x\r\n').closed;
    assert.ok(Date.now() - t0 < 5000, `a head that never ends was held ${Date.now() - t0} ms`);
    egress.close();
    const summary = events.filter((e) => e.host === '(several)');
    assert.ok(
      summary.some(
        (e) =>
          e.outcome === 'blocked' &&
          /^\d+ more connections refused and \d+ failed since the last line \(not logged one by one after the first 500 events of this start\); hosts among them: /.test(
            e.detail,
          ),
      ),
      JSON.stringify(summary),
    );
    assert.ok(
      Number(/^(\d+) more connections refused/.exec(summary.find((e) => e.outcome === 'blocked')!.detail)![1]) >= 102,
      'the floods, the fifth tunnel and the pipelining are counted',
    );
  });

  it('a server cannot make a user namespace of its own in a sandbox with a door (the seccomp filter, in place of --disable-userns)', async () => {
    const base = fs.realpathSync(tempDir('mcp-gate-egress-userns-'));
    const workspace = path.join(base, 'w');
    fs.mkdirSync(workspace);
    const egress = new Egress({ decide: decideBy([]), onEvent: () => undefined });
    egresses.push(egress);
    const script =
      "const {spawnSync}=require('child_process');const r=spawnSync('unshare',['--user','true'],{encoding:'utf8'});require('fs').writeFileSync('out.json',JSON.stringify({status:r.status,stderr:r.stderr}))";
    const c = buildSandbox(
      {
        launch: { executable: NODE, argv: ['-e', script], cwd: workspace, env: { PATH: '/usr/bin:/bin' } },
        workspace,
        overlays: [],
        profile: {
          network: true,
          unixSockets: false,
          extraRead: [],
          extraWrite: [],
          caches: [],
          home: path.join(base, 'h'),
          limits: DEFAULT_LIMITS,
        },
      },
      available,
    );
    assert.ok(!c.args.includes('--disable-userns'));
    const t = new StdioTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      env: c.env,
      seccomp: c.seccomp,
      door: (pid) => openDoor(pid, egress),
    });
    transports.push(t);
    const exited = new Promise<void>((r) => (t.onexit = () => r()));
    await t.start();
    await exited;
    const out = JSON.parse(fs.readFileSync(path.join(workspace, 'out.json'), 'utf8'));
    assert.notEqual(out.status, 0);
    assert.match(out.stderr, /Operation not permitted/);
  });

  it('a door that cannot open keeps the server from starting at all, with the reason', async () => {
    const base = fs.realpathSync(tempDir('mcp-gate-egress-fail-'));
    const workspace = path.join(base, 'w');
    fs.mkdirSync(workspace);
    const marker = path.join(workspace, 'ran');
    const c = buildSandbox(
      {
        launch: {
          executable: NODE,
          argv: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`],
          cwd: workspace,
          env: { PATH: '/usr/bin:/bin' },
        },
        workspace,
        overlays: [],
        profile: {
          network: true,
          unixSockets: false,
          extraRead: [],
          extraWrite: [],
          caches: [],
          home: path.join(base, 'h'),
          limits: DEFAULT_LIMITS,
        },
      },
      available,
    );
    const t = new StdioTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      env: c.env,
      seccomp: c.seccomp,
      door: async () => {
        throw new Error('no door today');
      },
    });
    await assert.rejects(t.start(), /the server was not started: no door today/);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(fs.existsSync(marker), false, 'the server ran without its door');
    // A real door that cannot open (no such process) says why and what to do.
    const egress = new Egress({ decide: decideBy([]), onEvent: () => undefined });
    egresses.push(egress);
    await assert.rejects(
      openDoor(2 ** 22 + 1, egress),
      /the network door could not be opened: nsenter ended \(exit \d+\): .*; the server is not started without it: .*or remove the network rules for this server/,
    );
  });
});
