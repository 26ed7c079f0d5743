#!/usr/bin/env node
// Runs the extension's mocha suite inside a real VS Code: code-server (--vscode <version>, default the first of
// test/vscode/hosts.json; test/vscode/all.mjs runs every configuration on every tested version) on 127.0.0.1,
// its web workbench in Debian's headless Chromium driven by playwright-core. The window opens the workspace
// folder given on the command line and loads the extension under development (the repository root) and the
// suite through the workbench URL's payload (extensionDevelopmentPath / extensionTestsPath); VS Code runs the
// suite in its extension host and reports the exit code to the page (window.codeAutomationExit).
// The host comes from scripts/vscode-host.sh (`npm run vscode-host`), found through its host.json in
// $MCP_GATE_VSCODE_DIR (default ~/.cache/mcp-gate-vscode).
//
// usage: node test/vscode/run.mjs [--folder] <workspace folder or .code-workspace file> [--tests out/test/vscode/suite/index.js]
//          [--extension <dir>] [--timeout <s>] [--grep <text>] [--settings '<json>'] [--untrusted]
//          [--workspace <file.code-workspace> | --gated] [--expect-reopen [--override-after-open]] [--folder-settings '<json>'] [--copy]
//          [--run-dir <dir>] [--keep] [--verbose] [--vscode <code-server or VS Code version>]
// --workspace opens a workspace file (its folders) instead of the folder; --gated opens the folder through the
// one-folder workspace file MCP Gate itself writes to route it (src/trust/sources/vscode-own.ts, gatedWorkspaceText).
// --expect-reopen first opens the window as a user would (the extension, no suite) and waits for MCP Gate to reopen
// it by itself inside its own workspace file (a repository override, src/vscode/routing.ts); the suite then runs in
// that reopened window (VS Code keeps only extensionDevelopmentPath across a reopen, so the harness adds the suite).
// --override-after-open opens a copy of the folder without its .vscode/settings.json and writes that file back once
// MCP Gate is up (a checkout that brings the override into an open window). --folder-settings opens a copy of the
// folder whose .vscode/settings.json is the given text instead (another spelling of an override). --copy opens a
// copy of the folder (in the run's folder) as it is, for a suite that changes the workspace's files.
// Each run gets fresh state (user data, extensions, XDG dirs, HOME, browser profile) in a new folder under
// $TMPDIR, removed after a green run unless --keep, kept (and named) after a red one, with code-server.log,
// workbench.log (the page's console, extension host included) and results.json. The last line printed is
// "N passed, N failed"; the exit code is 0 only if VS Code reported 0 and at least one test ran.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import {
  formatConsole,
  HOST_DIR,
  hostVersion,
  isolatedEnv,
  launchBrowser,
  loadHost,
  QUIET_OFFLINE_SETTINGS,
  REPO,
  startCodeServer,
  workbenchUrl as payloadUrl,
} from './harness.mjs';

