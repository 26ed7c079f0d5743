// The user's policy, read from user scope only (MCP Gate's user configuration file for the CLI; the
// application-scope settings for the extension): rules and the secrets block, validated, each item with its
// file and line. Any invalid item makes the whole policy refuse everything, naming the item — a rule that was
// meant to deny must never be silently dropped.
import type { Origin } from './names';
import { parseRules, type Rule } from './rules';
import { parseSecrets, type SecretEntry } from './secrets';
import { decide, type Verdict } from './decide';

export interface RawUserPolicy {
  /** The file (or setting group) the blocks were read from. */
  file: string;
  rules?: unknown;
  secrets?: unknown;
  /** Line of an item, when the source knows it (keyPath like ['rules', '3']). */
  lineOf?: (keyPath: string[]) => number;
}

export interface UserPolicy {
  file: string;
  rules: Rule[];
  secrets: SecretEntry[];
  /** Every invalid rule or secrets entry, as a message naming file, line, item and why. */
  problems: string[];
}

export function loadUserPolicy(raw: RawUserPolicy): UserPolicy {
  const origin = (block: string) => (index: number): Origin => ({ file: raw.file, ...(raw.lineOf ? { line: raw.lineOf([block, String(index)]) } : {}) });
  const rules = raw.rules === undefined ? { rules: [], errors: [] } : parseRules(raw.rules, origin('rules'));
  const secrets = raw.secrets === undefined ? { entries: [], errors: [] } : parseSecrets(raw.secrets, origin('secrets'));
  return {
    file: raw.file,
    rules: rules.rules,
    secrets: secrets.entries,
    problems: [...rules.errors, ...secrets.errors].map((e) => e.message),
  };
}

/** Decides an action under the user's policy; a policy with problems denies everything and says why. */
export function decideUnder(policy: UserPolicy, action: string): Verdict {
  if (policy.problems.length > 0) {
    return { decision: 'deny', action, reason: `your policy in ${policy.file} has ${policy.problems.length} invalid item(s), so nothing is allowed until they are fixed: ${policy.problems.join('; ')}` };
  }
  return decide(action, policy.rules);
}
