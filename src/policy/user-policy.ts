// The user's policy, read from user scope only (MCP Gate's user configuration file for the CLI; the
// application-scope settings for the extension): rules, the secrets block and local-development exceptions,
// validated, each item with its file and line, each "project" resolved to a real path. Any invalid item makes the
// whole policy refuse everything, naming the item — a rule that was meant to deny must never be silently dropped.
// `grantsFor` lists what would apply to one server (the approve preview).
import {
  appliesTo,
  projectProblem,
  resolveProjects,
  systemResolver,
  type ProjectQualified,
  type ProjectResolver,
  type ServerIdentity,
} from './identity';
import { formatOrigin, jsonExcerpt, type Origin } from './names';
import { parsePattern, parseRules, patternMatches, secretAction, type Rule } from './rules';
import { parseSecrets, secretApplies, type SecretEntry } from './secrets';
import { decideFor, mayReachNetwork, networkHostRules, type NetworkVerdict, type Verdict } from './decide';
import { mergeSandbox, parseSandbox, type SandboxSettings } from './sandbox-profile';

export interface RawUserPolicy {
  /** The file (or setting group) the blocks were read from. */
  file: string;
  rules?: unknown;
  secrets?: unknown;
  localExceptions?: unknown;
  sandbox?: unknown;
  /** Line of an item, when the source knows it (keyPath like ['rules', '3']). */
  lineOf?: (keyPath: string[]) => number;
  /** `admin`: the administrator's layer (its rules only restrict; it holds nothing else). */
  layer?: 'admin';
}

/** One local-development exception: loopback (and plain http to it) and/or private addresses for one server. */
export interface LocalException extends ProjectQualified {
  readonly server: string;
  readonly allowLoopback: boolean;
  readonly allowPrivate: boolean;
  readonly origin: Origin;
  readonly index: number;
}

export interface UserPolicy {
  file: string;
  rules: Rule[];
  secrets: SecretEntry[];
  /** Local-development exceptions; look one up with {@link localExceptionFor} (never by name alone). */
  localExceptions: LocalException[];
  /** Which local servers run contained, with what extra reach (src/policy/sandbox-profile.ts). */
  sandbox: SandboxSettings;
  /** Every invalid rule or secrets entry, as a message naming file, line, item and why. */
  problems: string[];
  /** Not errors, but worth saying (doctor, explain): e.g. a "project" naming a folder that does not exist. */
  notes: string[];
}

export function loadUserPolicy(raw: RawUserPolicy, resolver: ProjectResolver = systemResolver): UserPolicy {
  const origin =
    (block: string) =>
    (index: number): Origin => ({ file: raw.file, ...(raw.lineOf ? { line: raw.lineOf([block, String(index)]) } : {}) });
  const parsed = raw.rules === undefined ? { rules: [], errors: [] } : parseRules(raw.rules, origin('rules'));
  const rules =
    raw.layer === 'admin' ? { rules: parsed.rules.map((r) => ({ ...r, layer: 'admin' as const })), errors: parsed.errors } : parsed;
  const secrets = raw.secrets === undefined ? { entries: [], errors: [] } : parseSecrets(raw.secrets, origin('secrets'));
  const exceptions = parseLocalExceptions(raw, origin('localExceptions'));
  const policy: UserPolicy = {
    file: raw.file,
    rules: resolveProjects(rules.rules, resolver),
    secrets: resolveProjects(secrets.entries, resolver),
    localExceptions: resolveProjects(exceptions.list, resolver),
    // The administrator's "sandbox" says only whether it is required (src/trust/sources/admin.ts validated it).
    sandbox:
      raw.layer === 'admin'
        ? {
            userServers: false,
            entries: [],
            problems: [],
            ...((raw.sandbox as { required?: unknown } | undefined)?.required === true ? { required: raw.file } : {}),
          }
        : parseSandbox(
            raw.sandbox,
            (index) => ({
              file: raw.file,
              ...(raw.lineOf ? { line: raw.lineOf(index < 0 ? ['sandbox'] : ['sandbox', 'servers', String(index)]) } : {}),
            }),
            resolver,
          ),
    problems: [...rules.errors, ...secrets.errors].map((e) => e.message).concat(exceptions.problems),
    notes: [],
  };
  const missing = (what: string, e: ProjectQualified & { origin: Origin; index: number }) => {
    if (e.projectPath === null) {
      policy.notes.push(
        `${formatOrigin(e.origin)}: ${what}[${e.index}] names the project ${jsonExcerpt(e.project)}, which is not an existing folder, so it applies to no server; fix the path or remove the entry`,
      );
    }
  };
  policy.rules.forEach((r) => missing('rules', r));
  policy.secrets.forEach((e) => missing('secrets', e));
  policy.localExceptions.forEach((e) => missing('localExceptions', e));
  return policy;
}

