// Hidden characters: one table decides what a person sees escaped (escapeText) and what the model never sees
// (stripHidden). Checked on the characters that used to slip through one list or the other, on every code point,
// and through the built CLI on a server whose argument hides a COMBINING GRAPHEME JOINER.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { escapeLabel, escapeText, hasHiddenCharacters, literalIcons } from '../../../src/text/escape';
import { stripHidden } from '../../../src/host/session/untrusted';
import { cleanupTemp, cli, world } from '../helpers';

const CASES: [number, string][] = [
  [0x034f, 'COMBINING GRAPHEME JOINER'],
  [0x115f, 'HANGUL CHOSEONG FILLER'],
  [0x1160, 'HANGUL JUNGSEONG FILLER'],
  [0x17b4, 'KHMER VOWEL INHERENT AQ'],
  [0x180b, 'MONGOLIAN FREE VARIATION SELECTOR ONE'],
  [0x180e, 'MONGOLIAN VOWEL SEPARATOR'],
  [0x200b, 'ZERO WIDTH SPACE'],
  [0x200d, 'ZERO WIDTH JOINER'],
  [0x202e, 'RIGHT-TO-LEFT OVERRIDE'],
  [0x2028, 'LINE SEPARATOR'],
  [0x2029, 'PARAGRAPH SEPARATOR'],
  [0x2064, 'INVISIBLE PLUS'],
  [0x2065, 'unassigned default-ignorable'],
  [0x2067, 'RIGHT-TO-LEFT ISOLATE'],
  [0x3164, 'HANGUL FILLER'],
  [0xfe0f, 'VARIATION SELECTOR-16'],
  [0xfeff, 'ZERO WIDTH NO-BREAK SPACE'],
  [0xffa0, 'HALFWIDTH HANGUL FILLER'],
  [0xfff0, 'unassigned default-ignorable in Specials'],
  [0xfffb, 'INTERLINEAR ANNOTATION TERMINATOR'],
  [0xe000, 'private use'],
  [0xd800, 'lone high surrogate'],
  [0xdc00, 'lone low surrogate'],
  [0x0600, 'ARABIC NUMBER SIGN'],
  [0x1bca0, 'SHORTHAND FORMAT LETTER OVERLAP'],
  [0x1d173, 'MUSICAL SYMBOL BEGIN BEAM'],
  [0xe0001, 'LANGUAGE TAG'],
  [0xe0002, 'unassigned tag'],
  [0xe0041, 'TAG LATIN CAPITAL LETTER A'],
  [0xe0100, 'VARIATION SELECTOR-17'],
  [0xe01ef, 'VARIATION SELECTOR-256'],
  [0xfffff, 'private use plane 15'],
  [0xffff, 'noncharacter'],
  [0x0000, 'NUL'],
  [0x001b, 'ESCAPE'],
  [0x000d, 'CARRIAGE RETURN'],
  [0x0085, 'NEXT LINE'],
];

const hex = (cp: number) => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;

describe('hidden characters: one table for people and for the model', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  for (const [cp, name] of CASES) {
    it(`${hex(cp)} ${name} is escaped for a person and removed for the model`, () => {
      const text = `a${String.fromCodePoint(cp)}b`;
      const shown = escapeText(text);
      assert.ok(hasHiddenCharacters(text), `${hex(cp)} is not reported as hidden`);
      assert.notEqual(shown, text, `${hex(cp)} is shown raw`);
      assert.match(shown, /^a\\(u[0-9A-F]{4}|u\{[0-9A-F]+\}|[0rnt])b$/, `${hex(cp)} is not one visible escape: ${JSON.stringify(shown)}`);
      assert.equal(stripHidden(text), 'ab', `${hex(cp)} reaches the model`);
    });
  }

  it('the escape names the code point exactly (U+034F, U+E0041)', () => {
    assert.equal(escapeText('tools/ser\u034Fver.js'), 'tools/ser\\u034Fver.js');
    assert.equal(escapeText('q\u{E0041}'), 'q\\u{E0041}');
  });

  it('newline and tab: escaped for a person, kept for the model (descriptions are multi-line)', () => {
    assert.equal(escapeText('a\nb\tc'), 'a\\nb\\tc');
    assert.equal(stripHidden('a\nb\tc'), 'a\nb\tc');
    assert.equal(stripHidden('a\r\nb'), 'a\nb');
  });

  it('visible text is left alone by both (letters, marks, emoji, CJK, spaces, backslash only doubled)', () => {
    for (const s of ['plain', 'café', 'e\u0301', '日本語', '🙂', 'a b', '\u00A0', 'Ω≈ç√']) {
      assert.equal(escapeText(s), s);
      assert.equal(stripHidden(s), s);
      assert.equal(hasHiddenCharacters(s), false);
    }
    assert.equal(escapeText('a\\u200Bb'), 'a\\\\u200Bb'); // a literal backslash cannot forge an escape
  });

  it('property: for every code point, escaped ⇔ stripped (newline and tab: escaped, kept)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x10ffff }), fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), (cp, pre, post) => {
        const ch = String.fromCodePoint(cp);
        const escaped = escapeText(ch) !== ch && ch !== '\\';
        const stripped = stripHidden(ch) === '';
        if (ch === '\n' || ch === '\t') return escaped && !stripped;
        if (escaped !== stripped || escaped !== hasHiddenCharacters(ch)) return false;
        // In context too: stripping never leaves a hidden character behind, and leaves nothing to escape.
        const cleaned = stripHidden(pre + ch + post).replace(/[\n\t]/g, '');
        return !hasHiddenCharacters(cleaned) && escapeText(cleaned) === cleaned.replace(/\\/g, '\\\\');
      }),
      { numRuns: 20_000 },
    );
  });

  it('exhaustively: every code point from U+0000 to U+10FFFF agrees', () => {
    const disagree: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp === 0x0a || cp === 0x09 || cp === 0x5c) continue;
      const ch = String.fromCodePoint(cp);
      if ((escapeText(ch) !== ch) !== (stripHidden(ch) === '')) disagree.push(hex(cp));
    }
    assert.deepEqual(disagree.slice(0, 20), []);
  });

  it('mcp-gate get shows a COMBINING GRAPHEME JOINER in an argument as \\u034F, never raw', () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node', args: ['tools/ser\u034Fver.js'] } } }),
      'tools/ser\u034Fver.js': 'x',
    });
    const r = cli(w, ['get', 's']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes('\u034F'), 'the raw character reached the terminal');
    assert.match(r.stdout, /tools\/ser\\u034Fver\.js/);
  });

  it('where VS Code renders icons (quick picks, lens titles), a name\'s "$(pass)" stays literal text: only MCP Gate puts a codicon there', () => {
    assert.equal(escapeLabel('$(pass) notes'), '\\$(pass) notes');
    assert.equal(escapeLabel('a $(check)$(shield)\u202E'), 'a \\$(check)\\$(shield)\\u202E');
    assert.equal(literalIcons('Approve "$(pass) x" exactly as shown'), 'Approve "\\$(pass) x" exactly as shown');
    assert.equal(escapeLabel('plain'), 'plain');
  });
});
