// Worker threads for the load guard: a Worker's entry file is checked by the rule before it starts, and one given
// its own execArgv or env gets the guard put back (--require <this guard>, MCP_GATE_GUARD, NODE_OPTIONS), so the
// thread is guarded as the main one is. The patched class replaces node:worker_threads' own, for import too.
import Module = require('node:module');
import path = require('node:path');
import url = require('node:url');
import wt = require('node:worker_threads');
import { MANIFEST, SELF, VAR, withOurOptions } from './base';
import { check } from './verdict';
import { childMarks } from './taken';
import { codeFromText } from './strings';

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
      }
      // Its text or entry is judged first, by what this thread took in until now (marking it started first had an
      // honest eval worker compare the whole workspace: a README edit refused it — the fuzzer, bug 2).
      if (o?.eval) codeFromText(typeof filename === 'string' ? filename : `${filename as unknown as string}`, 'Worker (eval)');
      else {
        const entry = workerEntry(filename);
        if (entry) check(entry, 'worker');
        else if (filename instanceof URL || typeof filename === 'string')
          codeFromText(`${filename as string}`, 'Worker (a URL that is no file)');
      }
      // A worker can be fed through its messages and can feed this thread: both count as started by the other
      // (taken.ts), and it starts with what this thread took in.
      const marks: Record<string, string> = {};
      for (const kv of childMarks()) marks[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
      o = o && typeof o === 'object' ? o : {};
      const env =
        o.env && typeof o.env === 'object'
          ? (o.env as Record<string, string | undefined>)
          : o.env === wt.SHARE_ENV
            ? null
            : { ...process.env };
      if (env !== null)
        o.env = { ...env, [VAR]: MANIFEST, NODE_OPTIONS: withOurOptions(env.NODE_OPTIONS), NODE_DISABLE_COMPILE_CACHE: '1', ...marks };
      super(filename, o);
    }
  }
  (wt as { Worker: typeof Original }).Worker = Worker;
  Module.syncBuiltinESMExports(); // so `import { Worker } from 'node:worker_threads'` gets the patched class
}
