// `mcp-gate serve`: MCP Gate as a stdio MCP server any MCP client (Claude Code, Codex, Gemini CLI, Cursor) can
// launch. It fronts one declared server, or every server of the project that may run (tools then under the
// server's prefix, `<server>__<tool>`), through the same sessions the chat gateway uses: gate and policy at start,
// the gate again and the policy at every call, the same log, sandbox and bounds. A server that may not run is not
// started: it adds no tool, and the client is told (instructions, stderr, and the error of any call) which server,
// in what state, and how to approve it. Nothing but MCP is written to the transport, by the SDK's low-level server
// (frontServer below: tools only, answered through ./front.ts).
import { Server, type Transport } from '@modelcontextprotocol/server';
import type { SecretSource } from '../../policy/secrets';
import type { UserPolicy } from '../../policy/user-policy';
import { evaluateGate } from '../../trust/gate';
import { findServer, type GateInput, type GateReport, type ServerReport } from '../../trust/report';
import type { NpmOps } from '../../trust/packages/npm-lock';
import { GATE_ENTRY_NAME } from '../../trust/sources/preapproval';
import { stateWords } from '../../trust/approval/gate-state';
import { allowingRules, type Verdict } from '../../policy/decide';
import { count } from '../../text/count';
import { NEUTRAL_WORDS, type FrontEndWords } from '../../trust/words';
import { callAnswer, listedTools, serverInfoName, type FrontTarget } from './front';
import type { EventLog } from '../log/log';
import { DefaultJsonSchemaValidator } from '../session/sdk-shims';
import { MAX_SERVERS, Session, type SessionTool } from '../session';

/** Separates a server's name from its tool's in the names `serve` (all servers) offers. */
export const PREFIX_SEPARATOR = '__';

export interface ServeOptions {
  input: GateInput;
  /** One server's name; absent: every server of the project that may run. */
  server?: string;
  source?: string;
  log: EventLog;
  policyOf(report: GateReport): UserPolicy;
  secrets: SecretSource;
  env: Readonly<Record<string, string | undefined>>;
  /** Where the npm libraries run when a pinned package's tree must be installed again. */
  npm: NpmOps;
  transport: Transport;
  /** A line for a person (stderr); never the transport. */
  diag(line: string): void;
  /** Registers an open session (signals close it); returns the unregistering function. */
  track?(s: Session): () => void;
  /** The front end's wording for what to do about a refused server (src/trust/words.ts). */
  words?: FrontEndWords;
  discoverTimeoutMs?: number;
  callTimeoutMs?: number;
}

interface Fronted {
  server: ServerReport;
  session: Session;
  untrack: () => void;
}

const isRunnable = (s: ServerReport) => (s.state === 'approved' || s.state === 'trusted') && !s.disabled;

/** The line a refused server gets: its name, source, state, why, and the commands that approve it. */
export function refusalLine(s: ServerReport, words: FrontEndWords): string {
  if (s.disabled) return `"${s.name}" (${s.source}) is not served: it is disabled in ${s.file}`;
  const how =
    s.state === 'pending' || s.state === 'approval-changed'
      ? `; ${words.review(s.name)}, then restart this server`
      : s.state === 'rejected'
        ? `; ${words.resetServer(s.name)}`
        : '';
  return `"${s.name}" (${s.source}) is not served: it is ${stateWords(s)}: ${s.reason}${how}`;
}

/** At most this many hidden tools of one server are listed one by one (the rest are counted). */
export const MAX_HIDDEN_LISTED = 20;

/** One hidden tool: its name as served, and every rule that would allow it (host and tool, for a remote server). */
function hiddenLine(f: Fronted, tool: string, prefixed: boolean, v: Verdict, policyFile: string): string {
  const name = prefixed ? `${f.server.name}${PREFIX_SEPARATOR}${tool}` : tool;
  const rules = allowingRules(v);
  return rules.length
    ? `${name} of "${f.server.name}": allowed by adding ${rules.join(' and ')} to "rules" in ${policyFile}`
    : `${name} of "${f.server.name}": ${v.reason}`;
}

/** The SDK server of a front target: `tools/list` and `tools/call`, the rest (initialize, ping) the SDK's. */
export function frontServer(target: FrontTarget): Server {
  const server = new Server(
    { name: serverInfoName(target.serverName), version: '0.1.0' },
    { capabilities: { tools: {} }, instructions: target.instructions, jsonSchemaValidator: new DefaultJsonSchemaValidator() },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: listedTools(await target.tools(), target) }));
  server.setRequestHandler('tools/call', async (r) =>
    callAnswer(await target.call(r.params.name, (r.params.arguments ?? {}) as Record<string, unknown>)),
  );
  return server;
}

