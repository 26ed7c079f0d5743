// Address policy: parses an IP literal in any spelling a URL host or a resolver may carry, classifies it
// (looking through every IPv6 form that embeds an IPv4 address) and decides whether it may be reached.

import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Coarse class of an address.
 * - `public`: anything not listed below (reachable by default).
 * - `private`: company networks; reachable by default, refusable by rule (`refusePrivate`).
 * - `loopback`: refused unless a local-development exception allows it.
 * - `metadata`, `unspecified`, `linkLocal`, `multicast`, `broadcast`, `reserved`: refused always.
 */
export type AddressRange =
  'public' | 'private' | 'loopback' | 'metadata' | 'unspecified' | 'linkLocal' | 'multicast' | 'broadcast' | 'reserved';

/** What {@link classifyAddress} found out about one address. */
export interface AddressInfo {
  /** Canonical spelling: dotted decimal for IPv4, compressed hex for IPv6 (zone id dropped). */
  readonly address: string;
  readonly family: 4 | 6;
  readonly range: AddressRange;
  /** The block that decided the class (CIDR), '' for public. */
  readonly block: string;
  /** Short human description of that block. */
  readonly label: string;
  /** Set when an IPv6 spelling embeds the IPv4 address that decided the class. */
  readonly embedded?: { readonly address: string; readonly via: string };
}

/** A local-development exception for one named server (user scope only). Metadata/unspecified stay refused. */
export interface LocalDevException {
  /** Loopback addresses may be reached (and plain http, to loopback only). */
  readonly allowLoopback?: boolean;
  /** Private addresses may be reached even where a rule refuses private ranges. */
  readonly allowPrivate?: boolean;
}

/** Policy inputs for {@link checkAddress}. The default (`{}`) allows public and private addresses. */
export interface AddressPolicy {
  /** Refuse private ranges (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10, 198.18/15, ...). */
  readonly refusePrivate?: boolean;
  /** What refuses them (the rule), named in the refusal. */
  readonly refusePrivateBy?: string;
  /** Local-development exception of the server being reached, if any. */
  readonly exception?: LocalDevException;
}

/** Result of {@link checkAddress}: allowed, or refused with a reason fit for a log line. */
export type AddressVerdict =
  | { readonly allowed: true; readonly info: AddressInfo }
  | { readonly allowed: false; readonly info?: AddressInfo; readonly reason: string };

interface Block {
  readonly net: [ipaddr.IPv4 | ipaddr.IPv6, number];
  readonly cidr: string;
  readonly range: Exclude<AddressRange, 'public'>;
  readonly label: string;
}

function block(cidr: string, range: Block['range'], label: string): Block {
  return { net: ipaddr.parseCIDR(cidr), cidr, range, label };
}

/**
 * IPv4 special blocks, most specific first. Documentation ranges (192.0.2/24, 198.51.100/24,
 * 203.0.113/24) are deliberately left public: nothing lives there, and examples/tests use them.
 */
const IPV4_BLOCKS: readonly Block[] = [
  // Cloud instance metadata: credentials live here. Refused always, also under an exception.
  block('169.254.169.254/32', 'metadata', 'cloud metadata service (AWS, GCP, Azure, OCI, DigitalOcean)'),
  block('169.254.170.2/32', 'metadata', 'AWS ECS task metadata and credentials'),
  block('169.254.170.23/32', 'metadata', 'AWS EKS Pod Identity agent'),
  block('100.100.100.200/32', 'metadata', 'Alibaba Cloud metadata service'),
  block('168.63.129.16/32', 'metadata', 'Azure WireServer (host agent)'),
  // 0.0.0.0 reaches the local host on Linux; the rest of 0/8 is "this network" and never a server.
  block('0.0.0.0/8', 'unspecified', 'unspecified / "this network" (RFC 1122)'),
  block('127.0.0.0/8', 'loopback', 'loopback'),
  // Link-local: neighbours on the same segment (and the metadata services above); no routed server lives here.
  block('169.254.0.0/16', 'linkLocal', 'link-local (RFC 3927)'),
  block('224.0.0.0/4', 'multicast', 'multicast'),
  block('255.255.255.255/32', 'broadcast', 'limited broadcast'),
  block('240.0.0.0/4', 'reserved', 'reserved for future use (RFC 1112)'),
  block('10.0.0.0/8', 'private', 'private (RFC 1918)'),
  block('172.16.0.0/12', 'private', 'private (RFC 1918)'),
  block('192.168.0.0/16', 'private', 'private (RFC 1918)'),
  block('100.64.0.0/10', 'private', 'carrier-grade NAT shared space (RFC 6598)'),
  block('198.18.0.0/15', 'private', 'benchmarking (RFC 2544)'),
  block('192.0.0.0/24', 'private', 'IETF protocol assignments (RFC 6890)'),
];

