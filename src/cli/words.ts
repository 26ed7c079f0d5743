// The CLI's wording for the next step in the core's messages (src/trust/words.ts): mcp-gate commands and flags.
import type { FrontEndWords } from '../trust/words';

export const SECRET_ENV_PREFIX = 'MCP_GATE_SECRET_';

/** The CLI's wording; `flags` (e.g. `--project "DIR"`) follows every command it names, for a reader elsewhere. */
export function cliWords(flags = ''): FrontEndWords {
  const f = flags ? ` ${flags}` : '';
  const q = (server: string) => shellArg(server);
  return {
    review: (server) =>
      `review it with \`mcp-gate get ${q(server)}${f}\` and approve it${f ? ` with \`mcp-gate approve ${q(server)}${f}\`` : ''}`,
    reviewAll: `inspect with \`mcp-gate get <server>${f}\`, then \`mcp-gate approve <server>${f}\` or \`mcp-gate reject <server>${f}\``,
    chooseSource: 'say which with --source FILE',
    storeOutside: 'use a store outside it (--store or MCP_GATE_STORE)',
    setSecret: (n) => `set ${SECRET_ENV_PREFIX}${n}`,
    doctor: `mcp-gate doctor${f}`,
    showGrants: (server) => `\`mcp-gate get ${q(server)}${f}\` shows them`,
    showTools: (server) => `\`mcp-gate tools ${q(server)}${f}\``,
    resetServer: (server) => `\`mcp-gate reset ${q(server)}${f}\` returns it to pending`,
  };
}

export const CLI_WORDS: FrontEndWords = cliWords();

/** One argument as a POSIX shell reads it back: bare when it holds nothing the shell treats specially, else quoted. */
export function shellArg(s: string): string {
  return /^[A-Za-z0-9_\/.,:@%+=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The flags every hint carries so that, run as written, it acts on the same project and store as the command
 * that printed it: `--project DIR` and `--store DIR` as given (absolute), nothing when they were not given (the
 * hint then runs where the command ran, as it did).
 */
export function hintFlags(o: { project?: string; store?: string }, resolve: (p: string) => string): string {
  const f: string[] = [];
  if (o.project !== undefined) f.push(`--project ${shellArg(resolve(o.project))}`);
  if (o.store !== undefined) f.push(`--store ${shellArg(resolve(o.store))}`);
  return f.join(' ');
}
