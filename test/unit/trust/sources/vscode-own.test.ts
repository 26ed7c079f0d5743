// What VS Code itself would start from a workspace outside MCP Gate, from a gate report and VS Code's setting values
// (as measured in VS Code 1.112 and 1.139: docs/vscode-own-starts.md), and the settings that route those servers through the gate.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TrackingReader } from '../../../../src/trust/sources/fsread';
import { evaluateGate } from '../../../../src/trust/gate';
import { type GateReport } from '../../../../src/trust/report';
import {
  ACCESS_KEY,
  ALLOWED_KEY,
  COLLISION_KEY,
  DISCOVERY_KEY,
  GALLERY_URL_KEY,
  gatedWorkspaceName,
  gatedWorkspaceText,
  isGatedWorkspace,
  LEGACY_ENABLED_KEY,
  settingInFile,
  SETTINGS_FILE_LIMIT,
  vscodeOwnStarts,
  vscodeReads,
  type InspectedSetting,
  type VsCodeOwnInput,
} from '../../../../src/trust/sources/vscode-own';
import { cleanupTemp, world } from '../../helpers';

// VS Code 1.112's defaults, as inspect() returns them.
const ACCESS_DEFAULT: InspectedSetting = { defaultValue: 'all' };
const DISCOVERY_DEFAULT: InspectedSetting = {
  defaultValue: { 'claude-desktop': false, windsurf: false, 'cursor-global': false, 'cursor-workspace': false },
};

const MCP_JSON =
  '{ "servers": { "echo": { "type": "stdio", "command": "node", "args": ["${workspaceFolder}/echo.mjs"] }, "off": { "command": "node", "disabled": true } } }';
const CURSOR_JSON = '{ "mcpServers": { "cur": { "command": "node", "args": ["c.js"] } } }';

function report(files: Record<string, string>, home: Record<string, string> = {}, env: Record<string, string> = {}): GateReport {
  return evaluateGate(world(files, home, env).input);
}

function run(r: GateReport, settings: VsCodeOwnInput['settings'] = {}, extra: Partial<VsCodeOwnInput> = {}) {
  return vscodeOwnStarts({
    report: r,
    settings: { [ACCESS_KEY]: ACCESS_DEFAULT, [DISCOVERY_KEY]: DISCOVERY_DEFAULT, ...settings },
    workspaceTrusted: true,
    ...extra,
  });
}

const names = (x: ReturnType<typeof run>) => x.starts.map((s) => `${s.source}:${s.name}:${s.mechanism}`).sort();

