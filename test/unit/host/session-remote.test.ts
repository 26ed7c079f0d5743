// Sessions over streamable HTTP, through the real gate, against an HTTPS MCP peer in a network namespace
// (test/fixtures/servers/http-peer.ts at 198.18.N.2, reached as mcp.test through an injected resolver):
// the policy decides which hosts are reached and which tools are called; loopback, redirects, 401 and a
// lost session end as the README says ("The host: how servers are run"); server→client requests are refused and counted; a server over 64 tools
// is left out whole; header-bound secrets reach the peer only and never a written byte; a reply over the
// bound fails the call at once. Each case checks what a user notices (servers, notes, call outcome) and the
// `mcp.request` events in the log, field by field.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import { EventLog, type LoggedEvent } from '../../../src/host/log/log';
import type { Resolver } from '../../../src/host/net/resolve';
import { Session, type SessionOptions } from '../../../src/host/session';
import { Masker } from '../../../src/policy/mask';
import { loadUserPolicy } from '../../../src/policy/user-policy';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { makeTestCerts, type TestCerts } from '../../fixtures/host/certs';
import { PEER_PORT, createNetns, type Netns } from '../../fixtures/host/netns';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, ROOT, world, type World } from '../helpers';
import { inProcess } from '../../../src/trust/packages/npm-resolve';

const PEER_SCRIPT = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'http-peer.js');
const URL_OF = (route: string) => `https://mcp.test:${PEER_PORT}${route}`;
const HOST_RULE = (server: string) => ({ action: `mcp.${server}.host.test.mcp`, decision: 'allow' });
const TOOL_RULE = (server: string, tool = '*') => ({ action: `mcp.${server}.tool.${tool}`, decision: 'allow' });
const MARGIN_MS = 3_000;

interface PeerStats {
  paths: Record<string, number>;
  methods: Record<string, Record<string, number>>;
  initializes: Record<string, number>;
  notFound: Record<string, number>;
  authorization: string[];
  apiKey: string[];
  headerNames: string[];
}

/** The fields of an mcp.request event docs/host.md lists ("The host: how servers are run"); any other key (besides `at` and `detail`) fails the test. */
interface Req {
  kind: 'mcp.request';
  server: string;
  host: string;
  about: string;
  status?: number;
  outcome: string;
}

function mcpRequests(log: EventLog): Req[] {
  return log
    .read()
    .filter((e) => e.kind === 'mcp.request')
    .map((e: LoggedEvent) => {
      const r = e as unknown as Record<string, unknown>;
      const extra = Object.keys(r).filter((k) => !['at', 'detail', 'kind', 'server', 'host', 'about', 'status', 'outcome'].includes(k));
      assert.deepEqual(extra, [], `unexpected keys in ${JSON.stringify(r)}`);
      assert.equal(typeof r.at, 'string');
      return {
        kind: 'mcp.request',
        server: r.server,
        host: r.host,
        about: r.about,
        ...(r.status !== undefined ? { status: r.status } : {}),
        outcome: r.outcome,
      } as Req;
    });
}

const ev = (server: string, about: string, outcome: string, status?: number, host = 'mcp.test'): Req =>
  ({ kind: 'mcp.request', server, host, about, ...(status !== undefined ? { status } : {}), outcome }) as Req;

function setup(servers: Record<string, string>, config: Record<string, unknown> = {}): World {
  const decl = Object.fromEntries(Object.entries(servers).map(([name, url]) => [name, { url }]));
  const w = world({ '.mcp.json': JSON.stringify({ mcpServers: decl }) });
  writeProjectConfig(w, config); // the grants are for this project's repository servers
  return w;
}

async function approveAll(w: World): Promise<void> {
  for (const s of evaluateGate(w.input).servers) await recordDecision(w.input, s.name, s.source, 'approved');
}

/** Every file under dir, recursively. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? filesUnder(path.join(dir, d.name)) : [path.join(dir, d.name)]));
}

/** Asserts no byte of any file in the store holds `needle` (raw, or base64 of it). */
function assertStoreClean(store: string, ...needles: string[]): void {
  const files = filesUnder(store);
  assert.ok(files.length > 0, 'the store holds files (log, approvals)');
  for (const f of files) {
    const bytes = fs.readFileSync(f);
    for (const n of needles) {
      for (const form of [n, Buffer.from(n).toString('base64').replace(/=+$/, '')]) {
        assert.equal(
          bytes.indexOf(Buffer.from(form, 'latin1')),
          -1,
          `${path.relative(store, f)} holds ${JSON.stringify(form.slice(0, 4))}…`,
        );
      }
    }
  }
}

