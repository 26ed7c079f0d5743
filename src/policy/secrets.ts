// The secrets block: validating entries {name, to, bind, as?, project?}, and for one server deciding
// which entries apply (by name, host and scope: an entry without "project" goes to your user-scope servers
// only), checking secret.use.<NAME>, reading each value once and turning the values into request headers
// (remote) or environment variables (local), or dropping the server.

import { decideFor, resolve } from './decide';
import type { Asker } from './decide';
import { hostAction } from './hostname';
import { appliesTo, projectProblem, type ProjectQualified, type ServerIdentity } from './identity';
import { defaultMasker, Masker } from './mask';
import { formatOrigin, Origin, jsonExcerpt, SECRET_NAME_RE, walkItems } from './names';
import { ActionError, networkAction, parsePattern, Pattern, patternMatches, Rule, RuleText, secretAction } from './rules';

/** How a secret reaches a server: a request header (remote) or an environment variable (local). */
export type Bind = 'header' | 'env';

/** A validated secrets entry. `project` (as for rules): absent = your user-scope servers only. */
export interface SecretEntry extends ProjectQualified {
  /** The secret's name, `[A-Z_][A-Z0-9_]*`; its rule is `secret.use.<name>`. */
  readonly name: string;
  /** Which servers it goes to, in rule-action syntax, normal form (`mcp.*`, `mcp.<server>.*`, `mcp.<server>.host.…`). */
  readonly to: string;
  readonly bind: Bind;
  /** Header name (bind header) or variable name (bind env); see {@link bindSecrets} for defaults. */
  readonly as?: string;
  readonly origin: Origin;
  /** Position in the list it was parsed from (0-based). */
  readonly index: number;
}

/** An invalid secrets entry: names the entry (origin, index, text) and why. */
export class SecretError extends Error {
  constructor(
    readonly origin: Origin,
    /** The entry's index, or undefined when the block itself is invalid. */
    readonly index: number | undefined,
    /** The entry as written, quoted. */
    readonly text: string,
    readonly reason: string,
  ) {
    super(index === undefined ? `${formatOrigin(origin)}: ${reason}` : `${formatOrigin(origin)}: secrets[${index}] ${text}: ${reason}`);
    this.name = 'SecretError';
  }
}

/** The result of {@link parseSecrets}: every input is either an entry or an error. */
export interface ParsedSecrets {
  readonly entries: SecretEntry[];
  readonly errors: SecretError[];
}

const ENTRY_KEYS = new Set(['name', 'to', 'bind', 'as', 'project']);
// RFC 9110 token.
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Headers the transport owns, or that would change what the request is.
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);
const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

function asProblem(bind: Bind, as: string): string | undefined {
  if (RESERVED_NAMES.has(as.toLowerCase())) return `"as" may not be ${jsonExcerpt(as)}`;
  if (bind === 'header') {
    if (!HEADER_NAME_RE.test(as)) return `"as" must be an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~), not ${jsonExcerpt(as)}`;
    const lower = as.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('proxy-')) {
      return `"as" may not be ${jsonExcerpt(as)}: that header belongs to the transport`;
    }
  } else if (!ENV_NAME_RE.test(as)) {
    return `"as" must be an environment variable name (letters, digits and "_", not starting with a digit), not ${jsonExcerpt(as)}`;
  }
  return undefined;
}

function toPattern(to: string): { pattern?: Pattern; problem?: string } {
  let pattern: Pattern;
  try {
    pattern = parsePattern(to);
  } catch (e) {
    if (e instanceof ActionError) return { problem: `invalid "to": ${e.message}` };
    throw e;
  }
  if (pattern.segments[0] !== 'mcp') return { problem: `"to" must start with "mcp.", not ${jsonExcerpt(to)}` };
  if (pattern.kind === 'tool' || pattern.kind === 'network') {
    return {
      problem: `"to" names a ${pattern.kind}, but a secret goes to a whole server (mcp.<server>.*) or its host (mcp.<server>.host.…)`,
    };
  }
  return { pattern };
}

