// The containment decision, pure (issue 45): how a local server will be contained — the user's sandbox settings,
// the network rule, whether bubblewrap can start here, its limits — and the words that say so, for the approve
// preview, doctor, the report and the panel. ./contain.ts runs this one decision (startPlan); the renderer and the
// panel import only this file, never what spawns. Also what a contained server may never write in the workspace
// (PROTECTED_IN_WORKSPACE and kin) and the package caches it gets.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Rule } from '../../policy/rules';
import type { ServerIdentity } from '../../policy/identity';
import type { LimitsDecision, SandboxEntry } from '../../policy/sandbox-profile';
import type { Verdict } from '../../policy/decide';
import type { StartDecision } from '../../policy/start';
import type { ServerReport } from '../../trust/report';
import { npmLaunchOf } from '../../trust/approval/approvals';
import { imageLaunchOf } from '../../trust/packages/image-pin';
import { socketsUnder } from '../../trust/plan/git-paths';
import type { SandboxProbe } from './sandbox';
import { limitMechanism, limitsWords, type LimitMechanism } from './limits';
import { TOOLS, workspaceProtection } from '../../trust/sources/tools';

/**
 * Package caches a launcher needs, shown read-write inside the sandbox at these paths of its (otherwise empty)
 * HOME. Never the user's own: a server that could write the real ~/.npm could plant code that npx then runs on the
 * host, outside any sandbox. Each server gets its own folder under MCP Gate's cache
 * (`$XDG_CACHE_HOME/mcp-gate/sandbox/<server>/`), so one server cannot poison another's packages either.
 */
export const SANDBOX_CACHES = ['~/.npm', '~/.cache/uv'];

/**
 * Workspace entries that programs on the host other than the MCP tools run or obey without the person looking —
 * git (hooks, config, fsmonitor), direnv, JetBrains IDEs (run configurations), dev containers (their build and
 * lifecycle commands). They belong to no tool adapter (the adapters are the MCP tools whose files MCP Gate reads),
 * so they are listed here.
 */
/**
 * What the host runs or obeys from the workspace by itself: git, direnv, IDEs and dev containers, and git hook
 * managers (husky runs `.husky/<hook>`, lefthook and pre-commit run the commands their files list, lint-staged and
 * simple-git-hooks theirs) on the user's next commit.
 */
export const HOST_PROTECTED_IN_WORKSPACE = [
  '.git',
  '.envrc',
  '.idea',
  '.devcontainer',
  '.husky',
  'lefthook.yml',
  '.lefthook.yml',
  'lefthook-local.yml',
  '.lefthook-local.yml',
  '.lefthook',
  '.pre-commit-config.yaml',
  '.simple-git-hooks.json',
  '.simple-git-hooks.js',
  '.simple-git-hooks.cjs',
  'simple-git-hooks.json',
  '.lintstagedrc',
  '.lintstagedrc.json',
  '.lintstagedrc.yaml',
  '.lintstagedrc.yml',
  '.lintstagedrc.js',
  '.lintstagedrc.cjs',
  '.lintstagedrc.mjs',
  'lint-staged.config.js',
  'lint-staged.config.cjs',
  'lint-staged.config.mjs',
];

/**
 * What agents read as instructions by themselves, in the root and in any folder of a monorepo (Codex and Claude Code
 * read the nested ones for the files below them; VS Code's Copilot applies its instruction files unasked): a
 * contained server that writes them would speak to every later agent session in your name.
 */
/**
 * Workspace entries protected by their ending, in every folder: a `.code-workspace` file is a workspace VS Code opens
 * with the tasks (some run when the folder opens) and settings it holds (red team 8, case 07).
 */
export const PROTECTED_SUFFIXES = ['.code-workspace'];

export const AGENT_INSTRUCTIONS = [
  'AGENTS.md',
  'AGENT.md',
  'CLAUDE.md',
  'CLAUDE.local.md',
  'GEMINI.md',
  '.cursorrules',
  '.windsurfrules',
  '.clinerules',
  '.github/copilot-instructions.md',
  '.github/instructions',
  '.github/prompts',
  '.github/chatmodes',
  '.github/agents',
];

/**
 * The workspace entries a contained server must not write, built from `tools` (each tool's repository sources and
 * the folders its adapter names: VS Code's tasks and settings, Claude Code's .claude, …) and the host's own.
 */
export function protectedInWorkspace(tools: Parameters<typeof workspaceProtection>[0] = TOOLS): string[] {
  return [...new Set([...HOST_PROTECTED_IN_WORKSPACE, ...AGENT_INSTRUCTIONS, ...workspaceProtection(tools)])];
}

/**
 * Workspace paths read-only inside the sandbox when they exist (the rest of the workspace stays writable): the
 * host's entries above and every MCP configuration file and tool folder. A user who wants a server to commit lists
 * `<workspace>/.git` in its sandbox `write` paths.
 */
