// Policy rules: the action grammar (mcp.<server>.host|tool|network|private…, secret.use.<NAME>, a
// trailing '*'), parsing and validating raw rule values with their origin, and the builders
// for the actions the rest of the project checks.

import { HostNameError, normalizeReversedHost } from './hostname';
import {
  checkServerName,
  checkToolName,
  formatOrigin,
  nameProblem,
  NameError,
  Origin,
  jsonExcerpt,
  SECRET_NAME_RE,
  splitSegments,
  walkItems,
} from './names';
import { projectProblem, type ProjectQualified } from './identity';
import { parseArgRules, type ArgRules } from './args';

/** What a rule says about an action. */
export type Decision = 'allow' | 'ask' | 'deny';

/** The three decisions, strongest last. */
export const DECISIONS: readonly Decision[] = ['allow', 'ask', 'deny'];

/**
 * A rule as it is written in a configuration: `action` and `decision`, and `project` when it is for the
 * repository servers of one project (a folder) or of any project (`*`) rather than for your user-scope servers.
 */
export interface RuleText {
  readonly action: string;
  readonly decision: Decision;
  readonly project?: string;
  /** For an `allow` of a tool: what the call's arguments must be (./args.ts). */
  readonly args?: ArgRules;
}

/** A validated rule, with the place it came from. */
export interface Rule extends RuleText, ProjectQualified {
  /** The action in normal form (host part lower-cased, punycode, IPs normalised). */
  readonly action: string;
  /** The action exactly as written, when it differs from `action`. */
  readonly written?: string;
  /** Where the rule lives (file or setting name, and line when known). */
  readonly origin: Origin;
  /** Its position in the list it was parsed from (0-based). */
  readonly index: number;
  /** `admin`: from the administrator's layer (only restricts: src/policy/decide.ts). */
  readonly layer?: 'admin';
}

/** What an action or pattern is about. `any` is `*` or `mcp.*`; `server` is `mcp.<server>.*`. */
export type ActionKind = 'any' | 'server' | 'host' | 'tool' | 'network' | 'private' | 'secret';

/** A parsed action or rule pattern. */
export interface Pattern {
  /** Normal form, including a trailing `.*` for a wildcard. */
  readonly text: string;
  /** Segments before the wildcard (all of them for an exact action). */
  readonly segments: readonly string[];
  /** True when the last segment is `*` (matches one or more further segments). */
  readonly wildcard: boolean;
  readonly kind: ActionKind;
  /** The server named, for mcp.<server>… patterns. */
  readonly server?: string;
}

/** Thrown by {@link parsePattern} / {@link parseAction}; the message says what is wrong. */
export class ActionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ActionError';
  }
}

/** An invalid rule: names the rule (origin, index, text) and why it is invalid. */
export class RuleError extends Error {
  constructor(
    /** Where the rule list came from. */
    readonly origin: Origin,
    /** The rule's index in its list, or undefined when the list itself is invalid. */
    readonly index: number | undefined,
    /** The rule as written, quoted. */
    readonly text: string,
    /** Why it is invalid. */
    readonly reason: string,
  ) {
    super(index === undefined ? `${formatOrigin(origin)}: ${reason}` : `${formatOrigin(origin)}: rules[${index}] ${text}: ${reason}`);
    this.name = 'RuleError';
  }
}

function bad(why: string): never {
  throw new ActionError(why);
}

/** The reversed-host part of a host or network action, normalised; a `*` after an IP literal is an error. */
function hostPart(labels: readonly string[], wildcard: boolean): string[] {
  let host: string[];
  try {
    host = normalizeReversedHost(labels);
  } catch (e) {
    if (e instanceof HostNameError) bad(e.message);
    throw e;
  }
  if (wildcard && host[0].startsWith('[')) bad('"*" after an IP literal matches nothing; an IP rule names one address');
  return host;
}

