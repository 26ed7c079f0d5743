// Tests for rule parsing: normal forms, and the exact message a user gets for each kind of
// invalid rule (naming the file, line, index, rule text and reason); nothing is dropped.

import * as assert from 'node:assert/strict';
import { parseRules, RuleError, toolAction, networkAction, secretAction } from '../../../src/policy/rules';

const FILE = { file: '/home/me/.config/mcp-gate/config.json', line: 12 };

describe('policy/rules parseRules accepts and normalises', () => {
  const cases: [string, string][] = [
    ['mcp.notion.host.com.notion.mcp', 'mcp.notion.host.com.notion.mcp'],
    ['mcp.notion.host.com.notion.*', 'mcp.notion.host.com.notion.*'],
    ['mcp.notion.host.COM.Notion.*', 'mcp.notion.host.com.notion.*'],
    ['mcp.notion.host.de.bücher.*', 'mcp.notion.host.de.xn--bcher-kva.*'],
    ['mcp.notion.host.[2001:DB8:0::1]', 'mcp.notion.host.[2001:db8::1]'],
    ['mcp.notion.host.[198.51.100.7]', 'mcp.notion.host.[198.51.100.7]'],
    ['mcp.notion.host.*', 'mcp.notion.host.*'],
    ['mcp.notion.tool.search', 'mcp.notion.tool.search'],
    ['mcp.fs.tool.files.read', 'mcp.fs.tool.files.read'],
    ['mcp.Notion Server.tool.Search', 'mcp.Notion Server.tool.Search'],
    ['mcp.time.network', 'mcp.time.network'],
    ['mcp.time.network.*', 'mcp.time.network.*'],
    ['mcp.fetch.network.COM.Example.api', 'mcp.fetch.network.com.example.api'],
    ['mcp.fetch.network.com.example.*', 'mcp.fetch.network.com.example.*'],
    ['mcp.fetch.network.[2001:DB8::1]', 'mcp.fetch.network.[2001:db8::1]'],
    ['mcp.fetch.network.[198.18.0.2]', 'mcp.fetch.network.[198.18.0.2]'],
    ['mcp.notion.*', 'mcp.notion.*'],
    ['mcp.*', 'mcp.*'],
    ['*', '*'],
    ['secret.use.NOTION_TOKEN', 'secret.use.NOTION_TOKEN'],
    ['secret.use.*', 'secret.use.*'],
  ];
  for (const [written, normal] of cases) {
    it(`${written} → ${normal}`, () => {
      const { rules, errors } = parseRules([{ action: written, decision: 'allow' }], FILE);
      assert.deepEqual(
        errors.map((e) => e.message),
        [],
      );
      assert.equal(rules.length, 1);
      assert.equal(rules[0].action, normal);
      assert.equal(rules[0].written, written === normal ? undefined : written);
      assert.deepEqual(rules[0].origin, FILE);
      assert.equal(rules[0].index, 0);
    });
  }

  it('gives each rule its own origin when asked', () => {
    const { rules } = parseRules(
      [
        { action: 'mcp.*', decision: 'deny' },
        { action: '*', decision: 'ask' },
      ],
      (i) => ({ file: 'mcpGate.rules', line: 3 + i }),
    );
    assert.deepEqual(
      rules.map((r) => [r.origin.line, r.decision]),
      [
        [3, 'deny'],
        [4, 'ask'],
      ],
    );
  });
});

