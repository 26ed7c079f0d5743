// The project's own MCP server: a dependency-free stdio server (newline-delimited JSON-RPC) with one read-only
// tool, `list_notes`. Its content is pinned with the approval: any edit re-gates it.
const { createInterface } = require('node:readline');

const notes = ['Ship the trust panel', 'Review the approval store'];
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
const tools = [{ name: 'list_notes', description: 'Lists the project notes.', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }];

createInterface({ input: process.stdin }).on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return send({ id: null, error: { code: -32700, message: 'parse error' } }); }
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') return send({ id: msg.id, result: { protocolVersion: msg.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'notes', version: '1.0.0' } } });
  if (msg.method === 'ping') return send({ id: msg.id, result: {} });
  if (msg.method === 'tools/list') return send({ id: msg.id, result: { tools } });
  if (msg.method === 'tools/call' && msg.params?.name === 'list_notes') return send({ id: msg.id, result: { content: [{ type: 'text', text: notes.join('\n') }] } });
  send({ id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
});
