// Every source format of the catalogue is read, and every malformed declaration is refused with a message that
// names the file, the server and the position.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { evaluateGate } from '../../../../src/trust/gate';
import { type GateReport } from '../../../../src/trust/report';
import { cleanupTemp, json, world } from '../../helpers';

const one = (r: GateReport, name: string) => {
  const s = r.servers.filter((x) => x.name === name);
  assert.equal(s.length, 1, `expected one server ${name}, got ${s.length}`);
  return s[0];
};

describe('sources: each format', () => {
  after(cleanupTemp);

  const cases: { file: string; content: string; kind: string }[] = [
    {
      file: '.vscode/mcp.json',
      kind: 'vscode',
      content: '{ // comment\n "servers": { "s": { "type": "stdio", "command": "node", "args": ["x.js"] } }, }',
    },
    { file: '.mcp.json', kind: 'claude', content: '{"mcpServers": {"s": {"command": "node"}}}' },
    { file: '.cursor/mcp.json', kind: 'cursor', content: '{"mcpServers": {"s": {"url": "https://mcp.example.com/mcp"}}}' },
    {
      file: '.gemini/settings.json',
      kind: 'gemini',
      content: '{"theme": "dark", "mcpServers": {"s": {"httpUrl": "https://mcp.example.com/mcp"}}}',
    },
    { file: '.codex/config.toml', kind: 'codex', content: 'model = "o3"\n[mcp_servers.s]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n' },
    { file: '.pi/mcp.json', kind: 'pi', content: '{"mcpServers": {"s": {"command": "node"}}}' },
    { file: '.agentty/mcp.json', kind: 'agentty', content: '{"mcpServers": {"s": {"command": "node"}}}' },
    { file: '.roo/mcp.json', kind: 'roo', content: '{"mcpServers": {"s": {"command": "node", "alwaysAllow": ["x"]}}}' },
    { file: '.kiro/settings/mcp.json', kind: 'kiro', content: '{"mcpServers": {"s": {"command": "node"}}}' },
    { file: '.amazonq/mcp.json', kind: 'amazonq', content: '{"mcpServers": {"s": {"command": "node"}}}' },
  ];
  for (const c of cases) {
    it(`reads ${c.file} as repository scope, pending`, () => {
      const w = world({ [c.file]: c.content });
      const r = evaluateGate(w.input);
      assert.deepEqual(r.fullBlock, [], json(r.fullBlock));
      const s = one(r, 's');
      assert.equal(s.scope, 'repository');
      assert.equal(s.kind, c.kind);
      assert.equal(s.source, c.file);
      assert.equal(s.state, 'pending');
      assert.ok(s.pinned?.digest.startsWith('sha256:'));
    });
  }

  it('reads the gemini url (SSE) and httpUrl (streamable) both as remote', () => {
    const w = world({
      '.gemini/settings.json': '{"mcpServers": {"a": {"url": "https://a.example/sse"}, "b": {"httpUrl": "https://b.example/mcp"}}}',
    });
    const r = evaluateGate(w.input);
    assert.equal(one(r, 'a').definition?.url, 'https://a.example/sse');
    assert.equal(one(r, 'b').definition?.type, 'http');
  });

  it('reads codex http_headers as headers', () => {
    const w = world({ '.codex/config.toml': '[mcp_servers.r]\nurl = "https://r.example/mcp"\nhttp_headers = { "X-Key" = "v" }\n' });
    assert.deepEqual(one(evaluateGate(w.input), 'r').definition?.headers, { 'X-Key': 'v' });
  });

  it('reads user-scope servers from the MCP Gate config as trusted', () => {
    const w = world({}, { '.config/mcp-gate/config.json': '{"servers": {"mine": {"command": "my-server"}}}' });
    const s = one(evaluateGate(w.input), 'mine');
    assert.equal(s.scope, 'user');
    assert.equal(s.state, 'trusted');
    assert.equal(s.gated, false);
  });

  it('finds the MCP Gate config through MCP_GATE_CONFIG', () => {
    const w = world({}, { 'elsewhere/gate.jsonc': '{"servers": {"mine": {"command": "x"}}}' });
    const cfg = path.join(w.home, 'elsewhere/gate.jsonc');
    const r = evaluateGate({ ...w.input, machine: { ...w.machine, env: { ...w.machine.env, MCP_GATE_CONFIG: cfg } } });
    assert.equal(one(r, 'mine').file, cfg);
  });
});

