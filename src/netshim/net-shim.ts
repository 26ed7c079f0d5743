// MCP Gate's network shim for Node.js (issue 44). Built to dist/netshim/net-shim.cjs by scripts/build-guard.mjs and
// preloaded into every Node process of a contained server that has a network door (src/host/net/egress.ts):
//
//   MCP_GATE_DOOR=127.0.0.1:3128 NODE_OPTIONS="--require /run/mcp-gate/net-shim.cjs" node server.js
//
// A contained server's only way out is the door, a TCP listener on the sandbox's own loopback behind which MCP Gate's
// filtering proxy takes `CONNECT host:port`. Clients that honour HTTP_PROXY reach it by themselves; many do not:
// Node 20's built-in fetch, `http`/`https` requests (node-fetch, got), and raw TCP clients (database drivers) connect
// straight to the host and fail with ENETUNREACH (there is no route). This shim carries them through the door:
//   - net.Socket.prototype.connect   a TCP connection to a host that is not loopback goes to the door instead, which
//                                    is asked `CONNECT host:port`; the socket's 'connect' comes only after the
//                                    proxy's 200, and what is written before waits for it. This carries raw TCP
//                                    (pg, mysql, redis), plain http (http.globalAgent and every other Agent) and
//                                    everything built on net.
//   - tls.connect                    without a `socket` of its own, to a host that is not loopback: TLS over such a
//                                    tunnel (the name checked against the certificate is the host's, as before).
//                                    This carries https (https.globalAgent and every other https.Agent).
//   - Node's built-in fetch          (and WebSocket / EventSource, which share its dispatcher): at the first access
//                                    of globalThis.fetch (undici is not loaded before: a start costs nothing more), the global dispatcher
//                                    (Symbol.for('undici.globalDispatcher.1')) becomes a new instance of Node's own
//                                    undici Agent whose `connect` opens its connections through the two above, so
//                                    fetch does not depend on how undici reaches net and tls inside.
// Loopback destinations (127.0.0.0/8, ::1, localhost, 0.0.0.0, a Unix socket path) are never tunnelled: that is
// where the door itself and a client's own proxy setting (HTTP_PROXY points at the door) lead.
// A refused CONNECT (403/502 from the proxy) is a connection error (code ECONNREFUSED) whose message has the
// proxy's status line and its body, which names the rule that would allow the host.
// How a tunnelled socket is held back: it connects to the door with net's own connect; its 'connect' and 'ready' are
// kept from its listeners while it asks CONNECT (written with net's _writeGeneric, ahead of anything queued) and the
// answer is read through its own `push` (so the answer never reaches a reader); its _writeGeneric and _final wait for
// the real 'connect', emitted after the 200. These are net's own method names in Node 18–24 (tested on 20, 22, 24).
// Not carried: a client that resolves the name itself first (dns.lookup, then an address: no DNS in the sandbox),
// UDP, and a child process started with an environment that drops NODE_OPTIONS or MCP_GATE_DOOR.
// Only Node built-ins; nothing else of MCP Gate. With MCP_GATE_DOOR unset it does nothing.
import net = require('node:net');
import stream = require('node:stream');
import tls = require('node:tls');

const VAR = 'MCP_GATE_DOOR';
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
/** How long the door may take to answer a CONNECT (its own connect timeout is 10 s). */
const HANDSHAKE_TIMEOUT_MS = 30_000;
/** The most of a proxy's answer head read (a refusal's body is short). */
const MAX_HEAD = 16 * 1024;
/** On net.Socket.prototype: the shim is installed (once per process, even if preloaded twice). */
const MARK = Symbol.for('mcp-gate.netshim');
/** On a tunnelled socket: its destination and whether the tunnel is open yet. */
const TUNNEL = Symbol('mcp-gate.netshim.tunnel');
type TunnelState = { target: string; open: boolean };

type ConnectFn = (this: net.Socket, ...args: unknown[]) => net.Socket;
type WriteGeneric = (this: net.Socket, writev: boolean, data: unknown, encoding: string, cb: (err?: Error | null) => void) => void;
type Final = (this: net.Socket, cb: (err?: Error | null) => void) => void;
type Push = (this: net.Socket, chunk: Buffer | null) => boolean;
type Emit = (this: net.Socket, ev: string | symbol, ...a: unknown[]) => boolean;
type Internal = Omit<net.Socket, 'emit' | 'push'> & { _writeGeneric?: WriteGeneric; _final?: Final; push: Push; emit: Emit };

