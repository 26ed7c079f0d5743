// The CLI's wording for the next step in the core's messages (src/trust/words.ts): mcp-gate commands and flags.
import type { FrontEndWords } from '../trust/words';

export const SECRET_ENV_PREFIX = 'MCP_GATE_SECRET_';

export const CLI_WORDS: FrontEndWords = {
  review: (server) => `review it with \`mcp-gate get ${server}\` and approve it`,
  reviewAll: 'inspect with `mcp-gate get <server>`, then `mcp-gate approve <server>` or `mcp-gate reject <server>`',
  chooseSource: 'say which with --source FILE',
  storeOutside: 'use a store outside it (--store or MCP_GATE_STORE)',
  setSecret: (n) => `set ${SECRET_ENV_PREFIX}${n}`,
  doctor: 'mcp-gate doctor',
  showGrants: (server) => `\`mcp-gate get ${server}\` shows them`,
};