export const PROTECTED_IN_WORKSPACE = protectedInWorkspace();

export const OPT_OUT_HINT = (who: ServerIdentity) =>
  `or, to run it without containment, add { "server": "${who.name}"${who.scope === 'repository' ? `, "project": ${JSON.stringify(who.project)}` : ''}, "off": true } to "sandbox.servers" in your user configuration`;

/**
 * How a local server runs under the user's policy here: refused (settings that cannot be used), a plain process
 * (the user's opt-out, or a user server not asked to be contained), not at all (it must be contained and
 * bubblewrap cannot start), or contained with this profile and the network rule's verdict (`ask` is asked at
 * start). The one decision: startPlan does what it says, describeContainment says it in words.
 */
export type Containment =
  | { readonly kind: 'refused'; readonly problems: readonly string[] }
  | { readonly kind: 'uncontained'; readonly optOut?: SandboxEntry }
  | { readonly kind: 'unavailable'; readonly probe: Extract<SandboxProbe, { ok: false }> }
  | {
      readonly kind: 'contained';
      readonly probe: Extract<SandboxProbe, { ok: true }>;
      readonly network: Verdict;
      /** Rules that name hosts it may reach (allow or ask). */ readonly networkHosts: readonly Rule[];
      readonly extraRead: readonly string[];
      readonly extraWrite: readonly string[];
      readonly unixSockets?: SandboxEntry;
      readonly limits: LimitsDecision;
      readonly mechanism: LimitMechanism;
      readonly overridden?: { readonly entry: SandboxEntry; readonly by: string };
    };

export function containmentFor(
  start: StartDecision,
  probe: () => SandboxProbe,
  mechanism: () => LimitMechanism = limitMechanism,
): Containment {
  const d = start.sandbox;
  if (d.kind !== 'contained') return d;
  const p = probe();
  if (!p.ok) return { kind: 'unavailable', probe: p };
  const m = mechanism();
  if (m.refused) return { kind: 'unavailable', probe: { ok: false, ...m.refused } };
  return {
    kind: 'contained',
    probe: p,
    network: start.network,
    networkHosts: start.networkHosts,
    extraRead: d.extraRead,
    extraWrite: d.extraWrite,
    unixSockets: d.unixSockets,
    limits: d.limits,
    mechanism: m,
    ...(d.overridden ? { overridden: d.overridden } : {}),
  };
}

/** The user's read and write paths that are Unix socket files (a daemon's socket shown to the server). */
/** Socket files directly in a folder (a granted .git holds git's fsmonitor socket). */
export function socketsAt(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isSocket())
      .map((d) => path.join(dir, d.name));
  } catch {
    return [];
  }
}

/** Entries walked in your read and write paths for socket files; past it, the walk stops and counts as one found. */
export const MAX_SHOWN_WALK = 20_000;

/**
 * Socket files in your read and write paths: a path that is one, and any below a folder you show (walked, links not
 * followed; a folder too large to walk counts as holding one, so the server may make no Unix socket of its own).
 */
export function shownSockets(c: { extraRead: readonly string[]; extraWrite: readonly string[] }): string[] {
  const out: string[] = [];
  for (const p of [...c.extraRead, ...c.extraWrite]) {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      continue;
    }
    if (st.isSocket()) out.push(p);
    if (!st.isDirectory()) continue;
    const found = socketsUnder(p, MAX_SHOWN_WALK);
    out.push(...found.sockets);
    if (found.truncated) out.push(`${p} (more than ${MAX_SHOWN_WALK.toLocaleString('en-US')} entries: not searched whole)`);
  }
  return out;
}

export const unixSocketsRefusedWords = (shown: string[]) =>
  shown.length
    ? `Unix sockets: refused (a seccomp filter) — ${unixSocketsWords(shown)}`
    : "Unix sockets: those it makes itself (a browser's, a command's IPC; abstract ones are its own network namespace's), checked at each start: while no socket file it did not make is visible to it (the workspace, your read and write paths); else refused (a seccomp filter) unless your entry says \"unixSockets\": true";

export const unixSocketsWords = (sockets: string[]) =>
  `${sockets.length === 1 ? `${sockets[0]} is a Unix socket it can see` : `${sockets.slice(0, 3).join(', ')}${sockets.length > 3 ? ', …' : ''} are Unix sockets it can see`}, so it may make none of its own (it could connect to ${sockets.length === 1 ? 'that one' : 'those'}): "unixSockets": true in its sandbox entry allows them`;

/** Where an opt-out (or any sandbox entry) is written: `file:line`. */
export function optOutWhere(e: SandboxEntry): string {
  return `${e.origin.file}${e.origin.line ? `:${e.origin.line}` : ''}`;
}

