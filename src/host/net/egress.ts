// The network of a contained server (issue 26): it never shares the host's network namespace. Its sandbox has its
// own (bubblewrap's `--unshare-net`: a loopback and nothing else, no route anywhere), and one door in it — a TCP
// listener on the sandbox's own 127.0.0.1:3128 whose socket MCP Gate holds. Everything that goes out goes through
// that door to the filtering proxy here, which decides each connection by the user's rules and the address policy
// and connects itself, to the address it checked. There is no other way out: no route, no DNS, no shared loopback,
// no abstract socket of the host (those belong to a network namespace), so a server that ignores the proxy
// variables reaches nothing at all; one that uses them reaches what the rules allow. Node processes are carried
// through the door without them by MCP Gate's network shim (src/netshim/, put in the sandbox by ./net-shim.ts):
// built-in fetch, http/https and raw TCP, as CONNECT requests like any other client's. libc clients by proxychains4
// (./libc-carrier.ts); as root, every other TCP client by the transparent carrier (./transparent-carrier.ts), whose
// DNS answers are given here (answerName: a stand-in address for a name the rules allow) and whose stand-ins a
// CONNECT is decided by as the names they stand for (standInName).
//
// The door (measured 2026-12-03/04 on this machine, bubblewrap 0.8.0, 3 runs each; docs/sandbox.md):
//   - pasta (Debian's passt) and slirp4netns give a namespace user-mode networking, but neither can join a sandbox
//     made with `--disable-userns` ("Couldn't switch to pasta namespaces", "setns(CLONE_NEWNET): Operation not
//     permitted"), both route to every address they can (slirp4netns reaches the host's loopback as 10.0.2.2 by
//     default), and both are system packages a fresh machine lacks.
//   - chosen: util-linux's nsenter (always present; ./door.ts) enters the sandbox's user and network namespaces and runs a
//     few lines of Node there that listen on 127.0.0.1:3128 and pass the listening socket to MCP Gate over the IPC
//     channel, then exit. The listener lives in the sandbox's namespace; its accepted connections arrive here.
//     It costs a start about what Node's own start-up costs (bench/RESULTS.md, the sandbox rows "with a network door").
//   bubblewrap reports the sandbox's first process (`--info-fd`) and waits (`--block-fd`) until the door is open,
//   so the server never runs without it. The door needs the sandbox's user namespace to own its network namespace,
//   so a sandbox with a door has no `--disable-userns` (its second user namespace); the seccomp filter refuses new
//   user namespaces instead (../sandbox/seccomp.ts).
//
// What the proxy takes: `CONNECT host:port` (HTTPS and any TCP protocol a client tunnels) and absolute-form plain
// HTTP requests (`GET http://host/path`), each decided alone. For each: the rules (`decide`, src/policy's
// mayReachNetwork: a rule naming the host, or the bare `mcp.<server>.network` for public hosts), then the name
// resolved once and every answer checked (./resolve.ts): loopback, link-local, metadata and the other always-refused
// ranges are refused whatever a rule says, private ranges unless a rule names the host, and every address of this
// machine's own interfaces always. It connects to the checked address, so a name that answers differently the next
// time (DNS rebinding) changes nothing. Each connection is an event (`network.connect` or `network.blocked`, with
// the host and the rule that decided or would allow it). Bounded: a connect timeout, a bound on open connections,
// a bound on request headers.
// Its terms (the door's port and variables, bounds, shapes, this machine's own addresses) are ./egress-terms.ts.
import * as http from 'node:http';
import * as net from 'node:net';
import { classifyAddress } from './address';
import { AddressRefusedError, NameResolutionError } from '../errors';
import { resolveChecked } from './resolve';
import {
  authority,
  CONNECT_TIMEOUT_MS,
  isOwn,
  MAX_CONNECTIONS,
  MAX_STAND_INS,
  ownAddresses,
  STAND_IN_PREFIX,
  type EgressEvent,
  type EgressOptions,
  type EgressVerdict,
} from './egress-terms';

export {
  authority,
  CONNECT_TIMEOUT_MS,
  DOOR_PORT,
  MAX_CONNECTIONS,
  PROXY_ENV,
  STAND_IN_PREFIX,
  type EgressEvent,
  type EgressOptions,
  type EgressVerdict,
} from './egress-terms';

class Refused extends Error {
  constructor(
    message: string,
    readonly permit?: string,
    readonly status = 403,
  ) {
    super(message);
  }
}

