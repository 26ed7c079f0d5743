// One decision per start (issue 45, item 2): what the policy says about a server when it starts — its sandbox
// profile (containment, read and write paths, Unix sockets, limits), its bare network verdict and the rules that name
// hosts it may reach — asked here once, into one value the session and the sandbox consume
// (src/host/sandbox/decision.ts containmentFor, contain.ts startPlan). What is asked after the start goes through
// this value too: the door's question for one host at each connection, by the rules in force then (so a rule removed
// closes its hosts at once), and the person's answer to a verdict that asks. Nothing on the way from a definition to
// the spawned process asks the policy by another road.
import type { Asker, Resolved, Verdict } from './decide';
import { resolve } from './decide';
import type { ServerIdentity } from './identity';
import { networkAction, ruleText, type Rule } from './rules';
import { sandboxFor, type SandboxDecision } from './sandbox-profile';
import { decideUnder, networkHostRulesUnder, reachUnder, type UserPolicy } from './user-policy';

/** The door's verdict for one host ({@link StartDecision.reach}). */
export interface HostReach {
  verdict: Verdict;
  /** A rule naming this host decided (an `ask` of it is asked once per host for the start). */
  byHostRule: boolean;
  /** The host is named by a rule (private addresses allowed then). */
  named: boolean;
  /** The rule that would allow it, as text, when it is refused. */
  permit?: string;
}

export interface StartDecision {
  readonly who: ServerIdentity;
  readonly sandbox: SandboxDecision;
  /** `mcp.<server>.network`: the bare rule's verdict at the start. */
  readonly network: Verdict;
  readonly networkAction: string;
  /** Rules that name hosts it may reach (allow or ask). */
  readonly networkHosts: readonly Rule[];
  /** The door's question for `host` at a connection, by the rules in force then; `bare` is the start's answer. */
  reach(host: string, bare: Resolved): HostReach;
  /** A verdict answered: `ask` put to the person where one can answer, else refused; allow and deny as they are. */
  ask(verdict: Verdict): Promise<Resolved>;
}

/**
 * Asks the policy once for `who`'s start. `live` is the policy in force at a later moment (a session re-reads its
 * rules); the start's is used without it.
 */
export function decideStart(
  policy: UserPolicy,
  who: ServerIdentity,
  home: string,
  o: { live?: () => UserPolicy; asker?: Asker } = {},
): StartDecision {
  const action = networkAction(who.name);
  return {
    who,
    sandbox: sandboxFor(policy.sandbox, who, home),
    network: decideUnder(policy, who, action),
    networkAction: action,
    networkHosts: networkHostRulesUnder(policy, who),
    reach(host, bare) {
      const now = o.live?.() ?? policy;
      const v = decideUnder(now, who, action);
      const r = reachUnder(now, who, host, v.decision === 'ask' ? bare : v);
      return { verdict: r.verdict, byHostRule: r.byHostRule, named: r.named, ...(r.permit ? { permit: ruleText(r.permit) } : {}) };
    },
    ask: (verdict) => resolve(verdict, o.asker),
  };
}
