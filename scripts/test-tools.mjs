#!/usr/bin/env node
// Installs the development tools whose engines need Node 22 (test/tools/package.json + its lock: Claude Code for
// the agent tests, the MCP conformance suite) into test/tools/node_modules, with the Node 22 that
// `npm run vscode-host` installs (test/vscode/hosts.json; NODE22=<path to node> to use another). The root
// `npm ci` runs on the machine's Node (20 here) and so never sees them: no EBADENGINE warning, and no engines check
// that is only silenced. npm itself runs on that Node 22 (first on PATH, so Claude Code's postinstall does too).
// Idempotent: a marker records the lock's hash and the Node it was installed with; a changed lock reinstalls.
//   node scripts/test-tools.mjs [--check]   (--check: exit 1 with the fix when the tools are not installed)
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIR = path.join(ROOT, 'test', 'tools');
const MARKER = path.join(DIR, 'node_modules', '.mcp-gate-installed');

/** The Node 22 binary: NODE22, else the first Node 22 of test/vscode/hosts.json in the VS Code host cache. */
export function node22() {
  if (process.env.NODE22) return process.env.NODE22;
  const hostDir = process.env.MCP_GATE_VSCODE_DIR || path.join(process.env.HOME ?? '', '.cache/mcp-gate-vscode');
  const hosts = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/vscode/hosts.json'), 'utf8')).hosts;
  const h = hosts.find((x) => x.node.startsWith('22.'));
  if (!h) throw new Error('test/vscode/hosts.json names no Node 22');
  return path.join(hostDir, `node-${h.node}`, 'bin', 'node');
}

function wanted(node) {
  const lock = fs.readFileSync(path.join(DIR, 'package-lock.json'));
  return `${crypto.createHash('sha256').update(lock).digest('hex')} ${node}`;
}

function installed(node) {
  try {
    return fs.readFileSync(MARKER, 'utf8').trim() === wanted(node);
  } catch {
    return false;
  }
}

function main() {
  const node = node22();
  if (!fs.existsSync(node)) {
    console.error(`[test-tools] Node 22 not found at ${node}: run \`npm run vscode-host\` first (or set NODE22)`);
    process.exit(1);
  }
  if (installed(node)) {
    console.log('[test-tools] test/tools is installed (lock unchanged)');
    return;
  }
  if (process.argv.includes('--check')) {
    console.error('[test-tools] test/tools/node_modules is missing or stale: run `node scripts/test-tools.mjs`');
    process.exit(1);
  }
  // npm's own CLI, run by Node 22. `npm run` exports npm_* settings (prefix, user agent ...) that must not leak in.
  const npmCli =
    process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath)
      ? process.env.npm_execpath
      : path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  if (!fs.existsSync(npmCli)) {
    console.error(`[test-tools] npm not found at ${npmCli}`);
    process.exit(1);
  }
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/.test(k)));
  env.PATH = `${path.dirname(node)}${path.delimiter}${env.PATH ?? ''}`;
  fs.rmSync(MARKER, { force: true });
  console.log(`[test-tools] npm ci in test/tools with Node ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()}`);
  const r = spawnSync(node, [npmCli, 'ci', '--no-audit', '--no-fund'], { cwd: DIR, env, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('[test-tools] npm ci in test/tools failed');
    process.exit(1);
  }
  for (const f of ['node_modules/.bin/claude', 'node_modules/@modelcontextprotocol/conformance/dist/index.js']) {
    if (!fs.existsSync(path.join(DIR, f))) {
      console.error(`[test-tools] test/tools/${f} is missing after npm ci`);
      process.exit(1);
    }
  }
  fs.writeFileSync(MARKER, `${wanted(node)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
