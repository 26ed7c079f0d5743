// PROBE (temporary): what VS Code itself knows and starts from a workspace.
import * as fs from 'node:fs';
import * as vscode from 'vscode';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (...a: unknown[]) => console.log('  [own]', ...a);

function children(): { pid: number; ppid: number; cmd: string }[] {
  const out: { pid: number; ppid: number; cmd: string }[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ');
      out.push({ pid: Number(d), ppid, cmd });
    } catch {}
  }
  return out.filter((p) => p.cmd.includes('echo-server'));
}

async function timed<T>(p: Thenable<T>, ms: number): Promise<string> {
  try {
    const r = await Promise.race([Promise.resolve(p).then((v) => `ok ${JSON.stringify(v)}`), sleep(ms).then(() => 'TIMEOUT')]);
    return r;
  } catch (e) {
    return `ERR ${(e as Error)?.message ?? e}`;
  }
}

describe('own probe', function () {
  this.timeout(240_000);
  it('probe', async () => {
    const c = vscode.workspace.getConfiguration();
    for (const k of ['chat.mcp.access', 'chat.mcp.discovery.enabled', 'chat.mcp.autostart', 'chat.mcp.enabled', 'chat.disableAIFeatures', 'chat.plugins.enabled', 'mcp']) {
      log(`setting ${k} = ${JSON.stringify(c.get(k))} inspect=${JSON.stringify(c.inspect(k))}`);
    }
    log('trusted', vscode.workspace.isTrusted, 'pid', process.pid, 'HOME', process.env.HOME, 'XDG_CONFIG_HOME', process.env.XDG_CONFIG_HOME);
    const cmds = (await vscode.commands.getCommands(true)).filter((x) => x.includes('mcp'));
    log('commands', cmds.join(' '));
    await vscode.extensions.getExtension('mcp-gate.mcp-gate')!.activate();
    await sleep(3000);
    log('tools at start', vscode.lm.tools.map((t) => t.name).join(' '));
    const claudeDir = `${process.env.XDG_CONFIG_HOME}/Claude`;
    fs.mkdirSync(claudeDir, { recursive: true });
    fs.writeFileSync(`${claudeDir}/claude_desktop_config.json`, JSON.stringify({ mcpServers: { 'desktop-echo': { command: 'node', args: [`${vscode.workspace.workspaceFolders![0].uri.fsPath}/echo-server.mjs`, 'desktop'] } } }));
    await sleep(2000);
    const ids: [string, string][] = [
      ['mcp.config.ws0', 'mcp.config.ws0.fixture-echo'],
      ['mcp.config.ws0', 'mcp.config.ws0.settings-echo'],
      ['mcp.config.workspace', 'mcp.config.workspace.settings-echo'],
      ['cursor-workspace.0', 'cursor-workspace.0.cursor-echo'],
      ['mcp.config.usrlocal', 'mcp.config.usrlocal.fixture-echo'],
    ];
    const auth = new URL(process.env.VSCODE_PROBE_X ?? 'http://x').host;
    void auth;
    for (const [col, id] of ids) {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      const r = await timed(vscode.commands.executeCommand('workbench.mcp.showConfiguration', col, id), 5000);
      await sleep(500);
      const ed = vscode.window.activeTextEditor;
      log(`showConfiguration ${id}: ${r} -> ${ed ? `${ed.document.uri.toString()} sel ${ed.selection.start.line}:${ed.selection.start.character}-${ed.selection.end.line}:${ed.selection.end.character}` : 'no editor'}`);
    }
    for (const [, id] of ids) {
      const before = children().map((p) => p.pid);
      const r = await timed(vscode.commands.executeCommand('workbench.mcp.startServer', id, { waitForLiveTools: true, errorOnUserInteraction: true }), 15000);
      await sleep(1000);
      const after = children().filter((p) => !before.includes(p.pid));
      log(`startServer ${id}: ${r}; new processes: ${JSON.stringify(after)}`);
      log('tools', vscode.lm.tools.filter((t) => t.name.startsWith('mcp_')).map((t) => t.name).join(' '));
      await timed(vscode.commands.executeCommand('workbench.mcp.stopServer', id), 5000);
    }
    // everything VS Code knows: start '*'
    const before = children().map((p) => p.pid);
    const r = await timed(vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true, errorOnUserInteraction: true }), 20000);
    await sleep(1500);
    log(`startServer *: ${r}; new: ${JSON.stringify(children().filter((p) => !before.includes(p.pid)))}`);
    log('tools', vscode.lm.tools.filter((t) => t.name.startsWith('mcp_')).map((t) => t.name).join(' '));
    log('all echo processes', JSON.stringify(children()));
    try { log('markers', fs.readFileSync('/tmp/own/markers.jsonl', 'utf8')); } catch { log('no markers'); }
  });
});
