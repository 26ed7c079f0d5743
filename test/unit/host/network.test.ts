// Guarded fetch and pinned agent against REAL peers: a hostile HTTPS server in a network namespace
// (198.18.0.2, reached through an injected resolver for mcp.test) and loopback sentinels that must never
// be reached. Every case ends in its documented outcome within its budget; nothing crashes the process.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo as NetAddressInfo } from 'node:net';
import { ProxyAgent, getGlobalDispatcher, setGlobalDispatcher, request as undiciRequest } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  AddressRefusedError,
  ConnectionFailedError,
  ExchangeTimeoutError,
  HeaderRefusedError,
  InvalidReplyError,
  InvalidRequestError,
  NameResolutionError,
  RedirectRefusedError,
  ReplyTooLargeError,
  StreamEndedEarlyError,
} from '../../../src/host/errors';
import { createGuardedFetch, type GuardedFetch, type GuardedFetchOptions, type Observation } from '../../../src/host/net/guarded-fetch';
import { createPinnedAgent, type PinnedConnection } from '../../../src/host/net/pinned-agent';
import { GATE_RPC_ERROR_CODE } from '../../../src/host/net/reply-guard';
import type { Resolver } from '../../../src/host/net/resolve';
import { makeTestCerts, type TestCerts } from '../../fixtures/host/certs';
import { PEER_PORT, createNetns, type Netns } from '../../fixtures/host/netns';

const PEER = `https://mcp.test:${PEER_PORT}`;
const MARGIN_MS = 3_000;
/** The namespace side of the veth pair: 198.18.0.2 unless a concurrent run holds that /30. */
let PEER_ADDRESS = '198.18.0.2';

