// The transparent carrier (src/host/net/transparent-carrier.ts, issue 44 item 1), as root: in a REAL bubblewrap sandbox
// with a network door, a CGO_ENABLED=0 Go client (built here from test/fixtures/host/goprobe with `go build`) and a
// Node raw net.connect client without the shim, with every proxy variable removed, reach a peer in a network
// namespace this test creates by name (MCP Gate's DNS gives a stand-in, the door is asked for the name) and by
// address; a name no rule allows is NXDOMAIN and a logged event naming the rule; the sandbox's 127.0.0.1 is its own,
// and this machine's addresses stay unreachable even with a rule naming them. With the shim and proxychains4 on too,
// a Node fetch and curl still work, each carried once. Off (not root, nft missing) nothing changes and the
// description says why.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDoor } from '../../../../src/host/net/door';
import { Egress, type EgressEvent } from '../../../../src/host/net/egress';
import { defaultLibcCarrier } from '../../../../src/host/net/libc-carrier';
import { defaultNetShim } from '../../../../src/host/net/net-shim';
import type { Resolver } from '../../../../src/host/net/resolve';
import { buildSandbox, sandboxAvailable, type SandboxProbe } from '../../../../src/host/sandbox/sandbox';
import { StdioTransport } from '../../../../src/host/sandbox/stdio';
import {
  dnsQuestion,
  dnsReply,
  FORWARDER,
  NFT_RULES,
  serveDns,
  transparentCarrier,
  transparentDoor,
  doorTarget,
  type CarrierOff,
  type TransparentCarrier,
} from '../../../../src/host/net/transparent-carrier';
import { miniServer } from '../../mini-server';
import { DEFAULT_LIMITS } from '../../../../src/policy/sandbox-profile';
import { createNetns, type Netns } from '../../../fixtures/host/netns';
import { cleanupTemp, ROOT, tempDir } from '../../helpers';
import { decideBy, probeFolders } from '../door-fixture';

const GO_SOURCE = path.join(ROOT, 'test', 'fixtures', 'host', 'goprobe');
const NODE_PROBE = path.join(ROOT, 'test', 'fixtures', 'host', 'raw-node-probe.js');
const PEER = path.join(ROOT, 'test', 'fixtures', 'host', 'libc-peer.js');
const PEER_PORT = 8080;
/** A server of this machine on every address: a contained server must never reach it. */
const MINE_PORT = 18_431;

