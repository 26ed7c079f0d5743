// remove / enable / disable edit only MCP Gate's own configuration, keeping its comments; a server that lives in
// a repository file, another tool's file or an imported file is refused with the name of the file to edit.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, world } from '../../helpers';

describe('editing servers: enable, disable, remove', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  const CONFIG =
    '{\n  // my servers\n  "imports": ["cursor"],\n  "servers": {\n    // keep this comment\n    "mine": { "command": "my-server" },\n    "other": { "command": "x" }\n  }\n}\n';

  it("disable and enable a server in MCP Gate's configuration, keeping comments; a disabled server does not start", () => {
    const w = world({}, { '.config/mcp-gate/config.json': CONFIG });
    const file = path.join(w.home, '.config/mcp-gate/config.json');
    const d = cli(w, ['disable', 'mine']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /disabled "mine" in .*config\.json/);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /\/\/ my servers/);
    assert.match(text, /\/\/ keep this comment/);
    assert.match(cli(w, ['list']).stdout, /trusted \(your own\), disabled\s+user\s+.*mine/);
    const t = cli(w, ['tools', 'mine']);
    assert.equal(t.code, 1);
    assert.match(t.stderr, /mine .* is left out: it is disabled in .*config\.json/);
    assert.equal(cli(w, ['enable', 'mine']).code, 0);
    assert.doesNotMatch(fs.readFileSync(file, 'utf8'), /disabled/);
  });

  it('remove deletes the entry and nothing else', () => {
    const w = world({}, { '.config/mcp-gate/config.json': CONFIG });
    assert.equal(cli(w, ['remove', 'other']).code, 0);
    const text = fs.readFileSync(path.join(w.home, '.config/mcp-gate/config.json'), 'utf8');
    assert.doesNotMatch(text, /"other"/);
    assert.match(text, /"mine"/);
    assert.match(text, /\/\/ keep this comment/);
  });

  it('an imported server is refused with the file to edit', () => {
    const w = world({}, { '.config/mcp-gate/config.json': CONFIG, '.cursor/mcp.json': '{"mcpServers": {"cur": {"command": "c"}}}' });
    const r = cli(w, ['disable', 'cur']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /"cur" is imported \(by .*config\.json\) from .*\.cursor\/mcp\.json; .* edit .*\.cursor\/mcp\.json instead/);
    assert.equal(fs.readFileSync(path.join(w.home, '.cursor/mcp.json'), 'utf8'), '{"mcpServers": {"cur": {"command": "c"}}}');
  });

  it('a repository server is refused with the file to edit', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"repo": {"command": "r"}}}' });
    const r = cli(w, ['remove', 'repo']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /"repo" is declared in the repository \(.*\.mcp\.json\); .* edit .*\.mcp\.json instead/);
  });

  it('a disabled repository server is listed as such and never started', () => {
    const w = world({ '.roo/mcp.json': '{"mcpServers": {"off": {"command": "node", "disabled": true}}}' });
    assert.match(cli(w, ['list']).stdout, /waiting for review, disabled\s+repository\s+\.roo\/mcp\.json\s+off/);
  });
});
