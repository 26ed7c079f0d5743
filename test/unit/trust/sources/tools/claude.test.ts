// Claude Code's adapter: with CLAUDE_CONFIG_DIR set, `mcp-gate install claude` and the gate use the same file —
// `$CLAUDE_CONFIG_DIR/.claude.json`, where Claude Code itself keeps its user servers then — through the built CLI;
// without it, ~/.claude.json; and the catalogue row, install's files and doctor are computed by one function.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CATALOGUE, locate } from '../../../../../src/trust/sources/catalogue';
import { claude, claudeJsonFile } from '../../../../../src/trust/sources/tools/claude';
import { cleanupTemp, cli, installedGateCommand, world } from '../../../helpers';

describe('Claude Code adapter (src/trust/sources/tools/claude.ts)', () => {
  after(() => cleanupTemp());

  it('with CLAUDE_CONFIG_DIR set, install writes the file the gate then reads (list and doctor show a server declared there)', () => {
    const w0 = world();
    const configDir = path.join(path.dirname(w0.home), 'claude-config');
    const w = world({}, { '.config/mcp-gate/config.json': JSON.stringify({ imports: ['claude'] }) }, { CLAUDE_CONFIG_DIR: configDir });
    const r = cli(w, ['install', 'claude', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    const file = path.join(configDir, '.claude.json');
    assert.ok(fs.existsSync(file), `install wrote ${file}`);
    assert.ok(fs.existsSync(path.join(configDir, 'settings.json')), 'and settings.json in the same folder');
    assert.equal(fs.existsSync(path.join(w.home, '.claude.json')), false, 'not ~/.claude.json');
    const written = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual([written.mcpServers['mcp-gate'].command, ...written.mcpServers['mcp-gate'].args], installedGateCommand(w.store));

    // A server the user adds there afterwards (as `claude mcp add --scope user` would).
    written.mcpServers.mine = { type: 'stdio', command: 'node', args: ['mine.js'] };
    fs.writeFileSync(file, JSON.stringify(written, null, 2));

    const list = cli(w, ['list']);
    assert.match(list.stdout, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\s+mine`), list.stdout);
    const d = cli(w, ['doctor']);
    assert.match(d.stdout, /stale: your user server "mine" is not in the allowedMcpServers of .*claude-config\/settings\.json/, d.stdout);
    assert.ok(cli(w, ['list', '--json']).stdout.includes(JSON.stringify(file)), 'the report names the file');
  });

  it('without CLAUDE_CONFIG_DIR: ~/.claude.json and ~/.claude/settings.json, for install and for the catalogue alike', () => {
    const w = world();
    const row = CATALOGUE.find((l) => l.kind === 'claude' && l.scope === 'user')!;
    assert.equal(locate(row, w.project, w.machine), path.join(w.home, '.claude.json'));
    assert.deepEqual(
      claude.agent.files(w.machine).map((f) => f.file),
      [path.join(w.home, '.claude.json'), path.join(w.home, '.claude', 'settings.json')],
    );
    const m = { ...w.machine, env: { ...w.machine.env, CLAUDE_CONFIG_DIR: '/cfg' } };
    assert.equal(locate(row, w.project, m), claudeJsonFile(m));
    assert.deepEqual(
      claude.agent.files(m).map((f) => f.file),
      ['/cfg/.claude.json', '/cfg/settings.json'],
    );
    assert.deepEqual(claude.env, ['CLAUDE_CONFIG_DIR']);
  });
});
