// A session: starts the servers the gate and the policy allow (at most 8), reads and freezes each one's tool
// list (at most 64 tools; a colliding name keeps the whole server out), pins the tools of approved repository
// servers, and runs tool calls — each checked against `mcp.<server>.tool.<name>` at call time, bounded in time
// and size, cleaned of hidden characters, masked, and logged. Every server left out gets a line saying why.
// This file is the front that composes the parts, as the MCP SDK's client sits over its transports: local start
// (local.ts) and remote connect (remote.ts) open a server, discovery and tool pinning (discover.ts) freeze its
// tools, calls (call.ts) run them; what they share is context.ts.
import type { Verdict } from '../../policy/decide';
import { stateWords } from '../../trust/approval/gate-state';
import { count } from '../../text/count';
import { isWaiting, mayRun } from '../../trust/approval/states';
import type { ServerReport } from '../../trust/report';
import { stripHidden } from './untrusted';
import { callTool, callVerdict } from './call';
import {
  DroppedError,
  GATE_TOOL_NAMES,
  MAX_SERVERS,
  SessionContext,
  type CallOutcome,
  type Connection,
  type SessionCounters,
  type SessionOptions,
  type SessionTool,
} from './context';
import { openLocal } from './local';
import { openRemote } from './remote';

export {
  CALL_TIMEOUT_MS,
  describeError,
  DISCOVER_TIMEOUT_MS,
  GATE_TOOL_NAMES,
  LAUNCHER_START_TIMEOUT_MS,
  MAX_RESULT_BYTES,
  MAX_SERVERS,
  MAX_TOOL_PAGES,
  MAX_TOOLS,
} from './context';
export type { CallOutcome, SessionCounters, SessionOptions, SessionTool } from './context';

export class Session {
  readonly notes: string[];
  readonly counters: SessionCounters;
  private readonly ctx: SessionContext;
  private readonly connections = new Map<string, Connection>();
  private discovered = false;

  private constructor(o: SessionOptions) {
    this.ctx = new SessionContext(o);
    this.notes = this.ctx.notes;
    this.counters = this.ctx.counters;
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
    return this.verdictFor(serverName, tool).decision;
  }

  /** The policy's whole verdict on calling this tool now (each step, and the rule that would permit it). */
  verdictFor(serverName: string, tool: string): Verdict {
    const conn = this.connections.get(serverName);
    if (!conn)
      return { decision: 'deny', action: `mcp.${serverName}.tool.${tool}`, reason: `"${serverName}" is not running in this session` };
    return callVerdict(this.ctx, conn, tool);
  }

  /** Why `serverName` was stopped while it ran (a file its approval pins changed on disk), or undefined. */
  changedOnDisk(serverName: string): string | undefined {
    return this.connections.get(serverName)?.changed;
  }

  /** The server's instructions, cleaned of hidden characters. */
  instructionsOf(serverName: string): string | undefined {
    const i = this.connections.get(serverName)?.client.getInstructions();
    return i === undefined ? undefined : stripHidden(i);
  }

  private async startAll(servers: ServerReport[]): Promise<void> {
    const ctx = this.ctx;
    const o = ctx.o;
    if (o.report.fullBlock.length) {
      ctx.note(`no server starts: the project is blocked (${o.report.fullBlock.map((b) => b.reason).join('; ')})`);
      return;
    }
    if (ctx.policy.problems.length) {
      ctx.note(`no server starts: your policy in ${ctx.policy.file} has invalid items: ${ctx.policy.problems.join('; ')}`);
      return;
    }
    const reserved = new Set([...GATE_TOOL_NAMES, ...(o.reservedToolNames ?? [])]);
    const seenTools = new Map<string, string>();
    let started = 0;
    for (const server of servers) {
      if (!mayRun(server, o.workspaceTrusted ?? true)) {
        const how = isWaiting(server)
          ? `; ${ctx.words.review(server.name)}`
          : server.state === 'rejected'
            ? `; ${ctx.words.resetServer(server.name)}`
            : '';
        const why = mayRun(server, true) ? 'the workspace is in Restricted Mode' : `it is ${stateWords(server)}: ${server.reason}`;
        ctx.note(`${server.name} (${server.source}) is left out: ${why}${how}`, server);
        continue;
      }
      if (server.disabled) {
        ctx.note(`${server.name} (${server.source}) is left out: it is disabled in ${server.file}`, server);
        continue;
      }
      if (started >= MAX_SERVERS) {
        ctx.note(`${server.name} (${server.source}) is left out: a session runs at most ${MAX_SERVERS} servers`, server);
        continue;
      }
      if (this.connections.has(server.name)) {
        ctx.note(`${server.name} (${server.source}) is left out: another server of the same name already runs in this session`, server);
        continue;
      }
      try {
        const conn = await this.open(server);
        const collision = conn.tools.find((t) => reserved.has(t.name) || seenTools.has(t.name));
        if (collision) {
          await closeConnection(conn);
          const other = seenTools.get(collision.name);
          throw new DroppedError(
            `its tool "${stripHidden(collision.name)}" collides with ${other ? `a tool of ${other}` : 'a tool the editor or the gate already offers'}`,
          );
        }
        for (const t of conn.tools) seenTools.set(t.name, server.name);
        this.connections.set(server.name, conn);
        started++;
        o.log.write({
          kind: 'server.start',
          server: server.name,
          source: server.source,
          detail: `${count(conn.tools.length, 'tool')}; protocol ${conn.client.getNegotiatedProtocolVersion() ?? 'unknown'}${conn.host ? '' : conn.sandbox ? `; contained: ${conn.sandbox.split('\n').join('; ')}` : '; not contained'}`,
        });
      } catch (e) {
        const why = e instanceof DroppedError ? e.message : `it could not be started: ${(e as Error).message}`;
        ctx.note(`${server.name} (${server.source}) is left out: ${why}`, server);
      }
    }
  }

  /** Opens one server: a remote one over the guarded HTTP client, a local one as a (contained) process. */
  private open(server: ServerReport): Promise<Connection> {
    return server.definition!.type === 'http' ? openRemote(this.ctx, server) : openLocal(this.ctx, server);
  }

  /** Calls a tool: frozen list, policy at call time, 60 s, 1 MiB, cleaned and masked result, logged. */
  async call(serverName: string, tool: string, args: Record<string, unknown> = {}): Promise<CallOutcome> {
    return callTool(this.ctx, this.connections.get(serverName), serverName, tool, args);
  }

  async close(): Promise<void> {
    for (const c of this.connections.values()) {
      await closeConnection(c);
      this.ctx.o.log.write({ kind: 'server.stop', server: c.server.name, source: c.server.source });
    }
    this.connections.clear();
  }

  /** True once discovery is over: from then on nothing is added to the tool list. */
  get frozen(): boolean {
    return this.discovered;
  }
}

async function closeConnection(c: Connection): Promise<void> {
  c.unwatch?.();
  await c.client.close().catch(() => undefined);
  await c.transport.close().catch(() => undefined);
  await c.afterClose?.().catch(() => undefined);
  await c.fetch?.close().catch(() => undefined);
  c.cleanup?.();
}
