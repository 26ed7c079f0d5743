// The transparent carrier of a contained server with a network door (issue 44 item 1): clients that honour no proxy
// variable and load no preload — Go (its own resolver, raw syscalls), static binaries, a child that cleared
// LD_PRELOAD — are carried through the door too, by name. Measured and prototyped on branch net6 (proto/net6 there:
// a CGO_ENABLED=0 Go client and a Node raw TCP client in a real sandbox, root, +25-30 ms a start).
//
// How (nothing here decides: every name and every connection is decided by the door, ./egress.ts, as before):
//   - The door helper (nsenter into the sandbox's user + network namespaces, as ./door.ts openDoor does; it holds
//     the capabilities of the sandbox's user namespace over its network namespace, the server none — bwrap's
//     `--cap-drop ALL`, and the seccomp filter refuses new user namespaces) also loads NFT_RULES — every TCP
//     connection not to 127.0.0.0/8 redirected to 127.0.0.1:3129 — makes every IPv4 address local to the namespace
//     (`ip route add local default dev lo`, so a connect to any address reaches that rule instead of "no route"),
//     binds UDP 127.0.0.1:53 there and hands it to MCP Gate with the door's listener.
//   - MCP Gate answers DNS on that socket (serveDns): a name the rules allow now gets a stand-in address
//     241.x.y.z (Egress.answerName, one per name a start); any other name is NXDOMAIN and a `blocked` network event
//     naming the rule that would allow it. The sandbox's /etc/resolv.conf is `nameserver 127.0.0.1`.
//   - In the sandbox, before the server, FORWARDER (perl: Debian's perl-base, Essential) accepts the redirected
//     connections, reads each one's original destination (SO_ORIGINAL_DST: Node has no getsockopt) and asks the
//     door `CONNECT address:port`. The door turns a stand-in back into its name (Egress.standInName) and decides,
//     resolves and checks that name by the rules like any client's; an address that is no stand-in is decided as an
//     address (a rule naming it, or refused: loopback, this machine's addresses, metadata, 240/4… never reachable).
//     A refused connection is reset.
//   - The other carriers stay as they are and nothing is carried twice: the Node shim and proxychains4 connect to the
//     door at 127.0.0.1:3128 themselves, which the rule leaves alone (127/8), and ask it by name; proxychains4's own
//     stand-ins (240.0.0.0/8) never leave its process.
// Why this way: a user-mode network (pasta, slirp4netns) cannot join a sandbox made by bwrap and routes to every
// address it can (./egress.ts); a redirect inside the sandbox's own namespace keeps the door the one way out.
// Not root: the door helper's nft and ip, run in bwrap's user namespace as the user's uid, lose their capabilities at
// exec (and bwrap nests a second user namespace that owns nothing of the network). So util-linux's unshare makes the
// network namespace first, in a user namespace that maps the user to its root; bubblewrap runs inside it with
// `--share-net` and `--uid/--gid` of the user (the server sees its own uid, as before), and the door enters unshare's
// namespaces (doorTarget: bubblewrap's own process), where nft and ip run as that namespace's root. The server's own
// user namespace is a child of it: with bwrap's `--cap-drop ALL` it holds nothing over the rules (measured: nft inside
// says "Operation not permitted"). Measured as `nobody` here (proto in the session's notes).
// When it is off (fails soft, like ./libc-carrier.ts): nft, ip or perl missing, not root and unshare missing or not
// allowed to make user namespaces, or the helper's setup failing at a start (a network event says so). Then nothing
// changes: such clients reach nothing (no route, no DNS) and the sandbox's description says they are not carried.
import { spawnSync } from 'node:child_process';
import type * as dgram from 'node:dgram';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DoorHelper } from './door';
import { DOOR_PORT, type Egress } from './egress';

