// The front ends' side of the package worker: the CLI and VS Code resolve and install pinned packages in a worker
// thread (dist/lock-worker.js, built from ./lock-worker.ts). In VS Code that keeps them out of the extension host,
// whose network stack is patched for VS Code's proxy support (the npm libraries' own HTTP agent does not survive
// that patch) and where a slow registry or a large tree must not keep a review waiting. A cancel or a time limit
// terminates the worker, which ends its requests and its hashing for good. This file holds no npm library: neither
// front end's bundle carries one (a unit test reads dist/extension.js and dist/cli.js).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { NpmLaunch } from '../../trust/plan/launchers';
import { LockError, type NpmLock, type NpmOps, type ResolveOptions } from '../../trust/packages/npm-lock';

export type Job =
  | { op: 'resolve'; launch: NpmLaunch; options: Omit<ResolveOptions, 'signal'> }
  | { op: 'install'; lock: NpmLock; cacheRoot: string; scratch: string };

export type Reply = { ok: true; value: unknown } | { ok: false; lockError: boolean; message: string };

export const JOB = 'mcpGateLockJob';

function stopped(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new LockError('the registry request was stopped');
}

/** A job's own folder for its temporary folders, in the cache's tmp/; removed when the job ends. */
function scratchOf(cacheRoot: string): string {
  return path.join(cacheRoot, 'tmp', `job-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/**
 * NpmOps that run each operation in a new worker thread loaded from `file` (the built dist/lock-worker.js). A job
 * answers once its worker has ended and the job's temporary folders are gone (a job stopped halfway leaves none).
 */
export function workerOps(file: string): NpmOps {
  const run = <T>(job: Job, scratch: string, signal?: AbortSignal) =>
    new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(stopped(signal));
      let w: Worker;
      try {
        w = new Worker(file, { workerData: { [JOB]: job } });
      } catch (e) {
        return reject(new LockError(`the package worker ${file} cannot start: ${(e as Error).message}`));
      }
      let settled = false;
      const done = (f: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        // A finished job may leave keep-alive sockets open: the worker is ended either way, then its folders removed.
        void w
          .terminate()
          .catch(() => undefined)
          .then(() => fs.rmSync(scratch, { recursive: true, force: true }))
          .catch(() => undefined)
          .then(f);
      };
      const onAbort = () => done(() => reject(stopped(signal!)));
      signal?.addEventListener('abort', onAbort, { once: true });
      w.once('message', (r: Reply) =>
        done(() => (r.ok ? resolve(r.value as T) : reject(r.lockError ? new LockError(r.message) : new Error(r.message)))),
      );
      w.once('error', (e) => done(() => reject(new LockError(`the package worker failed: ${e.message}`))));
      w.once('exit', (code) => done(() => reject(new LockError(`the package worker stopped (exit code ${code}) before it answered`))));
    });
  return {
    resolve: (launch, o) => {
      const scratch = scratchOf(o.cacheRoot);
      return run<NpmLock>(
        {
          op: 'resolve',
          launch,
          options: { registry: o.registry, cacheRoot: o.cacheRoot, minReleaseAgeDays: o.minReleaseAgeDays, scratch },
        },
        scratch,
        o.signal,
      );
    },
    install: (lock, cacheRoot, signal) => {
      const scratch = scratchOf(cacheRoot);
      return run<{ dir: string; binFile: string }>({ op: 'install', lock, cacheRoot, scratch }, scratch, signal);
    },
  };
}
