// Address policy: classification of every range and spelling, policy decisions, and properties
// (odd IPv4 spellings agree with the WHATWG URL parser; embedded IPv6 forms classify like their IPv4).

import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkAddress, classifyAddress, parseIpLiteral, type AddressRange } from '../../../../src/host/net/address';

const ALL_EXCEPTIONS = { refusePrivate: true, exception: { allowLoopback: true, allowPrivate: true } };

function rangeOf(text: string): AddressRange | undefined {
  return classifyAddress(text)?.range;
}

describe('host/address: classification', () => {
  const cases: Array<[string, AddressRange]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.1.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['fec0::1', 'reserved'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['198.18.0.2', 'private'],
    ['198.19.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['8.8.8.8', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['198.20.0.0', 'public'],
    ['203.0.113.5', 'public'],
    ['2606:4700::1111', 'public'],
  ];
  for (const [text, range] of cases) {
    it(`${text} is ${range}`, () => assert.equal(rangeOf(text), range));
  }
});

describe('host/address: odd IPv4 spellings', () => {
  const loopback = [
    '2130706433',
    '0x7f000001',
    '0X7F000001',
    '0177.0.0.1',
    '127.1',
    '127.0.1',
    '0x7f.1',
    '0x7f.0.0.0x1',
    '017700000001',
    '127.0.0.1.',
  ];
  const metadata = ['2852039166', '0xa9fea9fe', '0251.0376.0251.0376', '169.254.43518', '0xa9.0xfe.0xa9.0xfe'];
  for (const s of loopback) {
    it(`direct: ${s} parses as 127.0.0.1 and is refused`, () => {
      assert.equal(parseIpLiteral(s), '127.0.0.1');
      const v = checkAddress(s);
      assert.equal(v.allowed, false);
      assert.equal(v.info?.range, 'loopback');
    });
    it(`URL path: https://${s}/ normalises to 127.0.0.1 and is refused`, () => {
      const host = new URL(`https://${s}:8443/mcp`).hostname;
      assert.equal(host, '127.0.0.1');
      assert.equal(checkAddress(host).allowed, false);
    });
  }
  for (const s of metadata) {
    it(`direct and URL: ${s} is the metadata address`, () => {
      assert.equal(parseIpLiteral(s), '169.254.169.254');
      assert.equal(rangeOf(s), 'metadata');
      assert.equal(rangeOf(new URL(`https://${s}/`).hostname), 'metadata');
    });
  }
  for (const s of [
    'mcp.test',
    '',
    '1.2.3.4.5',
    '08.0.0.1',
    '4294967296',
    '::gg',
    ' 127.0.0.1',
    '127.0.0.1 ',
    'localhost',
    '[127.0.0.1',
    '1.2.3.4/8',
  ]) {
    it(`${JSON.stringify(s)} is not an IP literal`, () => {
      assert.equal(parseIpLiteral(s), undefined);
      const v = checkAddress(s);
      assert.equal(v.allowed, false);
      assert.match((v as { reason: string }).reason, /not an IP address/);
    });
  }
});

describe('host/address: IPv6 spellings that embed IPv4', () => {
  const loopback = [
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '[::ffff:7f00:1]',
    '0:0:0:0:0:ffff:7f00:1',
    '::127.0.0.1',
    '::7f00:1',
    '::ffff:0:127.0.0.1',
    '64:ff9b::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b:1::7f00:1', // local-use NAT64, /96 layout
    '64:ff9b:1:7f00:0:100::', // local-use NAT64, /48 layout (u-octet skipped)
    '2002:7f00:1::',
    '2002:7f00:1:ffff::1',
    '2001::80ff:fffe', // Teredo client ~127.0.0.1
  ];
  for (const s of loopback) {
    it(`${s} is loopback and refused (allowed only under the exception)`, () => {
      const info = classifyAddress(s);
      assert.equal(info?.range, 'loopback', JSON.stringify(info));
      const v = checkAddress(s);
      assert.equal(v.allowed, false);
      assert.match((v as { reason: string }).reason, /127\.0\.0\.1|::1|loopback/);
      assert.equal(checkAddress(s, { exception: { allowLoopback: true } }).allowed, true);
    });
  }
  const metadata = [
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::169.254.169.254',
    '64:ff9b::169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '2002:a9fe:a9fe::1',
  ];
  for (const s of metadata) {
    it(`${s} is metadata and refused even under every exception`, () => {
      assert.equal(rangeOf(s), 'metadata');
      assert.equal(checkAddress(s, ALL_EXCEPTIONS).allowed, false);
    });
  }
  it('::ffff:0.0.0.0 and 64:ff9b::0.0.0.0 are unspecified, refused under every exception', () => {
    for (const s of ['::ffff:0.0.0.0', '64:ff9b::', '::ffff:0:0']) {
      assert.equal(rangeOf(s), 'unspecified', s);
      assert.equal(checkAddress(s, ALL_EXCEPTIONS).allowed, false, s);
    }
  });
  it('reason names the embedding and the embedded address', () => {
    const v = checkAddress('::ffff:7f00:1');
    assert.equal(v.allowed, false);
    assert.match((v as { reason: string }).reason, /IPv4-mapped/);
    assert.match((v as { reason: string }).reason, /127\.0\.0\.1/);
  });
  it('a NAT64/6to4 spelling of a public address is public', () => {
    for (const s of ['64:ff9b::8.8.8.8', '2002:808:808::1', '::ffff:8.8.8.8']) assert.equal(rangeOf(s), 'public', s);
  });
  it('a mapped private address is private', () => {
    assert.equal(rangeOf('::ffff:10.0.0.1'), 'private');
    assert.equal(checkAddress('::ffff:10.0.0.1', { refusePrivate: true }).allowed, false);
  });
  it('canonicalises "::127.0.0.1" as IPv4-compatible (not mapped, unlike ipaddr.js alone)', () => {
    assert.equal(parseIpLiteral('::127.0.0.1'), '::7f00:1');
    assert.equal(classifyAddress('::127.0.0.1')?.embedded?.via, 'IPv4-compatible');
  });
});

describe('host/address: policy', () => {
  it('private ranges are allowed by default, refused by rule, allowed again by the exception', () => {
    for (const s of ['10.0.0.1', '172.16.5.5', '192.168.0.1', 'fc00::1', '100.64.0.1', '198.18.0.2']) {
      assert.equal(checkAddress(s).allowed, true, s);
      const refused = checkAddress(s, { refusePrivate: true });
      assert.equal(refused.allowed, false, s);
      assert.match((refused as { reason: string }).reason, /private addresses are refused by rule/);
      assert.equal(checkAddress(s, { refusePrivate: true, exception: { allowPrivate: true } }).allowed, true, s);
      const named = checkAddress(s, { refusePrivate: true, refusePrivateBy: 'mcp.corp.private is denied by rule X' });
      assert.match((named as { reason: string }).reason, /private addresses are refused: mcp\.corp\.private is denied by rule X$/);
    }
  });
  it('loopback is allowed only with allowLoopback; allowPrivate does not allow it', () => {
    assert.equal(checkAddress('127.0.0.1').allowed, false);
    assert.equal(checkAddress('127.0.0.1', { exception: { allowPrivate: true } }).allowed, false);
    assert.equal(checkAddress('127.0.0.1', { exception: { allowLoopback: true } }).allowed, true);
  });
  it('metadata, unspecified, link-local, multicast, broadcast and reserved stay refused under every exception', () => {
    for (const s of [
      '169.254.169.254',
      'fd00:ec2::254',
      '0.0.0.0',
      '::',
      '169.254.3.3',
      'fe80::1',
      '224.0.0.1',
      'ff02::1',
      '255.255.255.255',
      '240.0.0.1',
      '4000::1',
    ]) {
      const v = checkAddress(s, ALL_EXCEPTIONS);
      assert.equal(v.allowed, false, s);
      assert.match((v as { reason: string }).reason, /refused always/, s);
    }
  });
  it('public addresses are allowed under any policy', () => {
    assert.equal(checkAddress('8.8.8.8', { refusePrivate: true }).allowed, true);
  });
});

describe('host/address: properties', () => {
  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
  const dotted = (o: number[]) => o.join('.');
  const int = (o: number[]) => ((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!;

  it('decimal, hex, octal and mapped/NAT64/6to4 spellings classify like the dotted address', () => {
    fc.assert(
      fc.property(v4, (o) => {
        const base = classifyAddress(dotted(o))!;
        const n = int(o);
        const hex = (x: number) => x.toString(16);
        const h = `${hex((o[0]! << 8) | o[1]!)}:${hex((o[2]! << 8) | o[3]!)}`;
        for (const s of [String(n), `0x${n.toString(16)}`, o.map((x) => `0${x.toString(8)}`).join('.')]) {
          assert.equal(parseIpLiteral(s), base.address, s);
        }
        for (const s of [`::ffff:${dotted(o)}`, `::ffff:${h}`, `64:ff9b::${h}`, `2002:${h}::1`]) {
          assert.equal(classifyAddress(s)?.range, base.range, s);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parseIpLiteral agrees with the WHATWG URL parser on numeric IPv4 spellings', () => {
    const part = fc.oneof(
      fc.nat(300).map(String),
      fc.nat(0xffffffff).map(String),
      fc.nat(0x1ffff).map((n) => `0x${n.toString(16)}`),
      fc.nat(0o777).map((n) => `0${n.toString(8)}`),
      fc.constantFrom('0', '00', '0x', '0x0', '08', '4294967295', '4294967296'),
    );
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), (parts) => {
        const s = parts.join('.');
        let viaUrl: string | undefined;
        try {
          viaUrl = new URL(`https://${s}/`).hostname;
        } catch {
          viaUrl = undefined;
        }
        const direct = parseIpLiteral(s);
        // Either both refuse it, or both read the same address (or the URL reads it and we refuse: safe).
        if (direct !== undefined) assert.equal(direct, viaUrl, s);
        if (viaUrl !== undefined && direct === undefined) assert.fail(`URL reads ${s} as ${viaUrl}, parseIpLiteral does not`);
      }),
      { numRuns: 2000 },
    );
  });

  it('every address in 127/8, 0/8 and 169.254/16 is refused in every embedding, even under the exception', () => {
    const bad = fc.oneof(
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(0), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
    );
    fc.assert(
      fc.property(bad, (o) => {
        const h = `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
        for (const s of [dotted(o), `::ffff:${h}`, `::ffff:0:${h}`, `64:ff9b::${h}`, `64:ff9b:1::${h}`, `2002:${h}::`]) {
          const policy = o[0] === 127 ? {} : ALL_EXCEPTIONS;
          assert.equal(checkAddress(s, policy).allowed, false, s);
        }
      }),
      { numRuns: 500 },
    );
  });
});
