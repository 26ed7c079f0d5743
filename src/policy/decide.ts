// Policy evaluation: which rule decides an action (most specific wins; on a tie deny > ask
// > allow; no rule is deny), how `ask` is resolved by a person or becomes a refusal, the
// two-step host/tool checks for MCP servers, and the text `mcp-gate explain` prints. Checks about one server
// see only the rules meant for it (see identity.ts): no "project" for a user-scope server, its project's for a
// repository server.

import { argumentsRefusal, describeArgRules } from './args';
import { HostNameError, hostAction, networkHostAction } from './hostname';
import { appliesTo, describeIdentity, describeQualifier, type ServerIdentity } from './identity';
import { formatOrigin, jsonExcerpt, NameError } from './names';
import {
  ActionError,
  Decision,
  parseAction,
  parsePattern,
  Pattern,
  patternMatches,
  Rule,
  RuleText,
  ruleText,
  specificity,
  networkAction,
  privateAction,
  toolAction,
} from './rules';

/** The outcome of checking one action against the rules. */
export interface Verdict {
  readonly decision: Decision;
  /** The action checked, in normal form (as given when it is not a valid action). */
  readonly action: string;
  /** The rule that decided, with its origin; absent when no rule matched or the input was invalid. */
  readonly rule?: Rule;
  /**
   * For `deny` and `ask`: the narrowest rule that would have permitted the
   * action — the exact action with `allow`. Absent when no rule could permit it.
   */
  readonly permittedBy?: RuleText;
  /** One human sentence saying why. */
  readonly reason: string;
  /** For combined checks ({@link mayCallTool}): the verdict of each step, in order. */
  readonly steps?: readonly Verdict[];
}

/** The rules (as a person writes them) that would allow what a verdict does not: one per step that does not allow. */
export function allowingRules(v: Verdict): string[] {
  return (v.steps ?? [v]).filter((s) => s.decision !== 'allow' && s.permittedBy).map((s) => ruleText(s.permittedBy!));
}

/** A person's answer to an `ask`. `always` means: write {@link Verdict.permittedBy} as a rule. */
export type AskAnswer = 'once' | 'always' | 'deny';

/** What an asker is asked: the action, the rule that says ask, and the rule `always` would write. */
export interface AskQuestion {
  readonly action: string;
  readonly rule: Rule;
  readonly permittedBy: RuleText;
  readonly reason: string;
}

/** Puts an `ask` to a person (Allow once / Always / Deny). Only where someone can answer. */
export type Asker = (question: AskQuestion) => Promise<AskAnswer>;

/** A verdict after `ask` has been resolved: only allow or deny remain. */
export interface Resolved extends Verdict {
  readonly decision: 'allow' | 'deny';
  /** The person's answer, when one was asked. */
  readonly answer?: AskAnswer;
  /** Rules the caller should write because the person answered `always`. */
  readonly remember?: readonly RuleText[];
  readonly steps?: readonly Resolved[];
}

const STRENGTH: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

const patterns = new WeakMap<Rule, Pattern>();

function patternOf(rule: Rule): Pattern {
  let p = patterns.get(rule);
  if (p === undefined) {
    p = parsePattern(rule.action);
    patterns.set(rule, p);
  }
  return p;
}

/**
 * Pure functions of their text, asked again at every call's check (`mcp.<server>.host.<host>` normalises the host
 * twice: IDN, IP spellings): their answers — or the error they threw — are kept by input, a bounded number
 * (emptied when full), so a call checks the same rules with no parsing. The rules themselves are read at every
 * decision as before (a rule edited mid-session applies at once).
 */
const MEMO_SIZE = 512;
function memo<T>(cache: Map<string, T | Error>, key: string, compute: () => T, keep: (e: unknown) => e is Error): T {
  let v = cache.get(key);
  if (v === undefined) {
    try {
      v = compute();
    } catch (e) {
      if (!keep(e)) throw e;
      v = e;
    }
    if (cache.size >= MEMO_SIZE) cache.clear();
    cache.set(key, v);
  }
  if (v instanceof Error) throw v;
  return v;
}
const actionMemo = new Map<string, Pattern | Error>();
const hostActionMemo = new Map<string, string | Error>();
const isActionError = (e: unknown): e is Error => e instanceof ActionError;
const isNameOrHostNameError = (e: unknown): e is Error => e instanceof NameError || e instanceof HostNameError;

