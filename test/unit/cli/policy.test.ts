// The CLI over the policy engine, tried as a new user would: a user config file with rules, `explain` on actions
// nobody wrote tests for, a rule placed in the repository granting nothing, invalid rules denying everything,
// and secret values masked in everything the CLI prints.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { cleanupTemp, cli, world, type World } from '../helpers';

const CONFIG = `{
  // rules written by the person on this machine
  "rules": [
    { "action": "mcp.notion.host.com.notion.*", "decision": "allow" },
    { "action": "mcp.notion.tool.search", "decision": "allow" },
    { "action": "mcp.notion.tool.*", "decision": "ask" },
    { "action": "mcp.notion.tool.delete_page", "decision": "deny" },
    { "action": "mcp.*", "decision": "deny" }
  ],
  "secrets": [{ "name": "NOTION_TOKEN", "to": "mcp.notion.*", "bind": "header" }]
}`;

describe('mcp-gate explain and the user policy', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  let w: World;
  before(() => {
    w = world({}, { '.config/mcp-gate/config.json': CONFIG });
  });

  const cases: [string, string, RegExp][] = [
    ['mcp.notion.host.com.notion.mcp', 'allow', /rule: .*"mcp\.notion\.host\.com\.notion\.\*".* from .*config\.json:4 \(rules\[0\]\)/],
    ['mcp.notion.host.COM.Notion.api', 'allow', /action: mcp\.notion\.host\.com\.notion\.api/],
    ['mcp.notion.host.com.notion', 'deny', /would permit: \{"action":"mcp\.notion\.host\.com\.notion","decision":"allow"\}/],
    ['mcp.notion.host.com.evil-notion.mcp', 'deny', /rule: .*"mcp\.\*".*rules\[4\]/],
    ['mcp.notion.tool.search', 'allow', /rules\[1\]/],
    ['mcp.notion.tool.create_page', 'ask', /ask: a prompt where a person can answer; a refusal in the CLI/],
    ['mcp.notion.tool.delete_page', 'deny', /also matches: .*"mcp\.notion\.tool\.\*"/],
    ['secret.use.NOTION_TOKEN', 'deny', /rule: none/],
  ];
  for (const [action, decision, detail] of cases) {
    it(`${action} → ${decision}`, () => {
      const r = cli(w, ['explain', action]);
      assert.match(r.stdout, new RegExp(`decision: ${decision}`));
      assert.match(r.stdout, detail);
      assert.equal(r.code, decision === 'allow' ? 0 : 1);
    });
  }

  it('without --scope, a server the repository declares is explained as a repository server: the rule offered names the project', () => {
    const repo = world({ '.mcp.json': JSON.stringify({ mcpServers: { notes: { command: 'node', args: ['n.js'] } } }), 'n.js': '1' });
    const r = cli(repo, ['explain', 'mcp.notes.tool.list']);
    assert.match(
      r.stdout,
      new RegExp(
        `would permit: \\{"action":"mcp\\.notes\\.tool\\.list","decision":"allow","project":${JSON.stringify(repo.project).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\}`,
      ),
    );
    assert.match(
      r.stdout,
      /as seen by: the repository servers of .*; "notes" is declared by this repository \(--scope user for your own server of that name\)/,
    );
    assert.match(
      cli(repo, ['explain', 'mcp.notes.tool.list', '--scope', 'user']).stdout,
      /would permit: \{"action":"mcp\.notes\.tool\.list","decision":"allow"\}/,
    );
  });

  it('a rule placed in the repository grants nothing, and doctor says so', () => {
    const repo = world({ '.vscode/settings.json': '{ "mcpGate.rules": [{ "action": "*", "decision": "allow" }] }' });
    const r = cli(repo, ['explain', 'mcp.anything.tool.x']);
    assert.match(r.stdout, /decision: deny/);
    assert.match(r.stdout, /rule: none/);
    const d = cli(repo, ['doctor']);
    assert.match(d.stdout, /ignored \(a repository cannot grant\):\n\s+.*\.vscode\/settings\.json: "mcpGate\.rules"/);
  });

  it('an invalid rule denies everything and names the rule, file and line', () => {
    const bad = world(
      {},
      {
        '.config/mcp-gate/config.json':
          '{"rules": [\n {"action": "*", "decision": "allow"},\n {"action": "mcp.x.tool.*.y", "decision": "allow"}\n]}',
      },
    );
    const r = cli(bad, ['explain', 'mcp.x.tool.y']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /invalid items, so every action is denied/);
    assert.match(r.stdout, /config\.json:3: rules\[1\]/);
    assert.match(r.stdout, /decision: deny/);
    assert.equal(cli(bad, ['doctor']).code, 1);
  });

  it('a broken user config denies everything', () => {
    const bad = world({}, { '.config/mcp-gate/config.json': '{"rules": [' });
    const r = cli(bad, ['explain', 'mcp.x.tool.y']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /configuration cannot be used/);
  });

  it('doctor lists the secrets block without any value', () => {
    const value = 'ntn_abcdefghijklmnop1234';
    const d = cli(w, ['doctor'], { env: { MCP_GATE_SECRET_NOTION_TOKEN: value } });
    assert.match(d.stdout, /secret\s+NOTION_TOKEN → mcp\.notion\.\* as header: value set/);
    assert.doesNotMatch(d.stdout + d.stderr, new RegExp(value));
    const none = cli(w, ['doctor']);
    assert.match(none.stdout, /no value \(set MCP_GATE_SECRET_NOTION_TOKEN\)/);
  });

  it('a secret value that appears in a repository definition is masked in every CLI output', () => {
    const value = 'sk-live-0123456789abcdef';
    const repo = world({
      '.mcp.json': JSON.stringify({
        mcpServers: { leak: { command: 'node', args: [`--token=${value}`, Buffer.from(value).toString('base64')] } },
      }),
    });
    const env = { MCP_GATE_SECRET_API_KEY: value };
    for (const args of [['list'], ['list', '--json'], ['get', 'leak'], ['doctor'], ['approve', 'leak', '--yes']]) {
      const r = cli(repo, args, { env });
      assert.doesNotMatch(r.stdout + r.stderr, new RegExp(value), args.join(' '));
      assert.doesNotMatch(r.stdout + r.stderr, new RegExp(Buffer.from(value).toString('base64')), args.join(' '));
    }
    assert.match(cli(repo, ['get', 'leak'], { env }).stdout, /--token=\*\*\*/);
  });

  it('explain without an action is a usage error', () => {
    assert.equal(cli(w, ['explain']).code, 2);
    assert.ok(path.isAbsolute(w.project));
  });
});
