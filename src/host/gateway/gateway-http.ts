// The gateway's HTTP door, for where VS Code must match MCP Gate's servers by URL: a streamable-HTTP endpoint on
// 127.0.0.1, one path per server, that VS Code reaches through HTTP definitions. The provider offers these instead
// of the relay's stdio definitions only when `chat.mcp.allowedServers` is set (by policy or in the user's
// settings): VS Code matches an extension's stdio definition there by name alone, which a repository can copy, and
// an HTTP one by URL (`http://127.0.0.1:*/mcp/*`), which it cannot. Every request is authenticated before anything
// of it is parsed: it must name this endpoint in Host (DNS rebinding), come from no web origin but a loopback or
// VS Code one, and carry the bearer token of the server its path names (one per server and run, compared in constant
// time); only then is the path answered (a malformed one gets 400) and the body read. Headers, the whole request and an idle connection are bounded in
// time; any failure of a handler answers or closes the socket. A client's MCP session (initialize, then calls under
// its Mcp-Session-Id) is kept (at most MAX_GATEWAY_SESSIONS; the least recently used ends first). The messages are
// answered by the same code as the local endpoint's (./gateway.ts answerMessage), as JSON replies, no GET stream.
import { randomBytes, randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';
import { answerMessage, MAX_GATEWAY_BODY_BYTES, messagesOf, sameToken, type GatewayTarget, type Message, type RequestId } from './gateway';
import type { EventLog } from '../log/log';

export const MAX_GATEWAY_SESSIONS = 32;

/** Time bounds of one request: its headers, the whole request (headers and body), an idle keep-alive connection. */
export interface GatewayTimeouts {
  headersMs: number;
  requestMs: number;
  idleMs: number;
}
export const GATEWAY_TIMEOUTS: GatewayTimeouts = { headersMs: 10_000, requestMs: 30_000, idleMs: 5_000 };

export interface HttpGatewayOptions {
  target(key: string): Promise<GatewayTarget | { refused: string }>;
  log: EventLog;
  timeouts?: Partial<GatewayTimeouts>;
}

/** Origins a legitimate caller can have: none (Node), VS Code's own, or a loopback page (a local workbench). */
export function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  if (/^vscode-(file|webview):\/\//.test(origin)) return true;
  try {
    const u = new URL(origin);
    return (
      (u.protocol === 'http:' || u.protocol === 'https:') &&
      (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]')
    );
  } catch {
    return false;
  }
}

/** The server key of a request path `/mcp/<key>` (a query is ignored), or why it is not one. */
export function keyOfPath(rawUrl: string | undefined): { key: string } | { status: 400 | 404; why: string } {
  const raw = rawUrl ?? '';
  const q = raw.indexOf('?');
  const p = q >= 0 ? raw.slice(0, q) : raw;
  const m = /^\/mcp\/([^/]+)$/.exec(p);
  if (!m) return { status: 404, why: 'no such server' };
  try {
    return { key: decodeURIComponent(m[1]) };
  } catch {
    return { status: 400, why: 'the request path is malformed' };
  }
}

interface McpSession {
  id: string;
  key: string;
  /** The target as of the latest request (asked again at every request). */
  target: GatewayTarget;
  /** Request ids being answered now (a second request with one of them is refused). */
  busy: Set<RequestId>;
}

class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class HttpGateway {
  /** One bearer token per server key: a definition for one server cannot call another's tools (issue 48 item 5). */
  private readonly tokens = new Map<string, string>();
  private server?: http.Server;
  private port = 0;
  private readonly sessions = new Map<string, McpSession>();
  private readonly timeouts: GatewayTimeouts;

  constructor(private readonly o: HttpGatewayOptions) {
    this.timeouts = { ...GATEWAY_TIMEOUTS, ...o.timeouts };
  }

  /** The bearer token of a server key, made on first use. */
  tokenFor(key: string): string {
    let token = this.tokens.get(key);
    if (!token) this.tokens.set(key, (token = randomBytes(24).toString('base64url')));
    return token;
  }

  /** The request carries the key's token; for no key (a malformed path), any token this door gave out. */
  private tokenMatches(auth: string, key: string | undefined): boolean {
    if (!auth.startsWith('Bearer ')) return false;
    const given = auth.slice(7);
    if (key !== undefined) {
      const want = this.tokens.get(key);
      return want !== undefined && sameToken(given, want);
    }
    let any = false;
    for (const t of this.tokens.values()) any = sameToken(given, t) || any;
    return any;
  }

  async start(): Promise<void> {
    const t = this.timeouts;
    this.server = http.createServer(
      {
        headersTimeout: t.headersMs,
        requestTimeout: t.requestMs,
        keepAliveTimeout: t.idleMs,
        connectionsCheckingInterval: Math.max(50, Math.min(1000, t.headersMs / 4)),
        maxHeaderSize: 16 * 1024,
      },
      (req, res) => {
        this.handle(req, res).catch((e) => this.failed(res, e));
      },
    );
    // A connection that never sends a request, or stalls mid-body, is closed when the bounds above pass; a
    // malformed request gets 400 from Node's parser.
    this.server.on('clientError', (_e, socket: Socket) => {
      if (socket.writable && !socket.destroyed) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      else socket.destroy();
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The endpoint of one server; the key is opaque (no secret in it: VS Code caches provided definitions). */
  urlFor(key: string): string {
    return `http://127.0.0.1:${this.port}/mcp/${encodeURIComponent(key)}`;
  }

  /** How many MCP sessions the gateway holds now. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** A handler failed: answer if nothing was sent yet, else close the socket. Never an unhandled rejection. */
  private failed(res: http.ServerResponse, e: unknown): void {
    try {
      if (!res.headersSent && !res.destroyed)
        res.writeHead(500, { 'content-type': 'text/plain', connection: 'close' }).end('MCP Gate: the gateway failed on this request');
      else res.destroy();
    } catch {
      res.socket?.destroy();
    }
    try {
      this.o.log.write({ kind: 'gate.refuse', detail: `gateway: a request failed: ${e instanceof Error ? e.message : String(e)}` });
    } catch {
      // the log's failure is its own
    }
  }

  private refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, why: string, key?: string): void {
    this.o.log.write({ kind: 'gate.refuse', server: key, detail: `gateway: ${why}` });
    // An unread body stays unread: the connection closes after the answer.
    const close = !req.complete;
    res.writeHead(status, { 'content-type': 'text/plain', ...(close ? { connection: 'close' } : {}) }).end(why);
    if (close) req.resume();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // 1. Who is asking: nothing of the request is parsed before these three pass.
    const host = req.headers.host;
    if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`)
      return this.refuse(req, res, 403, `Host ${JSON.stringify(host)} is not this endpoint`);
    const origin = req.headers.origin;
    if (!originAllowed(origin)) return this.refuse(req, res, 403, `Origin ${JSON.stringify(origin)} may not call the gateway`);
    // The path names the server whose token the request must carry: read for that alone (a malformed one must
    // carry some token this door gave out), answered only after the token matched.
    const path = keyOfPath(req.url);
    if (!this.tokenMatches(req.headers.authorization ?? '', 'key' in path ? path.key : undefined))
      return this.refuse(req, res, 401, 'missing or wrong gateway token');

    // 2. What is asked.
    if (!('key' in path)) return this.refuse(req, res, path.status, path.why);
    const key = path.key;
    if (req.method !== 'POST' && req.method !== 'DELETE') {
      res.writeHead(405, { allow: 'POST, DELETE' }).end();
      req.resume();
      return;
    }
    const header = req.headers['mcp-session-id'];
    const sessionId = typeof header === 'string' ? header : undefined;
    const version = req.headers['mcp-protocol-version'];
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
      return this.refuse(req, res, 400, `unsupported MCP-Protocol-Version ${JSON.stringify(version)}`, key);
    }
    if (req.method === 'DELETE') {
      req.resume();
      const s = sessionId !== undefined ? this.sessions.get(sessionId) : undefined;
      if (!s || s.key !== key) return this.refuse(req, res, 404, 'no such MCP session', key);
      await this.endSession(s.id);
      res.writeHead(200).end();
      return;
    }
    const accept = String(req.headers.accept ?? '');
    if (!/application\/json|\*\/\*/.test(accept)) return this.refuse(req, res, 406, 'the client must accept application/json', key);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_GATEWAY_BODY_BYTES) return this.refuse(req, res, 413, 'request body over 1 MiB', key);
      chunks.push(c as Buffer);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return this.refuse(req, res, 400, 'the body is not JSON', key);
    }
    const parsed = messagesOf(body);
    if (typeof parsed === 'string') return this.refuse(req, res, 400, `the body holds ${parsed}`, key);
    const target = await this.o.target(key);
    if ('refused' in target) return this.refuse(req, res, 403, target.refused, key);

    let s: McpSession;
    try {
      s = await this.sessionFor(key, sessionId, parsed.initialize, target);
    } catch (e) {
      if (e instanceof Refused) return this.refuse(req, res, e.status, e.message, key);
      throw e;
    }
    s.target = target;
    if (parsed.requests.some((id) => s.busy.has(id))) return this.refuse(req, res, 409, 'a request id that is still being answered', key);
    for (const id of parsed.requests) s.busy.add(id);
    let replies: (Message | undefined)[];
    try {
      replies = await Promise.all(parsed.messages.map((m) => answerMessage(s.target, m)));
    } finally {
      for (const id of parsed.requests) s.busy.delete(id);
    }
    const answered = replies.filter((r): r is Message => r !== undefined);
    if (res.destroyed) return;
    if (!answered.length) {
      res.writeHead(202, { 'mcp-session-id': s.id }).end();
      return;
    }
    const text = JSON.stringify(parsed.batch ? answered : answered[0]);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'mcp-session-id': s.id }).end(text);
    // The calls' log lines, taken when they ran, go to the file now that the reply is on its way (session/call.ts).
    this.o.log.flush();
  }

  /** The MCP session a request belongs to: the one its Mcp-Session-Id names, or a new one for an initialize. */
  private async sessionFor(key: string, sessionId: string | undefined, initialize: boolean, target: GatewayTarget): Promise<McpSession> {
    if (initialize) {
      if (sessionId !== undefined) throw new Refused(400, 'initialize carries no Mcp-Session-Id');
      return this.newSession(key, target);
    }
    if (sessionId === undefined) throw new Refused(400, 'no Mcp-Session-Id: initialize first');
    const s = this.sessions.get(sessionId);
    if (!s || s.key !== key) throw new Refused(404, 'no such MCP session (initialize again)');
    // most recently used last: the oldest is the first to go when the bound is reached
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, s);
    return s;
  }

  private async newSession(key: string, target: GatewayTarget): Promise<McpSession> {
    const s: McpSession = { id: randomUUID(), key, target, busy: new Set() };
    this.sessions.set(s.id, s);
    while (this.sessions.size > MAX_GATEWAY_SESSIONS) {
      const [oldest] = this.sessions.keys();
      await this.endSession(oldest);
    }
    return s;
  }

  private async endSession(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  async close(): Promise<void> {
    for (const id of [...this.sessions.keys()]) await this.endSession(id);
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise((r) => this.server!.close(r));
  }
}
