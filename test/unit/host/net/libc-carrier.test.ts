// The libc carrier (src/host/net/libc-carrier.ts, issue 44 item 1): in a REAL bubblewrap sandbox with a network door,
// libc clients with every proxy variable removed — psycopg2 (libpq) and curl — reach a peer in a network namespace
// this test creates, by name (the door is asked `CONNECT name:port` and decides by the rules) and by address; a host
// the rules refuse is "connection refused"; with no rule nothing is reached; without proxychains4 the old behaviour
// (no name resolves) stays; the daemon ends with the server. Names resolve through an injected resolver, as in
// test/unit/host/net/egress.test.ts.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openDoor } from '../../../../src/host/net/door';
import { authority, Egress, type EgressEvent } from '../../../../src/host/net/egress';
import {
  CARRIER_SCRIPT,
  defaultLibcCarrier,
  findProxychains,
  PROXYCHAINS_CONF,
  PROXYCHAINS_MOUNT,
  type LibcCarrier,
} from '../../../../src/host/net/libc-carrier';
import type { Resolver } from '../../../../src/host/net/resolve';
import { buildSandbox, sandboxAvailable, type SandboxProbe } from '../../../../src/host/sandbox/sandbox';
import { StdioTransport } from '../../../../src/host/sandbox/stdio';
import { DEFAULT_LIMITS } from '../../../../src/policy/sandbox-profile';
import { createNetns, type Netns } from '../../../fixtures/host/netns';
import { cleanupTemp, ROOT } from '../../helpers';
import { decideBy, probeFolders } from '../door-fixture';

const PROBE = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'libc-probe.py');
const PEER = path.join(ROOT, 'test', 'fixtures', 'host', 'libc-peer.js');
const PYTHON = fs.realpathSync('/usr/bin/python3');
const PEER_PORT = 5432;

type Outcome = { ok: boolean; error: string; rc?: number };
interface ProbeResult {
  env: Record<string, string | null>;
  lookup: string[] | string;
  pgName: Outcome;
  pgAddress: Outcome;
  curlName: Outcome;
  curlAddress: Outcome;
  pgRefused: Outcome;
  curlRefused: Outcome;
  curlUnknown: Outcome;
}

/** Pids of running proxychains4-daemon processes (read from /proc, never by signalling anything). */
function daemons(): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv0 = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0];
      const state = fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.[0];
      if (argv0.endsWith('proxychains4-daemon') && state !== 'Z') out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

