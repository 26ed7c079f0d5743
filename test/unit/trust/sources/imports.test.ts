// Imports and full-block states: who chose a file decides whether it is gated; a present but unusable source
// blocks everything; unprefixed direct tools across merged layers block everything and name every file.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { evaluateGate } from '../../../../src/trust/gate';
import { cleanupTemp, world } from '../../helpers';

describe('imports', () => {
  after(cleanupTemp);

  it("a user-scope import of another tool's user file is trusted", () => {
    const w = world(
      {},
      {
        '.config/mcp-gate/config.json': '{"imports": ["cursor"]}',
        '.cursor/mcp.json': '{"mcpServers": {"c": {"command": "cursor-server"}}}',
      },
    );
    const r = evaluateGate(w.input);
    const s = r.servers.find((x) => x.name === 'c')!;
    assert.equal(s.state, 'trusted');
    assert.deepEqual(s.importedBy, [path.join(w.home, '.config/mcp-gate/config.json')]);
    assert.deepEqual(
      r.importers.map((i) => i.kinds),
      [['cursor']],
    );
  });

  it("a user-scope import of vscode still gates the repository's .vscode/mcp.json", () => {
    const w = world(
      { '.vscode/mcp.json': '{"servers": {"v": {"command": "node"}}}' },
      { '.config/mcp-gate/config.json': '{"imports": ["vscode"]}' },
    );
    const s = evaluateGate(w.input).servers.find((x) => x.name === 'v')!;
    assert.equal(s.gated, true);
    assert.equal(s.state, 'pending');
  });

  it('a repository file importing a user file makes those servers gated', () => {
    const w = world(
      { '.pi/mcp.json': '{"imports": ["cursor"]}' },
      { '.cursor/mcp.json': '{"mcpServers": {"c": {"command": "cursor-server"}}}' },
    );
    const s = evaluateGate(w.input).servers.find((x) => x.name === 'c')!;
    assert.equal(s.scope, 'user');
    assert.equal(s.gated, true);
    assert.equal(s.state, 'pending');
    assert.match(s.reason, /imported by repository configuration .*\.pi\/mcp\.json/);
  });

  it('an unknown import kind in the repository is a full block', () => {
    const w = world({ '.pi/mcp.json': '{"imports": ["evil"]}' });
    assert.match(evaluateGate(w.input).fullBlock[0].reason, /unknown import kind "evil"/);
  });

  it('missing import targets are reported, not errors', () => {
    const w = world({}, { '.config/mcp-gate/config.json': '{"imports": ["gemini"]}' });
    const r = evaluateGate(w.input);
    assert.deepEqual(r.fullBlock, []);
    assert.ok(r.missingImportTargets.some((t) => t.kind === 'gemini' && t.file === path.join(w.home, '.gemini/settings.json')));
  });

  it('an unreadable TOML in the repository is a full block', () => {
    const w = world({ '.codex/config.toml': '[mcp_servers.a]\ncommand = \n', '.mcp.json': '{"mcpServers": {"ok": {"command": "node"}}}' });
    const r = evaluateGate(w.input);
    assert.equal(r.fullBlock.length, 1);
    assert.match(r.fullBlock[0].reason, /\.codex\/config\.toml exists but cannot be used/);
    assert.ok(
      r.servers.every((s) => s.state === 'blocked'),
      'every server is blocked',
    );
  });

  it('a repository import of an unreadable user file is a full block naming both files', () => {
    const w = world({ '.agentty/mcp.json': '{"imports": ["codex"]}' }, { '.codex/config.toml': 'not toml [' });
    const r = evaluateGate(w.input);
    assert.equal(r.fullBlock.length, 1);
    assert.ok(r.fullBlock[0].files.includes(path.join(w.home, '.codex/config.toml')));
    assert.ok(r.fullBlock[0].files.includes(path.join(r.project, '.agentty/mcp.json')));
  });

  it('a user import of an unreadable file is reported but blocks nothing', () => {
    const w = world(
      { '.mcp.json': '{"mcpServers": {"ok": {"command": "node"}}}' },
      {
        '.config/mcp-gate/config.json': '{"imports": ["codex"]}',
        '.codex/config.toml': 'not toml [',
      },
    );
    const r = evaluateGate(w.input);
    assert.deepEqual(r.fullBlock, []);
    assert.equal(r.sources.find((s) => s.kind === 'codex' && s.scope === 'user')?.status, 'unreadable');
  });

  it('unprefixed direct tools split across a user and a repository file: full block naming both', () => {
    const w = world(
      { '.pi/mcp.json': '{"settings": {"toolPrefix": "none"}, "mcpServers": {"p": {"command": "node"}}}' },
      {
        '.config/mcp-gate/config.json': '{"settings": {"directTools": true}}',
      },
    );
    const r = evaluateGate(w.input);
    assert.equal(r.fullBlock.length, 1);
    assert.match(r.fullBlock[0].reason, /toolPrefix "none"/);
    assert.deepEqual(
      r.fullBlock[0].files.sort(),
      [path.join(w.home, '.config/mcp-gate/config.json'), path.join(r.project, '.pi/mcp.json')].sort(),
    );
  });

  it('unprefixed direct tools split across two repository files: full block naming both', () => {
    const w = world({
      '.pi/mcp.json': '{"settings": {"directTools": ["search"]}}',
      '.agentty/mcp.json': '{"settings": {"toolPrefix": "none"}}',
    });
    const r = evaluateGate(w.input);
    assert.deepEqual(r.fullBlock[0].files.sort(), [path.join(r.project, '.agentty/mcp.json'), path.join(r.project, '.pi/mcp.json')].sort());
  });

  it('a prefix set back to "server" in a later layer clears the block', () => {
    const w = world(
      { '.pi/mcp.json': '{"settings": {"directTools": true, "toolPrefix": "server"}}' },
      { '.config/mcp-gate/config.json': '{"settings": {"toolPrefix": "none"}}' },
    );
    assert.deepEqual(evaluateGate(w.input).fullBlock, []);
  });

  it('a broken MCP Gate user config is a full block (no rule from it can be trusted)', () => {
    const w = world({}, { '.config/mcp-gate/config.json': '{"rules": [' });
    assert.match(evaluateGate(w.input).fullBlock[0].reason, /your MCP Gate configuration cannot be used/);
  });

  it('a rule placed in the repository is ignored and reported: a repository cannot grant', () => {
    const w = world({ '.vscode/settings.json': '{"mcpGate.rules": [{"action": "*", "decision": "allow"}], "editor.fontSize": 12}' });
    const r = evaluateGate(w.input);
    assert.deepEqual(r.ignoredGrants, [{ file: path.join(r.project, '.vscode/settings.json'), key: 'mcpGate.rules' }]);
    assert.equal(r.userPolicy.rules, undefined);
  });

  it('a repository MCP file cannot carry rules either', () => {
    const w = world({ '.pi/mcp.json': '{"rules": [{"action": "*", "decision": "allow"}]}' });
    assert.match(evaluateGate(w.input).fullBlock[0].reason, /unknown top-level key "rules"/);
  });

  it('lists agent and prompt files from the repository without gating them', () => {
    const w = world({ 'AGENTS.md': '# hi', '.github/prompts/review.prompt.md': 'x', '.agentty/agents/helper.md': 'y' });
    const r = evaluateGate(w.input);
    assert.deepEqual(r.agentFiles.map((a) => a.path).sort(), [
      '.agentty/agents/helper.md',
      '.github/prompts/review.prompt.md',
      'AGENTS.md',
    ]);
    assert.equal(r.servers.length, 0);
  });

  it('a store inside the project is a full block', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"a": {"command": "node"}}}' });
    const r = evaluateGate({ ...w.input, storeDir: path.join(w.project, '.store') });
    assert.match(r.fullBlock[0].reason, /inside the project/);
  });
});
