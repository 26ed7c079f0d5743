// Remote connect: a remote server is reached over MCP's Streamable HTTP through the guarded fetch
// (src/host/net/guarded-fetch.ts: every connection to an address checked at resolution, no redirects, bounded replies,
// a time budget per request) — only at an https URL without credentials (plain http to loopback under a
// local-development exception), at a host the policy allows, with the declared headers and the bound secrets,
// validated before they are sent. A 404 on the session opens a new one once. Every exchange about a tool list or a
// call is logged as the guarded fetch observed it (a call's in the same append as its tool.result, src/host/log/log.ts).
import { StreamableHTTPClientTransport, type Client, type Transport } from '@modelcontextprotocol/client';
import { mayDiscover, privateRangesRefused, resolve } from '../../policy/decide';
import { localExceptionFor } from '../../policy/user-policy';
import { substitute } from '../../trust/plan/launch-plan';
import type { ServerReport } from '../../trust/report';
import { createGuardedFetch, validateHeaders, type Observation } from '../net/guarded-fetch';
import { serverIdentity } from '../identity';
import { stripHidden } from './untrusted';
import { newClient } from './client';
import {
  CALL_TIMEOUT_MS,
  describeError,
  DISCOVER_TIMEOUT_MS,
  DroppedError,
  isNotFound,
  secretSteps,
  unresolvable,
  type Connection,
  type SessionContext,
  type SessionTool,
} from './context';
import { discover } from './discover';

/** A rule `mcp.<server>.private` deny turns on the address guard's private-range refusal, naming the rule. */
function privatePolicy(refusedBy: string | undefined): { refusePrivate?: boolean; refusePrivateBy?: string } {
  return refusedBy ? { refusePrivate: true, refusePrivateBy: refusedBy } : {};
}

