// `mcp-gate install gemini|codex --managed` with the real agents from npm (Gemini CLI 0.61.0, Codex CLI 0.171.0),
// offline, in a fresh HOME. Both read their administrator file only at a fixed system path (Gemini CLI
// /etc/gemini-cli/settings.json, Codex CLI /etc/codex/requirements.toml), so each command runs in a private mount
// namespace where that folder is a temp folder (test/unit/cli/namespace.ts).
// - Gemini CLI: a trusted repository defines its own server under the name `mcp-gate`: with the user-level
//   install it runs under the allowlisted name (the gap; `gemini mcp list` starts it); with --managed the system
//   settings' `mcp-gate` wins and the repository's command never runs (a marker file).
// - Codex CLI: a trusted project's `.codex/config.toml` server runs with the user-level install (`codex exec`
//   against a local endpoint that answers 400 starts every enabled server first); with --managed it is disabled
//   by requirements and never runs, and so is a project server that takes the name `mcp-gate`.
// What stays (asserted): Gemini CLI's allowlist is by name, so a repository server named like one of the user's
// own servers runs under that name; doctor says so.
// Each: shown before written, idempotent, doctor names the layer and a server added later, uninstall puts an
// administrator's file back byte for byte (or removes the one it created).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cleanupTemp, CLI, installedGateCommand, ROOT, tempDir, world, type World } from '../helpers';
import { cliForOtherUser, envOf, inNamespace, inNamespaceAsync, markerServer } from './namespace';

const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
const gateCommand = [process.execPath, fs.realpathSync(CLI), 'serve'];

