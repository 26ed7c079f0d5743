// `mcp-gate install/uninstall` on the agents' files without the agents: idempotent, comments kept, the change shown
// first, a file changed since install gets only install's keys taken back, broken files and targets inside the
// project are refused with nothing written.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cleanupTemp, cli, CLI, installedGateCommand, ROOT, world } from '../helpers';
import { CLI_FILES, sameBuildGate } from '../../../src/cli/install';
import { claudeAllows, claudeManagedSettingsFile } from '../../../src/trust/sources/tools/claude';

describe('mcp-gate install / uninstall (agent files)', () => {
  after(() => cleanupTemp());

  it('Cursor: one entry with ${workspaceFolder}; comments kept; a second install changes nothing; uninstall byte for byte', () => {
    const w = world({}, { '.cursor/mcp.json': '{\n  // mine\n  "mcpServers": {\n    "other": { "command": "x" }\n  }\n}\n' });
    const file = path.join(w.home, '.cursor', 'mcp.json');
    const original = fs.readFileSync(file);
    const r = cli(w, ['install', 'cursor', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\+\s+"mcp-gate": \{/);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /\/\/ mine/);
    assert.match(text, /"--project",\s*"\$\{workspaceFolder\}"/);
    assert.match(cli(w, ['install', 'cursor', '--yes']).stdout, /nothing to change/);
    assert.equal(cli(w, ['uninstall', 'cursor', '--yes']).code, 0);
    assert.deepEqual(fs.readFileSync(file), original);
  });

  it("from a checkout, the entry runs MCP Gate's own copy of the CLI (it survives the checkout moving); doctor names an entry whose CLI is gone", () => {
    const w = world({});
    const r = cli(w, ['install', 'claude', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    const entry = JSON.parse(fs.readFileSync(path.join(w.home, '.claude.json'), 'utf8')).mcpServers['mcp-gate'];
    assert.deepEqual([entry.command, ...entry.args], installedGateCommand(w.store));
    assert.ok(!entry.args[0].startsWith(ROOT + path.sep), `not inside the checkout: ${entry.args[0]}`);
    // The copy is a working CLI with its package worker and the parts it loads when first needed, outside the
    // checkout: it reads a JavaScript server's files (the closure's parser) as the checkout's CLI does.
    for (const f of CLI_FILES) assert.ok(fs.existsSync(path.join(path.dirname(entry.args[0]), f)), `${f} beside the copy`);
    const help = spawnSync(entry.command, [entry.args[0], '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    fs.writeFileSync(path.join(w.project, 'server.js'), "require('./helper.js');\n");
    fs.writeFileSync(path.join(w.project, 'helper.js'), '// helper\n');
    fs.writeFileSync(path.join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { js: { command: 'node', args: ['server.js'] } } }));
    const list = spawnSync(entry.command, [entry.args[0], 'list', '--project', w.project], { encoding: 'utf8', env: w.env });
    assert.equal(list.status, 0, list.stderr + list.stdout);
    assert.doesNotMatch(list.stdout + list.stderr, /cannot read JavaScript/);
    fs.rmSync(path.join(w.project, '.mcp.json'));
    assert.doesNotMatch(cli(w, ['doctor']).stdout, /broken:/);

    // A copy changed on disk is not used: the next install puts this build back before writing the entry.
    fs.writeFileSync(entry.args[0], 'require("fs").writeFileSync(process.env.HOME + "/pwned", "")\n');
    fs.rmSync(path.join(w.home, '.claude.json'));
    assert.equal(cli(w, ['install', 'claude', '--yes']).code, 0);
    assert.deepEqual(fs.readFileSync(entry.args[0]), fs.readFileSync(CLI), 'the copy is this build again');

    // A managed layer admits the user's entry only when it runs this very build.
    assert.deepEqual(sameBuildGate({ command: entry.command, args: [entry.args[0], 'serve'] }, CLI), {
      command: entry.command,
      args: [entry.args[0], 'serve'],
    });
    const other = path.join(w.home, 'other.js');
    fs.writeFileSync(other, '// not MCP Gate\n');
    assert.equal(sameBuildGate({ command: entry.command, args: [other, 'serve'] }, CLI), undefined);
    assert.equal(sameBuildGate({ command: '/bin/sh', args: [entry.args[0], 'serve'] }, CLI), undefined, 'not a Node binary');
    assert.equal(sameBuildGate({ command: entry.command, args: [path.join(w.home, 'gone.js'), 'serve'] }, CLI), undefined);

    // An entry written by an older install from a checkout that has since moved away.
    const gone = path.join(w.home, 'old-clone', 'dist', 'cli.js');
    fs.mkdirSync(path.join(w.home, '.gemini'), { recursive: true });
    fs.writeFileSync(
      path.join(w.home, '.gemini', 'settings.json'),
      JSON.stringify({ mcpServers: { 'mcp-gate': { command: process.execPath, args: [gone, 'serve'] } } }),
      { flag: 'w' },
    );
    const d = cli(w, ['doctor']);
    assert.match(
      d.stdout,
      new RegExp(
        `broken: Gemini CLI's "mcp-gate" entry in .*settings\\.json runs ${gone.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, which no longer exists: Gemini CLI cannot start MCP Gate; run \`mcp-gate install gemini\` again`,
      ),
      d.stdout,
    );
  });

  it('the store copy holds the same files as the CLI package (scripts/build-options.mjs CLI_FILES)', async () => {
    const options = await import(path.join(ROOT, 'scripts', 'build-options.mjs'));
    assert.deepEqual(CLI_FILES, options.CLI_FILES);
  });

  it("a file changed since install: uninstall takes back only install's keys and keeps the rest", () => {
    const w = world({}, { '.gemini/settings.json': '{ "mcpServers": { "mine": { "command": "m" } } }\n' });
    const file = path.join(w.home, '.gemini', 'settings.json');
    assert.equal(cli(w, ['install', 'gemini', '--yes']).code, 0);
    const installed = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual(installed.mcp.allowed, ['mcp-gate', 'mine'], "the user's own servers stay allowed");
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/\}\s*$/, ', "ui": { "theme": "X" } }\n'));
    const r = cli(w, ['uninstall', 'gemini', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /changed since install: only what install set was taken back/);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { mcpServers: { mine: { command: 'm' } }, ui: { theme: 'X' } });
  });

  it('refuses a broken file, a foreign [mcp_servers.mcp-gate], and a target inside the project; nothing is written', () => {
    const broken = world({}, { '.claude.json': '{ "mcpServers": ' });
    const r = cli(broken, ['install', 'claude', '--yes']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\.claude\.json is not valid JSON .*nothing was changed/);
    assert.equal(fs.existsSync(path.join(broken.home, '.claude', 'settings.json')), false);

    const foreign = world({}, { '.codex/config.toml': '[mcp_servers.mcp-gate]\ncommand = "evil"\n' });
    const f = cli(foreign, ['install', 'codex', '--yes']);
    assert.equal(f.code, 1);
    assert.match(f.stderr, /already has a \[mcp_servers\.mcp-gate\] that MCP Gate did not write/);

    const w = world({});
    const inside = cli(w, ['install', 'gemini', '--yes'], { env: { HOME: w.project } });
    assert.equal(inside.code, 1);
    assert.match(inside.stderr, /is inside the project folder .*never writes into a repository/);
    assert.equal(fs.existsSync(path.join(w.project, '.gemini')), false);

    assert.equal(cli(w, ['install', 'vim']).code, 2);
    const near = cli(w, ['install', 'claude-code']);
    assert.equal(near.code, 2);
    assert.match(near.stderr, /takes one agent: .* — did you mean `mcp-gate install claude`\?/);
  });

  it('run from the home folder with no --project (no repository there): it installs, and doctor says the agent is behind the gate', () => {
    const w = world({});
    const env = { PATH: process.env.PATH!, HOME: w.home, MCP_GATE_STORE: w.store, XDG_CONFIG_HOME: path.join(w.home, '.config') };
    const r = spawnSync(process.execPath, [CLI, 'install', 'claude', '--yes'], { cwd: w.home, env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(w.home, '.claude.json')));
    assert.match(
      cli(w, ['doctor']).stdout,
      /agents behind the gate .*:\n\s+Claude Code: starts MCP Gate from \S+\.claude\.json \(\S+ \S+cli\.js serve\); its program is there/,
    );
    // A home folder that is a git work tree (HOME set to a clone): refused as before, with the fix.
    const clone = world({ '.git/HEAD': 'ref: refs/heads/main\n' });
    const inClone = spawnSync(process.execPath, [CLI, 'install', 'codex', '--yes'], {
      cwd: clone.project,
      env: { ...env, HOME: clone.project },
      encoding: 'utf8',
    });
    assert.equal(inClone.status, 1);
    assert.match(inClone.stderr, /is inside the project folder .*never writes into a repository\. Run it from another folder/);
    assert.equal(fs.existsSync(path.join(clone.project, '.codex')), false);
    // Named explicitly, the home folder is a project like any other: refused, with what to do.
    const named = cli({ ...w, project: w.home }, ['install', 'gemini', '--yes']);
    assert.equal(named.code, 1);
    assert.match(named.stderr, /never writes into a repository\. Leave out --project \(install needs none\)/);
  });

  it("Claude Code's allowlist matching, as doctor applies it: exact command, URL pattern, name only where the list has no entry of that kind", () => {
    const stdio = { name: 'mine', scope: 'user', entry: { serverCommand: ['node', 'a.js'] } };
    const remote = { name: 'web', scope: 'user', entry: { serverUrl: 'https://mcp.example.com/v1' } };
    assert.equal(claudeAllows([{ serverCommand: ['node', 'a.js'] }], stdio), true);
    assert.equal(claudeAllows([{ serverCommand: ['node', 'a.js', '--x'] }], stdio), false);
    assert.equal(
      claudeAllows([{ serverCommand: ['node', 'b.js'] }, { serverName: 'mine' }], stdio),
      false,
      'a name does not admit a stdio server once commands are listed',
    );
    assert.equal(claudeAllows([{ serverName: 'mine' }], stdio), true);
    assert.equal(claudeAllows([{ serverUrl: 'https://*.example.com/*' }], remote), true);
    assert.equal(claudeAllows([{ serverUrl: 'https://other.example.org/*' }, { serverName: 'web' }], remote), false);
    assert.equal(
      claudeAllows([{ serverCommand: ['x'] }, { serverName: 'web' }], remote),
      true,
      'command entries say nothing about a remote server',
    );
    assert.equal(claudeAllows([], stdio), false);
    assert.equal(claudeManagedSettingsFile('linux'), '/etc/claude-code/managed-settings.json');
    assert.equal(claudeManagedSettingsFile('darwin'), '/Library/Application Support/ClaudeCode/managed-settings.json');
  });
});
