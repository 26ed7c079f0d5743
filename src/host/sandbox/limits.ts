// Resource limits of a contained server (memory, processes and threads, CPU time): how they are enforced here, how
// MCP Gate notices that one was reached, and the words for both. The values are the user's (src/policy/
// sandbox-profile.ts: DEFAULT_LIMITS, raised by a sandbox entry); this file only applies them.
//
// Enforced (measured on this machine kind, Linux 6.18, bubblewrap 0.8, as root and as an unprivileged user):
//   - rlimits, on every contained start: the sandbox runs `prlimit --nproc --data --cpu --core -- <server>` as its
//     first command, inside the sandbox's user namespace. The kernel counts RLIMIT_NPROC per user namespace, so the
//     count is the server's own processes and threads, not every process of the user (measured: with 80 processes
//     of the same user outside, a limit of 50 still let the sandbox start 48). Hard = soft, and the sandbox has no
//     capabilities, so the server cannot raise them. RLIMIT_DATA (heap and private writable mappings) is the memory
//     limit, per process: RLIMIT_AS breaks Node below 16 GiB (V8 and WebAssembly reserve address space; measured),
//     RLIMIT_DATA does not. RLIMIT_CPU ends a process at its CPU time (SIGXCPU, SIGKILL 5 s later). RLIMIT_CORE 0:
//     a killed server writes no core file into the workspace.
//   - The kernel exempts root from RLIMIT_NPROC (measured: 100 of 100 forks under a limit of 50). So where MCP
//     Gate can make a cgroup — the cgroup v1 `pids` and `memory` hierarchies writable at its own cgroup (root on a
//     cgroup v1 machine) — the server also gets one: pids.max holds processes and threads, memory.limit_in_bytes
//     (and memsw, so swap is no way out) the whole server's memory. The launch joins it before bubblewrap runs
//     (/bin/sh writes its own pid into each cgroup.procs, then execs bwrap), so nothing the server starts is outside.
//   - Not used: `systemd-run --user --scope` (this machine kind has no user manager: PID 1 is not systemd, so it
//     could not be measured here); a cgroup v2 child of the editor's own cgroup (v2 lets a cgroup with controllers
//     hold no processes of its own, and the editor's has them — that is why systemd makes scopes).
// Noticed: a watch, once a second, reads the cgroup's pids.events and memory.oom_control, or, without a cgroup,
// counts the server's processes and threads and sums their resident memory in /proc; a limit reached stops the whole server (its PID namespace
// ends with it) with a log line that names the limit and where to raise it. An exit the limits explain (SIGXCPU, a
// kill by the memory cgroup, an out-of-memory message on stderr) is worded the same way. As root without a cgroup,
// contained starts are refused (the kernel exempts root from the process limit; see LimitMechanism).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LimitsDecision, ResourceLimits, SandboxEntry } from '../../policy/sandbox-profile';
import { descendants } from './processes';

/**
 * How the limits are held here: rlimits always; a cgroup when MCP Gate can make one. As root without a cgroup,
 * contained starts are refused: the kernel exempts root from the process limit, and a fork bomb measured here took
 * every PID of the machine within the watch's first second (fail closed: a limit that cannot be held is not claimed).
 */
export type LimitMechanism =
  | { readonly cgroup: { readonly pids: string; readonly memory: string }; readonly refused?: undefined }
  | { readonly cgroup?: undefined; readonly why: string; readonly refused?: undefined }
  | { readonly cgroup?: undefined; readonly why: string; readonly refused: { readonly reason: string; readonly fix: string } };

const IS_ROOT = typeof process.getuid === 'function' && process.getuid() === 0;

/** The mechanism for what the probe found: a cgroup, else the rlimits alone, refused for root (see above). */
export function mechanismFor(cgroup: { pids: string; memory: string } | undefined, why: string, root = IS_ROOT): LimitMechanism {
  if (cgroup) return { cgroup };
  if (!root) return { why };
  return {
    why,
    refused: {
      reason: `MCP Gate runs as root and ${why}: the kernel exempts root from the process limit, so a contained server's processes could not be limited (a fork bomb would take every process slot of this machine)`,
      fix: 'run MCP Gate as a normal user, or as root where the cgroup v1 pids and memory hierarchies are mounted and writable',
    },
  };
}

