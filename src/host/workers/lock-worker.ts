// The package worker's own code (bundled alone as dist/lock-worker.js): loaded as a worker thread with a job from
// ./package-worker.ts, it runs the npm libraries (src/trust/packages/npm-resolve.ts) with Node's own network stack and
// posts the result.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { LockError } from '../../trust/packages/npm-lock';
import { ensureInstalled, resolveNpm } from '../../trust/packages/npm-resolve';
import { JOB, type Job, type Reply } from './package-worker';

async function perform(job: Job): Promise<unknown> {
  if (job.op === 'resolve') return resolveNpm(job.launch, job.options);
  return ensureInstalled(job.lock, job.cacheRoot, job.scratch);
}

if (!isMainThread && parentPort && (workerData as Record<string, unknown> | undefined)?.[JOB]) {
  const port = parentPort;
  perform((workerData as Record<string, Job>)[JOB]).then(
    (value) => port.postMessage({ ok: true, value } satisfies Reply),
    (e: unknown) =>
      port.postMessage({ ok: false, lockError: e instanceof LockError, message: (e as Error)?.message ?? String(e) } satisfies Reply),
  );
}