/**
 * Validate a raw secrets block (e.g. parsed JSON). Every item ends up in
 * `entries` or in `errors` (a {@link SecretError} naming the entry) — none is dropped.
 *
 * An entry is `{ name, to, bind, as? }` and nothing else:
 * - `name`: `[A-Z_][A-Z0-9_]*`;
 * - `to`: a rule pattern starting `mcp.` that names servers or hosts
 *   (`mcp.*`, `mcp.<server>.*`, `mcp.<server>.host.<reversed host>[.*]`), not a
 *   tool or `network`; with `bind: "env"` it may not name a host (only remote
 *   servers have one, and env is for local servers);
 * - `bind`: `header` or `env`;
 * - `as`: for header, an HTTP header name other than the ones the transport
 *   owns (Host, Content-Length, Content-Type, Transfer-Encoding, Connection,
 *   Keep-Alive, Upgrade, TE, Trailer, Expect, Accept, Mcp-Session-Id,
 *   Mcp-Protocol-Version, Last-Event-ID, Proxy-*); for env, a variable name.
 *
 * @param origin where the block came from; a function gives each item its own origin.
 */
export function parseSecrets(raw: unknown, origin: Origin | ((index: number) => Origin)): ParsedSecrets {
  const entries: SecretEntry[] = [];
  const errors = walkItems(
    raw,
    origin,
    { list: 'secrets', item: 'a secrets entry is an object {"name", "to", "bind", "as"?}' },
    (o, i, text, reason) => new SecretError(o, i, text, reason),
    (obj, where, index, fail) => {
      const has = (k: string) => Object.prototype.hasOwnProperty.call(obj, k);
      const problems: string[] = [];
      const unknown = Object.keys(obj).filter((k) => !ENTRY_KEYS.has(k));
      if (unknown.length > 0) {
        problems.push(
          `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => jsonExcerpt(k)).join(', ')}; an entry has only "name", "to", "bind", "as" and "project"`,
        );
      }
      if (has('project')) {
        const p = projectProblem(obj.project);
        if (p !== undefined) problems.push(p);
      }
      if (!has('name')) problems.push('"name" is missing');
      else if (typeof obj.name !== 'string' || !SECRET_NAME_RE.test(obj.name)) {
        problems.push(`"name" must be upper-case letters, digits and "_", not starting with a digit, not ${jsonExcerpt(obj.name)}`);
      }
      let pattern: Pattern | undefined;
      if (!has('to')) problems.push('"to" is missing');
      else if (typeof obj.to !== 'string') problems.push('"to" must be a string');
      else {
        const r = toPattern(obj.to);
        if (r.problem !== undefined) problems.push(r.problem);
        pattern = r.pattern;
      }
      const bind = obj.bind;
      const bindOk = bind === 'header' || bind === 'env';
      if (!has('bind')) problems.push('"bind" is missing');
      else if (!bindOk) problems.push(`"bind" must be "header" or "env", not ${jsonExcerpt(bind)}`);
      if (has('as')) {
        if (typeof obj.as !== 'string') problems.push('"as" must be a string');
        else if (bindOk) {
          const p = asProblem(bind, obj.as);
          if (p !== undefined) problems.push(p);
        }
      }
      if (bind === 'env' && pattern?.kind === 'host') {
        problems.push('"bind": "env" is for local servers, but "to" names a host, which only a remote server has');
      }
      if (problems.length > 0 || pattern === undefined || !bindOk) {
        fail(problems.join('; '));
        return;
      }
      entries.push({
        name: obj.name as string,
        to: pattern.text,
        bind,
        ...(typeof obj.as === 'string' ? { as: obj.as } : {}),
        ...(has('project') ? { project: obj.project as string } : {}),
        origin: where,
        index,
      });
    },
  );
  return { entries, errors };
}

/** A server secrets may go to (name, scope, project): remote when `host` is given (the URL's host), local otherwise. */
export type ServerRef = ServerIdentity & { readonly host?: string };

/** Reads a secret's value (SecretStorage in the extension, `MCP_GATE_SECRET_<NAME>` in the CLI). */
export type SecretSource = (name: string) => Promise<string | undefined>;

