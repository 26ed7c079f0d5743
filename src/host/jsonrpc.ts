// The JSON-RPC 2.0 envelope of an MCP message, checked by hand, and the newline-delimited reader of a server's
// stdout. The SDK's reader checks each line with a zod union of the four message kinds, which costs a response
// about 35 µs (measured: it tries the request and notification shapes first and builds their errors) — on the
// chat path, for every answer of every call. The check here is the same as that union's (the same keys, each kind
// strict, ids a string or a whole number, params and result objects, an error's code whole and its message text);
// test/unit/host/jsonrpc.test.ts holds the two equal on generated messages.
// what is inside params, a result or an error is checked by the SDK's schema of each method, as before.
import type { JSONRPCMessage } from '@modelcontextprotocol/client';

export type RpcKind = 'request' | 'notification' | 'response' | 'error';
const KINDS: ReadonlySet<string> = new Set<RpcKind>(['request', 'notification', 'response', 'error']);

/** Whether {@link rpcKind} found a message (not a reason why not). */
export const isRpcKind = (k: string): k is RpcKind => KINDS.has(k);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// Whole numbers as the SDK takes them (zod's int(): safe integers only).
const isRequestId = (v: unknown): v is string | number => typeof v === 'string' || Number.isSafeInteger(v);
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** A request's or notification's params: an object whose `_meta`, if any, is an object with a valid progress token. */
function paramsOk(p: unknown): boolean {
  if (!isObject(p)) return false;
  const meta = p._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken)) return false;
  const task = meta[RELATED_TASK];
  return task === undefined || (isObject(task) && typeof task.taskId === 'string');
}

/** Keys each kind may have (the SDK's schemas are strict: any other key refuses the message). */
const KEYS: Record<RpcKind, ReadonlySet<string>> = {
  request: new Set(['jsonrpc', 'id', 'method', 'params']),
  notification: new Set(['jsonrpc', 'method', 'params']),
  response: new Set(['jsonrpc', 'id', 'result']),
  error: new Set(['jsonrpc', 'id', 'error']),
};

/**
 * The kind of one JSON-RPC 2.0 message, or why it is not one. `strict` refuses keys the kind does not have, as the
 * SDK does for what a server sends; the gateway reads what VS Code sends without it.
 */
export function rpcKind(m: unknown, strict: boolean): RpcKind | string {
  if (!isObject(m) || m.jsonrpc !== '2.0') return 'a message that is not JSON-RPC 2.0';
  let kind: RpcKind;
  if ('method' in m) {
    if (typeof m.method !== 'string') return 'a method that is not a string';
    if (m.params !== undefined && !paramsOk(m.params)) return 'params that are not an object (or a _meta that is not one)';
    if ('id' in m) {
      if (!isRequestId(m.id)) return 'a request id that is not a string or a whole number';
      kind = 'request';
    } else kind = 'notification';
  } else if ('result' in m) {
    if (!isRequestId(m.id)) return 'a response id that is not a string or a whole number';
    if (!isObject(m.result) || (m.result._meta !== undefined && !isObject(m.result._meta))) return 'a result that is not an object';
    kind = 'response';
  } else if ('error' in m) {
    if (m.id !== undefined && !isRequestId(m.id)) return 'a response id that is not a string or a whole number';
    const e = m.error;
    if (!isObject(e) || !Number.isSafeInteger(e.code) || typeof e.message !== 'string')
      return 'an error without a whole-number code and a message';
    kind = 'error';
  } else return 'a message that is neither a request, a notification nor a response';
  if (strict) {
    const allowed = KEYS[kind];
    for (const k of Object.keys(m))
      if (!allowed.has(k)) return `a ${kind} with a key JSON-RPC does not have (${JSON.stringify(k.slice(0, 40))})`;
  }
  return kind;
}

/** A line of a server's stdout that is JSON but not a JSON-RPC message: the connection ends. */
export class NotJsonRpc extends Error {}

/**
 * Newline-delimited messages of a stream, at most `maxBytes` buffered. Like the SDK's reader, a line that is not
 * JSON is skipped (servers that print to stdout); a JSON line that is no message throws {@link NotJsonRpc}.
 */
export class LineReader {
  private buffer: Buffer | undefined;

  constructor(private readonly maxBytes: number) {}

  append(chunk: Buffer): void {
    if ((this.buffer?.length ?? 0) + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`a message over ${this.maxBytes} bytes`);
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
  }

  /** The next whole message, or null until more comes. */
  next(): JSONRPCMessage | null {
    while (this.buffer) {
      const end = this.buffer.indexOf(10);
      if (end === -1) return null;
      const stop = end > 0 && this.buffer[end - 1] === 13 ? end - 1 : end;
      const line = this.buffer.toString('utf8', 0, stop);
      this.buffer = end + 1 < this.buffer.length ? this.buffer.subarray(end + 1) : undefined;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      const kind = rpcKind(value, true);
      if (!isRpcKind(kind)) throw new NotJsonRpc(`the server sent ${kind}`);
      return value as JSONRPCMessage;
    }
    return null;
  }

  clear(): void {
    this.buffer = undefined;
  }
}
