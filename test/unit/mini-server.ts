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

/**
 * The same in Python (standard library only): one tool, `hello`, whose answer is what `def on_call():` returns (its
 * body is `onCall`, lazy imports happen there); `prelude` runs at start. For fixtures under the load guard.
 */
export function pythonServer(onCall: string, prelude = ''): string {
  return `import json, os, sys, importlib
${prelude}
def on_call():
${onCall
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
for line in sys.stdin:
    msg = json.loads(line)
    if 'id' not in msg:
        continue
    def send(result):
        sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': result}) + '\\n'); sys.stdout.flush()
    if msg['method'] == 'initialize':
        send({'protocolVersion': msg['params']['protocolVersion'], 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'py', 'version': '1'}})
    elif msg['method'] == 'tools/list':
        send({'tools': [{'name': 'hello', 'description': 'says hello', 'inputSchema': {'type': 'object'}}]})
    elif msg['method'] == 'tools/call':
        try:
            said = on_call()
        except Exception as e:
            said = 'error: %s' % e
        send({'content': [{'type': 'text', 'text': str(said)}]})
    else:
        sys.stdout.write(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'error': {'code': -32601, 'message': 'no'}}) + '\\n'); sys.stdout.flush()
`;
}