/**
 * The forwarder's port on the sandbox's loopback, and the port MCP Gate's DNS socket is bound to there: 127.0.0.1:53
 * is sent to it by the rules, so binding it needs no privilege (the helper's own process may hold no capability: it
 * can be started before bubblewrap has written the sandbox's uid map, the programs it runs after).
 */
export const FORWARD_PORT = 3129;
export const DNS_PORT = 1054;
/** Where the forwarder is shown inside the sandbox (beside the network shims), read-only. */
export const FORWARDER_MOUNT = '/run/mcp-gate/forward.pl';
export const RESOLV_CONF = 'nameserver 127.0.0.1\noptions attempts:2 timeout:2\n';

/** The sandbox's nftables table: TCP to anything but its own loopback goes to the forwarder. */
export const NFT_RULES = `table ip mcpgate {
  chain out {
    type nat hook output priority -100; policy accept;
    ip daddr 127.0.0.1 udp dport 53 redirect to :${DNS_PORT}
    ip daddr 127.0.0.0/8 return
    meta l4proto tcp redirect to :${FORWARD_PORT}
  }
}
`;

/** The same for IPv6 (loaded apart: a namespace or kernel without IPv6 NAT keeps IPv4 carried, and IPv6 unreachable). */
export const NFT6_RULES = `table ip6 mcpgate6 {
  chain out {
    type nat hook output priority -100; policy accept;
    ip6 daddr ::1 return
    meta l4proto tcp redirect to :${FORWARD_PORT}
  }
}
`;

/**
 * The forwarder (run inside the sandbox: `perl forward.pl 3129 3128`). Decides nothing: each redirected connection
 * becomes `CONNECT <original address>:<port>` to the door; refused (any answer but 200), the client's connection is
 * reset. One process per connection; a half-close is passed on. It loads no module (`use Socket` alone costs ~35 ms
 * a start here), so the Linux constants are written out (AF_INET 2, SOCK_STREAM 1, SOL_SOCKET 1, SO_REUSEADDR 2,
 * SO_LINGER 13, SOL_IP 0, SO_ORIGINAL_DST 80; AF_INET6 10, SOL_IPV6 41, IPV6_V6ONLY 26, IP6T_SO_ORIGINAL_DST 80: the same on
 * x86-64 and arm64). It listens on [::1] too where the namespace has IPv6 (NFT6_RULES send IPv6 TCP there), and asks
 * `CONNECT [address]:port` for those. Once it listens it forks and the first
 * process exits, so the sandbox's first command waits for exactly that and polls nothing.
 */
