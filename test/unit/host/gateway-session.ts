// The session the gateway tests serve from: a test world's servers, as recorded in its store, started through the
// gate with the world's user policy and a log of its own (./gateway/*.test.ts).
import { EventLog } from '../../../src/host/log/log';
import { Session } from '../../../src/host/session';
import { Masker } from '../../../src/policy/mask';
import { loadUserPolicy } from '../../../src/policy/user-policy';
import { evaluateGate } from '../../../src/trust/gate';
import { inProcess } from '../../../src/trust/packages/npm-resolve';
import type { GateReport } from '../../../src/trust/report';
import type { World } from '../helpers';

/** Evaluates the gate for `w` and starts a session on what it lets run. */
export async function openSession(w: World): Promise<{ report: GateReport; log: EventLog; session: Session }> {
  const report = evaluateGate(w.input);
  const masker = new Masker();
  const log = new EventLog(w.store, masker);
  const session = await Session.start({
    report,
    policy: loadUserPolicy(report.userPolicy),
    log,
    storeDir: w.store,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker,
  });
  return { report, log, session };
}