/** IPv6 special blocks, checked after the embedded-IPv4 forms (see {@link embeddedIpv4}). */
const IPV6_BLOCKS: readonly Block[] = [
  block('fd00:ec2::254/128', 'metadata', 'AWS instance metadata service (IPv6)'),
  block('fd00:ec2::23/128', 'metadata', 'AWS EKS Pod Identity agent (IPv6)'),
  block('::/128', 'unspecified', 'unspecified'),
  block('::1/128', 'loopback', 'loopback'),
  block('fe80::/10', 'linkLocal', 'link-local'),
  block('fec0::/10', 'reserved', 'deprecated site-local (RFC 3879)'),
  block('ff00::/8', 'multicast', 'multicast'),
  block('100::/64', 'reserved', 'discard-only (RFC 6666)'),
  block('fc00::/7', 'private', 'unique local (RFC 4193)'),
  block('2001:2::/48', 'private', 'benchmarking (RFC 5180)'),
];

/** Everything outside global unicast space (2000::/3) and the blocks above is unassigned by IANA. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/** Refusal severity, most severe first: the worst class among several embedded candidates wins. */
const SEVERITY: readonly AddressRange[] = [
  'metadata',
  'unspecified',
  'loopback',
  'linkLocal',
  'multicast',
  'broadcast',
  'reserved',
  'private',
  'public',
];

/**
 * Parses an IP literal and returns its canonical spelling, or undefined if `text` is not one.
 * Accepts brackets (`[::1]`), an IPv6 zone (`fe80::1%eth0`, dropped), and every IPv4 spelling that
 * inet_aton and the WHATWG URL parser accept: decimal `2130706433`, hex `0x7f000001`, octal
 * `0177.0.0.1`, short `127.1`, mixed `0x7f.0.0.1`, one trailing dot. (For http(s) URLs, `new URL`
 * already normalises these; a resolver answer or a rule may still carry them.)
 */
export function parseIpLiteral(text: string): string | undefined {
  const parsed = parse(text);
  return parsed?.toString();
}

/** Classifies an IP literal (any spelling {@link parseIpLiteral} accepts); undefined if not an IP literal. */
export function classifyAddress(text: string): AddressInfo | undefined {
  const ip = parse(text);
  if (!ip) return undefined;
  if (ip.kind() === 'ipv4') return { ...classifyV4(ip as ipaddr.IPv4), family: 4 };
  return classifyV6(ip as ipaddr.IPv6);
}

/**
 * Decides whether an address may be reached under `policy`. Refused whatever the policy says:
 * metadata, unspecified, link-local, multicast, broadcast, reserved (in any embedded spelling).
 * Loopback only under `exception.allowLoopback`; private unless `refusePrivate` (and no `allowPrivate`).
 */
