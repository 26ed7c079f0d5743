// Roo Code (a VS Code extension): a repository's `.roo/mcp.json` and the user's `mcp_settings.json` in the
// extension's globalStorage of VS Code's user folder; `alwaysAllow` in a repository file pre-approves tool calls.
import * as path from 'node:path';
import { mcpServersPreApproval, repoFile, userFile, vscodeUserDir, type Tool } from './tool';

const REPOSITORY_FILE = '.roo/mcp.json';

export const roo: Tool<'roo'> = {
  kind: 'roo',
  name: 'Roo Code',
  sources: [
    repoFile(REPOSITORY_FILE, 'mcpServers'),
    userFile(
      (m) => path.join(vscodeUserDir(m, 'Code'), 'globalStorage', 'rooveterinaryinc.roo-cline', 'settings', 'mcp_settings.json'),
      'mcpServers',
    ),
  ],
  env: ['XDG_CONFIG_HOME', 'APPDATA'],
  preApproval: (scan) => mcpServersPreApproval(scan, REPOSITORY_FILE),
};
