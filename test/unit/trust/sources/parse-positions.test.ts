// Positions in configuration files (file:line:column in every message): TOML keys found in one pass over the
// text — headers, key lines, dotted keys, inline tables, arrays of tables — never fooled by a multi-line string
// that looks like a header, and the same for the last of 32,000 servers in a 1 MiB file as for the first.
import assert from 'node:assert/strict';
import { ConfigParseError, parseJsonc, parseTomlDocument } from '../../../../src/trust/sources/parse';
import { evaluateGate } from '../../../../src/trust/gate';
import { cleanupTemp, world } from '../../helpers';

const pos = (text: string, keyPath: string[]) => {
  const p = parseTomlDocument('config.toml', text).positionOf(keyPath);
  return `${p.line}:${p.column}`;
};

const forbidden = (text: string): string => {
  try {
    parseTomlDocument('config.toml', text);
  } catch (e) {
    assert.ok(e instanceof ConfigParseError);
    return e.message;
  }
  assert.fail('accepted a forbidden key');
};

describe('parse: TOML positions', () => {
  after(cleanupTemp);

  it('a [table] header is its server; keys under it are their own lines and columns', () => {
    const text = 'model = "m"\n\n[mcp_servers.db]\n  command = "node"\n  args = ["a", "b"]\n[mcp_servers."quoted.name"]\ncommand = "x"\n';
    assert.equal(pos(text, ['model']), '1:1');
    assert.equal(pos(text, ['mcp_servers']), '3:1');
    assert.equal(pos(text, ['mcp_servers', 'db']), '3:1');
    assert.equal(pos(text, ['mcp_servers', 'db', 'command']), '4:3');
    assert.equal(pos(text, ['mcp_servers', 'db', 'args', '1']), '5:16');
    assert.equal(pos(text, ['mcp_servers', 'quoted.name']), '6:1');
    assert.equal(pos(text, ['mcp_servers', 'quoted.name', 'command']), '7:1');
  });

  it('dotted keys and inline tables, on one line or several', () => {
    const text = 'mcp_servers.a.command = "x"\nmcp_servers.b = { command = "y", env = { K = "v" } }\n';
    assert.equal(pos(text, ['mcp_servers', 'a']), '1:13');
    assert.equal(pos(text, ['mcp_servers', 'a', 'command']), '1:15');
    assert.equal(pos(text, ['mcp_servers', 'b', 'env', 'K']), '2:42');
    const table = '[mcp_servers]\nc = { command = "z",\n  env = { K = "v" } }\n';
    assert.equal(pos(table, ['mcp_servers', 'c']), '2:1');
    assert.equal(pos(table, ['mcp_servers', 'c', 'env', 'K']), '3:11');
  });

  it('a multi-line string that contains a header or a key is not taken for one', () => {
    const text =
      '[mcp_servers.a]\ncommand = "x"\ndescription = """\n[mcp_servers.b]\ncommand = "fake"\n"""\n[mcp_servers.b]\ncommand = \'real\'\n';
    assert.equal(pos(text, ['mcp_servers', 'b']), '7:1');
    assert.equal(pos(text, ['mcp_servers', 'b', 'command']), '8:1');
  });

  it('arrays of tables are numbered as in the parsed value', () => {
    const text = '[[x.list]]\nname = "one"\n[[x.list]]\nname = "two"\n[x.list.sub]\nk = 1\n';
    assert.equal(pos(text, ['x', 'list', '0', 'name']), '2:1');
    assert.equal(pos(text, ['x', 'list', '1', 'name']), '4:1');
    assert.equal(pos(text, ['x', 'list', '1', 'sub', 'k']), '6:1');
  });

  it('an unknown path falls back to its nearest parent, then to 1:1', () => {
    const text = 'a = 1\n[mcp_servers.s]\ncommand = "x"\n';
    assert.equal(pos(text, ['mcp_servers', 's', 'nothing']), '2:1');
    assert.equal(pos(text, ['nothing']), '1:1');
  });

  it('a forbidden key is named with its own line, wherever it is', () => {
    assert.match(forbidden('[mcp_servers.__proto__]\ncommand = "node"\n'), /config\.toml:1:1: the key "__proto__" is not allowed/);
    assert.match(
      forbidden('[mcp_servers.a]\ncommand = "node"\nenv = { constructor = "x" }\n'),
      /config\.toml:3:9: the key "constructor" is not allowed/,
    );
    assert.match(
      forbidden('[mcp_servers.a]\ncommand = "node"\n\n  prototype = 1\n'),
      /config\.toml:4:3: the key "prototype" is not allowed/,
    );
  });

  it('the last of 32,000 servers in a 1 MiB .codex/config.toml is named at its own line', () => {
    const text = Array.from({ length: 32_000 }, (_, i) => `[mcp_servers.s${i}]\ncommand="n"\n`).join('');
    assert.ok(Buffer.byteLength(text) <= 1024 * 1024);
    const doc = parseTomlDocument('config.toml', text);
    assert.deepEqual(doc.positionOf(['mcp_servers', 's31999']), { line: 63_999, column: 1 });
    assert.deepEqual(doc.positionOf(['mcp_servers', 's0']), { line: 1, column: 1 });
  });

  it('a repository file declaring more than 1,000 servers is unusable: a full block naming the file and the count', () => {
    const text = Array.from({ length: 32_000 }, (_, i) => `[mcp_servers.s${i}]\ncommand="n"\n`).join('');
    const w = world({ '.codex/config.toml': text });
    const r = evaluateGate(w.input);
    assert.equal(r.servers.length, 0);
    assert.match(
      r.fullBlock.map((b) => b.reason).join('\n'),
      /config\.toml:1:1: "mcp_servers" declares 32000 servers; more than 1000 in one file are refused/,
    );
  });
});

describe('parse: JSONC positions', () => {
  it('members are named at their own line and column; a syntax error at its own', () => {
    const d = parseJsonc('m.json', '{\n  // c\n  "mcpServers": {\n    "a": { "command": "x" }\n  }\n}');
    assert.deepEqual(d.positionOf(['mcpServers', 'a']), { line: 4, column: 5 });
    assert.deepEqual(d.positionOf(['mcpServers', 'a', 'command']), { line: 4, column: 12 });
    assert.throws(() => parseJsonc('m.json', '{\n "a": 1,\n "a": 2\n}'), /m\.json:3:2: duplicate key "a"/);
  });
});
