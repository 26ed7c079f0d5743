// What every part of a session shares: its limits, the shapes it hands out (a server's tools, a call's outcome,
// the counts a person can read), the error that leaves one server out with a line, and the session's own state —
// its options, the policy in force now, its notes and counters, and the secrets bound to one server. The parts
// (local start, remote connect, discovery and pinning, calls) each take this context; it imports none of them.
import type { LimitMechanism } from '../sandbox/limits';
import type { CallToolResult, Client, Tool, Transport } from '@modelcontextprotocol/client';
import { SdkHttpError } from '@modelcontextprotocol/client';
import type { Asker, Verdict } from '../../policy/decide';
import { defaultMasker, type Masker } from '../../policy/mask';
import { bindSecrets, type SecretSource } from '../../policy/secrets';
import { decideStart, type StartDecision } from '../../policy/start';
import type { UserPolicy } from '../../policy/user-policy';
import type { NpmOps } from '../../trust/packages/npm-lock';
import type { GateReport, ServerReport } from '../../trust/report';
import { NEUTRAL_WORDS, type FrontEndWords } from '../../trust/words';
import type { GuardedFetch } from '../net/guarded-fetch';
import { serverIdentity } from '../identity';
import type { EventLog, Outcome } from '../log/log';
import type { Resolver } from '../net/resolve';
import { stripHidden } from './untrusted';

export const MAX_SERVERS = 8;
export const MAX_TOOLS = 64;
export const DISCOVER_TIMEOUT_MS = 10_000;
export const CALL_TIMEOUT_MS = 60_000;
/** How long a package launcher (npx, uvx, …) may take to answer initialize: its first start downloads. */
export const LAUNCHER_START_TIMEOUT_MS = 60_000;
export const MAX_RESULT_BYTES = 1024 * 1024;
/** Pages of a tool list read at most; a list still going on after them keeps the server out. */
export const MAX_TOOL_PAGES = 20;

/** Tool names the gate itself offers; a server offering one of them is left out whole. */
export const GATE_TOOL_NAMES = ['mcp_gate_status', 'mcp_gate_explain'];

export interface SessionOptions {
  report: GateReport;
  /** The user's policy; a function is asked again at every decision, so a rule edited mid-session applies at once. */
  policy: UserPolicy | (() => UserPolicy);
  log: EventLog;
  /** Where the approval store lives (for pinning tools of approved servers). */
  storeDir: string;
  /** MCP Gate's load guard files (dist/guard/); beside the running bundle by default (./load-guard.ts). */
  guardDir?: string;
  secrets: SecretSource;
  /** Present where a person can answer `ask`; absent in the CLI and headless. */
  asker?: Asker;
  masker?: Masker;
  /** Names the editor already offers (e.g. VS Code's own tools); a colliding server is left out. */
  reservedToolNames?: readonly string[];
  /** MCP Gate's own environment, from which a local server inherits only PATH, HOME, locale and temp. */
  env: Readonly<Record<string, string | undefined>>;
  /** Injectable for tests (the system resolver otherwise) and extra CA roots. */
  resolver?: Resolver;
  ca?: string | Buffer;
  discoverTimeoutMs?: number;
  callTimeoutMs?: number;
  clientName?: string;
  /** Whether VS Code's Workspace Trust is granted (the CLI has none: true). A repository server starts only when it is. */
  workspaceTrusted?: boolean;
  /** The front end's wording for the next step in notes (src/trust/words.ts). */
  words?: FrontEndWords;
  /** Where the npm libraries run when a pinned package's tree must be installed again (src/trust/packages/npm-lock.ts NpmOps). */
  npm: NpmOps;
  /**
   * Told at once when a running server was stopped because a file its approval pins changed on disk (after the
   * session has marked it and refused its calls): a front end re-checks the gate there and then, so the change
   * shows without waiting for its next periodic check.
   */
  onClosureChanged?: (server: string, file: string) => void;
  /** Injectable for tests: how limits are held (src/host/sandbox/limits.ts limitMechanism otherwise). */
  limitMechanism?: () => LimitMechanism;
}

export interface SessionTool {
  server: string;
  /** The tool's name as the server gave it (validated: no hidden characters). */
  name: string;
  title?: string;
  /** Cleaned of ANSI escapes, bidi, zero-width and tag characters. */
  description: string;
  inputSchema: Tool['inputSchema'];
  outputSchema?: Tool['outputSchema'];
  annotations?: Tool['annotations'];
}

