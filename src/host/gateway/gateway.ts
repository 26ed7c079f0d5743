// The gateway VS Code chat reaches gated servers through: a local endpoint inside the extension host — a Unix
// socket in a folder made fresh for each run (mode 0700, its owner checked, in $XDG_RUNTIME_DIR where that is this
// user's, and every folder above it checked as the relay checks it; a named pipe of a random name on Windows) — that
// the relay a gated server's stdio definition starts (./relay.ts) connects to. No TCP port is open, so no web page,
// DNS rebinding or other local user reaches it. Each server key has its own token, and each connection opens with
// the handshake of ./handshake.ts: the gateway proves it holds the key's token before the relay proves it in turn
// (the token never crosses the socket), and nothing else of it is read before. Connections are counted per client
// (per key: one token each), so one client holding many cannot keep out the others: at most
// MAX_CONNECTIONS_PER_CLIENT each, MAX_GATEWAY_CONNECTIONS in all, and of the connections still in their handshake
// the oldest is closed when MAX_PENDING_CONNECTIONS wait. A connection is one MCP session: newline-delimited
// JSON-RPC, each line at most MAX_GATEWAY_BODY_BYTES (however it arrives), at most MAX_LOCAL_IN_FLIGHT requests at
// once. The gateway answers its five methods (initialize, ping, tools/list, tools/call, notifications) itself; the
// SDK's server costs most of a call. It lists only the tools the policy does not deny, and every call goes through
// the server's session, which checks `mcp.<server>.tool.<name>` at call time and logs the exchange. (Chosen by
// measurement over an HTTP endpoint on 127.0.0.1: bench group `gateway`, bench/http-gateway.ts.)
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ProtocolErrorCode as ErrorCode, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/client';
import { callAnswer, listedTools, serverInfoName, type FrontTarget } from './front';
import {
  checkSocketFolder,
  HANDSHAKE_VERSION,
  isNonce,
  lineReader,
  MAX_HANDSHAKE_LINE_BYTES,
  nonce,
  proofOf,
  sameProof,
} from './handshake';
import { isRpcKind, rpcKind } from '../jsonrpc';
import type { EventLog } from '../log/log';
import type { SessionTool } from '../session';

export const MAX_GATEWAY_BODY_BYTES = 1024 * 1024;
/** Relay connections at once, past their handshake (each is one MCP session of one started server). */
export const MAX_GATEWAY_CONNECTIONS = 128;
/** Connections of one client (one server key, whose token it holds) at once. */
export const MAX_CONNECTIONS_PER_CLIENT = 16;
/** Connections still in their handshake at once; a new one closes the oldest. */
export const MAX_PENDING_CONNECTIONS = 32;
/** Requests of one connection answered at once; more are refused until one ends. */
export const MAX_LOCAL_IN_FLIGHT = 64;
/** How long a new connection may take to complete its handshake. */
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

/** A connection's handshake so far: the key it named, that key's token and both nonces. */
interface Shake {
  key: string;
  token: string;
  relayNonce: string;
  gatewayNonce: string;
}

/** Where the gateway's folder is made: $XDG_RUNTIME_DIR where it is this user's private folder, else the temporary folder. */
function baseFolder(): string {
  const run = process.env.XDG_RUNTIME_DIR;
  if (run && path.isAbsolute(run)) {
    const st = fs.lstatSync(run, { throwIfNoEntry: false });
    if (st?.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0) return run;
  }
  return os.tmpdir();
}

export class Gateway {
  /** Each server key's token, made when its relay is first given one (relayEnv). */
  private readonly tokens = new Map<string, string>();
  private server?: net.Server;
  private dir?: string;
  private where = '';
  private readonly connections = new Set<net.Socket>();
  /** The connections in their handshake, oldest first, each with how it is closed. */
  private readonly pending = new Map<net.Socket, (why: string) => void>();
  /** The connections past their handshake, per key. */
  private readonly open = new Map<string, number>();
  private opened = 0;

  constructor(private readonly o: GatewayOptions) {}

