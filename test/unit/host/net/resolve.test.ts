// Checked resolution: every answer is checked, more than 8 answers are refused, IP literals skip DNS.

import assert from 'node:assert/strict';
import { AddressRefusedError, NameResolutionError } from '../../../../src/host/errors';
import { allLoopback, resolveChecked, type Resolver } from '../../../../src/host/net/resolve';

function fakeResolver(table: Record<string, readonly string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const r = async (host: string) => {
    calls.push(host);
    const a = table[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a;
  };
  return Object.assign(r, { calls });
}

const nine = ['8.8.8.1', '8.8.8.2', '8.8.8.3', '8.8.8.4', '8.8.8.5', '8.8.8.6', '8.8.8.7', '8.8.8.8', '8.8.8.9'];

describe('host/resolve', () => {
  const resolver = fakeResolver({
    'public.test': ['93.184.216.34', '2606:2800:220:1::1'],
    'mixed.test': ['93.184.216.34', '127.0.0.1'],
    'mixed6.test': ['2606:2800:220:1::1', '::ffff:7f00:1'],
    'eight.test': nine.slice(0, 8),
    'nine.test': nine,
    'odd.test': ['0x7f000001'],
    'junk.test': ['not-an-address'],
    'empty.test': [],
    'private.test': ['10.0.0.5'],
  });

  it('accepts a name whose every answer is allowed, keeping the resolver order', async () => {
    const c = await resolveChecked('public.test', { resolver });
    assert.deepEqual(
      c.addresses.map((a) => a.address),
      ['93.184.216.34', '2606:2800:220:1::1'],
    );
    assert.equal(c.literal, false);
  });

  it('refuses a name answering a public and a loopback address (one bad answer refuses the name)', async () => {
    for (const host of ['mixed.test', 'mixed6.test']) {
      await assert.rejects(resolveChecked(host, { resolver }), (err: unknown) => {
        assert.ok(err instanceof AddressRefusedError);
        assert.equal(err.host, host);
        assert.match(err.address ?? '', /127\.0\.0\.1|::ffff:7f00:1/);
        assert.match(err.reason, /loopback/);
        assert.equal(err.addresses.length, 2);
        assert.equal(err.outcome, 'refused_by_address');
        return true;
      });
    }
  });

  it('refuses a name with 9 answers instead of truncating; 8 are fine', async () => {
    await assert.rejects(resolveChecked('nine.test', { resolver }), (err: unknown) => {
      assert.ok(err instanceof AddressRefusedError);
      assert.match(err.reason, /9 addresses, more than 8/);
      assert.equal(err.addresses.length, 9);
      return true;
    });
    assert.equal((await resolveChecked('eight.test', { resolver })).addresses.length, 8);
    assert.equal(
      (await resolveChecked('eight.test', { resolver, maxAddresses: 7 }).catch((e: unknown) => e)) instanceof AddressRefusedError,
      true,
    );
  });

  it('checks an odd spelling in a resolver answer', async () => {
    await assert.rejects(
      resolveChecked('odd.test', { resolver }),
      (err: unknown) => err instanceof AddressRefusedError && err.address === '127.0.0.1',
    );
  });

  it('refuses an answer that is not an IP address', async () => {
    await assert.rejects(resolveChecked('junk.test', { resolver }), AddressRefusedError);
  });

  it('reports names that do not resolve as NameResolutionError (no_answer)', async () => {
    await assert.rejects(
      resolveChecked('missing.test', { resolver }),
      (err: unknown) => err instanceof NameResolutionError && /ENOTFOUND/.test(err.message) && err.outcome === 'no_answer',
    );
    await assert.rejects(resolveChecked('empty.test', { resolver }), NameResolutionError);
    await assert.rejects(resolveChecked('', { resolver }), NameResolutionError);
  });

  it('checks IP-literal hosts without asking the resolver', async () => {
    const r = fakeResolver({});
    for (const host of ['127.0.0.1', '[::1]', '::1', '2130706433', '[::ffff:127.0.0.1]', '169.254.169.254', '0.0.0.0']) {
      await assert.rejects(resolveChecked(host, { resolver: r }), AddressRefusedError, host);
    }
    const ok = await resolveChecked('[2606:4700::1111]', { resolver: r });
    assert.equal(ok.literal, true);
    assert.equal(ok.addresses[0]!.address, '2606:4700::1111');
    assert.deepEqual(r.calls, []);
  });

  it('applies the policy: private refused by rule, loopback allowed by the exception', async () => {
    await assert.rejects(resolveChecked('private.test', { resolver, policy: { refusePrivate: true } }), AddressRefusedError);
    assert.ok(await resolveChecked('private.test', { resolver }));
    const c = await resolveChecked('127.0.0.1', { policy: { exception: { allowLoopback: true } } });
    assert.equal(allLoopback(c), true);
    assert.equal(allLoopback(await resolveChecked('public.test', { resolver })), false);
    assert.equal(allLoopback(await resolveChecked('64:ff9b::7f00:1', { policy: { exception: { allowLoopback: true } } })), false);
  });

  it('uses the system resolver by default: localhost resolves to loopback and is refused', async () => {
    await assert.rejects(resolveChecked('localhost'), (err: unknown) => err instanceof AddressRefusedError && /loopback/.test(err.reason));
  });
});
