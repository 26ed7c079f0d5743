// Shared by the VS Code runners (test/vscode/run.mjs: mocha in the extension host; test/e2e/run.mjs: Playwright
// against the workbench): the test host from scripts/vscode-host.sh, quiet offline settings, an isolated
// environment, code-server (each tested version: hosts.json) in its own process group on 127.0.0.1, Debian's headless
// Chromium, and the workbench URL with its payload (extensionDevelopmentPath / extensionTestsPath).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import util from 'node:util';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const HOST_DIR = process.env.MCP_GATE_VSCODE_DIR || path.join(os.homedir(), '.cache/mcp-gate-vscode');

// Settings that keep the workbench quiet and offline: no telemetry, updates, gallery, experiments,
// recommendations, walkthroughs, schema downloads, port forwarding, git, AI features, or MCP Gate's first-run modal.
export const QUIET_OFFLINE_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'workbench.enableExperiments': false,
  'workbench.settings.enableNaturalLanguageSearch': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'json.schemaDownload.enable': false,
  'npm.fetchOnlinePackageInfo': false,
  'typescript.disableAutomaticTypeAcquisition': true,
  'remote.autoForwardPorts': false,
  'git.enabled': false,
  'git.autofetch': false,
  'chat.disableAIFeatures': true,
  'security.workspace.trust.startupPrompt': 'never',
  'security.workspace.trust.banner': 'never',
  // MCP Gate's first-run modal (routing VS Code's own starts); test/e2e's "first run" scenario switches it on.
  'mcpGate.askToRoute': false,
};

/** The tested VS Code versions (test/vscode/hosts.json), the first being the default. */
export const HOSTS = JSON.parse(fs.readFileSync(path.join(REPO, 'test/vscode/hosts.json'), 'utf8')).hosts;

/**
 * The code-server version a runner uses: `wanted` (a runner's --vscode), else $MCP_GATE_VSCODE_VERSION, else the
 * first of hosts.json. A VS Code version (1.139) or its prefix names the code-server whose minor it is (4.139.x).
 */
export function hostVersion(wanted = process.env.MCP_GATE_VSCODE_VERSION) {
  if (!wanted) return HOSTS[0].codeServer;
  const vscodeMinor = /^1\.(\d+)/.exec(wanted)?.[1];
  const hit = HOSTS.find((h) => h.codeServer === wanted || (vscodeMinor && h.codeServer.split('.')[1] === vscodeMinor));
  if (!hit)
    throw new Error(`VS Code ${wanted} is not a tested version (test/vscode/hosts.json: ${HOSTS.map((h) => h.codeServer).join(', ')})`);
  return hit.codeServer;
}

/** The host scripts/vscode-host.sh described in host-<code-server version>.json, or undefined when it is not installed. */
export function loadHost(wanted) {
  const version = hostVersion(wanted);
  const hostFile = path.join(HOST_DIR, `host-${version}.json`);
  if (!fs.existsSync(hostFile)) return undefined;
  const host = JSON.parse(fs.readFileSync(hostFile, 'utf8'));
  return { ...host, codeServerArgs: host.codeServerArgs ?? [], file: hostFile };
}

/** playwright-core's `chromium` from the host's tools folder. */
export function playwright(host) {
  return createRequire(import.meta.url)(host.playwrightCore);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * The environment code-server (and so the extension host) gets: ours, without npm's variables (from `npm run`) and
 * without VS Code's or code-server's own (a terminal inside an editor would make code-server hand the request to
 * that editor), with fresh HOME and XDG dirs so no user-level MCP configuration leaks in.
 */
export function isolatedEnv(dirs, extra = {}) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_|VSCODE_|CODE_SERVER_|ELECTRON_|PASSWORD$|HASHED_PASSWORD$|PORT$)/i.test(k)),
  );
  return Object.assign(env, {
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: dirs.xdgCache,
    XDG_STATE_HOME: dirs.xdgState,
    EXTENSIONS_GALLERY: '{}', // no marketplace: nothing to query
    ...extra,
  });
}