/** {@link parseAction}, kept by text. */
function actionOf(text: string): Pattern {
  return typeof text === 'string' ? memo(actionMemo, text, () => parseAction(text), isActionError) : parseAction(text);
}

/** {@link hostAction}, kept by server and host. */
function hostActionOf(server: string, host: string): string {
  return typeof server === 'string' && typeof host === 'string'
    ? memo(hostActionMemo, JSON.stringify([server, host]), () => hostAction(server, host), isNameOrHostNameError)
    : hostAction(server, host);
}

const refs = new WeakMap<Rule, string>();

/** `rule {"action":…,"decision":…} (rules[2] in /path:7)` (kept per rule, as its pattern is). */
function ruleRef(rule: Rule): string {
  let r = refs.get(rule);
  if (r === undefined) {
    r = `rule ${ruleText(rule)} (rules[${rule.index}] in ${formatOrigin(rule.origin)})`;
    refs.set(rule, r);
  }
  return r;
}

interface Evaluation {
  verdict: Verdict;
  /** Every matching rule, most specific and strongest first. */
  matches: Rule[];
  /** Rules that match the action but are for other servers (another scope or project). */
  ignored: Rule[];
}

/** The narrowest rule that permits `action` for `who`: a repository server's carries its project's real path. */
function allowFor(action: string, who?: ServerIdentity): RuleText {
  return who?.scope === 'repository' ? { action, decision: 'allow', project: who.project } : { action, decision: 'allow' };
}

/** ` (the rule … matches this action, but having no "project", it applies only to …)` for each ignored rule. */
function ignoredNote(ignored: readonly Rule[], who: ServerIdentity | undefined): string {
  if (!who || ignored.length === 0) return '';
  const shown = ignored.slice(0, 3).map((r) => `${ruleRef(r)} matches it, but ${describeQualifier(r, who)}`);
  const more =
    ignored.length > shown.length
      ? `; and ${ignored.length - shown.length} more such ${ignored.length - shown.length === 1 ? 'rule' : 'rules'}`
      : '';
  return ` Not applying to ${describeIdentity(who)}: ${shown.join('; ')}${more}.`;
}

function evaluate(action: string, rules: readonly Rule[], who?: ServerIdentity): Evaluation {
  let target: Pattern;
  try {
    target = actionOf(action);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      verdict: { decision: 'deny', action: String(action), reason: `${jsonExcerpt(action)} is denied: it is not a valid action (${why}).` },
      matches: [],
      ignored: [],
    };
  }
  const normal = target.text;
  const ranked: { rule: Rule; spec: number }[] = [];
  const admin: { rule: Rule; spec: number }[] = [];
  const ignored: Rule[] = [];
  for (const rule of rules) {
    let p: Pattern;
    try {
      p = patternOf(rule);
      if (!(STRENGTH[rule.decision] >= 0)) throw new ActionError(`unknown decision ${jsonExcerpt(rule.decision)}`);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const where = rule && rule.origin ? ` (rules[${rule.index}] in ${formatOrigin(rule.origin)})` : '';
      return {
        verdict: {
          decision: 'deny',
          action: normal,
          reason: `${normal} is denied: the rule ${jsonExcerpt(rule)}${where} is not valid (${why}), and a rule list holding an invalid rule decides nothing.`,
        },
        matches: [],
        ignored: [],
      };
    }
    if (!patternMatches(p, target.segments)) continue;
    // The administrator's rules: without "project", for every server of the name (user-scope and repository).
    if (rule.layer === 'admin') {
      if (who === undefined || rule.project === undefined || appliesTo(rule, who)) admin.push({ rule, spec: specificity(p) });
      else ignored.push(rule);
    } else if (who !== undefined && !appliesTo(rule, who)) ignored.push(rule);
    else ranked.push({ rule, spec: specificity(p) });
  }
  const order = (a: { rule: Rule; spec: number }, b: { rule: Rule; spec: number }) =>
    b.spec - a.spec || STRENGTH[b.rule.decision] - STRENGTH[a.rule.decision] || a.rule.index - b.rule.index;
  ranked.sort(order);
  admin.sort(order);
  const user = userVerdict(normal, ranked, ignored, who);
  const matches = [...admin.map((r) => r.rule), ...user.matches];
  // The administrator's layer only restricts: its deciding rule holds when it is stricter than the user's verdict.
  const top = admin[0]?.rule;
  if (top && STRENGTH[top.decision] > STRENGTH[user.verdict.decision]) {
    const says = top.decision === 'deny' ? 'is denied by' : 'needs an answer: it is asked by';
    const permit = allowFor(normal, who);
    return {
      verdict: {
        decision: top.decision,
        action: normal,
        rule: top,
        ...(top.decision === 'ask' ? { permittedBy: permit } : {}),
        reason: `${normal} ${says} the administrator's ${ruleRef(top)}; a user's rule cannot loosen it${top.decision === 'ask' ? ' (an answer holds for this once)' : ''}.`,
      },
      matches,
      ignored,
    };
  }
  return { verdict: user.verdict, matches, ignored };
}

