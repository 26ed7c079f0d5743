// The user's sandbox settings and the one profile type: which local servers run contained and with what extra
// reach (SandboxProfile: network, extra read and write paths), decided here (sandboxFor) from the settings alone;
// src/policy/start.ts asks it once per start with the network rules (decideStart); src/host/sandbox/decision.ts adds
// whether bubblewrap starts (containmentFor), src/host/sandbox/contain.ts runs that
// (startPlan) and words it (describeContainment), and src/host/sandbox/sandbox.ts builds the bwrap command for the
// profile. The settings' schema for the extension is package.json's `mcpGate.sandbox`. User scope only
// (MCP Gate's configuration file and the extension's application-scope `mcpGate.sandbox`); a repository file can
// never loosen them. Shape:
//   "sandbox": { "userServers": false,
//                "servers": [{ "server": "db", "project"?: "~/src/app", "read"?: ["/opt/data"], "write"?: ["~/notes"],
//                              "unixSockets"?: true, "memoryMiB"?: 8192, "processes"?: 4096, "cpuSeconds"?: 86400,
//                              "off"?: true }] }
// Every repository server is contained; user-scope servers only with `userServers: true`. An entry matches a
// server as every grant does ("server": "*" is every server the entry's "project" covers) (src/policy/identity.ts: no "project" = your user servers, a folder = that
// project's repository servers). `off: true` is the explicit opt-out, shown by doctor and logged at each start.
// `unixSockets: true` lets a contained server make Unix sockets (and so connect to a socket file it can see: a
// docker.sock shown as a read path); without it the sandbox's seccomp filter refuses them (src/host/sandbox/seccomp.ts).
// `memoryMiB`, `processes`, `cpuSeconds` set a contained server's limits (DEFAULT_LIMITS otherwise, chosen so a real
// server never meets them; several entries that apply: the largest value); src/host/sandbox/limits.ts enforces them.
// Network is not here: it is the rule `mcp.<server>.network` (allow / ask / deny; no rule = no network).
import * as path from 'node:path';
import {
  appliesTo,
  projectProblem,
  resolveProjects,
  systemResolver,
  type ProjectQualified,
  type ProjectResolver,
  type ServerIdentity,
} from './identity';
import { formatOrigin, type Origin } from './names';

export interface SandboxEntry extends ProjectQualified {
  readonly server: string;
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly unixSockets: boolean;
  /** The limits this entry sets (the others are left to other entries or the defaults). */
  readonly limits: Partial<ResourceLimits>;
  readonly off: boolean;
  readonly origin: Origin;
}

/**
 * What a contained server may use. `memoryMiB`: each of its processes' data (RLIMIT_DATA: heap and private
 * mappings), and the whole server's memory where a cgroup holds it; `processes`: processes and threads of the
 * server together; `cpuSeconds`: CPU time of each of its processes (RLIMIT_CPU).
 */
export interface ResourceLimits {
  readonly memoryMiB: number;
  readonly processes: number;
  readonly cpuSeconds: number;
}

/**
 * The defaults: far above what a real MCP server uses (a Node server is ~60 MiB and ~12 threads; a browser-driving
 * one a few hundred threads), far below what takes a machine down (a fork bomb, an allocation that never stops).
 */
export const DEFAULT_LIMITS: ResourceLimits = { memoryMiB: 4096, processes: 1024, cpuSeconds: 14_400 };

/** The limit keys of a sandbox entry, each with the least value MCP Gate accepts (below it no server would start). */
export const LIMIT_KEYS: Readonly<Record<keyof ResourceLimits, number>> = { memoryMiB: 64, processes: 16, cpuSeconds: 1 };

export interface SandboxSettings {
  readonly userServers: boolean;
  readonly entries: readonly SandboxEntry[];
  /** An unusable item: every server that would be contained is refused until it is fixed. */
  readonly problems: readonly string[];
  /**
   * The administrator's layer requires the sandbox (its file): every local server runs contained, the user's own
   * too, and no `off` opt-out applies.
   */
  readonly required?: string;
}