/** One running server: its client and transport, what discovery froze, and how to reopen or clean up. */
export interface Connection {
  server: ServerReport;
  host?: string;
  client: Client;
  transport: Transport;
  fetch?: GuardedFetch;
  reopen?: () => Promise<{ client: Client; transport: Transport }>;
  tools: SessionTool[];
  /** Removes what the start left behind (the verified closure copy). */
  cleanup?: () => void;
  /** What the contained server sees, one line; absent when it runs uncontained. */
  sandbox?: string;
  /** Set when a file its approval pins changed on disk while it ran: it was stopped and its calls are refused. */
  changed?: string;
  /** Set when it reached one of its limits (src/host/sandbox/limits.ts): it was stopped, and its calls are refused with this. */
  stopped?: string;
  /** Stops watching its closure. */
  unwatch?: () => void;
  /** After its process stopped: what must look at what it left (a repository it made, ./new-repos.ts). */
  afterClose?: () => Promise<void>;
  /** Under the load guard: whether it refused a file (then the server is stopped, and this says why). */
  guardCheck?: () => Promise<string | undefined>;
  /** Calls running now; a change seen meanwhile stops the server when they are done (closeWhenIdle). */
  inflight?: number;
  closeWhenIdle?: () => void;
  /** The call verdicts of its tools under one rule list (src/host/session/call.ts `callVerdict`). */
  verdicts?: { rules: UserPolicy['rules']; byTool: Map<string, Verdict> };
}

export interface CallOutcome {
  ok: boolean;
  result?: CallToolResult;
  /** Why the call did not run or failed (masked). */
  error?: string;
  outcome: Outcome;
}

/** The counts a person (and the tests) can read after a session. */
export interface SessionCounters {
  /** Server→client requests (sampling, elicitation, roots, …) refused, by method. */
  refusedRequests: Record<string, number>;
  /** Notifications ignored after discovery, by method (tools/list_changed among them). */
  ignoredNotifications: Record<string, number>;
}

/** Leaves one server out of the session; its message is the line's reason. */
export class DroppedError extends Error {}

export const httpStatus = (e: unknown): number | undefined =>
  e instanceof SdkHttpError && typeof e.status === 'number' ? e.status : undefined;
export const isNotFound = (e: unknown) => httpStatus(e) === 404;

/** VS Code's own variables MCP Gate fills in (src/trust/plan/launch-plan.ts substitute). */
const FILLED = new Set(['workspaceFolder', 'workspaceFolderBasename', 'workspaceRoot']);

/**
 * A variable form MCP Gate does not fill in and will not pass on: `${input:…}` needs VS Code to prompt; `${env:…}`
 * would hand MCP Gate's own environment to the server; `${command:…}`, `${config:…}` are VS Code's alone.
 */
export function unresolvable(values: readonly string[]): string | undefined {
  for (const v of values) {
    const m = /\$\{(input|env|command|config):[^}]*\}/.exec(v);
    if (m) return m[0];
  }
  return undefined;
}

/**
 * Claude Code's `${VAR}` / `${VAR:-default}` (filled in from the user's environment there): MCP Gate passes it on as
 * written, and says so with how to give the value (unfilledWords).
 */
export function literalForm(value: string): string | undefined {
  for (const c of value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)) if (!FILLED.has(c[1])) return c[0];
  return undefined;
}

/** How to give a server a secret, every step: the secrets entry, the rule that lets it be sent, the value. */
export function secretSteps(
  server: { name: string; scope: string },
  project: string,
  name: string,
  bind: { bind: 'env' | 'header'; as?: string },
  words: FrontEndWords,
): string {
  const where = server.scope === 'repository' ? { project } : {};
  const entry = JSON.stringify({ name, to: `mcp.${server.name}.*`, ...bind, ...where });
  const rule = JSON.stringify({ action: `secret.use.${name}`, decision: 'allow', ...where });
  return `add ${entry} to "secrets" and ${rule} to "rules" in your MCP Gate configuration, and ${words.setSecret(name)}`;
}

/**
 * Why a server that uses a form MCP Gate does not fill in is left out, and how to give it the value: as a secret
 * bound to the variable (its value set where secrets are set, never in a file), which then takes the place of the
 * declared one.
 */