/** Network events logged one by one per start; beyond them, one summary line a minute (a flood cannot rotate the log away). */
export const EVENTS_LOGGED = 500;
const SUMMARY_MS = 60_000;
/** Hosts whose first connection is logged by name even after EVENTS_LOGGED. */
const MAX_NAMED = 2000;
/** Requests one connection may send before their answers (pipelining). */
const MAX_PIPELINED = 8;
const PENDING = Symbol('pending requests');
/** A proxy connection must send its request head within this, and an idle keep-alive connection ends after IDLE_MS. */
const HEAD_MS = 10_000;
const IDLE_MS = 60_000;

/** The connection went to this machine after all (the kernel answered it locally): closed at once. */
const LOCAL_AFTER_CONNECT = 'the connection reached this machine (the kernel answered it locally), which a contained server never reaches';

/**
 * The filtering proxy of one server: serves the connections its doors accept (never a listener of its own on the
 * host). Close it when the server stops: every tunnel ends.
 */
export class Egress {
  private readonly http: http.Server;
  /** Connections the doors accepted. */
  private readonly sockets = new Set<net.Socket>();
  /** Connections MCP Gate opened to hosts (tunnels and forwarded requests), bounded on their own. */
  private readonly upstreams = new Set<net.Socket>();
  private readonly doors = new Set<net.Server>();
  /** What else ends with this proxy (the transparent carrier's DNS socket). */
  private readonly held = new Set<{ close(): void }>();
  private closed = false;
  private logged = 0;
  /** Hosts whose first connection of this start was logged by name (a connection to a new host always is). */
  private readonly named = new Set<string>();
  private unlogged = { connected: 0, blocked: 0, failed: 0, reached: new Set<string>(), refused: new Set<string>() };
  private summary?: NodeJS.Timeout;
  /** Names the sandbox's DNS was answered for (the transparent carrier), each with its own stand-in address. */
  private readonly standIns = { byName: new Map<string, string>(), byAddress: new Map<string, string>() };
  /** Names the sandbox's DNS was refused (each logged once a start). */
  private readonly unanswered = new Set<string>();

