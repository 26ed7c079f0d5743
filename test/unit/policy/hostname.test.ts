// Tests for host reversal: names, case, trailing dot, IDN, IP literals, and the errors a
// user sees for a host that cannot be named by a rule.

import * as assert from 'node:assert/strict';
import { hostAction, HostNameError, reverseHost } from '../../../src/policy/hostname';
import { NameError } from '../../../src/policy/names';

describe('policy/hostname reverseHost', () => {
  const good: [string, string][] = [
    ['mcp.notion.com', 'com.notion.mcp'],
    ['MCP.Notion.COM', 'com.notion.mcp'],
    ['mcp.notion.com.', 'com.notion.mcp'],
    ['localhost', 'localhost'],
    ['a_b-c.example', 'example.a_b-c'],
    ['bücher.de', 'de.xn--bcher-kva'],
    ['BÜCHER.de', 'de.xn--bcher-kva'],
    ['xn--bcher-kva.de', 'de.xn--bcher-kva'],
    ['ｅｘａｍｐｌｅ．ｃｏｍ', 'com.example'],
    ['198.51.100.7', '[198.51.100.7]'],
    ['198.51.100.7.', '[198.51.100.7]'],
    ['[198.51.100.7]', '[198.51.100.7]'],
    ['2001:db8::1', '[2001:db8::1]'],
    ['[2001:DB8:0:0:0:0:0:1]', '[2001:db8::1]'],
    ['[::1]', '[::1]'],
    ['::ffff:1.2.3.4', '[::ffff:102:304]'],
  ];
  for (const [input, want] of good) {
    it(`${JSON.stringify(input)} → ${want}`, () => assert.equal(reverseHost(input), want));
  }

  const bad: [string, string][] = [
    ['', 'host is empty'],
    ['.', 'host "." is not valid: it has an empty label'],
    ['a..b', 'host "a..b" is not valid: it has an empty label'],
    ['example.com..', 'host "example.com.." is not valid: it has an empty label'],
    ['.example.com', 'host ".example.com" is not valid: it has an empty label'],
    ['a/b', 'host "a/b" is not valid: it contains "/", which a host name cannot hold'],
    ['a%41.com', 'host "a%41.com" is not valid: it contains "%", which a host name cannot hold'],
    ['exa mple.com', 'host "exa mple.com" is not valid: it contains " ", which a host name cannot hold'],
    ['*.notion.com', 'host "*.notion.com" is not valid: it contains "*"; wildcards belong in rules, after the reversed labels'],
    ['a？b.com', 'host "a？b.com" is not valid: it contains "？", which reads as "?", which a host name cannot hold'],
    ['notion.com:443', 'host "notion.com:443" is not valid: it contains ":" but is not an IPv6 address (a port does not belong here)'],
    [
      '127.1',
      'host "127.1" is not valid: it looks like an IP address but is not four decimal numbers; write an address as e.g. 198.51.100.7',
    ],
    [
      '0x7f.0.0.1',
      'host "0x7f.0.0.1" is not valid: it looks like an IP address but is not four decimal numbers; write an address as e.g. 198.51.100.7',
    ],
    [
      '01.2.3.4',
      'host "01.2.3.4" is not valid: it looks like an IP address but is not four decimal numbers; write an address as e.g. 198.51.100.7',
    ],
    ['fe80::1%eth0', 'host "fe80::1%eth0" is not valid: an IPv6 zone (%…) cannot be named by a rule'],
    ['[2001:db8::1', 'host "[2001:db8::1" is not valid: a "[" without a closing "]"'],
    ['[notion.com]', 'host "[notion.com]" is not valid: it is neither a dotted-decimal IPv4 address nor an IPv6 address'],
    ['xn--zz.com', 'host "xn--zz.com" is not valid: it is not a valid international domain name'],
    ['a\u202eb.com', 'host "a\\u202Eb.com" is not valid: it is not a valid international domain name'],
    [`${'a'.repeat(64)}.com`, `host "${'a'.repeat(64)}.com" is not valid: the label "${'a'.repeat(64)}" is longer than 63 characters`],
  ];
  for (const [input, message] of bad) {
    it(`rejects ${JSON.stringify(input)} saying why`, () => {
      assert.throws(
        () => reverseHost(input),
        (e: unknown) => e instanceof HostNameError && e.message === message,
      );
    });
  }

  it('rejects a name longer than 253 characters', () => {
    const long = Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.');
    assert.throws(() => reverseHost(long), /longer than 253 characters/);
  });
});

describe('policy/hostname hostAction', () => {
  it('builds mcp.<server>.host.<reversed>', () => {
    assert.equal(hostAction('notion', 'mcp.notion.com'), 'mcp.notion.host.com.notion.mcp');
    assert.equal(hostAction('probe', '2001:db8::1'), 'mcp.probe.host.[2001:db8::1]');
  });
  it('refuses a server name with a dot, naming it', () => {
    assert.throws(
      () => hostAction('my.server', 'example.com'),
      (e: unknown) => e instanceof NameError && e.message === 'server name "my.server" cannot be named by a rule: it contains "."',
    );
  });
  it('refuses a server name with a bidi override', () => {
    assert.throws(() => hostAction('evil\u202e', 'example.com'), /server name "evil\\u202E" cannot be named by a rule/);
  });
});
