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
  localExceptions?: unknown;
  /** Line of an item, when the source knows it (keyPath like ['rules', '3']). */
  lineOf?: (keyPath: string[]) => number;
}

export interface UserPolicy {
  file: string;
  rules: Rule[];
  secrets: SecretEntry[];
  /** Local-development exceptions by server name: loopback (and plain http to it) and/or private addresses. */
  localExceptions: Map<string, { allowLoopback: boolean; allowPrivate: boolean }>;
  /** Every invalid rule or secrets entry, as a message naming file, line, item and why. */
  problems: string[];
}

export function loadUserPolicy(raw: RawUserPolicy): UserPolicy {
  const origin = (block: string) => (index: number): Origin => ({ file: raw.file, ...(raw.lineOf ? { line: raw.lineOf([block, String(index)]) } : {}) });
  const rules = raw.rules === undefined ? { rules: [], errors: [] } : parseRules(raw.rules, origin('rules'));
  const secrets = raw.secrets === undefined ? { entries: [], errors: [] } : parseSecrets(raw.secrets, origin('secrets'));
  const exceptions = parseLocalExceptions(raw);
  return {
    file: raw.file,
    rules: rules.rules,
    secrets: secrets.entries,
    localExceptions: exceptions.map,
    problems: [...rules.errors, ...secrets.errors].map((e) => e.message).concat(exceptions.problems),
  };
}

/** Decides an action under the user's policy; a policy with problems denies everything and says why. */
export function decideUnder(policy: UserPolicy, action: string): Verdict {
  if (policy.problems.length > 0) {
    return { decision: 'deny', action, reason: `your policy in ${policy.file} has ${policy.problems.length} invalid item(s), so nothing is allowed until they are fixed: ${policy.problems.join('; ')}` };
  }
  return decide(action, policy.rules);
}

/**
 * `localExceptions: [{ "server": "dev", "allowLoopback": true, "allowPrivate": true }]` — each entry names one
 * server; unknown keys, a missing name, a duplicate or a non-boolean switch are errors.
 */
function parseLocalExceptions(raw: RawUserPolicy): { map: UserPolicy['localExceptions']; problems: string[] } {
  const map: UserPolicy['localExceptions'] = new Map();
  const problems: string[] = [];
  if (raw.localExceptions === undefined) return { map, problems };
  const where = (i: number) => `${raw.file}${raw.lineOf ? `:${raw.lineOf(['localExceptions', String(i)])}` : ''}: localExceptions[${i}]`;
  if (!Array.isArray(raw.localExceptions)) return { map, problems: [`${raw.file}: localExceptions must be a list`] };
  raw.localExceptions.forEach((e: unknown, i) => {
    if (!e || typeof e !== 'object' || Array.isArray(e)) return void problems.push(`${where(i)}: an entry is {"server", "allowLoopback"?, "allowPrivate"?}`);
    const o = e as Record<string, unknown>;
    const unknown = Object.keys(o).filter((k) => !['server', 'allowLoopback', 'allowPrivate'].includes(k));
    if (unknown.length) return void problems.push(`${where(i)}: unknown key(s) ${unknown.join(', ')}`);
    if (typeof o.server !== 'string' || !o.server) return void problems.push(`${where(i)}: "server" must name one server`);
    for (const k of ['allowLoopback', 'allowPrivate']) if (o[k] !== undefined && typeof o[k] !== 'boolean') return void problems.push(`${where(i)}: "${k}" must be true or false`);
    if (map.has(o.server)) return void problems.push(`${where(i)}: a second exception for "${o.server}"`);
    map.set(o.server, { allowLoopback: o.allowLoopback === true, allowPrivate: o.allowPrivate === true });
  });
  return { map, problems };
}

/** Merges several user layers (the extension's settings and the configuration file) into one policy. */
export function loadUserPolicies(layers: readonly RawUserPolicy[]): UserPolicy {
  const loaded = layers.map(loadUserPolicy);
  const localExceptions: UserPolicy['localExceptions'] = new Map();
  const problems = loaded.flatMap((l) => l.problems);
  for (const l of loaded) {
    for (const [k, v] of l.localExceptions) {
      if (localExceptions.has(k)) problems.push(`${l.file}: a second local-development exception for "${k}"`);
      else localExceptions.set(k, v);
    }
  }
  return {
    file: loaded.map((l) => l.file).join(' + ') || '(no user configuration)',
    rules: loaded.flatMap((l) => l.rules),
    secrets: loaded.flatMap((l) => l.secrets),
    localExceptions,
    problems,
  };
}
