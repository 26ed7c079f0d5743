// The filtering proxy's terms (./egress.ts): the door's port and the variables that point clients at it, its
// bounds, the shapes of a verdict, an event and its options, the transparent carrier's stand-in range, what a
// CONNECT names (authority), and the addresses of this machine that no connection may reach.
import * as fs from 'node:fs';
import * as os from 'node:os';
import ipaddr from 'ipaddr.js';
import type { AddressInfo } from './address';
import type { Resolver } from './resolve';

/** The door's port inside the sandbox (its network namespace is new and empty, so the port is always free). */
export const DOOR_PORT = 3128;
const PROXY_URL = `http://127.0.0.1:${DOOR_PORT}`;

/** The variables that point clients at the door (curl, Python, Go, npm; Node 24+ with NODE_USE_ENV_PROXY). */
export const PROXY_ENV: Readonly<Record<string, string>> = {
  HTTP_PROXY: PROXY_URL,
  HTTPS_PROXY: PROXY_URL,
  ALL_PROXY: PROXY_URL,
  http_proxy: PROXY_URL,
  https_proxy: PROXY_URL,
  all_proxy: PROXY_URL,
  npm_config_proxy: PROXY_URL,
  npm_config_https_proxy: PROXY_URL,
  NODE_USE_ENV_PROXY: '1',
};

export const CONNECT_TIMEOUT_MS = 10_000;
export const MAX_CONNECTIONS = 64;

/** What the rules say about one host (src/policy/decide.ts mayReachNetwork, with `ask` resolved). */
export interface EgressVerdict {
  allow: boolean;
  /** A rule names this host: private addresses are reachable. */
  named: boolean;
  /** Why (the deciding rule, or why refused). */
  reason: string;
  /** The rule, as a person writes it, that would allow this host (for a refusal). */
  permit?: string;
}

export interface EgressEvent {
  outcome: 'connected' | 'blocked' | 'failed';
  host: string;
  port: number;
  /** The address connected to (or refused). */
  address?: string;
  detail: string;
  /** For a block: the rule that would allow it, when one would. */
  permit?: string;
}

export interface EgressOptions {
  decide(host: string): Promise<EgressVerdict>;
  onEvent(e: EgressEvent): void;
  /** Defaults to the system resolver. */
  resolver?: Resolver;
  connectTimeoutMs?: number;
  /** Open connections from the sandbox to the door (default 64). */
  maxConnections?: number;
  /** Open connections from MCP Gate to hosts, tunnels and forwarded requests together (default 64). */
  maxUpstreams?: number;
  /** How long a new proxy connection may take to send its request head (default 10 s). */
  headTimeoutMs?: number;
}

/** The stand-in range of the transparent carrier's DNS answers (./transparent-carrier.ts): 241.0.0.0/8, inside 240/4 (reserved, never routed, refused by the door as an address) and apart from proxychains4's 240.0.0.0/8. */
export const STAND_IN_PREFIX = 241;
export const MAX_STAND_INS = 1 << 24;

/** A local range of this machine: an address (canonical) and its prefix length. */
export type Local = { net: ipaddr.IPv4 | ipaddr.IPv6; bits: number };

/**
 * Every address this machine answers on itself, read at each decision: the kernel's local routes (IPv4 from
 * /proc/net/fib_trie, "host LOCAL" entries, AnyIP ranges included; IPv6 from /proc/net/ipv6_route, RTF_LOCAL) and the
 * addresses of /proc/net/if_inet6 and os.networkInterfaces(). The kernel's tables list an interface that is down or
 * has no carrier too (os.networkInterfaces() leaves those out), and such an address still reaches this machine.
 */
export function ownAddresses(): Local[] {
  const out: Local[] = [];
  const add = (text: string, bits?: number) => {
    try {
      const ip = ipaddr.parse(text);
      out.push({ net: ip, bits: bits ?? (ip.kind() === 'ipv4' ? 32 : 128) });
    } catch {
      // not an address
    }
  };
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  let last: string | undefined;
  for (const line of read('/proc/net/fib_trie').split('\n')) {
    const leaf = /\|-- (\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (leaf) last = leaf[1];
    const kind = /^\s+\/(\d+) (host|link) (LOCAL|BROADCAST)/.exec(line);
    if (kind && last) add(last, Number(kind[1]));
  }
  const hex6 = (h: string) => h.match(/.{4}/g)!.join(':');
  for (const line of read('/proc/net/ipv6_route').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 10 && (parseInt(f[8], 16) & 0x80000000) !== 0) add(hex6(f[0]), parseInt(f[1], 16));
  }
  for (const line of read('/proc/net/if_inet6').split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0]?.length === 32) add(hex6(f[0]));
  }
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) add(a.address.replace(/%.*$/, ''));
  return out;
}

export function isOwn(info: AddressInfo, own: readonly Local[]): boolean {
  const candidates = [info.address, ...(info.embedded ? [info.embedded.address] : [])];
  return candidates.some((text) => {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.parse(text);
    } catch {
      return false;
    }
    return own.some((l) => l.net.kind() === ip.kind() && ip.match(l.net as never, l.bits));
  });
}

/**
 * `host:port` of a CONNECT, `[v6]:port` included; undefined when it is not one. An IPv6 address without brackets
 * (`2001:db8::1:443`, as proxychains4 4.16 sends one) is read as the address before the last colon and the port after
 * it — a CONNECT always names a port — and only when what is before it is a whole IPv6 address; it is then checked
 * like any other address.
 */
export function authority(text: string): { host: string; port: number } | undefined {
  const bare = /^([0-9A-Fa-f:.]+):(\d{1,5})$/.exec(text);
  if (bare && bare[1].includes(':')) {
    const port = Number(bare[2]);
    return ipaddr.IPv6.isValid(bare[1]) && port >= 1 && port <= 65535 ? { host: bare[1], port } : undefined;
  }
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^\s:/?#@[\]]+):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (!(port >= 1 && port <= 65535)) return undefined;
  return { host: m[1].startsWith('[') ? m[1].slice(1, -1) : m[1], port };
}