describe('vscode-own: what VS Code itself starts from a workspace', () => {
  after(cleanupTemp);

  it('with the defaults, VS Code starts every .vscode/mcp.json server itself, without a prompt, under mcp.config.ws<i>.<name>', () => {
    const x = run(report({ '.vscode/mcp.json': MCP_JSON, 'echo.mjs': '' }));
    assert.deepEqual(names(x), ['.vscode/mcp.json:echo:workspace-folder-mcp.json', '.vscode/mcp.json:off:workspace-folder-mcp.json']);
    const echo = x.starts.find((s) => s.name === 'echo')!;
    assert.equal(echo.vscodeId, 'mcp.config.ws0.echo');
    assert.deepEqual(echo.needs, []);
    assert.equal(echo.gateState, 'pending');
    assert.deepEqual(echo.enabledBy, [{ key: ACCESS_KEY, value: 'all', scope: 'default' }]);
    assert.deepEqual(x.access, { key: ACCESS_KEY, value: 'all', raw: 'all', scope: 'default' });
    assert.equal(x.providerReachesChat, true);
  });

  it('"disabled": true does not stop VS Code: the server is listed, with a note', () => {
    const off = run(report({ '.vscode/mcp.json': MCP_JSON })).starts.find((s) => s.name === 'off')!;
    assert.match(off.notes.join(), /VS Code ignores "disabled"/);
  });

  it('uses the folder index in the id, and asks for Workspace Trust in Restricted Mode', () => {
    const x = run(report({ '.vscode/mcp.json': MCP_JSON }), {}, { folderIndex: 2, workspaceTrusted: false });
    assert.equal(x.starts[0].vscodeId, 'mcp.config.ws2.echo');
    assert.deepEqual(x.starts[0].needs, ['workspace-trust']);
  });

  it("an approved server is still started by VS Code itself as well, outside the gate's policy", () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const echo = r.servers.find((s) => s.name === 'echo')!;
    const approved = { ...r, servers: [{ ...echo, state: 'approved' as const }] };
    assert.match(run(approved).starts[0].notes.join(), /bypass MCP Gate's policy/);
  });

  it('other repository files are not read by VS Code 1.112 (.mcp.json, .gemini, .codex, …), nor .cursor/mcp.json without discovery', () => {
    const x = run(
      report({
        '.mcp.json': '{"mcpServers": {"a": {"command": "node"}}}',
        '.gemini/settings.json': '{"mcpServers": {"b": {"command": "node"}}}',
        '.codex/config.toml': '[mcp_servers.c]\ncommand = "node"\n',
        '.cursor/mcp.json': CURSOR_JSON,
      }),
    );
    assert.deepEqual(x.starts, []);
  });

  it('discovery of .cursor/mcp.json (object or boolean form): listed with a per-server trust prompt, id cursor-workspace.<i>.<name>', () => {
    const r = report({ '.cursor/mcp.json': CURSOR_JSON });
    for (const userValue of [{ 'cursor-workspace': true }, true]) {
      const x = run(r, { [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, globalValue: userValue } });
      assert.deepEqual(names(x), ['.cursor/mcp.json:cur:discovery:cursor-workspace']);
      assert.equal(x.starts[0].vscodeId, 'cursor-workspace.0.cur');
      assert.deepEqual(x.starts[0].needs, ['server-trust']);
      assert.deepEqual(x.discovery['cursor-workspace'], { key: `${DISCOVERY_KEY}.cursor-workspace`, value: true, scope: 'user' });
    }
    const untrusted = run(r, { [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, globalValue: true } }, { workspaceTrusted: false });
    assert.deepEqual(untrusted.starts[0].needs, ['workspace-trust', 'server-trust']);
    // A later object that names other sources only leaves cursor-workspace as the default says.
    const other = run(r, { [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, globalValue: { windsurf: true } } });
    assert.deepEqual(other.starts, []);
  });

  it('~/.cursor/mcp.json (when imported) is discovery "cursor-global"; Claude Desktop and Windsurf are noted, MCP Gate does not read them', () => {
    const r = report({ '.pi/mcp.json': '{"imports": ["cursor"]}' }, { '.cursor/mcp.json': CURSOR_JSON });
    const x = run(r, { [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, globalValue: true } });
    assert.deepEqual(
      x.starts.map((s) => [s.name, s.mechanism, s.vscodeId]),
      [['cur', 'discovery:cursor-global', undefined]],
    );
    assert.equal(x.notes.length, 2);
    assert.match(x.notes.join('\n'), /Claude Desktop/);
    assert.match(x.notes.join('\n'), /Windsurf/);
  });

  it("the user profile mcp.json counts only when it is the running VS Code's", () => {
    const home = { '.config/Code/User/mcp.json': '{"servers": {"mine": {"command": "node"}}}' };
    const r = report({ '.pi/mcp.json': '{"imports": ["vscode"]}' }, home);
    assert.deepEqual(run(r).starts, []);
    const file = r.servers.find((s) => s.name === 'mine')!.file;
    const x = run(r, {}, { userMcpJson: file });
    assert.deepEqual(
      x.starts.map((s) => [s.name, s.mechanism]),
      [['mine', 'user-mcp.json']],
    );
    assert.deepEqual(run(r, {}, { userMcpJson: path.join('/elsewhere', 'mcp.json') }).starts, []);
  });

  it('a .vscode/mcp.json MCP Gate cannot use is still read by VS Code: listed as unreadable', () => {
    const x = run(report({ '.vscode/mcp.json': '{ "servers": { "a": { "command": "node" } }, "extra": 1 }' }));
    assert.equal(x.unreadable.length, 1);
    assert.equal(x.unreadable[0].source, '.vscode/mcp.json');
    assert.equal(x.unreadable[0].mechanism, 'workspace-folder-mcp.json');
  });

  it('routing: with the defaults, chat.mcp.access "registry" at user scope is what is missing', () => {
    const x = run(report({ '.vscode/mcp.json': MCP_JSON }));
    assert.deepEqual(
      x.routing.map((s) => [s.key, s.value, s.scope, s.inPlace]),
      [
        [ACCESS_KEY, 'registry', 'user', false],
        [DISCOVERY_KEY, { 'claude-desktop': false, windsurf: false, 'cursor-global': false, 'cursor-workspace': false }, 'user', true],
      ],
    );
    assert.deepEqual(x.overrides, []);
  });

  it('with chat.mcp.access "registry" at user scope VS Code starts none of them, even with discovery on; MCP Gate\'s provider still reaches chat', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON, '.cursor/mcp.json': CURSOR_JSON });
    const x = run(r, {
      [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' },
      [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, globalValue: true },
    });
    assert.deepEqual(x.starts, []);
    assert.equal(x.access.value, 'registry');
    assert.equal(x.providerReachesChat, true);
    assert.deepEqual(
      x.routing.map((s) => s.inPlace),
      [true, false],
      'discovery is still on at user scope',
    );
    assert.deepEqual(x.notes, []);
  });

  it('chat.mcp.access "none" (or the legacy chat.mcp.enabled false) stops everything, MCP Gate included', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    for (const settings of [
      { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'none' } },
      { [ACCESS_KEY]: ACCESS_DEFAULT, [LEGACY_ENABLED_KEY]: { globalValue: false } },
    ]) {
      const x = run(r, settings);
      assert.deepEqual(x.starts, []);
      assert.equal(x.providerReachesChat, false);
      assert.equal(x.routing[0].inPlace, false);
      assert.match(x.notes.join(), /MCP Gate's servers do not reach chat/);
    }
  });

  it('an unknown access value behaves as "all" in VS Code 1.112', () => {
    const x = run(report({ '.vscode/mcp.json': MCP_JSON }), { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry-only' } });
    assert.equal(x.access.value, 'all');
    assert.equal(x.access.raw, 'registry-only');
    assert.equal(x.starts.length, 2);
  });

  it('a repository\'s .vscode/settings.json overrides the user\'s "registry" (window scope): reported, and the servers are listed again', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON, '.cursor/mcp.json': CURSOR_JSON });
    const x = run(r, {
      [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry', workspaceValue: 'all' },
      [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, workspaceValue: { 'cursor-workspace': true } },
    });
    assert.deepEqual(x.access, { key: ACCESS_KEY, value: 'all', raw: 'all', scope: 'workspace' });
    assert.deepEqual(names(x), [
      '.cursor/mcp.json:cur:discovery:cursor-workspace',
      '.vscode/mcp.json:echo:workspace-folder-mcp.json',
      '.vscode/mcp.json:off:workspace-folder-mcp.json',
    ]);
    assert.deepEqual(
      x.overrides.map((o) => [o.key, o.value, o.scope, o.file]),
      [
        [ACCESS_KEY, 'all', 'workspace', '.vscode/settings.json'],
        [DISCOVERY_KEY, { 'cursor-workspace': true }, 'workspace', '.vscode/settings.json'],
      ],
    );
    assert.match(x.overrides[0].effect, /over your user setting/);
    assert.equal(x.routing[0].inPlace, true, 'the user value is in place; the repository defeats it');
    const cur = x.starts.find((s) => s.name === 'cur')!;
    assert.deepEqual(cur.enabledBy, [
      { key: ACCESS_KEY, value: 'all', scope: 'workspace' },
      { key: `${DISCOVERY_KEY}.cursor-workspace`, value: true, scope: 'workspace' },
    ]);
  });

  it('a repository value of "none" is reported (it switches MCP Gate off in that workspace); "registry" is not', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const none = run(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, workspaceFolderValue: 'none' } });
    assert.deepEqual(
      none.overrides.map((o) => [o.value, o.scope]),
      [['none', 'workspaceFolder']],
    );
    assert.equal(none.providerReachesChat, false);
    assert.deepEqual(run(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, workspaceValue: 'registry' } }).overrides, []);
    const legacy = run(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' }, [LEGACY_ENABLED_KEY]: { workspaceValue: true } });
    assert.deepEqual(
      legacy.overrides.map((o) => [o.key, o.value]),
      [[LEGACY_ENABLED_KEY, true]],
    );
    assert.equal(legacy.starts.length, 2);
  });

  it('a policy value wins over the repository: no override, nothing started', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const x = run(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, policyValue: 'registry', workspaceValue: 'all' } });
    assert.deepEqual(x.starts, []);
    assert.deepEqual(x.overrides, []);
    assert.equal(x.access.scope, 'policy');
    assert.equal(x.routing[0].inPlace, true);
  });

  it('a folder opened by itself (VS Code reports its settings.json as workspace and folder value): one override, not two; with a .code-workspace the workspace value is named by that file', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const both = { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry', workspaceValue: 'all', workspaceFolderValue: 'all' } };
    assert.deepEqual(
      run(r, both).overrides.map((o) => [o.key, o.value, o.file]),
      [[ACCESS_KEY, 'all', '.vscode/settings.json']],
    );
    const ws = run(
      r,
      { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry', workspaceValue: 'all' } },
      { workspaceSettingsFile: 'override.code-workspace' },
    );
    assert.deepEqual(
      ws.overrides.map((o) => [o.value, o.scope, o.file]),
      [['all', 'workspace', 'override.code-workspace']],
    );
  });

  it('a repository that points VS Code at its own MCP registry is an override too (what "registry" lets start is what that registry vouches for)', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const routed = { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' } };
    const x = run(r, { ...routed, [GALLERY_URL_KEY]: { defaultValue: '', workspaceValue: 'http://127.0.0.1:47311' } });
    assert.deepEqual(
      x.overrides.map((o) => [o.key, o.value, o.file]),
      [[GALLERY_URL_KEY, 'http://127.0.0.1:47311', '.vscode/settings.json']],
    );
    assert.match(x.overrides[0].effect, /MCP registry the repository chooses/);
    // The user's own choice of registry is theirs, and an administrator's policy wins over a repository.
    assert.deepEqual(run(r, { ...routed, [GALLERY_URL_KEY]: { defaultValue: '', globalValue: 'https://registry.example' } }).overrides, []);
    assert.deepEqual(
      run(r, { ...routed, [GALLERY_URL_KEY]: { defaultValue: '', workspaceValue: 'http://x', policyValue: 'https://corp' } }).overrides,
      [],
    );
  });
});

