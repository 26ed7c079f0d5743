// The gateway VS Code chat reaches gated servers through: a local endpoint inside the extension host — a Unix
// socket in a folder made fresh for each run (mode 0700, its owner checked; a named pipe of a random name on
// Windows) — that the relay a gated server's stdio definition starts (./relay.ts) connects to. No TCP port is
// open, so no web page, DNS rebinding or other local user reaches it; each connection must also open with a
// greeting that carries the per-run token (compared in constant time) before anything else of it is read. A
// connection is one MCP session: newline-delimited JSON-RPC, each line at most MAX_GATEWAY_BODY_BYTES, at most
// MAX_LOCAL_IN_FLIGHT requests at once. The gateway answers its five methods (initialize, ping, tools/list,
// tools/call, notifications) itself; the SDK's server costs most of a call. It lists only the tools the policy
// does not deny, and every call goes through the server's session, which checks `mcp.<server>.tool.<name>` at call
// time and logs the exchange. (Chosen by measurement over an HTTP endpoint on 127.0.0.1: bench group `gateway`,
// bench/http-gateway.ts.)
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ProtocolErrorCode as ErrorCode, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';
import { callAnswer, listedTools, serverInfoName, type FrontTarget } from './front';
import { isRpcKind, rpcKind } from '../jsonrpc';
import type { EventLog } from '../log/log';
import type { SessionTool } from '../session';

export const MAX_GATEWAY_BODY_BYTES = 1024 * 1024;
/** Relay connections at once (each is one MCP session of one started server). */
export const MAX_GATEWAY_CONNECTIONS = 128;
/** Requests of one connection answered at once; more are refused until one ends. */
export const MAX_LOCAL_IN_FLIGHT = 64;
/** How long a new connection may take to send its greeting. */
export const GREETING_MS = 10_000;
/** The relay the stdio definitions start (dist/relay.js beside the bundle; out/src/host/relay.js beside this file). */
export const RELAY_SCRIPT = path.join(__dirname, 'relay.js');

/** What the gateway needs from one upstream server (its tools frozen at start): see ./front.ts. */
export type GatewayTarget = Omit<FrontTarget, 'tools'> & { tools(): SessionTool[] };

export interface GatewayOptions {
  /** Opens (or returns the open) target for a server key, or a refusal saying why. Asked at every message. */
  target(key: string): Promise<GatewayTarget | { refused: string }>;
  log: EventLog;
  greetingMs?: number;
}

/** The bearer token compared in constant time. */
export function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type RequestId = string | number;
export type Message = Record<string, unknown>;

/** The messages of one line (or POST body), or why it is not JSON-RPC. */
export function messagesOf(body: unknown): { messages: Message[]; requests: RequestId[]; initialize: boolean; batch: boolean } | string {
  const batch = Array.isArray(body);
  const list = batch ? (body as unknown[]) : [body];
  if (!list.length) return 'an empty batch';
  const requests: RequestId[] = [];
  let initialize = false;
  for (const m of list) {
    const kind = rpcKind(m, false);
    if (!isRpcKind(kind)) return kind;
    if (kind === 'request') {
      const msg = m as Message;
      if (requests.includes(msg.id as RequestId)) return 'two requests with the same id';
      requests.push(msg.id as RequestId);
      if (msg.method === 'initialize') initialize = true;
    }
  }
  if (initialize && list.length > 1) return 'initialize must be sent alone';
  return { messages: list as Message[], requests, initialize, batch };
}

/** The reply to one message (undefined for a notification or a response, which need none). */
export async function answerMessage(target: GatewayTarget, m: Message): Promise<Message | undefined> {
  if (typeof m.method !== 'string' || !('id' in m)) return undefined;
  const id = m.id as RequestId;
  const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
  const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
  const params = (m.params ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return fail(ErrorCode.InvalidParams, 'params must be an object');
  switch (m.method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      const protocolVersion = typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
      return ok({
        protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: serverInfoName(target.serverName), version: '0.1.0' },
        ...(target.instructions !== undefined ? { instructions: target.instructions } : {}),
      });
    }
    case 'ping':
      return ok({});
    case 'tools/list':
      return ok({
        tools: listedTools(target.tools(), target),
      });
    case 'tools/call': {
      const args = params.arguments ?? {};
      if (typeof params.name !== 'string') return fail(ErrorCode.InvalidParams, 'tools/call needs a tool name');
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        return fail(ErrorCode.InvalidParams, 'tools/call arguments must be an object');
      return ok(callAnswer(await target.call(params.name, args as Record<string, unknown>)));
    }
    default:
      return fail(ErrorCode.MethodNotFound, `MCP Gate's gateway offers tools only; ${m.method.slice(0, 80)} is not one of its methods`);
  }
}

/** One relay connection's MCP session. */
interface LocalSession {
  key: string;
  /** Request ids being answered now (a second request with one of them is refused). */
  busy: Set<RequestId>;
}

export class Gateway {
  readonly token = randomBytes(24).toString('base64url');
  private server?: net.Server;
  private dir?: string;
  private where = '';
  private readonly connections = new Set<net.Socket>();

  constructor(private readonly o: GatewayOptions) {}

