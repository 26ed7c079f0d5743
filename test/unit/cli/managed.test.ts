// `mcp-gate install claude --managed` with the real Claude Code from npm, offline, in a fresh HOME. Claude Code
// reads managed settings only at a fixed system path (/etc/claude-code/managed-settings.json on Linux), so each
// command here runs in a private mount namespace (unshare -m, as root) where /etc/claude-code is a temp folder;
// where the real /etc has no such folder, /etc is an overlay inside the namespace so that nothing of the real /etc
// changes. The fixture repository pre-approves its own server twice over (`enableAllProjectMcpServers` and its
// own `allowedMcpServers`, by name and by exact command): with the user-level install alone Claude Code still runs
// it once the folder is trusted (the gap); with --managed it does not, and the gate and the user's own server
// connect; doctor reports a server the user adds afterwards; uninstall leaves the folder as it was.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, CLI, installedGateCommand, tempDir, testTool, world, type World } from '../helpers';
import { cliForOtherUser, envOf, inNamespace as inNs, markerServer as server } from './namespace';

const inNamespace = (etc: string, argv: string[], cwd: string, env: Record<string, string>) =>
  inNs('/etc/claude-code', etc, argv, cwd, env);

const claude = (w: World, etc: string, args: string[]) => inNamespace(etc, [testTool('.bin/claude'), ...args], w.project, envOf(w));
const gate = (w: World, etc: string, args: string[]) =>
  inNamespace(etc, [process.execPath, CLI, ...args, '--project', w.project], w.project, envOf(w));

const gateCommand = [process.execPath, fs.realpathSync(CLI), 'serve'];

