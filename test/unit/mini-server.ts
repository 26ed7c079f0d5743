// A dependency-free stdio MCP server as source text, for fixtures that write one into a workspace: one tool,
// `hello` (or the name given). `prelude` runs at start; `onCall` is an expression evaluated when the tool is called, whose value (if a
// string) is the tool's answer — lazy loads happen there.
export function miniServer(prelude = '', onCall = '', tool = 'hello'): string {
  return `${prelude}
const { createInterface } = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') return send({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fx', version: '1' } } });
  if (msg.method === 'tools/list') return send({ id: msg.id, result: { tools: [{ name: ${JSON.stringify(tool)}, description: 'says hello', inputSchema: { type: 'object' } }] } });
  if (msg.method === 'tools/call') { let said = 'hi'; try { const v = (() => { return ${onCall || 'undefined'}; })(); if (typeof v === 'string') said = v; } catch (e) { said = 'error: ' + e.message; } return send({ id: msg.id, result: { content: [{ type: 'text', text: said }] } }); }
  send({ id: msg.id, error: { code: -32601, message: 'no' } });
});
`;
}
