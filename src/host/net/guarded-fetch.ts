// The fetch handed to the MCP SDK's StreamableHTTPClientTransport: undici's own fetch over the pinned
// agent (never the global fetch or proxy variables), https only, no redirects, bounded replies, a budget
// per request (none for the GET listening stream, whose events are bounded one by one), and one observation per
// exchange for the mcp.request log.

import type { Agent } from 'undici';
import type { fetch as UndiciFetch } from 'undici/lib/web/fetch/index.js';
import { undici } from './undici-load';
import {
  AddressRefusedError,
  ConnectionFailedError,
  ExchangeTimeoutError,
  HeaderRefusedError,
  HostError,
  InvalidReplyError,
  InvalidRequestError,
  RedirectRefusedError,
  ReplyTooLargeError,
  type ExchangeOutcome,
} from '../errors';
import { createPinnedAgent, type PinnedAgentOptions } from './pinned-agent';
import {
  boundedStream,
  checkJsonReply,
  guardListeningStream,
  guardSseReply,
  readBounded,
  rpcCallsOf,
  type RpcCall,
  type StreamEnd,
} from './reply-guard';

/** Reply bound for JSON bodies and SSE streams (README, "The host"). */
export const MAX_REPLY_BYTES = 1024 * 1024;

/** Default per-request budget when the caller gives none (the budget of a tool call). */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** What one exchange came to, for the session layer's `mcp.request` event. */
export interface Observation {
  /** URL host name (IPv6 literals keep their brackets). */
  readonly host: string;
  /** HTTP method. */
  readonly method: string;
  /** The JSON-RPC requests/notifications the request carried. */
  readonly rpc: readonly RpcCall[];
  /** HTTP status, where the server gave one. */
  readonly status?: number;
  readonly outcome: ExchangeOutcome;
  /** Why the exchange had no answer or was stopped (typed, see ./errors). */
  readonly error?: Error;
}

/** Options of {@link createGuardedFetch}; the pinned-agent options configure its own dispatcher. */
export interface GuardedFetchOptions extends PinnedAgentOptions {
  /** Reply bound in bytes. Default {@link MAX_REPLY_BYTES}. */
  readonly maxBytes?: number;
  /**
   * Budget of one exchange, from the call until the reply is complete; when it runs out the HTTP request
   * is aborted. A function gets the JSON-RPC calls in the body (e.g. 10 s for `tools/list`, 60 s for
   * `tools/call`). Default {@link DEFAULT_TIMEOUT_MS}.
   */
  readonly timeoutMs?: number | ((rpc: readonly RpcCall[]) => number);
  /**
   * The headers MCP Gate configured for this server (declared ones and bound secrets). When given, a request may
   * carry one of them only with this value, and Authorization, Cookie and Proxy-Authorization only if configured.
   */
  readonly ownedHeaders?: Readonly<Record<string, string>>;
  /** Receives one observation per exchange (never for the GET answered locally). Must not throw. */
  readonly onObservation?: (observation: Observation) => void;
}

/** A fetch for the MCP SDK (`StreamableHTTPClientTransport` option `fetch`), with its own dispatcher. */
export interface GuardedFetch {
  (input: string | URL, init?: RequestInit): Promise<Response>;
  /** The pinned agent every exchange goes through. */
  readonly dispatcher: Agent;
  /** Closes the dispatcher (open connections are ended). */
  close(): Promise<void>;
}