/** The door's address from MCP_GATE_DOOR (`127.0.0.1:3128`, `[::1]:3128`); undefined when unset or malformed. */
export function parseDoor(text: string | undefined): { host: string; port: number } | undefined {
  const m = /^\[?([^[\]]+?)\]?:(\d{1,5})$/.exec((text ?? '').trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65536 ? { host: m[1], port } : undefined;
}

/** A destination that is never tunnelled: loopback names and addresses, and the unspecified address. */
export function isLoopback(host: string | undefined): boolean {
  if (host === undefined || host === '') return true; // net's default host is localhost
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h.startsWith('::ffff:')) h = h.slice(7);
  if (net.isIPv4(h)) return h.startsWith('127.') || h === '0.0.0.0';
  if (net.isIPv6(h)) return h === '::1' || h === '::' || /^0*:0*:0*:0*:0*:0*:0*:0*1$/.test(h) || /^0*:0*:0*:0*:0*:0*:0*:0*$/.test(h);
  return false;
}

/** `host:port` as a CONNECT takes it (an IPv6 address in brackets). */
function authority(host: string, port: number): string {
  const h = host.startsWith('[') ? host : net.isIPv6(host) ? `[${host}]` : host;
  return `${h}:${port}`;
}

/** The error of a refused or failed CONNECT: the proxy's status line and what it said. */
function refusal(host: string, port: number, status: string, body: string): Error {
  const why = body.trim().replace(/\s+/g, ' ').slice(0, 1000);
  const err = new Error(
    `connect to ${authority(host, port)} through MCP Gate's network door refused: ${status}${why ? ` — ${why}` : ''}`,
  ) as NodeJS.ErrnoException & { status?: number };
  err.code = 'ECONNREFUSED';
  err.status = Number(/^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(status)?.[1]) || undefined;
  return err;
}

/**
 * Reads the proxy's answer to CONNECT from `chunk`s as they come: `pending` until the head is complete; then `ok`
 * with the bytes after the head (already the peer's), or `refused` once the body is complete (content-length, or
 * the end of the connection given to `end`).
 */
class Answer {
  private buf: Buffer = Buffer.alloc(0);
  private head?: { status: string; ok: boolean; length: number; bodyStart: number };
  add(chunk: Buffer): { ok: true; rest: Buffer } | { refused: true; status: string; body: string } | 'pending' | 'too-long' {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : Buffer.from(chunk);
    if (!this.head) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return this.buf.length > MAX_HEAD ? 'too-long' : 'pending';
      const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
      const status = lines[0];
      const code = /^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(status)?.[1];
      const cl = lines.find((l) => /^content-length:/i.test(l));
      this.head = {
        status,
        ok: code !== undefined && code.startsWith('2'),
        length: cl ? Number(cl.split(':')[1]) || 0 : -1,
        bodyStart: end + 4,
      };
      if (this.head.ok) return { ok: true, rest: this.buf.subarray(end + 4) };
    }
    const body = this.buf.subarray(this.head.bodyStart);
    if (this.head.length >= 0 && body.length >= this.head.length) return this.refused();
    return this.buf.length > MAX_HEAD ? this.refused() : 'pending';
  }
  refused(): { refused: true; status: string; body: string } {
    const body = this.head
      ? this.buf.subarray(this.head.bodyStart, this.head.length >= 0 ? this.head.bodyStart + this.head.length : undefined).toString('utf8')
      : '';
    return { refused: true, status: this.head?.status ?? 'no answer from the door', body };
  }
}

