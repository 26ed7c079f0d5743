// Table-driven tests for policy evaluation: which rule decides, specificity and tie-breaking,
// host normalisation in checks, ask with and without a person, the discover/call two-step,
// and the text `explain` prints.

import * as assert from 'node:assert/strict';
import {
  AskAnswer,
  AskQuestion,
  decide,
  explain,
  mayCallTool,
  mayDiscover,
  mayReachNetwork,
  networkHostRules,
  privateRangesRefused,
  resolve,
  Verdict,
} from '../../../src/policy/decide';
import { hostAction } from '../../../src/policy/hostname';
import { Decision, parseRules, Rule } from '../../../src/policy/rules';

const ORIGIN = { file: '/home/me/.config/mcp-gate/config.json' };

function rules(...pairs: [string, Decision][]): Rule[] {
  const { rules: out, errors } = parseRules(
    pairs.map(([action, decision]) => ({ action, decision })),
    (i) => ({ ...ORIGIN, line: 10 + i }),
  );
  assert.deepEqual(
    errors.map((e) => e.message),
    [],
    'test rules must be valid',
  );
  return out;
}

interface Case {
  name: string;
  rules: [string, Decision][];
  /** what is checked */
  check:
    | { decide: string }
    | { host: string; server?: string }
    | { discover: string; server?: string }
    | { call: string; host?: string; server?: string };
  decision: Decision;
  /** index of the deciding rule, or null for none */
  by: number | null;
  /** expected action in the verdict */
  action?: string;
  /** expected permittedBy action (for deny/ask); null: none */
  permit?: string | null;
  reason?: RegExp;
}

const user = (name: string) => ({ name, scope: 'user' as const });

function run(c: Case, rs: Rule[]): Verdict {
  const ch = c.check;
  if ('decide' in ch) return decide(ch.decide, rs);
  if ('host' in ch && !('call' in ch)) return decide(hostAction(ch.server ?? 'notion', ch.host), rs);
  if ('discover' in ch) return mayDiscover(user(ch.server ?? 'notion'), ch.discover, rs);
  return mayCallTool(user(ch.server ?? 'notion'), ch.host, ch.call, rs);
}

