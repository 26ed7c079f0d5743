// pi: its MCP files, `.pi/mcp.json` in a repository and `~/.pi/mcp.json` for the user, in the common
// `{ "mcpServers": { … } }` format; both may carry `imports` and `settings`.
import * as path from 'node:path';
import { repoFile, userFile, type Tool } from './tool';

export const pi: Tool<'pi'> = {
  kind: 'pi',
  name: 'pi',
  sources: [
    repoFile('.pi/mcp.json', 'mcpServers', { canImport: true }),
    userFile((m) => path.join(m.home, '.pi', 'mcp.json'), 'mcpServers', { canImport: true }),
  ],
  env: [],
};
