// The CLI's wording for the next step in the core's messages (src/trust/words.ts): mcp-gate commands and flags.
import type { FrontEndWords } from '../trust/words';

export const SECRET_ENV_PREFIX = 'MCP_GATE_SECRET_';

/** The CLI's wording; `flags` (e.g. `--project "DIR"`) follows every command it names, for a reader elsewhere. */
export function cliWords(flags = ''): FrontEndWords {
  const f = flags ? ` ${flags}` : '';
  return {
    review: (server) => `review it with \`mcp-gate get ${server}${f}\` and approve it${f ? ` with \`mcp-gate approve ${server}${f}\`` : ''}`,
    reviewAll: `inspect with \`mcp-gate get <server>${f}\`, then \`mcp-gate approve <server>${f}\` or \`mcp-gate reject <server>${f}\``,
    chooseSource: 'say which with --source FILE',
    storeOutside: 'use a store outside it (--store or MCP_GATE_STORE)',
    setSecret: (n) => `set ${SECRET_ENV_PREFIX}${n}`,
    doctor: `mcp-gate doctor${f}`,
    showGrants: (server) => `\`mcp-gate get ${server}${f}\` shows them`,
    resetServer: (server) => `\`mcp-gate reset ${server}${f}\` returns it to pending`,
  };
}

export const CLI_WORDS: FrontEndWords = cliWords();
