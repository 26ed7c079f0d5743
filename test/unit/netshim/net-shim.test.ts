// The network shim (src/netshim/net-shim.ts, built to dist/netshim/net-shim.cjs; issue 44) against real peers: a
// small CONNECT proxy on loopback stands for MCP Gate's network door and maps names that resolve nowhere
// (mcp.test, refused.test) to an HTTPS, an HTTP and a TCP echo peer on loopback, or refuses them as
// src/host/net/egress.ts does (403 and a body naming the rule). A child `node --require net-shim.cjs -e <script>` with
// MCP_GATE_DOOR pointing at the proxy must reach each peer through the proxy only, with no proxy setting and no
// agent of its own: built-in fetch, https.get, http.get, net.connect (writes before the tunnel is up), a
// pg-style `new net.Socket().connect`, and tls.connect; a refusal is an error naming the proxy's status and rule;
// loopback is never tunnelled. Run on this Node and on every other Node found (Node 22/24 of `npm run vscode-host`).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeTestCerts, type TestCerts } from '../../fixtures/host/certs';
import { ROOT } from '../helpers';

const SHIM = path.join(ROOT, 'dist', 'netshim', 'net-shim.cjs');
const RULE = '{"action":"mcp.demo.network.refused.test","decision":"allow"}';

/** This Node and the others this machine has (the Node 22/24 `npm run vscode-host` downloads), by version. */
function nodes(): { version: string; bin: string }[] {
  const out = new Map<string, string>([[process.version, process.execPath]]);
  const cache = path.join(os.homedir(), '.cache', 'mcp-gate-vscode');
  let dirs: string[] = [];
  try {
    dirs = fs.readdirSync(cache).filter((d) => /^node-\d/.test(d));
  } catch {
    // no other Node here
  }
  for (const d of dirs) {
    const bin = path.join(cache, d, 'bin', 'node');
    if (fs.existsSync(bin)) out.set(`v${d.slice(5)}`, bin);
  }
  return [...out].map(([version, bin]) => ({ version, bin }));
}

interface Proxy {
  port: number;
  /** Each CONNECT asked, `host:port`. */
  asked: string[];
  close(): Promise<void>;
}

