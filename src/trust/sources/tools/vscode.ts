// VS Code: its mcp.json files (a workspace folder's .vscode/mcp.json; the user profile's mcp.json of VS Code,
// VS Code Insiders and code-server, under the platform's application-data folder or XDG_CONFIG_HOME/XDG_DATA_HOME),
// the workspace settings file whose user-only keys a repository must not set, and the GitHub Copilot files of a
// repository that steer the chat agent (instructions, prompts, chat modes). What VS Code itself starts and how a
// repository's `chat.mcp.*` settings override the user's is in ../vscode-own.ts.
import * as path from 'node:path';
import { repoFile, userFile, vscodeUserDir, xdgData, type Machine, type Tool } from './tool';

/** A workspace folder's settings file (relative, `/`-separated). */
export const VSCODE_WORKSPACE_SETTINGS = '.vscode/settings.json';

/** The mcp.json of the VS Code profile an extension's globalStorage folder belongs to (`<User>/globalStorage/<id>`). */
export function vscodeProfileMcpJson(extensionStorageDir: string): string {
  return path.join(extensionStorageDir, '..', '..', 'mcp.json');
}

/** code-server's user folder: `<XDG_DATA_HOME>/code-server/User`. */
function codeServerUserDir(m: Machine): string {
  return path.join(xdgData(m), 'code-server', 'User');
}

export const vscode: Tool<'vscode'> = {
  kind: 'vscode',
  name: 'VS Code',
  sources: [
    repoFile('.vscode/mcp.json', 'vscode'),
    userFile((m) => path.join(vscodeUserDir(m, 'Code'), 'mcp.json'), 'vscode'),
    userFile((m) => path.join(vscodeUserDir(m, 'Code - Insiders'), 'mcp.json'), 'vscode'),
    userFile((m) => path.join(codeServerUserDir(m), 'mcp.json'), 'vscode'),
  ],
  env: ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'APPDATA'],
  // .vscode/ also holds tasks that run on folder open and settings VS Code obeys: protected as a whole.
  protect: ['.vscode'],
  steering: [
    { relPath: '.github/copilot-instructions.md', directory: false, what: 'Copilot instructions' },
    { relPath: '.github/chatmodes', directory: true, what: 'chat mode' },
    { relPath: '.github/prompts', directory: true, what: 'prompt file' },
    { relPath: '.github/instructions', directory: true, what: 'instructions file' },
  ],
};
