// Reply guards for guarded exchanges: JSON-RPC helpers, a bounded byte stream, a bounded JSON reader,
// and the SSE guard that forwards only complete events and fails a POST's stream that ends early.

import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { ReadableStreamReadResult } from 'node:stream/web';
import { InvalidReplyError, ReplyTooLargeError, StreamEndedEarlyError } from '../errors';

/** JSON-RPC error code of the synthetic error response a failed SSE reply ends with. */
export const GATE_RPC_ERROR_CODE = -32050;

/** One JSON-RPC message of a request body: a request (with id) or a notification. */
export interface RpcCall {
  readonly method: string;
  readonly id?: string | number;
  /** For `tools/call`: the tool's name (what a `mcp.request` event is about). */
  readonly tool?: string;
}

type RpcId = string | number;

/** The JSON-RPC requests and notifications in a request body (empty if it is not JSON-RPC). */
export function rpcCallsOf(body: string | undefined): RpcCall[] {
  if (body === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const out: RpcCall[] = [];
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!isObject(m) || typeof m.method !== 'string') continue;
    const params = m.params as Record<string, unknown> | undefined;
    const tool = m.method === 'tools/call' && params && typeof params.name === 'string' ? { tool: params.name } : {};
    out.push(isId(m.id) ? { method: m.method, id: m.id, ...tool } : { method: m.method, ...tool });
  }
  return out;
}

/** Key that tells 1 from "1". */
function idKey(id: RpcId): string {
  return `${typeof id}:${String(id)}`;
}

/** The id of `m` if it is a well-formed JSON-RPC response (result object, or error with code and message). */
export function responseId(m: unknown): RpcId | undefined {
  if (!isObject(m) || m.jsonrpc !== '2.0' || !isId(m.id)) return undefined;
  if ('result' in m) return isObject(m.result) && !('error' in m) ? m.id : undefined;
  if (isObject(m.error) && typeof m.error.code === 'number' && typeof m.error.message === 'string') return m.id;
  return undefined;
}

/**
 * Reads a whole body, failing as soon as it passes `maxBytes` (the upstream is cancelled).
 * Upstream errors go through `mapError`.
 */
export async function readBounded(
  body: ReadableStream<Uint8Array> | null,
  host: string,
  maxBytes: number,
  mapError: (err: unknown) => Error,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch (err) {
      throw mapError(err);
    }
    if (r.done) break;
    total += r.value.byteLength;
    if (total > maxBytes) {
      reader.cancel().catch(() => undefined);
      throw new ReplyTooLargeError(host, maxBytes);
    }
    chunks.push(r.value);
  }
  return Buffer.concat(chunks, total);
}

/** One decoder for every JSON reply (a whole-body decode keeps no state; making one per reply cost each call). */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Checks a JSON reply to a POST carrying requests: valid JSON, and a response for every request id.
 * @throws InvalidReplyError
 */
export function checkJsonReply(bytes: Uint8Array, host: string, ids: readonly RpcId[]): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(STRICT_UTF8.decode(bytes));
  } catch {
    throw new InvalidReplyError(host, 'body is not JSON');
  }
  const answered = new Set<string>();
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    const id = responseId(m);
    if (id !== undefined) answered.add(idKey(id));
  }
  const missing = ids.filter((id) => !answered.has(idKey(id)));
  if (missing.length > 0)
    throw new InvalidReplyError(host, `no JSON-RPC response for id ${missing.map((i) => JSON.stringify(i)).join(', ')}`);
}

/** How a guarded stream ended: answered (complete), or not with the error that ended it. */
export type StreamEnd = { readonly answered: true } | { readonly answered: false; readonly error: Error };

interface StreamGuardOptions {
  readonly host: string;
  readonly maxBytes: number;
  /** Maps an upstream read error (abort, reset) to the error to raise. */
  readonly mapError: (err: unknown) => Error;
  /** Called once, when the stream is finished one way or another. */
  readonly onEnd: (end: StreamEnd) => void;
}

