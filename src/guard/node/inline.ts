// Starts after taking in, for the load guard (src/guard/CONTRACT.md, "Starts after taking in (both guards)"): which
// program starts may go ahead once this process took in what is not as approved — a guarded interpreter, a program
// of the table's `safe` list given none of its code options, or a shell's simple `-c` line of such a start — with no
// command-line variable given another value. Every other start could run code it is given (on its command line, on
// its input, in a file or variable it reads), which no list of such programs holds whole (red teams 17 and 18): the
// caller turns it into text turned into code (strings.ts). The table is shared with the Python guard.
import path = require('node:path');
import table from '../python/mcp_gate_guard_parts/command_lines.json';
import { F, real } from './base';
import { gitObeysChanged } from './git';

interface Safe {
  names: RegExp;
  code: readonly string[];
  git: boolean;
}
const SAFE: Safe[] = (table.safe as { names: string; code: string[]; git?: boolean }[]).map((e) => ({
  names: new RegExp(e.names),
  code: e.code,
  git: e.git === true,
}));
const GIT_SUBCOMMANDS = new RegExp(table.git.subcommands);
const GIT_SUB_CODE = table.git.sub_code as Record<string, readonly string[] | undefined>;
const ENV: readonly string[] = table.env;
const PREFIXES: readonly string[] = (table as { env_prefixes?: string[] }).env_prefixes ?? [];
/** The command-line variables as this process had them when its guard started (also every one of a prefix). */
const AT_START = new Map(
  Object.keys(process.env)
    .filter(counted)
    .map((v) => [v, process.env[v]]),
);
for (const v of ENV) AT_START.set(v, process.env[v]);
function counted(v: string): boolean {
  return ENV.includes(v) || PREFIXES.some((p) => v.startsWith(p));
}
/**
 * Where a program of the table or an interpreter must be, by its real path: the system's folders and the sandbox's
 * wrappers — never a file under HOME, /tmp, the workspace or a scratch folder, whatever its name (a link named `git`
 * or `python3` to /bin/sh, an interpreter the sandbox does not wrap: red team 19).
 */
const SYSTEM = /^\/(usr\/(local\/)?(s?bin)|s?bin|run\/mcp-gate)\//;
/** Interpreters that carry the guard (in the sandbox, its wrappers) and the mark of what this process took in. */
const INTERPRETERS = /^(node|nodejs|python[\d.]*|pypy[\d.]*)$/;
/** Shells that, given -c without a login or interactive option, read no file of their own (BASH_ENV is in `env`):
 * zsh reads ~/.zshenv and fish its config on every start, so they are not here (red team 19, a18). */
const SHELLS = /^(sh|bash|dash|ash|rbash)$/;
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

/** What the table makes of a program's name: an interpreter, a shell, the safe entry it is (by index), or null. */
function kind(n: string): string | null {
  if (INTERPRETERS.test(n)) return 'interpreter';
  if (SHELLS.test(n)) return 'shell';
  const i = SAFE.findIndex((e) => e.names.test(n));
  return i < 0 ? null : `safe ${i}`;
}

/** The real path of the file a program name starts (through PATH as the child has it), or null. */
function programFile(name: string, cwd: string, pathVar: string | undefined): string | null {
  const isFile = (p: string): boolean => {
    try {
      return F.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (name.includes('/')) return real(path.resolve(cwd, name));
  for (const d of (pathVar ?? '').split(':')) {
    const c = path.resolve(cwd, d || '.', name);
    if (isFile(c)) return real(c);
  }
  return null;
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
export function startNotSafe(words: readonly string[], env: ReadonlyMap<string, string>, cwd = process.cwd(), depth = 0): string | null {
  for (const [v, value] of env) if (counted(v) && value !== AT_START.get(v)) return `with ${v} in its environment`;
  const n = path.basename(words[0] ?? '');
  // (the table's programs and the interpreters count only as the system's own file of that kind: a link named `git`
  // to /bin/sh is a shell, one in HOME is no system program)
  const found = programFile(words[0] ?? '', cwd, env.get('PATH'));
  if (kind(n) !== null && !(found !== null && SYSTEM.test(found) && kind(path.basename(found)) === kind(n)))
    return `${n}, ${found !== null ? `at ${found}` : 'not found'}, not the system's own,`;
  if (INTERPRETERS.test(n)) return null;
  if (SHELLS.test(n) && depth < 2) {
    // `sh -c '<line>'` (also -lc, -ec): the line's own words, when it is a simple one
    // (only -c with -e and -u: -l and -i read startup files from HOME, -x prints PS4, -o takes an option's name)
    const c = words.findIndex((w, i) => i > 0 && /^-[eu]*c[eu]*$/.test(w));
    const before = words.slice(1, c < 0 ? words.length : c);
    const line = c < 0 ? undefined : words[c + 1];
    const inner = line !== undefined && before.every((w) => /^-[eu]+$/.test(w)) ? simpleWords(line) : null;
    if (inner && words.length === c + 2) return startNotSafe(inner, env, cwd, depth + 1) === null ? null : `${n} -c '${line}'`;
    return n;
  }
  const safe = SAFE.find((e) => e.names.test(n));
  if (!safe) return n;
  if (safe.git) return gitNotSafe(words, env, cwd, safe.code);
  // (every word, also after '--': find reads its expression after it, red team 19, a08)
  for (const w of words.slice(1)) if (isCodeOption(w, safe.code)) return `${n} ${w}`;
  return null;
}

/**
 * git: its own options (before the subcommand) none of `code`; a subcommand of the table's (no alias, no
 * git-<name> found along PATH) given none of its code options; and no file it obeys not as approved (git.ts).
 */
function gitNotSafe(words: readonly string[], env: ReadonlyMap<string, string>, cwd: string, code: readonly string[]): string | null {
  const w = gitWords(words, code, cwd);
  return typeof w === 'string' || w === null ? w : gitObeysChanged(w.dir, w.rest, env);
}

/** Why git's words are not safe (see gitNotSafe), or null for git alone, or the folder it works in and the words after its subcommand. */
export function gitWords(
  words: readonly string[],
  code: readonly string[],
  cwd: string,
): string | null | { dir: string; sub: string; rest: string[] } {
  let dir = cwd;
  let i = 1;
  for (; i < words.length && words[i].startsWith('-'); i++) {
    const w = words[i];
    if (isCodeOption(w, code)) return `git ${w}`;
    if (w === '-C') dir = path.resolve(dir, words[i + 1] ?? '');
    if (table.git.takes_value.includes(w)) i++;
  }
  if (i >= words.length) return null; // (git --version, git alone)
  const sub = words[i];
  if (!GIT_SUBCOMMANDS.test(sub)) return `git ${sub}, not a git command of the table,`;
  const rest = words.slice(i + 1);
  for (const w of rest) if (isCodeOption(w, GIT_SUB_CODE[sub] ?? [])) return `git ${sub} ${w}`;
  return { dir, sub, rest };
}

/** The variables every start after taking in gets (the table's `git.neutral`): git opens no editor or pager, runs no hook. */
export function gitNeutral(): string[] {
  const n = table.git.neutral;
  const out = Object.entries(n.env).map(([k, v]) => `${k}=${v}`);
  out.push(`GIT_CONFIG_COUNT=${n.config.length}`);
  n.config.forEach(([k, v], i) => out.push(`GIT_CONFIG_KEY_${i}=${k}`, `GIT_CONFIG_VALUE_${i}=${v}`));
  return out;
}