const T0 = Date.now();
const note = (msg) => console.error(`[vscode-test +${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    folder: { type: 'string' },
    tests: { type: 'string', default: path.join(REPO, 'out/test/vscode/suite/index.js') },
    extension: { type: 'string', default: REPO },
    timeout: { type: 'string', default: '300' },
    grep: { type: 'string' },
    settings: { type: 'string', default: '{}' },
    untrusted: { type: 'boolean', default: false },
    workspace: { type: 'string' },
    gated: { type: 'boolean', default: false },
    'expect-reopen': { type: 'boolean', default: false },
    'override-after-open': { type: 'boolean', default: false },
    'folder-settings': { type: 'string' },
    copy: { type: 'boolean', default: false },
    'run-dir': { type: 'string' },
    keep: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    vscode: { type: 'string' },
  },
});

// ---- what to run ------------------------------------------------------------------------------------------
function usage(msg) {
  console.error(
    `error: ${msg}\nusage: node test/vscode/run.mjs [--folder] <workspace> [--tests <index.js>] [--timeout <s>] [--grep <text>] [--keep]`,
  );
  console.log('0 passed, 1 failed');
  process.exit(2);
}
const folderArg = opt.folder ?? positionals[0] ?? (opt.workspace ? path.dirname(opt.workspace) : undefined);
if (!folderArg) usage('no workspace folder given');
let folder = path.resolve(folderArg);
if (opt.workspace && !fs.statSync(opt.workspace, { throwIfNoEntry: false })?.isFile())
  usage(`workspace file ${opt.workspace} does not exist`);
if (opt.workspace && opt.gated) usage('--workspace and --gated exclude each other');
if (opt.gated && opt['expect-reopen']) usage('--gated and --expect-reopen exclude each other');
if (opt['override-after-open'] && (!opt['expect-reopen'] || opt.workspace))
  usage('--override-after-open needs --expect-reopen and a folder');
const extensionDir = path.resolve(opt.extension);
const testsFile = path.resolve(opt.tests);
const isWorkspaceFile = folder.endsWith('.code-workspace') && fs.statSync(folder, { throwIfNoEntry: false })?.isFile();
if (!isWorkspaceFile && !fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) usage(`workspace folder ${folder} does not exist`);
if (!fs.existsSync(testsFile)) usage(`${testsFile} does not exist (compile the suite: tsc -p tsconfig.vscode.json)`);
const manifest = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
if (manifest.main && !fs.existsSync(path.join(extensionDir, manifest.main))) usage(`${manifest.main} is missing (npm run build)`);
let extraSettings;
try {
  extraSettings = JSON.parse(opt.settings);
} catch {
  usage('--settings is not JSON');
}
const timeoutMs = Number(opt.timeout) * 1000;

let host;
try {
  host = loadHost(opt.vscode);
} catch (e) {
  usage(e.message);
}
if (!host)
  usage(
    `no VS Code test host for ${hostVersion(opt.vscode)} in ${HOST_DIR}: run \`npm run vscode-host\` (bash scripts/vscode-host.sh) first`,
  );

// ---- fresh state -------------------------------------------------------------------------------------------
let runDir;
if (opt['run-dir']) {
  runDir = path.resolve(opt['run-dir']);
  fs.rmSync(runDir, { recursive: true, force: true });
  fs.mkdirSync(runDir, { recursive: true });
} else {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-vscode-run-'));
}
const dir = (...p) => {
  const d = path.join(runDir, ...p);
  fs.mkdirSync(d, { recursive: true });
  return d;
};
const userData = dir('user-data');
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.writeFileSync(
  path.join(userData, 'User/settings.json'),
  JSON.stringify(
    {
      ...QUIET_OFFLINE_SETTINGS,
      ...(opt.untrusted ? { 'security.workspace.trust.enabled': true } : {}),
      ...extraSettings,
    },
    null,
    2,
  ),
);
const resultsFile = path.join(runDir, 'results.json');
/** MCP Gate's folder for its own workspace files in this run's profile (its globalStorage). */
const gatedDir = () => dir('user-data', 'User', 'globalStorage', manifest.publisher + '.' + manifest.name, 'workspaces');
let heldOverride; // --override-after-open: [file, its bytes], written back once MCP Gate is up
if (opt['override-after-open'] || opt['folder-settings'] !== undefined || opt.copy) {
  if (opt.workspace) usage('--copy, --folder-settings and --override-after-open open a folder, not --workspace');
  const copy = path.join(dir('copy'), path.basename(folder));
  fs.cpSync(folder, copy, { recursive: true });
  folder = copy;
  const f = path.join(copy, '.vscode/settings.json');
  if (opt['folder-settings'] !== undefined) fs.writeFileSync(f, opt['folder-settings']);
  if (opt['override-after-open']) {
    heldOverride = [f, fs.readFileSync(f)];
    fs.rmSync(f);
  }
}
let workspaceFile = opt.workspace ? path.resolve(opt.workspace) : undefined;
if (opt.gated) {
  const own = path.join(REPO, 'out/src/trust/sources/vscode-own.js');
  if (!fs.existsSync(own)) usage(`${own} is missing (tsc -p tsconfig.vscode.json)`);
  const { gatedWorkspaceText } = createRequire(import.meta.url)(own);
  // Where MCP Gate keeps its own workspace files (its global storage): only there is such a file taken as its own.
  workspaceFile = path.join(gatedDir(), `${path.basename(folder)}.code-workspace`);
  fs.writeFileSync(workspaceFile, gatedWorkspaceText([folder]));
}