/** Passes bytes through, erroring with ReplyTooLargeError as soon as more than `maxBytes` passed. */
export function boundedStream(upstream: ReadableStream<Uint8Array>, options: StreamGuardOptions): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  let total = 0;
  let ended = false;
  const end = (e: StreamEnd) => {
    if (!ended) {
      ended = true;
      options.onEnd(e);
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctl) {
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (err) {
          const e = options.mapError(err);
          end({ answered: false, error: e });
          return ctl.error(e);
        }
        if (r.done) {
          end({ answered: true });
          return ctl.close();
        }
        total += r.value.byteLength;
        if (total > options.maxBytes) {
          const e = new ReplyTooLargeError(options.host, options.maxBytes);
          reader.cancel(e).catch(() => undefined);
          end({ answered: false, error: e });
          return ctl.error(e);
        }
        ctl.enqueue(r.value);
      },
      cancel(reason) {
        end({ answered: false, error: reason instanceof Error ? reason : new Error('reply stream cancelled by the reader') });
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Guards the SSE reply to a POST carrying the requests `ids`:
 * - only complete events are forwarded (a cut-off event is never handed on);
 * - once every id has its response, the stream is closed and the upstream cancelled (unless it ends within the
 *   turn of the event loop, see letGo);
 * - past `maxBytes`, on an upstream error, or when the stream ends with ids still pending, the stream
 *   first delivers one synthetic JSON-RPC error response per pending id (code {@link GATE_RPC_ERROR_CODE},
 *   so an SDK client fails the call at once instead of waiting for its timeout) and then errors with
 *   the typed error (ReplyTooLargeError, StreamEndedEarlyError, or the mapped upstream error).
 */
export function guardSseReply(
  upstream: ReadableStream<Uint8Array>,
  ids: readonly RpcId[],
  options: StreamGuardOptions,
): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  const pending = new Map(ids.map((id) => [idKey(id), id] as const));
  const scanner = new SseScanner();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let total = 0;
  let ended = false;
  let raiseNext: Error | undefined;

  const end = (e: StreamEnd) => {
    if (!ended) {
      ended = true;
      options.onEnd(e);
    }
  };
  const fail = (ctl: ReadableStreamDefaultController<Uint8Array>, error: Error) => {
    reader.cancel(error).catch(() => undefined);
    end({ answered: false, error });
    if (pending.size === 0) return ctl.error(error);
    const code = (error as { code?: unknown }).code;
    const events = [...pending.values()].map((id) => {
      const msg = {
        jsonrpc: '2.0',
        id,
        error: { code: GATE_RPC_ERROR_CODE, message: error.message, data: { mcpGate: typeof code === 'string' ? code : 'NO_ANSWER' } },
      };
      return `event: message\ndata: ${JSON.stringify(msg)}\n\n`;
    });
    // A blank line first ends any event the reader may hold; the typed error follows on the next pull,
    // so the synthetic responses get through the reader's pipes before the stream errors.
    ctl.enqueue(encoder.encode('\n' + events.join('')));
    raiseNext = error;
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(ctl) {
        if (raiseNext) {
          await nextMacrotask();
          return ctl.error(raiseNext);
        }
        for (;;) {
          let r: ReadableStreamReadResult<Uint8Array>;
          try {
            r = await reader.read();
          } catch (err) {
            return fail(ctl, options.mapError(err));
          }
          if (r.done) {
            if (pending.size > 0) return fail(ctl, new StreamEndedEarlyError(options.host, [...pending.values()]));
            end({ answered: true });
            return ctl.close();
          }
          total += r.value.byteLength;
          if (total > options.maxBytes) return fail(ctl, new ReplyTooLargeError(options.host, options.maxBytes));
          const { forward, events } = scanner.push(decoder.decode(r.value, { stream: true }));
          for (const ev of events) {
            if (ev.type !== '' && ev.type !== 'message') continue;
            let m: unknown;
            try {
              m = JSON.parse(ev.data);
            } catch {
              continue;
            }
            const id = responseId(m);
            if (id !== undefined) pending.delete(idKey(id));
          }
          if (forward.length > 0) ctl.enqueue(encoder.encode(forward));
          if (pending.size === 0) {
            // Every request has its response: nothing more is needed from this stream.
            end({ answered: true });
            await letGo(reader);
            return ctl.close();
          }
          if (forward.length > 0) return;
        }
      },
      cancel(reason) {
        end({ answered: false, error: reason instanceof Error ? reason : new Error('reply stream cancelled by the reader') });
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

const NOT_YET: unique symbol = Symbol('not yet');

/**
 * Stops reading an upstream whose reader needs nothing more: cancelled, unless it ends by the next turn of the event
 * loop (the usual case: a server ends the reply with its response, and undici hands the end on within the turn its
 * bytes arrived), when there is nothing to cancel — undici's cancel would make an abort error and tear the finished
 * fetch down for nothing. Whatever it still sends is not forwarded.
 */
async function letGo(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let r: ReadableStreamReadResult<Uint8Array> | typeof NOT_YET;
  try {
    r = await Promise.race([reader.read(), nextMacrotask(NOT_YET)]);
  } catch {
    return; // the upstream failed after the answer: nothing left to stop
  }
  if (r === NOT_YET || !r.done) reader.cancel().catch(() => undefined);
}

/**
 * Guards a GET listening stream: it may stay open as long as the session, so no total bound; instead only
 * complete events are forwarded and an event (the bytes since the last complete one) over `maxBytes` errors the
 * stream (ReplyTooLargeError; the SDK, allowed no reconnection, then gives the stream up).
 */
export function guardListeningStream(upstream: ReadableStream<Uint8Array>, options: StreamGuardOptions): ReadableStream<Uint8Array> {
  const reader = upstream.getReader();
  const scanner = new SseScanner();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let open = 0; // bytes read since the last complete event
  let ended = false;
  const end = (e: StreamEnd) => {
    if (!ended) {
      ended = true;
      options.onEnd(e);
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctl) {
        for (;;) {
          let r: ReadableStreamReadResult<Uint8Array>;
          try {
            r = await reader.read();
          } catch (err) {
            const e = options.mapError(err);
            end({ answered: false, error: e });
            return ctl.error(e);
          }
          if (r.done) {
            end({ answered: true });
            return ctl.close();
          }
          open += r.value.byteLength;
          const { forward } = scanner.push(decoder.decode(r.value, { stream: true }));
          if (forward.length > 0) {
            open = Buffer.byteLength(scanner.pending);
            ctl.enqueue(encoder.encode(forward));
          }
          if (open > options.maxBytes) {
            const e = new ReplyTooLargeError(options.host, options.maxBytes);
            reader.cancel(e).catch(() => undefined);
            end({ answered: false, error: e });
            return ctl.error(e);
          }
          if (forward.length > 0) return;
        }
      },
      cancel(reason) {
        end({ answered: false, error: reason instanceof Error ? reason : new Error('listening stream cancelled by the reader') });
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** One dispatched SSE event. */
export interface SseEvent {
  readonly type: string;
  readonly data: string;
}

/**
 * Incremental SSE parser (WHATWG event-stream rules: CRLF/LF/CR line ends, `field: value`, comments,
 * dispatch on a blank line). `push` returns the raw text of the events completed by this chunk, so a
 * caller can forward complete events only, and the events with data.
 */
export class SseScanner {
  private buf = '';
  private raw = '';
  private data: string[] = [];
  private type = '';

  /** The text of the event not yet complete (read, not forwarded). */
  get pending(): string {
    return this.raw + this.buf;
  }

  push(text: string): { forward: string; events: SseEvent[] } {
    this.buf += text;
    const events: SseEvent[] = [];
    let forward = '';
    let i = 0;
    const lineEnd = /\r\n|\n|\r/g;
    for (;;) {
      lineEnd.lastIndex = i;
      const m = lineEnd.exec(this.buf);
      if (!m) break;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (m[0] === '\r' && m.index === this.buf.length - 1) break;
      const line = this.buf.slice(i, m.index);
      const next = m.index + m[0].length;
      this.raw += this.buf.slice(i, next);
      i = next;
      if (line === '') {
        if (this.data.length > 0) events.push({ type: this.type, data: this.data.join('\n') });
        forward += this.raw;
        this.raw = '';
        this.data = [];
        this.type = '';
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.type = value;
    }
    this.buf = this.buf.slice(i);
    return { forward, events };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is RpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}
