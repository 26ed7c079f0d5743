// Argument rules (issue 27 item 4): an allow rule's "args" parsed with the exact error a user gets for each wrong
// shape, and checked at call time the way an attacker would try to slip past them — `..`, a symbolic link out of the
// workspace, `~`, a relative path, a file: URL, a URL whose host parsers read differently, a look-alike subdomain, an
// array hiding one bad element, a missing argument — and what `explain` says about them.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkCallArguments, explain, mayCallTool } from '../../../src/policy/decide';
import { parseRules } from '../../../src/policy/rules';
import type { ServerIdentity } from '../../../src/policy/identity';
import { cleanupTemp, tempDir } from '../helpers';

const FILE = { file: '/home/me/.config/mcp-gate/config.json', line: 3 };
const parse1 = (raw: Record<string, unknown>) => parseRules([{ action: 'mcp.fs.tool.read', decision: 'allow', ...raw }], FILE);
const errorOf = (raw: Record<string, unknown>) => {
  const { errors } = parse1(raw);
  assert.equal(errors.length, 1, `expected one error for ${JSON.stringify(raw)}`);
  return errors[0].message;
};

describe('policy/args: a rule\'s "args" is validated with a message that says what is wrong', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ args: [] }, /"args" must be an object/],
    [{ args: {} }, /"args" is empty/],
    [{ args: { path: 'x' } }, /"args" "path" must be an object with "under", "hosts" or "oneOf"/],
    [{ args: { path: {} } }, /"args" "path" must have exactly one of "under", "hosts" or "oneOf"/],
    [{ args: { path: { under: '/a', hosts: ['a.com'] } } }, /exactly one of .*, not under and hosts/],
    [
      { args: { path: { under: 'relative/dir' } } },
      /"under" "relative\/dir" must be an absolute folder or start with \$\{workspaceFolder\}/,
    ],
    [{ args: { path: { under: '${workspaceFolder}x' } } }, /must be \$\{workspaceFolder\} or \$\{workspaceFolder\}\/<folder>/],
    [{ args: { path: { under: [] } } }, /"under" must be a folder or a list of 1 to 256 folders/],
    [{ args: { url: { hosts: ['exa mple.com'] } } }, /"hosts" "exa mple\.com" is not a host/],
    [{ args: { url: { hosts: ['api.*.com'] } } }, /may hold "\*" only as a leading "\*\."/],
    [{ args: { url: { hosts: ['*.10.0.0.1'] } } }, /before an IP address, which matches nothing/],
    [{ args: { mode: { oneOf: [] } } }, /"oneOf" must be a list of 1 to 256 values/],
    [{ args: { mode: { oneOf: [{ a: 1 }] } } }, /"oneOf" holds .*; its values are strings, numbers, true, false or null/],
    [{ args: { mode: { oneOf: ['a'], optional: 'yes' } } }, /"optional" must be true or false/],
    [{ args: { mode: { oneOf: ['a'], pattern: '.*' } } }, /unknown key "pattern"/],
    [{ decision: 'deny', args: { mode: { oneOf: ['a'] } } }, /"args" belongs on an "allow" rule .* not on "deny"/],
    [{ decision: 'ask', args: { mode: { oneOf: ['a'] } } }, /not on "ask"/],
    [
      { action: 'mcp.fs.host.com.example', args: { mode: { oneOf: ['a'] } } },
      /belongs on a rule for mcp\.<server>\.tool\.<tool> .* not on mcp\.fs\.host\.com\.example/,
    ],
    [{ action: 'mcp.fs.*', args: { mode: { oneOf: ['a'] } } }, /not on mcp\.fs\.\*/],
  ];
  for (const [raw, re] of cases) {
    it(`${JSON.stringify(raw)}`, () => {
      const msg = errorOf(raw);
      assert.match(msg, re);
      assert.match(msg, /config\.json:3/, 'names the file and line');
    });
  }
  it("accepts a tool wildcard and keeps the constraint in the rule's text", () => {
    const { rules, errors } = parseRules(
      [{ action: 'mcp.fs.tool.*', decision: 'allow', args: { path: { under: '${workspaceFolder}', optional: true } } }],
      FILE,
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(JSON.parse(JSON.stringify(rules[0].args)), { path: { under: ['${workspaceFolder}'], optional: true } });
  });
});