/** The verdict of the user's rules that match (`ranked`, most specific and strongest first). */
function userVerdict(
  normal: string,
  ranked: readonly { rule: Rule; spec: number }[],
  ignored: Rule[],
  who: ServerIdentity | undefined,
): { verdict: Verdict; matches: Rule[] } {
  const matches = ranked.map((r) => r.rule);
  const permit = allowFor(normal, who);
  const forWhom = who?.scope === 'repository' ? ` for ${describeIdentity(who)}` : '';
  if (ranked.length === 0) {
    return {
      verdict: {
        decision: 'deny',
        action: normal,
        permittedBy: permit,
        reason: `${normal} is denied${forWhom}: no rule matches it, and no rule means deny; the rule ${ruleText(permit)} would permit it.${ignoredNote(ignored, who)}`,
      },
      matches,
    };
  }
  const winner = ranked[0].rule;
  const exact = ranked[0].spec === Number.MAX_SAFE_INTEGER;
  let verdict: Verdict;
  if (winner.decision === 'allow') {
    verdict = { decision: 'allow', action: normal, rule: winner, reason: `${normal} is allowed by ${ruleRef(winner)}.` };
  } else {
    const exactBlocking = ranked.filter((r) => r.spec === Number.MAX_SAFE_INTEGER && r.rule.decision !== 'allow').length;
    const fix = !exact
      ? `the rule ${ruleText(permit)} would permit it`
      : exactBlocking === 1
        ? `changing that rule to ${ruleText(permit)} would permit it`
        : `changing the ${exactBlocking} rules for exactly this action to ${ruleText(permit)} would permit it`;
    const says = winner.decision === 'deny' ? 'is denied by' : 'needs an answer: it is asked by';
    verdict = {
      decision: winner.decision,
      action: normal,
      rule: winner,
      permittedBy: permit,
      reason: `${normal} ${says} ${ruleRef(winner)}; ${fix}.${ignoredNote(ignored, who)}`,
    };
  }
  return { verdict, matches };
}

/**
 * Decide one action: among the rules that match it, the most specific wins
 * (an exact action beats any wildcard; a longer wildcard prefix beats a
 * shorter one); on a tie deny beats ask beats allow; no matching rule is deny.
 * The host part of `action` is normalised first (case, IDN, trailing dot is an
 * error in an action). Never throws: an invalid action, or an invalid rule in
 * the list, is a `deny` saying why.
 */
export function decide(action: string, rules: readonly Rule[]): Verdict {
  return evaluate(action, rules).verdict;
}

