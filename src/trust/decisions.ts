// Recording a person's decision: approve, reject, reset. Each runs under the store's cross-process lock and
// recomputes the server's definition inside it, so what is recorded is what the gate sees at that moment; an
// approval can be bound to the digest that was shown, and is refused if the definition changed meanwhile.
import { evaluateGate, findServer, type GateInput, type ServerReport } from './gate';
import { ApprovalStore, recordKey, type ApprovalRecord, type Decision, type PinnedTools } from './store';

export class GateRefusal extends Error {}

export interface DecisionResult {
  server: ServerReport;
  previous?: ApprovalRecord;
  unchanged: boolean;
}

export async function recordDecision(
  input: GateInput, name: string, source: string | undefined, decision: Decision, expectedDigest?: string,
): Promise<DecisionResult> {
  const store = new ApprovalStore(input.storeDir, input.masker);
  return store.update<DecisionResult>((records) => {
    const report = evaluateGate(input);
    if (report.fullBlock.length > 0) {
      throw new GateRefusal(`the project is blocked, so nothing can be ${decision}: ${report.fullBlock.map((b) => b.reason).join('; ')}`);
    }
    const found = findServer(report, name, source);
    if (!found.ok) throw new GateRefusal(found.message);
    const server = found.server;
    if (!server.gated) throw new GateRefusal(`"${server.name}" comes from user scope (${server.source}); it is trusted and needs no decision`);
    if (server.state === 'blocked' || !server.pinned) throw new GateRefusal(`"${server.name}" is blocked: ${server.reason}`);
    if (expectedDigest && expectedDigest !== server.pinned.digest) {
      throw new GateRefusal(`"${server.name}" changed while it was being reviewed (shown ${expectedDigest}, now ${server.pinned.digest}); nothing was recorded — review it again`);
    }
    const key = recordKey(report.project, server.source, server.name);
    const index = records.findIndex((r) => recordKey(r.project, r.source, r.server) === key);
    const previous = index >= 0 ? records[index] : undefined;
    if (previous && previous.decision === decision && previous.digest === server.pinned.digest && !previous.toolsChanged) {
      return { records, result: { server, previous, unchanged: true } };
    }
    const record: ApprovalRecord = {
      project: report.project, source: server.source, server: server.name, decision,
      digest: server.pinned.digest, pinned: server.pinned.pinned, texts: server.pinned.texts, decidedAt: new Date().toISOString(),
    };
    // Approving again after a tool change consents to the tools that were shown; otherwise they are pinned anew
    // at the next start.
    if (decision === 'approved' && previous?.digest === server.pinned.digest) {
      const tools = previous.toolsChanged ?? previous.tools;
      if (tools) record.tools = tools;
    }
    if (index >= 0) records[index] = record;
    else records.push(record);
    return { records, result: { server, previous, unchanged: false } };
  });
}

/** Returns servers of the project to pending. With no name, every decision of the project is removed. */
export async function resetDecisions(input: GateInput, name: string | undefined, source: string | undefined): Promise<ApprovalRecord[]> {
  const store = new ApprovalStore(input.storeDir, input.masker);
  return store.update((records) => {
    const report = evaluateGate(input);
    let match: (r: ApprovalRecord) => boolean;
    if (name === undefined) match = (r) => r.project === report.project;
    else {
      const candidates = records.filter((r) => r.project === report.project && r.server === name && (!source || r.source === source));
      if (candidates.length === 0) {
        const found = findServer(report, name, source);
        if (!found.ok) throw new GateRefusal(found.message);
        return { records, result: [] };
      }
      if (candidates.length > 1) throw new GateRefusal(`"${name}" has decisions in ${candidates.length} files (${candidates.map((c) => c.source).join(', ')}); say which with --source FILE`);
      match = (r) => r === candidates[0];
    }
    const removed = records.filter(match);
    return { records: records.filter((r) => !match(r)), result: removed };
  });
}

/**
 * Records the tools a server offered at a start after approval: pinned the first time; a different list later
 * is kept as `toolsChanged`, which re-gates the server. Returns what happened. Only for an approved record whose
 * definition digest is still the one given.
 */
export async function observeTools(
  store: ApprovalStore, project: string, source: string, server: string, definitionDigest: string, observed: PinnedTools,
): Promise<'pinned' | 'same' | 'changed' | 'not-approved'> {
  return store.update((records) => {
    const key = recordKey(project, source, server);
    const r = records.find((x) => recordKey(x.project, x.source, x.server) === key);
    if (!r || r.decision !== 'approved' || r.digest !== definitionDigest) return { records, result: 'not-approved' as const };
    if (!r.tools) {
      r.tools = observed;
      return { records, result: 'pinned' as const };
    }
    if (r.tools.digest === observed.digest) return { records, result: 'same' as const };
    if (r.toolsChanged?.digest !== observed.digest) r.toolsChanged = observed;
    return { records, result: 'changed' as const };
  });
}