/** What {@link bindSecrets} needs besides the server and the entries. */
export interface BindOptions {
  readonly source: SecretSource;
  /** The user's rules; `secret.use.<NAME>` is decided against them. */
  readonly rules: readonly Rule[];
  /** Answers `ask` where a person can; without it `ask` refuses. */
  readonly asker?: Asker;
  /** Where values are registered for masking; defaults to {@link defaultMasker}. */
  readonly masker?: Masker;
  /** Appended to the "has no value" line, e.g. where to set it. */
  readonly missingHint?: (name: string) => string;
}

/** The outcome for one server: dropped with a reason, or the headers / env to start it with. */
export type SecretBinding =
  | {
      readonly drop: true;
      readonly reason: string;
      /** The reason without the server's name (for a line that names it already). */ readonly why: string;
    }
  | {
      readonly drop: false;
      /** Request headers for a remote server. */
      readonly headers: Record<string, string>;
      /** Environment variables for a local server's process only. */
      readonly env: Record<string, string>;
      /** Lines to show and log (never holding a value): secrets not sent, values too short to mask. */
      readonly notes: string[];
      /** Names of the secrets that were sent. */
      readonly used: string[];
      /** Rules to write because a person answered "always". */
      readonly remember: RuleText[];
    };

/**
 * The action a server's secrets are matched against: for a remote server its
 * host action `mcp.<server>.host.<reversed host>`; for a local server
 * `mcp.<server>.network`, which only `mcp.*` and `mcp.<server>.*` cover among
 * the `to` patterns {@link parseSecrets} accepts.
 * @throws when the server name or host cannot be named by a rule.
 */
function serverSecretAction(server: ServerRef): string {
  return server.host !== undefined ? hostAction(server.name, server.host) : networkAction(server.name);
}

/**
 * Does `entry` apply to `server`? Its "project" must be for the server (absent: user-scope servers only; see
 * identity.ts). Header entries apply only to remote servers,
 * env entries only to local ones, and `to` must match
 * {@link serverSecretAction}: e.g. `mcp.notion.*`, `mcp.notion.host.com.notion.*`
 * or `mcp.*` for notion at mcp.notion.com.
 */
export function secretApplies(entry: SecretEntry, server: ServerRef): boolean {
  if (!appliesTo(entry, server)) return false;
  if ((entry.bind === 'header') !== (server.host !== undefined)) return false;
  let own: string;
  try {
    own = serverSecretAction(server);
  } catch {
    return false;
  }
  return patternMatches(parsePattern(entry.to), parsePattern(own, false).segments);
}

/**
 * Why `value` cannot be sent as a header value, or undefined when it can.
 * Allowed: visible ASCII (0x21–0x7E) with spaces or tabs inside. Refused: NUL,
 * CR, LF, other control characters, anything outside ASCII (obs-text has no
 * agreed meaning and some clients reject it), and leading or trailing
 * whitespace (it would be stripped in transit, sending a different value).
 */
export function headerValueProblem(value: string): string | undefined {
  if (value.includes('\0')) return 'a NUL character';
  if (/[\r\n]/.test(value)) return 'a line break (CR or LF)';
  if (/[\x01-\x08\x0b-\x1f\x7f]/.test(value)) return 'a control character';
  if (/[^\t\x20-\x7e]/.test(value)) return 'a character outside printable ASCII';
  if (/^[\t ]|[\t ]$/.test(value)) return 'leading or trailing whitespace, which would be stripped in transit';
  return undefined;
}

function setOwn(target: Record<string, string>, key: string, value: string): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Work out the secrets for one server before its first request.
 *
 * 1. The entries that apply ({@link secretApplies}). Two different secrets
 *    bound to the same header (case-insensitive) or variable drop the server.
 * 2. `secret.use.<NAME>` is decided for each distinct name, `ask` resolved with
 *    `asker` (none: refusal). A refusal drops the server, before any value is read.
 * 3. Each value is read once (however many entries use it) and added to the
 *    masker. A missing or empty value, or a failing read, drops the server.
 * 4. header bind: `Authorization: Bearer <value>`, or the raw value under the
 *    header named by `as`. env bind: the variable named by `as`, default the
 *    secret's name. A value a header cannot carry ({@link headerValueProblem}),
 *    or an env value holding NUL, is not sent at all; the server starts
 *    without it and a note says so (without the value).
 *
 * Never throws for a refused, missing or unreadable secret; dropping says why.
 */
