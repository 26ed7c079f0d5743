// Worker threads for the load guard: a Worker's entry file is checked by the rule before it starts, and one given
// its own execArgv or env gets the guard put back (--require <this guard>, MCP_GATE_GUARD, NODE_OPTIONS), so the
// thread is guarded as the main one is. The patched class replaces node:worker_threads' own, for import too.
import Module = require('node:module');
import path = require('node:path');
import url = require('node:url');
import wt = require('node:worker_threads');
import { MANIFEST, SELF, VAR, withOurOptions } from './base';
import { check } from './verdict';

function workerEntry(filename: unknown): string | null {
  try {
    if (filename instanceof URL) return filename.protocol === 'file:' ? url.fileURLToPath(filename) : null;
    if (typeof filename !== 'string') return null;
    if (filename.startsWith('file:')) return url.fileURLToPath(filename);
    if (/^[a-z][a-z0-9+.-]*:/i.test(filename) && !path.isAbsolute(filename)) return null; // data:, node:
    return path.resolve(filename);
  } catch {
    return null;
  }
}

/** Workers carry the guard, their entry checked. */
export function installWorkers(): void {
  const Original = wt.Worker;
  class Worker extends Original {
    constructor(filename: string | URL, options?: wt.WorkerOptions) {
      let o = options;
      if (o && typeof o === 'object') {
        o = { ...o };
        if (Array.isArray(o.execArgv) && !o.execArgv.some((a, i) => a === SELF && o!.execArgv![i - 1] === '--require')) {
          o.execArgv = ['--require', SELF, ...o.execArgv];
        }
        if (o.env && typeof o.env === 'object') {
          const env = o.env as Record<string, string | undefined>;
          o.env = { ...env, [VAR]: MANIFEST, NODE_OPTIONS: withOurOptions(env.NODE_OPTIONS), NODE_DISABLE_COMPILE_CACHE: '1' };
        }
      }
      if (!(o && o.eval)) {
        const entry = workerEntry(filename);
        if (entry) check(entry, 'worker');
      }
      super(filename, o);
    }
  }
  (wt as { Worker: typeof Original }).Worker = Worker;
  Module.syncBuiltinESMExports(); // so `import { Worker } from 'node:worker_threads'` gets the patched class
}