export const FORWARDER = `# MCP Gate's transparent forwarder (src/host/net/transparent-carrier.ts). Decides nothing: the door does.
my ($lport, $door) = @ARGV;
sub addr { pack('S n C4 x8', 2, $_[0], 127, 0, 0, 1) }
socket(my $l, 2, 1, 0) or die "socket: $!";
setsockopt($l, 1, 2, 1);
bind($l, addr($lport)) or die "bind: $!";
listen($l, 128) or die "listen: $!";
# [::1] too, where the namespace has IPv6 (AF_INET6 10; IPV6_V6ONLY 26 at SOL_IPV6 41): its redirected connections
my $l6;
if (socket($l6, 10, 1, 0)) {
  setsockopt($l6, 41, 26, 1); setsockopt($l6, 1, 2, 1);
  (bind($l6, pack('S n N x15 C N', 10, $lport, 0, 1, 0)) && listen($l6, 128)) or undef $l6;
}
my @ls = grep { defined } ($l, $l6);
$SIG{CHLD} = 'IGNORE';
my $daemon = fork; die "fork: $!" unless defined $daemon; exit 0 if $daemon;
while (1) {
  my $lin = ''; vec($lin, fileno($_), 1) = 1 for @ls;
  select(my $lout = $lin, undef, undef, undef) > 0 or do { select(undef, undef, undef, 0.05); next };
  for my $s (grep { vec($lout, fileno($_), 1) } @ls) {
  accept(my $c, $s) or next;
  my $v4 = fileno($s) == fileno($l);
  my $pid = fork; next if !defined $pid || $pid;
  close $_ for @ls;
  my $reset = sub { setsockopt($c, 1, 13, pack('ii', 1, 0)); exit 1 };
  my $to;
  if ($v4) {
    my $orig = getsockopt($c, 0, 80) or $reset->();
    my ($port, @a) = unpack('x2 n C4', $orig);
    $to = join('.', @a) . ":$port";
  } else {
    my $orig = getsockopt($c, 41, 80) or $reset->();
    my ($port, undef, @w) = unpack('x2 n N n8', $orig);
    my $ip = join(':', map { sprintf('%x', $_) } @w);
    $ip =~ s/(?:^|:)0(?::0)+(?::|$)/::/;
    $to = "[$ip]:$port";
  }
  socket(my $d, 2, 1, 0) or $reset->();
  connect($d, addr($door)) or $reset->();
  syswrite($d, "CONNECT $to HTTP/1.1\\r\\nhost: $to\\r\\n\\r\\n");
  my $head = '';
  while ($head !~ /\\r\\n\\r\\n/) { sysread($d, $head, 1, length $head) or $reset->(); $reset->() if length $head > 16384 }
  $reset->() unless $head =~ m{^HTTP/1\\.[01] 200 };
  my @open = ($c, $d);
  my %other = (fileno($c) => $d, fileno($d) => $c);
  while (@open) {
    my $rin = ''; vec($rin, fileno($_), 1) = 1 for @open;
    select(my $rout = $rin, undef, undef, undef) > 0 or next;
    for my $h (grep { vec($rout, fileno($_), 1) } @open) {
      my $n = sysread($h, my $buf, 65536);
      my $o = $other{fileno $h};
      if (!$n) { @open = grep { $_ != $h } @open; shutdown($o, 1); next }
      for (my $off = 0; $off < $n;) { my $w = syswrite($o, $buf, $n - $off, $off); exit 0 unless $w; $off += $w }
    }
  }
  exit 0;
  }
}
`;

/** What the sandbox needs for the carrier: the system's tools (host paths) and MCP Gate's two files. */
export interface TransparentCarrier {
  /** Run by the door helper in the sandbox's network namespace. */
  ip: string;
  nft: string;
  /** Run inside the sandbox. */
  perl: string;
  /** FORWARDER and RESOLV_CONF, written once a process into MCP Gate's private temp folder. */
  forwarder: string;
  resolvConf: string;
  /** Where resolv.conf is shown: /etc/resolv.conf, or the file it links to; undefined when the host has none (a resolver's default is 127.0.0.1 then). */
  resolvTarget?: string;
  /**
   * Not root: util-linux's unshare, which makes the network namespace first, in a user namespace that maps MCP Gate's
   * user to its root (so the door helper's nft and ip keep their capabilities there); bubblewrap runs inside it with
   * `--share-net` and the user's own uid and gid (ROOTLESS, ../sandbox/sandbox.ts), and the door enters that namespace.
   */
  unshare?: string;
}

/** unshare's arguments before bubblewrap's command line, for a carrier that is not root's. */
export const ROOTLESS = ['--user', '--map-root-user', '--net', '--'];

/** Why the carrier is off here, for the sandbox's description. */
export interface CarrierOff {
  off: string;
}

export const IP_PATHS = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];
export const UNSHARE_PATHS = ['/usr/bin/unshare', '/bin/unshare'];
export const NFT_PATHS = ['/usr/sbin/nft', '/sbin/nft'];
export const PERL_PATHS = ['/usr/bin/perl', '/bin/perl'];

/** The description's words when the carrier is off. */
export function notCarried(why: string): string {
  return `Go and static binaries: not carried (${why})`;
}

function firstExecutable(candidates: readonly string[]): string | undefined {
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      if (fs.statSync(c).isFile()) return fs.realpathSync(c);
    } catch {
      // next
    }
  }
  return undefined;
}

