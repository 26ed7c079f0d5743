#!/usr/bin/env node
// `npm run test:vscode`: every configuration of the extension's suite (the list below: which folder or workspace
// file, which user and folder settings, trusted or not, opened as a user would and reopened by MCP Gate) on every
// tested VS Code version (test/vscode/hosts.json), one test/vscode/run.mjs per pair. Every pair runs even after a
// red one; the closing line sums them ("N passed, N failed") and the exit code is 0 only if every run was green.
//   node test/vscode/all.mjs [--vscode <version>] [--match <text>]   (one version; only runs whose arguments contain text)
//   node test/vscode/all.mjs --e2e [--vscode <version>]               (test/e2e/run.mjs on every tested version instead)
//   node test/vscode/all.mjs --with-e2e [--vscode <version>]          (both: the suite's runs and test/e2e/run.mjs, one queue)
//   --jobs N (default: $MCP_GATE_TEST_JOBS, else 3): runs at once. Each run has its own code-server, port, browser
//   profile and state folder, so runs are independent; a run's output is printed whole when it ends. The queue starts
//   with the longest runs (end to end, then the whole suite's) so that no long run is left alone at the end.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HOSTS, REPO, hostVersion } from './harness.mjs';

const ROUTED = { 'chat.mcp.access': 'registry' };
const json = (v) => JSON.stringify(v);
/** Each configuration: run.mjs's arguments. */
export const RUNS = [
  ['--folder', 'test/fixtures/vscode-workspace'],
  ['--folder', 'test/fixtures/vscode-workspace', '--untrusted'],
  ['--folder', 'test/fixtures/multi-root/multi.code-workspace', '--grep', 'multi-root'],
  ['--folder', 'test/fixtures/vscode-workspace', '--settings', json(ROUTED), '--grep', 'own-starts|lenses|the gate in VS Code'],
  // VS Code 1.139's other collision behaviour (1.112 has none: the setting is unknown there and ignored)
  [
    '--folder',
    'test/fixtures/vscode-workspace',
    '--settings',
    json({ 'chat.mcp.collisionBehavior': 'suffix' }),
    '--grep',
    'the gate in VS Code',
  ],
  // chat.mcp.allowedServers in the user's settings: the gated servers are offered on the gateway's HTTP door (by URL)
  [
    '--folder',
    'test/fixtures/vscode-workspace',
    '--settings',
    json({ 'chat.mcp.allowedServers': [{ serverUrl: 'http://127.0.0.1:*/mcp/*' }] }),
    '--grep',
    'the gate in VS Code',
  ],
  [
    '--folder',
    'test/fixtures/override-repo',
    '--settings',
    json({ ...ROUTED, 'mcpGate.reopenOverridden': false }),
    '--grep',
    'repo-override',
  ],
  [
    '--workspace',
    'test/fixtures/override-repo/override.code-workspace',
    '--settings',
    json({ ...ROUTED, 'mcpGate.reopenOverridden': false }),
    '--grep',
    'repo-override',
  ],
  ['--folder', 'test/fixtures/override-repo', '--gated', '--grep', 'repo-override'],
  ['--folder', 'test/fixtures/override-repo', '--settings', json(ROUTED), '--expect-reopen', '--grep', 'repo-override'],
  [
    '--workspace',
    'test/fixtures/override-repo/override.code-workspace',
    '--settings',
    json(ROUTED),
    '--expect-reopen',
    '--grep',
    'repo-override',
  ],
  [
    '--folder',
    'test/fixtures/override-repo',
    '--settings',
    json(ROUTED),
    '--expect-reopen',
    '--override-after-open',
    '--grep',
    'repo-override',
  ],
  [
    '--workspace',
    'test/fixtures/override-repo/forged.code-workspace',
    '--settings',
    json(ROUTED),
    '--expect-reopen',
    '--grep',
    'repo-override',
  ],
  [
    '--folder',
    'test/fixtures/override-repo',
    '--folder-settings',
    json({ 'chat.mcp': { access: 'all' } }),
    '--settings',
    json(ROUTED),
    '--expect-reopen',
    '--grep',
    'repo-override',
  ],
  [
    '--folder',
    'test/fixtures/override-repo',
    '--folder-settings',
    json({ 'chat.mcp.enabled': true }),
    '--settings',
    json(ROUTED),
    '--expect-reopen',
    '--grep',
    'repo-override',
  ],
  [
    '--folder',
    'test/fixtures/override-repo',
    '--folder-settings',
    json({ 'chat.mcp.gallery': { serviceUrl: 'http://127.0.0.1:9' } }),
    '--settings',
    json(ROUTED),
    '--expect-reopen',
    '--grep',
    'repo-override',
  ],
  ['--folder', 'test/fixtures/override-repo', '--settings', json(ROUTED), '--expect-reopen', '--untrusted', '--grep', 'repo-override'],
  ['--folder', 'test/fixtures/npm-workspace', '--grep', 'pinned packages'],
  // the same server in .vscode/mcp.json and .mcp.json, routed: the gated tool, named after it, and nothing outside
  ['--folder', 'test/fixtures/same-name-repo', '--settings', json(ROUTED), '--grep', 'same-named'],
  // a change on disk to a running server's code (issue 28): on a copy of the folder, which the suite changes
  ['--folder', 'test/fixtures/watch-repo', '--copy', '--settings', json(ROUTED), '--grep', 'running closure'],
];