export function checkAddress(text: string, policy: AddressPolicy = {}): AddressVerdict {
  const info = classifyAddress(text);
  if (!info) return { allowed: false, reason: `${JSON.stringify(text.slice(0, 80))} is not an IP address` };
  switch (info.range) {
    case 'public':
      return { allowed: true, info };
    case 'private':
      if (!policy.refusePrivate || policy.exception?.allowPrivate) return { allowed: true, info };
      return {
        allowed: false,
        info,
        reason: `${describe(info)}; ${policy.refusePrivateBy ? `private addresses are refused: ${policy.refusePrivateBy}` : 'private addresses are refused by rule'}`,
      };
    case 'loopback':
      if (policy.exception?.allowLoopback) return { allowed: true, info };
      return { allowed: false, info, reason: `${describe(info)}; allowed only under a local-development exception` };
    default:
      return { allowed: false, info, reason: `${describe(info)}; refused always` };
  }
}

/** "127.0.0.1 is loopback [127.0.0.0/8]" / "::ffff:7f00:1 embeds 127.0.0.1 (IPv4-mapped), which is ..." */
export function describe(info: AddressInfo): string {
  const what = info.block ? `${info.label} [${info.block}]` : 'public';
  if (info.embedded) return `${info.address} embeds ${info.embedded.address} (${info.embedded.via}), which is ${what}`;
  return `${info.address} is ${what}`;
}

// ---------------------------------------------------------------------------------------------------

function parse(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 100) return undefined;
  let t = text;
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  if (t.includes(':')) {
    const core = t.split('%', 1)[0]!;
    if (!net.isIPv6(core)) return undefined;
    // Canonicalise through the WHATWG parser: ipaddr.js reads "::127.0.0.1" as IPv4-mapped, which it is not.
    const canonical = new URL(`http://[${core}]/`).hostname.slice(1, -1);
    return ipaddr.IPv6.parse(canonical);
  }
  const value = parseWhatwgIpv4(t);
  if (value === undefined) return undefined;
  return new ipaddr.IPv4([value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]);
}

/**
 * The WHATWG URL "IPv4 parser" (as inet_aton, plus an empty "0x" part read as 0): 1 to 4 dot-separated
 * numbers in decimal, hex (0x) or octal (leading 0); the last one fills the remaining bytes.
 */
function parseWhatwgIpv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    if (part === '') return undefined;
    let digits = part;
    let radix = 10;
    if (/^0[xX]/.test(digits)) {
      radix = 16;
      digits = digits.slice(2);
    } else if (digits.length > 1 && digits.startsWith('0')) {
      radix = 8;
      digits = digits.slice(1);
    }
    const valid = radix === 16 ? /^[0-9a-fA-F]*$/ : radix === 8 ? /^[0-7]*$/ : /^[0-9]+$/;
    if (!valid.test(digits)) return undefined;
    numbers.push(digits === '' ? 0 : parseInt(digits, radix));
  }
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255)) return undefined;
  if (last >= 256 ** (4 - numbers.length)) return undefined;
  return numbers.reduce((acc, n, i) => acc + n * 256 ** (3 - i), last);
}

function classifyV4(ip: ipaddr.IPv4): Omit<AddressInfo, 'family'> {
  const address = ip.toString();
  for (const b of IPV4_BLOCKS) {
    if (ip.match(b.net as [ipaddr.IPv4, number])) return { address, range: b.range, block: b.cidr, label: b.label };
  }
  return { address, range: 'public', block: '', label: 'public' };
}

