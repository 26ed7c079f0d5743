// Limits of a contained server, as an attacker meets them: a repository server that forks without end, allocates
// without end or computes without end is stopped — all its processes — with a call error and a log line that name
// the limit and where to raise it, while the session's other server goes on answering. Each bomb is run with the
// mechanism this machine gives root (a cgroup, cgroup v1) and, through the CLI as the unprivileged user `nobody`,
// with the rlimits alone (what a normal user on a cgroup v2 desktop gets). As root without a cgroup nothing contained
// starts (never run a root fork bomb without one: it takes every PID of the machine). The kernel's process limit counts only the sandbox's own processes (tested as
// an unprivileged user, with that user's processes outside); a server that starts a few workers is not stopped.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { limitMechanism, mechanismFor, type LimitMechanism } from '../../../../src/host/sandbox/limits';
import { EventLog } from '../../../../src/host/log/log';
import { buildSandbox, sandboxAvailable } from '../../../../src/host/sandbox/sandbox';
import { Session, type SessionOptions } from '../../../../src/host/session';
import { Masker } from '../../../../src/policy/mask';
import { DEFAULT_LIMITS } from '../../../../src/policy/sandbox-profile';
import { loadUserPolicy } from '../../../../src/policy/user-policy';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { inProcess } from '../../../../src/trust/packages/npm-resolve';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, processesWith, ROOT, tempDir, until, world, type World } from '../../helpers';
import { cliAsNobody, NOBODY, toNobody } from '../../nobody';

const BOMB = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'bomb-server.js');
const FORK_BOMB_MARK = 'b() { b & b & wait; }';
/** Processes on this machine running the fixture's shell fork bomb. */
const bombProcesses = () => processesWith(FORK_BOMB_MARK).length;

/** A repository with the bomb server and a calm second server (the same file: its `still` tool), both approved. */
async function repository(limits: Record<string, number>): Promise<World> {
  const w = world({
    '.mcp.json': JSON.stringify({
      mcpServers: {
        bomb: { command: 'node', args: ['srv/bomb-server.js'] },
        calm: { command: 'node', args: ['srv/bomb-server.js', 'calm'] },
      },
    }),
  });
  w.input.loadGuard = true; // approved as the CLI pins it
  fs.mkdirSync(path.join(w.project, 'srv'));
  fs.copyFileSync(BOMB, path.join(w.project, 'srv', 'bomb-server.js'));
  writeProjectConfig(w, {
    rules: [
      { action: 'mcp.bomb.tool.*', decision: 'allow' },
      { action: 'mcp.calm.tool.*', decision: 'allow' },
    ],
    sandbox: { servers: [{ server: 'bomb', project: w.project, ...limits }] },
  });
  for (const s of evaluateGate(w.input).servers) await recordDecision(w.input, s.name, s.source, 'approved');
  return w;
}

function options(w: World, mechanism?: () => LimitMechanism): SessionOptions & { log: EventLog } {
  const report = evaluateGate(w.input);
  const log = new EventLog(w.store, new Masker());
  return {
    report,
    policy: loadUserPolicy(report.userPolicy),
    log,
    storeDir: w.store,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker: new Masker(),
    callTimeoutMs: 90_000,
    limitMechanism: mechanism,
  };
}

/** Runs `f` in a session over the bomb repository with these limits (the mechanism this machine gives), then closes it. */
async function inSession(limits: Record<string, number>, f: (s: Session, w: World) => Promise<void>): Promise<void> {
  const w = await repository(limits);
  const s = await Session.start(options(w));
  try {
    await f(s, w);
  } finally {
    await s.close();
  }
}

