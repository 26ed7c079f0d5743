// Sink modules for the load guard: Node's built-ins that run code they are given or start programs (vm, child_process,
// …). A file the approval pins as read (the manifest's `closure`) names none of them literally, so one asked for from
// such a file came by a name computed at run time, and is refused (why "sink").
import Module = require('node:module');
import path = require('node:path');
import { $, ACTIVE, real } from './base';
import { getConfig } from './manifest';
import { refuse } from './verdict';

/**
 * Modules that run code they are given or start programs. A file the approval pins as read (`closure`) uses none of
 * them literally (MCP Gate's check of it would have pinned the server otherwise): one asked for from such a file
 * came by a name computed at run time, and is refused.
 */
const SINKS = new Set(['vm', 'repl', 'inspector', 'cluster', 'test', 'v8', 'wasi', 'child_process']);

export function checkSink(request: string, parentFile: string | undefined): void {
  if (!ACTIVE || !parentFile) return;
  const name = $.startsWith(request, 'node:') ? $.slice(request, 5) : request;
  if (!$.setHas(SINKS, name) || !(Module as unknown as { isBuiltin?: (s: string) => boolean }).isBuiltin?.(request)) return;
  const cfg = getConfig();
  if (!cfg) return;
  const p = real(parentFile);
  if (p === null || !$.startsWith(p, cfg.root)) return;
  const rel = $.slice(p, cfg.root.length).split(path.sep).join('/');
  if ($.setHas(cfg.closure, rel)) refuse({ p, rel, why: 'sink', sum: '', how: `node:${name}` });
}