  /** Opens the local endpoint (once) and returns where it is. */
  async start(): Promise<string> {
    if (this.where) return this.where;
    let where: string;
    if (process.platform === 'win32') where = `\\\\.\\pipe\\mcp-gate-${randomBytes(16).toString('hex')}`;
    else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-gw-'));
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid()) || (st.mode & 0o077) !== 0) {
        throw new Error(`MCP Gate: the gateway's folder ${dir} is not a private folder of this user; the chat gateway is not started`);
      }
      this.dir = dir;
      where = path.join(dir, 'gateway.sock');
    }
    const server = net.createServer((c) => this.connection(c));
    server.maxConnections = MAX_GATEWAY_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(where, () => resolve());
    });
    this.server = server;
    this.where = where;
    return where;
  }

  /**
   * How VS Code starts the relay for a server key (what the provided, cached definition holds: nothing secret); where
   * the endpoint is and the token (`relayEnv`) are added only at a start. VS Code's desktop host is Electron: its
   * binary runs the relay as Node only with ELECTRON_RUN_AS_NODE, also a cached definition started unresolved.
   */
  relayCommand(key: string): { command: string; args: string[]; env: Record<string, string> } {
    return { command: process.execPath, args: [RELAY_SCRIPT, key], env: { ELECTRON_RUN_AS_NODE: '1' } };
  }

  /** Where the relay connects and the token it greets with. */
  relayEnv(): Record<string, string> {
    if (!this.where) throw new Error('MCP Gate: the gateway is not started');
    return { ELECTRON_RUN_AS_NODE: '1', MCP_GATE_GATEWAY: this.where, MCP_GATE_GATEWAY_TOKEN: this.token };
  }

  /** How many relay connections the gateway holds now. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** One relay connection: authenticated by its first line, then one MCP session until it closes. */
  private connection(c: net.Socket): void {
    this.connections.add(c);
    c.setNoDelay(true);
    let buffered: Buffer[] = [];
    let size = 0;
    let s: LocalSession | undefined;
    let closing = false;
    const send = (m: unknown) => {
      if (!c.destroyed && c.writable) c.write(`${JSON.stringify(m)}\n`);
    };
    const close = (why: string, key?: string) => {
      if (closing) return;
      closing = true;
      this.log(why, key);
      send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: `MCP Gate: ${why}` } });
      c.end();
      setTimeout(() => c.destroy(), 1000).unref();
    };
    const greeting = setTimeout(() => close('the relay sent no greeting in time'), this.o.greetingMs ?? GREETING_MS);
    greeting.unref();
    const line = (text: string) => {
      if (!s) {
        clearTimeout(greeting);
        let h: { mcpGate?: unknown; key?: unknown; token?: unknown } | null;
        try {
          h = JSON.parse(text) as typeof h;
        } catch {
          return close("the relay's greeting is not JSON");
        }
        if (h === null || typeof h !== 'object' || h.mcpGate !== 1 || typeof h.key !== 'string' || typeof h.token !== 'string')
          return close("the relay's greeting is malformed");
        if (!sameToken(h.token, this.token)) return close('missing or wrong gateway token');
        s = { key: h.key, busy: new Set() };
        return;
      }
      const session = s;
      this.message(session, text, send).catch((e) => {
        this.log(`a request failed: ${e instanceof Error ? e.message : String(e)}`, session.key);
        send({
          jsonrpc: '2.0',
          id: null,
          error: { code: ErrorCode.InternalError, message: 'MCP Gate: the gateway failed on this message' },
        });
      });
    };
    c.on('data', (chunk: Buffer) => {
      if (closing) return;
      let start = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, i);
        const text = buffered.length ? Buffer.concat([...buffered, piece]).toString('utf8') : piece.toString('utf8');
        buffered = [];
        size = 0;
        start = i + 1;
        if (text.trim()) line(text);
        if (closing || c.destroyed) return;
      }
      if (start < chunk.length) {
        size += chunk.length - start;
        if (size > MAX_GATEWAY_BODY_BYTES) return close('a message over 1 MiB', s?.key);
        buffered.push(chunk.subarray(start));
      }
    });
    c.on('error', () => c.destroy());
    c.on('close', () => {
      clearTimeout(greeting);
      this.connections.delete(c);
    });
  }

  private log(why: string, key?: string): void {
    try {
      this.o.log.write({ kind: 'gate.refuse', server: key, detail: `gateway: ${why}` });
    } catch {
      // the log's failure is its own
    }
  }

  /** One line of a session: its messages answered (concurrently, a batch as one line), the replies as a line. */
  private async message(s: LocalSession, text: string, send: (m: unknown) => void): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.ParseError, message: 'MCP Gate: the message is not JSON' } });
    }
    const parsed = messagesOf(body);
    if (typeof parsed === 'string')
      return send({
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.InvalidRequest, message: `MCP Gate: the message holds ${parsed}` },
      });
    const fail = (why: string) => {
      const errors = parsed.requests.map((id) => ({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode.InvalidRequest, message: `MCP Gate: ${why}` },
      }));
      if (errors.length) send(parsed.batch ? errors : errors[0]);
    };
    if (parsed.requests.some((id) => s.busy.has(id))) return fail('a request id that is still being answered');
    if (s.busy.size + parsed.requests.length > MAX_LOCAL_IN_FLIGHT) return fail(`more than ${MAX_LOCAL_IN_FLIGHT} requests at once`);
    for (const id of parsed.requests) s.busy.add(id);
    let replies: (Message | undefined)[];
    try {
      const target = await this.o.target(s.key);
      if ('refused' in target) {
        this.log(target.refused, s.key);
        return fail(target.refused);
      }
      replies = await Promise.all(parsed.messages.map((m) => answerMessage(target, m)));
    } finally {
      for (const id of parsed.requests) s.busy.delete(id);
    }
    const answered = replies.filter((r): r is Message => r !== undefined);
    if (answered.length) send(parsed.batch ? answered : answered[0]);
    // The calls' log lines, taken when they ran, go to the file now that the reply is on its way (session/call.ts).
    this.o.log.flush();
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const c of this.connections) c.destroy();
    if (server) await new Promise((r) => server.close(r));
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.where = '';
  }
}