/**
 * {@link decide} for an action about one server: only the rules meant for `who` take part (no "project" for a
 * user-scope server; its project's folder or `*` for a repository server), the rule that would permit it carries
 * the repository server's project, and a refusal names the rules that matched but are for other servers.
 */
export function decideFor(who: ServerIdentity, action: string, rules: readonly Rule[]): Verdict {
  return evaluate(action, rules, who).verdict;
}

function refuseAsk(v: Verdict, why: string): Resolved {
  const permit = v.permittedBy ? `; the rule ${ruleText(v.permittedBy)} would permit it` : '';
  const by = v.rule ? ` (${ruleRef(v.rule)} says ask)` : '';
  return { ...v, decision: 'deny', steps: undefined, reason: `${v.action} is refused${by}: ${why}${permit}.` };
}

async function resolveOne(v: Verdict, asker: Asker | undefined): Promise<Resolved> {
  if (v.decision === 'allow' || v.decision === 'deny') return { ...v, decision: v.decision, steps: undefined };
  if (asker === undefined || v.rule === undefined || v.permittedBy === undefined) {
    return refuseAsk(v, 'nobody can answer here');
  }
  let answer: unknown;
  try {
    answer = await asker({ action: v.action, rule: v.rule, permittedBy: v.permittedBy, reason: v.reason });
  } catch (e) {
    return refuseAsk(v, `the question could not be answered (${e instanceof Error ? e.message : String(e)})`);
  }
  if (answer === 'once') {
    return {
      ...v,
      decision: 'allow',
      answer,
      steps: undefined,
      reason: `${v.action} is allowed once by the person asked (${ruleRef(v.rule)} says ask).`,
    };
  }
  if (answer === 'always') {
    return {
      ...v,
      decision: 'allow',
      answer,
      steps: undefined,
      remember: [v.permittedBy],
      reason: `${v.action} is allowed by the person asked, who chose to always allow it with ${ruleText(v.permittedBy)}.`,
    };
  }
  if (answer === 'deny') {
    return {
      ...v,
      decision: 'deny',
      answer,
      steps: undefined,
      reason: `${v.action} is refused by the person asked (${ruleRef(v.rule)} says ask).`,
    };
  }
  return refuseAsk(v, `the answer ${jsonExcerpt(answer)} is not once, always or deny`);
}

/**
 * Turn a verdict into allow or deny. `ask` goes to `asker` when one is given
 * (the extension); without one (CLI, headless, a start with no window) it is a
 * refusal whose reason names the rule that would have permitted it. An asker
 * that throws or gives another answer is a refusal. For a combined verdict the
 * steps are resolved in order and the first refusal decides.
 */
export async function resolve(verdict: Verdict, asker?: Asker): Promise<Resolved> {
  if (verdict.steps === undefined || verdict.steps.length === 0) return resolveOne(verdict, asker);
  const done: Resolved[] = [];
  const remember: RuleText[] = [];
  for (const step of verdict.steps) {
    const r = await resolveOne(step, asker);
    done.push(r);
    if (r.remember) remember.push(...r.remember);
    if (r.decision === 'deny') return { ...r, steps: done, ...(remember.length ? { remember } : {}) };
  }
  const last = done[done.length - 1];
  return { ...last, steps: done, ...(remember.length ? { remember } : {}) };
}

function hostVerdict(who: ServerIdentity, host: string, rules: readonly Rule[]): Verdict {
  const server = who.name;
  let action: string;
  try {
    action = hostActionOf(server, host);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      decision: 'deny',
      action: `mcp.${server}.host.${host}`,
      reason: `server ${jsonExcerpt(server)} may not reach ${jsonExcerpt(host)}: ${why}.`,
    };
  }
  return decideFor(who, action, rules);
}

/**
 * May a remote server's tool list be read? Needs only its host rule
 * (`mcp.<server>.host.<reversed host>`) to allow. Returns that verdict
 * (possibly `ask`; pass it to {@link resolve}).
 */
export function mayDiscover(server: ServerIdentity, host: string, rules: readonly Rule[]): Verdict {
  return hostVerdict(server, host, rules);
}

