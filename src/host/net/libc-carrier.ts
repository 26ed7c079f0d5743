// The libc carrier of a contained server with a network door (issue 44 item 1): programs that ignore the proxy
// variables and open sockets through the C library — libpq (psql, psycopg2), curl without proxy settings, Chromium,
// C extensions — are carried through the door by the system's proxychains-ng (Debian's `proxychains4`), preloaded.
// Measured 2026-12-06 (proxychains4 4.16, bubblewrap 0.8.0; /tmp/pxc/REPORT.md of that day, summed up in
// docs/sandbox.md): with `proxy_dns_daemon` every libc lookup of a name gets a stand-in address in 240.0.0.0/4 from
// proxychains4-daemon (a UDP service on the sandbox's own 127.0.0.1:1053), and a TCP connect to it is turned into
// `CONNECT name:port` to the door, which decides the name by the user's rules like any other client's. The daemon
// (not the in-process table of `proxy_dns`) is what keeps names working across processes that resolve in one and
// connect in another (Chromium's zygote, a forked child).
//
// How it is put in: the config (constant, below) is written once into MCP Gate's own private temp folder and shown
// read-only at PROXYCHAINS_MOUNT; the sandbox's first command is a few lines of /bin/sh (CARRIER_SCRIPT) that start
// the daemon inside the sandbox — its network, PID and mount namespaces, its seccomp filter and limits, so it ends
// with the sandbox (bubblewrap's PID 1 leaving kills it) and never runs with more than the server has — wait until
// it listens, then set LD_PRELOAD to the library's system path (before the server's own, a user server's) and exec
// the server. A repository's LD_PRELOAD is still refused (src/trust/plan/launch-plan.ts refuses LD_* variables).
//
// Not carried here: Go (its own resolver and raw syscalls), static binaries, a child that clears LD_PRELOAD, setuid
// programs; they reach nothing (no route) unless ./transparent-carrier.ts carries them (as root). Without proxychains4 on this machine the carrier is simply off.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DOOR_PORT } from './egress';

/** Where the config is shown inside the sandbox (beside the network shims). */
export const PROXYCHAINS_MOUNT = '/run/mcp-gate/proxychains.conf';
/** The daemon's port on the sandbox's own loopback, and its stand-in range (must equal the config's remote_dns_subnet). */
export const DNS_DAEMON_PORT = 1053;
export const STAND_IN_SUBNET = 240;

/**
 * The config: one HTTP proxy (the door), names through the daemon, loopback never tunnelled (the door and the shims
 * live there), no `[proxychains]` lines on the server's stderr.
 */
export const PROXYCHAINS_CONF = [
  'strict_chain',
  'quiet_mode',
  `proxy_dns_daemon 127.0.0.1:${DNS_DAEMON_PORT}`,
  `remote_dns_subnet ${STAND_IN_SUBNET}`,
  'tcp_read_time_out 15000',
  'tcp_connect_time_out 8000',
  'localnet 127.0.0.0/255.0.0.0',
  'localnet ::1/128',
  '[ProxyList]',
  `http 127.0.0.1 ${DOOR_PORT}`,
  '',
].join('\n');

/** What the sandbox needs to carry libc clients: the system's library and daemon, and the config file here. */
export interface LibcCarrier {
  library: string;
  daemon: string;
  conf: string;
  /** coreutils' sleep, for the wait until the daemon listens. */
  sleep: string;
}

const LIBRARIES = [
  '/usr/lib/x86_64-linux-gnu/libproxychains.so.4',
  '/usr/lib/aarch64-linux-gnu/libproxychains.so.4',
  '/usr/lib/libproxychains4.so',
  '/usr/lib64/libproxychains4.so',
  '/usr/local/lib/libproxychains4.so',
];
const DAEMONS = ['/usr/bin/proxychains4-daemon', '/usr/local/bin/proxychains4-daemon'];

/** Why libc clients are not carried here, for the sandbox's description; undefined when they are. */
export const NOT_INSTALLED =
  'libc clients without proxy settings (libpq, curl, C extensions) are not carried (proxychains4 not installed: `apt-get install proxychains4` carries them)';

function firstFile(candidates: readonly string[]): string | undefined {
  for (const c of candidates) {
    try {
      if (fs.statSync(c).isFile()) return fs.realpathSync(c);
    } catch {
      // next
    }
  }
  return undefined;
}

/** The system's proxychains-ng library and daemon (system paths only, never PATH); undefined when either is missing. */
export function findProxychains(
  libraries: readonly string[] = LIBRARIES,
  daemons: readonly string[] = DAEMONS,
): { library: string; daemon: string; sleep: string } | undefined {
  const library = firstFile(libraries);
  const daemon = firstFile(daemons);
  const sleep = firstFile(['/usr/bin/sleep', '/bin/sleep']);
  return library && daemon && sleep ? { library, daemon, sleep } : undefined;
}

let written: string | undefined;

/** The config file in MCP Gate's own private temp folder (0700, the file 0444), written once a process. */
function confFile(): string {
  if (written && fs.existsSync(written)) return written;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-pc-'));
  const file = path.join(dir, 'proxychains.conf');
  fs.writeFileSync(file, PROXYCHAINS_CONF, { mode: 0o444 });
  written = file;
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return file;
}

/** The carrier for a sandbox with a door, or undefined (proxychains4 not installed, or its config cannot be written). */
export function defaultLibcCarrier(): LibcCarrier | undefined {
  const found = findProxychains();
  if (!found) return undefined;
  try {
    return { ...found, conf: confFile() };
  } catch {
    return undefined;
  }
}

/**
 * The sandbox's first command before the server: `sh -c CARRIER_SCRIPT mcp-gate-carrier <daemon> <library> <sleep> <server argv…>`.
 * Starts the daemon (no LD_PRELOAD, stdio on /dev/null so it never touches the server's MCP stream), waits until
 * 127.0.0.1:1053 is bound in this network namespace (at most about 2 s: /proc/net/udp, shell built-ins only), then
 * puts the library first in LD_PRELOAD and execs the server (same PID, same process group).
 */
const UDP_LISTEN = `0100007F:${DNS_DAEMON_PORT.toString(16).toUpperCase().padStart(4, '0')}`;
export const CARRIER_SCRIPT = [
  'd=$1; l=$2; z=$3; shift 3',
  `LD_PRELOAD= "$d" -i 127.0.0.1 -p ${DNS_DAEMON_PORT} -r ${STAND_IN_SUBNET} </dev/null >/dev/null 2>&1 &`,
  `up() { while read -r _ a _; do [ "$a" = ${UDP_LISTEN} ] && return 0; done </proc/net/udp; return 1; }`,
  'i=0; while [ $i -lt 200 ] && ! up; do "$z" 0.01; i=$((i+1)); done',
  'export LD_PRELOAD="$l${LD_PRELOAD:+ $LD_PRELOAD}"',
  'exec "$@"',
].join('\n');

export function carrierArgv(c: LibcCarrier): string[] {
  return ['/bin/sh', '-c', CARRIER_SCRIPT, 'mcp-gate-carrier', c.daemon, c.library, c.sleep];
}

export function carrierEnv(): Record<string, string> {
  return { PROXYCHAINS_CONF_FILE: PROXYCHAINS_MOUNT, PROXYCHAINS_QUIET_MODE: '1' };
}