  constructor(private readonly o: EgressOptions) {
    // Never listening itself, node's own header and request timeouts do not run: the sockets get MCP Gate's (serve).
    this.http = http.createServer({ maxHeaderSize: 16 * 1024 });
    this.http.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      // The head is in; a tunnel being decided (a person asked, a name resolved) waits as long as that takes.
      socket.setTimeout(0);
      void this.tunnel(req, socket, head).catch(() => socket.destroy());
    });
    this.http.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      // Pipelined requests are answered in order, one upstream each: a connection may have a few in hand, no more.
      const socket = req.socket as net.Socket & { [PENDING]?: number };
      socket[PENDING] = (socket[PENDING] ?? 0) + 1;
      if (socket[PENDING]! > MAX_PIPELINED) {
        this.event({
          outcome: 'blocked',
          host: '(pipelined requests)',
          port: 0,
          detail: `a connection that sent more than ${MAX_PIPELINED} requests before their answers was closed`,
        });
        socket.destroy();
        return;
      }
      // No bound while a request is answered (a long poll); idle again after it, until the next request head.
      socket.setTimeout(0);
      res.once('close', () => {
        socket[PENDING]! -= 1;
        if (!socket[PENDING]) socket.setTimeout(IDLE_MS, () => socket.destroy());
      });
      void this.forward(req, res).catch(() => res.destroy());
    });
    this.http.on('clientError', (e: Error, socket: net.Socket) => {
      this.event({
        outcome: 'blocked',
        host: '(malformed request)',
        port: 0,
        detail: `a request MCP Gate could not read as HTTP was refused (${(e as NodeJS.ErrnoException).code ?? e.message})`,
      });
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      else socket.destroy();
    });
  }

  /** Serves a door: each connection its listener accepts is a proxy connection. */
  serve(door: net.Server): void {
    if (this.closed) {
      door.close();
      return;
    }
    this.doors.add(door);
    door.on('error', () => undefined);
    door.on('connection', (socket: net.Socket) => {
      if (this.closed) return void socket.destroy();
      if (this.sockets.size >= (this.o.maxConnections ?? MAX_CONNECTIONS)) {
        this.event({
          outcome: 'blocked',
          host: '(any)',
          port: 0,
          detail: `a connection was refused: ${this.o.maxConnections ?? MAX_CONNECTIONS} are open already`,
        });
        return void socket.destroy();
      }
      this.track(this.sockets, socket);
      // Its request head within HEAD_MS; idle between requests no longer than IDLE_MS.
      socket.setTimeout(this.o.headTimeoutMs ?? HEAD_MS, () => socket.destroy());
      this.http.emit('connection', socket);
    });
  }

  /**
   * The transparent carrier's DNS answer for `name` (./transparent-carrier.ts): a stand-in address (241.x.y.z, the
   * same one for the same name all this start) when the rules allow the name now; undefined when they do not, with a
   * `blocked` event naming the rule that would allow it (once per name a start). A stand-in decides nothing: a
   * connection to it is `CONNECT name:port`, decided, resolved and checked again then.
   */
  async answerName(name: string): Promise<string | undefined> {
    let verdict: EgressVerdict;
    try {
      verdict = await this.o.decide(name);
    } catch (e) {
      verdict = { allow: false, named: false, reason: `the rules could not be read (${(e as Error).message})` };
    }
    if (!verdict.allow) {
      if (!this.unanswered.has(name) && this.unanswered.size < MAX_NAMED) {
        this.unanswered.add(name);
        this.event({
          outcome: 'blocked',
          host: name,
          port: 0,
          detail: `the name ${name} was not answered (DNS inside the sandbox): ${verdict.reason}`,
          permit: verdict.permit,
        });
      }
      return undefined;
    }
    let a = this.standIns.byName.get(name);
    if (!a) {
      const n = this.standIns.byName.size + 1;
      if (n >= MAX_STAND_INS) return undefined;
      a = `${STAND_IN_PREFIX}.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
      this.standIns.byName.set(name, a);
      this.standIns.byAddress.set(a, name);
    }
    return a;
  }

  /** The name a stand-in address stands for (answerName gave it this start); undefined for any other host. */
  standInName(host: string): string | undefined {
    return this.standIns.byAddress.get(host);
  }

  /** Closes `thing` when this proxy closes (at once if it has). */
  hold(thing: { close(): void }): void {
    if (this.closed) return void thing.close();
    this.held.add(thing);
  }

  /** Ends every door and connection; what was not logged one by one is summed up now. */
  close(): void {
    this.closed = true;
    for (const d of this.doors) d.close();
    this.doors.clear();
    for (const h of this.held) {
      try {
        h.close();
      } catch {
        // closed already
      }
    }
    this.held.clear();
    for (const s of [...this.sockets, ...this.upstreams]) s.destroy();
    this.sockets.clear();
    this.upstreams.clear();
    this.http.close();
    if (this.summary) clearTimeout(this.summary);
    this.summary = undefined;
    this.flushSummary();
  }

  private track(set: Set<net.Socket>, socket: net.Socket): void {
    set.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => set.delete(socket));
  }

  /** Room for one more upstream connection, or Refused (with the event written). */
  private roomFor(host: string, port: number): void {
    const max = this.o.maxUpstreams ?? MAX_CONNECTIONS;
    if (this.upstreams.size < max) return;
    const detail = `${host} port ${port} was refused: ${max} connections to hosts are open already`;
    this.event({ outcome: 'blocked', host, port, detail });
    throw new Refused(detail, undefined, 503);
  }

  /**
   * Reports an event: the first EVENTS_LOGGED of a start one by one, and the first connection to each host (up to
   * MAX_NAMED hosts) whatever came before; the rest as one summary a minute (and at close) that names hosts reached and
   * refused.
   */
  private event(e: EgressEvent): void {
    const key = e.port ? `${e.host}:${e.port}` : e.host;
    const newHost = e.outcome === 'connected' && !this.named.has(key) && this.named.size < MAX_NAMED;
    if (e.outcome === 'connected') this.named.add(key);
    if (this.logged < EVENTS_LOGGED || newHost || this.closed) {
      this.logged++;
      this.o.onEvent(e);
      return;
    }
    const u = this.unlogged;
    u[e.outcome]++;
    const list = e.outcome === 'connected' ? u.reached : u.refused;
    if (list.size < 20) list.add(key);
    if (!this.summary) {
      this.summary = setTimeout(() => {
        this.summary = undefined;
        this.flushSummary();
      }, SUMMARY_MS);
      this.summary.unref();
    }
  }

  private flushSummary(): void {
    const u = this.unlogged;
    const why = `not logged one by one after the first ${EVENTS_LOGGED} events of this start`;
    if (u.connected)
      this.o.onEvent({
        outcome: 'connected',
        host: '(several)',
        port: 0,
        detail: `${u.connected} more connections made since the last line (${why}), to hosts already logged: ${[...u.reached].join(', ')}`,
      });
    if (u.blocked || u.failed)
      this.o.onEvent({
        outcome: 'blocked',
        host: '(several)',
        port: 0,
        detail: `${u.blocked} more connections refused and ${u.failed} failed since the last line (${why}); hosts among them: ${[...u.refused].join(', ')}`,
      });
    this.unlogged = { connected: 0, blocked: 0, failed: 0, reached: new Set(), refused: new Set() };
  }

  /** Decides and resolves `host`: the checked address to connect to, or Refused (with the event written). */
  private async admit(host: string, port: number): Promise<{ address: string; family: 4 | 6; reason: string }> {
    let verdict: EgressVerdict;
    try {
      verdict = await this.o.decide(host);
    } catch (e) {
      verdict = { allow: false, named: false, reason: `the rules could not be read (${(e as Error).message})` };
    }
    if (!verdict.allow) {
      // An address no rule opens (loopback, metadata, this machine's own, …) is not offered a rule that would not help.
      const literal = classifyAddress(host);
      const never =
        literal !== undefined && ((literal.range !== 'public' && literal.range !== 'private') || isOwn(literal, ownAddresses()));
      const detail = never ? `${verdict.reason} (${literal.address} is an address no rule opens to a contained server)` : verdict.reason;
      const permit = never ? undefined : verdict.permit;
      this.event({ outcome: 'blocked', host, port, detail, permit });
      throw new Refused(detail, permit);
    }
    let checked;
    try {
      checked = await resolveChecked(host, {
        resolver: this.o.resolver,
        policy: { refusePrivate: !verdict.named, refusePrivateBy: 'only a rule that names the host reaches a private address' },
      });
    } catch (e) {
      if (e instanceof AddressRefusedError) {
        const detail = `${host} is refused: ${e.reason}`;
        // Only a private address is one a rule naming the host would let through.
        const permit =
          !verdict.named && e.address !== undefined && classifyAddress(e.address)?.range === 'private' ? verdict.permit : undefined;
        this.event({ outcome: 'blocked', host, port, address: e.address, detail, permit });
        throw new Refused(detail, permit);
      }
      const detail = e instanceof NameResolutionError ? e.message : `${host}: ${(e as Error).message}`;
      this.event({ outcome: 'failed', host, port, detail });
      throw new Refused(detail, undefined, 502);
    }
    const own = ownAddresses();
    const mine = checked.addresses.find((a) => isOwn(a, own));
    if (mine) {
      const detail = `${host} is refused: ${mine.address} is an address of this machine, which a contained server never reaches`;
      this.event({ outcome: 'blocked', host, port, address: mine.address, detail });
      throw new Refused(detail);
    }
    const first = checked.addresses[0];
    return { address: first.address, family: first.family, reason: verdict.reason };
  }

  private connect(address: string, family: 4 | 6, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const upstream = net.connect({ host: address, port, family });
      this.track(this.upstreams, upstream);
      const timer = setTimeout(() => {
        upstream.destroy();
        reject(
          new Error(
            `no connection to ${address} port ${port} within ${Math.round((this.o.connectTimeoutMs ?? CONNECT_TIMEOUT_MS) / 1000)} s`,
          ),
        );
      }, this.o.connectTimeoutMs ?? CONNECT_TIMEOUT_MS);
      upstream.once('connect', () => {
        clearTimeout(timer);
        // A destination the kernel answers itself has its own address as the source: this machine, after all.
        if (upstream.localAddress !== undefined && upstream.localAddress === upstream.remoteAddress) {
          upstream.destroy();
          return reject(new Refused(`${address} is refused: ${LOCAL_AFTER_CONNECT}`));
        }
        resolve(upstream);
      });
      upstream.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  private async tunnel(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    const target = authority(req.url ?? '');
    const answer = (status: number, text: string, why: string): void => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const body = `${why}\n`;
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    if (!target) {
      const what = JSON.stringify((req.url ?? '').slice(0, 100));
      this.event({
        outcome: 'blocked',
        host: '(malformed CONNECT)',
        port: 0,
        detail: `CONNECT ${what} was refused: a CONNECT takes host:port (a port from 1 to 65535, no zone id)`,
      });
      return answer(400, 'Bad Request', 'MCP Gate: a CONNECT takes host:port');
    }
    // A stand-in address (the transparent carrier's DNS answer) is the name it stands for: decided as that name.
    target.host = this.standInName(target.host) ?? target.host;
    let upstream: net.Socket;
    try {
      const a = await this.admit(target.host, target.port);
      this.roomFor(target.host, target.port);
      try {
        upstream = await this.connect(a.address, a.family, target.port);
      } catch (e) {
        if (e instanceof Refused) {
          this.event({ outcome: 'blocked', host: target.host, port: target.port, address: a.address, detail: e.message });
          throw e;
        }
        const detail = `${target.host} (${a.address}) port ${target.port}: ${(e as Error).message}`;
        this.event({ outcome: 'failed', host: target.host, port: target.port, address: a.address, detail });
        return answer(502, 'Bad Gateway', `MCP Gate: ${detail}`);
      }
      this.event({ outcome: 'connected', host: target.host, port: target.port, address: a.address, detail: a.reason });
    } catch (e) {
      if (e instanceof Refused)
        return answer(
          e.status,
          e.status === 403 ? 'Forbidden' : e.status === 503 ? 'Service Unavailable' : 'Bad Gateway',
          `MCP Gate refused ${target.host}: ${e.message}${e.permit ? ` (the rule ${e.permit} would allow it)` : ''}`,
        );
      return answer(502, 'Bad Gateway', `MCP Gate: ${(e as Error).message}`);
    }
    if (this.closed || socket.destroyed) return void upstream.destroy();
    // A tunnel may be quiet for long (a WebSocket): no idle bound once it is open.
    socket.setTimeout(0);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    socket.pipe(upstream);
    upstream.pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.once('close', end);
    upstream.once('close', end);
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const fail = (status: number, why: string): void => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end(`${why}\n`);
    };
    const refuseForm = (why: string) => {
      this.event({
        outcome: 'blocked',
        host: '(malformed request)',
        port: 0,
        detail: `${req.method} ${JSON.stringify((req.url ?? '').slice(0, 100))} was refused: ${why}`,
      });
      fail(400, `MCP Gate: ${why}`);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return refuseForm('this is a proxy; send absolute-form requests (http://host/path) or CONNECT host:port');
    }
    if (url.protocol !== 'http:') return refuseForm(`only http:// is forwarded as a request (${url.protocol} goes through CONNECT)`);
    const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const host = this.standInName(literal) ?? literal;
    const port = url.port ? Number(url.port) : 80;
    let a;
    try {
      a = await this.admit(host, port);
      this.roomFor(host, port);
    } catch (e) {
      if (e instanceof Refused)
        return fail(e.status, `MCP Gate refused ${host}: ${e.message}${e.permit ? ` (the rule ${e.permit} would allow it)` : ''}`);
      return fail(502, `MCP Gate: ${(e as Error).message}`);
    }
    const headers = { ...req.headers };
    for (const k of Object.keys(headers)) if (k.startsWith('proxy-')) delete headers[k];
    const upstream = http.request({
      host: a.address,
      family: a.family,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent: false,
    });
    const timer = setTimeout(
      () => upstream.destroy(new Error(`no connection within ${Math.round((this.o.connectTimeoutMs ?? CONNECT_TIMEOUT_MS) / 1000)} s`)),
      this.o.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    );
    upstream.once('socket', (s: net.Socket) => {
      this.track(this.upstreams, s);
      s.once('connect', () => {
        clearTimeout(timer);
        if (s.localAddress !== undefined && s.localAddress === s.remoteAddress) {
          this.event({ outcome: 'blocked', host, port, address: a.address, detail: `${host} is refused: ${LOCAL_AFTER_CONNECT}` });
          upstream.destroy(new Refused(LOCAL_AFTER_CONNECT));
          return;
        }
        this.event({ outcome: 'connected', host, port, address: a.address, detail: a.reason });
      });
    });
    upstream.once('response', (r: http.IncomingMessage) => {
      // What an upstream says is untrusted too: a status Node cannot send on (000, 1xx) ends this request, not the gate.
      try {
        res.writeHead(r.statusCode ?? 502, r.rawHeaders);
      } catch (e) {
        r.destroy();
        return fail(502, `MCP Gate: ${host} answered what cannot be passed on (${(e as Error).message})`);
      }
      r.on('error', () => res.destroy());
      r.once('aborted', () => res.destroy());
      r.once('close', () => {
        if (!r.complete) res.destroy();
      });
      r.pipe(res);
    });
    upstream.once('upgrade', (r: http.IncomingMessage, s: net.Socket) => {
      s.destroy();
      fail(
        502,
        `MCP Gate: ${host} asked to switch protocols (${r.statusCode}); a request is not upgraded here, open a CONNECT tunnel instead`,
      );
    });
    upstream.once('error', (e) => {
      clearTimeout(timer);
      if (e instanceof Refused) return fail(403, `MCP Gate refused ${host}: ${e.message}`);
      if (!res.headersSent)
        this.event({ outcome: 'failed', host, port, address: a.address, detail: `${host} (${a.address}) port ${port}: ${e.message}` });
      fail(502, `MCP Gate: ${host} (${a.address}) port ${port}: ${e.message}`);
    });
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  }
}
