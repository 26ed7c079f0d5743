// The session the gateway tests serve from: a test world's servers, as recorded in its store, started through the
// gate with the world's user policy and a log of its own (./gateway/*.test.ts).
import { EventLog } from '../../../src/host/log/log';
import { Session } from '../../../src/host/session';
import type { GateReport } from '../../../src/trust/report';
import type { World } from '../helpers';
import { sessionOptions } from './session-options';

/** Evaluates the gate for `w` and starts a session on what it lets run. */
export async function openSession(w: World): Promise<{ report: GateReport; log: EventLog; session: Session }> {
  const o = sessionOptions(w);
  const { report, log } = o;
  const session = await Session.start(o);
  return { report, log, session };
}
