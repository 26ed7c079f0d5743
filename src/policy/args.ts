// Argument rules (issue 27): an `allow` rule for a tool may constrain the call's arguments — a path argument under
// given folders, a URL argument on given hosts, an argument one of given values. This file holds their grammar (the
// `args` field of a rule, validated where rules are parsed), the check made at call time, and the sentences that
// `explain` and a refusal print. The deciding rule's constraints are the ones checked (most specific wins, as for
// every rule); a call whose arguments break one is refused, naming the rule and the argument.
//
// Choices, written down (docs/policy.md "Argument rules"):
//   - Paths must be absolute (or `file:` URLs). A relative path, `~…`, an empty string or one holding a NUL is
//     refused: the gate cannot know the folder or the home a server would resolve it against.
//   - A path is under a folder when it is lexically (after `.`/`..`) and also after resolving every symbolic link
//     of its longest existing prefix (a link in the workspace to /etc does not pass). The folder itself counts.
//   - A URL is `http:` or `https:` only, written plainly: no user part (`a@b`), no backslash, no white space or
//     control character, so parsers that disagree about its host (WHATWG, Python's urllib) cannot be told apart.
//     Its host (IDN to punycode, IP literals normalised) must equal a listed host or, for `*.example.com`, be a
//     subdomain of it.
//   - An array argument passes when each element does; an object never passes a path, URL or value constraint.
//   - A constrained argument the call does not give is refused unless the constraint says `"optional": true`.
//   - `${workspaceFolder}` in a folder means the project folder the session runs for.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { domainToASCII, fileURLToPath } from 'node:url';
import * as ipaddr from 'ipaddr.js';
import { HostNameError, reverseHost } from './hostname';
import { jsonExcerpt } from './names';

/** One argument's constraint, as written in a rule's `args`. */
export interface ArgConstraint {
  /** Absolute folders (or `${workspaceFolder}…`) the path argument must lie under. */
  readonly under?: readonly string[];
  /** Hosts (`example.com`, `*.example.com`, an IP literal) a URL argument must be on. */
  readonly hosts?: readonly string[];
  /** The values the argument may take (JSON strings, numbers, booleans, null; compared exactly). */
  readonly oneOf?: readonly (string | number | boolean | null)[];
  /** The call may leave the argument out. */
  readonly optional?: boolean;
}

/** A rule's `args`: argument name → its constraint. */
export type ArgRules = Readonly<Record<string, ArgConstraint>>;

export const WORKSPACE_VAR = '${workspaceFolder}';
const CONSTRAINT_KEYS = new Set(['under', 'hosts', 'oneOf', 'optional']);
const MAX_ARGS = 64;
const MAX_LIST = 256;

const listOf = (v: unknown): unknown[] | undefined => (typeof v === 'string' ? [v] : Array.isArray(v) ? v : undefined);

/**
 * Validates a rule's `args` field. Returns the constraints in normal form (`under` and `hosts` as lists), or a
 * sentence saying what is wrong.
 */