// The environment code-server and so the extension host get (see harness.mjs: isolated HOME and XDG dirs).
const env = isolatedEnv(
  {
    home: dir('home'),
    xdgConfig: dir('xdg', 'config'),
    xdgData: dir('xdg', 'data'),
    xdgCache: dir('xdg', 'cache'),
    xdgState: dir('xdg', 'state'),
  },
  {
    MCP_GATE_VSCODE_RESULTS: resultsFile,
    MCP_GATE_VSCODE_WORKSPACE: folder,
    MCP_GATE_VSCODE_TRUSTED: String(!opt.untrusted),
    ...(opt['expect-reopen'] ? { MCP_GATE_VSCODE_EXPECT_REOPEN: '1' } : {}),
    ...(workspaceFile ? { MCP_GATE_VSCODE_WORKSPACE_FILE: workspaceFile } : {}),
    ...(opt.grep ? { MCP_GATE_VSCODE_GREP: opt.grep } : {}),
  },
);

// ---- processes, and stopping them whatever happens ---------------------------------------------------------
let codeServer;
let browser;
async function stopAll() {
  await browser?.close().catch(() => {});
  browser = undefined;
  await codeServer?.stop();
}
process.on('exit', () => codeServer?.kill('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, async () => {
    note(`${sig}: stopping`);
    await stopAll();
    console.log('0 passed, 1 failed');
    process.exit(130);
  });
}

const workbenchLog = [];
function workbenchUrl(base) {
  return payloadUrl(base, { folder, workspace: workspaceFile, extensionDevelopmentPath: extensionDir, extensionTestsPath: testsFile });
}

/** Waits until the page's workspace is a gated workspace file MCP Gate wrote (not `before`); returns its path. */
async function waitForReopen(page, before) {
  const own = path.join(REPO, 'out/src/trust/sources/vscode-own.js');
  if (!fs.existsSync(own)) throw new Error(`${own} is missing (tsc -p tsconfig.vscode.json)`);
  const { isGatedWorkspace } = createRequire(import.meta.url)(own);
  const ownDir = fs.realpathSync(gatedDir());
  const end = Date.now() + 90_000;
  while (Date.now() < end) {
    const ws = new URL(page.url()).searchParams.get('workspace');
    const file = ws?.replace(/^vscode-remote:\/\/[^/]*/, '');
    if (file && file !== before && fs.existsSync(file)) {
      const text = fs.readFileSync(file, 'utf8');
      const folders = (JSON.parse(text).folders ?? []).map((f) => f.path);
      if (!isGatedWorkspace({ path: fs.realpathSync(file), text }, ownDir, folders))
        throw new Error(`the window was reopened inside ${file}, which is not MCP Gate's gated workspace file`);
      return file;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`MCP Gate did not reopen the window within 90 s (still at ${page.url()})`);
}

// ---- the run -------------------------------------------------------------------------------------------------
let hostExit; // what VS Code reported through codeAutomationExit
let harnessError; // why the harness could not get that far
try {
  codeServer = await startCodeServer({ host, runDir, userData, extensionsDir: dir('extensions'), env, trusted: !opt.untrusted });
  const url = codeServer.url;
  note(
    `code-server ${host.codeServerVersion} = VS Code ${host.vscodeVersion} (node ${host.nodeVersion}) ready at ${url}, pid ${codeServer.child.pid}; state in ${runDir}`,
  );

  browser = await launchBrowser({ host, profileDir: dir('chromium'), env: { ...env, HOME: dir('home') } });
  const page = browser.pages()[0] ?? (await browser.newPage());
  // The workbench's first load (its bundles, the extension host's start) was seen to take over Playwright's 30 s on a
  // loaded machine (CI runs three windows at once): a navigation is given as long as the workbench's own first paint.
  page.setDefaultNavigationTimeout(120_000);

  let reportExit;
  const exited = new Promise((resolve) => {
    reportExit = resolve;
  });
  // The hooks VS Code's web workbench calls when it runs extension tests (the same ones @vscode/test-web uses).
  await page.exposeFunction('codeAutomationExit', (code) => reportExit(code));
  // The workbench, in test mode, also hands every console message (its own and the extension host's: the
  // suite's spec reporter, console.log in tests) to codeAutomationLog. Kept in workbench.log; printed with
  // --verbose, and its tail after a red run.
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const line = formatConsole(Array.isArray(args) ? args : [args]);
    workbenchLog.push(line);
    if (opt.verbose) console.error(`[workbench ${type}] ${line}`);
  });
  page.on('pageerror', (e) => console.error('[page error]', e.message));

  const failed = new Promise((_, reject) => {
    const t = setTimeout(() => reject(new Error(`no result from VS Code after ${opt.timeout} s`)), timeoutMs);
    t.unref();
    page.on('crash', () => reject(new Error('the workbench page crashed')));
    browser.on('close', () => reject(new Error('the browser closed')));
    codeServer.child.on('exit', (code, sig) => reject(new Error(`code-server exited (${code ?? sig}) during the run`)));
  });
  failed.catch(() => {}); // also rejects during the shutdown below; only the race's outcome matters
  let target = workbenchUrl(url);
  if (opt['expect-reopen']) {
    const first = payloadUrl(url, { folder, workspace: workspaceFile, extensionDevelopmentPath: extensionDir });
    note(`opening ${first} (no suite), waiting for MCP Gate to reopen the window`);
    await page.goto(first);
    if (heldOverride) {
      await page.locator('.statusbar-item', { hasText: 'MCP Gate' }).first().waitFor({ timeout: 90_000 });
      fs.writeFileSync(...heldOverride);
      note(`MCP Gate is up; wrote ${heldOverride[0]}`);
    }
    const reopened = await waitForReopen(page, workspaceFile);
    note(`MCP Gate reopened the window inside ${reopened}`);
    target = payloadUrl(url, { folder, workspace: reopened, extensionDevelopmentPath: extensionDir, extensionTestsPath: testsFile });
  }
  note(`opening ${target}`);
  await page.goto(target);
  hostExit = await Promise.race([exited, failed]);
  note(`VS Code reported exit code ${hostExit}`);
} catch (e) {
  harnessError = e instanceof Error ? e.message : String(e);
} finally {
  await stopAll();
}

