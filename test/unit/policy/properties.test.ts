// Property tests (fast-check) for the policy engine: decide never throws and never allows
// without an allow rule, rule order does not matter, an exact deny cannot be overridden,
// parsing drops nothing, host reversal is stable, and masked text never holds the value.

import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { decide, resolve } from '../../../src/policy/decide';
import { HostNameError, reverseHost } from '../../../src/policy/hostname';
import { Masker } from '../../../src/policy/mask';
import { Decision, parseRules, Rule } from '../../../src/policy/rules';

const server = fc.constantFrom('notion', 'github', 'time', 'a');
const label = fc.constantFrom('com', 'notion', 'mcp', 'io', 'api', 'xn--bcher-kva');
const hostLabels = fc.array(label, { minLength: 1, maxLength: 4 });
const ip = fc.constantFrom('[198.51.100.7]', '[2001:db8::1]', '[10.0.0.1]');
const tool = fc.array(fc.constantFrom('search', 'read', 'files', 'x'), { minLength: 1, maxLength: 2 }).map((p) => p.join('.'));
const secretName = fc.constantFrom('TOKEN', 'NOTION_TOKEN', 'KEY');

/** Concrete, valid actions over a small vocabulary, so that rules often match. */
const action: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(server, hostLabels).map(([s, h]) => `mcp.${s}.host.${h.join('.')}`),
  fc.tuple(server, ip).map(([s, i]) => `mcp.${s}.host.${i}`),
  fc.tuple(server, tool).map(([s, t]) => `mcp.${s}.tool.${t}`),
  server.map((s) => `mcp.${s}.network`),
  secretName.map((n) => `secret.use.${n}`),
);

/** A rule pattern: a concrete action, or a prefix of one followed by '*'. */
const pattern: fc.Arbitrary<string> = fc.oneof(
  action,
  fc.tuple(action, fc.nat()).map(([a, n]) => {
    const segs = a.startsWith('mcp.') && a.includes('.host.[') ? a.split('.host.')[0].split('.').concat('host') : a.split('.');
    const keep = n % segs.length;
    return [...segs.slice(0, keep), '*'].join('.');
  }),
);

const decision = fc.constantFrom<Decision>('allow', 'ask', 'deny');

function parse(raw: { action: string; decision: Decision }[]): Rule[] {
  const { rules, errors } = parseRules(raw, { file: 'prop.json' });
  assert.deepEqual(
    errors.map((e) => e.message),
    [],
  );
  return rules;
}

const ruleList = (decisions: fc.Arbitrary<Decision>) => fc.array(fc.record({ action: pattern, decision: decisions }), { maxLength: 12 });

describe('policy properties', () => {
  it('generated rules are all valid', () => {
    fc.assert(fc.property(ruleList(decision), (raw) => void parse(raw)));
  });

  it('decide never throws on any string, and always answers allow, ask or deny', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), action), ruleList(decision), (a, raw) => {
        const v = decide(a, parse(raw));
        assert.ok(['allow', 'ask', 'deny'].includes(v.decision));
        assert.equal(typeof v.reason, 'string');
      }),
    );
  });

  it('without an allow rule nothing is ever allowed, with or without resolving ask', async () => {
    await fc.assert(
      fc.asyncProperty(action, ruleList(fc.constantFrom<Decision>('ask', 'deny')), async (a, raw) => {
        const v = decide(a, parse(raw));
        assert.notEqual(v.decision, 'allow');
        assert.equal((await resolve(v)).decision, 'deny');
      }),
    );
  });

  it('an allow verdict always names an allow rule that matches', () => {
    fc.assert(
      fc.property(action, ruleList(decision), (a, raw) => {
        const rules = parse(raw);
        const v = decide(a, rules);
        if (v.decision === 'allow') {
          assert.ok(v.rule && rules.includes(v.rule) && v.rule.decision === 'allow');
        }
      }),
    );
  });

  it('the order of the rules does not change the decision', () => {
    fc.assert(
      fc.property(action, ruleList(decision), fc.nat(), (a, raw, seed) => {
        const shuffled = [...raw];
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (seed + i * 7919) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
        }
        assert.equal(decide(a, parse(raw)).decision, decide(a, parse(shuffled)).decision);
      }),
    );
  });

  it('an exact deny rule for an action cannot be overridden by any other rule', () => {
    fc.assert(
      fc.property(action, ruleList(decision), (a, raw) => {
        assert.equal(decide(a, parse([...raw, { action: a, decision: 'deny' }])).decision, 'deny');
      }),
    );
  });

  it('adding the permittedBy rule to rules without an exact rule turns deny into allow', () => {
    fc.assert(
      fc.property(action, ruleList(decision), (a, raw) => {
        const wild = raw.filter((r) => r.action.endsWith('*'));
        const v = decide(a, parse(wild));
        if (v.decision !== 'allow') {
          assert.ok(v.permittedBy);
          assert.equal(decide(a, parse([...wild, { ...v.permittedBy, decision: 'allow' }])).decision, 'allow');
        }
      }),
    );
  });

  it('parseRules never drops an item', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 10 }), (raw) => {
        const { rules, errors } = parseRules(raw, { file: 'x' });
        assert.equal(rules.length + errors.length, raw.length);
      }),
    );
  });

  it('reverseHost either throws a HostNameError or returns a stable normal form', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.domain(), fc.ipV4(), fc.ipV6()), (h) => {
        let r: string;
        try {
          r = reverseHost(h);
        } catch (e) {
          assert.ok(e instanceof HostNameError, String(e));
          return;
        }
        const back = r.startsWith('[') ? r : r.split('.').reverse().join('.');
        assert.equal(reverseHost(back), r);
        assert.equal(r, r.toLowerCase());
      }),
    );
  });

  it('masked text never holds the value, whatever surrounds it', () => {
    const value = fc.string({ unit: 'binary', minLength: 4, maxLength: 30 }).filter((v) => !v.includes('*'));
    fc.assert(
      fc.property(value, fc.string(), fc.string(), (v, before, after) => {
        const m = new Masker();
        m.add(v);
        for (const form of [v, encodeURIComponent(v), Buffer.from(v).toString('base64'), Buffer.from(v).toString('base64url')]) {
          assert.ok(!m.mask(before + form + after).includes(v));
        }
      }),
    );
  });
});