const table = (): Record<string, readonly string[]> => ({
  'mcp.test': [PEER_ADDRESS],
  'other.test': [PEER_ADDRESS],
  'mixed.test': [PEER_ADDRESS, '127.0.0.1'],
  'nine.test': [
    '93.184.216.1',
    '93.184.216.2',
    '93.184.216.3',
    '93.184.216.4',
    '93.184.216.5',
    '93.184.216.6',
    '93.184.216.7',
    '93.184.216.8',
    PEER_ADDRESS,
  ],
  'odd.test': ['0x7f000001'],
  'meta.test': ['169.254.169.254'],
});
const resolver: Resolver = async (host) => {
  const a = table()[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a;
};

interface Probe {
  readonly f: GuardedFetch;
  readonly obs: Observation[];
  readonly conns: PinnedConnection[];
}

describe('host/network: guarded fetch against a hostile peer in a network namespace', function () {
  let certs: TestCerts;
  let netns: Netns | undefined;
  let tlsSentinel: https.Server;
  let httpSentinel: http.Server;
  let sentinelHits = 0;
  let tlsPort = 0;
  let httpPort = 0;
  const probes: Probe[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  function probe(extra: Partial<GuardedFetchOptions> = {}): Probe {
    const obs: Observation[] = [];
    const conns: PinnedConnection[] = [];
    const f = createGuardedFetch({
      resolver,
      ca: [certs.mcp.cert, certs.other.cert],
      timeoutMs: 5_000,
      onObservation: (o) => obs.push(o),
      onConnect: (c) => conns.push(c),
      ...extra,
    });
    const p = { f, obs, conns };
    probes.push(p);
    return p;
  }

  const rpcInit = (id: number | string = 1, method = 'tools/call'): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: {} }),
  });

  async function timed<T>(budgetMs: number, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      const elapsed = Date.now() - t0;
      assert.ok(elapsed < budgetMs + MARGIN_MS, `finished after ${elapsed} ms, budget ${budgetMs} ms + ${MARGIN_MS} ms`);
    }
  }

  async function rejectsWith(p: Promise<unknown>, type: new (...a: never[]) => Error): Promise<Error> {
    try {
      await p;
    } catch (err) {
      assert.ok(err instanceof type, `expected ${type.name}, got ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`);
      return err as Error;
    }
    assert.fail(`expected ${type.name}, but it resolved`);
  }

  before(async function () {
    this.timeout(60_000);
    process.on('unhandledRejection', onUnhandled);
    netns = createNetns();
    PEER_ADDRESS = netns.peerAddress;
    certs = makeTestCerts(PEER_ADDRESS);
    const script = path.join(__dirname, '..', '..', 'fixtures', 'host', 'hostile-server.js');
    await netns.startNode(script, { CERT_DIR: certs.dir, PEER_HOST: PEER_ADDRESS, PEER_PORT: String(PEER_PORT) });

    tlsSentinel = https.createServer({ key: fs.readFileSync(certs.mcp.keyFile), cert: certs.mcp.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { sentinel: true } }));
    });
    tlsSentinel.on('connection', () => sentinelHits++);
    httpSentinel = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { sentinel: 'http' } }));
    });
    httpSentinel.on('connection', () => sentinelHits++);
    await new Promise<void>((r) => tlsSentinel.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => httpSentinel.listen(0, '127.0.0.1', r));
    tlsPort = (tlsSentinel.address() as NetAddressInfo).port;
    httpPort = (httpSentinel.address() as NetAddressInfo).port;
  });

  after(async function () {
    this.timeout(30_000);
    process.removeListener('unhandledRejection', onUnhandled);
    await Promise.allSettled(probes.map((p) => p.f.close()));
    tlsSentinel?.closeAllConnections();
    httpSentinel?.closeAllConnections();
    await Promise.allSettled([
      new Promise((r) => (tlsSentinel ? tlsSentinel.close(r) : r(undefined))),
      new Promise((r) => (httpSentinel ? httpSentinel.close(r) : r(undefined))),
    ]);
    await netns?.destroy();
    certs?.remove();
  });

  describe('pinning and TLS name', () => {
    it('connects to the checked address with SNI and certificate name = the host', async () => {
      const { f, obs, conns } = probe();
      const res = await f(`${PEER}/echo`, rpcInit(1));
      const body = (await res.json()) as { result: { servername: string; localAddress: string } };
      assert.equal(body.result.servername, 'mcp.test');
      assert.equal(body.result.localAddress, PEER_ADDRESS);
      assert.deepEqual(
        conns.map((c) => [c.host, c.address, c.servername]),
        [['mcp.test', PEER_ADDRESS, 'mcp.test']],
      );
      assert.deepEqual(
        obs.map((o) => [o.host, o.status, o.outcome]),
        [['mcp.test', 200, 'answered']],
      );
    });

    it('the pinned agent also works as a plain undici dispatcher', async () => {
      const conns: PinnedConnection[] = [];
      const agent = createPinnedAgent({ resolver, ca: certs.mcp.cert, onConnect: (c) => conns.push(c) });
      try {
        const r = await undiciRequest(`${PEER}/echo`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"x"}', dispatcher: agent });
        const j = (await r.body.json()) as { result: { servername: string } };
        assert.equal(j.result.servername, 'mcp.test');
        assert.equal(conns[0]?.address, PEER_ADDRESS);
      } finally {
        await agent.close();
      }
    });

    it('a certificate for another name fails (verification uses the URL host), the same cert under its own name works', async () => {
      const { f, obs } = probe();
      const err = await rejectsWith(f(`https://mcp.test:${PEER_PORT + 1}/echo`, rpcInit()), ConnectionFailedError);
      assert.equal((err.cause as { code?: string }).code, 'ERR_TLS_CERT_ALTNAME_INVALID');
      assert.equal(obs[0]?.outcome, 'no_answer');
      const ok = await f(`https://other.test:${PEER_PORT + 1}/echo`, rpcInit());
      assert.equal(((await ok.json()) as { result: { servername: string } }).result.servername, 'other.test');
    });

    it('an untrusted certificate fails', async () => {
      const { f } = probe({ ca: certs.other.cert });
      const err = await rejectsWith(f(`${PEER}/echo`, rpcInit()), ConnectionFailedError);
      assert.match(String((err.cause as { code?: string }).code), /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
    });

    it('an IP-literal host is checked without DNS and verified against the IP (no SNI)', async () => {
      const { f, conns } = probe({ resolver: async () => assert.fail('resolver must not be asked') });
      const res = await f(`https://${PEER_ADDRESS}:${PEER_PORT}/echo`, rpcInit());
      const j = (await res.json()) as { result: { servername: string | null } };
      assert.equal(j.result.servername, null);
      assert.equal(conns[0]?.servername, undefined);
    });

    it('ignores HTTPS_PROXY / HTTP_PROXY / ALL_PROXY and a proxying global dispatcher', async () => {
      const saved = { ...process.env };
      const savedDispatcher = getGlobalDispatcher();
      const bogus = 'http://198.18.0.1:9';
      Object.assign(process.env, {
        HTTPS_PROXY: bogus,
        HTTP_PROXY: bogus,
        ALL_PROXY: bogus,
        https_proxy: bogus,
        http_proxy: bogus,
        NO_PROXY: '',
      });
      const proxy = new ProxyAgent(bogus);
      setGlobalDispatcher(proxy);
      try {
        const { f, conns } = probe();
        const res = await f(`${PEER}/echo`, rpcInit());
        const j = (await res.json()) as { result: { localAddress: string; headerNames: string[] } };
        assert.equal(j.result.localAddress, PEER_ADDRESS);
        assert.ok(!j.result.headerNames.some((h) => h.startsWith('proxy-')));
        assert.equal(conns[0]?.address, PEER_ADDRESS);
      } finally {
        setGlobalDispatcher(savedDispatcher);
        await proxy.close();
        for (const k of ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'https_proxy', 'http_proxy', 'NO_PROXY']) {
          if (saved[k] === undefined) delete process.env[k];
          else process.env[k] = saved[k];
        }
      }
    });
  });

  describe('address refusals (refused_by_address, nothing connected)', () => {
    it('refuses a name answering a public and a loopback address', async () => {
      const { f, obs, conns } = probe();
      const err = (await rejectsWith(f(`https://mixed.test:${tlsPort}/echo`, rpcInit()), AddressRefusedError)) as AddressRefusedError;
      assert.equal(err.host, 'mixed.test');
      assert.equal(err.address, '127.0.0.1');
      assert.deepEqual(
        obs.map((o) => o.outcome),
        ['refused_by_address'],
      );
      assert.equal(conns.length, 0);
    });

    it('refuses a name with 9 answers', async () => {
      const { f, obs, conns } = probe();
      const err = (await rejectsWith(f(`https://nine.test:${PEER_PORT}/echo`, rpcInit()), AddressRefusedError)) as AddressRefusedError;
      assert.match(err.reason, /9 addresses/);
      assert.equal(obs[0]?.outcome, 'refused_by_address');
      assert.equal(conns.length, 0);
    });

    const spellings = [
      '127.0.0.1',
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '127.1',
      '0x7f.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[::127.0.0.1]',
      '[::ffff:0:7f00:1]',
      '[64:ff9b::127.0.0.1]',
      '[64:ff9b:1::7f00:1]',
      '[2002:7f00:1::]',
      '169.254.169.254',
      '2852039166',
      '0xa9fea9fe',
      '0251.0376.0251.0376',
      '[::ffff:169.254.169.254]',
      '[fd00:ec2::254]',
      '[64:ff9b::a9fe:a9fe]',
      '0.0.0.0',
      '0',
      '[::]',
      'odd.test',
      'meta.test',
    ];
    for (const host of spellings) {
      it(`refuses https://${host}:<sentinel>/ without connecting`, async () => {
        const before = sentinelHits;
        const { f, obs, conns } = probe();
        await timed(5_000, () => rejectsWith(f(`https://${host}:${tlsPort}/echo`, rpcInit()), AddressRefusedError));
        assert.deepEqual(
          obs.map((o) => o.outcome),
          ['refused_by_address'],
        );
        assert.equal(conns.length, 0);
        assert.equal(sentinelHits, before);
      });
    }

    it('refuses localhost through the system resolver', async () => {
      const { f, obs } = probe({ resolver: undefined });
      await rejectsWith(f(`https://localhost:${tlsPort}/echo`, rpcInit()), AddressRefusedError);
      assert.equal(obs[0]?.outcome, 'refused_by_address');
    });

    it('control: the same sentinel is reached under a loopback exception; metadata stays refused', async () => {
      const before = sentinelHits;
      const { f } = probe({ resolver: async () => ['127.0.0.1'], policy: { exception: { allowLoopback: true, allowPrivate: true } } });
      const res = await f(`https://mcp.test:${tlsPort}/echo`, rpcInit());
      assert.equal(((await res.json()) as { result: { sentinel: boolean } }).result.sentinel, true);
      assert.equal(sentinelHits, before + 1);
      await rejectsWith(f(`https://169.254.169.254:${tlsPort}/`, rpcInit()), AddressRefusedError);
      await rejectsWith(f(`https://[::ffff:a9fe:a9fe]:${tlsPort}/`, rpcInit()), AddressRefusedError);
    });

    it('refuses private addresses by rule (the namespace peer is in 198.18/15)', async () => {
      const { f, obs } = probe({ policy: { refusePrivate: true } });
      await rejectsWith(f(`${PEER}/echo`, rpcInit()), AddressRefusedError);
      assert.equal(obs[0]?.outcome, 'refused_by_address');
    });

    it('refuses http:// outside the exception; under it, plain http only to loopback', async () => {
      const before = sentinelHits;
      const plain = probe();
      await rejectsWith(plain.f(`http://127.0.0.1:${httpPort}/`, rpcInit()), AddressRefusedError);
      await rejectsWith(plain.f(`http://mcp.test:${PEER_PORT}/echo`, rpcInit()), AddressRefusedError);
      assert.equal(plain.conns.length, 0);
      const dev = probe({ policy: { exception: { allowLoopback: true } } });
      const err = (await rejectsWith(dev.f(`http://mcp.test:${PEER_PORT}/echo`, rpcInit()), AddressRefusedError)) as AddressRefusedError;
      assert.match(err.reason, /https required/);
      assert.equal(sentinelHits, before);
      const ok = await dev.f(`http://127.0.0.1:${httpPort}/`, rpcInit());
      assert.equal(((await ok.json()) as { result: { sentinel: string } }).result.sentinel, 'http');
      assert.equal(dev.obs.at(-1)?.outcome, 'answered');
    });

    it('a name that does not resolve is no_answer (NameResolutionError)', async () => {
      const { f, obs } = probe();
      await rejectsWith(f('https://unknown.test/', rpcInit()), NameResolutionError);
      assert.equal(obs[0]?.outcome, 'no_answer');
    });
  });

  describe('redirects (redirected, never followed)', () => {
    for (const code of [301, 302, 303, 307, 308]) {
      it(`refuses ${code}`, async () => {
        const { f, obs, conns } = probe();
        const err = (await rejectsWith(f(`${PEER}/redirect/${code}`, rpcInit()), RedirectRefusedError)) as RedirectRefusedError;
        assert.equal(err.status, code);
        assert.equal(err.location, 'https://mcp.test:8443/echo?token=secret-in-location');
        assert.doesNotMatch(err.message, /secret/);
        assert.deepEqual(
          obs.map((o) => [o.status, o.outcome]),
          [[code, 'redirected']],
        );
        assert.equal(conns.length, 1);
      });
    }
    it('refuses a redirect to the metadata address without touching it', async () => {
      const { f, obs, conns } = probe();
      await rejectsWith(f(`${PEER}/redirect-meta`, rpcInit()), RedirectRefusedError);
      assert.equal(obs[0]?.outcome, 'redirected');
      assert.deepEqual(
        conns.map((c) => c.address),
        [PEER_ADDRESS],
      );
    });
  });

  describe('reply bound (1 MiB)', () => {
    for (const p of ['/big-json', '/big-json-chunked', '/gzip-big']) {
      it(`JSON ${p}: ReplyTooLargeError, no_answer`, async () => {
        const { f, obs } = probe();
        await timed(5_000, () => rejectsWith(f(`${PEER}${p}`, rpcInit()), ReplyTooLargeError));
        assert.deepEqual(
          obs.map((o) => [o.status, o.outcome, o.error?.constructor.name]),
          [[200, 'no_answer', 'ReplyTooLargeError']],
        );
      });
    }
    for (const p of ['/big-sse', '/big-sse-one']) {
      it(`SSE ${p}: the stream delivers a synthetic error for the id, then errors with ReplyTooLargeError`, async () => {
        const { f, obs } = probe();
        await timed(5_000, async () => {
          const res = await f(`${PEER}${p}`, rpcInit(42));
          assert.equal(res.status, 200);
          const reader = res.body!.getReader();
          let text = '';
          let error: unknown;
          try {
            for (;;) {
              const r = await reader.read();
              if (r.done) break;
              text += Buffer.from(r.value).toString('utf8');
            }
          } catch (e) {
            error = e;
          }
          assert.ok(error instanceof ReplyTooLargeError, String(error));
          const last = text.trimEnd().split('\n').at(-1)!;
          const synth = JSON.parse(last.replace(/^data: /, ''));
          assert.equal(synth.id, 42);
          assert.equal(synth.error.code, GATE_RPC_ERROR_CODE);
          assert.equal(synth.error.data.mcpGate, 'REPLY_TOO_LARGE');
          assert.ok(Buffer.byteLength(text) < 1024 * 1024 + 4096);
        });
        assert.deepEqual(
          obs.map((o) => [o.outcome, o.error?.constructor.name]),
          [['no_answer', 'ReplyTooLargeError']],
        );
      });
    }
  });

  describe('streams that end early or never', () => {
    it('SSE ending before the response fails at once with StreamEndedEarlyError', async () => {
      const { f, obs } = probe();
      await timed(5_000, async () => {
        const res = await f(`${PEER}/sse-early`, rpcInit(5));
        await rejectsWith(res.text(), StreamEndedEarlyError);
      });
      assert.deepEqual(
        obs.map((o) => [o.outcome, o.error?.constructor.name]),
        [['no_answer', 'StreamEndedEarlyError']],
      );
    });

    it('a response event cut off before its blank line is never handed on', async () => {
      const { f } = probe();
      const res = await f(`${PEER}/sse-partial`, rpcInit(6));
      const reader = res.body!.getReader();
      let text = '';
      const err = await (async () => {
        try {
          for (;;) {
            const r = await reader.read();
            if (r.done) return undefined;
            text += Buffer.from(r.value).toString();
          }
        } catch (e) {
          return e;
        }
      })();
      assert.ok(err instanceof StreamEndedEarlyError);
      assert.doesNotMatch(text, /"half"/);
    });

    it('an SSE reply that answers and stays open is answered without waiting for the end', async () => {
      const { f, obs } = probe({ timeoutMs: 30_000 });
      await timed(5_000, async () => {
        const res = await f(`${PEER}/sse-open`, rpcInit(7));
        assert.match(await res.text(), /"ok":true/);
      });
      assert.deepEqual(
        obs.map((o) => o.outcome),
        ['answered'],
      );
    });

    it('SSE with CRLF line ends split across chunks is answered', async () => {
      const { f, obs } = probe();
      const res = await f(`${PEER}/sse-crlf`, rpcInit(8));
      assert.match(await res.text(), /"crlf":true/);
      assert.equal(obs[0]?.outcome, 'answered');
    });

    for (const [p, what] of [
      ['/never', 'never-ending stream'],
      ['/drip', 'slow drip'],
    ] as const) {
      it(`${what}: aborted by the budget (ExchangeTimeoutError)`, async () => {
        const budget = 1_500;
        const { f, obs } = probe({ timeoutMs: budget });
        await timed(budget, async () => {
          const res = await f(`${PEER}${p}`, rpcInit(9));
          await rejectsWith(res.text(), ExchangeTimeoutError);
        });
        assert.deepEqual(
          obs.map((o) => [o.outcome, o.error?.constructor.name]),
          [['no_answer', 'ExchangeTimeoutError']],
        );
      });
    }

    it('no headers at all: aborted by the budget', async () => {
      const budget = 1_000;
      const { f, obs } = probe({ timeoutMs: budget });
      await timed(budget, () => rejectsWith(f(`${PEER}/hang`, rpcInit()), ExchangeTimeoutError));
      assert.equal(obs[0]?.outcome, 'no_answer');
    });

    it('a TLS handshake that never completes: aborted by the budget', async () => {
      const budget = 1_000;
      const { f, obs } = probe({ timeoutMs: budget });
      await timed(budget, () => rejectsWith(f(`https://mcp.test:${PEER_PORT + 2}/`, rpcInit()), ExchangeTimeoutError));
      assert.equal(obs[0]?.outcome, 'no_answer');
    });

    it('the budget may depend on the JSON-RPC method', async () => {
      const seen: string[] = [];
      const { f } = probe({
        timeoutMs: (rpc) => (seen.push(rpc.map((c) => c.method).join()), rpc.some((c) => c.method === 'tools/list') ? 500 : 30_000),
      });
      await timed(500, () => rejectsWith(f(`${PEER}/hang`, rpcInit(1, 'tools/list')), ExchangeTimeoutError));
      assert.deepEqual(seen, ['tools/list']);
    });

    it("the caller's abort signal aborts the request", async () => {
      const { f, obs } = probe({ timeoutMs: 30_000 });
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('caller gave up')), 300);
      await timed(1_000, async () => {
        const res = await f(`${PEER}/never`, { ...rpcInit(), signal: ac.signal });
        await assert.rejects(res.text(), /caller gave up/);
      });
      assert.equal(obs[0]?.outcome, 'no_answer');
    });
  });

  describe('bad replies and statuses', () => {
    for (const [p, why] of [
      ['/garbage', /not JSON/],
      ['/wrong-id', /no JSON-RPC response for id 1/],
      ['/html', /content type/],
      ['/accepted', /no response to a request/],
    ] as const) {
      it(`${p}: InvalidReplyError, no_answer`, async () => {
        const { f, obs } = probe();
        const err = await rejectsWith(f(`${PEER}${p}`, rpcInit(1)), InvalidReplyError);
        assert.match(err.message, why);
        assert.equal(obs[0]?.outcome, 'no_answer');
      });
    }

    it('a notification answered 202 is answered', async () => {
      const { f, obs } = probe();
      const res = await f(`${PEER}/accepted`, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      assert.equal(res.status, 202);
      assert.deepEqual(
        obs.map((o) => [o.status, o.outcome]),
        [[202, 'answered']],
      );
    });

    for (const code of [401, 404, 500]) {
      it(`HTTP ${code} is returned as is and reported no_answer with its status`, async () => {
        const { f, obs } = probe();
        const res = await f(`${PEER}/status/${code}`, rpcInit());
        assert.equal(res.status, code);
        if (code === 401) assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="mcp"');
        assert.match(await res.text(), new RegExp(`HTTP ${code}`));
        assert.deepEqual(
          obs.map((o) => [o.status, o.outcome]),
          [[code, 'no_answer']],
        );
      });
    }
  });

  describe('requests refused before the network', () => {
    it('a GET (the listening stream) is sent and outlives the budget; its events pass whole, past 1 MiB in all', async () => {
      const { f, obs } = probe({ timeoutMs: 300 });
      const ctl = new AbortController();
      const res = await f(`${PEER}/drip`, { method: 'GET', headers: { accept: 'text/event-stream' }, signal: ctl.signal });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const t0 = Date.now();
      let text = '';
      while (Date.now() - t0 < 1_000) text += new TextDecoder().decode((await reader.read()).value);
      assert.match(text, /: drip\n\n/, 'still open after three budgets');
      ctl.abort();
      await reader.read().catch(() => undefined);
      const big = await f(`${PEER}/big-sse`, { method: 'GET', headers: { accept: 'text/event-stream' } });
      const all = await big.text();
      assert.ok(all.length > 2 * 1024 * 1024, `${all.length} bytes`);
      assert.deepEqual(
        obs.map((o) => [o.method, o.outcome]),
        [
          ['GET', 'answered'],
          ['GET', 'answered'],
        ],
      );
    });

    it('a listening-stream event over 1 MiB ends the stream (ReplyTooLargeError)', async () => {
      const { f } = probe();
      const res = await f(`${PEER}/big-sse-one`, { method: 'GET', headers: { accept: 'text/event-stream' } });
      const text = await res.text().catch((e: unknown) => e);
      assert.ok(text instanceof ReplyTooLargeError, String(text).slice(0, 80));
    });

    it('header values with CR/LF/NUL/controls are refused without quoting the value', async () => {
      const { f, obs, conns } = probe();
      for (const value of ['Bearer s3cret\r\nX-Injected: 1', 'Bearer s3cret\n', 's3cret\0', 's3cret\x01', 's3cret\x7f', 's3cret\u2028']) {
        const err = await rejectsWith(f(`${PEER}/echo`, { ...rpcInit(), headers: { authorization: value } }), HeaderRefusedError);
        assert.doesNotMatch(err.message, /s3cret/);
        assert.match(err.message, /authorization/);
      }
      await rejectsWith(f(`${PEER}/echo`, { ...rpcInit(), headers: { host: 'evil.test' } }), HeaderRefusedError);
      await rejectsWith(f(`${PEER}/echo`, { ...rpcInit(), headers: [['bad name', 'x']] }), HeaderRefusedError);
      assert.equal(conns.length, 0);
      assert.ok(obs.every((o) => o.outcome === 'no_answer'));
    });

    it('credentials in the URL are refused without quoting them', async () => {
      const { f, conns } = probe();
      const err = await rejectsWith(f(`https://user:s3cret@mcp.test:${PEER_PORT}/echo`, rpcInit()), InvalidRequestError);
      assert.doesNotMatch(err.message, /s3cret/);
      assert.equal(conns.length, 0);
    });

    it('an observer that throws does not change the exchange', async () => {
      const { f } = probe({
        onObservation: () => {
          throw new Error('observer broke');
        },
      });
      const res = await f(`${PEER}/echo`, rpcInit());
      assert.equal(res.status, 200);
      await res.json();
    });

    it('valid headers reach the server', async () => {
      const { f } = probe();
      const res = await f(`${PEER}/echo`, { ...rpcInit(), headers: new Headers({ authorization: 'Bearer ok', 'x-tab': 'a\tb' }) });
      const j = (await res.json()) as { result: { headerNames: string[] } };
      assert.ok(j.result.headerNames.includes('authorization'));
    });

    it('with ownedHeaders, a header MCP Gate owns carries only the configured value; nothing else is sent', async () => {
      const { f, obs } = probe({ ownedHeaders: { Authorization: 'Bearer configured', 'X-Api-Key': 'k' } });
      const ok = await f(`${PEER}/echo`, { ...rpcInit(), headers: { authorization: 'Bearer configured', 'mcp-param-region': 'eu' } });
      assert.equal(ok.status, 200);
      for (const headers of [
        { Authorization: 'Bearer other' },
        { 'x-api-key': 'changed' },
        { Cookie: 'a=b' },
        { 'Proxy-Authorization': 'x' },
      ] as Array<Record<string, string>>) {
        await assert.rejects(
          f(`${PEER}/echo`, { ...rpcInit(), headers }),
          (e: unknown) => e instanceof HeaderRefusedError && /MCP Gate sets this header itself/.test(e.message),
        );
      }
      assert.equal(obs.filter((o) => o.error instanceof HeaderRefusedError).length, 4);
    });
  });

  describe('MCP SDK wiring (StreamableHTTPClientTransport + Client with the guarded fetch)', () => {
    async function connect(url: string, f: GuardedFetch): Promise<Client> {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        fetch: f,
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      });
      const client = new Client({ name: 'mcp-gate-test', version: '0.0.0' }, { capabilities: {} });
      client.onerror = () => undefined;
      await client.connect(transport, { timeout: 10_000 });
      return client;
    }

    it('initialize + tools/list + tools/call against an SDK server in the namespace', async () => {
      const { f, obs, conns } = probe({ timeoutMs: 10_000 });
      const client = await connect(`${PEER}/mcp`, f);
      try {
        assert.equal(client.getServerVersion()?.name, 'hostile-peer');
        const tools = await client.listTools(undefined, { timeout: 10_000 });
        assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['big', 'echo']);
        const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, undefined, { timeout: 10_000 });
        assert.deepEqual(r.content, [{ type: 'text', text: 'hi' }]);
      } finally {
        await client.close();
      }
      const methods = obs.filter((o) => o.method === 'POST').map((o) => `${o.method} ${o.rpc.map((c) => c.method).join()} ${o.outcome}`);
      assert.deepEqual(methods, [
        'POST initialize answered',
        'POST notifications/initialized answered',
        'POST tools/list answered',
        'POST tools/call answered',
      ]);
      // the SDK opens its listening stream after initialized (server→client requests of no call arrive there)
      assert.deepEqual(
        obs.filter((o) => o.method !== 'POST').map((o) => `${o.method} ${o.outcome}`),
        ['GET answered'],
      );
      assert.ok(conns.every((c) => c.address === PEER_ADDRESS && c.servername === 'mcp.test'));
    });

    it('a 2 MiB tool result fails the call at once (synthetic JSON-RPC error), not at the timeout', async () => {
      const budget = 30_000;
      const { f, obs } = probe({ timeoutMs: budget });
      const client = await connect(`${PEER}/mcp`, f);
      try {
        const err = await timed(budget - MARGIN_MS, () =>
          rejectsWith(client.callTool({ name: 'big', arguments: {} }, undefined, { timeout: budget }), McpError),
        );
        assert.equal((err as McpError).code, GATE_RPC_ERROR_CODE);
        assert.deepEqual((err as McpError).data, { mcpGate: 'REPLY_TOO_LARGE' });
      } finally {
        await client.close();
      }
      assert.equal(obs.at(-1)?.outcome, 'no_answer');
      assert.ok(obs.at(-1)?.error instanceof ReplyTooLargeError);
    });

    it('a stream that ends before the response fails the call at once', async () => {
      const budget = 30_000;
      const { f, obs } = probe({ timeoutMs: budget });
      const client = await connect(`${PEER}/rpc-early`, f);
      try {
        const err = await timed(budget - MARGIN_MS, () =>
          rejectsWith(client.callTool({ name: 'x', arguments: {} }, undefined, { timeout: budget }), McpError),
        );
        assert.equal((err as McpError).code, GATE_RPC_ERROR_CODE);
        assert.deepEqual((err as McpError).data, { mcpGate: 'STREAM_ENDED_EARLY' });
      } finally {
        await client.close();
      }
      assert.ok(obs.at(-1)?.error instanceof StreamEndedEarlyError);
    });

    it('a redirected endpoint fails connect with RedirectRefusedError', async () => {
      const { f, obs } = probe();
      await assert.rejects(connect(`${PEER}/redirect/307`, f), RedirectRefusedError);
      assert.equal(obs[0]?.outcome, 'redirected');
    });
  });

  describe('process health', () => {
    it('no unhandled rejections were raised by any case', () => {
      assert.deepEqual(unhandled.map(String), []);
    });
  });
});