/** Stage 1: the URL may be reached (https, no credentials in it, the policy allows the host). */
async function remoteTarget(
  ctx: SessionContext,
  server: ServerReport,
): Promise<{ url: URL; host: string; exception: ReturnType<typeof localExceptionFor> }> {
  const def = server.definition!;
  let url: URL;
  try {
    url = new URL(def.url!);
  } catch {
    throw new DroppedError(`its url ${JSON.stringify(def.url)} is not a URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const who = serverIdentity(server, ctx.project);
  const exception = localExceptionFor(ctx.policy, who);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && exception?.allowLoopback)) {
    throw new DroppedError(
      `its url is ${url.protocol.replace(':', '')}, and only https is allowed (plain http only to loopback under a local-development exception)`,
    );
  }
  if (url.username || url.password)
    throw new DroppedError('its url carries a user name or password; bind credentials through the secrets block');
  const verdict = await resolve(mayDiscover(who, host, ctx.policy.rules), ctx.o.asker);
  if (verdict.decision !== 'allow') {
    ctx.o.log.write({
      kind: 'mcp.request',
      server: server.name,
      host,
      about: 'discover',
      outcome: 'refused_by_policy',
      detail: verdict.reason,
    });
    throw new DroppedError(`the policy does not allow reaching ${host}: ${verdict.reason}`);
  }
  return { url, host, exception };
}

/** Stage 2: the headers MCP Gate sends (declared ones, then bound secrets), validated. */
async function remoteHeaders(ctx: SessionContext, server: ServerReport, host: string): Promise<Record<string, string>> {
  const bound = await ctx.secretsFor(server, host);
  if (bound.drop) throw new DroppedError(bound.why);
  for (const n of bound.notes) ctx.note(`${server.name}: ${n}`, server);
  const declared = Object.entries(server.definition!.headers).map(([k, v]) => [k, substitute(v, ctx.project)] as const);
  for (const [k, v] of declared) {
    const bad = Object.keys(bound.headers).some((h) => h.toLowerCase() === k.toLowerCase()) ? undefined : unresolvable([v]);
    if (!bad) continue;
    const name = k.toUpperCase().replace(/[^A-Z0-9]+/g, '_');
    const steps = secretSteps(
      server,
      ctx.project,
      name,
      { bind: 'header', ...(k.toLowerCase() === 'authorization' ? {} : { as: k }) },
      ctx.words,
    );
    throw new DroppedError(
      `its header ${k} uses ${bad}, which MCP Gate does not fill in; give it as a secret instead: ${steps} — the secret then takes the place of the declared header${k.toLowerCase() === 'authorization' ? ' (sent as "Authorization: Bearer <value>")' : ''}`,
    );
  }
  const headers: Record<string, string> = { ...Object.fromEntries(declared), ...bound.headers };
  try {
    validateHeaders(headers); // before the SDK builds a Headers object, whose errors quote values
  } catch (e) {
    throw new DroppedError(`its headers cannot be sent: ${ctx.masker.mask((e as Error).message)}`);
  }
  return headers;
}

/** Logs one HTTP exchange the guarded fetch observed, when it is about a tool list or a call. */
function observe(ctx: SessionContext, server: string, ob: Observation): void {
  // The listening stream (GET) is about no tool list or call; what arrives on it is refused and logged as such.
  if (ob.method === 'GET') return;
  const about = ob.rpc.find((c) => c.method === 'tools/call');
  const toolName = about ? (about.tool ?? 'unknown') : undefined;
  const isList = ob.rpc.some((c) => c.method === 'tools/list');
  if (!toolName && !isList && ob.outcome === 'answered') return; // initialize, notifications: not an exchange about anything
  // The revision probe: a 2025 server answers `server/discover` with HTTP 400, 404 or 405, and the client goes on
  // with initialize. Any other probe outcome (refused, no connection, timeout, 401, 5xx) is an exchange to log.
  if (ob.rpc.some((c) => c.method === 'server/discover') && (ob.status === 400 || ob.status === 404 || ob.status === 405)) return;
  // A call's exchange is held for the call's tool.result line (one append, before the result is handed back).
  ctx.o.log[toolName ? 'hold' : 'write']({
    kind: 'mcp.request',
    server,
    host: ob.host,
    about: toolName ? stripHidden(toolName) : 'discover',
    ...(ob.status !== undefined ? { status: ob.status } : {}),
    outcome: ob.outcome,
    ...(ob.error ? { detail: describeError(ob.error) } : {}),
  });
}

/** Connects to a remote server and discovers its tools. Throws DroppedError when it is left out. */
export async function openRemote(ctx: SessionContext, server: ServerReport): Promise<Connection> {
  const { url, host, exception } = await remoteTarget(ctx, server);
  const headers = await remoteHeaders(ctx, server, host);
  const discoverTimeout = ctx.o.discoverTimeoutMs ?? DISCOVER_TIMEOUT_MS;
  const fetch = createGuardedFetch({
    resolver: ctx.o.resolver,
    ca: ctx.o.ca,
    policy: {
      ...privatePolicy(privateRangesRefused(serverIdentity(server, ctx.project), ctx.policy.rules)),
      exception: exception ? { allowLoopback: exception.allowLoopback, allowPrivate: exception.allowPrivate } : undefined,
    },
    timeoutMs: (rpc) => (rpc.some((c) => c.method === 'tools/call') ? (ctx.o.callTimeoutMs ?? CALL_TIMEOUT_MS) : discoverTimeout),
    ownedHeaders: headers,
    onObservation: (ob) => observe(ctx, server.name, ob),
  });
  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(url, {
      fetch,
      requestInit: { headers },
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
    });
    const client = newClient(ctx, server.name, discoverTimeout);
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
        tools = await discover(ctx, server, c.client, headers);
      } catch (e) {
        await c?.client.close().catch(() => undefined);
        if (!isNotFound(e) || retried) throw e;
        retried = true;
      }
    }
    return { server, host, client: c!.client, transport: c!.transport, fetch, reopen: connect, tools };
  } catch (e) {
    await fetch.close().catch(() => undefined);
    throw e instanceof DroppedError ? e : new DroppedError(`reading its tools failed: ${ctx.masker.mask(describeError(e))}`);
  }
}