/** Request headers undici or the agent manage; a caller setting them is refused (no Host fronting). */
const MANAGED_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
  'expect',
]);
/** Headers MCP Gate owns beyond the configured ones: a request may carry them only as configured. */
export const OWNED_HEADER_NAMES: ReadonlySet<string> = new Set(['authorization', 'cookie', 'proxy-authorization', ...MANAGED_HEADERS]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Validates request headers before undici sees them: names must be HTTP tokens and not managed by the
 * client; values must not contain control characters (CR, LF, NUL, ...) or characters above U+00FF.
 * Error messages name the header, never its value. Use it also on headers given to the SDK's
 * `requestInit`, since the SDK builds a `Headers` object (whose errors quote values) before calling fetch.
 * @throws HeaderRefusedError
 */
export function validateHeaders(headers: RequestInit['headers']): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (headers === undefined || headers === null) return out;
  let pairs: Iterable<readonly [string, string]>;
  if (typeof (headers as { entries?: unknown }).entries === 'function' && !Array.isArray(headers)) {
    pairs = (headers as Headers).entries() as Iterable<[string, string]>;
  } else if (Array.isArray(headers)) {
    pairs = headers as Array<[string, string]>;
  } else {
    pairs = Object.entries(headers as Record<string, string>);
  }
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) throw new HeaderRefusedError('?', 'not a name/value pair');
    const [name, value] = pair as [unknown, unknown];
    if (typeof name !== 'string' || !TOKEN.test(name)) throw new HeaderRefusedError(String(name), 'invalid header name');
    if (MANAGED_HEADERS.has(name.toLowerCase())) throw new HeaderRefusedError(name, 'managed by the client');
    if (typeof value !== 'string') throw new HeaderRefusedError(name, 'value is not a string');
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff)
        throw new HeaderRefusedError(name, 'value contains a control or non-Latin-1 character');
    }
    out.push([name, value]);
  }
  return out;
}

/**
 * Creates the guarded fetch. Per call:
 * - `GET` is the SDK's listening stream (a 2025 session's server→client requests that belong to no call arrive on it,
 *   and MCP Gate must see them to refuse them at once): sent like any request but with no time budget (it lives as
 *   long as the session; the SDK aborts it at close), and an event-stream reply is guarded event by event
 *   (`guardListeningStream`: complete events only, no single event over `maxBytes`).
 * - https only; http only under a local-development exception with `allowLoopback` (and the agent
 *   connects it only to loopback). Otherwise {@link AddressRefusedError}, outcome `refused_by_address`.
 * - A header MCP Gate owns (Authorization, Cookie, a configured header, …) may carry only the value MCP Gate
 *   configured: a header the SDK mirrors from a tool's arguments (`Mcp-Param-*`) can never set one.
 * - Every 3xx: {@link RedirectRefusedError} (outcome `redirected`), never followed.
 * - HTTP error status: the response is returned (body bounded) and observed as `no_answer` with status.
 * - POST carrying requests: a JSON reply is read (bounded) and must hold a response for every id, else
 *   {@link InvalidReplyError}/{@link ReplyTooLargeError} is thrown; an SSE reply is guarded by
 *   `guardSseReply` (bounded, fails at once when it ends before the responses, see ./reply-guard).
 * - The budget aborts the HTTP request ({@link ExchangeTimeoutError}); the caller's `signal` also aborts.
 * - Network/TLS failures: {@link ConnectionFailedError}; name not resolved: `NameResolutionError`.
 *
 * Built as stages in the shape of the MCP SDK's client middleware (`(next) => fetch`): {@link noListeningStream}
 * → {@link checkedRequest} → {@link budgeted} → {@link send} → {@link guardedReply}.
 */
export function createGuardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const dispatcher = createPinnedAgent(options);
  const maxBytes = options.maxBytes ?? MAX_REPLY_BYTES;
  const owned = options.ownedHeaders ? ownedHeaderValues(options.ownedHeaders) : undefined;
  const guarded: FetchLike = async (input, init = {}) => {
    const ex = exchangeOf(input, init, options.onObservation);
    const headers = checkedRequest(ex, init, options, owned);
    const budgetMs =
      ex.method === 'GET'
        ? undefined
        : typeof options.timeoutMs === 'function'
          ? options.timeoutMs(ex.rpc)
          : (options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const budget = budgeted(ex, init.signal ?? undefined, budgetMs);
    const res = await send(ex, budget, {
      method: ex.method,
      headers,
      body: ex.bodyText ?? null,
      redirect: 'manual',
      dispatcher,
      signal: budget.signal,
    });
    return guardedReply(ex, budget, res, maxBytes);
  };
  return Object.assign(guarded, {
    dispatcher,
    close: () => dispatcher.close(),
  });
}

type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** One exchange: what it carries, and its single observation. */
interface Exchange {
  readonly url: URL;
  readonly host: string;
  readonly method: string;
  readonly bodyText: string | undefined;
  readonly rpc: readonly RpcCall[];
  /** Ids of the JSON-RPC requests a reply must answer. */
  readonly ids: ReadonlyArray<string | number>;
  observe(o: Omit<Observation, 'host' | 'method' | 'rpc'>): void;
  /** Observes the failure and throws it. */
  refuse(error: Error, status?: number): never;
}