describe('vscode-own: VS Code 1.139 (measured on code-server 4.139.1) reads more by itself', () => {
  after(cleanupTemp);
  const V139 = { vscodeVersion: '1.139.1' };
  const DISCOVERY_139: InspectedSetting = { defaultValue: { ...(DISCOVERY_DEFAULT.defaultValue as object), copilot: false } };
  const ROOT = '{"mcpServers": {"root-echo": {"command": "node", "args": ["echo.mjs"]}}}';
  const run139 = (r: GateReport, settings: VsCodeOwnInput['settings'] = {}, extra: Partial<VsCodeOwnInput> = {}) =>
    run(r, { [DISCOVERY_KEY]: DISCOVERY_139, ...settings }, { ...V139, ...extra });

  it('a server VS Code starts itself under a name that imitates a gated one ("· MCP Gate") is named as such', () => {
    const r = report({
      '.vscode/mcp.json': '{ "servers": { "notes · MCP Gate": { "command": "node", "args": ["x.mjs"] }, "plain": { "command": "node" } } }',
    });
    const starts = run139(r).starts;
    assert.deepEqual(starts.find((s) => s.name === 'notes · MCP Gate')?.notes.filter((n) => /imitates/.test(n)).length, 1);
    assert.deepEqual(
      starts.find((s) => s.name === 'plain')?.notes.filter((n) => /imitates/.test(n)),
      [],
    );
  });

  it('which measured row a version is treated as: undefined is 1.112; between two measured ones the next one up; newer or unparseable the newest', () => {
    const row = (v?: string) => vscodeReads(v).measured;
    assert.equal(row(undefined), '1.112');
    assert.equal(row('1.112.0'), '1.112');
    assert.equal(row('1.100.3'), '1.112', 'older than the oldest measured: like the oldest');
    assert.equal(row('1.113.0'), '1.139', 'between: like the next measured one up (reports more, never less)');
    assert.equal(row('1.130.0-insider'), '1.139');
    assert.equal(row('1.139.1'), '1.139');
    assert.equal(row('1.150.0'), '1.139');
    assert.equal(row('2.0.0'), '1.139');
    assert.equal(row('nonsense'), '1.139');
    assert.deepEqual(vscodeReads('1.139.1').discovery, ['claude-desktop', 'windsurf', 'cursor-global', 'cursor-workspace', 'copilot']);
  });

  it("the folder's root .mcp.json is an own start on 1.139 (workspace-dot-mcp.<i>.<name>, no prompt; Workspace Trust in Restricted Mode), never on 1.112", () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON, '.mcp.json': ROOT, 'echo.mjs': '' });
    assert.deepEqual(names(run(r)), ['.vscode/mcp.json:echo:workspace-folder-mcp.json', '.vscode/mcp.json:off:workspace-folder-mcp.json']);
    const x = run139(r, {}, { folderIndex: 1 });
    assert.deepEqual(names(x), [
      '.mcp.json:root-echo:workspace-root-.mcp.json',
      '.vscode/mcp.json:echo:workspace-folder-mcp.json',
      '.vscode/mcp.json:off:workspace-folder-mcp.json',
    ]);
    const root = x.starts.find((s) => s.name === 'root-echo')!;
    assert.equal(root.vscodeId, 'workspace-dot-mcp.1.root-echo');
    assert.deepEqual(root.needs, []);
    assert.deepEqual(root.enabledBy, [{ key: ACCESS_KEY, value: 'all', scope: 'default' }]);
    assert.equal(root.gateState, 'pending');
    assert.equal(x.reads.measured, '1.139');
    assert.deepEqual(run139(r, {}, { workspaceTrusted: false }).starts.find((s) => s.name === 'root-echo')!.needs, ['workspace-trust']);
    // A version between 1.112 and 1.139 is treated like 1.139.
    assert.ok(run(r, {}, { vscodeVersion: '1.120.0' }).starts.some((s) => s.mechanism === 'workspace-root-.mcp.json'));
    // ~/.claude.json (the user-scope claude file) is not the root .mcp.json.
    const user = report({ '.pi/mcp.json': '{"imports": ["claude"]}' }, { '.claude.json': '{"mcpServers": {"u": {"command": "node"}}}' });
    assert.deepEqual(run139(user).starts, []);
  });

  it('a root .mcp.json MCP Gate cannot use is still read by VS Code 1.139: listed as unreadable', () => {
    const x = run139(report({ '.mcp.json': '{"mcpServers": {"a": {"command": "node"}}' }));
    assert.deepEqual(
      x.unreadable.map((u) => [u.source, u.mechanism]),
      [['.mcp.json', 'workspace-root-.mcp.json']],
    );
    assert.deepEqual(run(report({ '.mcp.json': '{"mcpServers": {"a": {"command": "node"}}' })).unreadable, []);
  });

  it('"registry" at user scope stops the root .mcp.json too; a repository\'s "all" brings it back and says so', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON, '.mcp.json': ROOT });
    const routed = run139(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' } });
    assert.deepEqual(routed.starts, []);
    assert.equal(routed.providerReachesChat, true);
    assert.match(routed.routing[0].why, /root \.mcp\.json/);
    const over = run139(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry', workspaceValue: 'all' } });
    assert.ok(over.starts.some((s) => s.vscodeId === 'workspace-dot-mcp.0.root-echo'));
    assert.match(over.overrides[0].effect, /\.vscode\/mcp\.json and \.mcp\.json/);
  });

  it('copilot discovery: a source of 1.139 (noted: a file MCP Gate does not read), routed off with the others; unknown to 1.112', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const x = run139(r, { [DISCOVERY_KEY]: { ...DISCOVERY_139, globalValue: { copilot: true } } });
    assert.deepEqual(x.discovery.copilot, { key: `${DISCOVERY_KEY}.copilot`, value: true, scope: 'user' });
    assert.match(x.notes.join('\n'), /~\/\.copilot\/mcp-config\.json \(or \$COPILOT_HOME/);
    assert.deepEqual(x.routing[1].value, {
      'claude-desktop': false,
      windsurf: false,
      'cursor-global': false,
      'cursor-workspace': false,
      copilot: false,
    });
    assert.equal(x.routing[1].inPlace, false, 'copilot discovery is on at user scope');
    assert.match(x.routing[1].why, /GitHub Copilot/);
    // Under "registry" VS Code runs no discovery: no note.
    assert.deepEqual(
      run139(r, {
        [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' },
        [DISCOVERY_KEY]: { ...DISCOVERY_139, globalValue: true },
      }).notes.filter((n) => /copilot/i.test(n)),
      [],
    );
    // A repository turning it on is an override.
    const over = run139(r, { [DISCOVERY_KEY]: { ...DISCOVERY_139, workspaceValue: { copilot: true } } });
    assert.deepEqual(
      over.overrides.map((o) => [o.key, o.effect]),
      [[DISCOVERY_KEY, "turns on VS Code's discovery of copilot"]],
    );
    // 1.112 has no such source: nothing reported, nothing routed.
    const old = run(r, { [DISCOVERY_KEY]: { ...DISCOVERY_DEFAULT, globalValue: { copilot: true }, workspaceValue: { copilot: true } } });
    assert.equal(old.discovery.copilot, undefined);
    assert.deepEqual(old.notes, []);
    assert.deepEqual(old.overrides, []);
    assert.deepEqual(old.routing[1].value, { 'claude-desktop': false, windsurf: false, 'cursor-global': false, 'cursor-workspace': false });
  });

  it('a 1.139 window that ran under "all" and is back on "registry": the workspace\'s servers are reported as possible starts (seen kept until a reload); not on 1.112, not without "all" earlier', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON, '.mcp.json': ROOT });
    const routed = { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' } };
    const x = run139(r, routed, { accessWasAllInWindow: true });
    assert.deepEqual(names(x), [
      '.mcp.json:root-echo:workspace-root-.mcp.json',
      '.vscode/mcp.json:echo:workspace-folder-mcp.json',
      '.vscode/mcp.json:off:workspace-folder-mcp.json',
    ]);
    for (const s of x.starts) assert.match(s.uncertain ?? '', /until the window reloads/);
    assert.equal(x.routing[0].inPlace, true);
    assert.deepEqual(run139(r, routed, { accessWasAllInWindow: false }).starts, []);
    assert.deepEqual(run(r, routed, { accessWasAllInWindow: true }).starts, [], '1.112 follows the switch');
    assert.equal(
      run139(r, {}, { accessWasAllInWindow: true }).starts.every((s) => s.uncertain === undefined),
      true,
      'under "all" they are certain',
    );
  });

  it("chat.mcp.allowedServers with MCP Gate's gateway URL (1.139, user or policy): VS Code starts none of the workspace's servers, whatever the repository sets; a routing setting", () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON, '.mcp.json': ROOT });
    const gate = [{ serverUrl: 'http://127.0.0.1:*/mcp/*' }];
    // Registered (inspect() has a default): part of the routing step.
    const before = run139(r, { [ALLOWED_KEY]: { defaultValue: null } });
    assert.deepEqual(before.routing.map((x) => [x.key, x.value, x.inPlace]).slice(2), [[ALLOWED_KEY, gate, false]]);
    // 1.139 stable does not register it (an extension's write is refused): not a routing step, a note to add it by hand.
    const stable = run139(r);
    assert.equal(stable.routing.length, 2);
    assert.ok(
      stable.notes.some((n) => n.includes(`"${ALLOWED_KEY}": [{"serverUrl":"http://127.0.0.1:*/mcp/*"}]`) && /by hand/.test(n)),
      stable.notes.join('\n'),
    );
    const x = run139(r, {
      [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry', workspaceValue: 'all' },
      [ALLOWED_KEY]: { defaultValue: null, globalValue: gate, workspaceValue: null },
    });
    assert.deepEqual(x.starts, []);
    assert.equal(x.routing[2].inPlace, true);
    assert.equal(x.overrides.length, 1, 'the repository\'s access "all" is still named');
    // An entry naming the server, or any command entry, lets it through (fail closed: counted as started).
    assert.deepEqual(names(run139(r, { [ALLOWED_KEY]: { globalValue: [...gate, { serverName: 'root-echo' }] } })), [
      '.mcp.json:root-echo:workspace-root-.mcp.json',
    ]);
    assert.equal(run139(r, { [ALLOWED_KEY]: { globalValue: [{ serverCommand: ['node'] }] } }).starts.length, 3);
    // The user's own entries are kept in the routing value.
    assert.deepEqual(run139(r, { [ALLOWED_KEY]: { defaultValue: null, globalValue: [{ serverName: 'mine' }] } }).routing[2].value, [
      { serverName: 'mine' },
      ...gate,
    ]);
    // 1.112 has no such setting: not routed, not applied.
    assert.equal(run(r, { [ALLOWED_KEY]: { globalValue: gate } }).starts.length, 2);
    assert.equal(run(r).routing.length, 2);
  });

  it('chat.mcp.collisionBehavior is reported on 1.139 (default "disable", noted when VS Code starts servers by itself), absent on 1.112', () => {
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    const x = run139(r, { [COLLISION_KEY]: { defaultValue: 'disable' } });
    assert.deepEqual(x.collision, { key: COLLISION_KEY, value: 'disable', scope: 'default' });
    assert.match(x.notes.join('\n'), /chat\.mcp\.collisionBehavior is "disable".*echo, off/);
    assert.deepEqual(run139(r).collision, { key: COLLISION_KEY, value: 'disable', scope: 'default' }, "unset: VS Code's default");
    const suffix = run139(r, { [COLLISION_KEY]: { defaultValue: 'disable', workspaceValue: 'suffix' } });
    assert.deepEqual(suffix.collision, { key: COLLISION_KEY, value: 'suffix', scope: 'workspace' });
    assert.deepEqual(
      suffix.notes.filter((n) => /collision/.test(n)),
      [],
    );
    assert.equal(run(r).collision, undefined);
    // Routed: nothing of VS Code's own to collide with.
    assert.deepEqual(
      run139(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, globalValue: 'registry' } }).notes.filter((n) => /collision/.test(n)),
      [],
    );
  });
});