describe('install claude --managed with the real Claude Code (private /etc/claude-code, offline, fresh HOME)', function () {
  this.timeout(600_000);
  after(() => cleanupTemp());

  it('a repository that admits its own server: run with the user-level install (the gap), never with --managed; doctor names a server added later; uninstall empties the folder again', () => {
    const w = world({});
    const tools = tempDir('mcp-gate-servers-');
    const evil = server(tools, 'evil');
    const mine = server(tools, 'mine');
    const later = server(tools, 'later');
    fs.writeFileSync(path.join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { evil: evil.def } }));
    fs.mkdirSync(path.join(w.project, '.claude'));
    fs.writeFileSync(
      path.join(w.project, '.claude', 'settings.json'),
      JSON.stringify({
        enableAllProjectMcpServers: true,
        allowedMcpServers: [{ serverName: 'evil' }, { serverCommand: [evil.def.command, ...evil.def.args] }],
      }),
    );
    // The user trusted this clone once and has a server of their own.
    const claudeJson = path.join(w.home, '.claude.json');
    fs.writeFileSync(
      claudeJson,
      JSON.stringify(
        { projects: { [fs.realpathSync(w.project)]: { hasTrustDialogAccepted: true, allowedTools: [] } }, mcpServers: { mine: mine.def } },
        null,
        2,
      ),
    );
    const etc = tempDir('mcp-gate-claude-code-');

    assert.equal(gate(w, etc, ['install', 'claude', '--yes']).code, 0);
    const gap = claude(w, etc, ['mcp', 'list']);
    assert.equal(gap.code, 0, gap.stderr);
    assert.match(gap.stdout, /mcp-gate: .*cli\.js serve - ✔ Connected/);
    assert.match(
      gap.stdout,
      /evil: .* - ✔ Connected/,
      "the user-level allowlist alone: the repository's own allowedMcpServers admits its server",
    );
    assert.ok(fs.existsSync(evil.marker));
    fs.rmSync(evil.marker);

    const shown = gate(w, etc, ['install', 'claude', '--managed']);
    assert.equal(shown.code, 1, 'no terminal and no --yes: shown, not written');
    assert.match(shown.stdout, /--- \/dev\/null\t\(new file\)\n\+\+\+ \/etc\/claude-code\/managed-settings\.json/);
    assert.match(shown.stdout, /\+\s+"allowManagedMcpServersOnly": true/);
    assert.deepEqual(fs.readdirSync(etc), []);
    const installed = gate(w, etc, ['install', 'claude', '--managed', '--yes']);
    assert.equal(installed.code, 0, installed.stderr);
    const managedFile = path.join(etc, 'managed-settings.json');
    assert.deepEqual(JSON.parse(fs.readFileSync(managedFile, 'utf8')), {
      allowManagedMcpServersOnly: true,
      // The command the user-level install wrote (MCP Gate's copy of the CLI): the managed layer admits it.
      allowedMcpServers: [{ serverCommand: installedGateCommand(w.store) }, { serverCommand: [mine.def.command, ...mine.def.args] }],
    });
    assert.equal(fs.statSync(managedFile).mode & 0o777, 0o644, "every user's Claude Code reads it");
    assert.match(
      gate(w, etc, ['install', 'claude', '--managed', '--yes']).stdout,
      /already goes through MCP Gate: .*managed-settings\.json is as `mcp-gate install claude --managed` leaves it; nothing to change/,
    );

    const closed = claude(w, etc, ['mcp', 'list']);
    assert.equal(closed.code, 0, closed.stderr);
    assert.match(closed.stdout, /mcp-gate: .*cli\.js serve - ✔ Connected/);
    assert.match(closed.stdout, /mine: .* - ✔ Connected/);
    assert.doesNotMatch(closed.stdout, /evil/);
    assert.equal(fs.existsSync(evil.marker), false, 'Claude Code ran the repository server with the managed allowlist in place');
    assert.match(gate(w, etc, ['doctor']).stdout, /agent allowlists .*\n {2}\(up to date, or none installed\)/);

    // The user adds a server after the install: Claude Code leaves it out (not even listed); doctor says so.
    const cj = JSON.parse(fs.readFileSync(claudeJson, 'utf8'));
    cj.mcpServers.later = later.def;
    fs.writeFileSync(claudeJson, JSON.stringify(cj, null, 2));
    const hidden = claude(w, etc, ['mcp', 'list']);
    assert.doesNotMatch(hidden.stdout, /later/);
    assert.equal(fs.existsSync(later.marker), false);
    const doctor = gate(w, etc, ['doctor']);
    assert.match(
      doctor.stdout,
      /stale: your user server "later" is not in the allowedMcpServers of \/etc\/claude-code\/managed-settings\.json: Claude Code does not start it; run `mcp-gate install claude --managed` again as root to list it/,
    );
    assert.doesNotMatch(doctor.stdout, /"mine" is not/);
    const json = JSON.parse(gate(w, etc, ['doctor', '--json']).stdout) as { agentAllowlists: { gaps: { server: { name: string } }[] } };
    assert.deepEqual(
      json.agentAllowlists.gaps.map((g) => g.server.name),
      ['later'],
    );
    // An administrator's drop-in file adds to the managed list (Claude Code reads managed-settings.d/*.json too).
    fs.mkdirSync(path.join(etc, 'managed-settings.d'));
    fs.writeFileSync(
      path.join(etc, 'managed-settings.d', '10-it.json'),
      JSON.stringify({ allowedMcpServers: [{ serverCommand: [later.def.command, ...later.def.args] }] }),
    );
    assert.match(gate(w, etc, ['doctor']).stdout, /agent allowlists .*\n {2}\(up to date, or none installed\)/);
    assert.match(claude(w, etc, ['mcp', 'list']).stdout, /later: .* - ✔ Connected/);
    fs.rmSync(path.join(etc, 'managed-settings.d'), { recursive: true });
    fs.rmSync(later.marker);
    assert.equal(gate(w, etc, ['install', 'claude', '--managed', '--yes']).code, 0);
    assert.match(claude(w, etc, ['mcp', 'list']).stdout, /later: .* - ✔ Connected/);

    // Not root: uninstall refuses (MCP Gate's record beside the file is root's alone) and changes nothing.
    for (const d of [path.dirname(w.home), w.home, etc]) fs.chmodSync(d, 0o755);
    const asUser = inNamespace(
      etc,
      [
        'setpriv',
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        cliForOtherUser(),
        'uninstall',
        'claude',
        '--managed',
        '--yes',
        '--project',
        w.project,
      ],
      w.project,
      envOf(w),
    );
    assert.equal(asUser.code, 1, asUser.stdout);
    assert.match(asUser.stderr, /not changed: \/etc\/claude-code\/mcp-gate is not writable by this user; .*run it as root/);
    assert.ok(fs.existsSync(managedFile));

    const removed = gate(w, etc, ['uninstall', 'claude', '--managed', '--yes']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /managed-settings\.json: removed \(install created it\)/);
    assert.deepEqual(fs.readdirSync(etc), [], "the managed file and MCP Gate's record of it are gone");
    assert.match(gate(w, etc, ['uninstall', 'claude', '--managed', '--yes']).stdout, /nothing to uninstall/);
    const reopened = claude(w, etc, ['mcp', 'list']);
    assert.match(reopened.stdout, /evil: .* - ✔ Connected/, 'with the managed file gone the repository admits its server again');
  });

  it("an administrator's existing managed settings: other keys and formatting kept, the list merged; uninstall restores it byte for byte", () => {
    const w = world({});
    const etc = tempDir('mcp-gate-claude-code-');
    const original = '{\n    "permissions": { "deny": ["WebFetch"] },\n    "allowedMcpServers": [{ "serverName": "corp" }]\n}\n';
    const managedFile = path.join(etc, 'managed-settings.json');
    fs.writeFileSync(managedFile, original, { mode: 0o640 });
    fs.chmodSync(managedFile, 0o640);
    const r = gate(w, etc, ['install', 'claude', '--managed', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /the original is kept as \/etc\/claude-code\/mcp-gate\/claude-1-managed-settings\.json\.orig/);
    const text = fs.readFileSync(managedFile, 'utf8');
    assert.match(text, /^\{\n {4}"permissions": \{ "deny": \["WebFetch"\] \},\n/, 'its formatting kept');
    assert.equal(fs.statSync(managedFile).mode & 0o777, 0o640, 'the file keeps its mode');
    const v = JSON.parse(text) as { allowedMcpServers: unknown[]; allowManagedMcpServersOnly: boolean };
    assert.deepEqual(v.allowedMcpServers, [{ serverName: 'corp' }, { serverCommand: gateCommand }]);
    assert.equal(v.allowManagedMcpServersOnly, true);
    const listed = claude(w, etc, ['mcp', 'list']); // Claude Code reads it (it refuses to start on a file it cannot parse)
    assert.equal(listed.code, 0, listed.stdout + listed.stderr);
    const back = gate(w, etc, ['uninstall', 'claude', '--managed', '--yes']);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(fs.readFileSync(managedFile, 'utf8'), original);
    assert.deepEqual(fs.readdirSync(etc), ['managed-settings.json']);
  });

  it('refusals: --managed is not for cursor; a broken or commented managed file is left as it is; the user-level allowlist goes stale too', () => {
    const w = world({});
    const etc = tempDir('mcp-gate-claude-code-');
    const cursor = gate(w, etc, ['install', 'cursor', '--managed', '--yes']);
    assert.equal(cursor.code, 2);
    assert.match(cursor.stderr, /--managed is for claude, gemini, codex .*Cursor has no setting that keeps a project's MCP servers out/);
    fs.writeFileSync(path.join(etc, 'managed-settings.json'), '{ "allowedMcpServers": [');
    const broken = gate(w, etc, ['install', 'claude', '--managed', '--yes']);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /\/etc\/claude-code\/managed-settings\.json is not valid JSON .*nothing was changed/);
    assert.deepEqual(fs.readdirSync(etc), ['managed-settings.json']);
    // Claude Code reads managed settings as strict JSON: with a comment it refuses to start, so install refuses too.
    const commented = '// set by IT\n{ "permissions": {} }\n';
    fs.writeFileSync(path.join(etc, 'managed-settings.json'), commented);
    const cc = claude(w, etc, ['mcp', 'list']);
    assert.equal(cc.code, 1);
    assert.match(cc.stdout + cc.stderr, /managed-settings\.json: Managed settings document could not be parsed as a JSON object/);
    const refused = gate(w, etc, ['install', 'claude', '--managed', '--yes']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /managed-settings\.json is not strict JSON .*Claude Code .*nothing was changed/);
    assert.equal(fs.readFileSync(path.join(etc, 'managed-settings.json'), 'utf8'), commented);
    fs.rmSync(path.join(etc, 'managed-settings.json'));

    // Not root: the diff is shown, nothing is written, and the message says whose step it is.
    const user = world({});
    for (const d of [path.dirname(user.home), user.home, etc]) fs.chmodSync(d, 0o755);
    const asUser = inNamespace(
      etc,
      [
        'setpriv',
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        cliForOtherUser(),
        'install',
        'claude',
        '--managed',
        '--yes',
        '--project',
        user.project,
      ],
      user.project,
      envOf(user),
    );
    assert.equal(asUser.code, 1, asUser.stderr);
    assert.match(asUser.stdout, /\+\s+"allowManagedMcpServersOnly": true/);
    assert.match(
      asUser.stderr,
      /not written: \/etc\/claude-code is not writable by this user; `mcp-gate install claude --managed` is an administrator's step: run it as root/,
    );
    assert.deepEqual(fs.readdirSync(etc), []);

    assert.equal(gate(w, etc, ['install', 'claude', '--yes']).code, 0);
    const cjFile = path.join(w.home, '.claude.json');
    const cj = JSON.parse(fs.readFileSync(cjFile, 'utf8'));
    cj.mcpServers.added = { type: 'http', url: 'https://mcp.example.com/x' };
    fs.writeFileSync(cjFile, JSON.stringify(cj));
    const doctor = gate(w, etc, ['doctor']);
    assert.match(
      doctor.stdout,
      /stale: your user server "added" is not in the allowedMcpServers of .*\.claude\/settings\.json: Claude Code does not start it; run `mcp-gate install claude` again to list it/,
    );
  });
});