describe('host/libc-carrier: libc clients without proxy settings, through the door (proxychains4)', function () {
  this.timeout(120_000);
  let available: SandboxProbe;
  let netns: Netns;
  let carrier: LibcCarrier;
  const transports: StdioTransport[] = [];
  const egresses: Egress[] = [];

  before(async function () {
    const p = sandboxAvailable();
    if (!p.ok) throw new Error(`bubblewrap sandbox unavailable: ${p.reason} — fix: ${p.fix}`);
    available = p;
    const c = defaultLibcCarrier();
    if (!c) throw new Error('proxychains4 is not installed (apt-get install proxychains4; scripts/preflight.mjs installs it)');
    carrier = c;
    netns = createNetns();
    await netns.startNode(PEER, { PEER_HOST: netns.peerAddress, PEER_PORT: String(PEER_PORT) });
  });

  after(async () => {
    for (const t of transports) await t.close().catch(() => undefined);
    for (const e of egresses) e.close();
    await netns?.destroy();
    cleanupTemp();
  });

  const resolver: Resolver = async (name) => {
    const table: Record<string, string[]> = {
      'peer.test': [netns.peerAddress],
      'db.peer.test': [netns.peerAddress],
      'denied.test': [netns.peerAddress],
    };
    const a = table[name];
    if (!a) throw Object.assign(new Error(`no such name ${name}`), { code: 'ENOTFOUND' });
    return a;
  };

  async function run(
    rules: object[],
    libcCarrier: LibcCarrier | null,
    linger = false,
  ): Promise<{ r: ProbeResult; events: EgressEvent[]; t: StdioTransport; text: string }> {
    const { workspace, home, result } = probeFolders('mcp-gate-libc-', PROBE, 'probe.py');
    const events: EgressEvent[] = [];
    const egress = new Egress({ decide: decideBy(rules), onEvent: (e) => events.push(e), resolver, connectTimeoutMs: 3000 });
    egresses.push(egress);
    const c = buildSandbox(
      {
        launch: {
          executable: PYTHON,
          argv: [path.join(workspace, 'probe.py')],
          cwd: workspace,
          env: {
            PATH: '/usr/bin:/bin',
            PROBE_RESULT: result,
            PROBE_PEER: netns.peerAddress,
            PROBE_PORT: String(PEER_PORT),
            ...(linger ? { PROBE_LINGER: '1' } : {}),
          },
        },
        workspace,
        overlays: [],
        libcCarrier,
        profile: { network: true, unixSockets: true, extraRead: [], extraWrite: [], caches: [], home, limits: DEFAULT_LIMITS },
      },
      available,
    );
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
    const end = Date.now() + 90_000;
    for (;;) {
      if (fs.existsSync(result)) return { r: JSON.parse(fs.readFileSync(result, 'utf8')), events, t, text: c.description.text };
      if (Date.now() > end) throw new Error(`no probe result: ${t.stderrText()}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it('the config and the script are what was measured (daemon mode, its stand-in range, loopback local)', () => {
    assert.match(PROXYCHAINS_CONF, /^proxy_dns_daemon 127\.0\.0\.1:1053$/m);
    assert.match(PROXYCHAINS_CONF, /^remote_dns_subnet 240$/m);
    assert.match(PROXYCHAINS_CONF, /^localnet ::1\/128$/m);
    assert.match(PROXYCHAINS_CONF, /\[ProxyList\]\nhttp 127\.0\.0\.1 3128\n$/);
    assert.match(CARRIER_SCRIPT, / -r 240 /);
    assert.equal(findProxychains(['/nonexistent/libproxychains.so.4'], ['/usr/bin/proxychains4-daemon']), undefined);
  });

  it('with rules naming the peer: psycopg2 and curl reach it by name and by address with no proxy variable; a refused host is "connection refused"; the daemon ends with the server', async () => {
    const rules = [
      { action: 'mcp.probe.network.test.peer', decision: 'allow' },
      { action: 'mcp.probe.network.test.peer.db', decision: 'allow' },
      { action: `mcp.probe.network.[${netns.peerAddress}]`, decision: 'allow' },
    ];
    const before = daemons();
    const { r, events, t, text } = await run(rules, carrier, true);
    const during = daemons().filter((p) => !before.includes(p));
    assert.equal(during.length, 1, 'one proxychains4-daemon runs while the server does');
    assert.match(text, /libc clients \(libpq, curl, C extensions; not Go or static binaries\) carried/);
    assert.equal(r.env.PROXYCHAINS_CONF_FILE, PROXYCHAINS_MOUNT);
    assert.equal(r.env.LD_PRELOAD, carrier.library);
    assert.ok(
      Array.isArray(r.lookup) && r.lookup.every((a) => a.startsWith('240.')),
      `a name gets a stand-in address: ${JSON.stringify(r.lookup)}`,
    );
    assert.deepEqual([r.pgName.ok, r.pgAddress.ok], [true, true], `psycopg2: ${JSON.stringify([r.pgName, r.pgAddress])}`);
    assert.deepEqual([r.curlName.ok, r.curlAddress.ok], [true, true], `curl: ${JSON.stringify([r.curlName, r.curlAddress])}`);
    assert.match(r.pgRefused.error, /Connection refused/);
    assert.equal(r.curlRefused.rc, 7, JSON.stringify(r.curlRefused));
    assert.equal(r.curlUnknown.rc, 7, JSON.stringify(r.curlUnknown));
    const seen = (outcome: string, host: string) => events.some((e) => e.outcome === outcome && e.host === host);
    assert.ok(
      seen('connected', 'db.peer.test') && seen('connected', 'peer.test') && seen('connected', netns.peerAddress),
      JSON.stringify(events),
    );
    assert.ok(seen('blocked', 'denied.test'), 'the door refused denied.test (no rule names it)');
    assert.ok(seen('blocked', 'nowhere.test'), 'the door was asked for nowhere.test by name (and refused it: no rule names it)');
    assert.ok(!events.some((e) => e.host.startsWith('240.')), 'the door never saw a stand-in address');
    await t.close();
    await new Promise((res) => setTimeout(res, 300));
    assert.deepEqual(
      daemons().filter((p) => !before.includes(p)),
      [],
      'no proxychains4-daemon outlives the server',
    );
  });

  it('with no rule for the peer, nothing is reached (each refusal an event); without proxychains4 names do not resolve, as before, and the description says why', async () => {
    const refused = await run([], carrier);
    for (const k of ['pgName', 'pgAddress', 'curlName', 'curlAddress'] as const)
      assert.equal(refused.r[k].ok, false, `${k}: ${JSON.stringify(refused.r[k])}`);
    assert.ok(
      refused.events.some((e) => e.outcome === 'blocked' && e.host === 'peer.test'),
      JSON.stringify(refused.events),
    );
    const off = await run([{ action: 'mcp.probe.network.test.peer', decision: 'allow' }], null);
    assert.match(
      off.text,
      /libc clients without proxy settings \(libpq, curl, C extensions\) are not carried \(proxychains4 not installed: `apt-get install proxychains4` carries them\)/,
    );
    assert.equal(off.r.env.LD_PRELOAD, null);
    assert.match(off.r.curlName.error, /Could not resolve host/);
    assert.equal(off.r.pgName.ok, false);
  });

  it('the door reads an IPv6 address without brackets (as proxychains4 sends it) and refuses what is not one', () => {
    assert.deepEqual(authority('2001:db8::1:443'), { host: '2001:db8::1', port: 443 });
    assert.deepEqual(authority('::1:80'), { host: '::1', port: 80 });
    assert.deepEqual(authority('[2001:db8::1]:443'), { host: '2001:db8::1', port: 443 });
    assert.deepEqual(authority('peer.test:5432'), { host: 'peer.test', port: 5432 });
    assert.equal(authority('2001:db8::zz:80'), undefined);
    assert.equal(authority('2001:db8::1:0'), undefined);
    assert.equal(authority('peer.test'), undefined);
  });
});
