// Sink modules for the load guard: Node's built-ins that run code they are given or start programs (vm, child_process,
// …). A file the approval pins as read (the manifest's `closure`) names none of them literally, so one asked for from
// such a file came by a name computed at run time, and is refused (why "sink").
import Module = require('node:module');
import path = require('node:path');
import { $, ACTIVE, phase, real } from './base';
import { getConfig } from './manifest';
import { refuse } from './verdict';

/**
 * Modules that run code they are given or start programs. A file the approval pins as read (`closure`) uses none of
 * them literally (MCP Gate's check of it would have pinned the server otherwise): one asked for from such a file
 * came by a name computed at run time, and is refused.
 */
const SINKS = new Set(['vm', 'repl', 'inspector', 'cluster', 'test', 'v8', 'wasi', 'child_process']);

export function checkSink(request: string, parentFile: string | undefined): void {
  if (!ACTIVE) return;
  const name = $.startsWith(request, 'node:') ? $.slice(request, 5) : request;
  // A built-in's sub-path is the built-in (`inspector/promises` runs code as `inspector` does: red team 13, case 01).
  const slash = $.indexOf(name, '/');
  const first = slash < 0 ? name : $.slice(name, 0, slash);
  const builtin = (Module as unknown as { isBuiltin?: (s: string) => boolean }).isBuiltin?.(request) ?? false;
  if (first === 'internal' && builtin && !phase.installing) {
    // Node's internal modules (internal/vm runs any text): reachable only because MCP Gate's wrappers pass
    // --expose-internals for the guard's own use, which requires them while it installs itself; no server needs
    // them (red team 13, case 13) — with a parent or without one (`Module._load('internal/…', null)`: red team 17).
    const p = parentFile ? (real(parentFile) ?? parentFile) : '(a require with no parent module)';
    const tail = `it asked for node:${name}, one of Node's internal modules, which MCP Gate exposes only to its load guard: no server may use them; remove that require (approving again does not change this)`;
    refuse({ p, rel: null, why: 'sink', sum: '', how: `node:${name}`, tail, rule: tail });
  }
  if (!parentFile) return;
  if (!$.setHas(SINKS, first) || !builtin) return;
  const cfg = getConfig();
  if (!cfg) return;
  const p = real(parentFile);
  if (p === null || !$.startsWith(p, cfg.root)) return;
  const rel = $.slice(p, cfg.root.length).split(path.sep).join('/');
  if ($.setHas(cfg.closure, rel)) refuse({ p, rel, why: 'sink', sum: '', how: `node:${name}` });
}
