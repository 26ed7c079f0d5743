// Test helpers: throwaway projects, homes and stores in the temp folder, an in-process gate input, and a runner
// for the built CLI (dist/cli.js) with a controlled environment.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Machine } from '../../src/trust/sources/catalogue';
import type { GateInput } from '../../src/trust/report';
import { Masker } from '../../src/policy/mask';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');

/**
 * A file of the Node-22-only development tools (test/tools: Claude Code, the conformance suite), which the root
 * `npm ci` does not install; `npm run test:all` installs them (scripts/test-tools.mjs) before the unit suite.
 * Missing, it throws the command that installs them.
 */
export function testTool(rel: string): string {
  const file = path.join(ROOT, 'test', 'tools', 'node_modules', rel);
  if (!fs.existsSync(file))
    throw new Error(`${file} is missing: run \`npm run test:tools\` (installs test/tools with the Node 22 of \`npm run vscode-host\`)`);
  return file;
}

const made: string[] = [];

export function tempDir(prefix = 'mcp-gate-test-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

export function cleanupTemp(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** Writes files (relative path → content) under dir, creating folders. */
export function writeFiles(dir: string, files: Record<string, string | Buffer>): string {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  return dir;
}

export interface World {
  project: string;
  home: string;
  store: string;
  env: Record<string, string | undefined>;
  machine: Machine;
  input: GateInput;
}

/** A project with the given files, an empty home, and a store outside both. */
export function world(
  files: Record<string, string | Buffer> = {},
  homeFiles: Record<string, string> = {},
  env: Record<string, string> = {},
): World {
  const base = tempDir();
  const project = writeFiles(path.join(base, 'project'), files);
  fs.mkdirSync(project, { recursive: true });
  const home = writeFiles(path.join(base, 'home'), homeFiles);
  fs.mkdirSync(home, { recursive: true });
  const store = path.join(base, 'store');
  const fullEnv: Record<string, string | undefined> = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    ...env,
  };
  const machine: Machine = { home, env: fullEnv, platform: 'linux' };
  return { project, home, store, env: fullEnv, machine, input: { projectDir: project, storeDir: store, machine, masker: new Masker() } };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI in a clean environment (no inherited MCP_GATE_* variables). */
export function cli(w: World, args: string[], opts: { input?: string; env?: Record<string, string> } = {}): CliResult {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
  for (const [k, v] of Object.entries({ ...w.env, ...opts.env })) if (v !== undefined) env[k] = v;
  const r = spawnSync(process.execPath, [CLI, ...args, '--project', w.project], {
    env,
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export const json = (v: unknown) => JSON.stringify(v, null, 2);

/** The project's own tsx (a devDependency): its package folder, and the folder of its bin for PATH. */
export const TSX_PACKAGE = path.join(ROOT, 'node_modules', 'tsx');
export const TSX_BIN = path.join(ROOT, 'node_modules', '.bin');

/** tsx installed into a workspace's node_modules as `npm install tsx` leaves it (its bin linked). */
export function installTsx(project: string): void {
  fs.cpSync(TSX_PACKAGE, path.join(project, 'node_modules', 'tsx'), { recursive: true, verbatimSymlinks: true });
  fs.mkdirSync(path.join(project, 'node_modules', '.bin'), { recursive: true });
  fs.symlinkSync('../tsx/dist/cli.mjs', path.join(project, 'node_modules', '.bin', 'tsx'));
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * The command `mcp-gate install <agent>` writes when the CLI runs from this checkout: this Node and MCP Gate's own
 * copy of the built CLI in the store (src/cli/install.ts defaultGateCommand), so the entry survives the checkout moving.
 */
export function installedGateCommand(store: string): string[] {
  const hash = createHash('sha256')
    .update(fs.readFileSync(fs.realpathSync(CLI), 'utf8'))
    .digest('hex')
    .slice(0, 12);
  return [fs.realpathSync(process.execPath), path.join(store, 'cli', hash, 'cli.js'), 'serve'];
}

/** Pids on this machine whose command line holds `marker` (not `exclude`; zombies too unless `skipZombies`). */
export function processesWith(marker: string, o: { exclude?: number; skipZombies?: boolean } = {}): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === o.exclude) continue;
    try {
      if (!fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(marker)) continue;
      if (o.skipZombies) {
        const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
        if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      }
      out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Waits (polling every 50 ms) until `cond` holds or `ms` passed; whether it holds. */
export async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

/** VS Code's own Node (22+, with module.registerHooks), kept by `npm run vscode-host`; undefined when it is not there. */
export function vscodeNode(): string | undefined {
  const dir = process.env.MCP_GATE_VSCODE_DIR || path.join(os.homedir(), '.cache', 'mcp-gate-vscode');
  return (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((n) => /^node-(2[2-9]|[3-9]\d)\./.test(n))
    .map((n) => path.join(dir, n, 'bin', 'node'))
    .find((b) => fs.existsSync(b));
}
