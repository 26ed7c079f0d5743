// Starts after taking in, for the load guard (src/guard/CONTRACT.md, "Starts after taking in (both guards)"): which
// program starts may go ahead once this process took in what is not as approved — a guarded interpreter, a program
// of the table's `safe` list given none of its code options, or a shell's simple `-c` line of such a start — with no
// command-line variable given another value. Every other start could run code it is given (on its command line, on
// its input, in a file or variable it reads), which no list of such programs holds whole (red teams 17 and 18): the
// caller turns it into text turned into code (strings.ts). The table is shared with the Python guard.
import path = require('node:path');
import table from '../python/mcp_gate_guard_parts/command_lines.json';

interface Safe {
  names: RegExp;
  code: readonly string[];
}
const SAFE: Safe[] = (table.safe as { names: string; code: string[] }[]).map((e) => ({ names: new RegExp(e.names), code: e.code }));
const ENV: readonly string[] = table.env;
/** The command-line variables as this process had them when its guard started. */
const AT_START = new Map(ENV.map((v) => [v, process.env[v]]));
/** Interpreters that carry the guard (in the sandbox, its wrappers) and the mark of what this process took in. */
const INTERPRETERS = /^(node|nodejs|python[\d.]*|pypy[\d.]*)$/;
const SHELLS = /^(sh|bash|dash|zsh|ksh|mksh|ash|rbash)$/;
/** A shell line of words, spaces and plain quotes only: nothing the shell expands, redirects, chains or groups. */
const SIMPLE = /^[^;&|<>()$`\\*?[\]{}~!\n\r]*$/;

/** The word is one of the code options (exact, --long=value, a long option's abbreviation, a short one in a cluster). */
export function isCodeOption(word: string, code: readonly string[]): boolean {
  for (const o of code) {
    if (word === o) return true;
    if (o.startsWith('--')) {
      const name = word.includes('=') ? word.slice(0, word.indexOf('=')) : word;
      if (name === o || (name.startsWith('--') && name.length >= 3 && o.startsWith(name))) return true;
    } else if (/^-[A-Za-z0-9]$/.test(o) && /^-[A-Za-z0-9]/.test(word) && !word.startsWith('--')) {
      const cluster = word.includes('=') ? word.slice(1, word.indexOf('=')) : word.slice(1);
      if (cluster.includes(o[1])) return true;
    }
  }
  return false;
}

/** A simple shell line split into its words (plain quotes removed), or null when it is not one. */
function simpleWords(line: string): string[] | null {
  if (!SIMPLE.test(line)) return null;
  const words: string[] = [];
  let cur = '';
  let quote = '';
  let any = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = '';
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      any = true;
    } else if (ch === ' ' || ch === '\t') {
      if (cur || any) words.push(cur);
      cur = '';
      any = false;
    } else cur += ch;
  }
  if (quote) return null;
  if (cur || any) words.push(cur);
  return words.length ? words : null;
}

/**
 * Why the start of `words` (the program first) could run code it is given — '<program>', '<program> <option>' or
 * '<VAR>' — or null when it may go ahead after this process took in what is not as approved. `env`: the child's.
 */
export function startNotSafe(words: readonly string[], env: ReadonlyMap<string, string>, depth = 0): string | null {
  for (const v of ENV) if (env.has(v) && env.get(v) !== AT_START.get(v)) return `with ${v} in its environment`;
  const n = path.basename(words[0] ?? '');
  if (INTERPRETERS.test(n)) return null;
  if (SHELLS.test(n) && depth < 2) {
    // `sh -c '<line>'` (also -lc, -ec): the line's own words, when it is a simple one
    const c = words.findIndex((w, i) => i > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(w));
    const before = words.slice(1, c < 0 ? words.length : c);
    const line = c < 0 ? undefined : words[c + 1];
    const inner = line !== undefined && before.every((w) => /^-[A-Za-z]+$/.test(w)) ? simpleWords(line) : null;
    if (inner && words.length === c + 2) return startNotSafe(inner, env, depth + 1) === null ? null : `${n} -c '${line}'`;
    return n;
  }
  const safe = SAFE.find((e) => e.names.test(n));
  if (!safe) return n;
  const end = words.indexOf('--');
  for (const w of words.slice(1, end < 0 ? words.length : end)) if (isCodeOption(w, safe.code)) return `${n} ${w}`;
  return null;
}
