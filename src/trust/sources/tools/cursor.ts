// Cursor: its files, what a repository of it pre-approves, and what `mcp-gate install cursor` changes. Its user
// servers are in ~/.cursor/mcp.json, a repository's in .cursor/mcp.json, where `${workspaceFolder}` names the
// project (install passes it as `--project`). It has no setting that keeps .cursor/mcp.json out, and no
// administrator layer MCP Gate knows of.
import * as path from 'node:path';
import { jsonChange } from './edits';
import { GATE_ENTRY_NAME, mcpServersPreApproval, repoFile, userFile, type AgentEdits, type Machine, type Tool } from './tool';

const REPOSITORY_FILE = '.cursor/mcp.json';

/** Its user servers: ~/.cursor/mcp.json. */
export function cursorUserFile(m: Machine): string {
  return path.join(m.home, '.cursor', 'mcp.json');
}

const agent: AgentEdits = {
  files: (m) => [{ file: cursorUserFile(m), format: 'json' }],
  install(read, files, gate) {
    const f = files[0].file;
    const text = read(f);
    return [
      jsonChange(f, text, [
        {
          path: ['mcpServers', GATE_ENTRY_NAME],
          value: { command: gate.command, args: [...gate.args, '--project', '${workspaceFolder}'] },
        },
      ]),
    ];
  },
};

export const cursor: Tool<'cursor'> & { agent: AgentEdits } = {
  kind: 'cursor',
  name: 'Cursor',
  sources: [repoFile(REPOSITORY_FILE, 'mcpServers'), userFile(cursorUserFile, 'mcpServers')],
  env: [],
  preApproval: (scan) => mcpServersPreApproval(scan, REPOSITORY_FILE),
  agent,
};