export const NO_SANDBOX_SETTINGS: SandboxSettings = { userServers: false, entries: [], problems: [] };

/** The keys of a `sandbox` block and of one of its `servers` entries (package.json's schema lists the same). */
export const SANDBOX_KEYS = ['userServers', 'servers'] as const;
export const SANDBOX_ENTRY_KEYS = [
  'server',
  'project',
  'read',
  'write',
  'unixSockets',
  'memoryMiB',
  'processes',
  'cpuSeconds',
  'off',
] as const;
const KEYS = new Set<string>(SANDBOX_ENTRY_KEYS);

function pathList(v: unknown, where: string, problems: string[]): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((p) => typeof p === 'string')) {
    problems.push(`${where}: must be a list of absolute paths or "~/…"`);
    return [];
  }
  for (const p of v as string[])
    if (!(path.isAbsolute(p) || p.startsWith('~/'))) problems.push(`${where}: ${JSON.stringify(p)} is not an absolute path or "~/…"`);
  return v as string[];
}

/** Parses a `sandbox` block. `origin` says where it was written (for messages). */
export function parseSandbox(raw: unknown, origin: (index: number) => Origin, resolver: ProjectResolver = systemResolver): SandboxSettings {
  if (raw === undefined) return NO_SANDBOX_SETTINGS;
  const problems: string[] = [];
  const at = formatOrigin(origin(-1));
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ...NO_SANDBOX_SETTINGS, problems: [`${at}: "sandbox" must be an object`] };
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r))
    if (!(SANDBOX_KEYS as readonly string[]).includes(k))
      problems.push(`${at}: sandbox: unknown key ${JSON.stringify(k)} (expected userServers, servers)`);
  if (r.userServers !== undefined && typeof r.userServers !== 'boolean') problems.push(`${at}: sandbox.userServers must be true or false`);
  const entries: SandboxEntry[] = [];
  if (r.servers !== undefined && !Array.isArray(r.servers)) problems.push(`${at}: sandbox.servers must be a list`);
  else
    ((r.servers as unknown[] | undefined) ?? []).forEach((e, i) => {
      const where = `${formatOrigin(origin(i))}: sandbox.servers[${i}]`;
      if (typeof e !== 'object' || e === null || Array.isArray(e)) return problems.push(`${where}: must be an object`);
      const o = e as Record<string, unknown>;
      for (const k of Object.keys(o))
        if (!KEYS.has(k)) problems.push(`${where}: unknown key ${JSON.stringify(k)} (expected ${[...KEYS].join(', ')})`);
      if (typeof o.server !== 'string' || !/^([A-Za-z0-9_-]{1,64}|\*)$/.test(o.server))
        return problems.push(`${where}: "server" must be a server name or "*"`);
      if (o.project !== undefined) {
        const p = projectProblem(o.project);
        if (p) return problems.push(`${where}: ${p}`);
      }
      if (o.off !== undefined && typeof o.off !== 'boolean') problems.push(`${where}: "off" must be true or false`);
      if (o.unixSockets !== undefined && typeof o.unixSockets !== 'boolean') problems.push(`${where}: "unixSockets" must be true or false`);
      const limits: Partial<Record<keyof ResourceLimits, number>> = {};
      for (const [k, least] of Object.entries(LIMIT_KEYS) as [keyof ResourceLimits, number][]) {
        const v = o[k];
        if (v === undefined) continue;
        if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < least)
          problems.push(`${where}: "${k}" must be a whole number of at least ${least}`);
        else limits[k] = v;
      }
      entries.push({
        server: o.server,
        project: o.project as string | undefined,
        read: pathList(o.read, `${where}.read`, problems),
        write: pathList(o.write, `${where}.write`, problems),
        unixSockets: o.unixSockets === true,
        limits,
        off: o.off === true,
        origin: origin(i),
      });
    });
  return { userServers: r.userServers === true, entries: resolveProjects(entries, resolver), problems };
}