/** Decides an action about `who` under the user's policy; a policy with problems denies everything and says why. */
export function decideUnder(policy: UserPolicy, who: ServerIdentity, action: string): Verdict {
  if (policy.problems.length > 0) {
    return {
      decision: 'deny',
      action,
      reason: `your policy in ${policy.file} has ${policy.problems.length} invalid ${policy.problems.length === 1 ? 'item' : 'items'}, so nothing is allowed until they are fixed: ${policy.problems.join('; ')}`,
    };
  }
  return decideFor(who, action, policy.rules);
}

/** {@link mayReachNetwork} under the user's policy: a policy with problems refuses every host and says why. */
export function reachUnder(policy: UserPolicy, who: ServerIdentity, host: string, bare?: Verdict): NetworkVerdict {
  if (policy.problems.length > 0) return { verdict: decideUnder(policy, who, `mcp.${who.name}.network`), byHostRule: false, named: false };
  return mayReachNetwork(who, host, policy.rules, bare);
}

/** The rules that may open a door to named hosts for `who` ({@link networkHostRules}); none under a policy with problems. */
export function networkHostRulesUnder(policy: UserPolicy, who: ServerIdentity): Rule[] {
  return policy.problems.length > 0 ? [] : networkHostRules(who, policy.rules);
}

/** Which exception key a qualifier is: user scope, any project, or one folder (as written, for duplicates). */
function qualifierKey(e: ProjectQualified): string {
  return e.project === undefined ? 'user' : e.project === '*' ? '*' : `project:${e.projectPath ?? e.project}`;
}

/**
 * The local-development exception for this server: among the entries that name it and apply to it (see
 * identity.ts), one for its own project beats `"project": "*"`. Undefined when none applies.
 */
export function localExceptionFor(policy: Pick<UserPolicy, 'localExceptions'>, who: ServerIdentity): LocalException | undefined {
  const mine = policy.localExceptions.filter((e) => e.server === who.name && appliesTo(e, who));
  return mine.find((e) => e.project !== '*') ?? mine[0];
}

/**
 * `localExceptions: [{ "server": "dev", "allowLoopback": true, "allowPrivate": true, "project"?: … }]` — each entry
 * names one server; unknown keys, a missing name, a duplicate (same server and same "project") or a non-boolean
 * switch are errors.
 */
function parseLocalExceptions(raw: RawUserPolicy, originOf: (index: number) => Origin): { list: LocalException[]; problems: string[] } {
  const list: LocalException[] = [];
  const problems: string[] = [];
  if (raw.localExceptions === undefined) return { list, problems };
  const where = (i: number) => `${formatOrigin(originOf(i))}: localExceptions[${i}]`;
  if (!Array.isArray(raw.localExceptions)) return { list, problems: [`${raw.file}: localExceptions must be a list`] };
  const seen = new Set<string>();
  raw.localExceptions.forEach((e: unknown, i) => {
    if (!e || typeof e !== 'object' || Array.isArray(e))
      return void problems.push(`${where(i)}: an entry is {"server", "allowLoopback"?, "allowPrivate"?, "project"?}`);
    const o = e as Record<string, unknown>;
    const unknown = Object.keys(o).filter((k) => !['server', 'allowLoopback', 'allowPrivate', 'project'].includes(k));
    if (unknown.length) return void problems.push(`${where(i)}: unknown ${unknown.length === 1 ? 'key' : 'keys'} ${unknown.join(', ')}`);
    if (typeof o.server !== 'string' || !o.server) return void problems.push(`${where(i)}: "server" must name one server`);
    for (const k of ['allowLoopback', 'allowPrivate'])
      if (o[k] !== undefined && typeof o[k] !== 'boolean') return void problems.push(`${where(i)}: "${k}" must be true or false`);
    if (o.project !== undefined) {
      const p = projectProblem(o.project);
      if (p !== undefined) return void problems.push(`${where(i)}: ${p}`);
    }
    const key = `${o.server}\0${qualifierKey({ project: o.project as string | undefined })}`;
    if (seen.has(key))
      return void problems.push(
        `${where(i)}: a second exception for "${o.server}"${o.project !== undefined ? ` with "project" ${jsonExcerpt(o.project)}` : ''}`,
      );
    seen.add(key);
    list.push({
      server: o.server,
      allowLoopback: o.allowLoopback === true,
      allowPrivate: o.allowPrivate === true,
      ...(o.project !== undefined ? { project: o.project as string } : {}),
      origin: originOf(i),
      index: i,
    });
  });
  return { list, problems };
}

