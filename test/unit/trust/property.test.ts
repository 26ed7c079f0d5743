// Property tests: random and mutated configuration files never make the gate throw, and never produce an
// approved server when nothing was approved.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evaluateGate } from '../../../src/trust/gate';
import { cleanupTemp, world, type World } from '../helpers';

const SEEDS: Record<string, string> = {
  '.vscode/mcp.json':
    '{ // c\n "inputs": [{"id": "k", "type": "promptString"}],\n "servers": { "a": { "command": "node", "args": ["s.js", "${input:k}"], "env": {"X": "1"} }, "b": { "type": "http", "url": "https://x.example/mcp" } } }',
  '.mcp.json': '{"mcpServers": {"a": {"command": "npx", "args": ["-y", "pkg"]}, "r": {"url": "https://r.example"}}}',
  '.codex/config.toml': 'model = "m"\n[mcp_servers.t]\ncommand = "uvx"\nargs = ["t"]\nenv = { A = "b" }\n',
  '.pi/mcp.json':
    '{"imports": ["cursor"], "settings": {"directTools": true, "toolPrefix": "server"}, "mcpServers": {"p": {"command": "p"}}}',
  '.gemini/settings.json': '{"mcpServers": {"g": {"httpUrl": "https://g.example"}}, "theme": "x"}',
};

const mutate = (text: string, ops: { at: number; del: number; ins: string }[]) => {
  let t = text;
  for (const op of ops) {
    const at = op.at % (t.length + 1);
    t = t.slice(0, at) + op.ins + t.slice(at + op.del);
  }
  return t;
};

describe('property: the gate never throws and never approves by itself', function () {
  this.timeout(120_000);
  after(cleanupTemp);
  let w: World;
  before(() => {
    w = world({ 's.js': 'x' });
  });

  const check = (file: string, content: string) => {
    const p = path.join(w.project, file);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
    try {
      const r = evaluateGate(w.input);
      for (const s of r.servers) assert.notEqual(s.state, 'approved', `${file}: ${JSON.stringify(content)}`);
      if (r.fullBlock.length) assert.ok(r.servers.every((s) => s.state === 'blocked'));
    } finally {
      fs.rmSync(p);
    }
  };

  it('mutated real configuration files', () => {
    const op = fc.record({
      at: fc.nat(),
      del: fc.nat({ max: 8 }),
      ins: fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.constantFrom('{', '}', '"', ',', '[', ']', '"__proto__":', '=', '\n', '\u0000', '"url": "https://x"', '"command": "c"'),
      ),
    });
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(SEEDS)), fc.array(op, { minLength: 1, maxLength: 6 }), (file, ops) => {
        check(file, mutate(SEEDS[file], ops));
      }),
      { numRuns: 300 },
    );
  });

  it('random JSON values in every JSON source', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('.vscode/mcp.json', '.mcp.json', '.pi/mcp.json', '.gemini/settings.json'),
        fc.jsonValue({ maxDepth: 5 }),
        (file, v) => {
          check(file, JSON.stringify(v));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('random server tables', () => {
    const entry = fc.dictionary(
      fc.constantFrom('command', 'url', 'args', 'env', 'type', 'headers', 'cwd', 'envFile', 'httpUrl', 'x'),
      fc.jsonValue({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 10 }), entry, { maxKeys: 5 }), (servers) => {
        check('.mcp.json', JSON.stringify({ mcpServers: servers }));
      }),
      { numRuns: 200 },
    );
  });

  it('random bytes', () => {
    fc.assert(
      fc.property(fc.constantFrom('.mcp.json', '.codex/config.toml'), fc.uint8Array({ maxLength: 200 }), (file, bytes) => {
        check(file, Buffer.from(bytes).toString('latin1'));
      }),
      { numRuns: 200 },
    );
  });
});
