// The relay facing a socket that is not the gateway's (someone else's, placed at the gateway's path): it sends
// neither the token nor anything of stdin (the call and its arguments) before the gateway has proved it holds the
// server's token, and says why it stopped, naming the socket. And it does not even connect where another user could
// have placed the socket: a folder open to others, a link, a parent writable by others without the sticky bit.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { HANDSHAKE_VERSION, nonce } from '../../../../src/host/gateway/handshake';
import { runRelay } from '../gateway-socket';

const TOKEN = 'the-servers-token-0123456789abcdef';
const SECRET_ARG = 'an-argument-nobody-else-may-see';
const STDIN =
  [
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
    }),
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 't0', arguments: { text: SECRET_ARG } } }),
  ].join('\n') + '\n';

/** A socket at `where` that records every byte it is sent and answers each connection with `answer`. */
async function impostor(
  where: string,
  answer: (s: net.Socket) => void,
): Promise<{ got: () => string; connections: () => number; close: () => Promise<void> }> {
  let got = '';
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', () => undefined);
    answer(s);
  });
  await new Promise<void>((r) => server.listen(where, r));
  return { got: () => got, connections: () => connections, close: () => new Promise((r) => server.close(() => r())) };
}

describe('relay facing an impostor', function () {
  this.timeout(60_000);
  let base: string;
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-relay-'));
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  /** A private folder (0700, this user's) with an impostor's socket in it. */
  const privateSocket = () => {
    const dir = path.join(base, 'gw');
    fs.mkdirSync(dir, { mode: 0o700 });
    return path.join(dir, 'gateway.sock');
  };

  const cases: Array<[string, (s: net.Socket) => void, RegExp]> = [
    [
      'answers with a proof made without the token',
      (s) => s.write(`${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, nonce: nonce(), proof: 'A'.repeat(43) })}\n`),
      /did not prove it holds this server's token/,
    ],
    [
      'answers with the token itself as its proof',
      (s) => s.write(`${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, nonce: nonce(), proof: TOKEN })}\n`),
      /did not prove it holds this server's token/,
    ],
    [
      'says it refuses',
      (s) => s.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'MCP Gate: send the token' } })}\n`),
      /refused before proving it is MCP Gate's gateway/,
    ],
    ['sends junk', (s) => s.write('hello there\n'), /not MCP Gate's handshake/],
    ['sends an endless line', (s) => s.write(Buffer.alloc(64 * 1024, 'x')), /a handshake line over 4096 bytes/],
    ['closes at once', (s) => s.end(), /closed the connection before MCP Gate's handshake ended/],
    ['says nothing', () => undefined, /did not complete MCP Gate's handshake within 5000 ms/],
  ];
  for (const [what, answer, why] of cases)
    it(`that ${what}: nothing sensitive is sent, and the relay names the socket`, async () => {
      const where = privateSocket();
      const fake = await impostor(where, answer);
      try {
        const r = await runRelay('fx', { MCP_GATE_GATEWAY: where, MCP_GATE_GATEWAY_TOKEN: TOKEN }, STDIN);
        assert.equal(r.status, 1);
        assert.match(r.stderr, why);
        assert.ok(r.stderr.includes(`the endpoint ${where} `), r.stderr);
        assert.match(r.stderr, /nothing of this server's session was sent to it/);
        assert.equal(r.stdout, '');
        assert.equal(fake.connections(), 1);
        const got = fake.got();
        assert.ok(!got.includes(TOKEN), 'the token was sent');
        assert.ok(!got.includes(SECRET_ARG) && !got.includes('tools/call') && !got.includes('initialize'), `stdin was sent: ${got}`);
        // what it got: the relay's greeting only (the key and a fresh nonce)
        const first = JSON.parse(got.split('\n')[0]) as Record<string, unknown>;
        assert.deepEqual(Object.keys(first).sort(), ['key', 'mcpGate', 'nonce']);
      } finally {
        await fake.close();
      }
    });

  const unsafe: Array<[string, () => string, RegExp]> = [
    [
      'a folder open to other users',
      () => {
        const dir = path.join(base, 'open');
        fs.mkdirSync(dir);
        fs.chmodSync(dir, 0o755);
        return path.join(dir, 'gateway.sock');
      },
      /its folder .*open is open to other users \(mode 755\)/,
    ],
    [
      'a folder that is a link',
      () => {
        fs.symlinkSync(path.dirname(privateSocket()), path.join(base, 'link'));
        return path.join(base, 'link', 'gateway.sock');
      },
      /its folder .*link is a symbolic link/,
    ],
    [
      'a parent writable by other users without the sticky bit',
      () => {
        const parent = path.join(base, 'shared');
        fs.mkdirSync(parent);
        fs.chmodSync(parent, 0o777);
        const dir = path.join(parent, 'gw');
        fs.mkdirSync(dir, { mode: 0o700 });
        return path.join(dir, 'gateway.sock');
      },
      /shared is writable by other users without the sticky bit/,
    ],
    [
      // another local user (nobody) made the folder, mode 0700 as the gateway's own would be, and its socket in it
      'a folder another user owns',
      () => {
        const dir = path.join(base, 'theirs');
        fs.mkdirSync(dir, { mode: 0o700 });
        fs.chownSync(dir, 65534, 65534);
        return path.join(dir, 'gateway.sock');
      },
      /its folder .*theirs belongs to another user \(uid 65534\)/,
    ],
  ];
  for (const [what, place, why] of unsafe)
    it(`does not connect to a socket in ${what}, and says why`, async () => {
      const where = place();
      const fake = await impostor(where, () => undefined);
      try {
        const r = await runRelay('fx', { MCP_GATE_GATEWAY: where, MCP_GATE_GATEWAY_TOKEN: TOKEN }, STDIN);
        assert.equal(r.status, 1);
        assert.ok(r.stderr.includes(`the gateway's socket ${where} is not in a folder only this user controls`), r.stderr);
        assert.match(r.stderr, why);
        assert.equal(fake.connections(), 0);
      } finally {
        await fake.close();
      }
    });

  it('a sticky parent writable by others (as /tmp) is fine: the relay connects', async () => {
    const parent = path.join(base, 'sticky');
    fs.mkdirSync(parent);
    fs.chmodSync(parent, 0o1777);
    const dir = path.join(parent, 'gw');
    fs.mkdirSync(dir, { mode: 0o700 });
    const where = path.join(dir, 'gateway.sock');
    const fake = await impostor(where, (s) => s.end());
    try {
      const r = await runRelay('fx', { MCP_GATE_GATEWAY: where, MCP_GATE_GATEWAY_TOKEN: TOKEN }, STDIN);
      assert.equal(fake.connections(), 1);
      assert.match(r.stderr, /closed the connection before MCP Gate's handshake ended/);
    } finally {
      await fake.close();
    }
  });
});