/** Merges several user layers (the extension's settings and the configuration file) into one policy. */
export function loadUserPolicies(layers: readonly RawUserPolicy[], resolver: ProjectResolver = systemResolver): UserPolicy {
  const loaded = layers.map((l) => loadUserPolicy(l, resolver));
  const localExceptions: LocalException[] = [];
  const problems = loaded.flatMap((l) => l.problems);
  const seen = new Set<string>();
  for (const l of loaded) {
    for (const e of l.localExceptions) {
      const key = `${e.server}\0${qualifierKey(e)}`;
      if (seen.has(key))
        problems.push(
          `${formatOrigin(e.origin)}: a second local-development exception for "${e.server}"${e.project !== undefined ? ` with "project" ${jsonExcerpt(e.project)}` : ''}`,
        );
      else {
        seen.add(key);
        localExceptions.push(e);
      }
    }
  }
  return {
    file: loaded.map((l) => l.file).join(' + ') || '(no user configuration)',
    rules: loaded.flatMap((l) => l.rules),
    secrets: loaded.flatMap((l) => l.secrets),
    localExceptions,
    sandbox: mergeSandbox(loaded.map((l) => l.sandbox)),
    problems,
    notes: loaded.flatMap((l) => l.notes),
  };
}

/** What {@link grantsFor} finds for one server. */
export interface Grants {
  /** Rules meant for this server whose action is about it (`mcp.<name>.…`, `mcp.*`, `*`) or about a secret it gets. */
  readonly rules: Rule[];
  /** Secrets entries that would be bound to it (name, header or env, where written; never a value). */
  readonly secrets: SecretEntry[];
  /** Its local-development exception, if any. */
  readonly exception?: LocalException;
  /** Entries naming this server that apply to another scope or project (they do not apply; shown so nobody wonders). */
  readonly notApplying: { readonly what: string; readonly origin: Origin; readonly index: number; readonly qualifier?: string }[];
}

/**
 * Every rule, secrets entry and local-development exception that would apply to `who` (remote when `host`, the
 * URL's host, is given). Pure: reads only `policy`.
 */
export function grantsFor(who: ServerIdentity, policy: UserPolicy, host?: string): Grants {
  const ref = host !== undefined ? { ...who, host } : who;
  const secrets = policy.secrets.filter((e) => secretApplies(e, ref));
  const secretActions = [...new Set(secrets.map((e) => secretAction(e.name)))].map((a) => parsePattern(a, false).segments);
  const aboutServer = (r: Rule): boolean => {
    let p;
    try {
      p = parsePattern(r.action);
    } catch {
      return false;
    }
    if (p.kind === 'any') return true;
    if (p.server === who.name) return true;
    return p.kind === 'secret' && secretActions.some((s) => patternMatches(p, s));
  };
  const rules = policy.rules.filter((r) => appliesTo(r, who) && aboutServer(r));
  const notApplying: Grants['notApplying'][number][] = [];
  for (const r of policy.rules) {
    if (appliesTo(r, who)) continue;
    let p;
    try {
      p = parsePattern(r.action);
    } catch {
      continue;
    }
    if (p.server === who.name) notApplying.push({ what: `rule ${r.action}`, origin: r.origin, index: r.index, qualifier: r.project });
  }
  for (const e of policy.secrets) {
    if (appliesTo(e, who)) continue;
    if (parsePattern(e.to).server === who.name)
      notApplying.push({ what: `secret ${e.name}`, origin: e.origin, index: e.index, qualifier: e.project });
  }
  for (const e of policy.localExceptions) {
    if (e.server === who.name && !appliesTo(e, who))
      notApplying.push({ what: `local exception for ${e.server}`, origin: e.origin, index: e.index, qualifier: e.project });
  }
  const exception = localExceptionFor(policy, who);
  return { rules, secrets, ...(exception ? { exception } : {}), notApplying };
}
