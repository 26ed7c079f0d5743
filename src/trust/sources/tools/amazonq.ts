// Amazon Q Developer: a repository's `.amazonq/mcp.json` and the user's `~/.aws/amazonq/mcp.json`; `autoApprove`
// in a repository file pre-approves tool calls.
import * as path from 'node:path';
import { mcpServersPreApproval, repoFile, userFile, type Tool } from './tool';

const REPOSITORY_FILE = '.amazonq/mcp.json';

export const amazonq: Tool<'amazonq'> = {
  kind: 'amazonq',
  name: 'Amazon Q',
  sources: [repoFile(REPOSITORY_FILE, 'mcpServers'), userFile((m) => path.join(m.home, '.aws', 'amazonq', 'mcp.json'), 'mcpServers')],
  env: [],
  preApproval: (scan) => mcpServersPreApproval(scan, REPOSITORY_FILE),
};
