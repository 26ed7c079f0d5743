// Gate-level tests that approve an `npx` server without a registry: a lock that names the server's spec and
// carries a valid digest, so the gate's states can be tested offline. Nothing is installed from it (starting
// such a server would fail: its tree does not exist); the real registry tests are test/unit/trust/packages/npm-lock.test.ts.
import { npmLaunchOf, recordDecision } from '../../src/trust/approval/approvals';
import { evaluateGate } from '../../src/trust/gate';
import { findServer, type GateInput } from '../../src/trust/report';
import { lockDigest, type NpmLock } from '../../src/trust/packages/npm-lock';

export function offlineLock(spec: string): NpmLock {
  const lock = {
    spec,
    launcher: 'npx',
    registry: 'http://127.0.0.1:9/',
    name: spec,
    version: '0.0.0',
    integrity: 'sha512-offline-test-lock',
    resolved: 'http://127.0.0.1:9/none.tgz',
    bin: { name: spec, file: `node_modules/${spec}/index.js` },
    packages: {},
    installScripts: [],
    tree: 'sha256:none',
  } as Omit<NpmLock, 'digest'>;
  return { ...lock, digest: lockDigest(lock) };
}

/** Approves a server as recordDecision does, with an offline lock when it is an npm launch. */
export async function approveOffline(input: GateInput, name: string) {
  const found = findServer(evaluateGate(input), name);
  const launch = found.ok ? npmLaunchOf(found.server) : undefined;
  return recordDecision(input, name, undefined, 'approved', undefined, launch ? offlineLock(launch.spec) : undefined);
}