/** `go` from PATH or its Debian path; the test fails naming the package when it is missing. */
function findGo(): string {
  for (const p of [
    ...(process.env.PATH ?? '')
      .split(':')
      .filter(Boolean)
      .map((d) => path.join(d, 'go')),
    '/usr/bin/go',
    '/usr/lib/go/bin/go',
    '/usr/local/go/bin/go',
  ]) {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  throw new Error(
    'go is not installed, so the Go probe cannot be built: `apt-get install golang-go` (scripts/preflight.mjs tests installs it)',
  );
}

type GoResult = Record<string, { lookup: string[] | string | null; dial: string; http: string }>;
type NodeResult = Record<string, { lookup: string[] | string | null; http: string }>;

describe('host/transparent-carrier: Go, static and raw TCP clients through the door by name (root: nft redirect, forwarder, DNS)', function () {
  this.timeout(120_000);
  let available: SandboxProbe;
  let netns: Netns;
  let carrier: TransparentCarrier;
  let goProbe: string;
  let mine: http.Server;
  let mine6: http.Server;
  let v6: { host: string; peer: string };
  const transports: StdioTransport[] = [];
  const egresses: Egress[] = [];

  before(async function () {
    const p = sandboxAvailable();
    if (!p.ok) throw new Error(`bubblewrap sandbox unavailable: ${p.reason} — fix: ${p.fix}`);
    available = p;
    if (process.geteuid?.() !== 0)
      throw new Error('the transparent carrier test runs as root (the carrier needs root; the test makes a network namespace)');
    const c = transparentCarrier();
    if ('off' in c) throw new Error(`the transparent carrier is off here: ${c.off}`);
    carrier = c;
    const go = findGo();
    goProbe = path.join(fs.realpathSync(tempDir('mcp-gate-goprobe-')), 'goprobe');
    const built = spawnSync(go, ['build', '-o', goProbe, '.'], {
      cwd: GO_SOURCE,
      encoding: 'utf8',
      env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local' },
    });
    assert.equal(built.status, 0, `go build failed: ${built.stderr}`);
    netns = createNetns();
    await netns.startNode(PEER, { PEER_HOST: netns.peerAddress, PEER_PORT: String(PEER_PORT) });
    mine = http.createServer((_q, r) => r.end('this machine')).listen(MINE_PORT, '0.0.0.0');
    // IPv6 on the same link (a unique-local /64 of this run): the peer listens there too, and this machine's side
    // each group four hex digits without a leading zero: the address as written is the address as the door prints it
    const group = () => (randomBytes(2).readUInt16BE(0) | 0x1000).toString(16);
    const net6 = `fd18:${group()}:${group()}::`;
    v6 = { host: `${net6}1`, peer: `${net6}2` };
    spawnSync('ip', ['addr', 'add', `${v6.host}/64`, 'dev', netns.hostIf, 'nodad']);
    spawnSync('ip', ['-n', netns.name, 'addr', 'add', `${v6.peer}/64`, 'dev', `mgn${netns.hostIf.slice(3)}`, 'nodad']);
    await netns.startNode(PEER, { PEER_HOST: v6.peer, PEER_PORT: String(PEER_PORT) });
    mine6 = http.createServer((_q, r) => r.end('this machine')).listen({ port: MINE_PORT, host: '::', ipv6Only: true });
  });

  after(async () => {
    for (const t of transports) await t.close().catch(() => undefined);
    for (const e of egresses) e.close();
    mine?.close();
    mine6?.close();
    await netns?.destroy();
    cleanupTemp();
  });

  const resolver: Resolver = async (name) => {
    const table: Record<string, string[]> = {
      'peer.test': [netns.peerAddress],
      'denied.test': [netns.peerAddress],
      'mine.test': [netns.hostAddress],
    };
    const a = table[name];
    if (!a) throw Object.assign(new Error(`no such name ${name}`), { code: 'ENOTFOUND' });
    return a;
  };

  /** An IPv4 address of this machine other than the test's veth (eth0's, where there is one). */
  const ownAddress = () =>
    Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal && a.address !== netns.hostAddress)?.address;

  const rules = () => [
    { action: 'mcp.probe.network.test.peer', decision: 'allow' },
    { action: 'mcp.probe.network.test.mine', decision: 'allow' },
    { action: `mcp.probe.network.[${netns.peerAddress}]`, decision: 'allow' },
    { action: `mcp.probe.network.[${netns.hostAddress}]`, decision: 'allow' },
  ];

  async function run(o: {
    executable: string;
    argv: string[];
    probe: string;
    name: string;
    rules: object[];
    transparent?: TransparentCarrier | CarrierOff;
    netShim?: string;
    libc?: boolean;
    env?: Record<string, string>;
  }): Promise<{ r: unknown; events: EgressEvent[]; text: string; doorMs: number }> {
    const { workspace, home, result } = probeFolders('mcp-gate-tc-', o.probe, o.name);
    fs.chmodSync(path.join(workspace, o.name), 0o755);
    const events: EgressEvent[] = [];
    const egress = new Egress({ decide: decideBy(o.rules), onEvent: (e) => events.push(e), resolver, connectTimeoutMs: 3000 });
    egresses.push(egress);
    const c = buildSandbox(
      {
        launch: {
          executable: o.executable === '(probe)' ? path.join(workspace, o.name) : o.executable,
          argv: o.argv.map((a) => (a === '(result)' ? result : a === '(probe)' ? path.join(workspace, o.name) : a)),
          cwd: workspace,
          env: { PATH: '/usr/bin:/bin', PROBE_RESULT: result, ...o.env },
        },
        workspace,
        overlays: [],
        transparentCarrier: o.transparent,
        netShim: o.netShim,
        libcCarrier: o.libc ? (defaultLibcCarrier() ?? null) : undefined,
        profile: { network: true, unixSockets: true, extraRead: [], extraWrite: [], caches: [], home, limits: DEFAULT_LIMITS },
      },
      available,
    );
    const t0 = performance.now();
    const t = new StdioTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      env: c.env,
      seccomp: c.seccomp,
      door: (pid) => {
        const tc = o.transparent && !('off' in o.transparent) ? o.transparent : undefined;
        return tc
          ? openDoor(
              doorTarget(tc, pid),
              egress,
              undefined,
              transparentDoor(tc, egress, (why) => events.push({ outcome: 'failed', host: '(transparent carrier)', port: 0, detail: why })),
            )
          : openDoor(pid, egress);
      },
    });
    transports.push(t);
    await t.start();
    const doorMs = performance.now() - t0;
    const end = Date.now() + 90_000;
    for (;;) {
      if (fs.existsSync(result) && fs.statSync(result).size > 0) {
        await t.close().catch(() => undefined);
        return { r: JSON.parse(fs.readFileSync(result, 'utf8')), events, text: c.description.text, doorMs };
      }
      if (Date.now() > end) throw new Error(`no probe result: ${t.stderrText()}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  }

  const targets = () => [
    `peer.test:${PEER_PORT}`,
    `${netns.peerAddress}:${PEER_PORT}`,
    `denied.test:${PEER_PORT}`,
    `127.0.0.1:${MINE_PORT}`,
    `${netns.hostAddress}:${MINE_PORT}`,
    `mine.test:${MINE_PORT}`,
    `241.0.0.99:${PEER_PORT}`,
    ...(ownAddress() ? [`${ownAddress()}:${MINE_PORT}`] : []),
  ];

  it('the rules, the forwarder and the DNS answers are what was measured', () => {
    assert.match(NFT_RULES, /ip daddr 127\.0\.0\.1 udp dport 53 redirect to :1054\n/);
    assert.match(NFT_RULES, /ip daddr 127\.0\.0\.0\/8 return\n\s+meta l4proto tcp redirect to :3129/);
    assert.match(FORWARDER, /getsockopt\(\$c, 0, 80\)/);
    assert.match(FORWARDER, /CONNECT \$to HTTP\/1\.1\\r\\n/);
    const q = Buffer.from('1234010000010000000000000470656572047465737400000100 01'.replace(/ /g, ''), 'hex');
    const parsed = dnsQuestion(q);
    assert.deepEqual(parsed, { name: 'peer.test', type: 1, end: q.length });
    const a = dnsReply(q, parsed!.end, 0, '241.0.0.1');
    assert.equal(a.readUInt16BE(2) & 0x800f, 0x8000);
    assert.equal(a.readUInt16BE(6), 1);
    assert.deepEqual([...a.subarray(a.length - 4)], [241, 0, 0, 1]);
    assert.equal(dnsReply(q, parsed!.end, 3).readUInt16BE(2) & 0xf, 3);
    assert.equal(dnsQuestion(a), undefined, 'an answer is not a question');
    const noUnshare = transparentCarrier({ root: false, unshare: ['/nonexistent/unshare'] });
    assert.ok('off' in noUnshare && /unshare \(`apt-get install util-linux`\) missing/.test(noUnshare.off), JSON.stringify(noUnshare));
    const rootless = transparentCarrier({ root: false });
    assert.ok(!('off' in rootless) && rootless.unshare, `not root, the carrier runs through unshare: ${JSON.stringify(rootless)}`);
    assert.equal((transparentCarrier({ root: true }) as TransparentCarrier).unshare, undefined);
    const noNft = transparentCarrier({ root: true, nft: ['/nonexistent/nft'] });
    assert.ok('off' in noNft && /nft \(`apt-get install nftables`\) missing/.test(noNft.off), JSON.stringify(noNft));
    const noPerl = transparentCarrier({ root: true, perl: ['/nonexistent/perl'] });
    assert.ok('off' in noPerl && /perl/.test(noPerl.off), JSON.stringify(noPerl));
  });

  it('a CGO_ENABLED=0 Go client reaches the allowed peer by name and by address; a refused name is NXDOMAIN and an event naming the rule; 127.0.0.1 and this machine stay unreachable', async () => {
    const { r, events, text } = await run({
      executable: '(probe)',
      argv: ['(result)', ...targets()],
      probe: goProbe,
      name: 'goprobe',
      rules: rules(),
      transparent: carrier,
    });
    const g = r as GoResult;
    const msg = JSON.stringify({ g, events }, null, 1);
    assert.match(text, /Go, static binaries and any other TCP client carried through it by name/);
    const byName = g[`peer.test:${PEER_PORT}`];
    assert.ok(Array.isArray(byName.lookup) && byName.lookup.length === 1 && byName.lookup[0].startsWith('241.'), msg);
    assert.equal(byName.http, 'HTTP/1.1 200 OK', msg);
    assert.equal(g[`${netns.peerAddress}:${PEER_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.match(String(g[`denied.test:${PEER_PORT}`].lookup), /no such host/, msg);
    for (const t of [
      `127.0.0.1:${MINE_PORT}`,
      `${netns.hostAddress}:${MINE_PORT}`,
      `mine.test:${MINE_PORT}`,
      `241.0.0.99:${PEER_PORT}`,
      ...(ownAddress() ? [`${ownAddress()}:${MINE_PORT}`] : []),
    ]) {
      assert.notEqual(g[t].http, 'HTTP/1.1 200 OK', `${t} must stay unreachable: ${msg}`);
    }
    const seen = (outcome: string, host: string) => events.filter((e) => e.outcome === outcome && e.host === host);
    assert.equal(seen('connected', 'peer.test').length > 0, true, msg);
    assert.equal(seen('connected', netns.peerAddress).length > 0, true, msg);
    const refused = seen('blocked', 'denied.test');
    assert.equal(refused.length, 1, `one event for the refused name: ${msg}`);
    assert.equal(refused[0].permit, '{"action":"mcp.probe.network.test.denied","decision":"allow"}');
    assert.match(refused[0].detail, /not answered \(DNS inside the sandbox\)/);
    assert.ok(
      seen('blocked', netns.hostAddress).some((e) => /address of this machine/.test(e.detail)),
      msg,
    );
    assert.ok(
      seen('blocked', 'mine.test').some((e) => /address of this machine/.test(e.detail)),
      msg,
    );
    assert.ok(seen('blocked', '241.0.0.99').length === 1, `an address that is no stand-in is refused as an address: ${msg}`);
    assert.ok(!events.some((e) => e.host.startsWith('241.') && e.host !== '241.0.0.99'), `the door decides stand-ins by name: ${msg}`);
    assert.ok(!events.some((e) => e.host.startsWith('127.')), `the sandbox's own loopback never reaches the door: ${msg}`);
  });

  it('not root (unshare makes the network namespace, bubblewrap keeps it): the Go client reaches the peer by name and by address and nothing of this machine; the server keeps its own uid and cannot change the rules', async () => {
    const rootless = transparentCarrier({ root: false });
    assert.ok(!('off' in rootless) && rootless.unshare, JSON.stringify(rootless));
    const { r, events, text } = await run({
      executable: '(probe)',
      argv: ['(result)', ...targets()],
      probe: goProbe,
      name: 'goprobe',
      rules: rules(),
      transparent: rootless,
    });
    const g = r as GoResult;
    const msg = JSON.stringify({ g, events }, null, 1);
    assert.match(text, /Go, static binaries and any other TCP client carried through it by name/);
    assert.equal(g[`peer.test:${PEER_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.equal(g[`${netns.peerAddress}:${PEER_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.match(String(g[`denied.test:${PEER_PORT}`].lookup), /no such host/, msg);
    for (const t of [`127.0.0.1:${MINE_PORT}`, `${netns.hostAddress}:${MINE_PORT}`, `mine.test:${MINE_PORT}`])
      assert.notEqual(g[t].http, 'HTTP/1.1 200 OK', `${t} must stay unreachable: ${msg}`);
    // Inside: its own uid (not the namespace's root), and the rules cannot be changed from there.
    const inside = await run({
      executable: '/bin/sh',
      argv: ['-c', 'printf \'{"uid":"%s","nft":"%s"}\' "$(id -u)" "$(nft flush ruleset 2>&1 | head -c 80)" > "$1"', 'sh', '(result)'],
      probe: goProbe,
      name: 'goprobe',
      rules: rules(),
      transparent: rootless,
    });
    const seen = inside.r as { uid: string; nft: string };
    assert.equal(seen.uid, String(process.getuid?.()), JSON.stringify(seen));
    assert.match(seen.nft, /Operation not permitted|not found/, JSON.stringify(seen));
  });

  it('as a user who is not root, through the CLI: a client with no proxy setting and no preload (perl, cleared environment) reaches the allowed peer by address; this machine stays unreachable', function () {
    // The whole of MCP Gate runs as `nobody` (its door helper too): nft and ip run in unshare's namespace, where that
    // user is root, and nowhere else. The built CLI is copied where that user can read it.
    const nobody = 65534;
    const base = fs.realpathSync(tempDir('mcp-gate-tc-nobody-'));
    fs.chmodSync(base, 0o755);
    const dist = path.join(base, 'dist');
    fs.cpSync(path.join(ROOT, 'dist'), dist, { recursive: true });
    const home = path.join(base, 'home');
    const repo = path.join(base, 'repo');
    const perl = `use Socket; my ($h, $p) = @ARGV; socket(my $s, PF_INET, SOCK_STREAM, 0) or die; connect($s, sockaddr_in($p, inet_aton($h))) or do { print "refused: $!"; exit }; syswrite($s, "GET /nobody HTTP/1.0\\r\\n\\r\\n"); my $l = <$s>; print $l`;
    fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
    fs.mkdirSync(repo);
    fs.writeFileSync(
      path.join(repo, 'server.js'),
      miniServer(
        "const { spawnSync } = require('node:child_process');",
        `[${JSON.stringify(`${netns.peerAddress}:${PEER_PORT}`)}, ${JSON.stringify(`${netns.hostAddress}:${MINE_PORT}`)}].map((t) => t + ' ' + spawnSync('/usr/bin/perl', ['-e', ${JSON.stringify(perl)}, ...t.split(':')], { env: {}, encoding: 'utf8', timeout: 20000 }).stdout).join(' | ')`,
      ),
    );
    fs.writeFileSync(path.join(repo, '.mcp.json'), JSON.stringify({ mcpServers: { s: { command: 'node', args: ['server.js'] } } }));
    fs.writeFileSync(
      path.join(home, '.config', 'mcp-gate', 'config.json'),
      JSON.stringify({
        rules: [
          { action: `mcp.s.network.[${netns.peerAddress}]`, decision: 'allow', project: repo },
          { action: `mcp.s.network.[${netns.hostAddress}]`, decision: 'allow', project: repo },
          { action: 'mcp.s.tool.hello', decision: 'allow', project: repo },
        ],
      }),
    );
    spawnSync('chown', ['-R', `${nobody}:${nobody}`, home, repo]);
    const as = (args: string[]) =>
      spawnSync(process.execPath, [path.join(dist, 'cli.js'), ...args], {
        cwd: repo,
        uid: nobody,
        gid: nobody,
        env: { HOME: home, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, MCP_GATE_STORE: path.join(home, 'store') },
        encoding: 'utf8',
        timeout: 90_000,
      });
    const approved = as(['approve', 's', '--yes']);
    assert.equal(approved.status, 0, approved.stdout + approved.stderr);
    const r = as(['call', 's', 'hello']);
    const out = r.stdout + r.stderr;
    assert.match(out, new RegExp(`${netns.peerAddress.replace(/\./g, '\\.')}:${PEER_PORT} HTTP/1\\.[01] 200`), out);
    assert.doesNotMatch(out, new RegExp(`${netns.hostAddress.replace(/\./g, '\\.')}:${MINE_PORT} HTTP`), out);
    const log = as(['log']);
    assert.match(log.stdout, new RegExp(`network\\.\\S* .*host=${netns.peerAddress.replace(/\./g, '\\.')}`), log.stdout);
  });

  it("IPv6: the Go client reaches an allowed peer by its IPv6 address (redirected to the forwarder on [::1]); this machine's IPv6 address stays unreachable", async () => {
    const { r, events } = await run({
      executable: '(probe)',
      argv: ['(result)', `[${v6.peer}]:${PEER_PORT}`, `[${v6.host}]:${MINE_PORT}`, `[::1]:${MINE_PORT}`],
      probe: goProbe,
      name: 'goprobe',
      rules: [
        ...rules(),
        { action: `mcp.probe.network.[${v6.peer}]`, decision: 'allow' },
        { action: `mcp.probe.network.[${v6.host}]`, decision: 'allow' },
      ],
      transparent: carrier,
    });
    const g = r as GoResult;
    const msg = JSON.stringify({ g, events }, null, 1);
    assert.equal(g[`[${v6.peer}]:${PEER_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.notEqual(g[`[${v6.host}]:${MINE_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.notEqual(g[`[::1]:${MINE_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.ok(
      events.some((e) => e.outcome === 'connected' && e.host === v6.peer),
      msg,
    );
    assert.ok(
      events.some((e) => e.outcome === 'blocked' && e.host === v6.host && /address of this machine/.test(e.detail)),
      msg,
    );
  });

  it('a Node raw net.connect client without the shim reaches the peer by name and by address, and nothing of this machine', async () => {
    const { r, events } = await run({
      executable: fs.realpathSync('/usr/bin/node'),
      argv: ['(probe)', ...targets()],
      probe: NODE_PROBE,
      name: 'probe.js',
      rules: rules(),
      transparent: carrier,
    });
    const n = r as NodeResult;
    const msg = JSON.stringify({ n, events }, null, 1);
    assert.ok(Array.isArray(n[`peer.test:${PEER_PORT}`].lookup) && String(n[`peer.test:${PEER_PORT}`].lookup).startsWith('241.'), msg);
    assert.equal(n[`peer.test:${PEER_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.equal(n[`${netns.peerAddress}:${PEER_PORT}`].http, 'HTTP/1.1 200 OK', msg);
    assert.equal(n[`denied.test:${PEER_PORT}`].lookup, 'ENOTFOUND', msg);
    for (const t of [
      `127.0.0.1:${MINE_PORT}`,
      `${netns.hostAddress}:${MINE_PORT}`,
      `mine.test:${MINE_PORT}`,
      ...(ownAddress() ? [`${ownAddress()}:${MINE_PORT}`] : []),
    ]) {
      assert.notEqual(n[t].http, 'HTTP/1.1 200 OK', `${t} must stay unreachable: ${msg}`);
    }
    assert.ok(
      events.some((e) => e.outcome === 'connected' && e.host === 'peer.test'),
      msg,
    );
  });

  it('with the Node shim and proxychains4 on too, a Node fetch and curl reach the peer by name, each carried once (they ask the door on 127.0.0.1 themselves)', async function () {
    const shim = defaultNetShim();
    if (!shim) throw new Error('the network shim is not built (npm run build)');
    if (!defaultLibcCarrier()) throw new Error('proxychains4 is not installed (apt-get install proxychains4)');
    const script = path.join(fs.realpathSync(tempDir('mcp-gate-tc-both-')), 'both.js');
    fs.writeFileSync(
      script,
      [
        "const { execFileSync } = require('node:child_process');",
        "const fs = require('node:fs');",
        `const url = 'http://peer.test:${PEER_PORT}/both';`,
        '(async () => {',
        '  const out = {};',
        '  try { const r = await fetch(url); out.fetch = r.status + " " + (await r.text()); } catch (e) { out.fetch = String(e.cause?.code ?? e.message); }',
        "  try { out.curl = execFileSync('/usr/bin/curl', ['-sS', '--noproxy', '*', '-m', '8', url], { encoding: 'utf8', env: { ...process.env, HTTP_PROXY: '', http_proxy: '', ALL_PROXY: '', all_proxy: '' } }); } catch (e) { out.curl = String(e.stderr || e.message); }",
        '  fs.writeFileSync(process.env.PROBE_RESULT, JSON.stringify(out));',
        '})();',
      ].join('\n'),
    );
    const { r, events, text } = await run({
      executable: fs.realpathSync('/usr/bin/node'),
      argv: ['(probe)'],
      probe: script,
      name: 'both.js',
      rules: rules(),
      transparent: carrier,
      netShim: shim,
      libc: true,
    });
    const b = r as { fetch: string; curl: string };
    const msg = JSON.stringify({ b, events }, null, 1);
    assert.match(text, /MCP Gate's network shims preloaded/);
    assert.match(text, /proxychains4 preloaded/);
    assert.equal(b.fetch, '200 libc peer http: /both', msg);
    assert.equal(b.curl, 'libc peer http: /both', msg);
    const connected = events.filter((e) => e.outcome === 'connected');
    assert.deepEqual(
      connected.map((e) => e.host),
      ['peer.test', 'peer.test'],
      `two requests, two connections, each by name: ${msg}`,
    );
    assert.ok(!events.some((e) => e.outcome !== 'connected'), msg);
  });

  it('off (not root here, nft missing): nothing changes — no name resolves, nothing is reached — and the description says why', async () => {
    const off = transparentCarrier({ root: true, nft: ['/nonexistent/nft'] });
    const { r, events, text } = await run({
      executable: '(probe)',
      argv: ['(result)', `peer.test:${PEER_PORT}`, `${netns.peerAddress}:${PEER_PORT}`],
      probe: goProbe,
      name: 'goprobe',
      rules: rules(),
      transparent: off,
    });
    const g = r as GoResult;
    assert.match(text, /Go and static binaries: not carried \(nft \(`apt-get install nftables`\) missing\)/);
    assert.equal(typeof g[`peer.test:${PEER_PORT}`].lookup, 'string', JSON.stringify(g));
    assert.notEqual(g[`${netns.peerAddress}:${PEER_PORT}`].http, 'HTTP/1.1 200 OK');
    assert.deepEqual(events, []);
    const root = transparentCarrier({ root: true, perl: ['/nonexistent/perl'] });
    assert.ok('off' in root);
    const ws = fs.realpathSync(tempDir('mcp-gate-tc-ws-'));
    const c = buildSandbox(
      {
        launch: { executable: '/usr/bin/true', argv: [], cwd: ws, env: {} },
        workspace: ws,
        overlays: [],
        transparentCarrier: root,
        profile: {
          network: true,
          unixSockets: true,
          extraRead: [],
          extraWrite: [],
          caches: [],
          home: fs.realpathSync(tempDir('mcp-gate-tc-home-')),
          limits: DEFAULT_LIMITS,
        },
      },
      available,
    );
    assert.match(c.description.text, /Go and static binaries: not carried \(perl \(`apt-get install perl`\) missing\)/);
  });

  it('fails soft: when the helper cannot set the rules, the door opens all the same and an event says the carrier is off', async () => {
    const broken = { ...carrier, nft: '/usr/bin/false' };
    const { r, events } = await run({
      executable: fs.realpathSync('/usr/bin/node'),
      argv: ['(probe)', `peer.test:${PEER_PORT}`],
      probe: NODE_PROBE,
      name: 'probe.js',
      rules: rules(),
      transparent: broken,
    });
    assert.ok(
      events.some((e) => e.outcome === 'failed' && e.host === '(transparent carrier)'),
      JSON.stringify(events),
    );
    assert.notEqual((r as NodeResult)[`peer.test:${PEER_PORT}`].http, 'HTTP/1.1 200 OK');
  });

  it('the DNS socket closes with the door', async () => {
    const egress = new Egress({ decide: decideBy([]), onEvent: () => undefined });
    const s = dgram.createSocket('udp4');
    await new Promise<void>((res) => s.bind(0, '127.0.0.1', res));
    const closed = new Promise<void>((res) => s.once('close', res));
    serveDns(s, egress);
    egress.close();
    await closed;
  });
});
