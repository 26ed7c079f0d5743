// The process VS Code starts for a gated server (a stdio definition of src/vscode/gateway-provider.ts): it carries
// the MCP messages of its stdin and stdout, unread, to and from the gateway's local endpoint in the extension host
// (src/host/gateway/gateway.ts), once it knows it reached that gateway: the socket's folder is checked first (only
// this user could have put a socket there), then the handshake of ./handshake.ts has the gateway prove it holds
// this server's token before the relay proves it in turn; the token itself is never sent, and nothing of stdin is
// sent before the gateway's ok. Whatever fails, the relay says why (naming the socket) and exits having sent
// nothing more. It decides nothing else: the gateway authenticates, the session checks the policy and logs. It
// imports nothing but Node (dist/relay.js is a few KiB, so a start costs one small Node process). Where the endpoint
// is and the token come in its environment (MCP_GATE_GATEWAY, MCP_GATE_GATEWAY_TOKEN), set only when VS Code
// resolves a start.
import * as net from 'node:net';
import {
  HANDSHAKE_MS,
  HANDSHAKE_VERSION,
  isNonce,
  MAX_GATEWAY_HELLO_BYTES,
  nonce,
  proofOf,
  sameProof,
  checkSocketFolder,
} from './handshake';

const endpoint = process.env.MCP_GATE_GATEWAY;
const token = process.env.MCP_GATE_GATEWAY_TOKEN;
const key = process.argv[2];

function fail(why: string): never {
  process.stderr.write(`MCP Gate: ${why}\n`);
  process.exit(1);
}

if (!endpoint || !token || !key)
  fail('this relay is started by MCP Gate in VS Code only (no gateway endpoint, token or server key given); start the server from VS Code');
const where = endpoint;
const secret = token;
const WINDOW_GONE = 'the window that started this server closed or reloaded; start the server again';
const folder = checkSocketFolder(where);
if (folder === 'gone') fail(`the gateway in VS Code cannot be reached at ${where} (its folder is gone): ${WINDOW_GONE}`);
if (folder !== 'ok')
  fail(`the gateway's socket ${where} is not in a folder only this user controls: ${folder.unsafe}; nothing was sent to it`);

/** The endpoint is not (or not proved to be) the gateway: said with its path, and nothing more is sent. */
const refuse = (why: string): never => fail(`the endpoint ${where} ${why}; nothing of this server's session was sent to it`);

const socket = net.connect(where);
socket.setNoDelay?.(true);
const relayNonce = nonce();
let gatewayNonce = '';
let stage: 'hello' | 'ok' | 'open' = 'hello';
let buffered: Buffer = Buffer.alloc(0);
const timer = setTimeout(() => refuse(`did not complete MCP Gate's handshake within ${HANDSHAKE_MS} ms`), HANDSHAKE_MS);

/** One line of the handshake: the gateway's proof, then its ok (or a refusal, said as the gateway gave it). */
function handshakeLine(text: string): void {
  let m: { mcpGate?: unknown; nonce?: unknown; proof?: unknown; ok?: unknown; error?: { message?: unknown } } | null;
  try {
    m = JSON.parse(text) as typeof m;
  } catch {
    return refuse("answered with something that is not MCP Gate's handshake");
  }
  const said = typeof m?.error?.message === 'string' ? m.error.message.replace(/^MCP Gate: /, '').slice(0, 300) : undefined;
  if (stage === 'hello') {
    if (said !== undefined) return refuse(`refused before proving it is MCP Gate's gateway (${JSON.stringify(said)})`);
    if (m === null || typeof m !== 'object' || m.mcpGate !== HANDSHAKE_VERSION || !isNonce(m.nonce))
      return refuse("answered with something that is not MCP Gate's handshake");
    if (!sameProof(m.proof, proofOf(secret, 'gateway', key, relayNonce, m.nonce)))
      return refuse(
        "did not prove it holds this server's token: it is not the gateway of the VS Code window that started this server (or this relay was given another token)",
      );
    gatewayNonce = m.nonce;
    stage = 'ok';
    socket.write(`${JSON.stringify({ proof: proofOf(secret, 'relay', key, relayNonce, gatewayNonce) })}\n`);
    return;
  }
  // The gateway proved itself: what it says now is its own.
  if (said !== undefined) fail(`the gateway in VS Code refused this server's connection: ${said}`);
  if (m === null || typeof m !== 'object' || m.mcpGate !== HANDSHAKE_VERSION || m.ok !== true)
    return refuse("answered with something that is not MCP Gate's handshake");
  stage = 'open';
  clearTimeout(timer);
  open();
}

/** Carries stdin and stdout, once the gateway said ok. */
function open(): void {
  socket.off('data', handshakeData);
  if (buffered.length) process.stdout.write(buffered);
  // Chunks are handed on as they come (no stream pipe between them: a pipe's flow control costs each message a turn).
  process.stdin.on('data', (chunk: Buffer) => {
    if (!socket.write(chunk)) process.stdin.pause();
  });
  socket.on('drain', () => process.stdin.resume());
  socket.on('data', (chunk: Buffer) => {
    if (!process.stdout.write(chunk)) socket.pause();
  });
  process.stdout.on('drain', () => socket.resume());
  process.stdin.on('end', () => socket.end());
}

function handshakeData(chunk: Buffer): void {
  buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
  while (stage !== 'open') {
    const nl = buffered.indexOf(10);
    if (nl > MAX_GATEWAY_HELLO_BYTES || (nl === -1 && buffered.length > MAX_GATEWAY_HELLO_BYTES))
      return refuse(`sent a handshake line over ${MAX_GATEWAY_HELLO_BYTES} bytes`);
    if (nl === -1) return;
    const text = buffered.subarray(0, nl).toString('utf8');
    buffered = buffered.subarray(nl + 1);
    handshakeLine(text);
  }
}

socket.once('connect', () => socket.write(`${JSON.stringify({ mcpGate: HANDSHAKE_VERSION, key, nonce: relayNonce })}\n`));
socket.on('data', handshakeData);
socket.on('error', (e) =>
  fail(
    stage === 'open'
      ? `the connection to the gateway in VS Code failed (${e.message}); start the server again`
      : `the gateway in VS Code cannot be reached at ${where} (${e.message}): ${WINDOW_GONE}`,
  ),
);
socket.on('close', () => {
  if (stage !== 'open') refuse("closed the connection before MCP Gate's handshake ended");
  process.exit(0);
});
process.stdout.on('error', () => process.exit(0));