/** Runs until the client closes the transport; resolves after every session is closed. */
export async function serve(o: ServeOptions): Promise<void> {
  const words = o.words ?? NEUTRAL_WORDS;
  const fronted: Fronted[] = [];
  const refusals: string[] = [];
  let policy: UserPolicy | undefined;
  const currentPolicy = () => policy!;
  const refuse = (line: string, server?: ServerReport) => {
    refusals.push(line);
    o.diag(`mcp-gate serve: ${line}`);
    o.log.write({ kind: 'gate.refuse', server: server?.name, source: server?.source, detail: `serve: ${line}` });
  };

  const report = evaluateGate(o.input);
  policy = o.policyOf(report);
  const prefixed = o.server === undefined;
  const hidden: string[] = [];
  let wanted: ServerReport[] = [];
  if (report.fullBlock.length)
    refuse(`no server is served: the project is blocked (${report.fullBlock.map((b) => b.reason).join('; ')}); ${words.doctor} shows why`);
  else if (o.server !== undefined) {
    const found = findServer(report, o.server, o.source, words);
    if (!found.ok) refuse(found.message);
    else wanted = [found.server];
  } else wanted = report.servers;

  // Every server is started (or refused) before the client's initialize is answered, so the instructions it gets
  // name every refusal.
  const ready = (async () => {
    for (const s of wanted) {
      const skip = notStarted(s, fronted, o.server !== undefined, words);
      if (skip) {
        if (skip.diag !== undefined) o.diag(skip.diag);
        if (skip.refuse !== undefined) refuse(skip.refuse, s);
        continue;
      }
      const session = await startSession(o, report, currentPolicy, s);
      if (!session.servers().length) {
        await session.close();
        refuse(session.notes.join('; ') || `"${s.name}" (${s.source}) could not be started`, s);
        continue;
      }
      for (const n of session.notes) o.diag(`mcp-gate serve: ${n}`);
      fronted.push({ server: s, session, untrack: o.track?.(session) ?? (() => undefined) });
    }
    // What the policy hides, told to the person (stderr, the log) and the agent (instructions): how many tools
    // of each server, and for each the exact rule that would allow it.
    const served = fronted.map((f) => servedLine(f, prefixed, policy!.file, words, hidden));
    o.diag(`mcp-gate serve: ${served.length ? `serving ${served.join(', ')}` : 'serving no server'} for ${report.project}`);
    for (const line of hidden) o.diag(`mcp-gate serve: hidden by policy: ${line}`);
  })();

  const exposed = () => exposedTools(fronted, prefixed);
  const stillAllowed = (f: Fronted): string | undefined => {
    const now = evaluateGate(o.input);
    policy = o.policyOf(now);
    if (now.fullBlock.length) return `the project is now blocked (${now.fullBlock.map((b) => b.reason).join('; ')})`;
    const s = now.servers.find((x) => x.name === f.server.name && x.source === f.server.source);
    if (!s) return `"${f.server.name}" is no longer declared in ${f.server.source}`;
    if (!isRunnable(s)) return refusalLine(s, words);
    if ((s.pinned?.digest ?? '') !== (f.server.pinned?.digest ?? ''))
      return `"${s.name}" (${s.source}) changed since this server started; restart it`;
    return undefined;
  };
  const stop = async (f: Fronted) => {
    const i = fronted.indexOf(f);
    if (i >= 0) fronted.splice(i, 1);
    await f.session.close();
    f.untrack();
  };

  await ready.catch((e) => refuse(`starting failed: ${(e as Error).message}`));
  const server = frontServer({
    tools: async () => [...exposed().values()].map((x) => x.tool),
    listed: (name) => {
      const x = exposed().get(name);
      return x !== undefined && x.f.session.decisionFor(x.f.server.name, x.original) !== 'deny';
    },
    call: async (name, args) => {
      const x = exposed().get(name);
      if (!x) {
        const why = refusals.length ? ` (${refusals.join('; ')})` : '';
        o.log.write({ kind: 'gate.refuse', detail: `serve: no tool "${name}"${why}` });
        return { ok: false, error: `no tool "${name}" is served${why}` };
      }
      const gone = stillAllowed(x.f);
      if (gone) {
        refuse(gone, x.f.server);
        await stop(x.f);
        return { ok: false, error: gone };
      }
      return x.f.session.call(x.f.server.name, x.original, args);
    },
    instructions: serveInstructions(refusals, hidden),
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(o.transport);
  await closed;
  for (const f of [...fronted]) await stop(f);
}

/**
 * Why a wanted server is not started, or undefined to start it: a line for stderr only (MCP Gate's own agent entry),
 * a refusal (not runnable, too many servers, a name already served), or neither (a disabled server of the project
 * when every server is served: skipped silently). `explicit`: the client asked for this one server.
 */
function notStarted(
  s: ServerReport,
  fronted: readonly Fronted[],
  explicit: boolean,
  words: FrontEndWords,
): { diag?: string; refuse?: string } | undefined {
  if (!s.gated && s.name === GATE_ENTRY_NAME)
    return {
      diag: `mcp-gate serve: "${s.name}" (${s.source}) is MCP Gate's own agent entry (imported from that agent's file); it is not served, which would start MCP Gate inside itself`,
    };
  if (!isRunnable(s)) return explicit || s.gated || !s.disabled ? { refuse: refusalLine(s, words) } : {};
  if (fronted.length >= MAX_SERVERS)
    return { refuse: `"${s.name}" (${s.source}) is not served: at most ${MAX_SERVERS} servers run through one \`mcp-gate serve\`` };
  if (fronted.some((f) => f.server.name === s.name))
    return {
      refuse: `"${s.name}" (${s.source}) is not served: a server of the same name from ${fronted.find((f) => f.server.name === s.name)!.server.source} already is`,
    };
  return undefined;
}

/** Starts one server's session, with serve's options. */
function startSession(o: ServeOptions, report: GateReport, currentPolicy: () => UserPolicy, s: ServerReport): Promise<Session> {
  return Session.start(
    {
      report,
      policy: currentPolicy,
      log: o.log,
      storeDir: o.input.storeDir,
      secrets: o.secrets,
      env: o.env,
      npm: o.npm,
      clientName: 'mcp-gate-serve',
      discoverTimeoutMs: o.discoverTimeoutMs,
      callTimeoutMs: o.callTimeoutMs,
    },
    [s],
  );
}

/** One served server's summary line (its tools, how many hidden); adds the lines of its hidden tools to `hidden`. */
function servedLine(f: Fronted, prefixed: boolean, policyFile: string, words: FrontEndWords, hidden: string[]): string {
  const all = f.session.tools();
  const denied = all.filter((t) => f.session.verdictFor(f.server.name, t.name).decision === 'deny');
  for (const t of denied.slice(0, MAX_HIDDEN_LISTED))
    hidden.push(hiddenLine(f, t.name, prefixed, f.session.verdictFor(f.server.name, t.name), policyFile));
  if (denied.length > MAX_HIDDEN_LISTED)
    hidden.push(
      `and ${count(denied.length - MAX_HIDDEN_LISTED, 'more tool')} of "${f.server.name}" (${words.showTools(f.server.name)} lists each with its decision)`,
    );
  return `${f.server.name} (${count(all.length - denied.length, 'tool')}${denied.length ? `; ${denied.length} hidden by your policy` : ''})`;
}

/** The tools served, by the name the client sees (prefixed by the server's when every server is served); the first of a name wins. */
function exposedTools(fronted: readonly Fronted[], prefixed: boolean): Map<string, { f: Fronted; tool: SessionTool; original: string }> {
  const map = new Map<string, { f: Fronted; tool: SessionTool; original: string }>();
  for (const f of fronted) {
    for (const t of f.session.tools()) {
      const name = prefixed ? `${f.server.name}${PREFIX_SEPARATOR}${t.name}` : t.name;
      if (!map.has(name)) map.set(name, { f, tool: { ...t, name }, original: t.name });
    }
  }
  return map;
}

/** The instructions the client gets: the servers refused and the tools the policy hides, or undefined when none. */
function serveInstructions(refusals: readonly string[], hidden: readonly string[]): string | undefined {
  const parts: string[] = [];
  if (refusals.length) parts.push(`MCP Gate refused to serve:\n${refusals.map((r) => `- ${r}`).join('\n')}`);
  if (hidden.length)
    parts.push(
      `MCP Gate's policy hides these tools (the person can allow each in their user policy, not you):\n${hidden.map((r) => `- ${r}`).join('\n')}`,
    );
  return parts.length ? parts.join('\n\n') : undefined;
}
