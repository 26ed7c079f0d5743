// MCP Gate's Node.js load guard (contract: src/guard/CONTRACT.md). Built to dist/guard/node-guard.cjs by
// scripts/build-guard.mjs and preloaded into an MCP server's Node processes:
//
//   MCP_GATE_GUARD=/abs/manifest.json node --require /abs/dist/guard/node-guard.cjs server.js
//
// It refuses, before any of its code runs, every file about to become code whose bytes differ from what a person
// approved (the manifest's sha256 per workspace file; a copy in a scratch folder must match some approved file).
// Where loads are seen:
//   - Module.prototype._compile       every CommonJS source, hashed as the exact text V8 compiles
//   - Module._extensions['.json']     JSON read once, checked, parsed from the same bytes
//   - process.dlopen                  native addons
//   - module.registerHooks (Node 22.15+; in-thread), else the ESM loader's default loaders wrapped in place (with
//     --expose-internals, which MCP Gate's wrappers pass), else module.register (its loader thread; this same file
//     is the hooks module, preloaded there too): ESM, JSON and WASM modules, hook modules
//   - --loader / --import at preload  files named in execArgv / NODE_OPTIONS
//   - Worker                          entry checked; an explicit execArgv / env gets the guard put back
//   - fs's reads, eval, Function, vm, WebAssembly (taken.ts, strings.ts): text turned into code after the process
//                                     took in a file that is not as approved is refused, naming the file
//   - ChildProcess.prototype.spawn and the spawn_sync binding (every spawn/exec/fork and *Sync form): the exec check
//                                     on the arguments, and MCP_GATE_GUARD + NODE_OPTIONS=--require <this file> put
//                                     into the child's environment even when the caller passed its own env
// Only Node built-ins; nothing else of MCP Gate. With MCP_GATE_GUARD unset it does nothing.
//
// This file is the bundle's entry (scripts/build-guard.mjs): it installs the parts, each in its own file beside it —
// base (captured fs, this process), manifest, hash, verdict (the rule and the refusal), links, elf and native (native
// libraries), sqlite, sinks, esm (ES module hooks; also the hooks module's `resolve` and `load` exports, re-exported
// here), commonjs, exec-check and spawn (children), workers, taken (what a thread took in; names looked at), reads
// (fs as the server calls it), told (what a loader thread is told), strings (code from text) — in the order they were
// always installed.
import wt = require('node:worker_threads');
import { ACTIVE, phase } from './base';
import { getConfig } from './manifest';
import { disableCompileCache, installCommonJs } from './commonjs';
import { checkPreloadFlags, installEsm } from './esm';
import { installNative } from './native';
import { installChildren } from './spawn';
import { installSqlite } from './sqlite';
import { installWorkers } from './workers';
import { startMarks } from './taken';
import { installReads } from './reads';
import { installStrings, textEntry } from './strings';

export { check } from './verdict';
export { readElfDynamic } from './elf';
export { checkNative, NATIVE_REWALK_MS, NATIVE_WALK_MAX } from './native';
export { checkSink } from './sinks';
export { initialize, load, resolve } from './esm';

function install(): void {
  const internal = (wt as { isInternalThread?: boolean }).isInternalThread ?? (!wt.isMainThread && wt.parentPort === null);

  getConfig(); // read now, before any code of the server could replace what reading it uses (red team 9n)
  installCommonJs();
  installNative();
  installSqlite();
  disableCompileCache();

  checkPreloadFlags();
  if (internal) return; // Node's loader thread: it only runs the hook (registered by the thread that uses it)

  startMarks();
  installReads();
  installStrings();

  installChildren();
  installWorkers();
  installEsm();
  if (wt.isMainThread) textEntry();
}

if (ACTIVE) {
  try {
    install();
  } finally {
    phase.installing = false;
  }
}
