// The one table of characters that must not reach a person unescaped or the model unstripped. It is built from
// Unicode properties, so it follows the Unicode version of the running engine instead of a hand-written list:
// src/text/escape.ts shows every match as a visible escape (for people), src/host/session/untrusted.ts removes them (for
// the model). Both use these patterns, so what is escaped and what is stripped cannot drift apart.
//
//   Cc   C0/C1 controls and DEL (ESC starts ANSI sequences; \r rewrites a terminal line).
//   Cf   format characters: bidi embeddings/overrides/isolates and marks (U+202A–202E, U+2066–2069, U+200E/F,
//        U+061C), zero-width (U+200B–200D, U+2060, U+FEFF), soft hyphen, Arabic/Syriac/Egyptian format marks,
//        interlinear annotations (U+FFF9–FFFB), musical beam/slur controls (U+1D173–1D17A), tag characters.
//   Default_Ignorable_Code_Point: everything a renderer is told to draw as nothing, including what is not Cf:
//        U+034F COMBINING GRAPHEME JOINER, Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), Khmer inherent
//        vowels (U+17B4/5), Mongolian free variation selectors (U+180B–180F), every variation selector
//        (U+FE00–FE0F, U+E0100–E01EF), the whole tag block U+E0000–E0FFF (assigned or not), U+2065, U+FFF0–FFF8.
//   Zl, Zp  U+2028 / U+2029: line breaks that many views do not draw as one.
//   Co   private use: renders as whatever a font decides.
//   Cs   lone surrogates (a string that is not valid UTF-16).
//   Noncharacter_Code_Point: U+FDD0–FDEF and U+xFFFE/U+xFFFF, which no font draws.
const CLASS = '\\p{Cc}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Zl}\\p{Zp}\\p{Co}\\p{Cs}\\p{Noncharacter_Code_Point}';

/** Every hidden character (global, for replace). */
export const HIDDEN_CHARS = new RegExp(`[${CLASS}]`, 'gu');

/** Every hidden character except newline and tab, which text for the model legitimately carries (global). */
export const HIDDEN_CHARS_EXCEPT_NEWLINE_TAB = new RegExp(`(?![\\n\\t])[${CLASS}]`, 'gu');

const ANY = new RegExp(`[${CLASS}]`, 'u');

/** True when `s` holds at least one hidden character (newline and tab count). */
export function containsHidden(s: string): boolean {
  return ANY.test(s);
}
