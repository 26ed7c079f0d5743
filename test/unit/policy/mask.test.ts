// Tests for masking: every form a secret travels in (raw, Bearer, URL-encoded, JSON-escaped,
// base64/base64url, inside a longer base64 text), inside errors and JSON values, longest
// first, and the short-value rule.

import * as assert from 'node:assert/strict';
import { defaultMasker, MASK, Masker, MIN_SECRET_LENGTH } from '../../../src/policy/mask';

const SECRET = 'ntn_4f9c+2b/7e1d 8a6035"x';

function masker(...values: string[]): Masker {
  const m = new Masker();
  for (const v of values) assert.equal(m.add(v), true);
  return m;
}

describe('policy/mask forms', () => {
  const m = masker(SECRET);
  const b64 = Buffer.from(SECRET).toString('base64');
  const forms: [string, string][] = [
    ['raw', SECRET],
    ['Bearer', `Bearer ${SECRET}`],
    ['encodeURIComponent', encodeURIComponent(SECRET)],
    ['lower-case percent-encoding', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase())],
    ['form encoding', new URLSearchParams({ q: SECRET }).toString()],
    ['JSON string escape', JSON.stringify({ token: SECRET })],
    ['base64', b64],
    ['base64 without padding', b64.replace(/=+$/, '')],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
    ['base64 of user:value (Basic)', Buffer.from(`user:${SECRET}`).toString('base64')],
    ['base64 of value inside a longer text', Buffer.from(`{"k":"${SECRET}","n":1}`).toString('base64')],
    ['base64url of value inside a longer text', Buffer.from(`ab${SECRET}cd`).toString('base64url')],
  ];
  for (const [name, form] of forms) {
    it(`masks the ${name} form`, () => {
      const out = m.mask(`before ${form} after`);
      assert.ok(out.includes(MASK), out);
      assert.ok(!out.includes(form), `form still present: ${out}`);
      assert.ok(!out.includes(SECRET), out);
      assert.ok(out.startsWith('before ') && out.endsWith(' after'), out);
    });
  }

  it('keeps "Bearer" visible and masks the value', () => {
    assert.equal(masker('abcd1234').mask('Authorization: Bearer abcd1234'), 'Authorization: Bearer ***');
  });

  it('masks every occurrence', () => {
    assert.equal(masker('abcd1234').mask('abcd1234 and abcd1234abcd1234'), '*** and ******');
  });

  it('masks the longest value first', () => {
    const m = masker('abcd', 'abcdefgh');
    assert.equal(m.mask('x abcdefgh y abcd z'), 'x *** y *** z');
  });

  it('masks a value with surrounding whitespace in its trimmed form too', () => {
    assert.equal(masker('  tok-9999\n').mask('got tok-9999.'), 'got ***.');
  });

  it('treats regular-expression characters literally', () => {
    const m = masker('a.b*c');
    assert.equal(m.mask('a.b*c axbbc'), '*** axbbc');
  });

  it('leaves text without secrets unchanged', () => {
    assert.equal(new Masker().mask('nothing here'), 'nothing here');
    assert.equal(masker('zzzz9999').mask('nothing here'), 'nothing here');
  });

  it(`ignores values shorter than ${MIN_SECRET_LENGTH} characters, saying so`, () => {
    const m = new Masker();
    assert.equal(m.add('abc'), false);
    assert.equal(m.add(''), false);
    assert.equal(m.size, 0);
    assert.equal(m.mask('abc abc'), 'abc abc');
    assert.equal(m.add('abcd'), true);
    assert.equal(m.mask('abcd'), '***');
  });

  it('the mask holds no letters, so a value like "secret" cannot survive inside it', () => {
    const m = masker('secret');
    const out = m.mask('the secret is secret');
    assert.ok(!out.includes('secret'), out);
  });
});

