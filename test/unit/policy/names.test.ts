// The policy's messages show names and values through src/text's one table of hidden characters: jsonExcerpt
// escapes a COMBINING GRAPHEME JOINER, a variation selector, a Hangul filler and a C0 control exactly as
// src/text's quote does (the characters the policy's own table used to miss), in a string and inside a rule as
// written, and still cuts what is too long.
import assert from 'node:assert/strict';
import { checkServerName, jsonExcerpt } from '../../../src/policy/names';
import { escapeText, quote } from '../../../src/text/escape';

const MISSED: [string, string][] = [
  ['\u034f', 'COMBINING GRAPHEME JOINER'],
  ['\ufe0f', 'VARIATION SELECTOR-16'],
  ['\u115f', 'HANGUL CHOSEONG FILLER'],
  ['\u0007', 'BELL (a C0 control)'],
  ['\u001b', 'ESCAPE (a C0 control)'],
  ['\u0000', 'NUL (a C0 control)'],
];

describe('policy names: quoting through src/text', () => {
  for (const [ch, what] of MISSED) {
    it(`escapes ${what} the way src/text does`, () => {
      const name = `ev${ch}il`;
      assert.equal(jsonExcerpt(name), quote(name));
      assert.ok(!jsonExcerpt(name).includes(ch), 'the raw character does not reach the message');
      assert.equal(jsonExcerpt({ action: `mcp.${name}.*`, decision: 'allow' }), `{"action":${quote(`mcp.${name}.*`)},"decision":"allow"}`);
      // A control cannot be in a name a rule names; the refusal shows it escaped.
      if (/\p{Cc}/u.test(ch))
        assert.throws(
          () => checkServerName(name),
          (e: Error) => e.message.includes(quote(name)) && !e.message.includes(ch),
        );
    });
  }

  it('writes a value as JSON does, except for the escapes', () => {
    for (const v of [
      null,
      true,
      3,
      -0,
      1.5e300,
      Number.NaN,
      [1, undefined, () => 1],
      { a: undefined, b: [], c: {} },
      'plain "quoted" \\ text',
      new Date(0),
    ]) {
      assert.equal(jsonExcerpt(v, 10_000), JSON.stringify(v));
    }
    assert.equal(jsonExcerpt(undefined), 'undefined');
    assert.equal(jsonExcerpt(10n), '10');
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    assert.equal(jsonExcerpt(loop), '[object Object]');
  });

  it('cuts after max characters and says how much more there was', () => {
    assert.equal(jsonExcerpt('x'.repeat(30), 10), `"${'x'.repeat(9)}…(22 more characters)`);
    assert.equal(jsonExcerpt(`${'\u034f'.repeat(3)}`, 1000), `"${escapeText('\u034f'.repeat(3))}"`);
  });
});