/**
 * Parse an action or a rule pattern.
 *
 * Grammar (segments are split on '.', a bracketed IP literal is one segment):
 * - `mcp.<server>.host.<reversed host>` or `mcp.<server>.host.[<ip>]`
 * - `mcp.<server>.tool.<tool>` (a tool name may itself contain dots)
 * - `mcp.<server>.network` (a local server reaching any public host) or
 *   `mcp.<server>.network.<reversed host>` / `mcp.<server>.network.[<ip>]` (that host, private addresses included)
 * - `mcp.<server>.private`: reaching private address ranges (only a rule for exactly this action decides it)
 * - `secret.use.<NAME>`
 * - with `allowWildcard`, `*` as the whole last segment, matching one or more
 *   further segments: `mcp.notion.host.com.notion.*`, `mcp.notion.*`, `mcp.*`, `*`.
 *
 * Keywords (`mcp`, `host`, `tool`, `network`, `secret`, `use`) are lower case;
 * server and tool names are case-sensitive; the host part is normalised as
 * {@link reverseHost} does. A server name cannot contain '.', '*', brackets,
 * control or invisible formatting characters.
 *
 * @throws {ActionError} saying what is wrong.
 */
export function parsePattern(text: string, allowWildcard = true): Pattern {
  if (typeof text !== 'string') bad(`an action must be a string, not ${text === null ? 'null' : typeof text}`);
  if (text === '') bad('the action is empty');
  const split = splitSegments(text);
  if (typeof split === 'string') bad(split);
  const last = split.length - 1;
  split.forEach((seg, i) => {
    if (seg === '') bad('it has an empty segment (a leading, trailing or doubled ".")');
    if (seg.includes('*') && seg !== '*') bad('"*" must be a whole segment');
    if (seg === '*' && i !== last) bad('"*" may only be the last segment');
  });
  const wildcard = split[last] === '*';
  if (wildcard && !allowWildcard) bad('an action names one thing; "*" belongs in rules');
  const body = wildcard ? split.slice(0, -1) : split;
  const done = (segments: readonly string[], kind: ActionKind, server?: string): Pattern => ({
    text: [...segments, ...(wildcard ? ['*'] : [])].join('.'),
    segments,
    wildcard,
    kind,
    server,
  });
  const incomplete = (why: string): never => bad(wildcard ? why : `it is incomplete: ${why}`);

  if (body.length === 0) return done([], 'any');
  const head = body[0];
  if (head === 'mcp') {
    if (body.length === 1) return wildcard ? done(body, 'any') : incomplete('expected mcp.<server>.…');
    const server = body[1];
    const why = nameProblem(server);
    if (why !== undefined) bad(`the server name ${jsonExcerpt(server)} is invalid: ${why}`);
    if (body.length === 2) {
      return wildcard
        ? done(body, 'server', server)
        : incomplete(`after the server name comes host, tool, network or private (mcp.${server}.* covers all of them)`);
    }
    const sub = body[2];
    const rest = body.slice(3);
    if (sub === 'host') {
      if (rest.length === 0) return wildcard ? done(body, 'host', server) : incomplete('expected a host after "host"');
      return done([...body.slice(0, 3), ...hostPart(rest, wildcard)], 'host', server);
    }
    if (sub === 'tool') {
      if (rest.length === 0) return wildcard ? done(body, 'tool', server) : incomplete('expected a tool name after "tool"');
      for (const part of rest) {
        const problem = nameProblem(part);
        if (problem !== undefined) bad(`the tool name part ${jsonExcerpt(part)} is invalid: ${problem}`);
      }
      return done(body, 'tool', server);
    }
    if (sub === 'network') {
      // mcp.<server>.network: any public host; mcp.<server>.network.<reversed host> (or a .* prefix): that host.
      if (rest.length === 0) return done(body, 'network', server);
      return done([...body.slice(0, 3), ...hostPart(rest, wildcard)], 'network', server);
    }
    if (sub === 'private') {
      if (rest.length > 0 || wildcard) bad(`nothing follows "private" (mcp.${server}.private is the whole action)`);
      return done(body, 'private', server);
    }
    return bad(`unknown kind ${jsonExcerpt(sub)} after the server name; expected host, tool, network or private`);
  }
  if (head === 'secret') {
    if (body.length === 1) return wildcard ? done(body, 'secret') : incomplete('expected secret.use.<NAME>');
    if (body[1] !== 'use') bad(`unknown secret action ${jsonExcerpt(body[1])}; expected secret.use.<NAME>`);
    if (body.length === 2) return wildcard ? done(body, 'secret') : incomplete('expected a secret name after "secret.use"');
    const name = body[2];
    if (!SECRET_NAME_RE.test(name)) {
      bad(`the secret name ${jsonExcerpt(name)} is invalid: it must be upper-case letters, digits and "_", not starting with a digit`);
    }
    if (body.length > 3 || wildcard) bad('nothing follows the secret name');
    return done(body, 'secret');
  }
  const lower = head.toLowerCase();
  if (lower === 'mcp' || lower === 'secret') bad(`unknown action kind ${jsonExcerpt(head)}; kinds are lower case ("${lower}")`);
  return bad(`unknown action kind ${jsonExcerpt(head)}; an action starts with "mcp." or "secret."`);
}

