// The options a test starts a Session with for a test world: its gate evaluated now (or the report given), its user
// policy, its store, a log of its own (or the one given), no secrets, this process's environment, npm in process.
// One place for what host tests share; `extra` overrides or adds (limits, a resolver, a CA, another masker).
import { EventLog } from '../../../src/host/log/log';
import type { SessionOptions } from '../../../src/host/session';
import { Masker } from '../../../src/policy/mask';
import { loadUserPolicy } from '../../../src/policy/user-policy';
import { evaluateGate } from '../../../src/trust/gate';
import { inProcess } from '../../../src/trust/packages/npm-resolve';
import type { World } from '../helpers';

export function sessionOptions(w: World, extra: Partial<SessionOptions> = {}): SessionOptions & { log: EventLog; masker: Masker } {
  const report = extra.report ?? evaluateGate(w.input);
  const masker = (extra.masker as Masker | undefined) ?? new Masker();
  const log = (extra.log as EventLog | undefined) ?? new EventLog(w.store, masker);
  return {
    report,
    policy: loadUserPolicy(report.userPolicy),
    storeDir: w.store,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    ...extra,
    log,
    masker,
  } as SessionOptions & { log: EventLog; masker: Masker };
}
