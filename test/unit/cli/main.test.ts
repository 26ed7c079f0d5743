// The mcp-gate command as a person uses it: the built CLI in a clean environment, checked on its output and
// exit codes (0 ok, 1 full block or refusal, 2 usage).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, world, writeFiles } from '../helpers';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);

describe('mcp-gate CLI', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  it('list shows each server with state, scope and source; --json carries the same', () => {
    const w = world(
      { '.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }), 'db.js': 'x' },
      { '.config/mcp-gate/config.json': '{"servers": {"mine": {"command": "m"}}}' },
    );
    const r = cli(w, ['list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /waiting for review\s+repository\s+\.mcp\.json\s+db\s+"node" "db\.js"/);
    assert.match(r.stdout, /trusted \(your own\)\s+user\s+.*config\.json\s+mine/);
    const j = JSON.parse(cli(w, ['list', '--json']).stdout);
    assert.equal(j.blocked, false);
    assert.deepEqual(
      j.servers.map((s: { name: string; state: string }) => [s.name, s.state]),
      [
        ['mine', 'trusted'],
        ['db', 'pending'],
      ],
    );
  });

  it('a full block makes list, list --json and doctor exit 1 and say why', () => {
    const w = world({ '.codex/config.toml': '[mcp_servers.a\n', '.mcp.json': MCP({ ok: { command: 'x' } }) });
    const list = cli(w, ['list']);
    assert.equal(list.code, 1);
    assert.match(list.stdout, /BLOCKED: repository source \.codex\/config\.toml exists but cannot be used/);
    const lj = cli(w, ['list', '--json']);
    assert.equal(lj.code, 1);
    assert.equal(JSON.parse(lj.stdout).blocked, true);
    const doc = cli(w, ['doctor']);
    assert.equal(doc.code, 1);
    assert.match(doc.stdout, /FULL BLOCK/);
    assert.match(doc.stdout, /unreadable\s+repository\s+.*\.codex\/config\.toml/);
    assert.equal(cli(w, ['doctor', '--json']).code, 1);
  });

  it('approve shows the exact definition, asks, and records only on "yes"', () => {
    const w = world({ '.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }), 'db.js': 'x' });
    const no = cli(w, ['approve', 'db'], { input: 'no\n' });
    assert.equal(no.code, 1);
    assert.match(no.stdout, /"command": "node"/);
    assert.match(no.stdout, /not approved; nothing was recorded/);
    const eof = cli(w, ['approve', 'db']);
    assert.equal(eof.code, 1, 'no answer is no');
    assert.match(cli(w, ['list']).stdout, /waiting for review/);
    const yes = cli(w, ['approve', 'db'], { input: 'yes\n' });
    assert.equal(yes.code, 0, yes.stderr);
    assert.match(yes.stdout, /approved "db" \(\.mcp\.json\) at sha256:[0-9a-f]{64}/);
    assert.match(cli(w, ['list']).stdout, /approved\s+repository\s+\.mcp\.json\s+db/);
  });

  it('approve --yes still prints the definition first', () => {
    const w = world({ '.mcp.json': MCP({ db: { command: 'node' } }) });
    const r = cli(w, ['approve', 'db', '--yes']);
    assert.equal(r.code, 0);
    assert.ok(r.stdout.indexOf('"command": "node"') < r.stdout.indexOf('approved "db"'));
  });

  it('every hidden character is shown escaped and nothing is truncated', () => {
    const long = 'A'.repeat(5000) + 'END';
    const sneaky = 'safe\u202Ehs.live\u200B\u{E0041}\u0007\u001b[31m\r\nx';
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: [sneaky, long], env: { 'K\u2066': 'v\u00A0\u200D' } } }) });
    const r = cli(w, ['approve', 's'], { input: 'no\n' });
    assert.ok(r.stdout.includes('"safe\\u202Ehs.live\\u200B\\u{E0041}\\u0007\\u001B[31m\\r\\nx"'), r.stdout);
    assert.ok(r.stdout.includes('"K\\u2066"'));
    assert.ok(r.stdout.includes('\\u200D'));
    assert.ok(r.stdout.includes(long), 'the long argument is printed whole');
    assert.doesNotMatch(r.stdout, /[\u202E\u200B\u2066\u0007\u001b]|\u{E0041}/u, 'no raw hidden character reaches the terminal');
  });

  it('get on a changed server shows what changed', () => {
    const w = world({ '.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }), 'db.js': 'safe()\n' });
    assert.equal(cli(w, ['approve', 'db', '--yes']).code, 0);
    writeFiles(w.project, { 'db.js': 'safe()\nexfiltrate()\n' });
    const r = cli(w, ['get', 'db']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /state\s+changed since approval/);
    assert.match(r.stdout, /file db\.js: changed/);
    assert.match(r.stdout, /\+exfiltrate\(\)/);
  });

  it('reject, reset <server> and reset --all', () => {
    const w = world({ '.mcp.json': MCP({ a: { command: 'a' }, b: { command: 'b' } }) });
    assert.equal(cli(w, ['reject', 'a']).code, 0);
    assert.equal(cli(w, ['approve', 'b', '--yes']).code, 0);
    assert.match(cli(w, ['list']).stdout, /rejected\s+repository\s+\.mcp\.json\s+a/);
    assert.match(cli(w, ['reset', 'a']).stdout, /reset "a" \(\.mcp\.json\): was rejected; now waiting for review/);
    const all = cli(w, ['reset', '--all']);
    assert.match(all.stdout, /reset "b"/);
    assert.equal((cli(w, ['list']).stdout.match(/waiting for review/g) ?? []).length, 2);
  });

  it('refusals exit 1 with a reason', () => {
    const w = world({ '.mcp.json': MCP({ bad: { command: 'a', url: 'https://x.example' } }) });
    const r = cli(w, ['approve', 'bad', '--yes']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /"bad" is blocked: .*declares both "command" and "url"/);
    const unknown = cli(w, ['get', 'nope']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no server "nope" .*\(servers: bad\)/);
  });

  it('usage errors exit 2', () => {
    const w = world({});
    for (const args of [['frobnicate'], ['approve'], ['reset'], ['list', '--bogus'], ['get', 'a', 'b']]) {
      const r = cli(w, args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /usage: mcp-gate/);
    }
    const missing = cli({ ...w, project: path.join(w.project, 'does-not-exist') }, ['list']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot be opened/);
  });

  it('doctor names importing files, kinds, unreadable layers, missing targets and every server needing review', async () => {
    const w = world(
      {
        '.pi/mcp.json': '{"imports": ["cursor", "claude"], "mcpServers": {"p": {"command": "p"}}}',
        '.mcp.json': MCP({ c: { command: 'c' } }),
      },
      {
        '.config/mcp-gate/config.json': '{"imports": ["codex", "gemini"]}',
        '.codex/config.toml': 'broken [',
        '.cursor/mcp.json': MCP({ cur: { command: 'cur' } }),
      },
    );
    assert.equal(cli(w, ['approve', 'c', '--yes']).code, 0);
    writeFiles(w.project, { '.mcp.json': MCP({ c: { command: 'c2' } }) });
    const r = cli(w, ['doctor']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\.pi\/mcp\.json:1 \(repository\) imports cursor, claude/);
    assert.match(r.stdout, /config\.json:1 \(user\) imports codex, gemini/);
    assert.match(r.stdout, /unreadable\s+user\s+.*\.codex\/config\.toml/);
    assert.match(r.stdout, /missing import target: .*\.gemini\/settings\.json \(gemini/);
    assert.match(r.stdout, /needs review \(3\): c \(changed since approval\), p \(never decided\), cur \(never decided\)/);
    assert.match(r.stdout, /cur\s+\[waiting for review\]\s+user scope \(gated\).*imported by .*\.pi\/mcp\.json/);
  });

  it('--store chooses the store; nothing is written into the project', () => {
    const w = world({ '.mcp.json': MCP({ a: { command: 'a' } }) });
    const other = path.join(path.dirname(w.store), 'other-store');
    assert.equal(cli(w, ['approve', 'a', '--yes', '--store', other]).code, 0);
    assert.ok(fs.existsSync(path.join(other, 'approvals.json')));
    assert.match(cli(w, ['list']).stdout, /waiting for review/, 'the default store knows nothing of it');
    assert.match(cli(w, ['list', '--store', other]).stdout, /approved/);
    assert.deepEqual(fs.readdirSync(w.project), ['.mcp.json']);
  });
});
