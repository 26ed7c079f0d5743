// A session: starts the servers the gate and the policy allow (at most 8), reads and freezes each one's tool
// list (at most 64 tools; a colliding name keeps the whole server out), pins the tools of approved repository
// servers, and runs tool calls — each checked against `mcp.<server>.tool.<name>` at call time, bounded in time
// and size, cleaned of hidden characters, masked, and logged. Every server left out gets a line saying why.
import * as path from 'node:path';
import {
  Client,
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type InputRequiredResult,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/client';
// The chat gateway serves results with the 1.x server package; its CallToolResult types structuredContent as an
// object where v2 says unknown (the same JSON on the wire). A CallOutcome carries the type the gateway serves.
import type { CallToolResult as ServedResult } from '@modelcontextprotocol/sdk/types.js';
import { mayCallTool, mayDiscover, privateRangesRefused, resolve, type Asker, type Verdict } from '../policy/decide';
import { defaultMasker, type Masker } from '../policy/mask';
import { bindSecrets, type SecretSource } from '../policy/secrets';
import { localExceptionFor, type UserPolicy } from '../policy/user-policy';
import type { NpmOps } from '../trust/packages/npm-lock';
import { canonicalJson, sha256 } from '../trust/plan/digest';
import { observeTools } from '../trust/approval/approvals';
import type { GateReport, ServerReport } from '../trust/report';
import { ApprovalStore, type PinnedTools } from '../trust/approval/store';
import { isWaiting, mayRun } from '../trust/approval/states';
import { NEUTRAL_WORDS, type FrontEndWords } from '../trust/words';
import { createGuardedFetch, OWNED_HEADER_NAMES, validateHeaders, type GuardedFetch, type Observation } from './guarded-fetch';
import type { EventLog, Outcome } from './log';
import { serverIdentity } from './identity';
import type { Resolver } from './resolve';
import * as os from 'node:os';
import { ContainRefused, startPlan, type StartPlan } from './contain';
import { LaunchRefused, verifiedPlan } from './launch';
import { minimalEnv, StdioTransport } from './stdio';
import type { LaunchPlan } from '../trust/plan/launch-plan';
import { stripHidden, stripHiddenDeep } from './untrusted';

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

interface Connection {
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
}

export interface CallOutcome {
  ok: boolean;
  result?: ServedResult;
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

class DroppedError extends Error {}

const httpStatus = (e: unknown): number | undefined => (e instanceof SdkHttpError && typeof e.status === 'number' ? e.status : undefined);
const isNotFound = (e: unknown) => httpStatus(e) === 404;

function substitute(s: string, projectDir: string): string {
  return s.replace(/\$\{workspaceFolder\}/g, projectDir).replace(/\$\{workspaceFolderBasename\}/g, path.basename(projectDir)).replace(/\$\{workspaceRoot\}/g, projectDir);
}

/** A rule `mcp.<server>.private` deny turns on the address guard's private-range refusal, naming the rule. */
function privatePolicy(refusedBy: string | undefined): { refusePrivate?: boolean; refusePrivateBy?: string } {
  return refusedBy ? { refusePrivate: true, refusePrivateBy: refusedBy } : {};
}

/** `${input:…}` needs VS Code to prompt; `${env:…}` would hand MCP Gate's environment to the server. */
function unresolvable(values: string[]): string | undefined {
  for (const v of values) {
    const m = /\$\{(input|env|command|config):[^}]*\}/.exec(v);
    if (m) return m[0];
  }
  return undefined;
}

/** The `x-mcp-header` names a tool's input schema declares along chains of `properties` (2026-07-28). */
function mirroredHeaders(schema: unknown, depth = 0): string[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object' || depth > 32) return [];
  const out: string[] = [];
  for (const p of Object.values(props)) {
    const h = (p as Record<string, unknown> | null)?.['x-mcp-header'];
    if (typeof h === 'string') out.push(h);
    out.push(...mirroredHeaders(p, depth + 1));
  }
  return out;
}

export class Session {
  readonly notes: string[] = [];
  readonly counters: SessionCounters = { refusedRequests: {}, ignoredNotifications: {} };
  private readonly connections = new Map<string, Connection>();
  private readonly masker: Masker;
  private discovered = false;

  private get words(): FrontEndWords {
    return this.o.words ?? NEUTRAL_WORDS;
  }

  private constructor(private readonly o: SessionOptions) {
    this.masker = o.masker ?? defaultMasker;
  }

  /** The policy in force now. */
  private get policy(): UserPolicy {
    return typeof this.o.policy === 'function' ? this.o.policy() : this.o.policy;
  }

  /** Starts every runnable server among `servers` (default: all of the report), in declaration order. */
  static async start(o: SessionOptions, servers: ServerReport[] = o.report.servers): Promise<Session> {
    const s = new Session(o);
    await s.startAll(servers);
    s.discovered = true;
    return s;
  }

  /** The frozen tool list: what discovery found, never extended afterwards. */
  tools(): SessionTool[] {
    return [...this.connections.values()].flatMap((c) => c.tools);
  }

  servers(): string[] {
    return [...this.connections.keys()];
  }

  /** What the policy says about calling a tool right now (before any question is asked). */
  decisionFor(serverName: string, tool: string): Verdict['decision'] {
    const conn = this.connections.get(serverName);
    if (!conn) return 'deny';
    return mayCallTool(serverIdentity(conn.server, this.o.report.project), conn.host, tool, this.policy.rules).decision;
  }

  /** The server's instructions, cleaned of hidden characters. */
  instructionsOf(serverName: string): string | undefined {
    const i = this.connections.get(serverName)?.client.getInstructions();
    return i === undefined ? undefined : stripHidden(i);
  }

  private note(line: string, server?: ServerReport): void {
    const masked = this.masker.mask(line);
    this.notes.push(masked);
    this.o.log.write({ kind: 'server.dropped', server: server?.name, source: server?.source, detail: masked });
  }

  private async startAll(servers: ServerReport[]): Promise<void> {
    if (this.o.report.fullBlock.length) {
      this.note(`no server starts: the project is blocked (${this.o.report.fullBlock.map((b) => b.reason).join('; ')})`);
      return;
    }
    if (this.policy.problems.length) {
      this.note(`no server starts: your policy in ${this.policy.file} has invalid items: ${this.policy.problems.join('; ')}`);
      return;
    }
    const reserved = new Set([...GATE_TOOL_NAMES, ...(this.o.reservedToolNames ?? [])]);
    const seenTools = new Map<string, string>();
    let started = 0;
    for (const server of servers) {
      if (!mayRun(server, this.o.workspaceTrusted ?? true)) {
        const how = isWaiting(server) ? `; ${this.words.review(server.name)}` : '';
        const why = mayRun(server, true) ? 'the workspace is in Restricted Mode' : `it is ${server.state}: ${server.reason}`;
        this.note(`${server.name} (${server.source}) is left out: ${why}${how}`, server);
        continue;
      }
      if (server.disabled) {
        this.note(`${server.name} (${server.source}) is left out: it is disabled in ${server.file}`, server);
        continue;
      }
      if (started >= MAX_SERVERS) {
        this.note(`${server.name} (${server.source}) is left out: a session runs at most ${MAX_SERVERS} servers`, server);
        continue;
      }
      if (this.connections.has(server.name)) {
        this.note(`${server.name} (${server.source}) is left out: another server of the same name already runs in this session`, server);
        continue;
      }
      try {
        const conn = await this.open(server);
        const collision = conn.tools.find((t) => reserved.has(t.name) || seenTools.has(t.name));
        if (collision) {
          await this.closeConnection(conn);
          const other = seenTools.get(collision.name);
          throw new DroppedError(`its tool "${stripHidden(collision.name)}" collides with ${other ? `a tool of ${other}` : 'a tool the editor or the gate already offers'}`);
        }
        for (const t of conn.tools) seenTools.set(t.name, server.name);
        this.connections.set(server.name, conn);
        started++;
        this.o.log.write({ kind: 'server.start', server: server.name, source: server.source, detail: `${conn.tools.length} tools; protocol ${conn.client.getNegotiatedProtocolVersion() ?? 'unknown'}${conn.host ? '' : conn.sandbox ? `; contained: ${conn.sandbox}` : '; not contained'}` });
      } catch (e) {
        const why = e instanceof DroppedError ? e.message : `it could not be started: ${(e as Error).message}`;
        this.note(`${server.name} (${server.source}) is left out: ${why}`, server);
      }
    }
  }

  /** Counts and logs a server→client request (or an input request inside a result) MCP Gate refuses. */
  private refuseRequest(server: string, method: string, how: string): void {
    this.counters.refusedRequests[method] = (this.counters.refusedRequests[method] ?? 0) + 1;
    this.o.log.write({ kind: 'gate.refuse', server, detail: `refused ${how} ${stripHidden(method)}` });
  }

  /**
   * A client for one server. It negotiates the revision per server: `server/discover` first (2026-07-28,
   * session-less, `_meta` on every request), `initialize` when the server answers as a 2025 server. Every
   * server→client request is refused with a JSON-RPC error at once (the server's call then ends promptly);
   * an InputRequiredResult is handed back to {@link call}, which refuses it the same way.
   */
  private newClient(server: string, timeoutMs: number): Client {
    const client = new Client({ name: this.o.clientName ?? 'mcp-gate', version: '0.1.0' }, {
      capabilities: {},
      versionNegotiation: { mode: 'auto', probe: { timeoutMs } },
      inputRequired: { autoFulfill: false },
      listMaxPages: MAX_TOOL_PAGES,
    });
    client.fallbackRequestHandler = async (req) => {
      this.refuseRequest(server, req.method, 'a server→client request');
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `MCP Gate refused ${req.method}: it answers no sampling, elicitation or roots request`);
    };
    client.fallbackNotificationHandler = async (n) => {
      this.counters.ignoredNotifications[n.method] = (this.counters.ignoredNotifications[n.method] ?? 0) + 1;
    };
    client.onerror = () => undefined;
    return client;
  }

  /** Opens one server: a remote one over the guarded HTTP client, a local one as a (contained) process. */
  private open(server: ServerReport): Promise<Connection> {
    return server.definition!.type === 'http' ? this.openRemote(server) : this.openLocal(server);
  }

  private secretsFor(server: ServerReport, host?: string) {
    const who = serverIdentity(server, this.o.report.project);
    return bindSecrets(host === undefined ? who : { ...who, host }, this.policy.secrets, {
      source: this.o.secrets, rules: this.policy.rules, asker: this.o.asker, masker: this.masker,
      missingHint: (n) => this.words.setSecret(n),
    });
  }

  /** Remote stage 1: the URL may be reached (https, no credentials in it, the policy allows the host). */
  private async remoteTarget(server: ServerReport): Promise<{ url: URL; host: string; exception: ReturnType<typeof localExceptionFor> }> {
    const def = server.definition!;
    let url: URL;
    try {
      url = new URL(def.url!);
    } catch {
      throw new DroppedError(`its url ${JSON.stringify(def.url)} is not a URL`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const who = serverIdentity(server, this.o.report.project);
    const exception = localExceptionFor(this.policy, who);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && exception?.allowLoopback)) {
      throw new DroppedError(`its url is ${url.protocol.replace(':', '')}, and only https is allowed (plain http only to loopback under a local-development exception)`);
    }
    if (url.username || url.password) throw new DroppedError('its url carries a user name or password; bind credentials through the secrets block');
    const verdict = await resolve(mayDiscover(who, host, this.policy.rules), this.o.asker);
    if (verdict.decision !== 'allow') {
      this.o.log.write({ kind: 'mcp.request', server: server.name, host, about: 'discover', outcome: 'refused_by_policy', detail: verdict.reason });
      throw new DroppedError(`the policy does not allow reaching ${host}: ${verdict.reason}`);
    }
    return { url, host, exception };
  }

  /** Remote stage 2: the headers MCP Gate sends (declared ones, then bound secrets), validated. */
  private async remoteHeaders(server: ServerReport, host: string): Promise<Record<string, string>> {
    const bound = await this.secretsFor(server, host);
    if (bound.drop) throw new DroppedError(bound.reason);
    for (const n of bound.notes) this.note(`${server.name}: ${n}`, server);
    const declared = Object.entries(server.definition!.headers).map(([k, v]) => [k, substitute(v, this.o.report.project)] as const);
    const bad = unresolvable(declared.map(([, v]) => v));
    if (bad) throw new DroppedError(`a header uses ${bad}, which MCP Gate does not fill in; bind credentials through the secrets block`);
    const headers: Record<string, string> = { ...Object.fromEntries(declared), ...bound.headers };
    try {
      validateHeaders(headers); // before the SDK builds a Headers object, whose errors quote values
    } catch (e) {
      throw new DroppedError(`its headers cannot be sent: ${this.masker.mask((e as Error).message)}`);
    }
    return headers;
  }

  private async openRemote(server: ServerReport): Promise<Connection> {
    const { url, host, exception } = await this.remoteTarget(server);
    const headers = await this.remoteHeaders(server, host);
    const discoverTimeout = this.o.discoverTimeoutMs ?? DISCOVER_TIMEOUT_MS;
    const fetch = createGuardedFetch({
      resolver: this.o.resolver,
      ca: this.o.ca,
      policy: { ...privatePolicy(privateRangesRefused(serverIdentity(server, this.o.report.project), this.policy.rules)), exception: exception ? { allowLoopback: exception.allowLoopback, allowPrivate: exception.allowPrivate } : undefined },
      timeoutMs: (rpc) => (rpc.some((c) => c.method === 'tools/call') ? this.o.callTimeoutMs ?? CALL_TIMEOUT_MS : discoverTimeout),
      ownedHeaders: headers,
      onObservation: (ob) => this.observe(server.name, ob),
    });
    const connect = async () => {
      const transport = new StreamableHTTPClientTransport(url, {
        fetch,
        requestInit: { headers },
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
      });
      const client = this.newClient(server.name, discoverTimeout);
      await client.connect(transport, { timeout: discoverTimeout });
      return { client, transport };
    };
    try {
      // A 404 on the session (during initialisation or the tool list) opens a new session once.
      let retried = false;
      let c: { client: Client; transport: Transport } | undefined;
      let tools: SessionTool[] | undefined;
      while (!tools) {
        try {
          c = await connect();
          tools = await this.discover(server, c.client, headers);
        } catch (e) {
          await c?.client.close().catch(() => undefined);
          if (!isNotFound(e) || retried) throw e;
          retried = true;
        }
      }
      return { server, host, client: c!.client, transport: c!.transport, fetch, reopen: connect, tools };
    } catch (e) {
      await fetch.close().catch(() => undefined);
      throw e instanceof DroppedError ? e : new DroppedError(`reading its tools failed: ${this.masker.mask(describeError(e))}`);
    }
  }

  /** Local stage 1: the verified launch plan and how it starts (contained or by the user's opt-out). */
  private async localStart(server: ServerReport): Promise<{ plan: LaunchPlan; start: StartPlan }> {
    const def = server.definition!;
    const project = this.o.report.project;
    const bound = await this.secretsFor(server);
    if (bound.drop) throw new DroppedError(bound.reason);
    for (const n of bound.notes) this.note(`${server.name}: ${n}`, server);
    const args = def.args.map((a) => substitute(a, project));
    const declaredEnv = Object.entries(def.env).filter(([, v]) => v !== null).map(([k, v]) => [k, substitute(v as string, project)] as const);
    const bad = unresolvable([def.command!, ...args, ...declaredEnv.map(([, v]) => v)]);
    if (bad) throw new DroppedError(`it uses ${bad}, which MCP Gate does not fill in (an \${env:…} would hand MCP Gate's own environment to the server); bind credentials through the secrets block`);
    if (def.envFile) throw new DroppedError('it reads an envFile, which MCP Gate does not load (it would hand the file\'s variables to the server unseen); set the variables in "env" instead');
    let plan: LaunchPlan;
    try {
      plan = verifiedPlan(server, project, this.o.env.PATH);
    } catch (e) {
      if (e instanceof LaunchRefused) throw new DroppedError(e.message);
      throw e;
    }
    if (!plan.executable) throw new DroppedError(`it cannot be started: ${plan.notFound}`);
    let start: StartPlan;
    try {
      start = await startPlan({
        server, who: serverIdentity(server, project), project, plan: { ...plan, executable: plan.executable },
        env: { ...minimalEnv(this.o.env), ...plan.env, ...bound.env }, policy: this.policy, home: this.o.env.HOME ?? os.homedir(), asker: this.o.asker, hostEnv: this.o.env, words: this.words, npm: this.o.npm,
      });
    } catch (e) {
      if (e instanceof ContainRefused) throw new DroppedError(e.message);
      throw e;
    }
    if (start.optOut) this.o.log.write({ kind: 'sandbox.off', server: server.name, source: server.source, detail: `runs uncontained: your opt-out in ${start.optOut}` });
    return { plan, start };
  }

  private async openLocal(server: ServerReport): Promise<Connection> {
    const { plan, start } = await this.localStart(server);
    const transport = new StdioTransport(start.launch);
    // A package launcher may download its package before it answers: it gets longer to start (not to list tools).
    const timeout = this.o.discoverTimeoutMs ?? (plan.launcher ? LAUNCHER_START_TIMEOUT_MS : DISCOVER_TIMEOUT_MS);
    const client = this.newClient(server.name, timeout);
    try {
      await client.connect(transport, { timeout });
      const tools = await this.discover(server, client);
      this.o.log.write({ kind: 'mcp.request', server: server.name, host: 'stdio', about: 'discover', outcome: 'answered' });
      return { server, client, transport, tools, cleanup: start.cleanup, sandbox: start.sandbox?.text };
    } catch (e) {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      start.cleanup();
      if (e instanceof DroppedError) throw e;
      const stderr = transport.stderrText().trim().split('\n').slice(-3).join(' | ');
      this.o.log.write({ kind: 'mcp.request', server: server.name, host: 'stdio', about: 'discover', outcome: 'no_answer', detail: describeError(e) });
      const offline = start.networkRule ? `; it runs contained without network — if it must download or reach a host, your rule ${start.networkRule} gives it the network` : '';
      throw new DroppedError(`reading its tools failed: ${this.masker.mask(describeError(e))}${stderr ? ` (stderr: ${this.masker.mask(stripHidden(stderr))})` : ''}${offline}`);
    }
  }
  /**
   * Reads the whole tool list (at most MAX_TOOL_PAGES pages, through the SDK's aggregating read, which also
   * keeps the list the 2026-07-28 header mirroring reads) and checks it: names a rule can name, no name twice,
   * at most MAX_TOOLS, and no `x-mcp-header` that would set a header MCP Gate sends itself.
   */
  private async discover(server: ServerReport, client: Client, ownedHeaders: Record<string, string> = {}): Promise<SessionTool[]> {
    const timeout = this.o.discoverTimeoutMs ?? DISCOVER_TIMEOUT_MS;
    let raw: Tool[];
    try {
      raw = (await client.listTools(undefined, { timeout })).tools;
    } catch (e) {
      if (e instanceof SdkError && e.code === SdkErrorCode.ListPaginationExceeded) {
        throw new DroppedError(`its tool list goes on past ${MAX_TOOL_PAGES} pages (a nextCursor after the last page read); a session reads at most ${MAX_TOOL_PAGES} pages and does not take part of a list`);
      }
      throw e;
    }
    if (raw.length > MAX_TOOLS) throw new DroppedError(`it offers more than ${MAX_TOOLS} tools; a session takes at most ${MAX_TOOLS} from one server (nothing is truncated)`);
    const owned = new Set(Object.keys(ownedHeaders).map((h) => h.toLowerCase()));
    for (const t of raw) {
      for (const name of mirroredHeaders(t.inputSchema)) {
        const header = `mcp-param-${name.toLowerCase()}`;
        if (owned.has(header) || OWNED_HEADER_NAMES.has(header)) {
          throw new DroppedError(`its tool ${JSON.stringify(stripHidden(t.name))} would mirror an argument into the header Mcp-Param-${stripHidden(name)}, which MCP Gate sends itself`);
        }
      }
    }
    const names = new Set<string>();
    for (const t of raw) {
      if (stripHidden(t.name) !== t.name || !/^[A-Za-z0-9_.-]{1,128}$/.test(t.name)) {
        throw new DroppedError(`its tool name ${JSON.stringify(t.name)} holds characters a rule cannot name`);
      }
      if (names.has(t.name)) throw new DroppedError(`it offers the tool "${t.name}" twice`);
      names.add(t.name);
    }
    await this.pinTools(server, client, raw);
    return raw.map((t) => ({
      server: server.name,
      name: t.name,
      title: t.title === undefined ? undefined : stripHidden(t.title),
      description: stripHidden(t.description ?? ''),
      inputSchema: stripHiddenDeep(t.inputSchema),
      outputSchema: t.outputSchema === undefined ? undefined : stripHiddenDeep(t.outputSchema),
      annotations: t.annotations === undefined ? undefined : stripHiddenDeep(t.annotations),
    }));
  }

  /** Approved repository servers: the tool list is pinned at the first start and a change re-gates the server. */
  private async pinTools(server: ServerReport, client: Client, raw: Tool[]): Promise<void> {
    if (!server.gated || server.viaEscapeHatch || !server.pinned) return;
    const instructions = client.getInstructions();
    const snapshot: PinnedTools['snapshot'] = {
      ...(instructions !== undefined ? { instructions } : {}),
      tools: raw.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: t.annotations })) as Record<string, unknown>[],
    };
    const observed: PinnedTools = { digest: `sha256:${sha256(canonicalJson(snapshot))}`, snapshot: JSON.parse(JSON.stringify(snapshot)), observedAt: new Date().toISOString() };
    const r = await observeTools(new ApprovalStore(this.o.storeDir, this.masker), this.o.report.project, server.source, server.name, server.pinned.digest, observed);
    if (r === 'changed') {
      throw new DroppedError(`the tools it offers changed since it was approved; it is approval-changed until you review the change and approve it again (${this.words.review(server.name)})`);
    }
    if (r === 'not-approved') throw new DroppedError('its approval changed while it was starting');
  }

  private observe(server: string, ob: Observation): void {
    const about = ob.rpc.find((c) => c.method === 'tools/call');
    const toolName = about ? about.tool ?? 'unknown' : undefined;
    const isList = ob.rpc.some((c) => c.method === 'tools/list');
    if (!toolName && !isList && ob.outcome === 'answered') return; // initialize, notifications: not an exchange about anything
    // The revision probe: a 2025 server answers `server/discover` with HTTP 400, 404 or 405, and the client goes on
    // with initialize. Any other probe outcome (refused, no connection, timeout, 401, 5xx) is an exchange to log.
    if (ob.rpc.some((c) => c.method === 'server/discover') && (ob.status === 400 || ob.status === 404 || ob.status === 405)) return;
    this.o.log.write({
      kind: 'mcp.request', server, host: ob.host, about: toolName ? stripHidden(toolName) : 'discover',
      ...(ob.status !== undefined ? { status: ob.status } : {}),
      outcome: ob.outcome,
      ...(ob.error ? { detail: describeError(ob.error) } : {}),
    });
  }

  /** Calls a tool: frozen list, policy at call time, 60 s, 1 MiB, cleaned and masked result, logged. */
  async call(serverName: string, tool: string, args: Record<string, unknown> = {}): Promise<CallOutcome> {
    const conn = this.connections.get(serverName);
    if (!conn) return { ok: false, outcome: 'refused_by_policy', error: `no server "${serverName}" runs in this session${this.notes.length ? ` (${this.notes.join('; ')})` : ''}` };
    if (!conn.tools.some((t) => t.name === tool)) {
      const msg = `"${serverName}" offered no tool "${stripHidden(tool)}" when the session started; the tool list is frozen`;
      this.o.log.write({ kind: 'mcp.request', server: serverName, host: conn.host ?? 'stdio', about: stripHidden(tool), outcome: 'refused_by_policy', detail: msg });
      return { ok: false, outcome: 'refused_by_policy', error: msg };
    }
    const verdict: Verdict = mayCallTool(serverIdentity(conn.server, this.o.report.project), conn.host, tool, this.policy.rules);
    const decided = await resolve(verdict, this.o.asker);
    if (decided.decision !== 'allow') {
      this.o.log.write({ kind: 'mcp.request', server: serverName, host: conn.host ?? 'stdio', about: tool, outcome: 'refused_by_policy', detail: decided.reason });
      return { ok: false, outcome: 'refused_by_policy', error: decided.reason };
    }
    this.o.log.write({ kind: 'tool.call', server: serverName, tool });
    const unlogged = this.o.report.requireLog ? this.o.log.failure : undefined;
    if (unlogged) {
      const msg = this.masker.mask(`the exchange log ${unlogged.file} cannot be written (${unlogged.error.message}), and your setting requireLog refuses calls until it can; make the file writable or turn requireLog off`);
      return { ok: false, outcome: 'refused_by_policy', error: msg };
    }
    const timeout = this.o.callTimeoutMs ?? CALL_TIMEOUT_MS;
    const attempt = () => conn.client.callTool({ name: tool, arguments: args }, { timeout, allowInputRequired: true }) as Promise<CallToolResult | InputRequiredResult>;
    try {
      let result: CallToolResult | InputRequiredResult;
      try {
        result = await attempt();
      } catch (e) {
        if (!isNotFound(e) || !conn.reopen) throw e;
        await conn.client.close().catch(() => undefined);
        const again = await conn.reopen();
        conn.client = again.client;
        conn.transport = again.transport;
        result = await attempt();
      }
      if (isInputRequiredResult(result)) throw new DroppedError(this.refuseInput(serverName, result));
      const text = JSON.stringify(result);
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_RESULT_BYTES) throw new Error(`the result is ${bytes} bytes, over the ${MAX_RESULT_BYTES}-byte bound`);
      const clean = this.masker.maskDeep(stripHiddenDeep(result));
      if (!conn.host) this.o.log.write({ kind: 'mcp.request', server: serverName, host: 'stdio', about: tool, outcome: 'answered' });
      this.o.log.write({ kind: 'tool.result', server: serverName, tool, ok: !result.isError, bytes });
      return { ok: !result.isError, result: clean as ServedResult, outcome: 'answered' };
    } catch (e) {
      const why = this.masker.mask(describeError(e));
      if (!conn.host) this.o.log.write({ kind: 'mcp.request', server: serverName, host: 'stdio', about: tool, outcome: 'no_answer', detail: why });
      this.o.log.write({ kind: 'tool.result', server: serverName, tool, ok: false, bytes: 0 });
      return { ok: false, outcome: 'no_answer', error: why };
    }
  }

  /**
   * A 2026-07-28 server asked for input inside a tool's result (a multi round-trip InputRequiredResult): the
   * same policy as a server→client request — refused, counted, logged, and the call ends now (no retry round).
   */
  private refuseInput(server: string, result: InputRequiredResult): string {
    const requests = Object.values((result as { inputRequests?: Record<string, { method?: unknown }> }).inputRequests ?? {});
    const methods = requests.map((r) => (typeof r?.method === 'string' ? r.method : 'input request'));
    if (!methods.length) methods.push('input request');
    for (const m of methods) this.refuseRequest(server, m, 'an input request in a result,');
    return `the server asked for input (${[...new Set(methods.map((m) => stripHidden(m)))].join(', ')}); MCP Gate refused it: it answers no sampling, elicitation or roots request`;
  }

  private async closeConnection(c: Connection): Promise<void> {
    await c.client.close().catch(() => undefined);
    await c.transport.close().catch(() => undefined);
    await c.fetch?.close().catch(() => undefined);
    c.cleanup?.();
  }

  async close(): Promise<void> {
    for (const c of this.connections.values()) {
      await this.closeConnection(c);
      this.o.log.write({ kind: 'server.stop', server: c.server.name, source: c.server.source });
    }
    this.connections.clear();
  }

  /** True once discovery is over: from then on nothing is added to the tool list. */
  get frozen(): boolean {
    return this.discovered;
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