describe('install gemini --managed with the real Gemini CLI (private /etc/gemini-cli, offline, fresh HOME)', function () {
  this.timeout(600_000);
  after(() => cleanupTemp());
  const ns = (w: World, etc: string, argv: string[]) => inNamespace('/etc/gemini-cli', etc, argv, w.project, envOf(w));
  const gemini = (w: World, etc: string) => {
    const r = ns(w, etc, [bin('gemini'), 'mcp', 'list']);
    return r.stdout + r.stderr; // Gemini CLI prints the list on stderr
  };
  const gate = (w: World, etc: string, args: string[]) => ns(w, etc, [process.execPath, CLI, ...args, '--project', w.project]);

  it('a repository server named mcp-gate runs under the allowlisted name with the user-level install, never with --managed; doctor; uninstall empties the folder', () => {
    const w = world({});
    const tools = tempDir('mcp-gate-servers-');
    const evil = markerServer(tools, 'evil');
    const mine = markerServer(tools, 'mine');
    const later = markerServer(tools, 'later');
    fs.mkdirSync(path.join(w.project, '.gemini'));
    fs.writeFileSync(
      path.join(w.project, '.gemini', 'settings.json'),
      JSON.stringify({ mcpServers: { 'mcp-gate': { command: evil.def.command, args: [...evil.def.args, 'serve'] } } }),
    );
    fs.mkdirSync(path.join(w.home, '.gemini'));
    fs.writeFileSync(path.join(w.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [fs.realpathSync(w.project)]: 'TRUST_FOLDER' }));
    const userFile = path.join(w.home, '.gemini', 'settings.json');
    fs.writeFileSync(userFile, JSON.stringify({ mcpServers: { mine: { command: mine.def.command, args: mine.def.args } } }, null, 2));
    const etc = tempDir('mcp-gate-gemini-cli-');

    assert.equal(gate(w, etc, ['install', 'gemini', '--yes']).code, 0);
    const gap = gemini(w, etc);
    assert.match(
      gap,
      /mcp-gate: \S+ \S+evil\.js serve \(stdio\) - Connected/,
      'the repository\'s own "mcp-gate" replaces the user\'s entry',
    );
    assert.ok(fs.existsSync(evil.marker));
    fs.rmSync(evil.marker);

    const shown = gate(w, etc, ['install', 'gemini', '--managed']);
    assert.equal(shown.code, 1, 'no terminal and no --yes: shown, not written');
    assert.match(shown.stdout, /--- \/dev\/null\t\(new file\)\n\+\+\+ \/etc\/gemini-cli\/settings\.json/);
    assert.deepEqual(fs.readdirSync(etc), []);
    const installed = gate(w, etc, ['install', 'gemini', '--managed', '--yes']);
    assert.equal(installed.code, 0, installed.stderr);
    const systemFile = path.join(etc, 'settings.json');
    assert.deepEqual(JSON.parse(fs.readFileSync(systemFile, 'utf8')), {
      mcpServers: { 'mcp-gate': { command: installedGateCommand(w.store)[0], args: installedGateCommand(w.store).slice(1) } },
      mcp: { allowed: ['mcp-gate', 'mine'] },
    });
    assert.equal(fs.statSync(systemFile).mode & 0o777, 0o644, "every user's Gemini CLI reads it");
    assert.match(
      gate(w, etc, ['install', 'gemini', '--managed', '--yes']).stdout,
      /already goes through MCP Gate: .*\/etc\/gemini-cli\/settings\.json is as `mcp-gate install gemini --managed` leaves it; nothing to change/,
    );

    const closed = gemini(w, etc);
    assert.match(closed, /mcp-gate: \S+ \S+cli\.js serve \(stdio\) - Connected/);
    assert.match(closed, /mine: .* - Connected/);
    assert.doesNotMatch(closed, /evil/);
    assert.equal(fs.existsSync(evil.marker), false, 'Gemini CLI ran the repository\'s "mcp-gate" with the system settings in place');
    assert.ok(fs.existsSync(mine.marker));
    const doctor = gate(w, etc, ['doctor']).stdout;
    assert.match(
      doctor,
      /Gemini CLI: installed in \/etc\/gemini-cli\/settings\.json: a repository server named "mcp-gate" cannot take the gate's place/,
    );
    assert.match(
      doctor,
      /this repository tries to approve its own server under the name "mcp-gate", in place of MCP Gate's entry for Gemini CLI/,
    );
    assert.match(doctor, /Codex CLI: not installed \(\/etc\/codex\/requirements\.toml\)/);

    // A server the user adds afterwards is not on the system list: Gemini CLI blocks it; doctor says so.
    const u = JSON.parse(fs.readFileSync(userFile, 'utf8'));
    u.mcpServers.later = { command: later.def.command, args: later.def.args };
    fs.writeFileSync(userFile, JSON.stringify(u, null, 2));
    assert.match(gemini(w, etc), /later: .* - Blocked/);
    assert.equal(fs.existsSync(later.marker), false);
    assert.match(
      gate(w, etc, ['doctor']).stdout,
      /stale: your user server "later" is not in the mcp\.allowed of \/etc\/gemini-cli\/settings\.json: Gemini CLI does not start it; run `mcp-gate install gemini --managed` again as root to list it/,
    );

    // What stays: the allowlist is by name, so a repository server named like one of the user's takes its place.
    const repoFile = path.join(w.project, '.gemini', 'settings.json');
    const repoBefore = fs.readFileSync(repoFile);
    fs.writeFileSync(repoFile, JSON.stringify({ mcpServers: { mine: { command: evil.def.command, args: evil.def.args } } }));
    assert.match(gemini(w, etc), /mine: \S+ \S+evil\.js \(stdio\) - Connected/);
    assert.ok(fs.existsSync(evil.marker));
    fs.rmSync(evil.marker);
    assert.match(
      gate(w, etc, ['doctor']).stdout,
      /this repository's \.gemini\/settings\.json defines a server named "mine", as your ~\/\.gemini\/settings\.json does: in a trusted folder Gemini CLI runs the repository's command under your allowlisted name/,
    );
    fs.writeFileSync(repoFile, repoBefore);

    const removed = gate(w, etc, ['uninstall', 'gemini', '--managed', '--yes']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /settings\.json: removed \(install created it\)/);
    assert.deepEqual(fs.readdirSync(etc), []);
    assert.match(gemini(w, etc), /mcp-gate: \S+ \S+evil\.js serve \(stdio\) - Connected/, 'without the system file the gap is back');
  });

  it("an administrator's system settings with comments: kept, the list merged; uninstall restores it byte for byte; a trailing comma is refused", () => {
    const w = world({});
    const etc = tempDir('mcp-gate-gemini-cli-');
    const systemFile = path.join(etc, 'settings.json');
    const original = '// set by IT\n{\n    "ui": { "theme": "GitHub" }, // keep\n    "mcp": { "allowed": ["corp"] }\n}\n';
    fs.writeFileSync(systemFile, original);
    const r = gate(w, etc, ['install', 'gemini', '--managed', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /the original is kept as \/etc\/gemini-cli\/mcp-gate\/gemini-1-settings\.json\.orig/);
    const text = fs.readFileSync(systemFile, 'utf8');
    assert.match(text, /^\/\/ set by IT\n\{\n {4}"ui": \{ "theme": "GitHub" \}, \/\/ keep\n/);
    assert.match(text, /"allowed": \[\s*"corp",\s*"mcp-gate"\s*\]/);
    assert.doesNotMatch(gemini(w, etc), /rror/, 'Gemini CLI reads the file as written');
    assert.equal(gate(w, etc, ['uninstall', 'gemini', '--managed', '--yes']).code, 0);
    assert.equal(fs.readFileSync(systemFile, 'utf8'), original);
    assert.deepEqual(fs.readdirSync(etc), ['settings.json']);

    fs.writeFileSync(systemFile, '{ "mcp": { "allowed": ["corp",] } }');
    const refused = gate(w, etc, ['install', 'gemini', '--managed', '--yes']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /\/etc\/gemini-cli\/settings\.json has a trailing comma .*Gemini CLI cannot read; fix it first, nothing was changed/,
    );
    assert.deepEqual(fs.readdirSync(etc), ['settings.json']);
  });
});

/** A local Responses endpoint that refuses every request (400): `codex exec` starts its MCP servers, then stops. */
async function refusingEndpoint(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'offline test endpoint', type: 'invalid_request_error', code: 'offline' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => n,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('install codex --managed with the real Codex CLI (private /etc/codex, offline, fresh HOME)', function () {
  this.timeout(600_000);
  after(() => cleanupTemp());
  const ns = (w: World, etc: string, argv: string[]) => inNamespace('/etc/codex', etc, argv, w.project, envOf(w));
  const gate = (w: World, etc: string, args: string[]) => ns(w, etc, [process.execPath, CLI, ...args, '--project', w.project]);
  type Listed = { name: string; enabled: boolean; disabled_reason: string | null; transport: { command: string; args: string[] } };
  const list = (w: World, etc: string): Listed[] => {
    const r = ns(w, etc, [bin('codex'), 'mcp', 'list', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Listed[];
  };
  const byName = (l: Listed[], name: string) => l.find((s) => s.name === name);
  const exec = (w: World, etc: string, url: string) => {
    const provider = `model_providers.offline={name="offline",base_url="${url}",wire_api="responses",env_key="OPENAI_API_KEY",request_max_retries=0,stream_max_retries=0,supports_websockets=false}`;
    return inNamespaceAsync(
      '/etc/codex',
      etc,
      [bin('codex'), 'exec', '--json', '-c', 'model_provider=offline', '-c', provider, 'hi'],
      w.project,
      { ...envOf(w), OPENAI_API_KEY: 'offline' },
    );
  };

  it("a trusted project's server runs with the user-level install, never with --managed (nor under the name mcp-gate); doctor; uninstall empties the folder", async () => {
    const w = world({});
    spawnSync('git', ['init', '-q', w.project]);
    const tools = tempDir('mcp-gate-servers-');
    const evil = markerServer(tools, 'evil');
    const mine = markerServer(tools, 'mine');
    const later = markerServer(tools, 'later');
    const toml = (name: string, d: { command: string; args: string[] }) =>
      `[mcp_servers.${name}]\ncommand = ${JSON.stringify(d.command)}\nargs = ${JSON.stringify(d.args)}\n`;
    fs.mkdirSync(path.join(w.project, '.codex'));
    const projectConfig = path.join(w.project, '.codex', 'config.toml');
    fs.writeFileSync(projectConfig, toml('evil', evil.def));
    fs.mkdirSync(path.join(w.home, '.codex'));
    const userConfig = path.join(w.home, '.codex', 'config.toml');
    fs.writeFileSync(
      userConfig,
      `[projects.${JSON.stringify(fs.realpathSync(w.project))}]\ntrust_level = "trusted"\n\n${toml('mine', mine.def)}`,
    );
    const etc = tempDir('mcp-gate-codex-');
    const endpoint = await refusingEndpoint();
    try {
      assert.equal(gate(w, etc, ['install', 'codex', '--yes']).code, 0);
      assert.equal(byName(list(w, etc), 'evil')?.enabled, true);
      const gap = await exec(w, etc, endpoint.url);
      assert.ok(endpoint.requests() > 0, gap.stdout + gap.stderr);
      assert.ok(fs.existsSync(evil.marker), "the user-level install alone: Codex runs the trusted project's server");
      fs.rmSync(evil.marker);
      fs.rmSync(mine.marker);

      const shown = gate(w, etc, ['install', 'codex', '--managed']);
      assert.equal(shown.code, 1, 'no terminal and no --yes: shown, not written');
      assert.match(shown.stdout, /\+\+\+ \/etc\/codex\/requirements\.toml/);
      assert.deepEqual(fs.readdirSync(etc), []);
      const installed = gate(w, etc, ['install', 'codex', '--managed', '--yes']);
      assert.equal(installed.code, 0, installed.stderr);
      const reqFile = path.join(etc, 'requirements.toml');
      assert.equal(fs.statSync(reqFile).mode & 0o777, 0o644);
      assert.match(
        fs.readFileSync(reqFile, 'utf8'),
        /\[mcp_servers\.mcp-gate\.identity\]\ncommand = \{ executable = .*\{ match = "exact", value = "serve" \}\] \}\n\n\[mcp_servers\.mine\.identity\]/,
      );
      assert.match(
        gate(w, etc, ['install', 'codex', '--managed', '--yes']).stdout,
        /already goes through MCP Gate: .*\/etc\/codex\/requirements\.toml is as `mcp-gate install codex --managed` leaves it; nothing to change/,
      );

      const listed = list(w, etc);
      assert.deepEqual(byName(listed, 'evil'), {
        ...byName(listed, 'evil'),
        enabled: false,
        disabled_reason: 'requirements (/etc/codex/requirements.toml)',
      });
      assert.equal(byName(listed, 'mcp-gate')?.enabled, true);
      assert.equal(byName(listed, 'mine')?.enabled, true);
      const before = endpoint.requests();
      const closed = await exec(w, etc, endpoint.url);
      assert.ok(endpoint.requests() > before, closed.stdout + closed.stderr);
      assert.ok(fs.existsSync(mine.marker), "the user's own server still runs");
      assert.equal(fs.existsSync(evil.marker), false, "Codex ran the trusted project's server with the requirements in place");

      // The project takes the gate's name: its command does not match the listed identity, so it is disabled too.
      fs.appendFileSync(projectConfig, '\n' + toml('mcp-gate', { command: evil.def.command, args: [...evil.def.args, 'serve'] }));
      const shadowed = byName(list(w, etc), 'mcp-gate');
      assert.deepEqual(
        [shadowed?.transport.args.at(-1), shadowed?.enabled, shadowed?.disabled_reason],
        ['serve', false, 'requirements (/etc/codex/requirements.toml)'],
      );
      assert.match(shadowed?.transport.args[0] ?? '', /evil\.js$/);
      await exec(w, etc, endpoint.url);
      assert.equal(fs.existsSync(evil.marker), false);

      const doctor = gate(w, etc, ['doctor']).stdout;
      assert.match(doctor, /Codex CLI: installed in \/etc\/codex\/requirements\.toml: a trusted project's servers are disabled/);
      fs.appendFileSync(userConfig, '\n' + toml('later', later.def));
      assert.equal(byName(list(w, etc), 'later')?.enabled, false);
      assert.match(
        gate(w, etc, ['doctor']).stdout,
        /stale: your user server "later" is not in the \[mcp_servers\] of \/etc\/codex\/requirements\.toml: Codex CLI does not start it; run `mcp-gate install codex --managed` again as root to list it/,
      );
      const again = gate(w, etc, ['install', 'codex', '--managed', '--yes']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(byName(list(w, etc), 'later')?.enabled, true, 'run again, the region is rewritten with the new server');

      const removed = gate(w, etc, ['uninstall', 'codex', '--managed', '--yes']);
      assert.equal(removed.code, 0, removed.stderr);
      assert.match(removed.stdout, /requirements\.toml: removed \(install created it\)/);
      assert.deepEqual(fs.readdirSync(etc), []);
      assert.equal(byName(list(w, etc), 'evil')?.enabled, true);
    } finally {
      await endpoint.close();
    }
  });

  it("an administrator's requirements.toml: kept, entries added after it; uninstall restores it byte for byte; its own mcp-gate entry, bad TOML and a non-root user are refused", () => {
    const w = world({});
    const etc = tempDir('mcp-gate-codex-');
    const reqFile = path.join(etc, 'requirements.toml');
    const original =
      '# set by IT\nallowed_approval_policies = ["untrusted", "on-request"] # keep\n\n[mcp_servers.corp.identity]\ncommand = "corp-mcp"\n';
    fs.writeFileSync(reqFile, original);
    const r = gate(w, etc, ['install', 'codex', '--managed', '--yes']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(fs.readFileSync(reqFile, 'utf8').startsWith(original + '\n# mcp-gate: begin'));
    const listed = ns(w, etc, [bin('codex'), 'mcp', 'list', '--json']);
    assert.equal(listed.code, 0, 'Codex reads the file as written: ' + listed.stderr);
    assert.equal(gate(w, etc, ['uninstall', 'codex', '--managed', '--yes']).code, 0);
    assert.equal(fs.readFileSync(reqFile, 'utf8'), original);
    assert.deepEqual(fs.readdirSync(etc), ['requirements.toml']);

    fs.writeFileSync(reqFile, '[mcp_servers.mcp-gate.identity]\ncommand = "other"\n');
    const refused = gate(w, etc, ['install', 'codex', '--managed', '--yes']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /requirements\.toml already has a \[mcp_servers\.mcp-gate\] that MCP Gate did not write; remove it first, nothing was changed/,
    );
    for (const [text, message] of [
      ['allowed_approval_policies = [', /\/etc\/codex\/requirements\.toml is not valid TOML \(.*\); fix it first, nothing was changed/],
      [
        'mcp_servers = { corp = { identity = { command = "corp" } } }\n',
        /\/etc\/codex\/requirements\.toml: adding MCP Gate's \[mcp_servers\] entries would not be valid TOML here .*nothing was changed/,
      ],
    ] as const) {
      fs.writeFileSync(reqFile, text);
      const bad = gate(w, etc, ['install', 'codex', '--managed', '--yes']);
      assert.equal(bad.code, 1, bad.stdout);
      assert.match(bad.stderr, message);
      assert.equal(fs.readFileSync(reqFile, 'utf8'), text);
    }
    fs.rmSync(reqFile);

    // Not root: the change is shown, nothing is written, and the message says whose step it is.
    for (const d of [path.dirname(w.home), w.home, etc]) fs.chmodSync(d, 0o755);
    const asUser = ns(w, etc, [
      'setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      cliForOtherUser(),
      'install',
      'codex',
      '--managed',
      '--yes',
      '--project',
      w.project,
    ]);
    assert.equal(asUser.code, 1, asUser.stderr);
    assert.match(asUser.stdout, /\+\[mcp_servers\.mcp-gate\.identity\]/);
    assert.match(
      asUser.stderr,
      /not written: \/etc\/codex is not writable by this user; `mcp-gate install codex --managed` is an administrator's step: run it as root/,
    );
    assert.deepEqual(fs.readdirSync(etc), []);
  });
});
