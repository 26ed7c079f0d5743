// The package worker VS Code resolves pinned npm packages in (dist/lock-worker.js, src/host/workers/lock-worker.ts),
// against a real registry (verdaccio): it returns the same lock as resolving in process; stopping it (a cancel
// or a time limit) ends the job with the reason given, nothing is returned and no temporary folder is left; a failed resolution keeps its
// LockError and its words; an unreachable registry is a failure, never a stale answer from the cache.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workerOps } from '../../../../src/host/workers/package-worker';
import { LockError } from '../../../../src/trust/packages/npm-lock';
import { resolveNpm } from '../../../../src/trust/packages/npm-resolve';
import { packageLaunchOf, type NpmLaunch } from '../../../../src/trust/plan/launchers';
import { cleanupTemp, ROOT, tempDir } from '../../helpers';
import { startRegistry, type Registry } from '../../registry';

const WORKER = path.join(ROOT, 'dist', 'lock-worker.js');

describe('package worker (verdaccio)', function () {
  this.timeout(180_000);
  let reg: Registry;
  const launch = packageLaunchOf('npx', ['-y', 'fixture-server']) as NpmLaunch;

  before(async () => {
    reg = await startRegistry();
    reg.publish(path.join(ROOT, 'test', 'fixtures', 'npm-fixture-server'));
  });
  after(async () => {
    await reg?.stop();
    cleanupTemp();
  });

  it('resolves and installs the same lock as the in-process resolution', async () => {
    const ops = workerOps(WORKER);
    const cacheRoot = tempDir('mcp-gate-worker-cache-');
    const lock = await ops.resolve(launch, { registry: reg.url, cacheRoot });
    assert.equal(lock.name, 'fixture-server');
    assert.equal(lock.version, '1.0.0');
    const here = await resolveNpm(launch, { registry: reg.url, cacheRoot: tempDir('mcp-gate-worker-cache-') });
    assert.equal(lock.digest, here.digest, 'the same tree, the same lock');
    const installed = await ops.install(lock, cacheRoot);
    assert.ok(fs.existsSync(installed.binFile), installed.binFile);
  });

  it('a stop ends the job with the reason given, and nothing is returned', async () => {
    const ac = new AbortController();
    const job = workerOps(WORKER).resolve(launch, { registry: reg.url, cacheRoot: tempDir('mcp-gate-worker-cache-'), signal: ac.signal });
    ac.abort(new LockError('resolving fixture-server was cancelled'));
    await assert.rejects(job, (e: Error) => e instanceof LockError && e.message === 'resolving fixture-server was cancelled');
  });

  it('a job stopped halfway leaves no temporary folder in the package cache, and neither does a finished one', async () => {
    const cacheRoot = tempDir('mcp-gate-worker-cache-');
    const tmp = path.join(cacheRoot, 'tmp');
    const jobs = () => (fs.existsSync(tmp) ? fs.readdirSync(tmp).filter((n) => n.startsWith('job-')) : []);
    const ac = new AbortController();
    const job = workerOps(WORKER).resolve(launch, { registry: reg.url, cacheRoot, signal: ac.signal });
    job.catch(() => undefined);
    // Stopped once the worker has made its first temporary folder (the registry's answers go there).
    for (let i = 0; i < 20_000 && !jobs().some((j) => fs.readdirSync(path.join(tmp, j)).length > 0); i++)
      await new Promise((r) => setTimeout(r, 1));
    assert.equal(jobs().length, 1, 'the job made its folder');
    ac.abort(new LockError('resolving fixture-server was cancelled'));
    await assert.rejects(job, /was cancelled/);
    assert.deepEqual(fs.readdirSync(tmp), [], 'nothing of the stopped job is left');
    const lock = await workerOps(WORKER).resolve(launch, { registry: reg.url, cacheRoot });
    await workerOps(WORKER).install(lock, cacheRoot);
    assert.deepEqual(fs.readdirSync(tmp), [], 'nothing of the finished jobs is left');
  });

  it('a package the registry does not have: a LockError naming it and the registry', async () => {
    const missing = packageLaunchOf('npx', ['-y', 'no-such-fixture']) as NpmLaunch;
    await assert.rejects(
      workerOps(WORKER).resolve(missing, { registry: reg.url, cacheRoot: tempDir('mcp-gate-worker-cache-') }),
      (e: Error) =>
        e instanceof LockError && /^the package no-such-fixture cannot be resolved at http:\/\/127\.0\.0\.1:\d+\/: E404/.test(e.message),
    );
  });

  it('a worker file that is not there: a LockError naming it', async () => {
    await assert.rejects(
      workerOps(path.join(ROOT, 'dist', 'no-such-worker.js')).resolve(launch, {
        registry: reg.url,
        cacheRoot: tempDir('mcp-gate-worker-cache-'),
      }),
      (e: Error) => e instanceof LockError && e.message.includes('no-such-worker.js'),
    );
  });

  it('with the registry stopped, resolving again fails, in the worker and in process, though the cache holds its last answer', async () => {
    const cacheRoot = tempDir('mcp-gate-worker-cache-');
    await resolveNpm(launch, { registry: reg.url, cacheRoot });
    await reg.stop();
    const refused = (e: Error) =>
      e instanceof LockError &&
      /^the package fixture-server cannot be resolved at http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED/.test(e.message);
    await assert.rejects(resolveNpm(launch, { registry: reg.url, cacheRoot }), refused);
    await assert.rejects(workerOps(WORKER).resolve(launch, { registry: reg.url, cacheRoot }), refused);
  });
});