describe('session over streamable HTTP (a peer in a network namespace)', function () {
  this.timeout(120_000);
  let netns: Netns | undefined;
  let certs: TestCerts | undefined;
  let peerAddress = '198.18.0.2';
  let sentinel: net.Server | undefined;
  let sentinelPort = 0;
  let sentinelHits = 0;
  const sessions: Session[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  const resolver: Resolver = async (host) => {
    const table: Record<string, string[]> = { 'mcp.test': [peerAddress], 'loop.test': ['127.0.0.1'] };
    const a = table[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a;
  };

  function options(w: World, extra: Partial<SessionOptions> = {}): SessionOptions & { log: EventLog; masker: Masker } {
    const report = evaluateGate(w.input);
    const masker = (extra.masker as Masker | undefined) ?? new Masker();
    const log = new EventLog(w.store, masker);
    return {
      report,
      policy: loadUserPolicy(report.userPolicy),
      log,
      storeDir: w.store,
      secrets: async () => undefined,
      env: process.env,
      npm: inProcess,
      resolver,
      ca: certs!.mcp.cert,
      ...extra,
      masker,
    } as SessionOptions & { log: EventLog; masker: Masker };
  }

  async function start(o: SessionOptions): Promise<Session> {
    const s = await Session.start(o);
    sessions.push(s);
    return s;
  }

  /** Reads what the peer saw, directly (not through the client under test). */
  function peerStats(): Promise<PeerStats> {
    return new Promise((resolve, reject) => {
      const req = https.get(
        { host: peerAddress, port: PEER_PORT, path: '/stats', ca: certs!.mcp.cert, servername: 'mcp.test', agent: false },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => {
            try {
              resolve(JSON.parse(body) as PeerStats);
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      req.on('error', reject);
    });
  }

  async function timed<T>(budgetMs: number, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      const elapsed = Date.now() - t0;
      assert.ok(elapsed < budgetMs + MARGIN_MS, `finished after ${elapsed} ms, budget ${budgetMs} ms + ${MARGIN_MS} ms`);
    }
  }

  before(async function () {
    this.timeout(60_000);
    process.on('unhandledRejection', onUnhandled);
    netns = createNetns();
    peerAddress = netns.peerAddress;
    certs = makeTestCerts(peerAddress);
    await netns.startNode(PEER_SCRIPT, { CERT_DIR: certs.dir, PEER_HOST: peerAddress, PEER_PORT: String(PEER_PORT) });
    sentinel = net.createServer((s) => {
      sentinelHits++;
      s.destroy();
    });
    await new Promise<void>((r) => sentinel!.listen(0, '127.0.0.1', r));
    sentinelPort = (sentinel.address() as net.AddressInfo).port;
  });

  afterEach(async () => {
    await Promise.allSettled(sessions.splice(0).map((s) => s.close()));
  });

  after(async function () {
    this.timeout(30_000);
    process.removeListener('unhandledRejection', onUnhandled);
    await Promise.allSettled(sessions.splice(0).map((s) => s.close()));
    if (sentinel) await new Promise((r) => sentinel!.close(r));
    await netns?.destroy();
    certs?.remove();
    cleanupTemp();
  });

  it('discovers the tools and answers a call; the log has one mcp.request per exchange with status 200', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [HOST_RULE('web'), TOOL_RULE('web', 'echo')] });
    await approveAll(w);
    const o = options(w);
    await timed(10_000, async () => {
      const s = await start(o);
      assert.deepEqual(s.notes, []);
      assert.deepEqual(s.servers(), ['web']);
      assert.deepEqual(
        s
          .tools()
          .map((t) => t.name)
          .sort(),
        ['ask', 'ask_unrelated', 'big', 'echo', 'expire', 'show_headers'],
      );
      const r = await s.call('web', 'echo', { text: 'hello over https' });
      assert.equal(r.ok, true, r.error);
      assert.equal(r.outcome, 'answered');
      assert.deepEqual(r.result?.content, [{ type: 'text', text: 'hello over https' }]);
    });
    assert.deepEqual(mcpRequests(o.log), [ev('web', 'discover', 'answered', 200), ev('web', 'echo', 'answered', 200)]);
    const kinds = o.log.read().map((e) => e.kind);
    for (const k of ['server.start', 'tool.call', 'tool.result']) assert.ok(kinds.includes(k as never), `${k} in ${kinds.join()}`);
  });

  it('no host rule: the server is left out without a byte sent; refused_by_policy about discover', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [TOOL_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    const s = await timed(5_000, () => start(o));
    assert.deepEqual(s.servers(), []);
    assert.match(s.notes.join('\n'), /web \(\.mcp\.json\) is left out: the policy does not allow reaching mcp\.test/);
    assert.match(s.notes.join('\n'), /mcp\.web\.host\.test\.mcp/);
    assert.deepEqual(mcpRequests(o.log), [ev('web', 'discover', 'refused_by_policy')]);
    assert.deepEqual((await peerStats()).paths, before.paths, 'the peer saw nothing');
    const r = await s.call('web', 'echo', { text: 'x' });
    assert.equal(r.outcome, 'refused_by_policy');
    assert.match(r.error!, /no server "web" runs/);
  });

  it('host rule but no tool rule: the tool list is read, the call is refused_by_policy and never sent', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [HOST_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    const s = await timed(10_000, () => start(o));
    assert.deepEqual(s.servers(), ['web']);
    const r = await timed(5_000, () => s.call('web', 'echo', { text: 'x' }));
    assert.equal(r.ok, false);
    assert.equal(r.outcome, 'refused_by_policy');
    assert.match(r.error!, /mcp\.web\.tool\.echo/);
    assert.deepEqual(mcpRequests(o.log), [ev('web', 'discover', 'answered', 200), ev('web', 'echo', 'refused_by_policy')]);
    const after = await peerStats();
    assert.equal(after.methods['/mcp']?.['tools/call'] ?? 0, before.methods['/mcp']?.['tools/call'] ?? 0, 'no tools/call reached the peer');
  });

  it('a name resolving to a loopback address is left out: refused_by_address, nothing connected', async () => {
    const w = setup(
      { loop: `https://loop.test:${sentinelPort}/mcp` },
      { rules: [{ action: 'mcp.loop.host.test.loop', decision: 'allow' }, TOOL_RULE('loop')] },
    );
    await approveAll(w);
    const o = options(w);
    const hits = sentinelHits;
    const s = await timed(5_000, () => start(o));
    assert.deepEqual(s.servers(), []);
    assert.match(s.notes.join('\n'), /loop \(\.mcp\.json\) is left out: .*127\.0\.0\.1/);
    assert.deepEqual(mcpRequests(o.log), [ev('loop', 'discover', 'refused_by_address', undefined, 'loop.test')]);
    assert.equal(sentinelHits, hits, 'the loopback sentinel was never reached');
  });

  it('a rule mcp.<server>.private deny: a server resolving to a private address is left out naming the rule; without it, it runs', async () => {
    // the peer's 198.18.N.2 is a private range (benchmarking, RFC 2544)
    const deny = { action: 'mcp.corp.private', decision: 'deny' };
    const w = setup({ corp: URL_OF('/mcp') }, { rules: [HOST_RULE('corp'), TOOL_RULE('corp'), deny] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    const s = await timed(5_000, () => start(o));
    assert.deepEqual(s.servers(), []);
    const notes = s.notes.join('\n');
    assert.match(
      notes,
      /corp \(\.mcp\.json\) is left out: .*198\.18\.\d+\.2.*private addresses are refused: mcp\.corp\.private is denied by rule \{"action":"mcp\.corp\.private","decision":"deny","project":/,
    );
    assert.deepEqual(mcpRequests(o.log), [ev('corp', 'discover', 'refused_by_address')]);
    assert.deepEqual((await peerStats()).paths, before.paths, 'the peer saw nothing');
    // the same server without the rule is reached
    const w2 = setup({ corp: URL_OF('/mcp') }, { rules: [HOST_RULE('corp'), TOOL_RULE('corp')] });
    await approveAll(w2);
    const s2 = await timed(10_000, () => start(options(w2)));
    assert.deepEqual(s2.servers(), ['corp'], s2.notes.join('; '));
    assert.equal((await s2.call('corp', 'echo', { text: 'private ok' })).ok, true);
    // and a local-development exception with allowPrivate lets it through despite the rule
    const w3 = setup(
      { corp: URL_OF('/mcp') },
      { rules: [HOST_RULE('corp'), TOOL_RULE('corp'), deny], localExceptions: [{ server: 'corp', allowPrivate: true }] },
    );
    await approveAll(w3);
    const s3 = await timed(10_000, () => start(options(w3)));
    assert.deepEqual(s3.servers(), ['corp'], s3.notes.join('; '));
  });

  it('a redirect (307 to /mcp on the same origin) is not followed: left out, redirected with status 307', async () => {
    const w = setup({ moved: URL_OF('/moved') }, { rules: [HOST_RULE('moved'), TOOL_RULE('moved')] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    const s = await timed(5_000, () => start(o));
    assert.deepEqual(s.servers(), []);
    assert.match(s.notes.join('\n'), /moved \(\.mcp\.json\) is left out: .*redirect \(HTTP 307\) refused/);
    assert.deepEqual(mcpRequests(o.log), [ev('moved', 'discover', 'redirected', 307)]);
    const after = await peerStats();
    assert.equal((after.paths['/moved'] ?? 0) - (before.paths['/moved'] ?? 0), 1);
    assert.equal(after.paths['/mcp'] ?? 0, before.paths['/mcp'] ?? 0, 'the Location was not followed');
  });

  it('401: left out without an OAuth attempt; no_answer with status 401', async () => {
    const w = setup({ locked: URL_OF('/unauthorized') }, { rules: [HOST_RULE('locked'), TOOL_RULE('locked')] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    const s = await timed(5_000, () => start(o));
    assert.deepEqual(s.servers(), []);
    assert.match(s.notes.join('\n'), /locked \(\.mcp\.json\) is left out: reading its tools failed/);
    assert.deepEqual(mcpRequests(o.log), [ev('locked', 'discover', 'no_answer', 401)]);
    const after = await peerStats();
    const seen = Object.keys(after.paths).filter((p) => (after.paths[p] ?? 0) !== (before.paths[p] ?? 0));
    assert.deepEqual(seen, ['/unauthorized'], 'no OAuth discovery (.well-known) was attempted');
    assert.equal(after.paths['/unauthorized']! - (before.paths['/unauthorized'] ?? 0), 1);
  });

  it('401: the line a user reads says 401 and that no OAuth flow is run', async () => {
    const w = setup({ locked: URL_OF('/unauthorized') }, { rules: [HOST_RULE('locked'), TOOL_RULE('locked')] });
    await approveAll(w);
    const s = await timed(5_000, () => start(options(w)));
    assert.deepEqual(s.servers(), []);
    assert.match(s.notes.join('\n'), /locked \(\.mcp\.json\) is left out: .*\b401\b/);
    assert.match(s.notes.join('\n'), /OAuth/);
  });

  it('a session the peer forgot (404) is opened again once and the call answers', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [HOST_RULE('web'), TOOL_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    await timed(15_000, async () => {
      const s = await start(o);
      const gone = await s.call('web', 'expire');
      assert.equal(gone.ok, true, gone.error);
      const r = await s.call('web', 'echo', { text: 'after the 404' });
      assert.equal(r.ok, true, r.error);
      assert.deepEqual(r.result?.content, [{ type: 'text', text: 'after the 404' }]);
      const again = await s.call('web', 'echo', { text: 'and again' });
      assert.equal(again.ok, true, again.error);
    });
    const after = await peerStats();
    assert.equal((after.initializes['/mcp'] ?? 0) - (before.initializes['/mcp'] ?? 0), 2, 'one re-initialize');
    assert.equal((after.notFound['/mcp'] ?? 0) - (before.notFound['/mcp'] ?? 0), 1);
    assert.deepEqual(mcpRequests(o.log), [
      ev('web', 'discover', 'answered', 200),
      ev('web', 'expire', 'answered', 200),
      ev('web', 'echo', 'no_answer', 404),
      ev('web', 'echo', 'answered', 200),
      ev('web', 'echo', 'answered', 200),
    ]);
  });

  it('a peer that answers 404 every time: one new session is tried, the second 404 fails discovery (no_answer, 404)', async () => {
    const w = setup({ gone: URL_OF('/always404') }, { rules: [HOST_RULE('gone'), TOOL_RULE('gone')] });
    await approveAll(w);
    const o = options(w);
    const before = await peerStats();
    const s = await timed(10_000, () => start(o));
    assert.deepEqual(s.servers(), []);
    // The line says "reading its tools failed" but not "404" (the same describeError gap as the 401 case);
    // the status is asserted in the log below.
    assert.match(s.notes.join('\n'), /gone \(\.mcp\.json\) is left out: reading its tools failed/);
    const after = await peerStats();
    assert.equal((after.initializes['/always404'] ?? 0) - (before.initializes['/always404'] ?? 0), 2, 'exactly one re-initialize');
    assert.equal((after.notFound['/always404'] ?? 0) - (before.notFound['/always404'] ?? 0), 2);
    assert.deepEqual(mcpRequests(o.log), [ev('gone', 'discover', 'no_answer', 404), ev('gone', 'discover', 'no_answer', 404)]);
  });

  it('sampling, elicitation and roots requests from the peer are refused and counted', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [HOST_RULE('web'), TOOL_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const s = await timed(10_000, () => start(o));
    const t0 = Date.now();
    const r = await timed(10_000, () => s.call('web', 'ask'));
    // each refusal reaches the peer as a JSON-RPC error at once: the call ends promptly, not at the budget
    assert.ok(Date.now() - t0 < 1000, `the call took ${Date.now() - t0} ms`);
    assert.equal(r.ok, true, r.error);
    const text = JSON.stringify(r.result);
    for (const m of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
      assert.match(text, new RegExp(`${m}: MCP error -32601: MCP Gate refused ${m}`));
    assert.doesNotMatch(text, /answered/);
    assert.deepEqual(s.counters.refusedRequests, { 'sampling/createMessage': 1, 'elicitation/create': 1, 'roots/list': 1 });
    assert.deepEqual(mcpRequests(o.log), [ev('web', 'discover', 'answered', 200), ev('web', 'ask', 'answered', 200)]);
    assert.equal(o.log.read().filter((e) => e.kind === 'gate.refuse').length, 3);
  });

  it('requests of no call (they come on the GET listening stream) are refused at once too: the call ends within 2 s', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [HOST_RULE('web'), TOOL_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const s = await timed(10_000, () => start(o));
    const before = await peerStats();
    const t0 = Date.now();
    const r = await timed(15_000, () => s.call('web', 'ask_unrelated'));
    // before the listening stream was opened, the server's requests were dropped and it waited its 10 s out
    assert.ok(Date.now() - t0 < 2000, `the call took ${Date.now() - t0} ms`);
    assert.equal(r.ok, true, r.error);
    const text = JSON.stringify(r.result);
    for (const m of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
      assert.match(text, new RegExp(`${m}: MCP error -32601: MCP Gate refused ${m}`));
    assert.deepEqual(s.counters.refusedRequests, { 'sampling/createMessage': 1, 'elicitation/create': 1, 'roots/list': 1 });
    const refusals = o.log
      .read()
      .filter((e) => e.kind === 'gate.refuse')
      .map((e) => (e as { detail?: string }).detail ?? '');
    assert.equal(refusals.length, 3);
    for (const d of refusals) assert.match(d, /refused/);
    // the listening stream is no exchange about a tool list or a call: the log holds the call, once
    assert.deepEqual(mcpRequests(o.log), [ev('web', 'discover', 'answered', 200), ev('web', 'ask_unrelated', 'answered', 200)]);
    const after = await peerStats();
    assert.ok((after.paths['/mcp'] ?? 0) > (before.paths['/mcp'] ?? 0));
  });

  it('a server offering 65 tools is left out whole, with a line; another server still starts', async () => {
    const w = setup({ many: URL_OF('/many'), web: URL_OF('/mcp') }, { rules: [HOST_RULE('many'), TOOL_RULE('many'), HOST_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const s = await timed(15_000, () => start(o));
    assert.deepEqual(s.servers(), ['web']);
    assert.ok(s.tools().every((t) => t.server === 'web'));
    assert.match(s.notes.join('\n'), /many \(\.mcp\.json\) is left out: it offers more than 64 tools/);
    assert.deepEqual(mcpRequests(o.log), [ev('many', 'discover', 'answered', 200), ev('web', 'discover', 'answered', 200)]);
    assert.equal((await s.call('many', 't0')).outcome, 'refused_by_policy');
  });

  for (const variant of [
    {
      title: 'Authorization: Bearer (default)',
      entry: {},
      value: 'tok_hdr_5f0c2b7e91d4a8',
      sent: (v: string) => `Bearer ${v}`,
      field: 'authorization' as const,
      header: 'authorization',
    },
    {
      title: 'as X-Api-Key (raw value)',
      entry: { as: 'X-Api-Key' },
      value: 'key_api_83b1d6e0f27c4a',
      sent: (v: string) => v,
      field: 'apiKey' as const,
      header: 'x-api-key',
    },
  ]) {
    it(`a header-bound secret, ${variant.title}, reaches the peer; the result, the notes and the store never hold it`, async () => {
      const config = {
        rules: [HOST_RULE('web'), TOOL_RULE('web'), { action: 'secret.use.WEB_TOKEN', decision: 'allow' }],
        secrets: [{ name: 'WEB_TOKEN', to: 'mcp.web.*', bind: 'header', ...variant.entry }],
      };
      const w = setup({ web: URL_OF('/mcp') }, config);
      await approveAll(w);
      let reads = 0;
      const o = options(w, { secrets: async (n) => (n === 'WEB_TOKEN' ? (reads++, variant.value) : undefined) });
      const before = await peerStats();
      const s = await timed(10_000, () => start(o));
      let resultText = '';
      try {
        assert.deepEqual(s.servers(), ['web']);
        const r = await s.call('web', 'show_headers');
        assert.equal(r.ok, true, r.error);
        resultText = JSON.stringify(r.result);
        const echoed = JSON.parse((r.result!.content[0] as { text: string }).text) as Record<string, string>;
        assert.equal(echoed[variant.header], variant.sent('***'), 'the peer echoed the header; the session masked it');
        if (variant.header !== 'authorization') assert.equal(echoed.authorization, undefined);
      } finally {
        await s.close();
      }
      assert.equal(reads, 1, 'the value is read once');
      const after = await peerStats();
      const arrived = after[variant.field].slice(before[variant.field].length);
      assert.ok(arrived.length >= 3, `the header went with every request (${arrived.length})`);
      assert.ok(
        arrived.every((v) => v === variant.sent(variant.value)),
        'the peer received exactly the bound value',
      );
      for (const text of [resultText, s.notes.join('\n'), JSON.stringify(o.log.read())]) assert.ok(!text.includes(variant.value));
      assertStoreClean(w.store, variant.value);
    });
  }

  it('a secret value holding CR/LF is not sent; the server starts without it and a line says so without the value', async () => {
    const value = 'tok_crlf_c0ffee42\r\nX-Injected: yes';
    const config = {
      rules: [HOST_RULE('web'), TOOL_RULE('web'), { action: 'secret.use.WEB_TOKEN', decision: 'allow' }],
      secrets: [{ name: 'WEB_TOKEN', to: 'mcp.web.*', bind: 'header' }],
    };
    const w = setup({ web: URL_OF('/mcp') }, config);
    await approveAll(w);
    const o = options(w, { secrets: async () => value });
    const before = await peerStats();
    const s = await timed(10_000, () => start(o));
    assert.deepEqual(s.servers(), ['web']);
    const notes = s.notes.join('\n');
    assert.match(notes, /WEB_TOKEN was not sent .*line break/);
    for (const part of ['tok_crlf_c0ffee42', 'X-Injected']) assert.ok(!notes.includes(part), `the note holds ${part}`);
    const r = await s.call('web', 'show_headers');
    assert.equal(r.ok, true, r.error);
    const echoed = JSON.parse((r.result!.content[0] as { text: string }).text) as Record<string, string>;
    assert.equal(echoed.authorization, undefined);
    assert.equal(echoed['x-injected'], undefined);
    await s.close();
    const after = await peerStats();
    assert.deepEqual(after.authorization.slice(before.authorization.length), [], 'no Authorization header was sent');
    assert.ok(!after.headerNames.includes('x-injected'));
    assertStoreClean(w.store, 'tok_crlf_c0ffee42', 'X-Injected');
  });

  it('a 2 MiB tool reply fails the call at once with no_answer (not at the 60 s timeout); the session goes on', async () => {
    const w = setup({ web: URL_OF('/mcp') }, { rules: [HOST_RULE('web'), TOOL_RULE('web')] });
    await approveAll(w);
    const o = options(w);
    const s = await timed(10_000, () => start(o));
    const r = await timed(5_000, () => s.call('web', 'big'));
    assert.equal(r.ok, false);
    assert.equal(r.outcome, 'no_answer');
    assert.match(r.error!, /1048576 bytes/);
    assert.equal(r.result, undefined);
    const next = await timed(5_000, () => s.call('web', 'echo', { text: 'still here' }));
    assert.equal(next.ok, true, next.error);
    assert.deepEqual(mcpRequests(o.log), [
      ev('web', 'discover', 'answered', 200),
      ev('web', 'big', 'no_answer', 200),
      ev('web', 'echo', 'answered', 200),
    ]);
    assert.ok(o.log.read().some((e) => e.kind === 'tool.result' && e.tool === 'big' && e.ok === false));
  });

  it('no unhandled rejections were raised by any case', () => {
    assert.deepEqual(unhandled.map(String), []);
  });
});