/**
 * May the model call `tool` on `server`? For a remote server (`host` given) both
 * the host rule and `mcp.<server>.tool.<tool>` must allow; for a local server
 * (`host` undefined) only the tool rule. The combined verdict is the first
 * `deny` step, else the first `ask` step, else the tool step's `allow`, and
 * carries every step in `steps` so {@link resolve} can ask each in turn.
 * An "allow once" answer holds for this request only.
 */
export function mayCallTool(who: ServerIdentity, host: string | undefined, tool: string, rules: readonly Rule[]): Verdict {
  const server = who.name;
  const steps: Verdict[] = [];
  if (host !== undefined) steps.push(hostVerdict(who, host, rules));
  let action: string | undefined;
  try {
    action = toolAction(server, tool);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    steps.push({
      decision: 'deny',
      action: `mcp.${server}.tool.${tool}`,
      reason: `the tool ${jsonExcerpt(tool)} of server ${jsonExcerpt(server)} may not be called: ${why}.`,
    });
  }
  if (action !== undefined) steps.push(decideFor(who, action, rules));
  const pick = steps.find((s) => s.decision === 'deny') ?? steps.find((s) => s.decision === 'ask') ?? steps[steps.length - 1];
  return { ...pick, steps };
}

/**
 * A call's arguments against the rule that allowed its tool (./args.ts): the verdict itself when that rule has no
 * `args` (or the verdict does not allow), else a `deny` naming the rule and the first argument that breaks it.
 * Decided per call, after the tool's verdict (which does not depend on arguments and may be kept).
 * @param workspace the project folder the call is made for (`${workspaceFolder}` in a rule).
 */
export function checkCallArguments(verdict: Verdict, args: unknown, workspace: string | undefined): Verdict {
  const rule = verdict.decision === 'allow' ? verdict.rule : undefined;
  if (!rule?.args) return verdict;
  const why = argumentsRefusal(rule.args, args, workspace);
  if (why === undefined) return verdict;
  return { decision: 'deny', action: verdict.action, rule, reason: `${verdict.action} is refused by ${ruleRef(rule)}: ${why}.` };
}

/** What the rules say about a local server reaching one host through its network door. */
export interface NetworkVerdict {
  readonly verdict: Verdict;
  /**
   * A rule for this server's network that names hosts decided (`mcp.<server>.network.<host>` or a `.*` of one);
   * false when the bare `mcp.<server>.network` (or a broader rule) decided.
   */
  readonly byHostRule: boolean;
  /** The deciding rule names this host (not only a `mcp.<server>.network.*`): private addresses are reachable. */
  readonly named: boolean;
  /** The narrowest rule that would allow exactly this host. */
  readonly permit?: RuleText;
}

/**
 * May a contained server reach `host`? A rule for `mcp.<server>.network.<reversed host>` (exact, or a wildcard over
 * this server's network hosts) decides when one matches; otherwise the bare `mcp.<server>.network` decides (and
 * allows public addresses only: the caller refuses private ones unless `named`). `bare`: that verdict as resolved
 * already (a start asks the bare rule's `ask` once). Loopback, link-local and metadata addresses are no rule's to
 * give (the host refuses them whatever this says).
 */
export function mayReachNetwork(who: ServerIdentity, host: string, rules: readonly Rule[], bare?: Verdict): NetworkVerdict {
  let action: string;
  try {
    action = networkHostAction(who.name, host);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      verdict: {
        decision: 'deny',
        action: `mcp.${who.name}.network.${host}`,
        reason: `server ${jsonExcerpt(who.name)} may not reach ${jsonExcerpt(host)}: ${why}.`,
      },
      byHostRule: false,
      named: false,
    };
  }
  const permit = allowFor(action, who);
  const byHost = decideFor(who, action, rules);
  if (byHost.rule) {
    const p = patternOf(byHost.rule);
    if (p.kind === 'network') return { verdict: byHost, byHostRule: true, named: p.segments.length > 3, permit };
  }
  const b = bare ?? decideFor(who, networkAction(who.name), rules);
  const verdict = b.decision === 'allow' ? b : { ...b, action, reason: `${action} is refused: no rule names this host, and ${b.reason}` };
  return { verdict, byHostRule: false, named: false, permit };
}