export function unfilledWords(
  server: { name: string; scope: string },
  project: string,
  form: string,
  variable: string | undefined,
  words: FrontEndWords,
): string {
  const why = form.startsWith('${input:')
    ? 'VS Code asks for it when it starts the server; MCP Gate asks nobody and fills in no input'
    : form.startsWith('${command:') || form.startsWith('${config:')
      ? 'it is filled in by VS Code alone'
      : form.startsWith('${env:')
        ? "it would hand MCP Gate's own environment to the server"
        : 'Claude Code fills it in from your environment; MCP Gate passes it on as written, since it would hand its own environment to the server';
  if (!variable)
    return `it uses ${form} on its command line, which MCP Gate does not fill in (${why}); a value a server needs is given to a local server as a secret bound to an environment variable: change the definition to read it from one`;
  return `it sets ${variable} to ${form}, which MCP Gate does not fill in (${why}); give it ${variable} as a secret instead: ${secretSteps(server, project, variable, { bind: 'env' }, words)} — the secret then takes the place of the declared value`;
}

/** The state one session's parts share: its options, the policy now, its notes and counters. */
export class SessionContext {
  readonly notes: string[] = [];
  readonly counters: SessionCounters = { refusedRequests: {}, ignoredNotifications: {} };
  readonly masker: Masker;

  constructor(readonly o: SessionOptions) {
    this.masker = o.masker ?? defaultMasker;
  }

  get words(): FrontEndWords {
    return this.o.words ?? NEUTRAL_WORDS;
  }

  /** The policy in force now. */
  get policy(): UserPolicy {
    return typeof this.o.policy === 'function' ? this.o.policy() : this.o.policy;
  }

  get project(): string {
    return this.o.report.project;
  }

  /** A line saying why a server (or every server) is left out: masked, kept and logged. */
  note(line: string, server?: ServerReport): void {
    const masked = this.masker.mask(line);
    this.notes.push(masked);
    this.o.log.write({ kind: 'server.dropped', server: server?.name, source: server?.source, detail: masked });
  }

  /** Counts and logs a server→client request (or an input request inside a result) MCP Gate refuses. */
  refuseRequest(server: string, method: string, how: string): void {
    this.counters.refusedRequests[method] = (this.counters.refusedRequests[method] ?? 0) + 1;
    this.o.log.write({ kind: 'gate.refuse', server, detail: `refused ${how} ${stripHidden(method)}` });
  }

  /**
   * What the policy says about a local server as it starts (src/policy/start.ts), asked once: its sandbox, network
   * and limits; the door's later questions go through it by the rules then in force.
   */
  startDecision(server: ServerReport, home: string): StartDecision {
    return decideStart(this.policy, serverIdentity(server, this.project), home, { live: () => this.policy, asker: this.o.asker });
  }

  /** The secrets the policy binds to this server (at this host, for a remote one), asked for where a person can answer. */
  secretsFor(server: ServerReport, host?: string) {
    const who = serverIdentity(server, this.project);
    return bindSecrets(host === undefined ? who : { ...who, host }, this.policy.secrets, {
      source: this.o.secrets,
      rules: this.policy.rules,
      asker: this.o.asker,
      masker: this.masker,
      missingHint: (n) => this.words.setSecret(n),
    });
  }
}

/** Longest server-supplied error text shown in a line (the rest is cut with a note). */
const MAX_ERROR_TEXT = 500;

export function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const status = httpStatus(e);
  if (status === 401) {
    return 'the server answered HTTP 401 Unauthorized; MCP Gate runs no OAuth flow: bind a token to this server through the secrets block';
  }
  if (status !== undefined && status >= 300) {
    const body = stripHidden(e.message);
    return `the server answered HTTP ${status}${body ? `: ${body.length > MAX_ERROR_TEXT ? `${body.slice(0, MAX_ERROR_TEXT)}… (cut)` : body}` : ''}`;
  }
  const parts = [e.message];
  let cause = (e as { cause?: unknown }).cause;
  for (let i = 0; cause instanceof Error && i < 3; i++) {
    if (!parts.includes(cause.message)) parts.push(cause.message);
    cause = (cause as { cause?: unknown }).cause;
  }
  return stripHidden(parts.join(' ← '));
}
