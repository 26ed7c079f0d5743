// The process VS Code starts for a gated server (a stdio definition of src/vscode/gateway-provider.ts): it carries
// the MCP messages of its stdin and stdout, unread, to and from the gateway's local endpoint in the extension host
// (src/host/gateway/gateway.ts `LocalEndpoint`), after a first line that names the server's key and the per-run token. It
// decides nothing: the gateway authenticates, the session checks the policy and logs. It imports nothing but Node
// (dist/relay.js is a few KiB, so a start costs one small Node process). Where the endpoint is and the token come in
// its environment (MCP_GATE_GATEWAY, MCP_GATE_GATEWAY_TOKEN), set only when VS Code resolves a start.
import * as net from 'node:net';

const endpoint = process.env.MCP_GATE_GATEWAY;
const token = process.env.MCP_GATE_GATEWAY_TOKEN;
const key = process.argv[2];

function fail(why: string): never {
  process.stderr.write(`MCP Gate: ${why}\n`);
  process.exit(1);
}

if (!endpoint || !token || !key)
  fail('this relay is started by MCP Gate in VS Code only (no gateway endpoint, token or server key given); start the server from VS Code');
const socket = net.connect(endpoint);
socket.setNoDelay?.(true);
socket.once('connect', () => {
  socket.write(`${JSON.stringify({ mcpGate: 1, key, token })}\n`);
  // Chunks are handed on as they come (no stream pipe between them: a pipe's flow control costs each message a turn).
  process.stdin.on('data', (chunk: Buffer) => {
    if (!socket.write(chunk)) process.stdin.pause();
  });
  socket.on('drain', () => process.stdin.resume());
  socket.on('data', (chunk: Buffer) => {
    if (!process.stdout.write(chunk)) socket.pause();
  });
  process.stdout.on('drain', () => socket.resume());
});
socket.on('error', (e) =>
  fail(
    `the gateway in VS Code cannot be reached (${e.message}): the window that started this server closed or reloaded; start the server again`,
  ),
);
socket.on('close', () => process.exit(0));
process.stdin.on('end', () => socket.end());
process.stdout.on('error', () => process.exit(0));