export function parseArgRules(raw: unknown): { args: ArgRules } | { problem: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { problem: '"args" must be an object {"<argument>": {"under"|"hosts"|"oneOf": …}}' };
  const names = Object.keys(raw);
  if (names.length === 0) return { problem: '"args" is empty; leave it out, or constrain an argument' };
  if (names.length > MAX_ARGS) return { problem: `"args" constrains ${names.length} arguments; at most ${MAX_ARGS}` };
  const out = Object.create(null) as Record<string, ArgConstraint>;
  for (const name of names) {
    const where = `"args" ${jsonExcerpt(name)}`;
    if (name === '' || name === '__proto__') return { problem: `${where} is not an argument name` };
    const c = (raw as Record<string, unknown>)[name];
    if (c === null || typeof c !== 'object' || Array.isArray(c))
      return { problem: `${where} must be an object with "under", "hosts" or "oneOf"` };
    const unknown = Object.keys(c).filter((k) => !CONSTRAINT_KEYS.has(k));
    if (unknown.length)
      return {
        problem: `${where} has unknown key ${unknown.map((k) => jsonExcerpt(k)).join(', ')}; a constraint has "under", "hosts", "oneOf" and "optional"`,
      };
    const o = c as Record<string, unknown>;
    const kinds = ['under', 'hosts', 'oneOf'].filter((k) => o[k] !== undefined);
    if (kinds.length !== 1)
      return {
        problem: `${where} must have exactly one of "under", "hosts" or "oneOf"${kinds.length ? `, not ${kinds.join(' and ')}` : ''}`,
      };
    if (o.optional !== undefined && typeof o.optional !== 'boolean') return { problem: `${where}: "optional" must be true or false` };
    const constraint: { under?: string[]; hosts?: string[]; oneOf?: (string | number | boolean | null)[]; optional?: boolean } = {};
    if (o.optional === true) constraint.optional = true;
    if (o.under !== undefined) {
      const list = listOf(o.under);
      if (!list || list.length === 0 || list.length > MAX_LIST)
        return { problem: `${where}: "under" must be a folder or a list of 1 to ${MAX_LIST} folders` };
      for (const f of list) {
        const why = folderProblem(f);
        if (why) return { problem: `${where}: "under" ${jsonExcerpt(f)} ${why}` };
      }
      constraint.under = list as string[];
    }
    if (o.hosts !== undefined) {
      const list = listOf(o.hosts);
      if (!list || list.length === 0 || list.length > MAX_LIST)
        return { problem: `${where}: "hosts" must be a host or a list of 1 to ${MAX_LIST} hosts` };
      for (const h of list) {
        const why = hostPatternProblem(h);
        if (why) return { problem: `${where}: "hosts" ${jsonExcerpt(h)} ${why}` };
      }
      constraint.hosts = list as string[];
    }
    if (o.oneOf !== undefined) {
      if (!Array.isArray(o.oneOf) || o.oneOf.length === 0 || o.oneOf.length > MAX_LIST)
        return { problem: `${where}: "oneOf" must be a list of 1 to ${MAX_LIST} values` };
      const bad = (o.oneOf as unknown[]).find((v) => v !== null && !['string', 'number', 'boolean'].includes(typeof v));
      if (bad !== undefined)
        return { problem: `${where}: "oneOf" holds ${jsonExcerpt(bad)}; its values are strings, numbers, true, false or null` };
      constraint.oneOf = o.oneOf as (string | number | boolean | null)[];
    }
    out[name] = constraint;
  }
  return { args: out };
}

function folderProblem(f: unknown): string | undefined {
  if (typeof f !== 'string' || f === '') return 'must be a non-empty string';
  if (f.includes('\0')) return 'holds a NUL character';
  if (f.startsWith(WORKSPACE_VAR)) {
    const rest = f.slice(WORKSPACE_VAR.length);
    return rest === '' || rest.startsWith('/') ? undefined : `must be ${WORKSPACE_VAR} or ${WORKSPACE_VAR}/<folder>`;
  }
  return path.isAbsolute(f) ? undefined : `must be an absolute folder or start with ${WORKSPACE_VAR}`;
}

function hostPatternProblem(h: unknown): string | undefined {
  if (typeof h !== 'string' || h === '') return 'must be a non-empty string';
  const bare = h.startsWith('*.') ? h.slice(2) : h;
  if (bare.includes('*')) return 'may hold "*" only as a leading "*." (any subdomain)';
  if (h.startsWith('*.') && (bare.startsWith('[') || ipaddr.isValid(bare))) return 'is "*." before an IP address, which matches nothing';
  try {
    reverseHost(bare);
  } catch (e) {
    if (e instanceof HostNameError) return `is not a host: ${e.message}`;
    throw e;
  }
  return undefined;
}

/** The host in the one normal form both sides are compared in (reversed labels, IP literals in brackets). */
function normalHost(h: string): string {
  return reverseHost(h);
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith('*.')) {
    const base = normalHost(pattern.slice(2));
    return host.startsWith(`${base}.`);
  }
  return normalHost(pattern) === host;
}

function resolveFolder(f: string, workspace: string | undefined): string | undefined {
  if (!f.startsWith(WORKSPACE_VAR)) return path.resolve(f);
  return workspace === undefined ? undefined : path.resolve(workspace + f.slice(WORKSPACE_VAR.length));
}