/** net's own argument normalization (connect(port, host, cb), connect(options, cb), connect(path, cb)). */
function normalize(args: unknown[]): [net.NetConnectOpts & Record<string, unknown>, (() => void) | undefined] {
  const n = (net as unknown as { _normalizeArgs?: (a: unknown[]) => unknown[] })._normalizeArgs;
  if (n) {
    const r = n(args) as [Record<string, unknown>, (() => void) | undefined];
    // An argument list already normalized (net.connect → socket.connect) is passed as one array.
    return [r[0] as net.NetConnectOpts & Record<string, unknown>, r[1]];
  }
  const a0 = args[0] as unknown;
  const cb = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as () => void) : undefined;
  if (a0 !== null && typeof a0 === 'object') return [a0 as net.NetConnectOpts & Record<string, unknown>, cb];
  if (typeof a0 === 'string' && !/^\d+$/.test(a0)) return [{ path: a0 } as net.NetConnectOpts & Record<string, unknown>, cb];
  return [
    { port: Number(a0), host: typeof args[1] === 'string' ? args[1] : undefined } as net.NetConnectOpts & Record<string, unknown>,
    cb,
  ];
}

/**
 * Connects `socket` to the door and asks for `host:port`: the socket's 'connect' (and 'ready') is held back until
 * the proxy answers 200; bytes written before wait (net's own write path while connecting), bytes read before are
 * the proxy's answer and never reach the socket's reader. A refusal destroys the socket with the proxy's words.
 */