const stops = (w: World) =>
  fs
    .readFileSync(path.join(w.store, 'log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.kind === 'server.stop' && e.server === 'bomb');

/** `mcp-gate call` as `nobody`: no cgroup can be made, so the rlimits alone hold (what a cgroup v2 desktop gives). */
function callAsNobody(w: World, server: string, tool: string, args: object = {}): { code: number; out: string } {
  return cliAsNobody(w, ['call', server, tool, '--args', JSON.stringify(args)]);
}

describe('limits of a contained server (real bubblewrap)', function () {
  this.timeout(180_000);
  after(cleanupTemp);
  before(function () {
    if (!sandboxAvailable().ok) throw new Error(`bubblewrap must work here: ${JSON.stringify(sandboxAvailable())}`);
  });

  it('this machine holds limits with a cgroup (root on cgroup v1): the mechanism the bombs below meet first', () => {
    const m = limitMechanism(true);
    assert.ok(m.cgroup, `expected a cgroup here: ${JSON.stringify(m)}`);
  });

  describe('with a cgroup (in one session)', () => {
    it('a fork bomb: the server is stopped, all its processes end, the call and the log say which limit and where to raise it; the other server answers', async () => {
      await inSession({ processes: 64 }, async (s, w) => {
        const r = await s.call('bomb', 'forkbomb', {});
        assert.equal(r.ok, false);
        assert.match(
          r.error!,
          /it reached its limit of 64 processes and threads; MCP Gate stopped it and everything it started; if it needs more, raise "processes" in its sandbox entry in .*config\.json/,
        );
        const [line] = stops(w);
        assert.match(line?.detail ?? '', /reached its limit of 64 processes and threads/, JSON.stringify(stops(w)));
        assert.ok(await until(() => bombProcesses() === 0, 10_000), `bomb processes left: ${bombProcesses()}`);
        const again = await s.call('bomb', 'ok', {});
        assert.equal(again.ok, false, 'a stopped server is not called again');
        assert.match(again.error!, /reached its limit of 64 processes/);
        const calm = await s.call('calm', 'still', {});
        assert.equal(calm.ok, true, JSON.stringify(calm));
      });
    });

    it('a memory bomb: stopped with the memory limit in the call and the log; the other server answers', async () => {
      await inSession({ memoryMiB: 256 }, async (s, w) => {
        const r = await s.call('bomb', 'membomb', {});
        assert.equal(r.ok, false);
        assert.match(
          r.error!,
          /(memory limit of|out of memory under its limit of) 256 MiB.*; MCP Gate stopped it and everything it started; if it needs more, raise "memoryMiB"/,
        );
        assert.match(stops(w)[0]?.detail ?? '', /(memory limit of|out of memory under its limit of) 256 MiB/);
        assert.equal((await s.call('calm', 'still', {})).ok, true);
      });
    });

    it('memory spread over several processes, each under the limit: the cgroup holds the sum, and the server is stopped', async () => {
      await inSession({ memoryMiB: 256 }, async (s, w) => {
        const r = await s.call('bomb', 'memsplit', { count: 4, mib: 120 });
        assert.equal(r.ok, false);
        assert.match(r.error!, /it reached its memory limit of 256 MiB \(the kernel ended a process of it\); MCP Gate stopped it/);
      });
    });

    it('memory held in socket buffers it never reads (no process holds it): counted, and the server is stopped', async () => {
      await inSession({ memoryMiB: 256 }, async (s, w) => {
        const r = await s.call('bomb', 'sockbomb', { count: 200 });
        assert.equal(r.ok, false);
        assert.match(
          r.error!,
          /its processes together held \d+ MiB \(\d+ MiB of it in socket buffers\), over its memory limit of 256 MiB; MCP Gate stopped it/,
        );
        assert.match(stops(w)[0]?.detail ?? '', /socket buffers/);
      });
    });

    it('a process that computes without end: ended at its CPU time, said so', async () => {
      await inSession({ cpuSeconds: 2 }, async (s, w) => {
        const r = await s.call('bomb', 'spin', {});
        assert.equal(r.ok, false);
        assert.match(r.error!, /used its CPU time limit of 2 s; MCP Gate stopped it .*raise "cpuSeconds"/);
        assert.match(stops(w)[0]?.detail ?? '', /CPU time limit of 2 s/);
      });
    });

    it('a server that starts a few workers is not stopped (the defaults are far above what a real server uses)', async () => {
      await inSession({}, async (s, w) => {
        const r = await s.call('bomb', 'children', { count: 40 });
        assert.equal(r.ok, true, JSON.stringify(r));
        assert.match(JSON.stringify(r.result), /started 40/);
        assert.deepEqual(stops(w), []);
      });
    });
  });

  describe('with the rlimits alone (an unprivileged user, through the CLI)', () => {
    it('a fork bomb: stopped at its process limit, no process of it left, the log says which limit; the machine goes on', async () => {
      const w = await repository({ processes: 64 });
      toNobody(w);
      const r = callAsNobody(w, 'bomb', 'forkbomb');
      assert.notEqual(r.code, 0, r.out);
      assert.match(
        r.out,
        /it reached its limit of 64 processes and threads; MCP Gate stopped it and everything it started; if it needs more, raise "processes"/,
      );
      assert.match(stops(w)[0]?.detail ?? '', /reached its limit of 64 processes and threads/);
      assert.ok(await until(() => bombProcesses() === 0, 10_000), `bomb processes left: ${bombProcesses()}`);
      const calm = callAsNobody(w, 'calm', 'still');
      assert.equal(calm.code, 0, calm.out);
      assert.match(calm.out, /still here/);
    });

    it('a memory bomb: ended at its memory limit per process, said so', async () => {
      const w = await repository({ memoryMiB: 256 });
      toNobody(w);
      const r = callAsNobody(w, 'bomb', 'membomb');
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.out, /out of memory under its limit of 256 MiB per process; MCP Gate stopped it .*raise "memoryMiB"/);
      assert.match(stops(w)[0]?.detail ?? '', /out of memory under its limit of 256 MiB/);
    });

    it("memory held in socket buffers it never reads: counted with its processes' memory, and the server is stopped", async () => {
      const w = await repository({ memoryMiB: 256 });
      toNobody(w);
      const r = callAsNobody(w, 'bomb', 'sockbomb', { count: 200 });
      assert.notEqual(r.code, 0, r.out);
      assert.match(
        r.out,
        /its processes together held \d+ MiB \(\d+ MiB of it in socket buffers\), over its memory limit of 256 MiB; MCP Gate stopped it .*raise "memoryMiB"/,
      );
    });

    it('memory spread over several processes, each under the per-process limit: their sum is counted, and the server is stopped', async () => {
      const w = await repository({ memoryMiB: 256 });
      toNobody(w);
      const r = callAsNobody(w, 'bomb', 'memsplit', { count: 4, mib: 120 });
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.out, /its processes together held \d+ MiB, over its memory limit of 256 MiB; MCP Gate stopped it .*raise "memoryMiB"/);
      assert.match(stops(w)[0]?.detail ?? '', /together held \d+ MiB, over its memory limit of 256 MiB/);
    });

    it('a process that computes without end: ended at its CPU time, said so', async () => {
      const w = await repository({ cpuSeconds: 2 });
      toNobody(w);
      const r = callAsNobody(w, 'bomb', 'spin');
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.out, /used its CPU time limit of 2 s; MCP Gate stopped it .*raise "cpuSeconds"/);
    });

    it('a server that starts a few workers is not stopped', async () => {
      const w = await repository({});
      toNobody(w);
      const r = callAsNobody(w, 'bomb', 'children', { count: 40 });
      assert.equal(r.code, 0, r.out);
      assert.match(r.out, /started 40/);
      assert.deepEqual(
        stops(w).filter((e) => e.detail),
        [],
        'stopped at the end of the call, not for a limit',
      );
    });
  });

  it('as root without a cgroup, a contained server is not started: the kernel would not hold its process limit; the error says why and what to do', async () => {
    const w = await repository({});
    const s = await Session.start(options(w, () => mechanismFor(undefined, 'this test has no cgroup', true)));
    try {
      const r = await s.call('bomb', 'ok', {});
      assert.equal(r.ok, false);
      assert.match(
        r.error!,
        /MCP Gate runs as root and this test has no cgroup: the kernel exempts root from the process limit.*fix: run MCP Gate as a normal user, or as root where the cgroup v1 pids and memory hierarchies are mounted and writable/,
      );
      assert.equal(bombProcesses(), 0);
    } finally {
      await s.close();
    }
  });

  it('the kernel counts the process limit in the sandbox alone: an unprivileged user with processes of its own outside still starts its processes inside, up to the limit', async () => {
    const probe = sandboxAvailable();
    assert.ok(probe.ok);
    const base = fs.realpathSync(tempDir('mcp-gate-limits-'));
    fs.chmodSync(base, 0o755);
    const workspace = path.join(base, 'workspace');
    fs.mkdirSync(workspace, { mode: 0o777 });
    fs.chmodSync(workspace, 0o777);
    fs.writeFileSync(
      path.join(workspace, 'forks.py'),
      [
        'import os, time',
        'n = 0',
        'for i in range(100):',
        '    try:',
        '        pid = os.fork()',
        '    except OSError:',
        '        break',
        '    if pid == 0:',
        '        time.sleep(3)',
        '        os._exit(0)',
        '    n += 1',
        'print(n)',
      ].join('\n'),
    );
    const c = buildSandbox(
      {
        launch: {
          executable: fs.realpathSync('/usr/bin/python3'),
          argv: [path.join(workspace, 'forks.py')],
          cwd: workspace,
          env: { PATH: '/usr/bin:/bin' },
        },
        workspace,
        overlays: [],
        profile: {
          network: false,
          unixSockets: false,
          extraRead: [],
          extraWrite: [],
          caches: [],
          home: path.join(base, 'home'),
          limits: { ...DEFAULT_LIMITS, processes: 32 },
        },
      },
      probe,
    );
    const asNobody = NOBODY;
    // 60 processes of the same user outside the sandbox.
    const outside = spawn('setpriv', [...asNobody, 'sh', '-c', 'for i in $(seq 1 60); do sleep 20 & done; wait'], {
      stdio: 'ignore',
      detached: true,
    });
    try {
      await new Promise((r) => setTimeout(r, 500));
      // The seccomp program on fd 3, as the host gives it (here from a file: spawnSync cannot write a fourth pipe).
      const filter = path.join(base, 'filter.bpf');
      fs.writeFileSync(filter, c.seccomp);
      fs.chmodSync(filter, 0o644);
      const run = spawnSync('sh', ['-c', 'exec 3<"$0"; exec setpriv "$@"', filter, ...asNobody, c.command, ...c.args], {
        cwd: c.cwd,
        env: c.env,
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(run.status, 0, run.stderr);
      const started = Number(run.stdout.trim());
      // 32 = the sandbox's init, python, and 30 children: the user's 60 processes outside are not counted.
      assert.ok(started >= 28 && started <= 30, `started ${started} of 100 under a limit of 32 (stderr: ${run.stderr})`);
    } finally {
      try {
        process.kill(-outside.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
});