let written: { dir: string; forwarder: string; resolvConf: string } | undefined;

/** The forwarder and resolv.conf in MCP Gate's own private temp folder (0700, the files 0444), written once a process. */
function files(): { forwarder: string; resolvConf: string } {
  if (written && fs.existsSync(written.forwarder) && fs.existsSync(written.resolvConf)) return written;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-tc-'));
  const forwarder = path.join(dir, 'forward.pl');
  const resolvConf = path.join(dir, 'resolv.conf');
  fs.writeFileSync(forwarder, FORWARDER, { mode: 0o444 });
  fs.writeFileSync(resolvConf, RESOLV_CONF, { mode: 0o444 });
  written = { dir, forwarder, resolvConf };
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return written;
}

/** Where the sandbox's resolv.conf goes: /etc/resolv.conf, or what it links to (e.g. under /run, which the sandbox does not show). */
function resolvTarget(): string | undefined {
  try {
    const st = fs.lstatSync('/etc/resolv.conf');
    if (!st.isSymbolicLink()) return st.isFile() ? '/etc/resolv.conf' : undefined;
    return fs.realpathSync('/etc/resolv.conf');
  } catch {
    return undefined;
  }
}

/**
 * The carrier for a sandbox with a door, or why it is off here: nft, ip and perl at their system paths (never PATH: a
 * workspace's bin folder could name one); not root, also unshare and a user namespace it may make (probed once).
 */
export function transparentCarrier(
  o: {
    root?: boolean;
    ip?: readonly string[];
    nft?: readonly string[];
    perl?: readonly string[];
    unshare?: readonly string[];
  } = {},
): TransparentCarrier | CarrierOff {
  if (process.platform !== 'linux') return { off: 'Linux only' };
  const root = o.root ?? process.geteuid?.() === 0;
  const ip = firstExecutable(o.ip ?? IP_PATHS);
  const nft = firstExecutable(o.nft ?? NFT_PATHS);
  const perl = firstExecutable(o.perl ?? PERL_PATHS);
  const unshare = root ? undefined : firstExecutable(o.unshare ?? UNSHARE_PATHS);
  const missing = [
    !nft && 'nft (`apt-get install nftables`)',
    !perl && 'perl (`apt-get install perl`)',
    !ip && 'ip (`apt-get install iproute2`)',
    !root && !unshare && 'unshare (`apt-get install util-linux`)',
  ].filter(Boolean);
  if (missing.length) return { off: `${missing.join(', ')} missing` };
  if (unshare) {
    const why = rootlessProbe(unshare);
    if (why) return { off: `MCP Gate runs as uid ${process.geteuid?.()} and ${why}` };
  }
  try {
    return { ip: ip!, nft: nft!, perl: perl!, ...files(), resolvTarget: resolvTarget(), ...(unshare ? { unshare } : {}) };
  } catch (e) {
    return { off: `its files could not be written (${(e as Error).message})` };
  }
}

const probed = new Map<string, string | undefined>();

/** Why `unshare --user --map-root-user --net` cannot run here (undefined when it can), asked once a process. */
function rootlessProbe(unshare: string): string | undefined {
  if (probed.has(unshare)) return probed.get(unshare);
  const r = spawnSync(unshare, [...ROOTLESS, '/bin/true'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'ignore', 'pipe'] });
  const why =
    r.status === 0
      ? undefined
      : `unshare cannot make a user and network namespace here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().slice(0, 200)}; allow unprivileged user namespaces)`;
  probed.set(unshare, why);
  return why;
}

/**
 * The process whose namespaces the door enters: bubblewrap's first process (`pid`) as root; not root, its parent —
 * bubblewrap itself, in unshare's user and network namespaces (the sandbox's own user namespace is a child of that
 * one and owns nothing of the network).
 */