/**
 * Starts code-server in its own process group (so the extension host, pty host, file watcher and any server the
 * tests started go with it) and waits for /healthz. Returns { child, url, port, stop(), kill(signal) }. `port`: a
 * fixed port (the workbench keeps its state in the browser per origin, so a restart that must find it uses the same).
 * `harness`: false starts it as a user runs it, without the test harness's arguments (hosts.json `args`: 1.139's
 * smoke-test driver, which the URL payload needs but which also hides every notification toast) — the demo.
 */
export async function startCodeServer({
  host,
  runDir,
  userData,
  extensionsDir,
  env,
  trusted = true,
  logFile,
  port: wanted,
  harness = true,
}) {
  const port = wanted ?? (await freePort());
  const configFile = path.join(runDir, 'code-server.yaml');
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');
  const args = [
    host.codeServer,
    '--config',
    configFile,
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensionsDir,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    '--disable-proxy',
    '--ignore-last-opened',
    ...(trusted ? ['--disable-workspace-trust'] : []),
    ...(harness ? host.codeServerArgs : []),
  ];
  const log = fs.openSync(logFile ?? path.join(runDir, 'code-server.log'), 'w');
  const child = spawn(host.node, args, { env, cwd: runDir, stdio: ['ignore', log, log], detached: true });
  fs.closeSync(log);
  const alive = () => child.exitCode === null && child.signalCode === null;
  const kill = (signal) => {
    if (child.pid && alive()) {
      try {
        process.kill(-child.pid, signal);
      } catch {}
    }
  };
  const stop = async () => {
    if (alive()) {
      const exited = new Promise((r) => child.once('exit', r));
      kill('SIGTERM');
      const hard = setTimeout(() => kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(hard);
    }
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {} // stragglers in the group
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!alive())
      throw new Error(`code-server exited (${child.exitCode ?? child.signalCode}) before it was ready; see ${runDir}/code-server.log`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server not ready after 60 s; see ${runDir}/code-server.log`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, url, port, stop, kill };
}

/** Debian's headless Chromium with a fresh profile; every name but loopback fails inside it. */
export async function launchBrowser({ host, profileDir, env, viewport = { width: 1280, height: 800 }, colorScheme }) {
  const { chromium } = playwright(host);
  return chromium.launchPersistentContext(profileDir, {
    executablePath: host.chromium,
    headless: true,
    viewport,
    ...(colorScheme ? { colorScheme } : {}),
    env,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-sync',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-breakpad',
      '--disable-dev-shm-usage',
      // Chromium looks up Google hosts even so: make every name but loopback fail inside Chromium.
      '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost',
    ],
  });
}

/** The workbench URL that opens `folder` (or the `.code-workspace` file `workspace`) with the extension under development (and optionally a test suite). */
export function workbenchUrl(base, { folder, workspace, extensionDevelopmentPath, extensionTestsPath }) {
  const remote = (p) => `vscode-remote://${new URL(base).host}${p}`;
  const u = new URL(base + '/');
  if (workspace) u.searchParams.set('workspace', workspace);
  // A .code-workspace file opens as a (multi-root) workspace; anything else as a folder.
  else u.searchParams.set(folder.endsWith('.code-workspace') ? 'workspace' : 'folder', folder);
  const payload = [];
  if (extensionDevelopmentPath) payload.push(['extensionDevelopmentPath', remote(extensionDevelopmentPath)]);
  if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
  if (payload.length) u.searchParams.set('payload', JSON.stringify(payload));
  return u.toString();
}

// '%c INFO', 'color: #33f', 'message %s', 'x' -> 'INFO message x'
export function formatConsole(args) {
  let [first, ...rest] = args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
  if (typeof first !== 'string') return '';
  while (first.includes('%c')) {
    first = first.replace('%c', '');
    rest.shift();
  }
  return util.format(first.trim(), ...rest);
}