/** The prlimit arguments (before `--`) that hold `l` for the process and everything it starts. */
export function rlimitArgs(l: ResourceLimits): string[] {
  const data = l.memoryMiB * 1024 * 1024;
  return [`--nproc=${l.processes}:${l.processes}`, `--data=${data}:${data}`, `--cpu=${l.cpuSeconds}:${l.cpuSeconds + 5}`, '--core=0:0'];
}

let mechanismCache: LimitMechanism | undefined;

/** Where the cgroup v1 hierarchy of `controller` is mounted and this process's cgroup in it, from /proc. */
function v1Dir(controller: string): string | undefined {
  let mounts: string;
  let own: string;
  try {
    mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    own = fs.readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  const line = own.split('\n').find((l) => l.split(':')[1]?.split(',').includes(controller));
  if (!line) return undefined;
  const rel = line.split(':').slice(2).join(':');
  for (const m of mounts.split('\n')) {
    const [pre, post] = m.split(' - ');
    if (!post) continue;
    const [type, , options] = post.split(' ');
    const fields = pre.split(' ');
    if (type !== 'cgroup' || !options.split(',').includes(controller)) continue;
    // The mount's root within the hierarchy (field 4) is a prefix of this process's path when it is visible here.
    const root = fields[3];
    if (rel !== root && !rel.startsWith(root === '/' ? '/' : `${root}/`)) continue;
    return path.join(fields[4], path.relative(root, rel));
  }
  return undefined;
}

/** Whether a folder can be made (and removed) in `dir`: MCP Gate may give a server its own cgroup there. */
function writable(dir: string): boolean {
  const probe = path.join(dir, `mcp-gate-probe-${process.pid}`);
  try {
    fs.mkdirSync(probe);
    fs.rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** Removes the empty cgroups of MCP Gate processes that are gone (one that died before it cleaned up). */
function removeStale(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /^mcp-gate-\d+-\d+$/.test(n));
  } catch {
    return;
  }
  for (const n of names) {
    const owner = Number(n.split('-')[2]);
    try {
      process.kill(owner, 0);
      continue;
    } catch {
      // its MCP Gate is gone
    }
    try {
      fs.rmdirSync(path.join(dir, n));
    } catch {
      // still has processes, or not ours to remove
    }
  }
}

/** How limits are held on this machine (probed once per process). */
export function limitMechanism(refresh = false): LimitMechanism {
  if (mechanismCache && !refresh) return mechanismCache;
  const pids = v1Dir('pids');
  const memory = v1Dir('memory');
  if (pids && memory && writable(pids) && writable(memory)) {
    removeStale(pids);
    removeStale(memory);
    mechanismCache = mechanismFor({ pids, memory }, '');
  } else {
    const why =
      pids && memory
        ? 'it cannot make a cgroup in the pids and memory hierarchies here'
        : 'this machine has no cgroup v1 pids and memory hierarchies (cgroup v2 is not used: see docs/sandbox.md)';
    mechanismCache = mechanismFor(undefined, why);
  }
  return mechanismCache;
}

/** What a server reached. */
export type LimitReached = { readonly limit: keyof ResourceLimits; readonly detail: string };

/** The limits of one started server: how to join its cgroup, watch it, explain its exit, and clean up. */
export interface ServerLimits {
  readonly values: ResourceLimits;
  /** The cgroup.procs files the launch joins before bubblewrap (empty without a cgroup). */
  readonly procsFiles: readonly string[];
  /** Starts watching the process tree of `pid` (the launch's); `reached` is called once. Returns the stop. */
  watch(pid: number, reached: (r: LimitReached) => void): () => void;
  /** Whether the limits explain an exit (bwrap's exit code is 128 + the server's signal), or undefined. */
  explainExit(code: number | null, stderr: string): LimitReached | undefined;
  /** Removes its cgroup (after the server ended); retried while its last processes are reaped. */
  remove(): void;
}

let serial = 0;

function readNumber(file: string, pattern: RegExp): number {
  try {
    const m = pattern.exec(fs.readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const PAGE_MIB = 4096 / (1024 * 1024);

/** Processes and threads of the tree under `pid` (not counting `pid`, the bwrap outside the sandbox), and their resident memory together. */
export function treeUnder(pid: number): { tasks: number; rssMiB: number } {
  let tasks = 0;
  let pages = 0;
  for (const p of descendants(pid)) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      tasks += Number(f[17]) || 1;
      pages += Number(f[21]) || 0;
    } catch {
      // gone meanwhile
    }
  }
  return { tasks, rssMiB: pages * PAGE_MIB };
}

/**
 * The bytes queued in the socket buffers of the network namespace the tree under `pid` runs in (its own: a
 * contained server never shares this machine's), from /proc/<pid>/net/{tcp,tcp6,udp,udp6}: each socket's send and
 * receive queue. The kernel holds them outside every process's resident memory, so a server that fills sockets it
 * never reads would not be counted otherwise. 0 when the tree shares MCP Gate's own network namespace.
 */
export function socketQueuesMiB(pid: number): number {
  const inside = descendants(pid)[0];
  if (inside === undefined) return 0;
  try {
    if (fs.readlinkSync(`/proc/${inside}/ns/net`) === fs.readlinkSync('/proc/self/ns/net')) return 0;
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${inside}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const q = line.trim().split(/\s+/)[4];
      if (!q || !q.includes(':')) continue;
      const [tx, rx] = q.split(':');
      bytes += (parseInt(tx, 16) || 0) + (parseInt(rx, 16) || 0);
    }
  }
  return bytes / (1024 * 1024);
}

const CHECK_EVERY_MS = 1000;
/**
 * Without a cgroup the kernel holds a fork bomb a little under the limit (measured: 48 processes and threads in the
 * tree under a limit of 50 — the count also holds the sandbox's own); a tree this close to it is at its limit.
 */
const NEAR_LIMIT = 8;

/** Makes the server's cgroup where the mechanism has one, `pids` then `memory` (none without it); throws when it cannot be made. */
function makeCgroup(values: ResourceLimits, mechanism: LimitMechanism): string[] {
  const dirs: string[] = [];
  if (!mechanism.cgroup) return dirs;
  const name = `mcp-gate-${process.pid}-${++serial}`;
  const pids = path.join(mechanism.cgroup.pids, name);
  const memory = path.join(mechanism.cgroup.memory, name);
  try {
    fs.mkdirSync(pids);
    dirs.push(pids);
    fs.writeFileSync(path.join(pids, 'pids.max'), String(values.processes));
    fs.mkdirSync(memory);
    dirs.push(memory);
    const bytes = String(values.memoryMiB * 1024 * 1024);
    fs.writeFileSync(path.join(memory, 'memory.limit_in_bytes'), bytes);
    if (fs.existsSync(path.join(memory, 'memory.memsw.limit_in_bytes')))
      fs.writeFileSync(path.join(memory, 'memory.memsw.limit_in_bytes'), bytes);
  } catch (e) {
    for (const d of dirs.reverse()) fs.rmSync(d, { recursive: false, force: true });
    throw new Error(`its cgroup cannot be made (${(e as Error).message})`);
  }
  return dirs;
}

/** Makes a server's limits: its cgroup where the mechanism has one (throws when it cannot be made: the start is refused). */
export function serverLimits(values: ResourceLimits, mechanism: LimitMechanism = limitMechanism()): ServerLimits {
  if (mechanism.refused) throw new Error(`${mechanism.refused.reason} (fix: ${mechanism.refused.fix})`);
  const dirs = makeCgroup(values, mechanism);
  const [pidsDir, memoryDir] = dirs;
  const cgroupReached = (): LimitReached | undefined => {
    if (!pidsDir) return undefined;
    if (readNumber(path.join(pidsDir, 'pids.events'), /^max (\d+)/m) > 0)
      return { limit: 'processes', detail: `it reached its limit of ${values.processes} processes and threads` };
    if (readNumber(path.join(memoryDir, 'memory.oom_control'), /^oom_kill (\d+)/m) > 0)
      return { limit: 'memoryMiB', detail: `it reached its memory limit of ${values.memoryMiB} MiB (the kernel ended a process of it)` };
    return undefined;
  };
  // Without a cgroup: the tree's processes and threads, and its processes' memory together (each one is held by
  // RLIMIT_DATA; many under it could still fill the machine), once a second.
  const treeReached = (pid: number): LimitReached | undefined => {
    const t = treeUnder(pid);
    if (t.tasks >= values.processes - NEAR_LIMIT)
      return { limit: 'processes', detail: `it reached its limit of ${values.processes} processes and threads` };
    const sockets = socketQueuesMiB(pid);
    if (t.rssMiB + sockets > values.memoryMiB)
      return {
        limit: 'memoryMiB',
        detail: `its processes together held ${Math.round(t.rssMiB + sockets)} MiB${sockets >= 1 ? ` (${Math.round(sockets)} MiB of it in socket buffers)` : ''}, over its memory limit of ${values.memoryMiB} MiB`,
      };
    return undefined;
  };
  // With a cgroup: what it holds in socket buffers (which the kernel does not charge to it) with what the cgroup counts.
  const socketsReached = (pid: number): LimitReached | undefined => {
    const sockets = socketQueuesMiB(pid);
    if (sockets < 1) return undefined;
    const used = readNumber(path.join(memoryDir, 'memory.usage_in_bytes'), /^(\d+)/) / (1024 * 1024);
    if (used + sockets > values.memoryMiB)
      return {
        limit: 'memoryMiB',
        detail: `its processes together held ${Math.round(used + sockets)} MiB (${Math.round(sockets)} MiB of it in socket buffers), over its memory limit of ${values.memoryMiB} MiB`,
      };
    return undefined;
  };
  return {
    values,
    procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')),
    watch(pid, reached) {
      let done = false;
      const check = () => {
        if (done) return;
        const r = cgroupReached() ?? (pidsDir ? socketsReached(pid) : treeReached(pid));
        if (r) {
          done = true;
          clearInterval(timer);
          reached(r);
        }
      };
      const timer = setInterval(check, CHECK_EVERY_MS);
      timer.unref();
      return () => {
        done = true;
        clearInterval(timer);
      };
    },
    explainExit(code, stderr) {
      const r = cgroupReached();
      if (r) return r;
      if (code === 128 + 24) return { limit: 'cpuSeconds', detail: `a process of it used its CPU time limit of ${values.cpuSeconds} s` };
      if (
        /JavaScript heap out of memory|Fatal process out of memory|Array buffer allocation failed|^MemoryError\b|Cannot allocate memory|out of memory/im.test(
          stderr,
        )
      )
        return { limit: 'memoryMiB', detail: `a process of it ran out of memory under its limit of ${values.memoryMiB} MiB per process` };
      return undefined;
    },
    remove() {
      const left = [...dirs];
      const attempt = (tries: number) => {
        for (const d of [...left]) {
          try {
            fs.rmdirSync(d);
            left.splice(left.indexOf(d), 1);
          } catch {
            // processes still being reaped
          }
        }
        if (left.length && tries > 0) setTimeout(() => attempt(tries - 1), 200).unref();
      };
      attempt(25);
    },
  };
}

/** The /bin/sh launch that joins `procsFiles` and then runs `command args` (the same process: exec). */
export function joinCgroup(procsFiles: readonly string[], command: string, args: readonly string[]): { command: string; args: string[] } {
  if (!procsFiles.length) return { command, args: [...args] };
  const script = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
  return { command: '/bin/sh', args: ['-c', script, 'mcp-gate-limits', String(procsFiles.length), ...procsFiles, command, ...args] };
}

const KEY_WORDS: Record<keyof ResourceLimits, string> = { memoryMiB: 'memoryMiB', processes: 'processes', cpuSeconds: 'cpuSeconds' };

/** Where to raise `limit`: the entry that set it, else the user configuration. */
export function raiseWords(limit: keyof ResourceLimits, d: LimitsDecision, where: (e: SandboxEntry) => string): string {
  const e = d.setBy[limit];
  const more = limit === 'memoryMiB' ? d.values.memoryMiB * 2 : limit === 'processes' ? d.values.processes * 4 : d.values.cpuSeconds * 4;
  return e
    ? `raise "${KEY_WORDS[limit]}" in its sandbox entry in ${where(e)}`
    : `raise it with "${KEY_WORDS[limit]}": ${more} in a sandbox entry for it in your user configuration`;
}

/** The limits line of the preview and of the start's log line. */
export function limitsWords(d: LimitsDecision, m: LimitMechanism): string {
  const v = d.values;
  const setting = (Object.keys(d.setBy) as (keyof ResourceLimits)[]).length ? ' (some set by your sandbox entries)' : '';
  if (m.cgroup) {
    return `limits${setting}: memory ${v.memoryMiB} MiB for the whole server (a cgroup) and per process; ${v.processes} processes and threads (a cgroup); CPU time ${v.cpuSeconds} s per process; a server that reaches one is stopped and the log says which`;
  }
  if (m.refused) return `limits: cannot be held here: ${m.refused.reason}; fix: ${m.refused.fix}`;
  return `limits${setting}: memory ${v.memoryMiB} MiB per process, and for the whole server counted once a second (no cgroup: ${m.why}); ${v.processes} processes and threads (its own, counted in its user namespace); CPU time ${v.cpuSeconds} s per process; a server that reaches one is stopped and the log says which`;
}