export function doorTarget(c: TransparentCarrier, pid: number): number {
  if (!c.unshare) return pid;
  try {
    const m = /^PPid:\s*(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // gone: the door then fails to open, and the server does not start
  }
  return pid;
}

/**
 * The sandbox's first command before the server (and before the libc carrier's):
 * `sh -c TRANSPARENT_SCRIPT mcp-gate-transparent <perl> <forwarder> <rest…>`. Runs the forwarder (no preload, no perl
 * options from the server's environment, stdio on /dev/null so it never touches the MCP stream), which returns once
 * 127.0.0.1:3129 listens (its serving process stays), then execs the rest — also when the forwarder failed.
 */
export const TRANSPARENT_SCRIPT = [
  'p=$1; f=$2; shift 2',
  `( unset LD_PRELOAD PERL5OPT PERL5LIB PERLLIB PERL5DB; exec "$p" "$f" ${FORWARD_PORT} ${DOOR_PORT} </dev/null >/dev/null 2>&1 )`,
  'exec "$@"',
].join('\n');

export function transparentArgv(c: TransparentCarrier): string[] {
  return ['/bin/sh', '-c', TRANSPARENT_SCRIPT, 'mcp-gate-transparent', c.perl, FORWARDER_MOUNT];
}

/**
 * What the door helper runs in the sandbox's namespaces (argv: nft, ip): waits until the sandbox's user namespace has
 * its uid map (nsenter may enter it before bubblewrap wrote it; nft and ip run as root of it only after), the rules
 * and the route (undone if half made; then IPv6's, whose failure leaves IPv6 unreachable and IPv4 carried), the door's listener (sent first, as openDoor expects), then the DNS socket —
 * or, when the rules could not be set, `{off}` with why (the door stays; the carrier is off for this start). The
 * helper then exits.
 */
export const HELPER_SCRIPT = `const {execFileSync:x}=require('child_process'),net=require('net'),dgram=require('dgram'),fs=require('fs');
const [nft,ip]=process.argv.slice(1);let off='';
for(let i=0;i<300&&!fs.readFileSync('/proc/self/uid_map','utf8').trim();i++)Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0,5);
try{x(ip,['link','set','lo','up'],{stdio:['ignore','ignore','pipe']})}catch{}
try{x(nft,['-f','-'],{input:${JSON.stringify(NFT_RULES)},stdio:['pipe','ignore','pipe']});try{x(ip,['route','add','local','default','dev','lo'],{stdio:['ignore','ignore','pipe']})}catch(e){try{x(nft,['delete','table','ip','mcpgate'],{stdio:'ignore'})}catch{}throw e}}catch(e){off=(String(e.stderr||'').trim()||e.message).slice(0,300)}
if(!off)try{x(nft,['-f','-'],{input:${JSON.stringify(NFT6_RULES)},stdio:['pipe','ignore','pipe']});try{x(ip,['-6','route','add','local','default','dev','lo'],{stdio:['ignore','ignore','pipe']})}catch{x(nft,['delete','table','ip6','mcpgate6'],{stdio:'ignore'})}}catch{}
const s=net.createServer();s.on('error',e=>{console.error(e.message);process.exit(3)});
s.listen(${DOOR_PORT},'127.0.0.1',()=>process.send('door',s,()=>{if(off)return process.send({off},()=>process.exit(0));
const d=dgram.createSocket('udp4');d.on('error',e=>process.send({off:'DNS: '+e.message},()=>process.exit(0)));
d.bind(${DNS_PORT},'127.0.0.1',()=>process.send('dns',d,()=>process.exit(0)))}))`;

/**
 * The door helper for openDoor (./door.ts) with the carrier: DNS answered by `egress` once the helper sends its
 * socket; `off(why)` when the helper could not set the carrier up (the door opens all the same).
 */
export function transparentDoor(c: TransparentCarrier, egress: Egress, off: (why: string) => void): DoorHelper {
  return {
    script: HELPER_SCRIPT,
    args: [c.nft, c.ip],
    message(m, handle) {
      if (m === 'dns' && handle && typeof (handle as dgram.Socket).send === 'function') {
        serveDns(handle as dgram.Socket, egress);
        return true;
      }
      off(
        typeof m === 'object' && m && typeof (m as { off?: unknown }).off === 'string'
          ? (m as { off: string }).off
          : 'the door helper sent something else than its DNS socket',
      );
      return true;
    },
    ended: off,
  };
}

// ------------------------------------------------------------------------------------------------ DNS

const TYPE_A = 1;
/** Queries answered at once; more are dropped (a client asks again). */
const MAX_PENDING = 256;

/** The one question of a DNS query: name (lower case, no trailing dot), type, and where the question ends. */
export function dnsQuestion(q: Buffer): { name: string; type: number; end: number } | undefined {
  if (q.length < 17 || q.length > 512 || (q.readUInt16BE(2) & 0xf800) !== 0 || q.readUInt16BE(4) !== 1) return undefined; // a standard query, one question
  const labels: string[] = [];
  let i = 12;
  while (i < q.length && q[i] !== 0) {
    const len = q[i];
    if (len > 63 || i + 1 + len > q.length) return undefined;
    labels.push(
      q
        .subarray(i + 1, i + 1 + len)
        .toString('latin1')
        .toLowerCase(),
    );
    i += 1 + len;
  }
  if (i + 5 > q.length) return undefined;
  const name = labels.join('.');
  if (name.length > 253) return undefined;
  return { name, type: q.readUInt16BE(i + 1), end: i + 5 };
}

/** The answer to `q` (its header and question): rcode (0, 3 NXDOMAIN, 5 refused), with one A record when `a` is given. */
export function dnsReply(q: Buffer, end: number, rcode: number, a?: string): Buffer {
  const head = Buffer.from(q.subarray(0, end));
  head.writeUInt16BE(0x8180 | (q.readUInt16BE(2) & 0x0100) | rcode, 2); // response, recursion desired (as asked) and available
  head.writeUInt16BE(a ? 1 : 0, 6);
  head.writeUInt16BE(0, 8);
  head.writeUInt16BE(0, 10);
  if (!a) return head;
  const rr = Buffer.alloc(16);
  rr.writeUInt16BE(0xc00c, 0); // the question's name
  rr.writeUInt16BE(TYPE_A, 2);
  rr.writeUInt16BE(1, 4); // IN
  rr.writeUInt32BE(5, 6); // TTL 5 s: a rule changed is seen soon (and every connection is decided again anyway)
  rr.writeUInt16BE(4, 10);
  a.split('.').forEach((o, k) => rr.writeUInt8(Number(o), 12 + k));
  return Buffer.concat([head, rr]);
}

/**
 * Answers the sandbox's DNS on `socket` (bound in its namespace by the door helper): an allowed name gets its
 * stand-in (an A record; other types of it an empty answer), any other name NXDOMAIN (Egress.answerName writes the
 * event). The socket closes with `egress`.
 */
export function serveDns(socket: dgram.Socket, egress: Egress): void {
  egress.hold(socket);
  socket.on('error', () => undefined);
  let pending = 0;
  socket.on('message', (msg: Buffer, from: dgram.RemoteInfo) => {
    const q = dnsQuestion(msg);
    if (!q || pending >= MAX_PENDING) return;
    const send = (b: Buffer) => socket.send(b, from.port, from.address, () => undefined);
    if (!q.name || !/^[a-z0-9_.-]+$/.test(q.name)) return send(dnsReply(msg, q.end, 5));
    pending++;
    void egress
      .answerName(q.name)
      .then(
        (a) => send(a ? dnsReply(msg, q.end, 0, q.type === TYPE_A ? a : undefined) : dnsReply(msg, q.end, 3)),
        () => send(dnsReply(msg, q.end, 2)),
      )
      .finally(() => pending--);
  });
}