export async function bindSecrets(server: ServerRef, entries: readonly SecretEntry[], options: BindOptions): Promise<SecretBinding> {
  const masker = options.masker ?? defaultMasker;
  const who = `server ${jsonExcerpt(server.name)}`;
  const drop = (why: string): SecretBinding => ({ drop: true, reason: `${who} is left out: ${why}`, why });
  try {
    serverSecretAction(server);
  } catch (e) {
    return drop(`it cannot be matched against secrets: ${e instanceof Error ? e.message : String(e)}`);
  }
  const applicable = entries.filter((e) => secretApplies(e, server));

  // 1. conflicts
  const targets = new Map<string, SecretEntry>();
  const chosen: { entry: SecretEntry; target: string }[] = [];
  for (const entry of applicable) {
    const target = entry.bind === 'header' ? (entry.as ?? 'Authorization') : (entry.as ?? entry.name);
    const key = `${entry.bind}:${entry.bind === 'header' ? target.toLowerCase() : target}`;
    const prior = targets.get(key);
    if (prior !== undefined) {
      if (prior.name === entry.name) continue;
      const kind = entry.bind === 'header' ? 'header' : 'variable';
      return drop(
        `secrets ${prior.name} (secrets[${prior.index}] in ${formatOrigin(prior.origin)}) and ${entry.name} ` +
          `(secrets[${entry.index}] in ${formatOrigin(entry.origin)}) both bind ${kind} ${target}.`,
      );
    }
    targets.set(key, entry);
    chosen.push({ entry, target });
  }
  const names = [...new Set(chosen.map((c) => c.entry.name))];

  // 2. policy, before reading anything
  const remember: RuleText[] = [];
  for (const name of names) {
    const verdict = await resolve(decideFor(server, secretAction(name), options.rules), options.asker);
    if (verdict.remember) remember.push(...verdict.remember);
    if (verdict.decision !== 'allow') return drop(`secret ${name} is refused: ${verdict.reason}`);
  }

  // 3. read each value once
  const notes: string[] = [];
  const values = new Map<string, string>();
  for (const name of names) {
    let value: unknown;
    try {
      value = await options.source(name);
    } catch (e) {
      return drop(`secret ${name} could not be read: ${masker.mask(e instanceof Error ? e.message : String(e))}`);
    }
    if (typeof value === 'string' && value !== '') {
      if (!masker.add(value)) notes.push(`secret ${name} is shorter than 4 characters, so it cannot be masked in output.`);
    }
    if (typeof value !== 'string' || value === '') {
      const hint = options.missingHint ? ` ${options.missingHint(name)}` : '';
      return drop(`secret ${name} has no value.${hint}`);
    }
    values.set(name, value);
  }

  // 4. bind
  const headers: Record<string, string> = {};
  const env: Record<string, string> = {};
  const used = new Set<string>();
  for (const { entry, target } of chosen) {
    const value = values.get(entry.name)!;
    if (entry.bind === 'header') {
      const problem = headerValueProblem(value);
      if (problem !== undefined) {
        notes.push(
          `secret ${entry.name} was not sent to ${who}: its value holds ${problem}, which a header cannot carry; the server starts without header ${target}.`,
        );
        continue;
      }
      setOwn(headers, target, entry.as === undefined ? `Bearer ${value}` : value);
    } else {
      if (value.includes('\0')) {
        notes.push(
          `secret ${entry.name} was not sent to ${who}: its value holds a NUL character, which an environment variable cannot carry; the server starts without ${target}.`,
        );
        continue;
      }
      setOwn(env, target, value);
    }
    used.add(entry.name);
  }
  return { drop: false, headers, env, notes, used: [...used], remember };
}