/**
 * Parse one concrete action (no `*`), normalising its host part.
 * @throws {ActionError} saying what is wrong.
 */
export function parseAction(text: string): Pattern {
  return parsePattern(text, false);
}

/** True when `pattern` covers the concrete action whose segments are `action`. */
export function patternMatches(pattern: Pattern, action: readonly string[]): boolean {
  const p = pattern.segments;
  if (pattern.wildcard ? action.length <= p.length : action.length !== p.length) return false;
  for (let i = 0; i < p.length; i++) if (p[i] !== action[i]) return false;
  return true;
}

/** How specific a pattern is: an exact action beats every wildcard; a longer wildcard prefix beats a shorter one. */
export function specificity(pattern: Pattern): number {
  return pattern.wildcard ? pattern.segments.length : Number.MAX_SAFE_INTEGER;
}

/** A rule written as JSON, the way a user would put it in a file. */
export function ruleText(rule: RuleText): string {
  return JSON.stringify({
    action: rule.action,
    decision: rule.decision,
    ...(rule.project !== undefined ? { project: rule.project } : {}),
    ...(rule.args !== undefined ? { args: rule.args } : {}),
  });
}

/** The result of {@link parseRules}: every input is either a rule or an error. */
export interface ParsedRules {
  readonly rules: Rule[];
  readonly errors: RuleError[];
}

const RULE_KEYS = new Set(['action', 'decision', 'project', 'args']);

/**
 * Validate raw rule values (e.g. parsed JSON) from one source. Every item ends
 * up either in `rules` (normalised, with its origin) or in `errors` (a
 * {@link RuleError} naming the origin, index, text and reason) — none is dropped.
 *
 * @param raw the list as read; anything but an array is one error.
 * @param origin where the list came from; a function gives each item its own
 *   origin (e.g. its line), called with the item's index.
 */
