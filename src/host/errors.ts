// Typed errors of the host network layer. Each one knows the logged outcome it stands for, and none of
// them ever carries a request header value in its message (header values may be secrets).

/** Outcome of one HTTP exchange, as logged in `mcp.request` events (README, "The host"). */
export type ExchangeOutcome = 'answered' | 'no_answer' | 'refused_by_address' | 'redirected';

/** Base class: every error raised by src/host on purpose. `code` is stable; `outcome` is what to log. */
export abstract class HostError extends Error {
  abstract readonly code: string;
  abstract readonly outcome: ExchangeOutcome;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The address policy refused a host: one of its addresses (or the URL itself) may not be reached.
 * `address` is the refused address when one address is to blame; `addresses` is every answer seen.
 */
export class AddressRefusedError extends HostError {
  readonly code = 'ADDRESS_REFUSED';
  readonly outcome = 'refused_by_address';
  constructor(
    readonly host: string,
    readonly address: string | undefined,
    readonly reason: string,
    readonly addresses: readonly string[] = address === undefined ? [] : [address],
  ) {
    super(`${host}: ${reason}`);
  }
}

/** The name could not be resolved (DNS failure or no answer). A connection failure: outcome no_answer. */
export class NameResolutionError extends HostError {
  readonly code = 'NAME_NOT_RESOLVED';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${host}: name not resolved (${detail})`, options);
  }
}

/** The server answered with a redirect (any 3xx). Never followed. `location` is kept out of the message. */
export class RedirectRefusedError extends HostError {
  readonly code = 'REDIRECT_REFUSED';
  readonly outcome = 'redirected';
  constructor(
    readonly host: string,
    readonly status: number,
    readonly location: string | undefined,
  ) {
    super(`${host}: redirect (HTTP ${status}) refused`);
  }
}

/** The reply passed the byte bound (JSON body or SSE stream). */
export class ReplyTooLargeError extends HostError {
  readonly code = 'REPLY_TOO_LARGE';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    readonly limit: number,
  ) {
    super(`${host}: reply exceeds ${limit} bytes`);
  }
}

/** An SSE reply to a POST ended before a JSON-RPC response for every request id in it arrived. */
export class StreamEndedEarlyError extends HostError {
  readonly code = 'STREAM_ENDED_EARLY';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    readonly pendingIds: ReadonlyArray<string | number>,
  ) {
    super(`${host}: reply stream ended before the response (pending ids: ${pendingIds.map((i) => JSON.stringify(i)).join(', ')})`);
  }
}

/** The reply is not what the request calls for (not JSON, not JSON-RPC, no response for the id, wrong type). */
export class InvalidReplyError extends HostError {
  readonly code = 'INVALID_REPLY';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    readonly detail: string,
  ) {
    super(`${host}: invalid reply (${detail})`);
  }
}

/** The per-request budget ran out; the HTTP request was aborted. */
export class ExchangeTimeoutError extends HostError {
  readonly code = 'EXCHANGE_TIMEOUT';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    readonly timeoutMs: number,
  ) {
    super(`${host}: no complete reply within ${timeoutMs} ms`);
  }
}

/** Network or TLS failure (refused connection, reset, certificate for another name, ...). `cause` has details. */
export class ConnectionFailedError extends HostError {
  readonly code = 'CONNECTION_FAILED';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    cause: unknown,
  ) {
    super(`${host}: connection failed (${describeCause(cause)})`, { cause });
  }
}

/** A request header name or value is unsafe (control characters, CR/LF/NUL). The value is never shown. */
export class HeaderRefusedError extends HostError {
  readonly code = 'HEADER_REFUSED';
  readonly outcome = 'no_answer';
  constructor(
    readonly headerName: string,
    readonly detail: string,
  ) {
    super(`request header ${JSON.stringify(headerName.slice(0, 64))} refused: ${detail}`);
  }
}

/** The request itself is unusable (body type, credentials in the URL). Nothing was sent. */
export class InvalidRequestError extends HostError {
  readonly code = 'INVALID_REQUEST';
  readonly outcome = 'no_answer';
  constructor(
    readonly host: string,
    readonly detail: string,
  ) {
    super(`${host}: request refused (${detail})`);
  }
}

/** The outcome to log for any error thrown by a guarded exchange (unknown errors count as no_answer). */
export function outcomeOf(err: unknown): ExchangeOutcome {
  return err instanceof HostError ? err.outcome : 'no_answer';
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
