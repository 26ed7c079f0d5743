// Benchmark of contained execution (src/host/sandbox/sandbox.ts): the start-up of a stdio MCP server (the fixture
// echo server: spawn, initialize, tools/list) through MCP Gate's StdioTransport, plain and inside bubblewrap;
// the raw cost of bwrap on /bin/true, with and without a network door (src/host/net/egress.ts); and building the bwrap
// command line. Linux with bubblewrap only: where
// the probe fails, one row says why instead of numbers.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { buildSandbox, sandboxAvailable, type SandboxInput } from '../src/host/sandbox/sandbox';
import { StdioTransport, type StdioLaunch } from '../src/host/sandbox/stdio';
import { DEFAULT_LIMITS } from '../src/policy/sandbox-profile';
import { joinCgroup, limitMechanism, serverLimits } from '../src/host/sandbox/limits';
import { openDoor } from '../src/host/net/door';
import { Egress } from '../src/host/net/egress';
import type { BenchRow } from './gate';

const ROOT = path.resolve(__dirname, '..', '..');
const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');
const NODE = fs.realpathSync(process.execPath);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/** Warm-up once each, then `rounds` interleaved rounds of `perRound` timed runs; medians by name. */
async function interleaved(
  rounds: number,
  perRound: number,
  contenders: Record<string, () => Promise<number>>,
): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = {};
  for (const [name, f] of Object.entries(contenders)) {
    await f();
    samples[name] = [];
  }
  for (let r = 0; r < rounds; r++)
    for (const [name, f] of Object.entries(contenders)) for (let i = 0; i < perRound; i++) samples[name].push(await f());
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

/** Milliseconds from spawn to the answered tools/list; the server is then killed (not timed). */
async function serverStart(launch: StdioLaunch): Promise<number> {
  const t0 = process.hrtime.bigint();
  const transport = new StdioTransport(launch);
  const client = new Client({ name: 'bench-sandbox', version: '0' });
  await client.connect(transport);
  const tools = await client.listTools();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (tools.tools.length !== 2) throw new Error(`unexpected tools: ${tools.tools.map((x) => x.name).join(',')}`);
  // SIGKILL to the spawned process is enough: bwrap's PID namespace takes everything inside with it.
  const closed = new Promise<void>((r) => (transport.onclose = () => r()));
  process.kill(transport.pid!, 'SIGKILL');
  await closed;
  return ms;
}