/** What `startPlan` would do for this server, in words, without starting anything (the approve preview, doctor). */
export function describeContainment(
  server: ServerReport,
  start: StartDecision,
  probe: () => SandboxProbe,
  mechanism: () => LimitMechanism = limitMechanism,
): string[] {
  if (server.definition?.type !== 'stdio') return [];
  const c = containmentFor(start, probe, mechanism);
  const words = containmentWords(server, c);
  if (c.kind === 'uncontained') {
    const p = probe();
    words.push(
      p.ok
        ? 'its own processes: it runs in its own PID namespace (bubblewrap, nothing else contained), so everything it starts ends when it stops'
        : `its own processes: bubblewrap cannot start here (${p.reason}), so a stop ends its process group and their descendants only — a double-forked daemon may outlive it (fix: ${p.install ?? p.fix})`,
    );
  }
  return words;
}

/** The network line of a contained server's preview: what its door lets through, or none. */
export function networkWords(c: Extract<Containment, { kind: 'contained' }>): string {
  const net = c.network;
  const hosts = c.networkHosts.map((r) => `${r.action}${r.decision === 'ask' ? ' (asked)' : ''}`);
  const named = hosts.length ? `the hosts your rules name (${hosts.join(', ')}, private addresses included)` : '';
  const door =
    "its own network namespace, whose one way out is MCP Gate's filtering proxy (never this machine: not its loopback, not its addresses, not its abstract sockets; never link-local or metadata addresses)";
  if (net.decision === 'allow') return `network: any public host${named ? ` and ${named}` : ''}, through ${door} (${net.reason})`;
  const bare = net.decision === 'ask' ? 'any public host if you answer yes at start (asked where a person can answer)' : '';
  if (named || bare) return `network: ${[named, bare].filter(Boolean).join('; and ')}, through ${door}`;
  return `network: none — ${net.reason}`;
}

/** A {@link Containment} in words: the first line says how it runs, the rest what a contained server sees. */
export function containmentWords(server: ServerReport, c: Containment): string[] {
  if (c.kind === 'refused') return [`cannot start: your sandbox settings cannot be used: ${c.problems.join('; ')}`];
  if (c.kind === 'uncontained') {
    return [
      c.optOut
        ? `NOT contained: your opt-out in ${optOutWhere(c.optOut)} — it runs with your full authority (logged at each start)`
        : 'not contained: a user-scope server runs as you (set "sandbox": { "userServers": true } to contain your own servers too)',
    ];
  }
  if (c.kind === 'unavailable')
    return [`cannot start here: it must run contained and the sandbox is unavailable: ${c.probe.reason}; fix: ${c.probe.fix}`];
  const net = c.network;
  const files = server.pinned ? Object.keys(server.pinned.pinned.files).length : 0;
  const out = [
    'contained (bubblewrap): the system read-only; HOME its own, kept between its starts, with its own ' +
      SANDBOX_CACHES.join(', ') +
      ' (private to this server, not yours: your ~/.ssh, ~/.config and other projects are not there); a private /tmp; its own processes (all end when it stops)',
    server.pinned?.pinned.snapshot && server.gated && !server.viaEscapeHatch
      ? `workspace: the workspace as approved, read-only (a copy made from what the approval kept, verified against it; never the live files)${c.extraWrite.length ? '; your extra write paths writable' : ''}`
      : `workspace read-write, except ${PROTECTED_IN_WORKSPACE.filter((n) => n === '.git' || n === '.vscode').join(', ')} , agent instructions (AGENTS.md, CLAUDE.md…) and the MCP configuration files, in every folder (read-only); the ${files === 1 ? '1 closure file' : `${files} closure files`} read-only, from a copy verified against this approval`,
    networkWords(c),
  ];
  if (npmLaunchOf(server) && server.gated)
    out.push(
      "its package: the approved tree from MCP Gate's package cache, read-only (the launcher does not run and downloads nothing), except its own package folder: a private copy kept between its starts, where what it writes (its data) stays and its approved files are written again at each start",
    );
  const image = imageLaunchOf(server);
  if (image)
    out.push(
      `its container: run by the ${image.runtime} ${image.runtime === 'docker' ? 'daemon' : 'runtime'}, outside this sandbox — the sandbox holds only the ${image.runtime} command, which reaches no daemon socket (/run and /var/run are never shown) unless your extra read paths show one; what the container may do is what ${image.runtime} and the options in the definition allow`,
    );
  out.push(
    c.unixSockets
      ? `Unix sockets: allowed by your setting in ${optOutWhere(c.unixSockets)} (unixSockets: true): it can connect to any socket file it can see`
      : unixSocketsRefusedWords(shownSockets(c)),
  );
  out.push(limitsWords(c.limits, c.mechanism));
  if (c.overridden)
    out.push(
      `your opt-out in ${optOutWhere(c.overridden.entry)} does not apply: the administrator's policy ${c.overridden.by} requires the sandbox`,
    );
  if (c.extraRead.length) out.push(`extra read (your settings): ${c.extraRead.join(', ')}`);
  if (c.extraWrite.length) out.push(`extra write (your settings): ${c.extraWrite.join(', ')}`);
  return out;
}
