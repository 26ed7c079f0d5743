#!/usr/bin/env node
// `npm run test:all`, the README's test command: every suite, in order, each phase timed. It stops at the first red
// phase (as `a && b && …` would) and always ends with one line per phase and its duration, so where the time goes is
// in every CI log. The suites build and compile what they need themselves (a build takes about a second; the test
// compile is incremental, tsconfig.test.json, so it costs its time once). The VS Code suite's runs and the end-to-end
// runs share one queue, three at a time, longest first (test/vscode/all.mjs --with-e2e --jobs; MCP_GATE_TEST_JOBS
// sets it): a run mostly waits on VS Code, so a third one fills the cores the other two leave idle.
import { spawn } from 'node:child_process';

/** [phase, command]: run by the shell of npm run, from the repository's root. */
const PHASES = [
  ['preflight (system packages)', 'node scripts/preflight.mjs tests'],
  ['tree check (start)', 'node scripts/tree-check.mjs --start'],
  ['lint', 'npm run --silent lint'],
  ['VS Code hosts', 'npm run --silent vscode-host'],
  ['agent CLIs for tests', 'npm run --silent test:tools'],
  ['unit', 'npm run --silent test'],
  ['servers from npm', 'npm run --silent test:servers'],
  ['conformance', 'npm run --silent test:conformance'],
  ['VS Code suites and end to end', 'npm run --silent test:vscode-e2e'],
  ['demo', 'npm run --silent test:demo'],
  ['tree check (end)', 'node scripts/tree-check.mjs --end'],
];

const fmt = (ms) => (ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${(ms / 1000).toFixed(1)} s`);

function run(command) {
  return new Promise((resolve) => {
    const child = spawn(command, { shell: true, stdio: 'inherit' });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const t0 = Date.now();
const done = [];
let red;
for (const [phase, command] of PHASES) {
  console.error(`\n[test:all] ${phase}: ${command}`);
  const started = Date.now();
  const code = await run(command);
  const ms = Date.now() - started;
  done.push([phase, ms, code]);
  console.error(`[test:all] ${phase}: ${code === 0 ? 'green' : `RED (exit ${code})`} in ${fmt(ms)}`);
  if (code !== 0) {
    red = phase;
    break;
  }
}
console.error('\n[test:all] phases:');
for (const [phase, ms, code] of done) console.error(`[test:all]   ${phase.padEnd(30)} ${fmt(ms).padStart(12)}${code === 0 ? '' : '  RED'}`);
console.error(`[test:all] ${red ? `RED at "${red}"` : 'all green'} in ${fmt(Date.now() - t0)}`);
process.exit(red ? 1 : 0);
