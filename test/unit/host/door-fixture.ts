// What the network-door tests share (test/unit/host/net/egress.test.ts, libc-carrier.test.ts): the door's decision as a
// start makes it for a user server, and a probe's workspace, HOME and result file in a temp folder.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EgressVerdict } from '../../../src/host/net/egress';
import { mayReachNetwork } from '../../../src/policy/decide';
import type { ServerIdentity } from '../../../src/policy/identity';
import { parseRules, ruleText } from '../../../src/policy/rules';
import { tempDir } from '../helpers';

/** The user server the probes run as. */
export const PROBE_SERVER: ServerIdentity = { name: 'probe', scope: 'user' };

/** The door's decision exactly as a start makes it for a user server (src/host/sandbox/contain.ts networkDoor, without ask). */
export function decideBy(rules: object[]): (host: string) => Promise<EgressVerdict> {
  const parsed = parseRules(rules, { file: 'test-config.json' });
  assert.deepEqual(parsed.errors, []);
  return async (host) => {
    const r = mayReachNetwork(PROBE_SERVER, host, parsed.rules);
    return {
      allow: r.verdict.decision === 'allow',
      named: r.named,
      reason: r.verdict.reason,
      permit: r.permit ? ruleText(r.permit) : undefined,
    };
  };
}

/** A fresh workspace holding `probe` (copied as `name`), a HOME beside it, and where the probe writes its result. */
export function probeFolders(prefix: string, probe: string, name: string): { workspace: string; home: string; result: string } {
  const base = fs.realpathSync(tempDir(prefix));
  const workspace = path.join(base, 'workspace');
  const home = path.join(base, 'home');
  fs.mkdirSync(workspace, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  fs.copyFileSync(probe, path.join(workspace, name));
  return { workspace, home, result: path.join(workspace, 'result.json') };
}
