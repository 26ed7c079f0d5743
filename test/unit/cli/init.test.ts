// `mcp-gate init`: writes a commented user configuration where the gate reads it (HOME's ~/.config/mcp-gate, or
// MCP_GATE_CONFIG), creating the folder; grants nothing until edited; never overwrites; the uncommented examples
// are working rules for the --project repository.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, tempDir, world } from '../helpers';

describe('cli: mcp-gate init', () => {
  after(cleanupTemp);
  const servers = JSON.stringify({
    mcpServers: { everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } },
  });

  it('creates ~/.config/mcp-gate/config.json (and its folder) that grants nothing until edited', () => {
    const w = world({ '.mcp.json': servers });
    const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
    assert.equal(fs.existsSync(path.dirname(file)), false);
    const r = cli(w, ['init']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`wrote ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /^\s*\/\/ \{ "action": "mcp\.everything\.tool\.echo"/m);
    assert.ok(text.includes(JSON.stringify(fs.realpathSync(w.project))), 'the examples name the project by its real path');
    // the gate reads it as a valid, empty policy: echo is still denied
    const doctor = cli(w, ['doctor']);
    assert.match(doctor.stdout, new RegExp(`ok\\s+user\\s+${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const denied = cli(w, ['explain', 'mcp.everything.tool.echo', '--scope', 'repository']);
    assert.equal(denied.code, 1, denied.stdout);
  });

  it('uncommenting the example rule allows that tool for that repository', () => {
    const w = world({ '.mcp.json': servers });
    assert.equal(cli(w, ['init']).code, 0);
    const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
    const edited = fs.readFileSync(file, 'utf8').replace(/^(\s*)\/\/ (\{ "action": "mcp\.everything\.tool\.echo".*\}),$/m, '$1$2');
    assert.notEqual(edited, fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, edited);
    const allowed = cli(w, ['explain', 'mcp.everything.tool.echo', '--scope', 'repository']);
    assert.equal(allowed.code, 0, `${allowed.stdout}${allowed.stderr}`);
    assert.match(allowed.stdout, /allow/);
  });

  it('honours MCP_GATE_CONFIG and never overwrites an existing file', () => {
    const w = world();
    const file = path.join(tempDir(), 'nested', 'mine.json');
    const first = cli(w, ['init'], { env: { MCP_GATE_CONFIG: file } });
    assert.equal(first.code, 0, first.stderr);
    fs.writeFileSync(file, '{ "rules": [] } // mine');
    const again = cli(w, ['init'], { env: { MCP_GATE_CONFIG: file } });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /mine\.json already exists; edit it \(nothing was changed\)/);
    assert.equal(fs.readFileSync(file, 'utf8'), '{ "rules": [] } // mine');
  });

  it('refuses a --project that does not exist, and extra arguments', () => {
    const w = world();
    fs.rmSync(w.project, { recursive: true, force: true });
    const r = cli(w, ['init']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no such folder/);
    assert.equal(fs.existsSync(path.join(w.home, '.config', 'mcp-gate', 'config.json')), false);
    const w2 = world();
    assert.equal(cli(w2, ['init', 'extra']).code, 2);
  });
});
