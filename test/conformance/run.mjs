#!/usr/bin/env node
// Runs the official MCP conformance suite's client scenarios (@modelcontextprotocol/conformance, pinned in
// test/tools/package.json: it needs Node 22, so the root `npm ci` does not install it; scripts/test-tools.mjs does) with MCP Gate's host as the client (test/conformance/client.ts, built to out/). The suite
// needs Node 22: NODE22, or the Node 22 that `npm run vscode-host` installs for a tested VS Code (test/vscode/hosts.json).
// Every scenario is time-bound, and so is every tool call the client makes in it (CALL_BOUND_MS, read from the
// client's output): those MCP Gate refuses by design are expected failures, each with its reason, and a refusal
// must still end the call at once — a server→client request MCP Gate refuses is answered with an error, so the
// server is never left waiting. Fails when a scenario that applies fails, an expected failure
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
const NODE22 =
  process.env.NODE22 ?? (node22 ? path.join(HOST_DIR, `node-${node22.node}`, 'bin', 'node') : 'no Node 22 in test/vscode/hosts.json');
const BOUND_MS = 60_000;
/** A call ends within 2 s, answered or refused (README, "Every refusal ends the exchange at once"). */
const CALL_BOUND_MS = 2_000;

/** The non-OAuth client scenarios of 0.2.0-alpha.12. */
const ALL = [
  'initialize',
  'tools_call',
  'request-metadata',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
  'json-schema-2020-12-preservation',
  'sep-2322-client-request-state',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
];
/** Scenarios whose point is a call: without a call recorded they prove nothing about the call bound. */
const MUST_CALL = ['tools_call', 'elicitation-sep1034-client-defaults', 'sep-2322-client-request-state', 'sse-retry'];
const SCENARIOS = process.argv.length > 2 ? ALL.filter((s) => process.argv.slice(2).includes(s)) : ALL;

/** Scenarios MCP Gate fails by design, and why. (The OAuth scenarios are not run: MCP Gate runs no OAuth flow.) */
const EXPECTED_FAILURES = {
  'elicitation-sep1034-client-defaults': 'needs the client to answer an elicitation; MCP Gate refuses every server→client request',
  'sse-retry':
    "needs the client to resume a call's stream that ended before its answer; MCP Gate fails that call at once (it resumes no stream)",
  'sep-2322-client-request-state':
    'needs the client to answer an InputRequiredResult with input responses; MCP Gate refuses input requests',
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

/** The client's own output (the suite saves it under the results folder), for the call durations. */
function clientOutput(results) {
  if (!fs.existsSync(results)) return '';
  return fs
    .readdirSync(results)
    .map((d) => {
      const f = path.join(results, d, 'stdout.txt');
      return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
    })
    .join('\n');
}

function run(scenario, cwd) {
  return new Promise((resolve) => {
    const started = Date.now();
    const results = path.join(cwd, `results-${scenario}`);
    const child = spawn(
      NODE22,
      [SUITE, 'client', '--command', `${process.execPath} ${CLIENT}`, '--scenario', scenario, '--timeout', '30000', '-o', results],
      { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, BOUND_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const calls = [...clientOutput(results).matchAll(/^(\S+): .*\(call (\d+) ms\)$/gm)].map((m) => ({ tool: m[1], ms: Number(m[2]) }));
      resolve({ code, hung: signal === 'SIGKILL', ms: Date.now() - started, out, calls });
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
    const slow = r.calls.filter((c) => c.ms > CALL_BOUND_MS);
    if (MUST_CALL.includes(scenario) && !r.calls.length) slow.push({ tool: 'no call recorded', ms: NaN });
    const calls = r.calls.map((c) => `${c.tool} ${c.ms} ms`).join(', ');
    let verdict;
    if (r.hung) verdict = `HUNG (killed after ${BOUND_MS} ms)`;
    else if (slow.length) verdict = `a call took over ${CALL_BOUND_MS} ms: ${slow.map((c) => `${c.tool} ${c.ms} ms`).join(', ')}`;
    else if (passed) verdict = expectedFail ? 'passed, but listed as an expected failure (update the list)' : 'pass';
    else verdict = expectedFail ? `expected failure: ${expectedFail}` : 'FAIL';
    const ok = !r.hung && !slow.length && (expectedFail ? !passed : passed);
    if (!ok) bad++;
    console.log(
      `${ok ? '✔' : '✘'} ${scenario.padEnd(38)} ${verdict} (${(r.ms / 1000).toFixed(1)} s${summary ? `; ${summary}` : ''}${calls ? `; calls: ${calls}` : ''})`,
    );
    if (!ok)
      console.log(
        r.out
          .split('\n')
          .filter((l) => /FAILURE|Error|error/.test(l))
          .slice(0, 12)
          .map((l) => `    ${l}`)
          .join('\n'),
      );
  }
} finally {
  fs.rmSync(cwd, { recursive: true, force: true });
}
const expected = SCENARIOS.filter((s) => EXPECTED_FAILURES[s]).length;
console.log(
  bad
    ? `conformance: ${bad} scenario(s) not as expected`
    : `conformance: ${SCENARIOS.length - expected} pass, ${expected} expected failures`,
);
process.exit(bad ? 1 : 0);
