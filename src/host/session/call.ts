// Calls: `tools/call` on a running server, only for a tool of the list frozen at discovery, and only when
// `mcp.<server>.tool.<name>` allows it at call time (an `ask` goes to the asker where a person can answer).
// Every call is logged (see `callLines`), refused while a required log cannot be written, bounded (60 s, 1 MiB),
// retried once on a new HTTP session after a 404, and its result cleaned of hidden characters and masked. A
// server that asks for input inside a result is refused the same way as a server→client request.
import { isInputRequiredResult, ProtocolError, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/client';
import { checkCallArguments, mayCallTool, resolve, type Verdict } from '../../policy/decide';
import { ruleText } from '../../policy/rules';
import { serverIdentity } from '../identity';
import type { LogEvent } from '../log/log';
import { GATE_RPC_ERROR_CODE } from '../net/reply-guard';
import { stripHidden } from './untrusted';
import {
  CALL_TIMEOUT_MS,
  describeError,
  DroppedError,
  isNotFound,
  MAX_RESULT_BYTES,
  type CallOutcome,
  type Connection,
  type SessionContext,
} from './context';

/** Verdicts kept per connection (its frozen tool list is bounded by discovery; this bounds any other name asked). */
const MAX_KEPT_VERDICTS = 4096;

/**
 * What the policy says now about calling `tool` of this connection's server (before any question is asked). A
 * verdict depends only on the server, its host, the tool and the rules, so it is kept per connection for as long as
 * the policy in force holds the same rule list (a changed policy is a new list: decided afresh at its first call).
 */
export function callVerdict(ctx: SessionContext, conn: Connection, tool: string): Verdict {
  const rules = ctx.policy.rules;
  if (conn.verdicts?.rules !== rules) conn.verdicts = { rules, byTool: new Map() };
  let v = conn.verdicts.byTool.get(tool);
  if (!v) {
    v = mayCallTool(serverIdentity(conn.server, ctx.project), conn.host, tool, rules);
    if (conn.verdicts.byTool.size < MAX_KEPT_VERDICTS) conn.verdicts.byTool.set(tool, v);
  }
  return v;
}

/** Calls a tool of `conn` (absent: no server of that name runs in the session). */
export async function callTool(
  ctx: SessionContext,
  conn: Connection | undefined,
  serverName: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<CallOutcome> {
  if (!conn)
    return {
      ok: false,
      outcome: 'refused_by_policy',
      error: `no server "${serverName}" runs in this session${ctx.notes.length ? ` (${ctx.notes.join('; ')})` : ''}`,
    };
  const stopped = conn.changed ?? conn.stopped;
  if (stopped) {
    ctx.o.log.write({
      kind: 'mcp.request',
      server: serverName,
      host: 'stdio',
      about: stripHidden(tool),
      outcome: 'refused_by_policy',
      detail: stopped,
    });
    return { ok: false, outcome: 'refused_by_policy', error: stopped };
  }
  if (!conn.tools.some((t) => t.name === tool)) {
    const msg = `"${serverName}" offered no tool "${stripHidden(tool)}" when the session started; the tool list is frozen`;
    ctx.o.log.write({
      kind: 'mcp.request',
      server: serverName,
      host: conn.host ?? 'stdio',
      about: stripHidden(tool),
      outcome: 'refused_by_policy',
      detail: msg,
    });
    return { ok: false, outcome: 'refused_by_policy', error: msg };
  }
  const verdict = callVerdict(ctx, conn, tool);
  // An allow is an allow of every step (mayCallTool picks a deny or an ask first): nothing to ask, no turn to wait.
  // The allowing rule's argument constraints are checked on this call's arguments (src/policy/args.ts).
  const decided = verdict.decision === 'allow' ? checkCallArguments(verdict, args, ctx.project) : await resolve(verdict, ctx.o.asker);
  if (decided.decision !== 'allow') {
    ctx.o.log.write({
      kind: 'mcp.request',
      server: serverName,
      host: conn.host ?? 'stdio',
      about: tool,
      outcome: 'refused_by_policy',
      detail: decided.reason,
      ...(decided.rule && decided.decision === 'deny' ? { rule: ruleText(decided.rule) } : {}),
    });
    return { ok: false, outcome: 'refused_by_policy', error: decided.reason };
  }
  callLines(ctx, [{ kind: 'tool.call', server: serverName, tool }]);
  const unlogged = ctx.o.report.requireLog ? ctx.o.log.failure : undefined;
  if (unlogged) {
    const msg = ctx.masker.mask(
      `the exchange log ${unlogged.file} cannot be written (${unlogged.error.message}), and your setting requireLog refuses calls until it can; make the file writable or turn requireLog off`,
    );
    return { ok: false, outcome: 'refused_by_policy', error: msg };
  }
  const timeout = ctx.o.callTimeoutMs ?? CALL_TIMEOUT_MS;
  const attempt = () =>
    conn.client.callTool({ name: tool, arguments: args }, { timeout, allowInputRequired: true }) as Promise<
      CallToolResult | InputRequiredResult
    >;
  conn.inflight = (conn.inflight ?? 0) + 1;
  try {
    const outcome = await runCall(ctx, conn, serverName, tool, attempt);
    // The load guard refused a file during the call: what the server answered after that is not handed on.
    const refused = await conn.guardCheck?.();
    if (refused) {
      ctx.o.log.write({
        kind: 'mcp.request',
        server: serverName,
        host: 'stdio',
        about: stripHidden(tool),
        outcome: 'refused_by_policy',
        detail: refused,
      });
      return { ok: false, outcome: 'refused_by_policy', error: refused };
    }
    return outcome;
  } finally {
    conn.inflight--;
    // A change on disk seen during the call stops the server once its calls have answered.
    if (conn.inflight === 0 && conn.closeWhenIdle) conn.closeWhenIdle();
  }
}

/**
 * A call's log lines. With `requireLog` they are appended before the call goes on (the line of the call before it
 * is sent, its result's before the result is handed back), so a log that cannot be written refuses the next call.
 * Otherwise they are held with the time they happened and appended (masked, then told to the output channel and the
 * panel) in the same turn of the event loop, after the request is sent or the reply handed on (the gateway appends
 * right after it sends, ./gateway.ts): the server's answer is never read before the call's line is in the file, and
 * no file write stands between the client, the gate and the server (bench group `gateway`).
 */
function callLines(ctx: SessionContext, events: LogEvent[]): void {
  if (ctx.o.report.requireLog) ctx.o.log.writeAll(events);
  else for (const e of events) ctx.o.log.hold(e);
}

async function runCall(
  ctx: SessionContext,
  conn: Connection,
  serverName: string,
  tool: string,
  attempt: () => Promise<CallToolResult | InputRequiredResult>,
): Promise<CallOutcome> {
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
    if (isInputRequiredResult(result)) throw new DroppedError(refuseInput(ctx, serverName, result));
    const text = JSON.stringify(result);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_RESULT_BYTES) throw new Error(`the result is ${bytes} bytes, over the ${MAX_RESULT_BYTES}-byte bound`);
    const clean = ctx.masker.maskDeep(result, stripHidden);
    // One append for both lines; for a remote server it also carries the exchange the guarded fetch observed (held).
    callLines(ctx, [
      ...(conn.host ? [] : [{ kind: 'mcp.request', server: serverName, host: 'stdio', about: tool, outcome: 'answered' } as const]),
      { kind: 'tool.result', server: serverName, tool, ok: !result.isError, bytes },
    ]);
    return { ok: !result.isError, result: clean as CallToolResult, outcome: 'answered' };
  } catch (e) {
    // The server's own JSON-RPC error is an answer: said as the server said it, with its code (not the error the
    // reply guard puts in a reply's place, ../net/reply-guard.ts).
    if (
      !conn.stopped &&
      e instanceof ProtocolError &&
      !(e.code === GATE_RPC_ERROR_CODE && (e as { data?: { mcpGate?: unknown } }).data?.mcpGate !== undefined)
    ) {
      const said = ctx.masker.mask(serverErrorWords(e));
      callLines(ctx, [
        ...(conn.host
          ? []
          : [{ kind: 'mcp.request', server: serverName, host: 'stdio', about: tool, outcome: 'answered', detail: said } as const]),
        { kind: 'tool.result', server: serverName, tool, ok: false, bytes: 0 },
      ]);
      return { ok: false, outcome: 'answered', error: said };
    }
    // A server stopped for a limit during the call: the call's error is why.
    const why = conn.stopped ?? ctx.masker.mask(describeError(e));
    callLines(ctx, [
      ...(conn.host
        ? []
        : [{ kind: 'mcp.request', server: serverName, host: 'stdio', about: tool, outcome: 'no_answer', detail: why } as const]),
      { kind: 'tool.result', server: serverName, tool, ok: false, bytes: 0 },
    ]);
    return { ok: false, outcome: 'no_answer', error: why };
  }
}