function exchangeOf(input: string | URL, init: RequestInit, onObservation: GuardedFetchOptions['onObservation']): Exchange {
  const method = (init.method ?? 'GET').toUpperCase();
  const url = new URL(input instanceof URL ? input.href : String(input));
  const host = url.hostname;
  const bodyText = bodyToText(init.body);
  const rpc = rpcCallsOf(bodyText);
  let observed = false;
  const observe = (o: Omit<Observation, 'host' | 'method' | 'rpc'>) => {
    if (observed) return;
    observed = true;
    try {
      onObservation?.({ host, method, rpc, ...o });
    } catch {
      // the observer's failure must not change the exchange
    }
  };
  return {
    url,
    host,
    method,
    bodyText,
    rpc,
    observe,
    ids: rpc.flatMap((c) => (c.id === undefined ? [] : [c.id])),
    refuse(error: Error, status?: number): never {
      observe({ outcome: error instanceof HostError ? error.outcome : 'no_answer', error, ...(status === undefined ? {} : { status }) });
      throw error;
    },
  };
}

/** The configured headers, by lower-case name. */
function ownedHeaderValues(headers: Readonly<Record<string, string>> | undefined): Map<string, string> {
  return new Map(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Stage: the request may be sent (scheme, no URL credentials, valid headers, owned headers untouched, a text body). */
function checkedRequest(
  ex: Exchange,
  init: RequestInit,
  options: GuardedFetchOptions,
  owned: ReadonlyMap<string, string> | undefined,
): Array<[string, string]> {
  if (ex.url.protocol !== 'https:') {
    const loopbackHttp = ex.url.protocol === 'http:' && options.policy?.exception?.allowLoopback === true;
    if (!loopbackHttp) ex.refuse(new AddressRefusedError(ex.host, undefined, `${ex.url.protocol} URL refused; https required`));
  }
  if (ex.url.username || ex.url.password) ex.refuse(new InvalidRequestError(ex.host, 'credentials in the URL are not allowed'));
  let headers: Array<[string, string]> = [];
  try {
    headers = validateHeaders(init.headers);
    for (const [name, value] of owned ? headers : []) {
      const key = name.toLowerCase();
      const mine = owned!.get(key);
      if (mine !== undefined ? value !== mine : OWNED_HEADER_NAMES.has(key))
        throw new HeaderRefusedError(name, 'MCP Gate sets this header itself');
    }
  } catch (err) {
    ex.refuse(err as Error);
  }
  if (init.body !== undefined && init.body !== null && ex.bodyText === undefined) {
    ex.refuse(new InvalidRequestError(ex.host, 'request body must be a string or bytes'));
  }
  return headers;
}

/** The budget of one exchange: an abort signal, and how a failure reads once it fired. */
interface Budget {
  readonly signal: AbortSignal;
  /** Stops the timer and the caller's abort wiring (the reply is complete or failed). */
  settle(): void;
  /** The error to report: the budget's or the caller's abort reason, else our typed error for `err`. */
  mapError(err: unknown): Error;
}

/**
 * Stage: our controller aborts the undici request (connect, headers and body) when the budget or the caller ends
 * it. No budget (`undefined`): the listening stream, which only the caller (the SDK's close) ends.
 */
function budgeted(ex: Exchange, callerSignal: AbortSignal | undefined, budgetMs: number | undefined): Budget {
  const controller = new AbortController();
  const timer =
    budgetMs === undefined ? undefined : setTimeout(() => controller.abort(new ExchangeTimeoutError(ex.host, budgetMs)), budgetMs);
  timer?.unref(); // the open request keeps the process alive; the timer alone must not
  const onCallerAbort = () => controller.abort(callerSignal?.reason ?? new Error('aborted by the caller'));
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    settle() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
    mapError(err: unknown): Error {
      if (controller.signal.aborted) {
        const reason: unknown = controller.signal.reason;
        return reason instanceof Error ? reason : new Error(String(reason));
      }
      return hostErrorIn(err) ?? new ConnectionFailedError(ex.host, (err as { cause?: unknown })?.cause ?? err);
    },
  };
}

type UndiciReply = Awaited<ReturnType<typeof UndiciFetch>>;

/** Stage: undici's own fetch over the pinned agent; its failures become our typed errors. */
async function send(ex: Exchange, budget: Budget, init: Parameters<typeof UndiciFetch>[1]): Promise<UndiciReply> {
  try {
    return await undici().fetch(ex.url, init);
  } catch (err) {
    budget.settle();
    return ex.refuse(budget.mapError(err));
  }
}

/** Stage: the reply — no redirects, bounded, and for requests a response to every id (JSON or SSE). */
async function guardedReply(ex: Exchange, budget: Budget, res: UndiciReply, maxBytes: number): Promise<Response> {
  const { host } = ex;
  const { mapError } = budget;
  const status = res.status;
  const fail = (error: Error): never => {
    budget.settle();
    res.body?.cancel().catch(() => undefined);
    return ex.refuse(error, status);
  };
  const finish = (end: StreamEnd) => {
    budget.settle();
    if (end.answered) ex.observe({ outcome: 'answered', status });
    else ex.observe({ outcome: end.error instanceof HostError ? end.error.outcome : 'no_answer', status, error: end.error });
  };
  if (status >= 300 && status < 400) fail(new RedirectRefusedError(host, status, res.headers.get('location') ?? undefined));
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) fail(new ReplyTooLargeError(host, maxBytes));

  const wrap = (body: ReadableStream<Uint8Array> | null) =>
    new (undici().Response)(status === 204 || status === 205 ? null : body, {
      status,
      statusText: res.statusText,
      headers: res.headers,
    }) as unknown as Response;
  const passBounded = () => {
    if (!res.body) budget.settle();
    return wrap(
      res.body ? boundedStream(res.body as ReadableStream<Uint8Array>, { host, maxBytes, mapError, onEnd: () => budget.settle() }) : null,
    );
  };

  if (status < 200 || status >= 300) {
    // Reported at once as no_answer with its status; the body is handed on bounded (the SDK reads it).
    ex.observe({ outcome: 'no_answer', status });
    return passBounded();
  }
  const type = (res.headers.get('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (ex.method === 'GET' && type === 'text/event-stream' && res.body) {
    // The listening stream: open as long as the session, each event bounded; what it carries the SDK hands to
    // the client, which refuses every request on it at once (src/host/session/client.ts).
    ex.observe({ outcome: 'answered', status });
    return wrap(guardListeningStream(res.body as ReadableStream<Uint8Array>, { host, maxBytes, mapError, onEnd: () => budget.settle() }));
  }
  if (ex.method !== 'POST' || ex.ids.length === 0) {
    // Notifications, responses, DELETE: no JSON-RPC response is due; a 2xx is the answer.
    ex.observe({ outcome: 'answered', status });
    return passBounded();
  }
  if (type === 'text/event-stream' && res.body) {
    return wrap(guardSseReply(res.body as ReadableStream<Uint8Array>, ex.ids, { host, maxBytes, mapError, onEnd: finish }));
  }
  if (type === 'application/json') {
    let bytes: Uint8Array;
    try {
      bytes = await readBounded(res.body as ReadableStream<Uint8Array> | null, host, maxBytes, mapError);
      checkJsonReply(bytes, host, ex.ids);
    } catch (err) {
      return fail(err instanceof Error ? err : new Error(String(err)));
    }
    finish({ answered: true });
    return new (undici().Response)(bytes, { status, statusText: res.statusText, headers: res.headers }) as unknown as Response;
  }
  return fail(
    new InvalidReplyError(
      host,
      status === 202 || !res.body
        ? `no response to a request (HTTP ${status})`
        : `unexpected content type ${JSON.stringify(type.slice(0, 60))}`,
    ),
  );
}

function bodyToText(body: RequestInit['body']): string | undefined {
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return new TextDecoder().decode(body);
  if (ArrayBuffer.isView(body)) return new TextDecoder().decode(body);
  return undefined;
}

/** Our own typed error somewhere in undici's error chain (undici wraps connect errors as `cause`). */
function hostErrorIn(err: unknown): HostError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof HostError) return e;
  }
  return undefined;
}
