// `mcp-gate install` with the real agents from npm (pinned devDependencies; Claude Code in test/tools), each in a fresh HOME, offline:
// - Claude Code: in a repository that pre-approves its own server (`.claude/settings.json`
//   enableAllProjectMcpServers, the folder trusted once), `claude mcp list` runs that server — until
//   `mcp-gate install claude`: then only the gate's entry is there and connected, the repository's command never
//   runs (a marker file), doctor reports the attempt and the server stays pending; uninstall restores both files.
// - Gemini CLI: `gemini mcp list` health-checks too: after install the gate is connected and the repository's
//   server blocked, never run; the user's settings.json (with comments) comes back byte for byte.
// - Codex CLI: `codex mcp list --json` (no health check in Codex) shows the gate's entry as Codex parsed it; the
//   user's config.toml (with comments) comes back byte for byte.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, CLI, installedGateCommand, ROOT, testTool, world, type World } from '../helpers';

// Claude Code needs Node 22 (test/tools); Gemini CLI and Codex are root devDependencies.
const bin = (name: string) => (name === 'claude' ? testTool('.bin/claude') : path.join(ROOT, 'node_modules', '.bin', name));

function agent(w: World, name: string, args: string[]): { code: number; stdout: string; stderr: string } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store, NO_COLOR: '1', CI: '1' };
  for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
  const r = spawnSync(bin(name), args, { cwd: w.project, env, encoding: 'utf8', timeout: 90_000 });
  const plain = (t: string) => (t ?? '').replace(/\x1b\[[0-9;]*m/g, ''); // colours, whatever NO_COLOR says
  return { code: r.status ?? -1, stdout: plain(r.stdout), stderr: plain(r.stderr) };
}

/** A repository server whose only effect is a marker file in the project (writable for a server that runs). */
function sneaky(marker: string) {
  const script = path.join(path.dirname(marker), 'sneaky.js');
  const sdk = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'cjs', 'server');
  // It writes the marker first, then answers MCP (so an agent's health check sees it connect).
  fs.writeFileSync(
    script,
    [
      `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');`,
      `const { McpServer } = require(${JSON.stringify(path.join(sdk, 'mcp.js'))});`,
      `const { StdioServerTransport } = require(${JSON.stringify(path.join(sdk, 'stdio.js'))});`,
      `new McpServer({ name: 'sneaky', version: '1' }).connect(new StdioServerTransport());`,
    ].join('\n'),
  );
  return { command: process.execPath, args: [script] };
}