describe('sources: malformed declarations are refused by name and position', () => {
  after(cleanupTemp);

  it('both command and url: blocked, naming file, server and line:column', () => {
    const w = world({ '.mcp.json': '{\n  "mcpServers": {\n    "both": { "command": "node", "url": "https://x.example" }\n  }\n}' });
    const s = one(evaluateGate(w.input), 'both');
    assert.equal(s.state, 'blocked');
    assert.match(s.reason, /\.mcp\.json:3:5: server "both": declares both "command" and "url"/);
  });

  it('neither command nor url: blocked with the position', () => {
    const w = world({ '.vscode/mcp.json': '{"servers": {\n"none": { "args": ["x"] }}}' });
    const s = one(evaluateGate(w.input), 'none');
    assert.equal(s.state, 'blocked');
    assert.match(s.reason, /mcp\.json:2:1: server "none": declares neither "command" nor "url"/);
  });

  it('a type that contradicts the entry is blocked', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"t": {"type": "http", "command": "node"}}}' });
    assert.match(one(evaluateGate(w.input), 't').reason, /type "http" needs a "url"/);
  });

  it('a broken JSON file in the repository is a full block naming the file and line:column', () => {
    const w = world({ '.cursor/mcp.json': '{\n  "mcpServers": {\n    "a": { "command": "node" \n  }\n' });
    const r = evaluateGate(w.input);
    assert.equal(r.fullBlock.length, 1);
    assert.match(r.fullBlock[0].reason, /\.cursor\/mcp\.json:\d+:\d+: JSON syntax error/);
    assert.deepEqual(r.fullBlock[0].files, [path.join(r.project, '.cursor/mcp.json')]);
  });

  it('refuses __proto__ and constructor keys anywhere', () => {
    for (const content of [
      '{"mcpServers": {"__proto__": {"command": "node"}}}',
      '{"mcpServers": {"a": {"command": "node", "env": {"constructor": "x"}}}}',
      '{"__proto__": {"mcpServers": {}}}',
    ]) {
      const w = world({ '.mcp.json': content });
      const r = evaluateGate(w.input);
      assert.equal(r.fullBlock.length, 1, content);
      assert.match(r.fullBlock[0].reason, /the key "(__proto__|constructor)" is not allowed/);
      assert.equal(({} as Record<string, unknown>).command, undefined, 'Object.prototype untouched');
    }
  });

  it('refuses __proto__ in TOML', () => {
    const w = world({ '.codex/config.toml': '[mcp_servers.__proto__]\ncommand = "node"\n' });
    const r = evaluateGate(w.input);
    assert.match(r.fullBlock[0].reason, /config\.toml:1:1: the key "__proto__" is not allowed/);
  });

  it('refuses duplicate keys (a reader could take either)', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"a": {"command": "safe"}, "a": {"command": "evil"}}}' });
    assert.match(evaluateGate(w.input).fullBlock[0].reason, /duplicate key "a"/);
  });

  it('refuses a file over 1 MiB', () => {
    const w = world({ '.mcp.json': `{"mcpServers": {}, "pad": "${'x'.repeat(1024 * 1024)}"}` });
    const r = evaluateGate(w.input);
    assert.match(r.fullBlock[0].reason, /files over 1048576 bytes are refused/);
  });

  it('refuses invalid UTF-8', () => {
    const w = world({ '.mcp.json': Buffer.from([0x7b, 0xff, 0x7d]) });
    assert.match(evaluateGate(w.input).fullBlock[0].reason, /not valid UTF-8/);
  });

  it('refuses an unknown top-level key in a dedicated MCP file', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {}, "autoApproveAll": true}' });
    assert.match(evaluateGate(w.input).fullBlock[0].reason, /unknown top-level key "autoApproveAll"/);
  });

  it('a TOML syntax error keeps its line and column', () => {
    const w = world({ '.codex/config.toml': 'model = "x"\n[mcp_servers.a\ncommand = "node"\n' });
    const r = evaluateGate(w.input);
    assert.match(r.fullBlock[0].reason, /config\.toml:2:\d+: TOML syntax error/);
  });

  it('a server name that cannot be written into a rule is blocked with what to do', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"my.server": {"command": "node"}}}' });
    assert.match(one(evaluateGate(w.input), 'my.server').reason, /rename the server/);
  });

  it('one bad entry does not hide the good ones', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"bad": {}, "good": {"command": "node"}}}' });
    const r = evaluateGate(w.input);
    assert.equal(one(r, 'bad').state, 'blocked');
    assert.equal(one(r, 'good').state, 'pending');
  });
});
