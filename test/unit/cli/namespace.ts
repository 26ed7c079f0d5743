// Runs a command with one system folder (/etc/claude-code, /etc/gemini-cli, /etc/codex) replaced by a temp folder,
// in a private mount namespace (unshare -m, as root): the agents read their administrator files only at fixed
// system paths, and so does `mcp-gate install --managed`. Where the real /etc has no such folder, /etc is an
// overlay inside the namespace, so nothing of the real /etc changes. Also: a stdio MCP server whose only effect is
// a marker file (written before it answers), for "this server never ran".
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI, ROOT, tempDir, type World } from '../helpers';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function script(target: string, dir: string, argv: string[]): string[] {
  const scratch = tempDir('mcp-gate-etc-');
  fs.mkdirSync(path.join(scratch, 'up'));
  fs.mkdirSync(path.join(scratch, 'work'));
  const sh = [
    'set -e',
    'if [ ! -d "$3" ]; then mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/up,workdir=$1/work" /etc; mkdir "$3"; fi',
    'mount --bind "$2" "$3"',
    'shift 3',
    'exec "$@"',
  ].join('\n');
  return ['-m', '--propagation', 'private', 'sh', '-c', sh, 'sh', scratch, dir, target, ...argv];
}

const plain = (t: string) => (t ?? '').replace(/\x1b\[[0-9;]*m/g, ''); // colours, whatever NO_COLOR says

/** Runs argv with `target` (a folder under /etc) bound to `dir`, in its own mount namespace. */
export function inNamespace(target: string, dir: string, argv: string[], cwd: string, env: Record<string, string>): Ran {
  const r = spawnSync('unshare', script(target, dir, argv), { cwd, env, encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw new Error(`unshare could not run (this test needs root and util-linux unshare): ${r.error.message}`);
  return { code: r.status ?? -1, stdout: plain(r.stdout), stderr: plain(r.stderr) };
}

/** The same, without blocking this process (for a command that talks to a server in this process). */
export function inNamespaceAsync(target: string, dir: string, argv: string[], cwd: string, env: Record<string, string>): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const p = spawn('unshare', script(target, dir, argv), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? -1, stdout: plain(stdout), stderr: plain(stderr) }));
  });
}

export function envOf(w: World): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store, NO_COLOR: '1', CI: '1' };
  for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
  return env;
}

/** A stdio MCP server whose only effect is a marker file (written before it answers). */
export function markerServer(dir: string, name: string): { marker: string; def: { type: 'stdio'; command: string; args: string[] } } {
  const marker = path.join(dir, `${name}.ran`);
  const file = path.join(dir, `${name}.js`);
  const sdk = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'cjs', 'server');
  fs.writeFileSync(
    file,
    [
      `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');`,
      `const { McpServer } = require(${JSON.stringify(path.join(sdk, 'mcp.js'))});`,
      `const { StdioServerTransport } = require(${JSON.stringify(path.join(sdk, 'stdio.js'))});`,
      `const s = new McpServer({ name: ${JSON.stringify(name)}, version: '1' });`,
      `s.tool('ping_${name.replace(/[^a-z0-9]/gi, '_')}', async () => ({ content: [{ type: 'text', text: 'pong' }] }));`,
      `s.connect(new StdioServerTransport());`,
    ].join('\n'),
  );
  return { marker, def: { type: 'stdio', command: process.execPath, args: [file] } };
}

let otherUserCli: string | undefined;
/**
 * The built CLI where another user (uid 65534, for the "not root" refusals) can run it: a copy in a folder every
 * user may traverse. The checkout itself may lie under a folder only root enters (a clean clone in a 0700 temporary
 * folder, as CI makes it), and dist/cli.js is one self-contained bundle.
 */
export function cliForOtherUser(): string {
  if (otherUserCli && fs.existsSync(otherUserCli)) return otherUserCli;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-cli-'));
  fs.chmodSync(dir, 0o755);
  otherUserCli = path.join(dir, 'cli.js');
  fs.copyFileSync(CLI, otherUserCli);
  fs.chmodSync(otherUserCli, 0o644);
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return otherUserCli;
}
