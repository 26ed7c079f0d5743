#!/usr/bin/env node
// Prints Node's own option table for src/trust/plan/node-options.ts: every option `node --help` lists, split into
// those that take a value (`--name=…`, also accepted as the next argument) and switches (no value, or an optional
// `[=…]` that must be written with `=`). Run with each Node the project supports and merge:
//   node scripts/node-options.mjs node ~/.cache/mcp-gate-vscode/node-22.*/bin/node ~/.cache/mcp-gate-vscode/node-24.*/bin/node
// test/unit/trust/plan/node-options.test.ts checks the table against the running Node's `--help`.
import { execFileSync } from 'node:child_process';

export function optionsOf(helpText) {
  const value = new Set();
  const switches = new Set();
  for (const raw of helpText.split('\n')) {
    const m = /^\s{2}(-\S.*?)(?:\s{2,}|$)/.exec(raw);
    if (!m) continue;
    const parts = m[1].trim().split(/,\s+/);
    const last = parts[parts.length - 1];
    const takes = /=/.test(last) && !/\[=/.test(last);
    for (let p of parts) {
      p = p
        .replace(/\[?=.*$/, '')
        .trim()
        .split(/\s/)[0];
      if (!/^--?[a-zA-Z]/.test(p)) continue;
      (takes ? value : switches).add(p); // "--a, --b=…": the aliases of one option share its value
    }
  }
  for (const v of value) switches.delete(v);
  return { value, switches };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const value = new Set();
  const switches = new Set();
  for (const bin of process.argv.slice(2)) {
    const o = optionsOf(execFileSync(bin, ['--help'], { encoding: 'utf8' }));
    for (const v of o.value) value.add(v);
    for (const s of o.switches) switches.add(s);
  }
  for (const v of value) switches.delete(v);
  console.log(JSON.stringify({ value: [...value].sort(), switches: [...switches].sort() }, null, 1));
}