describe('policy/mask errors and JSON', () => {
  const VALUE = 'ghp_Zq81Lm0aPx';
  const m = masker(VALUE);

  it('masks an error message that quotes a header value', () => {
    const err = new TypeError(`Invalid character in header content ["Authorization"]: Bearer ${VALUE}`);
    const out = m.maskError(err);
    assert.equal(out.message, 'Invalid character in header content ["Authorization"]: Bearer ***');
    assert.equal(out.name, 'TypeError');
    assert.ok(!String(out.stack).includes(VALUE));
  });

  it('masks error properties and causes', () => {
    const cause = new Error(`upstream said ${VALUE}`);
    const err = Object.assign(new Error('failed', { cause }), { code: 'E_X', detail: { header: VALUE } });
    const out = m.maskError(err) as Error & { code?: string; detail?: { header: string }; cause?: Error };
    assert.equal(out.code, 'E_X');
    assert.deepEqual(out.detail, { header: MASK });
    assert.equal(out.cause?.message, 'upstream said ***');
  });

  it('masks a thrown non-error', () => {
    assert.equal(m.maskError(`raw ${VALUE}`).message, 'raw ***');
  });

  it('maskDeep masks strings and keys at any depth and leaves the input alone', () => {
    const input = { [VALUE]: 1, list: [`x ${VALUE}`, { deep: encodeURIComponent(VALUE) }], n: 3, ok: true, none: null };
    const out = m.maskDeep(input);
    assert.deepEqual(out, { [MASK]: 1, list: ['x ***', { deep: MASK }], n: 3, ok: true, none: null });
    assert.ok(JSON.stringify(input).includes(VALUE));
    assert.ok(!JSON.stringify(out).includes(VALUE));
  });

  it('maskDeep masks a number that spells a value', () => {
    const n = masker('31415926');
    assert.deepEqual(n.maskDeep({ pin: 31415926, other: 7 }), { pin: MASK, other: 7 });
  });

  it('maskDeep turns errors into masked {name, message} and survives cycles', () => {
    const a: Record<string, unknown> = { err: new Error(`bad ${VALUE}`) };
    a.self = a;
    assert.deepEqual(m.maskDeep(a), { err: { name: 'Error', message: 'bad ***' }, self: '[Circular]' });
  });

  it('maskDeep keeps a "__proto__" key as data', () => {
    const parsed = JSON.parse(`{"__proto__": "${VALUE}"}`);
    const out = m.maskDeep(parsed) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, MASK);
  });

  it('maskDeep with a text step rewrites strings and keys before masking, also with no secret known, and keeps "__proto__" as data', () => {
    const drop = (t: string) => t.replace(/\u200b/g, '');
    const parsed = JSON.parse(`{"k\u200bey": ["a\u200b${VALUE}"], "__proto__": {"polluted": "x\u200b"}, "n": 5}`);
    const out = m.maskDeep(parsed, drop) as Record<string, unknown>;
    assert.deepEqual(out.key, [`a${MASK}`]);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: 'x' });
    const none = new Masker().maskDeep(parsed, drop) as Record<string, unknown>;
    assert.deepEqual(none.key, [`a${VALUE}`]);
    assert.equal(none.n, 5);
    assert.notEqual(none, parsed, 'a copy');
    assert.equal((none as { polluted?: unknown }).polluted, undefined);
  });

  it('a JSON log line written after masking carries no form of the value', () => {
    const line = JSON.stringify(
      m.maskDeep({ kind: 'mcp.request', headers: { authorization: `Bearer ${VALUE}` }, echo: Buffer.from(VALUE).toString('base64') }),
    );
    assert.ok(!line.includes(VALUE));
    assert.ok(!line.includes(Buffer.from(VALUE).toString('base64').replace(/=+$/, '')));
  });
});

describe('policy/mask defaultMasker', () => {
  it('is one process-wide instance, registered on globalThis', () => {
    const key = Symbol.for('mcp-gate.policy.defaultMasker');
    assert.equal((globalThis as unknown as Record<symbol, unknown>)[key], defaultMasker);
    const value = `unit-test-shared-value-${process.pid}`;
    defaultMasker.add(value);
    assert.equal(defaultMasker.mask(`x ${value} y`), `x ${MASK} y`);
  });

  it('a second copy of the module (another bundle) shares the same instance', () => {
    const path = require.resolve('../../../src/policy/mask');
    const saved = require.cache[path];
    delete require.cache[path];
    try {
      const copy = require(path) as typeof import('../../../src/policy/mask');
      assert.notEqual(copy.Masker, Masker);
      assert.equal(copy.defaultMasker, defaultMasker);
    } finally {
      if (saved) require.cache[path] = saved;
    }
  });
});
