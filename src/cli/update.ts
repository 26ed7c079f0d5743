// `mcp-gate update <server>`: an approved npm server keeps running its locked package until a person asks for
// a newer one. The core (src/trust/lock-update.ts) resolves the spec again and compares; this prints what would
// change — the version, the dependencies added, removed or changed, and for a small package a file-level diff of
// its contents (src/report/lock-text.ts) — and records the new lock only once the person says yes (or --yes).
import { decide, GateRefusal, minReleaseAge } from '../trust/decisions';
import { CLI_WORDS } from './words';
import { escapeText } from '../trust/escape';
import { evaluateGate, findServer, type GateInput } from '../trust/gate';
import { planUpdate } from '../trust/lock-update';
import { changedSinceApproval } from '../trust/states';
import { lockSummary, minAgeVerdict, updateLines } from '../report/lock-text';
import { serverText } from '../report/render';
import type { EventLog } from '../host/log';
import { finishBeforeStopping } from './signals';
import { out } from './output';

export interface UpdateContext {
  input: GateInput;
  name: string;
  source?: string;
  yes: boolean;
  ask: (question: string) => Promise<string | undefined>;
  log: EventLog;
}

export async function updateCommand(c: UpdateContext): Promise<number> {
  const report = evaluateGate(c.input);
  const found = findServer(report, c.name, c.source, CLI_WORDS);
  if (!found.ok) throw new GateRefusal(found.message);
  const s = found.server;
  const minAge = minReleaseAge(report);
  const u = await planUpdate({ ...c.input, words: c.input.words ?? CLI_WORDS }, s);
  const { old, fresh } = u;
  // A server changed since its approval: the change is shown too, since approving the update approves it.
  if (changedSinceApproval(s)) out(`${serverText(s, undefined, { lock: fresh, minAge }, CLI_WORDS)}\n`);
  out(`server "${escapeText(s.name)}" (${escapeText(s.source)}): ${escapeText(u.spec)} from ${escapeText(fresh.registry)}`);
  out(`  approved  ${escapeText(lockSummary(old))}`);
  out(`  now       ${escapeText(lockSummary(fresh))}`);
  const verdict = minAgeVerdict(fresh, minAge);
  if (verdict) out(`            ${escapeText(verdict)}`);
  if (u.upToDate && !changedSinceApproval(s)) {
    out(`"${s.name}" is up to date: the registry resolves ${u.spec} to the approved tree.`);
    return 0;
  }
  for (const line of updateLines(u)) out(`  ${line}`);
  if (fresh.installScripts.length) out(`  install scripts NOT run: ${fresh.installScripts.join(', ')}`);
  if (!c.yes) {
    const answer = await c.ask(`\nApprove "${s.name}" running ${fresh.name} ${fresh.version} exactly as shown above? Type "yes" to approve: `);
    if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
      out(`\nnot approved; "${s.name}" keeps running ${old.name} ${old.version}`);
      return 1;
    }
  }
  const r = await finishBeforeStopping(decide(c.input, s.name, s.source, 'approved', { log: c.log, expectedDigest: s.pinned!.digest, lock: fresh, detail: `update ${old.name} ${old.version} → ${fresh.version} ${fresh.integrity}` }));
  out(`approved "${r.server.name}" (${r.server.source}) running ${fresh.name} ${fresh.version}`);
  return 0;
}
