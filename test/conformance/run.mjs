#!/usr/bin/env node
// Runs the official MCP conformance suite's client scenarios (@modelcontextprotocol/conformance, pinned in
// test/tools/package.json: it needs Node 22, so the root `npm ci` does not install it; scripts/test-tools.mjs does) with MCP Gate's host as the client (test/conformance/client.ts, built to out/). The suite
// needs Node 22: NODE22, or the Node 22 that `npm run vscode-host` installs for a tested VS Code (test/vscode/hosts.json).
// Every scenario is time-bound; those MCP Gate refuses by design are expected failures, each with its reason,
// and must still end within the bound. Fails when a scenario that applies fails, an expected failure
// unexpectedly passes (the list is stale), or any scenario hangs. Results go to a temporary directory.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOST_DIR, HOSTS } from '../vscode/harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SUITE = path.join(ROOT, 'test', 'tools', 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const CLIENT = path.join(ROOT, 'out', 'test', 'conformance', 'client.js');
const node22 = HOSTS.find((h) => h.node.startsWith('22.'));
const NODE22 = process.env.NODE22 ?? (node22 ? path.join(HOST_DIR, `node-${node22.node}`, 'bin', 'node') : 'no Node 22 in test/vscode/hosts.json');
const BOUND_MS = 90_000;

/** The non-OAuth client scenarios of 0.2.0-alpha.12. */
const ALL = [
  'initialize', 'tools_call', 'request-metadata', 'http-standard-headers', 'http-custom-headers', 'http-invalid-tool-headers',
  'json-schema-ref-no-deref', 'json-schema-2020-12-preservation', 'sep-2322-client-request-state',
  'elicitation-sep1034-client-defaults', 'sse-retry',
];
const SCENARIOS = process.argv.length > 2 ? ALL.filter((s) => process.argv.slice(2).includes(s)) : ALL;

/** Scenarios MCP Gate fails by design, and why. (The OAuth scenarios are not run: MCP Gate runs no OAuth flow.) */
const EXPECTED_FAILURES = {
  'elicitation-sep1034-client-defaults': 'needs the client to answer an elicitation; MCP Gate refuses every server→client request',
  'sse-retry': 'needs a GET listening stream; MCP Gate opens none (the guarded fetch answers GET with 405 locally)',
  'sep-2322-client-request-state': 'needs the client to answer an InputRequiredResult with input responses; MCP Gate refuses input requests',
};

if (!fs.existsSync(NODE22)) {
  console.error(`conformance: Node 22 not found at ${NODE22}; run \`npm run vscode-host\` or set NODE22`);
  process.exit(1);
}
if (!fs.existsSync(SUITE)) {
  console.error(`conformance: ${SUITE} is missing; run \`npm run test:tools\``);
  process.exit(1);
}
if (!fs.existsSync(CLIENT)) {
  console.error(`conformance: ${CLIENT} is missing; run \`npx tsc -p tsconfig.test.json\``);
  process.exit(1);
}

function run(scenario, cwd) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(NODE22, [SUITE, 'client', '--command', `${process.execPath} ${CLIENT}`, '--scenario', scenario, '--timeout', '30000'], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, BOUND_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, hung: signal === 'SIGKILL', ms: Date.now() - started, out });
    });
  });
}

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-conformance-'));
let bad = 0;
try {
  for (const scenario of SCENARIOS) {
    const r = await run(scenario, cwd);
    const passed = r.code === 0 && /OVERALL: PASSED/.test(r.out);
    const expectedFail = EXPECTED_FAILURES[scenario];
    const summary = (/Passed: \d+\/\d+[^\n]*/.exec(r.out) ?? [''])[0];
    let verdict;
    if (r.hung) verdict = `HUNG (killed after ${BOUND_MS} ms)`;
    else if (passed) verdict = expectedFail ? 'passed, but listed as an expected failure (update the list)' : 'pass';
    else verdict = expectedFail ? `expected failure: ${expectedFail}` : 'FAIL';
    const ok = !r.hung && (expectedFail ? !passed : passed);
    if (!ok) bad++;
    console.log(`${ok ? '✔' : '✘'} ${scenario.padEnd(38)} ${verdict} (${(r.ms / 1000).toFixed(1)} s${summary ? `; ${summary}` : ''})`);
    if (!ok) console.log(r.out.split('\n').filter((l) => /FAILURE|Error|error/.test(l)).slice(0, 12).map((l) => `    ${l}`).join('\n'));
  }
} finally {
  fs.rmSync(cwd, { recursive: true, force: true });
}
const expected = SCENARIOS.filter((s) => EXPECTED_FAILURES[s]).length;
console.log(bad ? `conformance: ${bad} scenario(s) not as expected` : `conformance: ${SCENARIOS.length - expected} pass, ${expected} expected failures`);
process.exit(bad ? 1 : 0);
