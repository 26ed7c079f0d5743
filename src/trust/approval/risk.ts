// The risk a person decides on for a waiting server, from what its code can do (src/trust/plan/capabilities.ts):
// for one never approved (or rejected), all of it; for one changed since approval, only what is new; with the
// install scripts of the package lock about to be approved that the approved lock did not have. Pure.
import type { NpmLock } from '../packages/npm-lock';
import { capabilitiesOfTexts, newCapabilities, type Capability } from '../plan/capabilities';
import type { ServerReport } from '../report';

function lockCapabilities(lock: NpmLock | undefined, approved: NpmLock | undefined): Capability[] {
  const had = new Set(approved?.installScripts ?? []);
  return (lock?.installScripts ?? [])
    .filter((p) => !had.has(p))
    .map((p) => ({
      kind: 'install-script' as const,
      file: `package ${lock!.name}`,
      line: 0,
      evidence: `${p.replace(/^.*node_modules\//, '') || lock!.name} declares an install script (MCP Gate does not run it)`,
      how: 'call' as const,
    }));
}

/** What the server's code does that a person approving it now has not approved (see the file's header). */
export function serverRisk(s: Pick<ServerReport, 'state' | 'pinned' | 'record'>, lock?: NpmLock): Capability[] {
  if (!s.pinned) return [];
  // Never approved (or rejected): everything it can do is news.
  if (s.state === 'pending' || s.state === 'rejected')
    return [...capabilitiesOfTexts(s.pinned.texts), ...lockCapabilities(lock, undefined)];
  if (s.state !== 'approval-changed') return [];
  const approvedLock = s.record?.decision === 'approved' ? s.record.lock : undefined;
  return [...newCapabilities(s.record?.texts ?? {}, s.pinned.texts), ...lockCapabilities(lock, approvedLock)];
}