/**
 * A 2026-07-28 server asked for input inside a tool's result (a multi round-trip InputRequiredResult): the
 * same policy as a server→client request — refused, counted, logged, and the call ends now (no retry round).
 */
function refuseInput(ctx: SessionContext, server: string, result: InputRequiredResult): string {
  const requests = Object.values((result as { inputRequests?: Record<string, { method?: unknown }> }).inputRequests ?? {});
  const methods = requests.map((r) => (typeof r?.method === 'string' ? r.method : 'input request'));
  if (!methods.length) methods.push('input request');
  for (const m of methods) ctx.refuseRequest(server, m, 'an input request in a result,');
  return `the server asked for input (${[...new Set(methods.map((m) => stripHidden(m)))].join(', ')}); MCP Gate refused it: it answers no sampling, elicitation or roots request`;
}

/** A server's JSON-RPC error, in words: its code (named when it is one of JSON-RPC's own) and its message. */
export function serverErrorWords(e: ProtocolError): string {
  const names: Record<number, string> = {
    [-32700]: 'parse error',
    [-32600]: 'invalid request',
    [-32601]: 'method not found',
    [-32602]: 'invalid params',
    [-32603]: 'internal error',
  };
  const code = typeof e.code === 'number' ? e.code : Number(e.code);
  const message = stripHidden(e.message.replace(/^MCP error -?\d+:\s*/, ''));
  const cut = message.length > MAX_SERVER_ERROR ? `${message.slice(0, MAX_SERVER_ERROR)}… (cut)` : message;
  return `the server answered with its own error (JSON-RPC ${code}${names[code] ? `, ${names[code]}` : ''}): ${cut}`;
}

/** A server's error message is shown up to this many characters. */
const MAX_SERVER_ERROR = 2000;