const N = 'mcp.notion.host.';
const cases: Case[] = [
  // hosts, exact and wildcard
  {
    name: 'exact host rule allows that host',
    rules: [[`${N}com.notion.mcp`, 'allow']],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
    action: `${N}com.notion.mcp`,
  },
  {
    name: 'wildcard allows a subdomain',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'wildcard allows a deep subdomain',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { host: 'a.b.c.notion.com' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'wildcard needs one more label: the apex is not covered',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { host: 'notion.com' },
    decision: 'deny',
    by: null,
    permit: `${N}com.notion`,
  },
  {
    name: 'apex and subdomains need two rules',
    rules: [
      [`${N}com.notion.*`, 'allow'],
      [`${N}com.notion`, 'allow'],
    ],
    check: { host: 'notion.com' },
    decision: 'allow',
    by: 1,
  },
  {
    name: 'a name ending in the allowed one is not under it',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { host: 'evilnotion.com' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'an allowed name as a prefix of another domain is not covered',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { host: 'mcp.notion.com.evil.io' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'exact host rule does not cover a subdomain',
    rules: [[`${N}com.notion.mcp`, 'allow']],
    check: { host: 'x.mcp.notion.com' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'upper-case host is lower-cased',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { host: 'MCP.NOTION.COM' },
    decision: 'allow',
    by: 0,
    action: `${N}com.notion.mcp`,
  },
  {
    name: 'trailing dot is stripped',
    rules: [[`${N}com.notion.mcp`, 'allow']],
    check: { host: 'mcp.notion.com.' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'upper-case in a rule is lower-cased',
    rules: [[`${N}COM.Notion.*`, 'allow']],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'IDN host matches a punycode rule',
    rules: [[`${N}de.xn--bcher-kva.*`, 'allow']],
    check: { host: 'mcp.bücher.de' },
    decision: 'allow',
    by: 0,
    action: `${N}de.xn--bcher-kva.mcp`,
  },
  {
    name: 'IDN rule matches a punycode host',
    rules: [[`${N}de.bücher.*`, 'allow']],
    check: { host: 'mcp.xn--bcher-kva.de' },
    decision: 'allow',
    by: 0,
  },
  { name: 'upper-case IDN host', rules: [[`${N}de.bücher.*`, 'allow']], check: { host: 'MCP.BÜCHER.DE' }, decision: 'allow', by: 0 },
  {
    name: 'IDN look-alike is a different host',
    rules: [[`${N}de.bücher.*`, 'allow']],
    check: { host: 'mcp.bucher.de' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'IPv4 literal rule allows that address',
    rules: [[`${N}[198.51.100.7]`, 'allow']],
    check: { host: '198.51.100.7' },
    decision: 'allow',
    by: 0,
    action: `${N}[198.51.100.7]`,
  },
  {
    name: 'IPv4 literal rule does not allow another address',
    rules: [[`${N}[198.51.100.7]`, 'allow']],
    check: { host: '198.51.100.8' },
    decision: 'deny',
    by: null,
    permit: `${N}[198.51.100.8]`,
  },
  {
    name: 'name wildcard does not cover an IP address',
    rules: [[`${N}com.*`, 'allow']],
    check: { host: '198.51.100.7' },
    decision: 'deny',
    by: null,
  },
  { name: 'host.* covers an IP address', rules: [[`${N}*`, 'allow']], check: { host: '198.51.100.7' }, decision: 'allow', by: 0 },
  {
    name: 'IPv6 rule in long form matches the bracketed short form',
    rules: [[`${N}[2001:0DB8:0:0:0:0:0:1]`, 'allow']],
    check: { host: '[2001:db8::1]' },
    decision: 'allow',
    by: 0,
    action: `${N}[2001:db8::1]`,
  },
  { name: 'IPv6 host without brackets', rules: [[`${N}[2001:db8::1]`, 'allow']], check: { host: '2001:DB8::1' }, decision: 'allow', by: 0 },
  {
    name: 'IPv6 rule does not allow another address',
    rules: [[`${N}[2001:db8::1]`, 'allow']],
    check: { host: '2001:db8::2' },
    decision: 'deny',
    by: null,
  },
  {
    name: "another server's host rule does not apply",
    rules: [['mcp.github.host.com.notion.*', 'allow']],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'server names are case-sensitive',
    rules: [['mcp.Notion.host.com.notion.*', 'allow']],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'mcp.<server>.* covers its hosts',
    rules: [['mcp.notion.*', 'allow']],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
  },
  { name: 'mcp.* covers every server host', rules: [['mcp.*', 'allow']], check: { host: 'mcp.notion.com' }, decision: 'allow', by: 0 },
  { name: '* covers everything', rules: [['*', 'allow']], check: { host: 'mcp.notion.com' }, decision: 'allow', by: 0 },

  // specificity
  {
    name: 'a more specific deny beats a broader allow',
    rules: [
      [`${N}com.notion.*`, 'allow'],
      [`${N}com.notion.evil`, 'deny'],
    ],
    check: { host: 'evil.notion.com' },
    decision: 'deny',
    by: 1,
    permit: `${N}com.notion.evil`,
  },
  {
    name: 'the broader allow still covers other subdomains',
    rules: [
      [`${N}com.notion.*`, 'allow'],
      [`${N}com.notion.evil`, 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'a more specific allow beats a broader deny',
    rules: [
      ['mcp.notion.*', 'deny'],
      [`${N}com.notion.*`, 'allow'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 1,
  },
  {
    name: 'exact allow beats a wildcard deny of the same prefix',
    rules: [
      [`${N}com.notion.*`, 'deny'],
      [`${N}com.notion.mcp`, 'allow'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 1,
  },
  {
    name: 'a longer wildcard prefix beats a shorter one',
    rules: [
      [`${N}com.*`, 'deny'],
      [`${N}com.notion.*`, 'allow'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 1,
  },
  {
    name: 'a longer wildcard deny beats mcp.* allow',
    rules: [
      ['mcp.*', 'allow'],
      [`${N}*`, 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: 1,
  },
  {
    name: 'a longer wildcard ask beats * allow',
    rules: [
      ['*', 'allow'],
      ['mcp.notion.*', 'ask'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'ask',
    by: 1,
  },
  {
    name: 'order in the list does not matter for specificity',
    rules: [
      [`${N}com.notion.*`, 'allow'],
      ['mcp.notion.*', 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
  },

  // ties
  {
    name: 'tie: deny beats allow',
    rules: [
      ['mcp.notion.*', 'allow'],
      ['mcp.notion.*', 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: 1,
  },
  {
    name: 'tie: deny beats allow whatever the order',
    rules: [
      ['mcp.notion.*', 'deny'],
      ['mcp.notion.*', 'allow'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: 0,
  },
  {
    name: 'tie: deny beats ask',
    rules: [
      ['mcp.notion.*', 'ask'],
      ['mcp.notion.*', 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: 1,
  },
  {
    name: 'tie: ask beats allow',
    rules: [
      ['mcp.notion.*', 'allow'],
      ['mcp.notion.*', 'ask'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'ask',
    by: 1,
  },
  {
    name: 'tie between exact rules: deny beats allow',
    rules: [
      [`${N}com.notion.mcp`, 'allow'],
      [`${N}com.notion.mcp`, 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: 1,
    reason: /changing that rule to/,
  },
  {
    name: 'tie between a rule written in two forms',
    rules: [
      [`${N}COM.notion.*`, 'allow'],
      [`${N}com.NOTION.*`, 'deny'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: 1,
  },

  // no rule
  {
    name: 'no rules at all: deny',
    rules: [],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
    permit: `${N}com.notion.mcp`,
    reason: /no rule matches it/,
  },
  {
    name: 'only unrelated rules: deny',
    rules: [
      ['secret.use.*', 'allow'],
      ['mcp.github.*', 'allow'],
    ],
    check: { host: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
  },

  // tools
  {
    name: 'exact tool rule allows the tool',
    rules: [['mcp.notion.tool.search', 'allow']],
    check: { decide: 'mcp.notion.tool.search' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'tool.* allows any tool',
    rules: [['mcp.notion.tool.*', 'allow']],
    check: { decide: 'mcp.notion.tool.create_page' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'a tool rule does not allow another tool',
    rules: [['mcp.notion.tool.search', 'allow']],
    check: { decide: 'mcp.notion.tool.delete' },
    decision: 'deny',
    by: null,
    permit: 'mcp.notion.tool.delete',
  },
  {
    name: 'tool names are case-sensitive',
    rules: [['mcp.notion.tool.Search', 'allow']],
    check: { decide: 'mcp.notion.tool.search' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'a dotted tool name is covered by its prefix wildcard',
    rules: [['mcp.fs.tool.files.*', 'allow']],
    check: { decide: 'mcp.fs.tool.files.read' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'a prefix wildcard does not cover the bare prefix tool',
    rules: [['mcp.fs.tool.files.*', 'allow']],
    check: { decide: 'mcp.fs.tool.files' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'a specific tool deny beats tool.* allow',
    rules: [
      ['mcp.notion.tool.*', 'allow'],
      ['mcp.notion.tool.delete', 'deny'],
    ],
    check: { decide: 'mcp.notion.tool.delete' },
    decision: 'deny',
    by: 1,
  },
  {
    name: 'a host rule does not allow a tool',
    rules: [['mcp.notion.host.*', 'allow']],
    check: { decide: 'mcp.notion.tool.search' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'a tool named like a keyword',
    rules: [['mcp.notion.tool.host', 'allow']],
    check: { decide: 'mcp.notion.tool.host' },
    decision: 'allow',
    by: 0,
  },

  // network and secrets
  {
    name: 'network rule for a local server',
    rules: [['mcp.time.network', 'allow']],
    check: { decide: 'mcp.time.network' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'mcp.<server>.* covers network',
    rules: [['mcp.time.*', 'deny']],
    check: { decide: 'mcp.time.network' },
    decision: 'deny',
    by: 0,
  },
  {
    name: 'a host wildcard does not cover network',
    rules: [['mcp.time.host.*', 'allow']],
    check: { decide: 'mcp.time.network' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'secret.use.<NAME> allows that secret',
    rules: [['secret.use.NOTION_TOKEN', 'allow']],
    check: { decide: 'secret.use.NOTION_TOKEN' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'a secret rule does not cover another secret',
    rules: [['secret.use.NOTION_TOKEN', 'allow']],
    check: { decide: 'secret.use.GITHUB_TOKEN' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'secret.use.<NAME> beats secret.* deny',
    rules: [
      ['secret.*', 'deny'],
      ['secret.use.KEY', 'allow'],
    ],
    check: { decide: 'secret.use.KEY' },
    decision: 'allow',
    by: 1,
  },
  { name: 'mcp.* does not cover secrets', rules: [['mcp.*', 'allow']], check: { decide: 'secret.use.KEY' }, decision: 'deny', by: null },

  // actions given to decide directly
  {
    name: 'an action with an upper-case host is normalised',
    rules: [[`${N}com.notion.mcp`, 'allow']],
    check: { decide: `${N}COM.NOTION.MCP` },
    decision: 'allow',
    by: 0,
    action: `${N}com.notion.mcp`,
  },
  {
    name: 'a wildcard is not an action',
    rules: [['*', 'allow']],
    check: { decide: 'mcp.notion.tool.*' },
    decision: 'deny',
    by: null,
    permit: null,
    reason: /not a valid action \(an action names one thing; "\*" belongs in rules\)/,
  },
  {
    name: 'an empty action is denied',
    rules: [['*', 'allow']],
    check: { decide: '' },
    decision: 'deny',
    by: null,
    permit: null,
    reason: /not a valid action \(the action is empty\)/,
  },
  {
    name: 'an incomplete action is denied even under *',
    rules: [['*', 'allow']],
    check: { decide: 'mcp.notion' },
    decision: 'deny',
    by: null,
    permit: null,
  },
  {
    name: 'an unreversed IP in an action is denied',
    rules: [['*', 'allow']],
    check: { decide: `${N}7.100.51.198` },
    decision: 'deny',
    by: null,
    permit: null,
    reason: /spells an IP address/,
  },

  // discover and call
  {
    name: 'discover needs only the host rule',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { discover: 'mcp.notion.com' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'discover without a host rule is denied',
    rules: [['mcp.notion.tool.*', 'allow']],
    check: { discover: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
    permit: `${N}com.notion.mcp`,
  },
  {
    name: 'discover of an invalid host is denied, saying why',
    rules: [['*', 'allow']],
    check: { discover: 'notion.com:443' },
    decision: 'deny',
    by: null,
    permit: null,
    reason: /a port does not belong here/,
  },
  {
    name: 'host rule alone does not allow a call',
    rules: [[`${N}com.notion.*`, 'allow']],
    check: { call: 'search', host: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
    action: 'mcp.notion.tool.search',
    permit: 'mcp.notion.tool.search',
  },
  {
    name: 'a tool rule without a host rule does not allow a remote call',
    rules: [['mcp.notion.tool.search', 'allow']],
    check: { call: 'search', host: 'mcp.notion.com' },
    decision: 'deny',
    by: null,
    action: `${N}com.notion.mcp`,
    permit: `${N}com.notion.mcp`,
  },
  {
    name: 'host rule and tool rule together allow a call',
    rules: [
      [`${N}com.notion.*`, 'allow'],
      ['mcp.notion.tool.search', 'allow'],
    ],
    check: { call: 'search', host: 'mcp.notion.com' },
    decision: 'allow',
    by: 1,
    action: 'mcp.notion.tool.search',
  },
  {
    name: 'a local server needs only the tool rule',
    rules: [['mcp.time.tool.now', 'allow']],
    check: { call: 'now', server: 'time' },
    decision: 'allow',
    by: 0,
  },
  {
    name: 'a local server without a tool rule is denied',
    rules: [['mcp.time.network', 'allow']],
    check: { call: 'now', server: 'time' },
    decision: 'deny',
    by: null,
  },
  {
    name: 'a host deny decides a call before a tool ask',
    rules: [
      [`${N}*`, 'deny'],
      ['mcp.notion.tool.*', 'ask'],
    ],
    check: { call: 'search', host: 'mcp.notion.com' },
    decision: 'deny',
    by: 0,
  },
  {
    name: 'a tool deny decides a call over a host ask',
    rules: [
      [`${N}*`, 'ask'],
      ['mcp.notion.tool.*', 'deny'],
    ],
    check: { call: 'search', host: 'mcp.notion.com' },
    decision: 'deny',
    by: 1,
  },
  {
    name: 'a server name with a dot cannot be allowed',
    rules: [['*', 'allow']],
    check: { call: 'x', server: 'my.server' },
    decision: 'deny',
    by: null,
    reason: /contains "\."/,
  },
];

describe('policy/decide table', () => {
  it('has at least 60 cases', () => assert.ok(cases.length >= 60, `only ${cases.length}`));
  for (const c of cases) {
    it(c.name, () => {
      const rs = rules(...c.rules);
      const v = run(c, rs);
      assert.equal(v.decision, c.decision, v.reason);
      if (c.by === null) assert.equal(v.rule, undefined);
      else {
        assert.equal(v.rule, rs[c.by], `deciding rule: ${JSON.stringify(v.rule)}`);
        assert.deepEqual(v.rule?.origin, { ...ORIGIN, line: 10 + c.by });
      }
      if (c.action !== undefined) assert.equal(v.action, c.action);
      if (c.decision === 'allow') assert.equal(v.permittedBy, undefined);
      if (c.permit === null) assert.equal(v.permittedBy, undefined);
      else if (c.permit !== undefined) assert.deepEqual(v.permittedBy, { action: c.permit, decision: 'allow' });
      else if (c.decision !== 'allow' && v.action.startsWith('mcp.') && c.by !== null) {
        assert.deepEqual(v.permittedBy, { action: v.action, decision: 'allow' });
      }
      if (c.reason) assert.match(v.reason, c.reason);
      if (v.rule) assert.ok(v.reason.includes(ORIGIN.file), 'reason names the file of the deciding rule');
    });
  }
});

describe('policy/decide permittedBy really permits', () => {
  for (const c of cases.filter((x) => x.decision !== 'allow' && x.permit !== null && 'decide' in x.check)) {
    it(`adding permittedBy flips: ${c.name}`, () => {
      const rs = rules(...c.rules);
      const v = run(c, rs);
      if (!v.permittedBy) return assert.fail('expected permittedBy');
      const fixed = v.rule && v.rule.action === v.action ? rs.filter((r) => r.action !== v.action) : rs;
      const more = rules(...fixed.map((r): [string, Decision] => [r.action, r.decision]), [v.permittedBy.action, 'allow']);
      assert.equal(decide(v.action, more).decision, 'allow');
    });
  }
});

function asker(answer: AskAnswer | Error, seen: AskQuestion[] = []) {
  return async (q: AskQuestion): Promise<AskAnswer> => {
    seen.push(q);
    if (answer instanceof Error) throw answer;
    return answer;
  };
}

describe('policy/decide resolve', () => {
  const rs = rules(['mcp.notion.*', 'ask']);
  const action = hostAction('notion', 'mcp.notion.com');

  it('ask without an asker is a refusal naming the rule that would permit it', async () => {
    const r = await resolve(decide(action, rs));
    assert.equal(r.decision, 'deny');
    assert.equal(
      r.reason,
      'mcp.notion.host.com.notion.mcp is refused (rule {"action":"mcp.notion.*","decision":"ask"} (rules[0] in ' +
        '/home/me/.config/mcp-gate/config.json:10) says ask): nobody can answer here; the rule ' +
        '{"action":"mcp.notion.host.com.notion.mcp","decision":"allow"} would permit it.',
    );
    assert.deepEqual(r.permittedBy, { action, decision: 'allow' });
  });

  it('ask with "once" allows without a rule to write', async () => {
    const seen: AskQuestion[] = [];
    const r = await resolve(decide(action, rs), asker('once', seen));
    assert.equal(r.decision, 'allow');
    assert.equal(r.answer, 'once');
    assert.equal(r.remember, undefined);
    assert.equal(seen.length, 1);
    assert.equal(seen[0].action, action);
    assert.equal(seen[0].rule, rs[0]);
    assert.deepEqual(seen[0].permittedBy, { action, decision: 'allow' });
  });

  it('ask with "always" allows and returns the rule to write', async () => {
    const r = await resolve(decide(action, rs), asker('always'));
    assert.equal(r.decision, 'allow');
    assert.deepEqual(r.remember, [{ action, decision: 'allow' }]);
    // the remembered rule, once written, decides without asking
    const after = rules(['mcp.notion.*', 'ask'], [r.remember![0].action, 'allow']);
    assert.equal(decide(action, after).decision, 'allow');
  });

  it('ask answered "deny" is a refusal', async () => {
    const r = await resolve(decide(action, rs), asker('deny'));
    assert.equal(r.decision, 'deny');
    assert.match(r.reason, /refused by the person asked/);
  });

  it('an asker that fails is a refusal', async () => {
    const r = await resolve(decide(action, rs), asker(new Error('window closed')));
    assert.equal(r.decision, 'deny');
    assert.match(r.reason, /could not be answered \(window closed\)/);
  });

  it('an asker that answers something else is a refusal', async () => {
    const r = await resolve(decide(action, rs), async () => 'yes' as unknown as AskAnswer);
    assert.equal(r.decision, 'deny');
    assert.match(r.reason, /the answer "yes" is not once, always or deny/);
  });

  it('allow and deny are not asked', async () => {
    const seen: AskQuestion[] = [];
    assert.equal((await resolve(decide(action, rules(['mcp.*', 'allow'])), asker('deny', seen))).decision, 'allow');
    assert.equal((await resolve(decide(action, rules(['mcp.*', 'deny'])), asker('once', seen))).decision, 'deny');
    assert.equal(seen.length, 0);
  });

  it('a call with host ask and tool ask asks both, in order', async () => {
    const seen: AskQuestion[] = [];
    const both = rules([`${N}*`, 'ask'], ['mcp.notion.tool.*', 'ask']);
    const r = await resolve(mayCallTool(user('notion'), 'mcp.notion.com', 'search', both), asker('always', seen));
    assert.equal(r.decision, 'allow');
    assert.deepEqual(
      seen.map((q) => q.action),
      [action, 'mcp.notion.tool.search'],
    );
    assert.deepEqual(
      r.remember?.map((x) => x.action),
      [action, 'mcp.notion.tool.search'],
    );
  });

  it('a call whose host is refused by the person is not asked about the tool', async () => {
    const seen: AskQuestion[] = [];
    const both = rules([`${N}*`, 'ask'], ['mcp.notion.tool.*', 'ask']);
    const r = await resolve(mayCallTool(user('notion'), 'mcp.notion.com', 'search', both), asker('deny', seen));
    assert.equal(r.decision, 'deny');
    assert.equal(seen.length, 1);
    assert.equal(r.action, action);
  });

  it('a call with host deny asks nobody', async () => {
    const seen: AskQuestion[] = [];
    const v = mayCallTool(user('notion'), 'mcp.notion.com', 'search', rules([`${N}*`, 'deny'], ['mcp.notion.tool.*', 'ask']));
    const r = await resolve(v, asker('once', seen));
    assert.equal(r.decision, 'deny');
    assert.equal(seen.length, 0);
  });

  it('a call with an ask and no asker is refused', async () => {
    const v = mayCallTool(user('notion'), 'mcp.notion.com', 'search', rules([`${N}*`, 'allow'], ['mcp.notion.tool.search', 'ask']));
    const r = await resolve(v);
    assert.equal(r.decision, 'deny');
    assert.match(r.reason, /nobody can answer here; the rule \{"action":"mcp.notion.tool.search","decision":"allow"\} would permit it/);
  });
});

describe('policy/decide robustness', () => {
  it('a hand-made invalid rule makes every decision deny, saying which rule', () => {
    const bad = { action: 'mcp.*.x', decision: 'allow', origin: { file: 'hand.json' }, index: 4 } as Rule;
    const v = decide('mcp.notion.tool.x', [...rules(['*', 'allow']), bad]);
    assert.equal(v.decision, 'deny');
    assert.match(v.reason, /\(rules\[4\] in hand\.json\) is not valid \("\*" may only be the last segment\)/);
  });
  it('a hand-made rule with an unknown decision is refused too', () => {
    const bad = { action: '*', decision: 'yes', origin: { file: 'hand.json' }, index: 0 } as unknown as Rule;
    assert.equal(decide('mcp.notion.tool.x', [bad]).decision, 'deny');
  });
  it('decide does not throw for non-string input', () => {
    assert.equal(decide(undefined as unknown as string, []).decision, 'deny');
    assert.equal(decide(42 as unknown as string, rules(['*', 'allow'])).decision, 'deny');
  });
});

describe('policy/decide explain', () => {
  it('prints decision, deciding rule with origin, the rule that would permit it and the losers', () => {
    const rs = rules(['mcp.*', 'allow'], ['mcp.notion.host.COM.notion.*', 'deny']);
    assert.deepEqual(explain('mcp.notion.host.com.notion.mcp', rs), [
      'action: mcp.notion.host.com.notion.mcp',
      'decision: deny',
      'rule: {"action":"mcp.notion.host.com.notion.*","decision":"deny"} (written "mcp.notion.host.COM.notion.*") from /home/me/.config/mcp-gate/config.json:11 (rules[1])',
      'would permit: {"action":"mcp.notion.host.com.notion.mcp","decision":"allow"}',
      'also matches: {"action":"mcp.*","decision":"allow"} from /home/me/.config/mcp-gate/config.json:10 (rules[0]), not deciding',
      'reason: mcp.notion.host.com.notion.mcp is denied by rule {"action":"mcp.notion.host.com.notion.*","decision":"deny"} ' +
        '(rules[1] in /home/me/.config/mcp-gate/config.json:11); the rule {"action":"mcp.notion.host.com.notion.mcp","decision":"allow"} would permit it.',
    ]);
  });
  it('says when no rule matches', () => {
    const lines = explain('mcp.notion.tool.search', []);
    assert.deepEqual(lines.slice(0, 4), [
      'action: mcp.notion.tool.search',
      'decision: deny',
      'rule: none',
      'would permit: {"action":"mcp.notion.tool.search","decision":"allow"}',
    ]);
  });
  it('explains an ask', () => {
    const lines = explain('secret.use.KEY', rules(['secret.use.*', 'ask']));
    assert.equal(lines[1], 'decision: ask');
    assert.equal(lines[3], 'ask: a prompt where a person can answer; a refusal in the CLI or headless');
  });
  it('explains an allow without a "would permit" line', () => {
    const lines = explain('mcp.time.network', rules(['mcp.time.network', 'allow']));
    assert.equal(lines[1], 'decision: allow');
    assert.ok(!lines.some((l) => l.startsWith('would permit')));
  });
  it('explains an invalid action', () => {
    const lines = explain('mcp.notion.*', rules(['*', 'allow']));
    assert.deepEqual(lines.slice(0, 3), ['action: mcp.notion.*', 'decision: deny', 'rule: none']);
    assert.match(lines[lines.length - 1], /not a valid action/);
  });
});

describe('policy/decide private ranges (mcp.<server>.private)', () => {
  const user = { name: 'corp', scope: 'user' } as const;
  const parse = (raw: unknown[]) => parseRules(raw, ORIGIN);
  it('no rule: private ranges stay reachable; a deny for exactly the action refuses them, naming the rule', () => {
    assert.equal(privateRangesRefused(user, parse([]).rules), undefined);
    const r = privateRangesRefused(user, parse([{ action: 'mcp.corp.private', decision: 'deny' }]).rules);
    assert.equal(r, `mcp.corp.private is denied by rule {"action":"mcp.corp.private","decision":"deny"} (rules[0] in ${ORIGIN.file})`);
    assert.equal(privateRangesRefused(user, parse([{ action: 'mcp.corp.private', decision: 'allow' }]).rules), undefined);
    assert.equal(
      privateRangesRefused({ name: 'other', scope: 'user' }, parse([{ action: 'mcp.corp.private', decision: 'deny' }]).rules),
      undefined,
      'another server',
    );
  });
  it('a broad deny (mcp.<server>.*, *) does not change address checks', () => {
    assert.equal(
      privateRangesRefused(
        user,
        parse([
          { action: '*', decision: 'deny' },
          { action: 'mcp.corp.*', decision: 'deny' },
        ]).rules,
      ),
      undefined,
    );
  });
  it('a repository server: only a rule for its project refuses', () => {
    const repo = { name: 'corp', scope: 'repository', project: '/work/p' } as const;
    assert.equal(
      privateRangesRefused(repo, parse([{ action: 'mcp.corp.private', decision: 'deny' }]).rules),
      undefined,
      'a user-scope rule is not for a repository server',
    );
    assert.match(
      privateRangesRefused(repo, parse([{ action: 'mcp.corp.private', decision: 'deny', project: '*' }]).rules) ?? '',
      /mcp\.corp\.private is denied/,
    );
  });
  it('ask is not a decision for it: the rule is invalid with a reason', () => {
    const p = parse([
      { action: 'mcp.corp.private', decision: 'ask' },
      { action: 'mcp.corp.private.x', decision: 'deny' },
    ]);
    assert.equal(p.rules.length, 0);
    assert.match(p.errors[0].message, /mcp\.corp\.private takes "allow" or "deny": an address check cannot wait for an answer/);
    assert.match(p.errors[1].message, /nothing follows "private"/);
  });
});

describe('policy/decide mayReachNetwork: a contained server reaching one host through its door', () => {
  const who = { name: 'fetch', scope: 'user' } as const;
  const repo = { name: 'fetch', scope: 'repository', project: '/work/p' } as const;
  const reach = (host: string, ...pairs: [string, Decision][]) => mayReachNetwork(who, host, rules(...pairs));

  it('a rule naming the host decides and makes private addresses reachable; the bare rule allows public hosts only', () => {
    const named = reach('api.example.com', ['mcp.fetch.network.com.example.api', 'allow']);
    assert.equal(named.verdict.decision, 'allow');
    assert.deepEqual([named.byHostRule, named.named], [true, true]);
    const bare = reach('api.example.com', ['mcp.fetch.network', 'allow']);
    assert.equal(bare.verdict.decision, 'allow');
    assert.deepEqual([bare.byHostRule, bare.named], [false, false]);
    assert.deepEqual(bare.permit, { action: 'mcp.fetch.network.com.example.api', decision: 'allow' });
    const domain = reach('a.example.com', ['mcp.fetch.network.com.example.*', 'allow']);
    assert.deepEqual([domain.verdict.decision, domain.named], ['allow', true]);
    const any = reach('a.example.com', ['mcp.fetch.network.*', 'allow']);
    assert.deepEqual([any.verdict.decision, any.byHostRule, any.named], ['allow', true, false], 'a wildcard over every host names none');
    const literal = reach('198.18.0.2', ['mcp.fetch.network.[198.18.0.2]', 'allow']);
    assert.deepEqual([literal.verdict.decision, literal.named], ['allow', true]);
  });

  it('a host rule beats the bare rule either way; a broader mcp.<server>.* leaves it to the bare rule', () => {
    assert.equal(
      reach('evil.example.com', ['mcp.fetch.network', 'allow'], ['mcp.fetch.network.com.example.evil', 'deny']).verdict.decision,
      'deny',
    );
    assert.equal(
      reach('api.example.com', ['mcp.fetch.network', 'deny'], ['mcp.fetch.network.com.example.api', 'allow']).verdict.decision,
      'allow',
    );
    const broad = reach('api.example.com', ['mcp.fetch.*', 'allow']);
    assert.deepEqual([broad.verdict.decision, broad.byHostRule], ['allow', false]);
    assert.equal(reach('api.example.com', ['mcp.fetch.*', 'allow'], ['mcp.fetch.network', 'deny']).verdict.decision, 'deny');
  });

  it('no rule: refused, naming this host and the bare rule; an invalid host is refused with why', () => {
    const none = reach('api.example.com');
    assert.equal(none.verdict.decision, 'deny');
    assert.match(
      none.verdict.reason,
      /^mcp\.fetch\.network\.com\.example\.api is refused: no rule names this host, and mcp\.fetch\.network is denied: no rule matches it/,
    );
    const bad = reach('exa mple.com', ['mcp.fetch.network', 'allow']);
    assert.equal(bad.verdict.decision, 'deny');
    assert.match(bad.verdict.reason, /may not reach "exa mple\.com"/);
  });

  it("the rules that open a door by host: allow and ask for this server, not deny, not another server's, not a repository server's without its project", () => {
    const list = rules(
      ['mcp.fetch.network.com.example', 'allow'],
      ['mcp.fetch.network.org.example', 'ask'],
      ['mcp.fetch.network.net.example', 'deny'],
      ['mcp.other.network.com.example', 'allow'],
      ['mcp.fetch.network', 'allow'],
      ['mcp.fetch.network.*', 'allow'],
    );
    assert.deepEqual(
      networkHostRules(who, list).map((r) => r.action),
      ['mcp.fetch.network.com.example', 'mcp.fetch.network.org.example', 'mcp.fetch.network.*'],
    );
    assert.deepEqual(networkHostRules(repo, list), []);
  });
});