/** A CONNECT proxy: `routes` maps an authority to a loopback port; refused.test is refused as MCP Gate does. */
function startProxy(routes: Record<string, number>): Promise<Proxy> {
  const asked: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
    c.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      c.off('data', onData);
      const m = /^CONNECT (\S+) HTTP\/1\.1$/.exec(buf.subarray(0, end).toString('latin1').split('\r\n')[0]);
      const rest = buf.subarray(end + 4);
      if (!m) return void c.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
      asked.push(m[1]);
      const host = m[1].replace(/:\d+$/, '');
      if (host === 'closed.test') return void c.end();
      if (host === 'refused.test') {
        const body = `MCP Gate refused refused.test: no rule allows it (the rule ${RULE} would allow it)\n`;
        return void c.end(
          `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      }
      const port = routes[m[1]];
      if (!port) {
        const body = `MCP Gate: ${m[1]} is not a test peer\n`;
        return void c.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      }
      const up = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
        c.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (rest.length) up.write(rest);
        c.pipe(up);
        up.pipe(c);
      });
      sockets.add(up);
      up.on('close', () => sockets.delete(up));
      up.on('error', () => c.destroy());
      c.on('close', () => up.destroy());
    };
    c.on('data', onData);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        asked,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      }),
    );
  });
}

const listen = (s: net.Server): Promise<number> =>
  new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as net.AddressInfo).port)));

/** Runs `script` (CommonJS, top-level await inside an async wrapper) under the shim; its stdout and stderr. */
function run(bin: string, script: string, env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const base: Record<string, string | undefined> = { ...process.env };
    for (const k of Object.keys(base)) if (/^(https?_proxy|all_proxy|no_proxy|node_use_env_proxy|node_options)$/i.test(k)) delete base[k];
    const child = spawn(
      bin,
      [
        '--require',
        SHIM,
        '-e',
        `(async () => {\n${script}\n})().then(() => process.exit(), (e) => { console.log('FAILED', e && (e.cause ? e.message + ' | ' + (e.cause.message || e.cause) : e.message)); process.exit(3); });`,
      ],
      { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('netshim: fetch, http/https and raw TCP through a network door', function () {
  this.timeout(60_000);
  let certs: TestCerts;
  let proxy: Proxy;
  let httpsPeer: https.Server;
  let httpPeer: http.Server;
  let echo: net.Server;
  let httpPort = 0;
  let env: Record<string, string>;

  before(async () => {
    assert.ok(fs.existsSync(SHIM), `${SHIM} is missing: run npm run build`);
    certs = makeTestCerts('127.0.0.1');
    httpsPeer = https.createServer({ key: fs.readFileSync(certs.mcp.keyFile), cert: certs.mcp.cert }, (req, res) =>
      res.end(`https peer: ${req.method} ${req.url}`),
    );
    httpPeer = http.createServer((req, res) => res.end(`http peer: ${req.method} ${req.url}`));
    echo = net.createServer((c) => {
      c.on('error', () => undefined);
      c.pipe(c);
    });
    const [hs, hp, ep] = [await listen(httpsPeer), await listen(httpPeer), await listen(echo)];
    httpPort = hp;
    proxy = await startProxy({ 'mcp.test:443': hs, 'mcp.test:80': hp, 'mcp.test:5432': ep });
    env = { MCP_GATE_DOOR: `127.0.0.1:${proxy.port}`, NODE_EXTRA_CA_CERTS: certs.mcp.certFile };
  });

  after(async () => {
    await proxy?.close();
    for (const s of [httpsPeer, httpPeer]) s?.closeAllConnections();
    await Promise.all([httpsPeer, httpPeer, echo].map((s) => new Promise((r) => (s ? s.close(r) : r(undefined)))));
    certs?.remove();
  });

  beforeEach(() => {
    proxy.asked.length = 0;
  });

  for (const { version, bin } of nodes()) {
    describe(`on Node ${version}`, () => {
      it('built-in fetch reaches https and http peers by names that resolve nowhere, through the door', async () => {
        const r = await run(
          bin,
          `
          const key = Symbol.for('undici.globalDispatcher.1');
          console.log('undici loaded at start:', globalThis[key] !== undefined);
          const a = await fetch('https://mcp.test/a'); console.log(a.status, await a.text());
          const b = await fetch('http://mcp.test/b', { method: 'POST', body: 'x' }); console.log(b.status, await b.text());
          const d = globalThis[key]; const o = d[Object.getOwnPropertySymbols(d).find((k) => k.description === 'options')];
          console.log('dispatcher:', d.constructor.name, o && o.connect && o.connect.name);`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(
          r.out,
          /^undici loaded at start: false\n200 https peer: GET \/a\n200 http peer: POST \/b\ndispatcher: Agent undiciConnect\n$/,
        );
        assert.deepEqual(proxy.asked, ['mcp.test:443', 'mcp.test:80']);
      });

      it('https.get and http.get (the global agents) reach the peers through the door', async () => {
        const r = await run(
          bin,
          `
          const https = require('https'); const http = require('http');
          const get = (m, u) => new Promise((ok, no) => m.get(u, (res) => { let s = ''; res.on('data', (d) => s += d); res.on('end', () => ok(res.statusCode + ' ' + s)); }).on('error', no));
          console.log(await get(https, 'https://mcp.test/c'));
          console.log(await get(http, 'http://mcp.test/d'));
          console.log(await get(https, { host: 'mcp.test', path: '/e', agent: new https.Agent({ keepAlive: true }) }));`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(r.out, /200 https peer: GET \/c\n200 http peer: GET \/d\n200 https peer: GET \/e/);
        assert.deepEqual(proxy.asked, ['mcp.test:443', 'mcp.test:80', 'mcp.test:443']);
      });

      it("net.connect: writes before the tunnel is up wait for it; 'connect' comes after the proxy's 200", async () => {
        const r = await run(
          bin,
          `
          const net = require('net');
          const talk = (s, what) => new Promise((ok, no) => { let got = ''; s.on('data', (d) => { got += d; if (got.length >= what.length) { s.end(); ok(got); } }); s.on('error', no); });
          const a = net.connect(5432, 'mcp.test'); a.write('early '); a.write('bytes');
          let connected = false; a.on('connect', () => { connected = true; });
          console.log('a', await talk(a, 'early bytes'), connected, a.connecting);
          const b = new net.Socket(); b.connect({ port: 5432, host: 'mcp.test' }, () => b.write('pg-style'));
          console.log('b', await talk(b, 'pg-style'));
          const c = net.createConnection({ port: 5432, host: 'mcp.test' }); c.end('ended');
          let got = ''; c.on('data', (d) => got += d); await new Promise((ok) => c.on('close', ok)); console.log('c', got);`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(r.out, /^a early bytes true false\nb pg-style\nc ended\n$/);
        assert.deepEqual(proxy.asked, ['mcp.test:5432', 'mcp.test:5432', 'mcp.test:5432']);
      });

      it("npm clients that bring no proxy agent: node-fetch (on https's global agent) and undici's own Agent and fetch", async () => {
        const r = await run(
          bin,
          `
          const nodeFetch = require('node-fetch');
          const a = await nodeFetch('https://mcp.test/k'); console.log('node-fetch', a.status, await a.text());
          const undici = require('undici');
          const b = await undici.request('https://mcp.test/l', { dispatcher: new undici.Agent() }); console.log('undici request', b.statusCode, await b.body.text());
          const c = await undici.fetch('http://mcp.test/m'); console.log('undici fetch', c.status, await c.text());`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(
          r.out,
          /^node-fetch 200 https peer: GET \/k\nundici request 200 https peer: GET \/l\nundici fetch 200 http peer: GET \/m\n$/,
        );
        assert.deepEqual(proxy.asked, ['mcp.test:443', 'mcp.test:443', 'mcp.test:80']);
      });

      it('a worker thread and a child process started with the environment are carried too', async () => {
        const r = await run(
          bin,
          `
          const { Worker } = require('worker_threads');
          const w = new Worker("fetch('http://mcp.test/n').then(async (r) => require('worker_threads').parentPort.postMessage(r.status + ' ' + await r.text()), (e) => require('worker_threads').parentPort.postMessage('failed ' + (e.cause ? e.cause.message : e.message)))", { eval: true });
          console.log('worker', await new Promise((ok) => w.once('message', ok)));
          await w.terminate();
          const out = require('child_process').execFileSync(process.execPath, ['-e', "fetch('https://mcp.test/o').then(async (r) => console.log(r.status, await r.text()), (e) => console.log('failed', e.cause ? e.cause.message : e.message)).then(() => process.exit())"], { env: { ...process.env, NODE_OPTIONS: '--require ' + JSON.stringify(${JSON.stringify(SHIM)}) } });
          console.log('child', String(out).trim());`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(r.out, /^worker 200 http peer: GET \/n\nchild 200 https peer: GET \/o\n$/);
        assert.deepEqual(proxy.asked, ['mcp.test:80', 'mcp.test:443']);
      });

      it('tls.connect to a name reaches the peer through the door, the certificate checked against the name', async () => {
        const r = await run(
          bin,
          `
          const tls = require('tls');
          const s = tls.connect({ host: 'mcp.test', port: 443 }, () => { console.log('authorized', s.authorized, s.servername); s.end('GET /f HTTP/1.1\\r\\nhost: mcp.test\\r\\nconnection: close\\r\\n\\r\\n'); });
          let got = ''; s.on('data', (d) => got += d); await new Promise((ok, no) => { s.on('close', ok); s.on('error', no); });
          console.log(got.split('\\r\\n')[0], /https peer: GET \\/f/.test(got));
          // TLS over a socket whose tunnel is not open yet.
          const t = tls.connect({ socket: require('net').connect(443, 'mcp.test'), servername: 'mcp.test' }, () => t.end('GET /g HTTP/1.1\\r\\nhost: mcp.test\\r\\nconnection: close\\r\\n\\r\\n'));
          let got2 = ''; t.on('data', (d) => got2 += d); await new Promise((ok, no) => { t.on('close', ok); t.on('error', no); });
          console.log('over a pending tunnel', /https peer: GET \\/g/.test(got2));`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(r.out, /authorized true mcp\.test\nHTTP\/1\.1 200 OK true\nover a pending tunnel true\n$/);
        assert.deepEqual(proxy.asked, ['mcp.test:443', 'mcp.test:443']);
      });

      it('a refused CONNECT is an error with the status line and the rule that would allow it, for each client', async () => {
        const r = await run(
          bin,
          `
          const net = require('net'); const https = require('https'); const http = require('http');
          const said = (e) => (e.cause ? e.cause.message : e.message);
          try { await fetch('https://refused.test/'); console.log('fetch reached'); } catch (e) { console.log('fetch:', e.message, '|', said(e)); }
          await new Promise((ok) => https.get('https://refused.test/', () => { console.log('https reached'); ok(); }).on('error', (e) => { console.log('https:', e.code, e.message); ok(); }));
          await new Promise((ok) => http.get('http://refused.test/', () => { console.log('http reached'); ok(); }).on('error', (e) => { console.log('http:', e.code, e.message); ok(); }));
          await new Promise((ok) => { const s = net.connect(5432, 'refused.test'); s.write('x'); s.on('connect', () => { console.log('net connected'); ok(); }); s.on('error', (e) => { console.log('net:', e.code, e.message); ok(); }); });`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        const lines = r.out.trim().split('\n');
        assert.equal(lines.length, 4, r.out);
        const rule = RULE.replace(/[{}.]/g, (c) => `\\${c}`);
        assert.match(
          lines[0],
          new RegExp(
            `^fetch: fetch failed \\| connect to refused\\.test:443 through MCP Gate's network door refused: HTTP/1\\.1 403 Forbidden — MCP Gate refused refused\\.test: no rule allows it \\(the rule ${rule} would allow it\\)$`,
          ),
        );
        assert.match(lines[1], new RegExp(`^https: ECONNREFUSED connect to refused\\.test:443 .*403 Forbidden — .*${rule}`));
        assert.match(lines[2], new RegExp(`^http: ECONNREFUSED connect to refused\\.test:80 .*403 Forbidden — .*${rule}`));
        assert.match(lines[3], new RegExp(`^net: ECONNREFUSED connect to refused\\.test:5432 .*403 Forbidden — .*${rule}`));
        assert.deepEqual(proxy.asked, ['refused.test:443', 'refused.test:443', 'refused.test:80', 'refused.test:5432']);
      });

      it('a door that closes without answering, or refuses with 502, is a connection error saying so', async () => {
        const r = await run(
          bin,
          `
          const net = require('net');
          const attempt = (host) => new Promise((ok) => { const s = net.connect(5432, host); s.on('connect', () => { console.log(host, 'connected'); s.destroy(); ok(); }); s.on('error', (e) => { console.log(host, e.code, e.message); ok(); }); });
          await attempt('closed.test'); await attempt('unknown.test');`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(
          r.out,
          /^closed\.test ECONNREFUSED connect to closed\.test:5432 through MCP Gate's network door refused: the door closed the connection before answering\nunknown\.test ECONNREFUSED connect to unknown\.test:5432 through MCP Gate's network door refused: HTTP\/1\.1 502 Bad Gateway — MCP Gate: unknown\.test:5432 is not a test peer\n$/,
        );
      });

      it('loopback is never tunnelled; without MCP_GATE_DOOR nothing is', async () => {
        const r = await run(
          bin,
          `
          for (const h of ['127.0.0.1', 'localhost', '[::1]']) {
            try { const a = await fetch('http://' + h + ':${httpPort}/g'); console.log(h, a.status, await a.text()); } catch (e) { console.log(h, 'no', e.cause ? e.cause.code : e.message); }
          }
          await new Promise((ok) => require('http').get('http://127.0.0.1:${httpPort}/h', (res) => { res.resume(); console.log('http', res.statusCode); ok(); }));`,
          env,
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(r.out, /^127\.0\.0\.1 200 http peer: GET \/g\nlocalhost 200 http peer: GET \/g\n\[::1\] (200|no)/);
        assert.match(r.out, /http 200\n$/);
        assert.deepEqual(proxy.asked, []);
        const plain = await run(
          bin,
          `try { await fetch('https://mcp.test/'); console.log('reached'); } catch (e) { console.log('no', e.cause ? e.cause.code : e.message); }`,
          { NODE_EXTRA_CA_CERTS: certs.mcp.certFile },
        );
        assert.match(plain.out, /^no (ENOTFOUND|EAI_AGAIN)/);
        assert.deepEqual(proxy.asked, []);
      });

      it('beside the proxy variables MCP Gate also sets (NODE_USE_ENV_PROXY, HTTPS_PROXY), every client still works', async () => {
        const door = `http://127.0.0.1:${proxy.port}`;
        const r = await run(
          bin,
          `
          const a = await fetch('https://mcp.test/i'); console.log(a.status, await a.text());
          await new Promise((ok, no) => require('https').get('https://mcp.test/j', (res) => { let s = ''; res.on('data', (d) => s += d); res.on('end', () => { console.log(res.statusCode, s); ok(); }); }).on('error', no));`,
          { ...env, HTTPS_PROXY: door, HTTP_PROXY: door, https_proxy: door, http_proxy: door, NODE_USE_ENV_PROXY: '1' },
        );
        assert.equal(r.code, 0, r.out + r.err);
        assert.match(r.out, /200 https peer: GET \/i\n200 https peer: GET \/j/);
        assert.deepEqual(proxy.asked, ['mcp.test:443', 'mcp.test:443']);
      });
    });
  }

  describe('the Python shim (src/netshim/mcp_gate_netshim.py, run by the load guard)', () => {
    const PY_SHIM = path.join(ROOT, 'dist', 'netshim', 'mcp_gate_netshim.py');
    const py = (script: string, extra: Record<string, string> = env): Promise<{ code: number | null; out: string; err: string }> =>
      new Promise((resolve) => {
        const base: Record<string, string | undefined> = { ...process.env };
        for (const k of Object.keys(base)) if (/^(https?_proxy|all_proxy|no_proxy)$/i.test(k)) delete base[k];
        const prelude = `import runpy\nrunpy.run_path(${JSON.stringify(PY_SHIM)})['install']()\n`;
        const child = spawn('/usr/bin/python3', ['-c', prelude + script], {
          env: { ...base, ...extra },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, out, err });
        });
      });

    it('names that resolve nowhere reach their peers through the door: http.client over TLS, asyncio streams, raw TCP; a refusal names the rule; loopback is not tunnelled', async () => {
      const r = await py(`
import asyncio, http.client, socket, ssl
ctx = ssl.create_default_context(cafile=${JSON.stringify(certs.mcp.certFile)})
c = http.client.HTTPSConnection('mcp.test', 443, context=ctx, timeout=10); c.request('GET', '/py'); print(c.getresponse().read().decode())
async def echo():
    r, w = await asyncio.open_connection('mcp.test', 5432)
    w.write(b'ping over asyncio'); await w.drain(); got = await r.read(17); w.close(); return got.decode()
print(asyncio.run(echo()))
s = socket.create_connection(('mcp.test', 5432), timeout=10); s.sendall(b'raw ping'); print(s.recv(8).decode()); s.close()
try:
    socket.create_connection(('refused.test', 5432), timeout=10); print('refused.test reached')
except ConnectionRefusedError as e:
    print('refused:', e)
l = socket.create_connection(('127.0.0.1', ${httpPort}), timeout=10); l.sendall(b'GET /loop HTTP/1.0\\r\\n\\r\\n'); print(l.recv(4096).decode().split('\\r\\n')[-1])
`);
      assert.equal(r.code, 0, r.out + r.err);
      const rule = RULE.replace(/[{}.]/g, (c) => `\\${c}`);
      assert.match(
        r.out,
        new RegExp(
          `^https peer: GET /py\\nping over asyncio\\nraw ping\\nrefused: \\[Errno 111\\] MCP Gate refused refused\\.test:5432: HTTP/1\\.1 403 Forbidden MCP Gate refused refused\\.test: no rule allows it \\(the rule ${rule} would allow it\\)\\nhttp peer: GET /loop\\n$`,
        ),
      );
      assert.deepEqual(proxy.asked, ['mcp.test:443', 'mcp.test:5432', 'mcp.test:5432', 'refused.test:5432']);
    });

    it('without MCP_GATE_DOOR it changes nothing', async () => {
      const r = await py(
        `
import socket
try:
    socket.getaddrinfo('mcp.test', 443); print('resolved')
except socket.gaierror as e:
    print('not resolved')
print(socket.socket.connect.__qualname__)
`,
        {},
      );
      assert.equal(r.code, 0, r.out + r.err);
      assert.equal(r.out, 'not resolved\nsocket.connect\n');
      assert.deepEqual(proxy.asked, []);
    });
  });
});