function tunnel(
  socket: Internal,
  door: { host: string; port: number },
  opts: Record<string, unknown>,
  cb: (() => void) | undefined,
  connect: ConnectFn,
): net.Socket {
  const host = String(opts.host);
  const port = Number(opts.port);
  const proto = net.Socket.prototype as unknown as Internal;
  const answer = new Answer();
  const state: TunnelState = { target: authority(host, port), open: false };
  let phase: 'door' | 'asking' | 'open' = 'door';
  let timer: NodeJS.Timeout | undefined;
  const restore = () => {
    delete (socket as Partial<Internal>).emit;
    delete (socket as Partial<Internal>).push;
    delete (socket as Partial<Internal>)._writeGeneric;
    delete (socket as Partial<Internal>)._final;
    if (timer) clearTimeout(timer);
  };
  const fail = (err: Error) => {
    restore();
    phase = 'open';
    socket.destroy(err);
  };
  socket._writeGeneric = function (writev, data, encoding, done) {
    if (phase === 'open') return proto._writeGeneric!.call(this, writev, data, encoding, done);
    whenOpen(this, () => proto._writeGeneric!.call(this, writev, data, encoding, done), done);
  };
  socket._final = function (done) {
    if (phase === 'open') return proto._final!.call(this, done);
    whenOpen(this, () => proto._final!.call(this, done), done);
  };
  socket.push = function (chunk) {
    if (phase === 'open') return proto.push.call(this, chunk);
    if (chunk === null) {
      const r = answer.refused();
      fail(
        phase === 'asking' && r.status !== 'no answer from the door'
          ? refusal(host, port, r.status, r.body)
          : refusal(host, port, 'the door closed the connection before answering', ''),
      );
      return false;
    }
    const r = answer.add(Buffer.from(chunk));
    if (r === 'pending') return true;
    if (r === 'too-long') {
      fail(refusal(host, port, 'the door answered with an overlong head', ''));
      return false;
    }
    if ('refused' in r) {
      fail(refusal(host, port, r.status, r.body));
      return false;
    }
    restore();
    phase = 'open';
    state.open = true;
    // 'connect' before the peer's first bytes (a server that speaks first: MySQL, SMTP), as on a direct connection.
    this.emit('connect');
    this.emit('ready');
    if (r.rest.length && !this.destroyed) return proto.push.call(this, r.rest);
    return true;
  };
  socket.emit = function (ev, ...a) {
    if (phase === 'door' && ev === 'connect') {
      phase = 'asking';
      const target = authority(host, port);
      proto._writeGeneric!.call(
        this,
        false,
        Buffer.from(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`, 'latin1'),
        'buffer',
        (err) => {
          if (err) fail(err);
        },
      );
      timer = setTimeout(
        () => fail(refusal(host, port, `no answer from MCP Gate's network door within ${HANDSHAKE_TIMEOUT_MS / 1000} s`, '')),
        HANDSHAKE_TIMEOUT_MS,
      );
      timer.unref();
      readEvenIfPaused(this);
      return true;
    }
    if (phase !== 'open' && ev === 'ready') return true;
    return proto.emit.call(this, ev, ...a);
  };
  const rest: Record<string, unknown> = { ...opts, host: door.host, port: door.port };
  for (const k of ['lookup', 'family', 'hints', 'autoSelectFamily', 'autoSelectFamilyAttemptTimeout', 'localAddress', 'localPort'])
    delete rest[k];
  (socket as unknown as Record<symbol, TunnelState>)[TUNNEL] = state;
  return connect.call(socket, rest, cb);
}

/**
 * Writes and the end of writing wait for the tunnel, as net makes them wait for a connection (and, as net does,
 * a socket closed before it fails the waiting write).
 */
function whenOpen(self: net.Socket, go: () => void, done: (err?: Error | null) => void): void {
  const onClose = () =>
    done(Object.assign(new Error('Socket closed before the connection was established'), { code: 'ERR_SOCKET_CLOSED_BEFORE_CONNECTION' }));
  self.once('close', onClose);
  self.once('connect', () => {
    self.off('close', onClose);
    go();
  });
}

/** net starts reading after 'connect' unless paused; the door's answer must be read even if it is. */
function readEvenIfPaused(socket: net.Socket): void {
  const h = (socket as unknown as { _handle?: { reading?: boolean; readStart(): number } })._handle;
  if (h && !h.reading) {
    h.reading = true;
    h.readStart();
  }
}

/** `raw` as a plain Duplex (no TCP handle for TLS to take over): reads and writes pass through, errors and ends too. */
function asStream(raw: net.Socket): stream.Duplex {
  const d = new stream.Duplex({
    read() {
      raw.resume();
    },
    write(chunk, encoding, done) {
      raw.write(chunk as Buffer, encoding, done);
    },
    final(done) {
      raw.end(done);
    },
    destroy(err, done) {
      raw.destroy(err ?? undefined);
      done(err);
    },
  });
  raw.on('data', (c: Buffer) => {
    if (!d.push(c)) raw.pause();
  });
  raw.once('end', () => d.push(null));
  raw.once('error', (e) => d.destroy(e));
  raw.once('close', () => d.destroy());
  return d;
}

function install(door: { host: string; port: number }): void {
  const proto = net.Socket.prototype as unknown as Record<symbol, unknown> & { connect: ConnectFn };
  if (proto[MARK]) return; // preloaded twice (a child given the flag again)
  proto[MARK] = true;

  // ---------------------------------------------------------------------------------------- raw TCP and http
  const originalConnect = proto.connect;
  proto.connect = function connect(this: net.Socket, ...args: unknown[]): net.Socket {
    const flat = args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
    const [opts, cb] = normalize(flat);
    if (opts.path || isLoopback(opts.host as string | undefined) || this instanceof tls.TLSSocket) return originalConnect.apply(this, args);
    return tunnel(this as Internal, door, opts, cb, originalConnect);
  };

  // ---------------------------------------------------------------------------------------- TLS (https)
  const originalTls = tls.connect;
  const tlsConnect = function connect(...args: unknown[]): tls.TLSSocket {
    let opts: tls.ConnectionOptions;
    const cb: (() => void) | undefined = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as () => void) : undefined;
    if (args[0] !== null && typeof args[0] === 'object') opts = args[0] as tls.ConnectionOptions;
    else {
      const more = args.find((a, i) => i > 0 && a !== null && typeof a === 'object') as tls.ConnectionOptions | undefined;
      opts = { ...more, port: Number(args[0]), ...(typeof args[1] === 'string' ? { host: args[1] } : {}) };
    }
    const given = opts.socket as (net.Socket & Record<symbol, TunnelState | undefined>) | undefined;
    if (given && given[TUNNEL] && !given[TUNNEL]!.open) {
      // TLS over a tunnel not open yet (`tls.connect({ socket: net.connect(…) })` at once): TLS would take its TCP
      // handle over and greet the proxy. It gets the socket as a JS stream instead, whose writes wait for the tunnel.
      return originalTls({ ...opts, socket: asStream(given) }, cb);
    }
    if (given || opts.path || isLoopback(opts.host ?? 'localhost')) return (originalTls as (...a: unknown[]) => tls.TLSSocket)(...args);
    const host = opts.host!;
    const port = Number(opts.port ?? 443);
    // The TLS socket is made over a socket that has no handle yet: TLS then reads and writes it as a JS stream (so the
    // proxy's answer is read by the tunnel, not by TLS) and starts its handshake at its 'connect', the proxy's 200.
    // (Over a socket whose TCP handle exists, TLS would take the handle over and greet the proxy.)
    const raw = new net.Socket();
    const servername = opts.servername ?? (net.isIP(host) ? undefined : host);
    const secure = originalTls({ ...opts, socket: raw, ...(servername ? { servername } : {}) }, cb);
    // A refused tunnel is the TLS socket's error too.
    raw.once('error', (e) => {
      if (!secure.destroyed) secure.destroy(e);
    });
    const timeout = (opts as { timeout?: number }).timeout;
    raw.connect({ host, port, ...(timeout ? { timeout } : {}) });
    return secure;
  };
  (tls as { connect: unknown }).connect = tlsConnect;

  // ---------------------------------------------------------------------------------------- built-in fetch
  // Only `fetch`: Node 22+ makes WebSocket a lazy data property that reading its descriptor loads (undici at every
  // start); WebSocket and EventSource use the same dispatcher, and before fetch is touched undici's own connector,
  // which goes through net and tls as patched above.
  for (const name of ['fetch']) {
    const d = Object.getOwnPropertyDescriptor(globalThis, name);
    if (!d || !d.configurable) continue;
    Object.defineProperty(globalThis, name, {
      configurable: true,
      enumerable: d.enumerable,
      get() {
        restoreGlobals();
        installDispatcher();
        return (globalThis as Record<string, unknown>)[name];
      },
      set(v: unknown) {
        restoreGlobals();
        (globalThis as Record<string, unknown>)[name] = v;
      },
    });
    saved.push([name, d]);
  }
}