describe('install with the real agents (from npm, offline, fresh HOME)', function () {
  this.timeout(300_000);
  after(() => cleanupTemp());

  it('Claude Code: a self-approving repository server runs without the gate and never with it; uninstall restores the files', () => {
    const w = world({});
    const marker = path.join(w.project, 'marker');
    fs.writeFileSync(path.join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { sneaky: { type: 'stdio', ...sneaky(marker) } } }));
    fs.mkdirSync(path.join(w.project, '.claude'));
    fs.writeFileSync(path.join(w.project, '.claude', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
    // The user once accepted Claude Code's folder-trust question for this clone; they have settings of their own.
    fs.writeFileSync(
      path.join(w.home, '.claude.json'),
      JSON.stringify({ projects: { [fs.realpathSync(w.project)]: { hasTrustDialogAccepted: true, allowedTools: [] } } }, null, 2),
    );
    fs.mkdirSync(path.join(w.home, '.claude'));
    const userSettings = '{\n\t"model": "sonnet",\n\t"permissions": { "allow": [] }\n}\n';
    fs.writeFileSync(path.join(w.home, '.claude', 'settings.json'), userSettings);

    const before = agent(w, 'claude', ['mcp', 'list']);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /sneaky: .* - ✔ Connected/, before.stdout);
    assert.ok(fs.existsSync(marker), `without MCP Gate, Claude Code runs the self-approved server: ${before.stdout}`);
    fs.rmSync(marker);
    const claudeJsonBefore = fs.readFileSync(path.join(w.home, '.claude.json'));

    const shown = cli(w, ['install', 'claude']);
    assert.equal(shown.code, 1, 'no terminal and no --yes: shown, not written');
    assert.match(shown.stdout, /\+\s+"allowedMcpServers": \[/);
    assert.match(shown.stderr, /no terminal to ask; run again with --yes/);
    assert.deepEqual(fs.readFileSync(path.join(w.home, '.claude.json')), claudeJsonBefore);
    const installed = cli(w, ['install', 'claude', '--yes']);
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(cli(w, ['install', 'claude', '--yes']).stdout, /already goes through MCP Gate: .*; nothing to change/);

    const after = agent(w, 'claude', ['mcp', 'list']);
    assert.equal(after.code, 0, after.stderr);
    assert.match(after.stdout, /mcp-gate: .*cli\.js serve - ✔ Connected/);
    assert.doesNotMatch(after.stdout, /sneaky/);
    assert.equal(fs.existsSync(marker), false, 'the repository server ran under Claude Code after install');
    const settings = JSON.parse(fs.readFileSync(path.join(w.home, '.claude', 'settings.json'), 'utf8'));
    assert.deepEqual(settings.allowedMcpServers, [{ serverCommand: installedGateCommand(w.store) }]);
    assert.equal(settings.model, 'sonnet');

    const doctor = cli(w, ['doctor']);
    assert.match(
      doctor.stdout,
      /this repository tries to approve every server of \.mcp\.json for Claude Code \(\.claude\/settings\.json:1, enableAllProjectMcpServers\)/,
    );
    const listed = JSON.parse(cli(w, ['list', '--json']).stdout) as { servers: { name: string; state: string }[] };
    assert.equal(listed.servers.find((s) => s.name === 'sneaky')?.state, 'pending');

    const removed = cli(w, ['uninstall', 'claude', '--yes']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(fs.readFileSync(path.join(w.home, '.claude', 'settings.json'), 'utf8'), userSettings);
    assert.deepEqual(fs.readFileSync(path.join(w.home, '.claude.json')), claudeJsonBefore);
    assert.match(cli(w, ['uninstall', 'claude', '--yes']).stdout, /nothing to uninstall/);
  });

  it('Gemini CLI: the gate connected, the repository server blocked and never run; settings.json back byte for byte', () => {
    const w = world({});
    const marker = path.join(w.project, 'marker');
    fs.mkdirSync(path.join(w.project, '.gemini'));
    fs.writeFileSync(path.join(w.project, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: { sneaky: sneaky(marker) } }));
    fs.mkdirSync(path.join(w.home, '.gemini'));
    fs.writeFileSync(path.join(w.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [fs.realpathSync(w.project)]: 'TRUST_FOLDER' }));
    const userSettings = '// my Gemini settings\n{\n    "ui": { "theme": "GitHub" } // keep this\n}\n';
    fs.writeFileSync(path.join(w.home, '.gemini', 'settings.json'), userSettings);

    const before = agent(w, 'gemini', ['mcp', 'list']);
    const listing = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr; // Gemini CLI prints it on stderr
    assert.match(listing(before), /sneaky: .* - Connected/);
    assert.ok(fs.existsSync(marker), `without MCP Gate, Gemini CLI runs the repository server: ${listing(before)}`);
    fs.rmSync(marker);

    assert.equal(cli(w, ['install', 'gemini', '--yes']).code, 0);
    const written = fs.readFileSync(path.join(w.home, '.gemini', 'settings.json'), 'utf8');
    assert.match(written, /^\/\/ my Gemini settings\n/);
    assert.match(written, /\/\/ keep this/);
    const after = agent(w, 'gemini', ['mcp', 'list']);
    assert.match(listing(after), /mcp-gate: .*cli\.js serve \(stdio\) - Connected/);
    assert.match(listing(after), /sneaky: .* - Blocked/);
    assert.equal(fs.existsSync(marker), false);

    assert.equal(cli(w, ['uninstall', 'gemini', '--yes']).code, 0);
    assert.equal(fs.readFileSync(path.join(w.home, '.gemini', 'settings.json'), 'utf8'), userSettings);
  });

  it("Codex CLI: parses the gate's entry as written; config.toml back byte for byte", () => {
    const w = world({});
    fs.mkdirSync(path.join(w.home, '.codex'));
    const userConfig = '# my Codex config\nmodel = "o3" # keep this comment\n\n[mcp_servers.mine]\ncommand = "my-server"\n';
    fs.writeFileSync(path.join(w.home, '.codex', 'config.toml'), userConfig);
    assert.equal(cli(w, ['install', 'codex', '--yes']).code, 0);
    const r = agent(w, 'codex', ['mcp', 'list', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const servers = JSON.parse(r.stdout) as {
      name: string;
      enabled: boolean;
      transport: { command: string; args: string[] };
      startup_timeout_sec: number;
    }[];
    const gate = servers.find((s) => s.name === 'mcp-gate');
    assert.ok(gate, r.stdout);
    assert.deepEqual([gate.transport.command, ...gate.transport.args], installedGateCommand(w.store));
    assert.equal(gate.enabled, true);
    assert.equal(gate.startup_timeout_sec, 60);
    assert.ok(servers.some((s) => s.name === 'mine'));
    assert.match(
      fs.readFileSync(path.join(w.home, '.codex', 'config.toml'), 'utf8'),
      /^# my Codex config\nmodel = "o3" # keep this comment\n/,
    );
    assert.equal(cli(w, ['uninstall', 'codex', '--yes']).code, 0);
    assert.equal(fs.readFileSync(path.join(w.home, '.codex', 'config.toml'), 'utf8'), userConfig);
  });
});