const { values: opt } = parseArgs({
  options: {
    vscode: { type: 'string' },
    match: { type: 'string' },
    e2e: { type: 'boolean', default: false },
    'with-e2e': { type: 'boolean', default: false },
    jobs: { type: 'string' },
  },
});
const jobs = Math.max(1, Number(opt.jobs ?? process.env.MCP_GATE_TEST_JOBS ?? 3) || 1);
const versions = opt.vscode ? [hostVersion(opt.vscode)] : HOSTS.map((h) => h.codeServer);
const SUITE = path.join(REPO, 'test/vscode/run.mjs');
const E2E = path.join(REPO, 'test/e2e/run.mjs');
/** [runner, args]: the end-to-end run, the suite's runs, or both. */
const runs = [
  ...(opt.e2e || opt['with-e2e'] ? [[E2E, []]] : []),
  ...(opt.e2e ? [] : RUNS.filter((r) => !opt.match || r.join(' ').includes(opt.match)).map((r) => [SUITE, r])),
];
/** Longest first: end to end, then the runs of the whole suite (no --grep), then the rest in the list's order. */
const weight = ([runner, args]) => (runner === E2E ? 2 : args.includes('--grep') ? 0 : 1);
runs.sort((a, b) => weight(b) - weight(a));
let passed = 0;
let failed = 0;
const red = [];
const t0 = Date.now();
// The end-to-end runs first (each works on copies of its own), then each version's runs: the two versions' runs of
// one configuration never run at once (some suites change their fixture folder while they run, e.g. multi-root).
const queue = [
  ...runs.filter(([runner]) => runner === E2E).flatMap(([runner, args]) => versions.map((version) => ({ version, runner, args }))),
  ...versions.flatMap((version) => runs.filter(([runner]) => runner !== E2E).map(([runner, args]) => ({ version, runner, args }))),
];
const total = queue.length;

/** One run, its output kept until it ends: { label, out, err, status, seconds }. */
function runOne({ version, runner, args }) {
  const label = `VS Code ${version}: ${path.relative(REPO, runner)} ${args.join(' ')}`;
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [runner, '--vscode', version, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (status) => resolve({ label, out, err, status, seconds: (Date.now() - started) / 1000 }));
  });
}

let done = 0;
async function worker() {
  for (let next = queue.shift(); next; next = queue.shift()) {
    const r = await runOne(next);
    done++;
    console.error(`[vscode-all] (${done}/${total}, ${r.seconds.toFixed(0)} s) ${r.label}`);
    process.stderr.write(r.err);
    process.stdout.write(r.out);
    const last = /(\d+) passed, (\d+) failed\s*$/.exec(r.out);
    passed += Number(last?.[1] ?? 0);
    failed += Number(last?.[2] ?? 0) || (r.status === 0 ? 0 : 1);
    if (r.status !== 0) red.push(r.label);
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, total) }, worker));
console.error(
  `[vscode-all] ${versions.length} version(s) × ${runs.length} run(s), ${Math.min(jobs, total)} at once, in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
);
for (const l of red) console.error(`[vscode-all] RED ${l}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(red.length ? 1 : 0);