  /** Opens the local endpoint (once) and returns where it is. */
  async start(): Promise<string> {
    if (this.where) return this.where;
    let where: string;
    if (process.platform === 'win32') where = `\\\\.\\pipe\\mcp-gate-${randomBytes(16).toString('hex')}`;
    else {
      const dir = fs.mkdtempSync(path.join(baseFolder(), 'mcp-gate-gw-'));
      where = path.join(dir, 'gateway.sock');
      const check = checkSocketFolder(where);
      if (check !== 'ok') {
        fs.rmSync(dir, { recursive: true, force: true });
        const why = check === 'gone' ? 'it is gone' : check.unsafe;
        throw new Error(
          `MCP Gate: the gateway's folder ${dir} is not one only this user controls (${why}); the chat gateway is not started`,
        );
      }
      this.dir = dir;
    }
    const server = net.createServer((c) => this.connection(c));
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
   * the endpoint is and the key's token (`relayEnv`) are added only at a start. VS Code's desktop host is Electron:
   * its binary runs the relay as Node only with ELECTRON_RUN_AS_NODE, also a cached definition started unresolved.
   */
  relayCommand(key: string): { command: string; args: string[]; env: Record<string, string> } {
    return { command: process.execPath, args: [RELAY_SCRIPT, key], env: { ELECTRON_RUN_AS_NODE: '1' } };
  }

  /** The token of a server key (one per key: the relay of one server cannot reach another's tools). */
  tokenFor(key: string): string {
    let token = this.tokens.get(key);
    if (!token) this.tokens.set(key, (token = randomBytes(24).toString('base64url')));
    return token;
  }

  /** Where the relay of a server key connects and the token it proves it holds. */
  relayEnv(key: string): Record<string, string> {
    if (!this.where) throw new Error('MCP Gate: the gateway is not started');
    return { ELECTRON_RUN_AS_NODE: '1', MCP_GATE_GATEWAY: this.where, MCP_GATE_GATEWAY_TOKEN: this.tokenFor(key) };
  }

  /** How many relay connections the gateway holds now. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** One relay connection: its handshake (./handshake.ts), then one MCP session until it closes. */
  private connection(c: net.Socket): void {
    if (this.pending.size >= MAX_PENDING_CONNECTIONS)
      this.pending.values().next().value?.('too many connections in their handshake at once; the oldest is closed');
    this.connections.add(c);
    c.setNoDelay(true);
    let s: LocalSession | undefined;
    let shake: Shake | undefined;
    let closing = false;
    const send = (m: unknown) => {
      if (!c.destroyed && c.writable) c.write(`${JSON.stringify(m)}\n`);
    };
    const close = (why: string, key?: string) => {
      if (closing) return;
      closing = true;
      this.pending.delete(c);
      this.log(why, key);
      send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: `MCP Gate: ${why}` } });
      c.end();
      setTimeout(() => c.destroy(), 1000).unref();
    };
    this.pending.set(c, close);
    const timer = setTimeout(
      () => close(shake ? 'the relay did not complete its handshake in time' : 'the relay sent no greeting in time'),
      this.o.greetingMs ?? GREETING_MS,
    );
    timer.unref();
    const onLine = (line: Buffer): boolean => {
      if (closing || c.destroyed) return false;
      const text = line.toString('utf8');
      if (!text.trim()) return true;
      if (s) return this.session(s, text, send);
      const step = this.handshake(shake, text);
      if ('refused' in step) {
        close(step.refused, step.key);
        return false;
      }
      if ('hello' in step) {
        shake = step.hello;
        send(step.reply);
        return true;
      }
      clearTimeout(timer);
      this.pending.delete(c);
      s = { key: step.key, busy: new Set() };
      this.open.set(s.key, (this.open.get(s.key) ?? 0) + 1);
      this.opened++;
      send({ mcpGate: HANDSHAKE_VERSION, ok: true });
      return true;
    };
    const over = () => close(s ? 'a message over 1 MiB' : `a handshake line over ${MAX_HANDSHAKE_LINE_BYTES / 1024} KiB`, s?.key);
    c.on(
      'data',
      lineReader(() => (s ? MAX_GATEWAY_BODY_BYTES : MAX_HANDSHAKE_LINE_BYTES), onLine, over),
    );
    c.on('error', () => c.destroy());
    c.on('close', () => {
      clearTimeout(timer);
      this.connections.delete(c);
      this.pending.delete(c);
      if (s) {
        const left = (this.open.get(s.key) ?? 1) - 1;
        if (left) this.open.set(s.key, left);
        else this.open.delete(s.key);
        this.opened--;
      } else if (shake && !closing) this.log('a relay left in its handshake (the gateway did not hold the token it was given)');
    });
  }

  /**
   * One line of a connection's handshake: the gateway's hello and proof to send, then (the relay's proof verified
   * and a slot free) the session's key; or why it is refused (with the key once the relay proved it holds its token).
   */
  private handshake(
    shake: Shake | undefined,
    text: string,
  ): { hello: Shake; reply: Message } | { key: string } | { refused: string; key?: string } {
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return { refused: shake ? "the relay's proof is not JSON" : "the relay's greeting is not JSON" };
    }
    const h = (m !== null && typeof m === 'object' && !Array.isArray(m) ? m : {}) as {
      mcpGate?: unknown;
      key?: unknown;
      nonce?: unknown;
      proof?: unknown;
    };
    if (!shake) {
      const key = h.key;
      if (h.mcpGate !== HANDSHAKE_VERSION || typeof key !== 'string' || !isNonce(h.nonce))
        return { refused: "the relay's greeting is malformed" };
      const token = this.tokens.get(key);
      // said before either side proved anything: it tells a client only that this key has no token here
      if (!token) return { refused: 'no relay of this server was started by this window (start the server again from VS Code)' };
      const gatewayNonce = nonce();
      return {
        hello: { key, token, relayNonce: h.nonce, gatewayNonce },
        reply: { mcpGate: HANDSHAKE_VERSION, nonce: gatewayNonce, proof: proofOf(token, 'gateway', key, h.nonce, gatewayNonce) },
      };
    }
    if (!sameProof(h.proof, proofOf(shake.token, 'relay', shake.key, shake.relayNonce, shake.gatewayNonce)))
      return { refused: 'missing or wrong gateway token' };
    const mine = this.open.get(shake.key) ?? 0;
    if (mine >= MAX_CONNECTIONS_PER_CLIENT)
      return {
        refused: `too many connections from one client: ${mine} are open for this server (at most ${MAX_CONNECTIONS_PER_CLIENT}); close one first`,
        key: shake.key,
      };
    if (this.opened >= MAX_GATEWAY_CONNECTIONS)
      return {
        refused: `too many connections: ${this.opened} are open (at most ${MAX_GATEWAY_CONNECTIONS}); close one first`,
        key: shake.key,
      };
    return { key: shake.key };
  }

  /** One line of an open session, answered (./message below); a failure is an error answer. */
  private session(s: LocalSession, text: string, send: (m: unknown) => void): boolean {
    this.message(s, text, send).catch((e) => {
      this.log(`a request failed: ${e instanceof Error ? e.message : String(e)}`, s.key);
      send({
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.InternalError, message: 'MCP Gate: the gateway failed on this message' },
      });
    });
    return true;
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
    this.tokens.clear();
  }
}
