// A client of MCP Gate's own chat gateway (./gateway.ts) that asks as VS Code chat does: the same endpoint, bearer
// token and methods over HTTP (initialize, notifications/initialized, tools/list, tools/call under the
// Mcp-Session-Id it was given), JSON replies. "MCP Gate: Try a Tool…" uses it, so the call a person tries takes the
// whole path a chat call takes: the gateway's checks, the listing under the policy, the session's call-time check
// and its log lines. It talks only to the gateway on 127.0.0.1; each exchange is bounded in time and size.
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/client';

/** A tool as the gateway lists it (what chat would be shown). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

export const GATEWAY_CLIENT_TIMEOUT_MS = 60_000;
const MAX_REPLY_BYTES = 16 * 1024 * 1024;

export class GatewayClient {
  private nextId = 1;

  private constructor(private readonly url: string, private readonly token: string, private readonly sessionId: string, private readonly timeoutMs: number) {}

  /** Opens an MCP session with the gateway endpoint `url` (initialize, then notifications/initialized). */
  static async connect(url: string, token: string, clientName: string, timeoutMs = GATEWAY_CLIENT_TIMEOUT_MS): Promise<GatewayClient> {
    const u = new URL(url);
    if (u.protocol !== 'http:' || u.hostname !== '127.0.0.1') throw new Error(`${url} is not MCP Gate's gateway on 127.0.0.1`);
    const first = await post(url, token, undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: clientName, version: '0.1.0' } } }, timeoutMs);
    if (!first.sessionId) throw new Error('the gateway gave no Mcp-Session-Id');
    resultOf(first.body);
    const c = new GatewayClient(url, token, first.sessionId, timeoutMs);
    await post(url, token, c.sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' }, timeoutMs);
    return c;
  }

  /** The tools the gateway lists: the ones the policy does not deny, as chat is shown them. */
  async listTools(): Promise<ListedTool[]> {
    const r = resultOf(await this.request('tools/list', {})) as { tools?: unknown };
    return Array.isArray(r.tools) ? (r.tools as ListedTool[]) : [];
  }

  /** One tool call, answered by the server or refused by MCP Gate (a refusal is a tool error, as chat shows it). */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return resultOf(await this.request('tools/call', { name, arguments: args })) as CallToolResult;
  }

  /** Ends the MCP session (a DELETE, as a client that closes does). */
  async close(): Promise<void> {
    await fetch(this.url, { method: 'DELETE', headers: { authorization: `Bearer ${this.token}`, 'mcp-session-id': this.sessionId }, signal: AbortSignal.timeout(this.timeoutMs) }).then((r) => r.body?.cancel(), () => undefined);
  }

  private async request(method: string, params: Record<string, unknown>): Promise<unknown> {
    return (await post(this.url, this.token, this.sessionId, { jsonrpc: '2.0', id: this.nextId++, method, params }, this.timeoutMs)).body;
  }
}

/** One POST; the reply's JSON body (undefined for 202) and session id. A refusal (non-2xx) throws with its text. */
async function post(url: string, token: string, sessionId: string | undefined, message: unknown, timeoutMs: number): Promise<{ body: unknown; sessionId?: string }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sessionId !== undefined ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION } : {}),
    },
    body: JSON.stringify(message),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await r.text();
  if (text.length > MAX_REPLY_BYTES) throw new Error(`the gateway's reply is over ${MAX_REPLY_BYTES} bytes`);
  if (!r.ok) throw new Error(`the gateway refused (${r.status}): ${text.slice(0, 500)}`);
  return { body: r.status === 202 || !text ? undefined : JSON.parse(text), sessionId: r.headers.get('mcp-session-id') ?? undefined };
}

function resultOf(body: unknown): unknown {
  const b = body as { result?: unknown; error?: { message?: unknown } } | undefined;
  if (b?.error) throw new Error(`the gateway answered with an error: ${String(b.error.message ?? 'unknown')}`);
  if (!b || typeof b.result !== 'object' || b.result === null) throw new Error('the gateway gave no result');
  return b.result;
}