// ---- report ----------------------------------------------------------------------------------------------------
let results;
try {
  results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
} catch {}
let passed = results?.passed ?? 0;
let failed = results?.failed ?? 0;
for (const t of results?.tests ?? []) {
  console.log(`  ${t.state === 'passed' ? 'ok  ' : 'FAIL'} ${t.title}${t.ms !== undefined ? ` (${t.ms} ms)` : ''}`);
  if (t.error)
    console.log(
      t.error
        .split('\n')
        .slice(0, 8)
        .map((l) => `         ${l}`)
        .join('\n'),
    );
}
if (harnessError) console.log(`harness error: ${harnessError}`);
else if (!results) console.log(`no test results: VS Code reported exit code ${hostExit} but the suite wrote nothing (did it load?)`);
else if (hostExit !== 0 && failed === 0) console.log(`VS Code reported exit code ${hostExit} although no test failed`);
else if (passed + failed === 0) console.log('no test ran');
// Anything that kept the suite from reporting a clean run counts as one failure, so the closing line can never
// read as green when the exit code is not.
const ok = !harnessError && hostExit === 0 && failed === 0 && passed > 0;
if (!ok && failed === 0) failed = 1;
fs.writeFileSync(path.join(runDir, 'workbench.log'), workbenchLog.join('\n') + '\n');
if (!ok && !opt.verbose && workbenchLog.length) {
  console.error(`[vscode-test] last lines of ${runDir}/workbench.log:`);
  for (const line of workbenchLog.slice(-40)) console.error(`  ${line}`);
}
if (!ok || opt.keep) console.error(`[vscode-test] run state kept in ${runDir} (code-server.log, results.json)`);
else fs.rmSync(runDir, { recursive: true, force: true });
console.error(`[vscode-test] wall time ${((Date.now() - T0) / 1000).toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(ok ? 0 : 1);
