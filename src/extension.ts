// VS Code entry point: a thin adapter over the same core as the CLI. Activation does nothing heavy; commands
// evaluate the gate on demand. (The full extension — prompts, panel, chat gateway — builds on this.)
import * as vscode from 'vscode';
import { currentMachine } from './trust/catalogue';
import { evaluateGate } from './trust/gate';
import { doctorText } from './cli/render';

export function activate(context: vscode.ExtensionContext): void {
  const channel = vscode.window.createOutputChannel('MCP Gate', { log: true });
  context.subscriptions.push(
    channel,
    vscode.commands.registerCommand('mcpGate.doctor', () => {
      const storeDir = context.globalStorageUri.fsPath;
      for (const folder of vscode.workspace.workspaceFolders ?? []) {
        const report = evaluateGate({ projectDir: folder.uri.fsPath, storeDir, machine: currentMachine() });
        channel.info(`doctor for ${folder.uri.fsPath}\n${doctorText(report, 'globalStorage')}`);
      }
      channel.show(true);
    }),
  );
}

export function deactivate(): void {}