function classifyV6(ip: ipaddr.IPv6): AddressInfo {
  const address = ip.toString();
  // The exact specials first: "::" and "::1" also sit inside the IPv4-compatible block.
  for (const b of IPV6_BLOCKS.slice(0, 4)) {
    if (ip.match(b.net as [ipaddr.IPv6, number])) return { address, family: 6, range: b.range, block: b.cidr, label: b.label };
  }
  const candidates = embeddedIpv4(ip).map((c) => ({ ...c, info: classifyV4(c.v4) }));
  if (candidates.length > 0) {
    // With several possible readings (local-use NAT64 layouts, Teredo), a reading into 0.0.0.0/8 is
    // ignored while another exists: a translator never forwards 0/8, and every /96-layout address
    // reads as 0.x.x.x in the /48 and /56 layouts. Of the rest, the most severe class wins.
    const meaningful = candidates.filter((c) => c.info.range !== 'unspecified');
    let worst: (typeof candidates)[number] | undefined;
    for (const c of meaningful.length > 0 ? meaningful : candidates) {
      if (!worst || SEVERITY.indexOf(c.info.range) < SEVERITY.indexOf(worst.info.range)) worst = c;
    }
    const w = worst!;
    return {
      address,
      family: 6,
      range: w.info.range,
      block: w.info.block,
      label: w.info.label,
      embedded: { address: w.info.address, via: w.via },
    };
  }
  for (const b of IPV6_BLOCKS.slice(4)) {
    if (ip.match(b.net as [ipaddr.IPv6, number])) return { address, family: 6, range: b.range, block: b.cidr, label: b.label };
  }
  if (!ip.match(IPV6_GLOBAL_UNICAST as [ipaddr.IPv6, number])) {
    return { address, family: 6, range: 'reserved', block: '::/0 outside 2000::/3', label: 'not global unicast (unassigned)' };
  }
  return { address, family: 6, range: 'public', block: '', label: 'public' };
}

/**
 * Every IPv4 address an IPv6 address may lead to. Forms: IPv4-mapped ::ffff:0:0/96, IPv4-translated
 * ::ffff:0:0:0/96 (SIIT), IPv4-compatible ::/96 (deprecated), NAT64 64:ff9b::/96, local-use NAT64
 * 64:ff9b:1::/48 (every RFC 6052 prefix length it allows: /48, /56, /64, /96 — the operator's choice
 * is unknown, so the worst meaningful reading wins), 6to4 2002::/16, Teredo 2001::/32 (server and de-obfuscated
 * client). Operator-chosen NAT64 prefixes outside these cannot be recognised.
 */
function embeddedIpv4(ip: ipaddr.IPv6): { v4: ipaddr.IPv4; via: string }[] {
  const b = ip.toByteArray();
  const p = ip.parts;
  const v4 = (...bytes: number[]) => new ipaddr.IPv4(bytes);
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && p[5] === 0xffff) return [{ v4: v4(b[12]!, b[13]!, b[14]!, b[15]!), via: 'IPv4-mapped' }];
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return [{ v4: v4(b[12]!, b[13]!, b[14]!, b[15]!), via: 'IPv4-translated' }];
  if (zero(0, 6)) return [{ v4: v4(b[12]!, b[13]!, b[14]!, b[15]!), via: 'IPv4-compatible' }];
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return [{ v4: v4(b[12]!, b[13]!, b[14]!, b[15]!), via: 'NAT64 64:ff9b::/96' }];
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) {
    const via = 'NAT64 local-use 64:ff9b:1::/48';
    return [
      { v4: v4(b[6]!, b[7]!, b[9]!, b[10]!), via: `${via}, /48 layout` },
      { v4: v4(b[7]!, b[9]!, b[10]!, b[11]!), via: `${via}, /56 layout` },
      { v4: v4(b[9]!, b[10]!, b[11]!, b[12]!), via: `${via}, /64 layout` },
      { v4: v4(b[12]!, b[13]!, b[14]!, b[15]!), via: `${via}, /96 layout` },
    ];
  }
  if (p[0] === 0x2002) return [{ v4: v4(b[2]!, b[3]!, b[4]!, b[5]!), via: '6to4 2002::/16' }];
  if (p[0] === 0x2001 && p[1] === 0) {
    return [
      { v4: v4(b[4]!, b[5]!, b[6]!, b[7]!), via: 'Teredo server' },
      { v4: v4(b[12]! ^ 0xff, b[13]! ^ 0xff, b[14]! ^ 0xff, b[15]! ^ 0xff), via: 'Teredo client' },
    ];
  }
  return [];
}