describe('policy/args: call-time checks', () => {
  let ws: string;
  let home: string;
  before(() => {
    const base = fs.realpathSync(tempDir());
    ws = path.join(base, 'ws');
    home = path.join(base, 'home');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(ws, 'src', 'a.txt'), 'a');
    fs.writeFileSync(path.join(home, 'secret'), 's');
    fs.symlinkSync(home, path.join(ws, 'out-link'));
    fs.symlinkSync(path.join(ws, 'src'), path.join(ws, 'in-link'));
  });
  after(cleanupTemp);

  const who: ServerIdentity = { name: 'fs', scope: 'user' };
  function verdictFor(args: Record<string, unknown>, callArgs: unknown, action = 'mcp.fs.tool.read') {
    const { rules, errors } = parseRules([{ action, decision: 'allow', args }], FILE);
    assert.deepEqual(errors, []);
    return checkCallArguments(mayCallTool(who, undefined, action.split('.').slice(3).join('.'), rules), callArgs, ws);
  }
  const allowed = (args: Record<string, unknown>, callArgs: unknown) => {
    const v = verdictFor(args, callArgs);
    assert.equal(v.decision, 'allow', v.reason);
  };
  const refused = (args: Record<string, unknown>, callArgs: unknown, re: RegExp) => {
    const v = verdictFor(args, callArgs);
    assert.equal(v.decision, 'deny', `expected a refusal for ${JSON.stringify(callArgs)}`);
    assert.match(
      v.reason,
      /mcp\.fs\.tool\.read is refused by rule \{"action":"mcp\.fs\.tool\.read","decision":"allow","args":.*\(rules\[0\] in .*config\.json:3\)/,
    );
    assert.match(v.reason, re);
  };

  const UNDER = { path: { under: '${workspaceFolder}' } };
  it('a path in the workspace, the workspace itself, a link that stays inside: allowed', () => {
    allowed(UNDER, { path: path.join(ws, 'src', 'a.txt') });
    allowed(UNDER, { path: ws });
    allowed(UNDER, { path: path.join(ws, 'new', 'file.txt') }); // not there yet: checked by its existing prefix
    allowed(UNDER, { path: path.join(ws, 'in-link', 'a.txt') });
    allowed(UNDER, { path: `file://${path.join(ws, 'src', 'a.txt')}` });
    allowed({ paths: { under: ['${workspaceFolder}/src', home] } }, { paths: [path.join(ws, 'src', 'a.txt'), path.join(home, 'secret')] });
  });
  it('outside, by "..", by a link out, by a sibling whose name starts the same: refused, naming the argument', () => {
    refused(UNDER, { path: path.join(home, 'secret') }, /argument "path" \(".*home\/secret"\) is not under .*\/ws/);
    refused(UNDER, { path: `${ws}/../home/secret` }, /is not under/);
    refused(UNDER, { path: path.join(ws, 'out-link', 'secret') }, /leads through a symbolic link to ".*home\/secret", which is not under/);
    refused(UNDER, { path: `${ws}-other/x` }, /is not under/);
    refused(UNDER, { path: `file://${home}/secret` }, /is not under/);
  });
  it('what a server would resolve its own way: "~", relative, empty, NUL, not a string', () => {
    refused(UNDER, { path: '~/.ssh/id_rsa' }, /starts with "~"/);
    refused(UNDER, { path: 'src/a.txt' }, /is not an absolute path/);
    refused(UNDER, { path: '' }, /is empty/);
    refused(UNDER, { path: `${ws}/a\u0000/../../etc/passwd` }, /NUL/);
    refused(UNDER, { path: { toString: 'x' } }, /is object, not a string/);
    refused(UNDER, { path: 42 }, /is number, not a string/);
  });
  it('a list passes only when every element does; a missing argument is refused unless optional', () => {
    refused(UNDER, { path: [path.join(ws, 'src', 'a.txt'), '/etc/passwd'] }, /argument "path" \("\/etc\/passwd"\) is not under/);
    refused(UNDER, {}, /argument "path" is missing, and the rule constrains it/);
    refused(UNDER, undefined, /is missing/);
    allowed({ path: { under: '${workspaceFolder}', optional: true } }, {});
    allowed({ path: { under: '${workspaceFolder}' } }, { path: ws, other: '/etc/passwd' }); // only named arguments are constrained
  });

  const HOSTS = { url: { hosts: ['example.com', '*.docs.example.org'] } };
  it('a URL on a listed host, or a subdomain of a "*." entry: allowed', () => {
    allowed(HOSTS, { url: 'https://example.com/a?b#c' });
    allowed(HOSTS, { url: 'http://EXAMPLE.com:8080/' });
    allowed(HOSTS, { url: 'https://api.docs.example.org/x' });
  });
  it('hosts parsers disagree about, look-alikes and other schemes: refused', () => {
    refused(
      HOSTS,
      { url: 'https://example.com.evil.net/' },
      /is on "example\.com\.evil\.net", not on example\.com, \*\.docs\.example\.org/,
    );
    refused(HOSTS, { url: 'https://evilexample.com/' }, /not on/);
    refused(HOSTS, { url: 'https://docs.example.org/' }, /not on/); // "*." is subdomains only
    refused(HOSTS, { url: 'https://example.com@evil.net/' }, /has a user part/);
    refused(HOSTS, { url: 'https://user:pw@example.com/' }, /has a user part/);
    refused(HOSTS, { url: 'http://example.com\\@evil.net/' }, /backslash/);
    refused(HOSTS, { url: 'https://example.com /' }, /white space/);
    refused(HOSTS, { url: 'file:///etc/passwd' }, /is not an http:\/\/ or https:\/\/ URL/);
    refused(HOSTS, { url: 'javascript:alert(1)' }, /is not an http/);
    refused(HOSTS, { url: '//example.com/' }, /is not an http/);
    refused(HOSTS, { url: 'https://0x7f.1/' }, /not on|cannot read/);
  });
  it('an IDN host is compared in punycode; an IP literal in its normal form', () => {
    allowed({ url: { hosts: ['bücher.de'] } }, { url: 'https://xn--bcher-kva.de/' });
    allowed({ url: { hosts: ['bücher.de'] } }, { url: 'https://BÜCHER.de/' });
    allowed({ url: { hosts: ['[2001:db8::1]'] } }, { url: 'http://[2001:DB8:0::1]/' });
    refused({ url: { hosts: ['198.51.100.7'] } }, { url: 'http://198.51.100.8/' }, /not on 198\.51\.100\.7/);
  });

  it('oneOf: exact values, types included', () => {
    const MODE = { mode: { oneOf: ['read', 1, null] } };
    allowed(MODE, { mode: 'read' });
    allowed(MODE, { mode: 1 });
    allowed(MODE, { mode: null });
    refused(MODE, { mode: 'Read' }, /argument "mode" \("Read"\) is not one of "read", 1, null/);
    refused(MODE, { mode: '1' }, /is not one of/);
    refused(MODE, { mode: ['read', 'write'] }, /\("write"\) is not one of/);
  });

  it('a more specific rule without args decides over a constrained wildcard (most specific wins)', () => {
    const { rules } = parseRules(
      [
        { action: 'mcp.fs.tool.*', decision: 'allow', args: UNDER },
        { action: 'mcp.fs.tool.read', decision: 'allow' },
      ],
      FILE,
    );
    assert.equal(checkCallArguments(mayCallTool(who, undefined, 'read', rules), { path: '/etc/passwd' }, ws).decision, 'allow');
    assert.equal(checkCallArguments(mayCallTool(who, undefined, 'write', rules), { path: '/etc/passwd' }, ws).decision, 'deny');
  });

  it('explain names each constraint, with the workspace it resolves to, and checks --args', () => {
    const { rules } = parseRules([{ action: 'mcp.fs.tool.read', decision: 'allow', args: { ...UNDER, ...HOSTS } }], FILE);
    const plain = explain('mcp.fs.tool.read', rules, who, { workspace: ws });
    assert.equal(plain[1], 'decision: allow');
    assert.ok(plain.includes(`arguments: argument "path" must be an absolute path under \${workspaceFolder} (${ws})`), plain.join('\n'));
    assert.ok(plain.includes('arguments: argument "url" must be an http(s) URL on example.com, *.docs.example.org'), plain.join('\n'));
    assert.ok(plain.some((l) => /checked at each call/.test(l)));
    const bad = explain('mcp.fs.tool.read', rules, who, { workspace: ws, args: { path: ws, url: 'https://evil.net' } });
    assert.equal(bad[1], 'decision: deny');
    assert.match(bad[bad.length - 1], /reason: .*argument "url" \("https:\/\/evil\.net"\) is on "evil\.net", not on/);
    const good = explain('mcp.fs.tool.read', rules, who, { workspace: ws, args: { path: ws, url: 'https://example.com' } });
    assert.equal(good[1], 'decision: allow');
    assert.ok(good.includes('arguments: these hold every constraint'));
  });
});
