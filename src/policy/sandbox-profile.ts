// The user's sandbox settings and the one profile type: which local servers run contained and with what extra
// reach (SandboxProfile: network, extra read and write paths), decided here (sandboxFor) from the settings alone;
// src/host/contain.ts adds the rule's network verdict and whether bubblewrap starts (containmentFor), runs that
// (startPlan) and words it (describeContainment), and src/host/sandbox.ts builds the bwrap command for the
// profile. The settings' schema for the extension is package.json's `mcpGate.sandbox`. User scope only
// (MCP Gate's configuration file and the extension's application-scope `mcpGate.sandbox`); a repository file can
// never loosen them. Shape:
//   "sandbox": { "userServers": false,
//                "servers": [{ "server": "db", "project"?: "~/src/app", "read"?: ["/opt/data"], "write"?: ["~/notes"],
//                              "unixSockets"?: true, "off"?: true }] }
// Every repository server is contained; user-scope servers only with `userServers: true`. An entry matches a
// server as every grant does ("server": "*" is every server the entry's "project" covers) (src/policy/identity.ts: no "project" = your user servers, a folder = that
// project's repository servers). `off: true` is the explicit opt-out, shown by doctor and logged at each start.
// `unixSockets: true` lets a contained server make Unix sockets (and so connect to a socket file it can see: a
// docker.sock shown as a read path); without it the sandbox's seccomp filter refuses them (src/host/seccomp.ts).
// Network is not here: it is the rule `mcp.<server>.network` (allow / ask / deny; no rule = no network).
import * as path from 'node:path';
import { appliesTo, projectProblem, resolveProjects, systemResolver, type ProjectQualified, type ProjectResolver, type ServerIdentity } from './identity';
import { formatOrigin, type Origin } from './names';

export interface SandboxEntry extends ProjectQualified {
  readonly server: string;
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly unixSockets: boolean;
  readonly off: boolean;
  readonly origin: Origin;
}

export interface SandboxSettings {
  readonly userServers: boolean;
  readonly entries: readonly SandboxEntry[];
  /** An unusable item: every server that would be contained is refused until it is fixed. */
  readonly problems: readonly string[];
}

export const NO_SANDBOX_SETTINGS: SandboxSettings = { userServers: false, entries: [], problems: [] };

/** The keys of a `sandbox` block and of one of its `servers` entries (package.json's schema lists the same). */
export const SANDBOX_KEYS = ['userServers', 'servers'] as const;
export const SANDBOX_ENTRY_KEYS = ['server', 'project', 'read', 'write', 'unixSockets', 'off'] as const;
const KEYS = new Set<string>(SANDBOX_ENTRY_KEYS);

function pathList(v: unknown, where: string, problems: string[]): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((p) => typeof p === 'string')) {
    problems.push(`${where}: must be a list of absolute paths or "~/…"`);
    return [];
  }
  for (const p of v as string[]) if (!(path.isAbsolute(p) || p.startsWith('~/'))) problems.push(`${where}: ${JSON.stringify(p)} is not an absolute path or "~/…"`);
  return v as string[];
}