describe('policy/rules parseRules rejects with exact messages', () => {
  const where = '/home/me/.config/mcp-gate/config.json:12';
  const cases: [unknown, string][] = [
    [
      'mcp.*',
      `${where}: rules[0] "mcp.*": a rule is an object {"action": …, "decision": "allow" | "ask" | "deny", "project"?: folder | "*", "args"?: {…}}`,
    ],
    [
      null,
      `${where}: rules[0] null: a rule is an object {"action": …, "decision": "allow" | "ask" | "deny", "project"?: folder | "*", "args"?: {…}}`,
    ],
    [
      { action: 'mcp.*', decision: 'allow', why: 'x' },
      `${where}: rules[0] {"action":"mcp.*","decision":"allow","why":"x"}: unknown key "why"; a rule has only "action", "decision", "project" and "args"`,
    ],
    [{ decision: 'allow' }, `${where}: rules[0] {"decision":"allow"}: "action" is missing`],
    [{ action: 'mcp.*' }, `${where}: rules[0] {"action":"mcp.*"}: "decision" is missing`],
    [{ action: 7, decision: 'allow' }, `${where}: rules[0] {"action":7,"decision":"allow"}: "action" must be a string`],
    [
      { action: 'mcp.*', decision: 'Allow' },
      `${where}: rules[0] {"action":"mcp.*","decision":"Allow"}: "decision" must be "allow", "ask" or "deny", not "Allow"`,
    ],
    [
      { action: 'mcp.*', decision: 'permit' },
      `${where}: rules[0] {"action":"mcp.*","decision":"permit"}: "decision" must be "allow", "ask" or "deny", not "permit"`,
    ],
    [{ action: '', decision: 'deny' }, `${where}: rules[0] {"action":"","decision":"deny"}: invalid action: the action is empty`],
    [
      { action: 'mcp.*.tool.x', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.*.tool.x","decision":"allow"}: invalid action: "*" may only be the last segment`,
    ],
    [
      { action: 'mcp.notion.host.*.notion.com', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.*.notion.com","decision":"allow"}: invalid action: "*" may only be the last segment`,
    ],
    [
      { action: 'mcp.notion.host.com.notion*', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.com.notion*","decision":"allow"}: invalid action: "*" must be a whole segment`,
    ],
    [
      { action: 'mcp.notion..tool.x', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion..tool.x","decision":"allow"}: invalid action: it has an empty segment (a leading, trailing or doubled ".")`,
    ],
    [
      { action: 'mcp.notion.tool.x.', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.tool.x.","decision":"allow"}: invalid action: it has an empty segment (a leading, trailing or doubled ".")`,
    ],
    [
      { action: 'mcp', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp","decision":"allow"}: invalid action: it is incomplete: expected mcp.<server>.…`,
    ],
    [
      { action: 'mcp.notion', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion","decision":"allow"}: invalid action: it is incomplete: after the server name comes host, tool, network or private (mcp.notion.* covers all of them)`,
    ],
    [
      { action: 'mcp.notion.host', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host","decision":"allow"}: invalid action: it is incomplete: expected a host after "host"`,
    ],
    [
      { action: 'mcp.notion.tools.search', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.tools.search","decision":"allow"}: invalid action: unknown kind "tools" after the server name; expected host, tool, network or private`,
    ],
    [
      { action: 'mcp.time.network.2.0.18.198', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.time.network.2.0.18.198","decision":"allow"}: invalid action: the host part "2.0.18.198" spells an IP address; write it whole in brackets, not reversed, e.g. [198.51.100.7]`,
    ],
    [
      { action: 'mcp.time.network.[198.18.0.2].*', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.time.network.[198.18.0.2].*","decision":"allow"}: invalid action: "*" after an IP literal matches nothing; an IP rule names one address`,
    ],
    [
      { action: 'mcp.time.network.com.exa mple', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.time.network.com.exa mple","decision":"allow"}: invalid action: host "exa mple.com" is not valid: it contains " ", which a host name cannot hold`,
    ],
    [
      { action: 'MCP.notion.*', decision: 'allow' },
      `${where}: rules[0] {"action":"MCP.notion.*","decision":"allow"}: invalid action: unknown action kind "MCP"; kinds are lower case ("mcp")`,
    ],
    [
      { action: 'net.fetch.com.notion.*', decision: 'allow' },
      `${where}: rules[0] {"action":"net.fetch.com.notion.*","decision":"allow"}: invalid action: unknown action kind "net"; an action starts with "mcp." or "secret."`,
    ],
    [
      { action: 'secret.use.notion_token', decision: 'allow' },
      `${where}: rules[0] {"action":"secret.use.notion_token","decision":"allow"}: invalid action: the secret name "notion_token" is invalid: it must be upper-case letters, digits and "_", not starting with a digit`,
    ],
    [
      { action: 'secret.read.TOKEN', decision: 'allow' },
      `${where}: rules[0] {"action":"secret.read.TOKEN","decision":"allow"}: invalid action: unknown secret action "read"; expected secret.use.<NAME>`,
    ],
    [
      { action: 'secret.use.TOKEN.*', decision: 'allow' },
      `${where}: rules[0] {"action":"secret.use.TOKEN.*","decision":"allow"}: invalid action: nothing follows the secret name`,
    ],
    [
      { action: 'mcp.notion.host.7.100.51.198', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.7.100.51.198","decision":"allow"}: invalid action: the host part "7.100.51.198" spells an IP address; write it whole in brackets, not reversed, e.g. [198.51.100.7]`,
    ],
    [
      { action: 'mcp.notion.host.10.*', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.10.*","decision":"allow"}: invalid action: the host part "10" looks like an IP address; write one address whole in brackets, not reversed, e.g. [198.51.100.7]`,
    ],
    [
      { action: 'mcp.notion.host.[198.51.100.7].*', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.[198.51.100.7].*","decision":"allow"}: invalid action: "*" after an IP literal matches nothing; an IP rule names one address`,
    ],
    [
      { action: 'mcp.notion.host.[198.51.100.7', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.[198.51.100.7","decision":"allow"}: invalid action: a "[" without a matching "]"`,
    ],
    [
      { action: 'mcp.notion.host.com.[198.51.100.7]', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.com.[198.51.100.7]","decision":"allow"}: invalid action: an IP literal in brackets must be the whole host part`,
    ],
    [
      { action: 'mcp.notion.host.com.exa mple', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.notion.host.com.exa mple","decision":"allow"}: invalid action: host "exa mple.com" is not valid: it contains " ", which a host name cannot hold`,
    ],
    [
      { action: 'mcp.bad\u202eserver.*', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.bad\\u202Eserver.*","decision":"allow"}: invalid action: the server name "bad\\u202Eserver" is invalid: it contains whitespace other than single inner spaces, or a control or invisible formatting character`,
    ],
    [
      { action: 'mcp.[x].*', decision: 'allow' },
      `${where}: rules[0] {"action":"mcp.[x].*","decision":"allow"}: invalid action: the server name "[x]" is invalid: it contains a bracket`,
    ],
    [
      { action: 'mcp.*', decision: 'Deny', note: 1 },
      `${where}: rules[0] {"action":"mcp.*","decision":"Deny","note":1}: unknown key "note"; a rule has only "action", "decision", "project" and "args"; "decision" must be "allow", "ask" or "deny", not "Deny"`,
    ],
  ];
  for (const [raw, message] of cases) {
    it(`rejects ${JSON.stringify(raw)}`, () => {
      const { rules, errors } = parseRules([raw], FILE);
      assert.equal(rules.length, 0);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof RuleError);
      assert.equal(errors[0].message, message);
      assert.equal(errors[0].index, 0);
      assert.deepEqual(errors[0].origin, FILE);
    });
  }

  it('a list that is not an array is one error naming the origin', () => {
    const { rules, errors } = parseRules({ action: 'mcp.*', decision: 'allow' }, { file: 'mcpGate.rules' });
    assert.equal(rules.length, 0);
    assert.deepEqual(
      errors.map((e) => e.message),
      ['mcpGate.rules: rules must be a list, not object'],
    );
  });

  it('keeps valid rules and reports invalid ones in the same list, none dropped', () => {
    const raw = [
      { action: 'mcp.notion.*', decision: 'allow' },
      { action: 'mcp.*.x', decision: 'allow' },
      { action: 'mcp.time.network', decision: 'deny' },
      'junk',
    ];
    const { rules, errors } = parseRules(raw, { file: 'user.json' });
    assert.deepEqual(
      rules.map((r) => r.index),
      [0, 2],
    );
    assert.deepEqual(
      errors.map((e) => e.index),
      [1, 3],
    );
  });

  it('a "__proto__" key from JSON is an unknown key, not a prototype', () => {
    const raw = JSON.parse('[{"action":"mcp.*","decision":"allow","__proto__":{"x":1}}]');
    const { errors } = parseRules(raw, { file: 'u.json' });
    assert.equal(errors.length, 1);
    assert.match(errors[0].message, /unknown key "__proto__"/);
  });
});

describe('policy/rules action builders', () => {
  it('toolAction, networkAction, secretAction', () => {
    assert.equal(toolAction('notion', 'search'), 'mcp.notion.tool.search');
    assert.equal(toolAction('fs', 'files.read'), 'mcp.fs.tool.files.read');
    assert.equal(networkAction('time'), 'mcp.time.network');
    assert.equal(secretAction('NOTION_TOKEN'), 'secret.use.NOTION_TOKEN');
  });
  it('refuse names a rule could not name', () => {
    assert.throws(() => toolAction('notion', 'a*'), /tool name "a\*" cannot be named by a rule: it contains "\*"/);
    assert.throws(() => toolAction('notion', 'files..read'), /it has an empty dot-separated part/);
    assert.throws(() => toolAction('a.b', 'x'), /server name "a.b" cannot be named by a rule: it contains "."/);
    assert.throws(() => secretAction('lower'), /secret name "lower" is invalid/);
  });
});