/** The real path of `p`: its longest existing prefix with links resolved, then the rest as written. */
function realish(p: string): string {
  let head = p;
  const tail: string[] = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(head), ...tail.reverse());
    } catch {
      const up = path.dirname(head);
      if (up === head) return p;
      tail.push(path.basename(head));
      head = up;
    }
  }
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** Why `value` is not a path under one of `folders`, or undefined when it is. */
function pathRefusal(value: string, folders: readonly string[], workspace: string | undefined): string | undefined {
  if (value === '') return 'is empty';
  if (value.includes('\0')) return 'holds a NUL character';
  let p = value;
  if (/^file:/i.test(p)) {
    try {
      p = fileURLToPath(p);
    } catch (e) {
      return `is not a file URL MCP Gate can read (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  if (p.startsWith('~')) return 'starts with "~": a server may read it as its home folder; give an absolute path';
  if (!path.isAbsolute(p)) return 'is not an absolute path: the folder a server would resolve it against is its own; give an absolute path';
  const lexical = path.resolve(p);
  const real = realish(lexical);
  const roots = folders.map((f) => resolveFolder(f, workspace)).filter((f): f is string => f !== undefined);
  for (const root of roots) {
    const realRoot = realish(root);
    if (inside(lexical, root) && inside(real, realRoot)) return undefined;
  }
  const shown = roots.length ? roots.join(', ') : folders.join(', ');
  return real !== lexical && roots.some((r) => inside(lexical, r))
    ? `leads through a symbolic link to ${jsonExcerpt(real)}, which is not under ${shown}`
    : `is not under ${shown}`;
}

/** Why `value` is not a URL on one of `hosts`, or undefined when it is. */
function urlRefusal(value: string, hosts: readonly string[]): string | undefined {
  if (!/^https?:\/\//i.test(value)) return 'is not an http:// or https:// URL';
  if (/[\\\s\u0000-\u001f\u007f]/.test(value))
    return 'holds a backslash, white space or a control character, which URL parsers read differently';
  const authority = value.slice(value.indexOf('//') + 2).split(/[/?#]/, 1)[0];
  if (authority.includes('@')) return 'has a user part ("…@host"), which URL parsers read differently';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  let host: string;
  try {
    const h = url.hostname.startsWith('[') ? url.hostname : domainToASCII(url.hostname) || url.hostname;
    host = normalHost(h);
  } catch (e) {
    return `has a host MCP Gate cannot read (${e instanceof Error ? e.message : String(e)})`;
  }
  if (hosts.some((p) => hostMatches(p, host))) return undefined;
  return `is on ${jsonExcerpt(url.hostname)}, not on ${hosts.join(', ')}`;
}

function oneRefusal(c: ArgConstraint, v: unknown, workspace: string | undefined): string | undefined {
  if (c.oneOf) return c.oneOf.some((x) => x === v) ? undefined : `is not one of ${c.oneOf.map((x) => JSON.stringify(x)).join(', ')}`;
  if (typeof v !== 'string') return `is ${v === null ? 'null' : Array.isArray(v) ? 'a nested list' : typeof v}, not a string`;
  if (c.under) return pathRefusal(v, c.under, workspace);
  if (c.hosts) return urlRefusal(v, c.hosts);
  return undefined;
}

/**
 * Checks a call's arguments against a rule's constraints. Returns a sentence naming the first argument that breaks
 * one (`argument "path" ("/etc/passwd") is not under /work/repo`), or undefined when all hold.
 * @param workspace the project folder the session runs for (`${workspaceFolder}`).
 */
export function argumentsRefusal(rules: ArgRules, args: unknown, workspace: string | undefined): string | undefined {
  const given = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  for (const name of Object.keys(rules)) {
    const c = rules[name];
    const where = `argument ${jsonExcerpt(name)}`;
    if (!Object.prototype.hasOwnProperty.call(given, name) || given[name] === undefined) {
      if (c.optional) continue;
      return `${where} is missing, and the rule constrains it (mark it "optional": true to let a call leave it out)`;
    }
    const v = given[name];
    const values = Array.isArray(v) ? v : [v];
    if (Array.isArray(v) && v.length === 0 && !c.optional) return `${where} is an empty list`;
    for (const x of values) {
      const why = oneRefusal(c, x, workspace);
      if (why) return `${where} (${jsonExcerpt(x, 120)}) ${why}`;
    }
  }
  return undefined;
}

/** What a rule's constraints say, one sentence per argument, for `explain`. */
export function describeArgRules(rules: ArgRules, workspace: string | undefined): string[] {
  return Object.keys(rules).map((name) => {
    const c = rules[name];
    const opt = c.optional ? ' (or left out)' : '';
    if (c.oneOf) return `argument ${jsonExcerpt(name)} must be one of ${c.oneOf.map((x) => JSON.stringify(x)).join(', ')}${opt}`;
    if (c.hosts) return `argument ${jsonExcerpt(name)} must be an http(s) URL on ${c.hosts.join(', ')}${opt}`;
    const folders = (c.under ?? []).map((f) => {
      const r = resolveFolder(f, workspace);
      return r !== undefined && r !== f ? `${f} (${r})` : f;
    });
    return `argument ${jsonExcerpt(name)} must be an absolute path under ${folders.join(', ')}${opt}`;
  });
}
