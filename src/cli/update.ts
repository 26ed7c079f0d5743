// `mcp-gate update <server>`: an approved npm server keeps running its locked package until a person asks for
// a newer one. The core (src/trust/approval/lock-update.ts) resolves the spec again and compares; this prints what would
// change — the version, the dependencies added, removed or changed, and for a small package a file-level diff of
// its contents (src/report/lock-text.ts) — and records the new lock only once the person says yes (or --yes). An
// approved container launch by tag pulls the tag again and shows the digest it now names against the approved one
// (src/trust/packages/image-pin.ts).
import { approveOrReject, GateRefusal, minReleaseAge } from '../trust/approval/approvals';
import { stateWords } from '../trust/approval/gate-state';
import type { FrontEndWords } from '../trust/words';
import { escapeText } from '../text/escape';
import { evaluateGate } from '../trust/gate';
import { findServer, type GateInput } from '../trust/report';
import { imageLaunchOf, resolveImage } from '../trust/packages/image-pin';
import { planUpdate } from '../trust/approval/lock-update';
import type { ServerReport } from '../trust/report';
import type { ImageLaunch } from '../trust/plan/launchers';
import { changedSinceApproval } from '../trust/approval/states';
import { lockSummary, minAgeVerdict, updateLines } from '../report/lock-text';
import { serverText } from '../report/render';
import type { EventLog } from '../host/log/log';
import { packageOps } from './context';
import { finishBeforeStopping } from './signals';
import { out } from './output';

export interface UpdateContext {
  input: GateInput;
  name: string;
  source?: string;
  yes: boolean;
  ask: (question: string) => Promise<string | undefined>;
  log: EventLog;
  /** The CLI's wording, with the command's --project and --store. */
  words: FrontEndWords;
}

export async function updateCommand(c: UpdateContext): Promise<number> {
  const report = evaluateGate(c.input);
  const found = findServer(report, c.name, c.source, c.words);
  if (!found.ok) throw new GateRefusal(found.message);
  const s = found.server;
  const container = imageLaunchOf(s);
  if (container) return updateImage(c, s, container);
  const minAge = minReleaseAge(report);
  const u = await planUpdate({ ...c.input, words: c.words }, s, { npm: packageOps });
  const { old, fresh } = u;
  // A server changed since its approval: the change is shown too, since approving the update approves it.
  if (changedSinceApproval(s)) out(`${serverText(s, undefined, { lock: fresh, minAge }, c.words)}\n`);
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
    const answer = await c.ask(
      `\nApprove "${s.name}" running ${fresh.name} ${fresh.version} exactly as shown above? Type "yes" to approve: `,
    );
    if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
      out(`\nnot approved; "${s.name}" keeps running ${old.name} ${old.version}`);
      return 1;
    }
  }
  const r = await finishBeforeStopping(
    approveOrReject(c.input, s.name, s.source, 'approved', {
      log: c.log,
      expectedDigest: s.pinned!.digest,
      lock: fresh,
      detail: `update ${old.name} ${old.version} → ${fresh.version} ${fresh.integrity}`,
    }),
  );
  out(`approved "${r.server.name}" (${r.server.source}) running ${fresh.name} ${fresh.version}`);
  return 0;
}

async function updateImage(c: UpdateContext, s: ServerReport, launch: ImageLaunch): Promise<number> {
  const old = s.record?.decision === 'approved' ? s.record.image : undefined;
  if (s.state !== 'approved' || !old || !s.pinned) {
    throw new GateRefusal(`"${s.name}" is ${stateWords(s)}, not approved with an image pin (${s.reason}); ${c.words.review(s.name)}`);
  }
  const fresh = await resolveImage(launch, s.pinned.plan?.executable, c.input.machine.env, { pull: true });
  if (!fresh.pinned)
    throw new GateRefusal(`"${s.name}" (${s.source}): ${fresh.why}; nothing was recorded, it keeps running ${old.pinned ?? old.image}`);
  out(`server "${escapeText(s.name)}" (${escapeText(s.source)}): ${escapeText(launch.image)} (${escapeText(launch.launcher)})`);
  out(`  approved  ${escapeText(old.pinned ?? `not pinned (${old.why ?? ''})`)}`);
  out(`  now       ${escapeText(fresh.pinned)}`);
  if (fresh.pinned === old.pinned) {
    out(`"${s.name}" is up to date: ${launch.image} names the approved image.`);
    return 0;
  }
  if (!c.yes) {
    const answer = await c.ask(`\nApprove "${s.name}" running ${fresh.pinned} exactly as shown above? Type "yes" to approve: `);
    if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
      out(`\nnot approved; "${s.name}" keeps running ${old.pinned ?? launch.image}`);
      return 1;
    }
  }
  const r = await finishBeforeStopping(
    approveOrReject(c.input, s.name, s.source, 'approved', {
      log: c.log,
      expectedDigest: s.pinned.digest,
      image: fresh,
      detail: `update ${old.pinned ?? launch.image} → ${fresh.pinned}`,
    }),
  );
  out(`approved "${r.server.name}" (${r.server.source}) running ${fresh.pinned}`);
  return 0;
}