/** Parses a `sandbox` block. `origin` says where it was written (for messages). */
export function parseSandbox(raw: unknown, origin: (index: number) => Origin, resolver: ProjectResolver = systemResolver): SandboxSettings {
  if (raw === undefined) return NO_SANDBOX_SETTINGS;
  const problems: string[] = [];
  const at = formatOrigin(origin(-1));
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ...NO_SANDBOX_SETTINGS, problems: [`${at}: "sandbox" must be an object`] };
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!(SANDBOX_KEYS as readonly string[]).includes(k)) problems.push(`${at}: sandbox: unknown key ${JSON.stringify(k)} (expected userServers, servers)`);
  if (r.userServers !== undefined && typeof r.userServers !== 'boolean') problems.push(`${at}: sandbox.userServers must be true or false`);
  const entries: SandboxEntry[] = [];
  if (r.servers !== undefined && !Array.isArray(r.servers)) problems.push(`${at}: sandbox.servers must be a list`);
  else (r.servers as unknown[] | undefined ?? []).forEach((e, i) => {
    const where = `${formatOrigin(origin(i))}: sandbox.servers[${i}]`;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return problems.push(`${where}: must be an object`);
    const o = e as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!KEYS.has(k)) problems.push(`${where}: unknown key ${JSON.stringify(k)} (expected ${[...KEYS].join(', ')})`);
    if (typeof o.server !== 'string' || !/^([A-Za-z0-9_-]{1,64}|\*)$/.test(o.server)) return problems.push(`${where}: "server" must be a server name or "*"`);
    if (o.project !== undefined) {
      const p = projectProblem(o.project);
      if (p) return problems.push(`${where}: ${p}`);
    }
    if (o.off !== undefined && typeof o.off !== 'boolean') problems.push(`${where}: "off" must be true or false`);
    if (o.unixSockets !== undefined && typeof o.unixSockets !== 'boolean') problems.push(`${where}: "unixSockets" must be true or false`);
    entries.push({
      server: o.server, project: o.project as string | undefined,
      read: pathList(o.read, `${where}.read`, problems), write: pathList(o.write, `${where}.write`, problems),
      unixSockets: o.unixSockets === true, off: o.off === true, origin: origin(i),
    });
  });
  return { userServers: r.userServers === true, entries: resolveProjects(entries, resolver), problems };
}

/** Several user layers (the extension's settings, the configuration file): entries and problems add up. */
export function mergeSandbox(layers: readonly SandboxSettings[]): SandboxSettings {
  return {
    userServers: layers.some((l) => l.userServers),
    entries: layers.flatMap((l) => l.entries),
    problems: layers.flatMap((l) => l.problems),
  };
}

/**
 * What a contained server may reach beyond the fixed sandbox (the system read-only, an empty HOME with its own
 * caches, a private /tmp, the workspace with its protected paths): the one profile type, from the user's
 * settings and rules to the bwrap command (src/host/sandbox.ts takes it with the host's own additions).
 */
export interface SandboxProfile {
  /** The host's network (the rule `mcp.<server>.network` allowed it), or only its own loopback. */
  network: boolean;
  extraRead: readonly string[];
  extraWrite: readonly string[];
  /** Unix sockets allowed (an entry's `unixSockets: true`); otherwise the seccomp filter refuses making them. */
  unixSockets: boolean;
}

/** What the user's settings say for one local server: run it contained (with these paths), plainly, or not at all. */
export type SandboxDecision =
  /** Settings that cannot be used: a server that would be contained must not start. */
  | { readonly kind: 'refused'; readonly problems: readonly string[] }
  /** A plain process: the user's opt-out (`optOut`), or a user-scope server the user did not ask to contain. */
  | { readonly kind: 'uncontained'; readonly optOut?: SandboxEntry }
  /** Contained, with the extra paths of every entry that applies (`~/` expanded), Unix sockets if one allows them. */
  | { readonly kind: 'contained'; readonly extraRead: readonly string[]; readonly extraWrite: readonly string[]; readonly unixSockets?: SandboxEntry };

/** What the user's settings say for one server. `~/` in paths is expanded against `home`. */
export function sandboxFor(settings: SandboxSettings, who: ServerIdentity, home: string): SandboxDecision {
  if (who.scope !== 'repository' && !settings.userServers) return { kind: 'uncontained' };
  if (settings.problems.length) return { kind: 'refused', problems: settings.problems };
  const mine = settings.entries.filter((e) => (e.server === who.name || e.server === '*') && appliesTo(e, who));
  const optOut = mine.find((e) => e.off);
  if (optOut) return { kind: 'uncontained', optOut };
  const expand = (p: string) => (p.startsWith('~/') ? path.join(home, p.slice(2)) : p);
  return { kind: 'contained', extraRead: mine.flatMap((e) => e.read.map(expand)), extraWrite: mine.flatMap((e) => e.write.map(expand)), unixSockets: mine.find((e) => e.unixSockets) };
}