/**
 * Rules that may open a contained server's network to some host by name (allow or ask, for `who`): a door is opened
 * for them even when the bare `mcp.<server>.network` does not allow.
 */
export function networkHostRules(who: ServerIdentity, rules: readonly Rule[]): Rule[] {
  return rules.filter((r) => {
    if (r.decision === 'deny' || r.layer === 'admin' || !appliesTo(r, who)) return false;
    let p: Pattern;
    try {
      p = patternOf(r);
    } catch {
      return false;
    }
    return p.kind === 'network' && p.server === who.name && (p.segments.length > 3 || p.wildcard);
  });
}

/**
 * Does a rule refuse private address ranges to this remote server? Only rules for exactly
 * `mcp.<server>.private` take part (a broad `mcp.<server>.*` or `*` does not change address checks); the most
 * specific of those for `who` decides, and no such rule means private ranges stay reachable. Returns the reason
 * naming the deciding rule when they are refused.
 */
export function privateRangesRefused(who: ServerIdentity, rules: readonly Rule[]): string | undefined {
  let action: string;
  try {
    action = privateAction(who.name);
  } catch {
    return undefined; // a server a rule cannot name has no such rule
  }
  const exact = rules.filter((r) => r.action === action);
  if (!exact.length) return undefined;
  const v = decideFor(who, action, exact);
  if (v.decision !== 'deny' || !v.rule) return undefined;
  return `${action} is denied by ${ruleRef(v.rule)}`;
}

/**
 * The text `mcp-gate explain <action>` prints: the action, the decision, the
 * deciding rule and where it lives, the rule that would permit it, other rules
 * that match but lost, rules that match but are for other servers (with `who`),
 * and the reason.
 */
export function explain(
  action: string,
  rules: readonly Rule[],
  who?: ServerIdentity,
  call?: { args?: unknown; workspace?: string },
): string[] {
  const evaluation = evaluate(action, rules, who);
  const { matches, ignored } = evaluation;
  const decided = evaluation.verdict;
  const verdict = call?.args !== undefined ? checkCallArguments(decided, call.args, call.workspace) : decided;
  const lines = [`action: ${verdict.action}`, `decision: ${verdict.decision}`];
  if (verdict.rule) {
    const written = verdict.rule.written !== undefined ? ` (written ${jsonExcerpt(verdict.rule.written)})` : '';
    lines.push(`rule: ${ruleText(verdict.rule)}${written} from ${formatOrigin(verdict.rule.origin)} (rules[${verdict.rule.index}])`);
    if (verdict.rule.layer === 'admin') lines.push("layer: the administrator's (a user's rule cannot loosen it)");
  } else {
    lines.push('rule: none');
  }
  if (verdict.decision === 'ask') {
    lines.push('ask: a prompt where a person can answer; a refusal in the CLI or headless');
  }
  if (verdict.rule?.args) {
    for (const a of describeArgRules(verdict.rule.args, call?.workspace)) lines.push(`arguments: ${a}`);
    if (call?.args === undefined)
      lines.push('arguments: checked at each call (give --args JSON to check one); a call that breaks one is refused by this rule');
    else if (verdict === decided) lines.push('arguments: these hold every constraint');
  }
  if (verdict.permittedBy) lines.push(`would permit: ${ruleText(verdict.permittedBy)}`);
  for (const other of matches) {
    if (other === verdict.rule) continue;
    lines.push(`also matches: ${ruleText(other)} from ${formatOrigin(other.origin)} (rules[${other.index}]), not deciding`);
  }
  for (const other of ignored) {
    lines.push(
      `not applying: ${ruleText(other)} from ${formatOrigin(other.origin)} (rules[${other.index}]): ${describeQualifier(other, who!)}`,
    );
  }
  lines.push(`reason: ${verdict.reason}`);
  return lines;
}