const saved: [string, PropertyDescriptor][] = [];
function restoreGlobals(): void {
  for (const [name, d] of saved.splice(0)) Object.defineProperty(globalThis, name, d);
}

type AgentCtor = new (o: { connect: (o: Record<string, unknown>, cb: (err: Error | null, s?: net.Socket) => void) => void }) => object;

/** The global dispatcher becomes Node's own undici Agent connecting through net/tls as patched above. */
function installDispatcher(): void {
  try {
    void (globalThis as Record<string, unknown>).Response; // loads Node's undici, which makes its default dispatcher
    const g = globalThis as unknown as Record<symbol, object | undefined>;
    const current = g[GLOBAL_DISPATCHER];
    if (!current) return;
    const kind = current.constructor?.name;
    let Agent: AgentCtor | undefined;
    if (kind === 'Agent') Agent = current.constructor as AgentCtor;
    else if (kind === 'EnvHttpProxyAgent') {
      // Node 22.21+/24 with NODE_USE_ENV_PROXY: its plain Agent is one of its fields.
      for (const k of Object.getOwnPropertySymbols(current)) {
        const v = (current as Record<symbol, unknown>)[k] as object | undefined;
        if (v && v.constructor?.name === 'Agent') Agent = v.constructor as AgentCtor;
      }
    }
    if (!Agent) return; // a dispatcher the program set itself: left alone
    g[GLOBAL_DISPATCHER] = new Agent({ connect: undiciConnect });
  } catch {
    // no undici in this Node: nothing to install (net and tls still carry what connects)
  }
}

/** undici's connector: connect({ hostname, protocol, port, servername }, cb) → cb(err, socket) once connected. */
function undiciConnect(o: Record<string, unknown>, cb: (err: Error | null, s?: net.Socket) => void): void {
  let host = String(o.hostname ?? '');
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const https = o.protocol === 'https:';
  const port = Number(o.port) || (https ? 443 : 80);
  let done = false;
  const once = (err: Error | null, s?: net.Socket) => {
    if (done) return;
    done = true;
    cb(err, s);
  };
  let socket: net.Socket;
  if (https) {
    const servername = (o.servername as string | undefined) || (net.isIP(host) ? undefined : host);
    socket = tls.connect({
      host,
      port,
      ...(servername ? { servername } : {}),
      ALPNProtocols: (o.ALPNProtocols as string[] | undefined) ?? ['http/1.1'],
    });
    socket.once('secureConnect', () => once(null, socket));
  } else {
    socket = net.connect({ host, port });
    socket.once('connect', () => once(null, socket));
  }
  socket.setNoDelay(true);
  socket.on('error', (e) => once(e));
}

const door = parseDoor(process.env[VAR]);
if (door) install(door);