function run(command: string, args: string[], env: Record<string, string>, seccomp?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const c = spawn(command, args, { env, stdio: seccomp ? ['ignore', 'ignore', 'ignore', 'pipe'] : 'ignore' });
    if (seccomp) (c.stdio[3] as NodeJS.WritableStream).end(seccomp);
    c.once('error', reject);
    c.once('exit', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${command} exited ${code}`)),
    );
  });
}

/** Milliseconds from spawn to the exit of a sandbox with a network door (opened before bwrap runs the command). */
function runWithDoor(c: ReturnType<typeof buildSandbox>, egress: Egress): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const t = new StdioTransport({
      command: c.command,
      args: c.args,
      cwd: c.cwd,
      env: c.env,
      seccomp: c.seccomp,
      door: (pid) => openDoor(pid, egress),
    });
    t.onexit = (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`bwrap exited ${code}: ${t.stderrText()}`));
    t.start().catch(reject);
  });
}

/** For bench/run.mjs: `...(await benchSandbox())`. */
export async function benchSandbox(): Promise<BenchRow[]> {
  const probe = sandboxAvailable();
  if (!probe.ok)
    return [{ name: 'sandbox: contained start-up (bubblewrap)', median: NaN, unit: 'ms', note: `not measured: ${probe.reason}` }];
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-sandbox-')));
  const home = path.join(base, 'home');
  const workspace = path.join(base, 'workspace');
  fs.mkdirSync(home);
  fs.mkdirSync(workspace);
  const env = { PATH: '/usr/bin:/bin', HOME: home };
  const plain: StdioLaunch = { command: NODE, args: [FIXTURE], cwd: workspace, env };
  const input = (executable: string, argv: string[]): SandboxInput => ({
    launch: { executable, argv, cwd: workspace, env },
    workspace,
    overlays: [],
    // The fixture and its node_modules are read from the repository, read-only.
    profile: {
      network: false,
      unixSockets: false,
      extraRead: [ROOT, fs.realpathSync(path.join(ROOT, 'node_modules'))],
      extraWrite: [],
      caches: [],
      home,
      limits: DEFAULT_LIMITS,
    },
  });
  const c = buildSandbox(input(NODE, [FIXTURE]), probe);
  const contained: StdioLaunch = { command: c.command, args: c.args, cwd: c.cwd, env: c.env, seccomp: c.seccomp };
  let trueBin = '/usr/bin/true';
  try {
    trueBin = fs.realpathSync('/bin/true');
  } catch {
    // keep it
  }
  const t = buildSandbox(input(trueBin, []), probe);
  // With a network door (a rule gives it the network): the door opened by nsenter and a Node listener, a proxy that lets nothing through.
  const withNet = (i: SandboxInput): SandboxInput => ({ ...i, profile: { ...i.profile, network: true } });
  const d = buildSandbox(withNet(input(trueBin, [])), probe);
  const egress = new Egress({ decide: async () => ({ allow: false, named: false, reason: 'a benchmark' }), onEvent: () => undefined });
  const cd = buildSandbox(withNet(input(NODE, [FIXTURE])), probe);
  const containedDoor: StdioLaunch = {
    command: cd.command,
    args: cd.args,
    cwd: cd.cwd,
    env: cd.env,
    seccomp: cd.seccomp,
    door: (pid) => openDoor(pid, egress),
  };
  // The same command without `--seccomp 3`: only to measure what the filter costs (every contained start has it).
  const at = t.args.indexOf('--seccomp');
  const u = { ...t, args: [...t.args.slice(0, at), ...t.args.slice(at + 2)] };
  // The same command without prlimit (the limits' first command inside): only to measure what the rlimits cost.
  const pl = t.args.indexOf(probe.prlimit);
  const n = { ...t, args: [...t.args.slice(0, pl), ...t.args.slice(t.args.indexOf('--', pl) + 1)] };
  // And with the cgroup a start joins where MCP Gate can make one (made and removed each time, as a start does).
  const mechanism = limitMechanism();
  const withCgroup = async (): Promise<number> => {
    const t0 = process.hrtime.bigint();
    const held = serverLimits(DEFAULT_LIMITS, mechanism);
    const j = joinCgroup(held.procsFiles, t.command, t.args);
    try {
      await run(j.command, j.args, t.env, t.seccomp);
    } finally {
      held.remove();
    }
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const buildTimes: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t0 = process.hrtime.bigint();
    buildSandbox(input(NODE, [FIXTURE]), probe);
    buildTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  try {
    const raw = await interleaved(5, 10, {
      plain: () => run(trueBin, [], env),
      unfiltered: () => run(u.command, u.args, u.env),
      unlimited: () => run(n.command, n.args, n.env, n.seccomp),
      bwrap: () => run(t.command, t.args, t.env, t.seccomp),
      door: () => runWithDoor(d, egress),
      ...(mechanism.cgroup ? { cgroup: withCgroup } : {}),
    });
    const server = await interleaved(4, 5, {
      plain: () => serverStart(plain),
      contained: () => serverStart(contained),
      door: () => serverStart(containedDoor),
    });
    return [
      { name: 'sandbox: spawn /bin/true, plain', median: raw.plain, unit: 'ms', note: '50 runs' },
      {
        name: 'sandbox: spawn /bin/true inside bubblewrap without the seccomp filter (for comparison only)',
        median: raw.unfiltered,
        unit: 'ms',
        baseline: 'plain',
        ratio: raw.unfiltered / raw.plain,
        note: `50 runs; bubblewrap ${probe.version}; namespaces, mounts, no network, the rlimits; no contained start runs like this`,
      },
      {
        name: 'sandbox: spawn /bin/true inside bubblewrap without prlimit (for comparison only)',
        median: raw.unlimited,
        unit: 'ms',
        baseline: 'plain',
        ratio: raw.unlimited / raw.plain,
        note: '50 runs; the seccomp filter, no rlimits; no contained start runs like this',
      },
      {
        name: 'sandbox: spawn /bin/true inside bubblewrap (namespaces, mounts, no network, the socket seccomp filter, the rlimits)',
        median: raw.bwrap,
        unit: 'ms',
        baseline: 'plain',
        ratio: raw.bwrap / raw.plain,
        note: `50 runs; what every contained start pays; the filter alone: ${(raw.bwrap - raw.unfiltered).toFixed(2)} ms (${(raw.bwrap / raw.unfiltered).toFixed(3)}× the start without it); prlimit alone: ${(raw.bwrap - raw.unlimited).toFixed(2)} ms (${(raw.bwrap / raw.unlimited).toFixed(3)}×)`,
      },
      raw.cgroup !== undefined
        ? {
            name: 'sandbox: spawn /bin/true inside bubblewrap in its own cgroup (made, joined by /bin/sh, removed)',
            median: raw.cgroup,
            unit: 'ms',
            baseline: 'bwrap with the rlimits',
            ratio: raw.cgroup / raw.bwrap,
            note: `50 runs; what a start pays where MCP Gate makes a cgroup (root on cgroup v1): ${(raw.cgroup - raw.bwrap).toFixed(2)} ms more`,
          }
        : {
            name: 'sandbox: spawn /bin/true inside bubblewrap in its own cgroup',
            median: NaN,
            unit: 'ms',
            note: `not measured: no cgroup here (${'why' in mechanism ? mechanism.why : ''})`,
          },
      {
        name: 'sandbox: stdio MCP server start (spawn, initialize, tools/list), plain',
        median: server.plain,
        unit: 'ms',
        note: '20 starts; the fixture echo server (SDK)',
      },
      {
        name: 'sandbox: spawn /bin/true inside bubblewrap with a network door (nsenter + a Node listener in its namespace)',
        median: raw.door,
        unit: 'ms',
        baseline: 'bwrap with the rlimits',
        ratio: raw.door / raw.bwrap,
        note: `50 runs; what a start with a network rule pays: the door ${(raw.door - raw.bwrap).toFixed(1)} ms more (mostly Node's start-up)`,
      },
      {
        name: 'sandbox: stdio MCP server start inside bubblewrap',
        median: server.contained,
        unit: 'ms',
        baseline: 'plain start',
        ratio: server.contained / server.plain,
        note: '20 starts; workspace rw, repository ro, empty HOME, no network',
      },
      {
        name: 'sandbox: stdio MCP server start inside bubblewrap with a network door',
        median: server.door,
        unit: 'ms',
        baseline: 'contained start',
        ratio: server.door / server.contained,
        note: `20 starts; the same server with a network rule: ${(server.door - server.contained).toFixed(1)} ms more`,
      },
      {
        name: 'sandbox: building the bwrap command line (buildSandbox)',
        median: median(buildTimes),
        unit: 'ms',
        note: '200 builds; path checks only',
      },
    ];
  } finally {
    egress.close();
    fs.rmSync(base, { recursive: true, force: true });
  }
}
