// An undici Agent whose every new connection resolves the host, checks all its addresses, and connects
// to a checked address while TLS SNI and certificate verification stay on the host name.

import type Agent from 'undici/lib/dispatcher/agent.js';
import type buildConnector from 'undici/lib/core/connect.js';
import { undici } from './undici-load';
import { AddressRefusedError } from '../errors';
import { allLoopback, resolveChecked, type ResolveOptions } from './resolve';

/** Options of {@link createPinnedAgent}. */
export interface PinnedAgentOptions extends ResolveOptions {
  /** Trusted CA certificates (PEM). Default: Node's bundled roots (plus NODE_EXTRA_CA_CERTS). */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /** TCP + TLS handshake budget per address. Default 10 000 ms. */
  readonly connectTimeoutMs?: number;
  /** Called for every connection made, after the handshake (for logs and tests). */
  readonly onConnect?: (connection: PinnedConnection) => void;
}

/** One connection the agent made: which checked address it went to, and the TLS name it verified. */
export interface PinnedConnection {
  readonly host: string;
  readonly address: string;
  readonly port: number;
  readonly protocol: string;
  /** SNI and certificate name; undefined for an IP-literal host (then the IP is verified). */
  readonly servername: string | undefined;
}

/** Connection errors after which the next checked address of the same name is tried. */
const TRY_NEXT = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

/**
 * Creates the dispatcher for guarded exchanges. Each new connection: resolve (all answers), check every
 * answer ({@link resolveChecked}), connect to the first checked address (the next one only after a
 * fast failure such as ECONNREFUSED), with TLS `servername` = the host name and certificates verified.
 * A refusal fails the request with {@link AddressRefusedError} (as `cause` of undici's fetch error).
 * Plain http is connected only when every address is loopback and the exception allows loopback.
 */
export function createPinnedAgent(options: PinnedAgentOptions = {}): Agent {
  const base = undici().buildConnector({
    ca: options.ca as string | Buffer | Array<string | Buffer> | undefined,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
    timeout: options.connectTimeoutMs ?? 10_000,
    allowH2: false,
  });

  const connect: buildConnector.connector = (opts, callback) => {
    let done = false;
    const finish: buildConnector.Callback = (...args) => {
      if (done) return;
      done = true;
      callback(...args);
    };
    const host = opts.hostname;
    resolveChecked(host, options)
      .then((checked) => {
        if (opts.protocol !== 'https:') {
          const loopbackOk = opts.protocol === 'http:' && options.policy?.exception?.allowLoopback === true && allLoopback(checked);
          if (!loopbackOk) {
            const addresses = checked.addresses.map((a) => a.address);
            throw new AddressRefusedError(
              host,
              undefined,
              `${opts.protocol} allowed only to loopback under a local-development exception; https required`,
              addresses,
            );
          }
        }
        const servername = checked.literal ? undefined : host;
        const attempt = (i: number): void => {
          const address = checked.addresses[i]!.address;
          base({ ...opts, hostname: address, servername }, (err, socket) => {
            if (err) {
              const code = (err as { code?: unknown }).code;
              if (typeof code === 'string' && TRY_NEXT.has(code) && i + 1 < checked.addresses.length) return attempt(i + 1);
              return finish(err, null);
            }
            try {
              options.onConnect?.({
                host,
                address,
                port: Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80),
                protocol: opts.protocol,
                servername,
              });
            } catch {
              // an observer's failure must not break the connection
            }
            finish(null, socket!);
          });
        };
        attempt(0);
      })
      .catch((err: unknown) => finish(err instanceof Error ? err : new Error(String(err)), null));
  };

  return new (undici().Agent)({ connect, allowH2: false });
}