export function parseRules(raw: unknown, origin: Origin | ((index: number) => Origin)): ParsedRules {
  const rules: Rule[] = [];
  const errors = walkItems(
    raw,
    origin,
    {
      list: 'rules',
      item: 'a rule is an object {"action": …, "decision": "allow" | "ask" | "deny", "project"?: folder | "*", "args"?: {…}}',
    },
    (o, i, text, reason) => new RuleError(o, i, text, reason),
    (obj, where, index, fail) => {
      const problems: string[] = [];
      const unknown = Object.keys(obj).filter((k) => !RULE_KEYS.has(k));
      if (unknown.length > 0) {
        problems.push(
          `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => jsonExcerpt(k)).join(', ')}; a rule has only "action", "decision", "project" and "args"`,
        );
      }
      const hasProject = Object.prototype.hasOwnProperty.call(obj, 'project');
      if (hasProject) {
        const p = projectProblem(obj.project);
        if (p !== undefined) problems.push(p);
      }
      const hasAction = Object.prototype.hasOwnProperty.call(obj, 'action');
      const hasDecision = Object.prototype.hasOwnProperty.call(obj, 'decision');
      let pattern: Pattern | undefined;
      if (!hasAction) problems.push('"action" is missing');
      else if (typeof obj.action !== 'string') problems.push('"action" must be a string');
      else {
        try {
          pattern = parsePattern(obj.action);
        } catch (e) {
          if (!(e instanceof ActionError)) throw e;
          problems.push(`invalid action: ${e.message}`);
        }
      }
      const decision = obj.decision;
      if (!hasDecision) problems.push('"decision" is missing');
      else if (typeof decision !== 'string' || !(DECISIONS as readonly string[]).includes(decision)) {
        problems.push(`"decision" must be "allow", "ask" or "deny", not ${jsonExcerpt(decision)}`);
      }
      if (pattern?.kind === 'private' && decision === 'ask') {
        problems.push(`${pattern.text} takes "allow" or "deny": an address check cannot wait for an answer`);
      }
      let args: ArgRules | undefined;
      if (Object.prototype.hasOwnProperty.call(obj, 'args')) {
        const parsed = parseArgRules(obj.args);
        if ('problem' in parsed) problems.push(parsed.problem);
        else args = parsed.args;
        if (pattern !== undefined && pattern.kind !== 'tool')
          problems.push(
            `"args" constrains a tool's arguments: it belongs on a rule for mcp.<server>.tool.<tool> (or mcp.<server>.tool.*), not on ${pattern.text}`,
          );
        else if (decision !== 'allow' && (DECISIONS as readonly string[]).includes(decision as string))
          problems.push(`"args" belongs on an "allow" rule (it says which calls are allowed), not on ${jsonExcerpt(decision)}`);
      }
      if (problems.length > 0 || pattern === undefined) {
        fail(problems.join('; '));
        return;
      }
      const rule: Rule = {
        action: pattern.text,
        decision: decision as Decision,
        origin: where,
        index,
        ...(pattern.text !== obj.action ? { written: obj.action as string } : {}),
        ...(hasProject ? { project: obj.project as string } : {}),
        ...(args !== undefined ? { args } : {}),
      };
      rules.push(rule);
    },
  );
  return { rules, errors };
}

/**
 * `mcp.<server>.tool.<tool>`.
 * @throws {NameError} when the server or tool name cannot be named by a rule.
 */
export function toolAction(server: string, tool: string): string {
  checkServerName(server);
  checkToolName(tool);
  return `mcp.${server}.tool.${tool}`;
}

/**
 * `mcp.<server>.network`: a server this machine runs reaching the network.
 * @throws {NameError} when the server name cannot be named by a rule.
 */
export function networkAction(server: string): string {
  checkServerName(server);
  return `mcp.${server}.network`;
}

/**
 * `mcp.<server>.private`: a remote server reaching private address ranges (10/8, 172.16/12, 192.168/16, fc00::/7,
 * 100.64/10, 198.18/15, …). Reachable unless a rule for exactly this action says deny.
 * @throws {NameError} when the server name cannot be named by a rule.
 */
export function privateAction(server: string): string {
  checkServerName(server);
  return `mcp.${server}.private`;
}

/**
 * `secret.use.<NAME>`.
 * @throws {NameError} when the name is not upper-case letters, digits and '_'.
 */
export function secretAction(name: string): string {
  if (!SECRET_NAME_RE.test(name)) throw new NameError(`secret name ${jsonExcerpt(name)} is invalid`);
  return `secret.use.${name}`;
}