describe("vscode-own: MCP Gate's own workspace file (a repository cannot undo the routing)", () => {
  it("holds the folders and the routing at workspace scope, nothing else, and is recognised as MCP Gate's", () => {
    const text = gatedWorkspaceText(['/home/u/src/repo']);
    const parsed = JSON.parse(text);
    assert.deepEqual(parsed.folders, [{ path: '/home/u/src/repo' }]);
    assert.deepEqual(parsed.settings, {
      [ACCESS_KEY]: 'registry',
      [DISCOVERY_KEY]: { 'claude-desktop': false, windsurf: false, 'cursor-global': false, 'cursor-workspace': false },
    });
    assert.equal(
      isGatedWorkspace({ path: '/home/u/.store/workspaces/repo-1.code-workspace', text }, '/home/u/.store/workspaces', [
        '/home/u/src/repo',
      ]),
      true,
    );
    // Read as VS Code would: the workspace value routes, the folder's value is not applied.
    const r = report({ '.vscode/mcp.json': MCP_JSON });
    assert.deepEqual(run(r, { [ACCESS_KEY]: { ...ACCESS_DEFAULT, workspaceValue: parsed.settings[ACCESS_KEY] } }).starts, []);
  });

  it("a workspace file is MCP Gate's only in its own folder and with exactly its text: the mark alone proves nothing", () => {
    const own = '/home/u/.store/workspaces';
    const text = gatedWorkspaceText(['/home/u/src/repo']);
    const at = (p: string, t = text) => isGatedWorkspace({ path: p, text: t }, own, ['/home/u/src/repo']);
    assert.equal(at(`${own}/repo-1.code-workspace`), true);
    // The same text inside the repository (or anywhere else) is the repository's file.
    assert.equal(at('/home/u/src/repo/team.code-workspace'), false);
    assert.equal(at(`${own}/nested/repo-1.code-workspace`), false);
    // The attack found by an attacker session: the mark, the dotted routing, and a nested "chat.mcp" that VS Code
    // applies over it.
    const forged = JSON.stringify({
      folders: [{ path: '/home/u/src/repo' }],
      settings: { [ACCESS_KEY]: 'registry', 'chat.mcp': { access: 'all' } },
      'mcpGate.gatedWorkspace': 1,
    });
    assert.equal(at(`${own}/repo-1.code-workspace`, forged), false);
    // Anything added to MCP Gate's text, or other folders than the window's.
    assert.equal(
      at(`${own}/repo-1.code-workspace`, text.replace('"settings": {', '"settings": { "chat.mcp.autostart": "newAndOutdated",')),
      false,
    );
    assert.equal(isGatedWorkspace({ path: `${own}/repo-1.code-workspace`, text }, own, ['/home/u/src/other']), false);
    assert.equal(isGatedWorkspace({ path: `${own}/repo-1.code-workspace`, text }, own, []), false);
    assert.equal(isGatedWorkspace({ path: `${own}/repo-1.code-workspace`, text }, '', ['/home/u/src/repo']), false);
  });

  it('refuses relative paths and no folder; names files per folder set', () => {
    assert.throws(() => gatedWorkspaceText([]), /at least one folder/);
    assert.throws(() => gatedWorkspaceText(['repo']), /not an absolute path: repo/);
    const h = (s: string) => Buffer.from(s).toString('hex').padEnd(12, '0');
    assert.match(gatedWorkspaceName(['/a/my repo'], h), /^my_repo-[0-9a-f]{12}\.code-workspace$/);
    assert.notEqual(gatedWorkspaceName(['/a/x'], h), gatedWorkspaceName(['/b/x'], h));
  });
});

