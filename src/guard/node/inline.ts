// Code on a command line for the load guard (src/guard/CONTRACT.md, "Code on a command line (both guards)"): a start
// that gives a program code in its arguments (`sh -c`, `node -e`, awk's and sed's program text, tar's
// --to-command, git -c, ssh -o ProxyCommand…) or in a variable holding a command line (GIT_SSH_COMMAND, PAGER…) that
// this process set. Read by the table both guards share (command_lines.json, bundled here); the caller turns what is
// found into "text turned into code" (strings.ts), refused after this process took in what is not as approved.
import path = require('node:path');
import table from '../python/mcp_gate_guard_parts/command_lines.json';
import { F } from './base';

interface Entry {
  names: RegExp;
  code: RegExp | null;
  takes: RegExp | null;
  text: boolean;
  unless: RegExp | null;
  value: RegExp | null;
}

const re = (s: unknown, flags = ''): RegExp | null => (typeof s === 'string' ? new RegExp(s, flags) : null);
const ENTRIES: Entry[] = (table.programs as Record<string, unknown>[]).map((e) => ({
  names: re(e.names)!,
  code: re(e.code),
  takes: re(e.takes),
  text: e.text === true,
  unless: re(e.unless),
  value: re(e.value, 'i'),
}));
const ENV: readonly string[] = table.env;
/** The command-line variables as this process had them when its guard started. */
const AT_START = new Map(ENV.map((v) => [v, process.env[v]]));

function isFile(p: string): boolean {
  try {
    return F.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The value an option gives: a long one's after '=', a short one's letters after it (`-oX`), else the next word. */
function valueOf(a: string, next: string | undefined): string {
  if (a.startsWith('--') && a.includes('=')) return a.slice(a.indexOf('=') + 1);
  if (/^-[A-Za-z]./.test(a)) return a.slice(2);
  return next ?? '';
}

/**
 * '<program> <option>' (or '<program> (its program text)') when the words of a start — the program first — give a
 * program code on its command line, else null. `cwd` resolves the words that may name the script a program runs.
 */
export function inlineCode(words: readonly string[], cwd: string): string | null {
  for (let at = 0; at < words.length; at++) {
    const n = path.basename(words[at]);
    for (const e of ENTRIES) {
      if (!e.names.test(n)) continue;
      if (e.text && !(e.unless && words.slice(at + 1).some((a) => e.unless!.test(a)))) return `${n} (its program text)`;
      for (let i = at + 1; i < words.length; i++) {
        const a = words[i];
        if (e.code?.test(a)) {
          if (!e.value || e.value.test(valueOf(a, words[i + 1]))) return `${n} ${a}`;
          continue;
        }
        if (a === '--') break;
        if (a.startsWith('-') || a.startsWith('+') || a === 'eval') {
          if (e.takes?.test(a)) i++;
          continue;
        }
        if (isFile(path.resolve(cwd, a))) break; // the script it runs: what follows is its own arguments
      }
    }
  }
  return null;
}

/**
 * The command-line variable the child's environment holds with another value than this process started with, or
 * null. (One the child lacks runs nothing: a child given a small environment of its own is not refused for it.)
 */
export function commandLineVariable(env: ReadonlyMap<string, string>): string | null {
  for (const v of ENV) if (env.has(v) && env.get(v) !== AT_START.get(v)) return v;
  return null;
}