/** Several user layers (the extension's settings, the configuration file): entries and problems add up. */
export function mergeSandbox(layers: readonly SandboxSettings[]): SandboxSettings {
  const required = layers.find((l) => l.required)?.required;
  return {
    userServers: layers.some((l) => l.userServers) || required !== undefined,
    entries: layers.flatMap((l) => l.entries),
    problems: layers.flatMap((l) => l.problems),
    ...(required !== undefined ? { required } : {}),
  };
}

/**
 * What a contained server may reach beyond the fixed sandbox (the system read-only, its own HOME with its own
 * caches, a private /tmp, the workspace with its protected paths): the one profile type, from the user's
 * settings and rules to the bwrap command (src/host/sandbox/sandbox.ts takes it with the host's own additions).
 */
export interface SandboxProfile {
  /** A network door (./egress.ts in the host): the rule `mcp.<server>.network` or a host rule allowed it; otherwise only its own loopback. */
  network: boolean;
  extraRead: readonly string[];
  extraWrite: readonly string[];
  /**
   * Unix sockets: `true` allowed (an entry's `unixSockets: true`); `'own'` allowed because no socket file it did not
   * make is visible to it (decided at each start by the host); `false`: the seccomp filter refuses making them.
   */
  unixSockets: boolean | 'own';
  limits: ResourceLimits;
}

/** A server's limits and, for each one an entry set, that entry (where to raise it). */
export interface LimitsDecision {
  readonly values: ResourceLimits;
  readonly setBy: Partial<Record<keyof ResourceLimits, SandboxEntry>>;
}

/** What the user's settings say for one local server: run it contained (with these paths), plainly, or not at all. */
export type SandboxDecision =
  /** Settings that cannot be used: a server that would be contained must not start. */
  | { readonly kind: 'refused'; readonly problems: readonly string[] }
  /** A plain process: the user's opt-out (`optOut`), or a user-scope server the user did not ask to contain. */
  | { readonly kind: 'uncontained'; readonly optOut?: SandboxEntry }
  /** Contained, with the extra paths of every entry that applies (`~/` expanded), Unix sockets if one allows them, its limits. */
  | {
      readonly kind: 'contained';
      readonly extraRead: readonly string[];
      readonly extraWrite: readonly string[];
      readonly unixSockets?: SandboxEntry;
      readonly limits: LimitsDecision;
      /** An opt-out of the user's that the administrator's required sandbox overrides. */ readonly overridden?: {
        readonly entry: SandboxEntry;
        readonly by: string;
      };
    };

/** What the user's settings say for one server. `~/` in paths is expanded against `home`. */
export function sandboxFor(settings: SandboxSettings, who: ServerIdentity, home: string): SandboxDecision {
  if (who.scope !== 'repository' && !settings.userServers && settings.required === undefined) return { kind: 'uncontained' };
  if (settings.problems.length) return { kind: 'refused', problems: settings.problems };
  const mine = settings.entries.filter((e) => (e.server === who.name || e.server === '*') && appliesTo(e, who));
  const optOut = mine.find((e) => e.off);
  if (optOut && settings.required === undefined) return { kind: 'uncontained', optOut };
  const expand = (p: string) => (p.startsWith('~/') ? path.join(home, p.slice(2)) : p);
  return {
    kind: 'contained',
    extraRead: mine.flatMap((e) => e.read.map(expand)),
    extraWrite: mine.flatMap((e) => e.write.map(expand)),
    unixSockets: mine.find((e) => e.unixSockets),
    limits: limitsOf(mine),
    ...(optOut && settings.required !== undefined ? { overridden: { entry: optOut, by: settings.required } } : {}),
  };
}

/** The limits the entries that apply set: for each, the largest value one of them sets, else the default. */
function limitsOf(entries: readonly SandboxEntry[]): LimitsDecision {
  const values = { ...DEFAULT_LIMITS };
  const setBy: Partial<Record<keyof ResourceLimits, SandboxEntry>> = {};
  for (const k of Object.keys(LIMIT_KEYS) as (keyof ResourceLimits)[]) {
    for (const e of entries) {
      const v = e.limits[k];
      if (v !== undefined && (setBy[k] === undefined || v > values[k])) {
        values[k] = v;
        setBy[k] = e;
      }
    }
  }
  return { values, setBy };
}