describe('vscode-own: a repository settings file read by MCP Gate itself (settingInFile)', () => {
  const read = (f: string, limit: number) => new TrackingReader().read(f, limit);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-settings-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const KEY = 'chat.mcp.gallery.serviceUrl';

  it('finds the value in every spelling, and nothing where the file is missing or does not set it', () => {
    for (const [i, text] of [
      '{ "chat.mcp.gallery.serviceUrl": "http://a" }',
      '{ "chat.mcp": { "gallery": { "serviceUrl": "http://a" } } }',
      '{ "chat": { "mcp.gallery": { "serviceUrl": "http://a" } }, }', // trailing comma, as VS Code accepts
      '// a comment\n{ "chat.mcp.gallery": { "serviceUrl": "http://a" } }',
    ].entries()) {
      const f = path.join(dir, `s${i}.json`);
      fs.writeFileSync(f, text);
      assert.equal(settingInFile(read, f, KEY), 'http://a', text);
    }
    fs.writeFileSync(
      path.join(dir, 'ws.code-workspace'),
      '{ "folders": [], "settings": { "chat.mcp": { "gallery.serviceUrl": "http://w" } } }',
    );
    assert.equal(settingInFile(read, path.join(dir, 'ws.code-workspace'), KEY, true), 'http://w');
    assert.equal(settingInFile(read, path.join(dir, 'none.json'), KEY), undefined);
    fs.writeFileSync(path.join(dir, 'other.json'), '{ "editor.tabSize": 2 }');
    assert.equal(settingInFile(read, path.join(dir, 'other.json'), KEY), undefined);
  });

  it('a FIFO or an oversized file does not hang or load: reported as setting it (fail closed), naming the file', () => {
    const fifo = path.join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const t0 = Date.now();
    const v = settingInFile(read, fifo, KEY) as { unreadable: string };
    assert.ok(Date.now() - t0 < 2000, 'returned at once');
    assert.match(v.unreadable, /fifo\.json: .*not a regular file/);
    const big = path.join(dir, 'big.json');
    fs.writeFileSync(big, `{ "x": "${'a'.repeat(SETTINGS_FILE_LIMIT)}" }`);
    assert.match((settingInFile(read, big, KEY) as { unreadable: string }).unreadable, /big\.json.*refused/);
  });
});
