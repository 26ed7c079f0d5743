// agentty: its MCP files, `.agentty/mcp.json` in a repository and, for the user, AGENTTY_MCP_CONFIG or else
// `~/.agentty/mcp.json` (the common `mcpServers` format; both may carry `imports` and `settings`), and the agent
// personas a repository keeps in `.agentty/agents/`.
import * as path from 'node:path';
import { repoFile, userFile, type Tool } from './tool';

export const agentty: Tool<'agentty'> = {
  kind: 'agentty',
  name: 'agentty',
  sources: [
    repoFile('.agentty/mcp.json', 'mcpServers', { canImport: true }),
    userFile((m) => m.env.AGENTTY_MCP_CONFIG || path.join(m.home, '.agentty', 'mcp.json'), 'mcpServers', { canImport: true }),
  ],
  env: ['AGENTTY_MCP_CONFIG'],
  steering: [{ relPath: '.agentty/agents', directory: true, what: 'agent persona' }],
};
