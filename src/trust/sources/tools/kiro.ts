// Kiro: a repository's `.kiro/settings/mcp.json` and the user's `~/.kiro/settings/mcp.json`; `autoApprove` in a
// repository file pre-approves tool calls.
import * as path from 'node:path';
import { mcpServersPreApproval, repoFile, userFile, type Tool } from './tool';

const REPOSITORY_FILE = '.kiro/settings/mcp.json';

export const kiro: Tool<'kiro'> = {
  kind: 'kiro',
  name: 'Kiro',
  sources: [repoFile(REPOSITORY_FILE, 'mcpServers'), userFile((m) => path.join(m.home, '.kiro', 'settings', 'mcp.json'), 'mcpServers')],
  env: [],
  preApproval: (scan) => mcpServersPreApproval(scan, REPOSITORY_FILE),
};
