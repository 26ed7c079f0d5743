// One containment decision (src/host/sandbox/contain.ts containmentFor) is what startPlan runs and what
// describeContainment says: for a contained server (no network rule, a network rule that allows, one that asks,
// extra paths), an opt-out, a user server not contained, settings that cannot be used and a machine without
// bubblewrap, the words describe the decision returned, and startPlan does what the words say. The settings'
// schema in package.json has the keys the parser accepts.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { networkDecider, refusedSocketError, startPlan } from '../../../../src/host/sandbox/contain';
import { ContainRefused, type StartPlan } from '../../../../src/host/sandbox/contain-options';
import { containmentFor, describeContainment, type Containment } from '../../../../src/host/sandbox/decision';
import { decideStart } from '../../../../src/policy/start';
import type { SandboxProbe } from '../../../../src/host/sandbox/sandbox';
import type { ServerIdentity } from '../../../../src/policy/identity';
import { DEFAULT_LIMITS, LIMIT_KEYS, SANDBOX_ENTRY_KEYS, SANDBOX_KEYS } from '../../../../src/policy/sandbox-profile';
import { limitMechanism, mechanismFor, type LimitMechanism } from '../../../../src/host/sandbox/limits';
import { loadUserPolicy, type RawUserPolicy } from '../../../../src/policy/user-policy';
import { decideFor, resolve } from '../../../../src/policy/decide';
import { evaluateGate } from '../../../../src/trust/gate';
import type { NpmOps } from '../../../../src/trust/packages/npm-lock';
import type { ServerReport } from '../../../../src/trust/report';
import { cleanupTemp, ROOT, tempDir, world } from '../../helpers';

const BWRAP: SandboxProbe = { ok: true, bwrap: '/usr/bin/bwrap', version: '0.8.0', userns: false, prlimit: '/usr/bin/prlimit' };
const NO_BWRAP: SandboxProbe = { ok: false, reason: 'bubblewrap (bwrap) not found on PATH', fix: 'install bubblewrap' };

describe('containment: one decision, in words and in what starts', () => {
  after(cleanupTemp);

  let server: ServerReport;
  let project: string;
  let home: string;
  before(() => {
    const w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node', args: ['tools/s.js'] } } }), 'tools/s.js': '1' },
      {},
      { PATH: process.env.PATH! },
    );
    const report = evaluateGate(w.input);
    server = report.servers[0];
    project = report.project;
    home = w.home;
  });

  const repo = (): ServerIdentity => ({ name: 's', scope: 'repository', project });
  const policy = (raw: Omit<RawUserPolicy, 'file'>) => loadUserPolicy({ file: 'config.json', ...raw });

  /** How limits are held in these tests unless one asks for this machine's own (a cgroup here: see limits.test.ts). */
  const RLIMITS: LimitMechanism = { why: 'no cgroup in this test' };
  function run(
    who: ServerIdentity,
    raw: Omit<RawUserPolicy, 'file'>,
    probe: SandboxProbe,
    answer?: 'once' | 'deny',
    mechanism: LimitMechanism = RLIMITS,
  ): { c: Containment; words: string[]; plan: Promise<StartPlan> } {
    const p = policy(raw);
    const start = decideStart(p, who, home, { asker: answer ? async () => answer : undefined });
    const c = containmentFor(
      start,
      () => probe,
      () => mechanism,
    );
    const words = describeContainment(
      server,
      start,
      () => probe,
      () => mechanism,
    );
    const plan = startPlan({
      server,
      who,
      project,
      plan: { ...server.pinned!.plan!, executable: server.pinned!.plan!.executable! },
      env: {},
      decision: start,
      home,
      hostEnv: { XDG_CACHE_HOME: tempDir('mcp-gate-cache-') },
      probe: () => probe,
      npm: {} as NpmOps,
      limits: () => mechanism,
    });
    return { c, words, plan };
  }

  it('contained, no network rule: words say none; it runs in bubblewrap without the network', async () => {
    const { c, words, plan } = run(repo(), {}, BWRAP);
    assert.equal(c.kind, 'contained');
    assert.equal(c.kind === 'contained' && c.network.decision, 'deny');
    assert.match(words[0], /^contained \(bubblewrap\)/);
    assert.ok(
      words.some((l) => l.startsWith('network: none — ')),
      words.join('\n'),
    );
    const p = await plan;
    assert.equal(p.sandbox?.network, false);
    assert.equal(p.launch.command, BWRAP.bwrap);
    assert.match(p.networkRule!, /"action":"mcp\.s\.network","decision":"allow"/);
    // Unix sockets: its own only (no socket file is visible to it here), the words say so, and the start carries
    // the seccomp filter for bwrap's fd 3.
    assert.ok(
      words.some((l) => l.startsWith('Unix sockets: those it makes itself')),
      words.join('\n'),
    );
    assert.equal(p.sandbox?.unixSockets, true);
    assert.match(p.sandbox!.text, /Unix sockets allowed: no socket file it did not make is visible to it \(checked at this start\)/);
    assert.ok(p.launch.seccomp && p.launch.seccomp.length > 0 && p.launch.seccomp.length % 8 === 0, 'a BPF program');
    assert.deepEqual(p.launch.args.slice(p.launch.args.indexOf('--seccomp'), p.launch.args.indexOf('--seccomp') + 2), ['--seccomp', '3']);
    assert.ok(p.launch.args.indexOf('--seccomp') < p.launch.args.indexOf('--'), "a bwrap option, not the server's");
    p.cleanup();
  });

  it('unixSockets: true in its entry: words name the setting and where it is; it starts without the filter', async () => {
    const { c, words, plan } = run(repo(), { sandbox: { servers: [{ server: 's', project, unixSockets: true }] } }, BWRAP);
    assert.equal(c.kind === 'contained' && c.unixSockets?.origin.file, 'config.json');
    assert.ok(
      words.includes(
        'Unix sockets: allowed by your setting in config.json (unixSockets: true): it can connect to any socket file it can see',
      ),
      words.join('\n'),
    );
    const p = await plan;
    assert.equal(p.sandbox?.unixSockets, true);
    assert.ok(p.launch.seccomp && p.launch.args.includes('--seccomp'), 'the rest of the filter stays (other families, io_uring)');
    p.cleanup();
  });

  it('a start failure reads like a refused Unix socket only for the socket wordings, not for any EPERM', () => {
    assert.equal(
      refusedSocketError('x\nError: listen EPERM: operation not permitted /tmp/tsx-0/9.pipe\n    at y'),
      'Error: listen EPERM: operation not permitted /tmp/tsx-0/9.pipe',
    );
    assert.match(refusedSocketError('dial unix /x.sock: socket: operation not permitted')!, /socket: operation not permitted/);
    assert.equal(
      refusedSocketError('PermissionError: [Errno 1] Operation not permitted'),
      'PermissionError: [Errno 1] Operation not permitted',
    );
    assert.equal(
      refusedSocketError("PermissionError: [Errno 1] Operation not permitted: '/etc/x'"),
      undefined,
      "a file's EPERM names its path",
    );
    assert.equal(refusedSocketError("Error: EPERM: operation not permitted, open '/x'"), undefined);
    assert.equal(refusedSocketError(''), undefined);
  });

  it('unixSockets that is not true or false: the settings cannot be used, and no contained server starts', async () => {
    const { c, plan } = run(repo(), { sandbox: { servers: [{ server: 's', project, unixSockets: 'yes' }] } }, BWRAP);
    assert.equal(c.kind, 'refused');
    assert.match(c.kind === 'refused' ? c.problems.join('; ') : '', /sandbox\.servers\[0\]: "unixSockets" must be true or false/);
    await assert.rejects(plan, (e: Error) => e instanceof ContainRefused && /"unixSockets" must be true or false/.test(e.message));
  });

  it('a network rule that allows: words say any public host through its door, never this machine; it runs with the door', async () => {
    const { c, words, plan } = run(repo(), { rules: [{ action: 'mcp.s.network', decision: 'allow', project }] }, BWRAP);
    assert.equal(c.kind === 'contained' && c.network.decision, 'allow');
    assert.ok(
      words.some((l) =>
        l.startsWith(
          "network: any public host, through its own network namespace, whose one way out is MCP Gate's filtering proxy (never this machine",
        ),
      ),
      words.join('\n'),
    );
    const p = await plan;
    assert.equal(p.sandbox?.network, true);
    assert.equal(p.networkRule, undefined);
    p.cleanup();
  });

  it('a network rule that asks: words say it is asked at start; the answer decides', async () => {
    const { c, words, plan } = run(repo(), { rules: [{ action: 'mcp.s.network', decision: 'ask', project }] }, BWRAP, 'once');
    assert.equal(c.kind === 'contained' && c.network.decision, 'ask');
    assert.ok(
      words.some((l) =>
        l.startsWith(
          'network: any public host if you answer yes at start (asked where a person can answer), through its own network namespace',
        ),
      ),
      words.join('\n'),
    );
    const p = await plan;
    assert.equal(p.sandbox?.network, true);
    p.cleanup();
    const denied = await run(repo(), { rules: [{ action: 'mcp.s.network', decision: 'ask', project }] }, BWRAP).plan;
    assert.equal(denied.sandbox?.network, false, 'nobody to ask: no network');
    denied.cleanup();
  });

  it('rules naming hosts open the door to those hosts only, without the bare rule: words list them; a deny rule for a host opens nothing', async () => {
    const { c, words, plan } = run(
      repo(),
      {
        rules: [
          { action: 'mcp.s.network.com.example.api', decision: 'allow', project },
          { action: 'mcp.s.network.org.example', decision: 'ask', project },
        ],
      },
      BWRAP,
    );
    assert.equal(c.kind === 'contained' && c.network.decision, 'deny');
    assert.ok(
      words.includes(
        "network: the hosts your rules name (mcp.s.network.com.example.api, mcp.s.network.org.example (asked), private addresses included), through its own network namespace, whose one way out is MCP Gate's filtering proxy (never this machine: not its loopback, not its addresses, not its abstract sockets; never link-local or metadata addresses)",
      ),
      words.join('\n'),
    );
    const p = await plan;
    assert.equal(p.sandbox?.network, true);
    assert.equal(typeof p.launch.door, 'function', 'the start opens a door');
    assert.equal(p.launch.env.HTTPS_PROXY, 'http://127.0.0.1:3128');
    p.cleanup();
    const denied = run(repo(), { rules: [{ action: 'mcp.s.network.com.example.api', decision: 'deny', project }] }, BWRAP);
    assert.ok(
      denied.words.some((l) => l.startsWith('network: none — ')),
      denied.words.join('\n'),
    );
    const none = await denied.plan;
    assert.equal(none.sandbox?.network, false);
    assert.equal(none.launch.door, undefined);
    none.cleanup();
  });

  it('the door decides each connection by the policy in force then: a rule added or removed mid-session applies at once; an ask is asked once per host', async () => {
    let raw: Omit<RawUserPolicy, 'file'> = { rules: [{ action: 'mcp.s.network', decision: 'allow', project }] };
    const asked: string[] = [];
    const o = {
      server,
      who: repo(),
      project,
      plan: { ...server.pinned!.plan!, executable: server.pinned!.plan!.executable! },
      env: {},
      decision: decideStart(policy(raw), repo(), home, {
        live: () => policy(raw),
        asker: async (q: { action: string }) => (asked.push(q.action), 'once' as const),
      }),
      home,
      npm: {} as NpmOps,
    };
    const bare = await resolve(decideFor(repo(), 'mcp.s.network', policy(raw).rules));
    const decide = networkDecider(o, bare);
    assert.deepEqual(await decide('api.example.com'), {
      allow: true,
      named: false,
      reason: bare.reason,
      permit: JSON.stringify({ action: 'mcp.s.network.com.example.api', decision: 'allow', project }),
    });
    raw = { rules: [] };
    const closed = await decide('api.example.com');
    assert.equal(closed.allow, false, 'the bare rule removed: public hosts closed at once');
    assert.match(closed.reason, /^mcp\.s\.network\.com\.example\.api is refused: no rule names this host, and mcp\.s\.network is denied/);
    raw = { rules: [{ action: 'mcp.s.network.com.example.api', decision: 'ask', project }] };
    assert.deepEqual([(await decide('api.example.com')).allow, (await decide('api.example.com')).named], [true, true]);
    assert.deepEqual(asked, ['mcp.s.network.com.example.api'], 'asked once for the host');
  });

  it('extra paths from the settings: words list them; bwrap binds them', async () => {
    const extra = fs.realpathSync(path.join(ROOT, 'docs'));
    const { c, words, plan } = run(repo(), { sandbox: { servers: [{ server: 's', project, read: [extra] }] } }, BWRAP);
    assert.deepEqual(c.kind === 'contained' && c.extraRead, [extra]);
    assert.ok(words.includes(`extra read (your settings): ${extra}`), words.join('\n'));
    const p = await plan;
    assert.ok(p.sandbox!.readOnly.includes(extra), p.sandbox!.readOnly.join(', '));
    p.cleanup();
  });

  it('opted out: words name the opt-out; it runs uncontained, in its own PID namespace only', async () => {
    const { c, words, plan } = run(repo(), { sandbox: { servers: [{ server: 's', project, off: true }] } }, BWRAP);
    assert.equal(c.kind, 'uncontained');
    assert.equal(c.kind === 'uncontained' && c.optOut?.origin.file, 'config.json');
    assert.deepEqual(words, [
      'NOT contained: your opt-out in config.json — it runs with your full authority (logged at each start)',
      'its own processes: it runs in its own PID namespace (bubblewrap, nothing else contained), so everything it starts ends when it stops',
    ]);
    const p = await plan;
    assert.equal(p.sandbox, undefined);
    assert.equal(p.optOut, 'config.json');
    assert.deepEqual(p.processes, { pidNamespace: true });
    assert.equal(p.launch.command, BWRAP.bwrap);
    // only a PID namespace: the whole filesystem as it is, no other unshare, no capability drop
    assert.deepEqual(p.launch.args, [
      '--unshare-pid',
      '--dev-bind',
      '/',
      '/',
      '--die-with-parent',
      '--',
      server.pinned!.plan!.executable,
      ...server.pinned!.plan!.args,
    ]);
  });

  it('a user server the user did not ask to contain, without bubblewrap: words say so and that a daemon may outlive it; it still starts, plainly', async () => {
    const { c, words, plan } = run({ name: 's', scope: 'user' }, {}, NO_BWRAP);
    assert.deepEqual(c, { kind: 'uncontained' });
    assert.match(words[0], /^not contained: a user-scope server runs as you/);
    assert.equal(
      words[1],
      'its own processes: bubblewrap cannot start here (bubblewrap (bwrap) not found on PATH), so a stop ends its process group and their descendants only — a double-forked daemon may outlive it (fix: install bubblewrap)',
    );
    const p = await plan;
    assert.equal(p.sandbox, undefined);
    assert.equal(p.optOut, undefined);
    assert.equal(p.launch.command, server.pinned!.plan!.executable);
    assert.equal(p.processes?.pidNamespace, false);
    assert.match(
      p.processes?.pidNamespace === false ? p.processes.why : '',
      /a daemon that left both may outlive it \(fix: install bubblewrap\)/,
    );
  });

  describe("the bytecode folder of an uncontained server (PYTHONPYCACHEPREFIX): the user's own, checked", () => {
    const NOBODY = 65534;
    const user: ServerIdentity = { name: 's', scope: 'user' };
    const startWith = (cache: string) =>
      startPlan({
        server,
        who: user,
        project,
        plan: { ...server.pinned!.plan!, executable: server.pinned!.plan!.executable! },
        env: {},
        decision: decideStart(policy({}), user, home),
        home,
        hostEnv: { XDG_CACHE_HOME: cache },
        probe: () => NO_BWRAP,
        npm: {} as NpmOps,
      });

    it("is made under the user's cache, mode 0700, never in the shared /tmp (a folder planted there by another user is not used)", async () => {
      const shared = `/tmp/mcp-gate-pycache-${process.getuid!()}`;
      const planted = !fs.existsSync(shared);
      if (planted) {
        fs.mkdirSync(shared, { mode: 0o777 });
        fs.chownSync(shared, NOBODY, NOBODY);
      }
      try {
        const cache = tempDir('mcp-gate-cache-');
        const p = await startWith(cache);
        const dir = p.launch.env!.PYTHONPYCACHEPREFIX!;
        assert.ok(dir.startsWith(`${cache}/mcp-gate/`), dir);
        assert.notEqual(dir, shared);
        const st = fs.statSync(dir);
        assert.equal(st.mode & 0o777, 0o700);
        assert.equal(st.uid, process.getuid!());
      } finally {
        if (planted) fs.rmdirSync(shared);
      }
    });

    it('a folder of that name owned by another user is refused with the fix; so is one others may write to', async () => {
      const cache = tempDir('mcp-gate-cache-');
      const first = await startWith(cache);
      const dir = first.launch.env!.PYTHONPYCACHEPREFIX!;
      fs.chownSync(dir, NOBODY, NOBODY);
      await assert.rejects(
        startWith(cache),
        (e: unknown) =>
          e instanceof ContainRefused &&
          /its private folder .*pycache belongs to uid 65534, not to you \(uid 0\), so another user could put code in it; remove it/.test(
            (e as Error).message,
          ),
      );
      fs.chownSync(dir, process.getuid!(), process.getgid!());
      fs.chmodSync(dir, 0o777);
      await assert.rejects(
        startWith(cache),
        (e: unknown) => e instanceof ContainRefused && /has mode 0777, which lets other users in/.test((e as Error).message),
      );
      fs.rmdirSync(dir);
      fs.symlinkSync(tempDir('mcp-gate-elsewhere-'), dir);
      await assert.rejects(
        startWith(cache),
        (e: unknown) => e instanceof ContainRefused && /is not a folder \(a link or a file\)/.test((e as Error).message),
      );
    });
  });

  it('settings that cannot be used: words say it cannot start and why; it does not start', async () => {
    const { c, words, plan } = run(repo(), { sandbox: { bogus: true } }, BWRAP);
    assert.equal(c.kind, 'refused');
    const problem = c.kind === 'refused' ? c.problems[0] : '';
    assert.match(problem, /unknown key "bogus"/);
    assert.deepEqual(words, [`cannot start: your sandbox settings cannot be used: ${problem}`]);
    await assert.rejects(plan, (e: Error) => e instanceof ContainRefused && e.message.includes(problem));
  });

  it('no bubblewrap here: words say it cannot start here; it does not start, naming the cause and the fix', async () => {
    const { c, words, plan } = run(repo(), {}, NO_BWRAP);
    assert.equal(c.kind, 'unavailable');
    assert.deepEqual(words, [
      `cannot start here: it must run contained and the sandbox is unavailable: ${NO_BWRAP.reason}; fix: ${NO_BWRAP.fix}`,
    ]);
    await assert.rejects(
      plan,
      (e: Error) => e instanceof ContainRefused && e.message.includes(NO_BWRAP.reason) && e.message.includes(NO_BWRAP.fix),
    );
  });

  it("limits by default: the words give each one; the sandbox's first command is prlimit with them (hard = soft), then the server", async () => {
    const { words, plan } = run(repo(), {}, BWRAP);
    const line = words.find((l) => l.startsWith('limits'));
    assert.equal(
      line,
      `limits: memory ${DEFAULT_LIMITS.memoryMiB} MiB per process, and for the whole server counted once a second (no cgroup: no cgroup in this test); ${DEFAULT_LIMITS.processes} processes and threads (its own, counted in its user namespace); CPU time ${DEFAULT_LIMITS.cpuSeconds} s per process; a server that reaches one is stopped and the log says which`,
    );
    const p = await plan;
    assert.equal(p.launch.command, BWRAP.bwrap, 'no cgroup to join: bwrap itself');
    const inner = p.launch.args.slice(p.launch.args.indexOf('--') + 1);
    const bytes = DEFAULT_LIMITS.memoryMiB * 1024 * 1024;
    assert.deepEqual(inner.slice(0, 6), [
      '/usr/bin/prlimit',
      `--nproc=${DEFAULT_LIMITS.processes}:${DEFAULT_LIMITS.processes}`,
      `--data=${bytes}:${bytes}`,
      `--cpu=${DEFAULT_LIMITS.cpuSeconds}:${DEFAULT_LIMITS.cpuSeconds + 5}`,
      '--core=0:0',
      '--',
    ]);
    assert.equal(inner[6], server.pinned!.plan!.executable);
    assert.match(p.sandbox!.text, /\nlimits: memory 4096 MiB per process/);
    p.cleanup();
  });

  it('as root without a cgroup: the server cannot start here, and the preview and the start say why and what to do', async () => {
    const { c, words, plan } = run(repo(), {}, BWRAP, undefined, mechanismFor(undefined, 'this test has no cgroup', true));
    assert.equal(c.kind, 'unavailable');
    assert.deepEqual(words, [
      "cannot start here: it must run contained and the sandbox is unavailable: MCP Gate runs as root and this test has no cgroup: the kernel exempts root from the process limit, so a contained server's processes could not be limited (a fork bomb would take every process slot of this machine); fix: run MCP Gate as a normal user, or as root where the cgroup v1 pids and memory hierarchies are mounted and writable",
    ]);
    await assert.rejects(
      plan,
      (e: Error) => e instanceof ContainRefused && /MCP Gate runs as root .*fix: run MCP Gate as a normal user/.test(e.message),
    );
    // Not root: the rlimits alone hold (the kernel counts the process limit for a normal user).
    assert.equal(mechanismFor(undefined, 'no cgroup', false).refused, undefined);
  });

  it("with a cgroup: the launch joins it before bwrap runs (sh writes its pid, then execs bwrap), with the server's limits in it; cleanup removes it", async () => {
    const m = limitMechanism(true);
    assert.ok(m.cgroup, 'this machine kind gives root a cgroup v1 hierarchy');
    const { words, plan } = run(
      repo(),
      { sandbox: { servers: [{ server: 's', project, processes: 200, memoryMiB: 512 }] } },
      BWRAP,
      undefined,
      m,
    );
    assert.ok(
      words.includes(
        'limits (some set by your sandbox entries): memory 512 MiB for the whole server (a cgroup) and per process; 200 processes and threads (a cgroup); CPU time 14400 s per process; a server that reaches one is stopped and the log says which',
      ),
      words.join('\n'),
    );
    const p = await plan;
    assert.equal(p.launch.command, '/bin/sh');
    const files = p.launch.args.slice(4, 6);
    assert.equal(p.launch.args[3], '2');
    assert.deepEqual(
      files.map((f) => path.basename(f)),
      ['cgroup.procs', 'cgroup.procs'],
    );
    assert.equal(fs.readFileSync(path.join(path.dirname(files[0]), 'pids.max'), 'utf8').trim(), '200');
    assert.equal(fs.readFileSync(path.join(path.dirname(files[1]), 'memory.limit_in_bytes'), 'utf8').trim(), String(512 * 1024 * 1024));
    assert.equal(p.launch.args[6], BWRAP.bwrap);
    p.cleanup();
    assert.ok(
      files.every((f) => !fs.existsSync(path.dirname(f))),
      'its cgroup is gone',
    );
  });

  it('an entry sets a limit: the largest of the entries that apply wins, and a stop names that entry; a bad value refuses the settings, naming the key', async () => {
    const { c } = run(
      repo(),
      {
        sandbox: {
          servers: [
            { server: '*', project, processes: 2000 },
            { server: 's', project, processes: 3000, cpuSeconds: 60 },
          ],
        },
      },
      BWRAP,
    );
    assert.ok(c.kind === 'contained');
    assert.deepEqual(c.limits.values, { memoryMiB: DEFAULT_LIMITS.memoryMiB, processes: 3000, cpuSeconds: 60 });
    const p = await run(repo(), { sandbox: { servers: [{ server: 's', project, cpuSeconds: 60 }] } }, BWRAP).plan;
    assert.match(
      p.limits!.reached({ limit: 'cpuSeconds', detail: 'x' }),
      /^x; MCP Gate stopped it and everything it started; if it needs more, raise "cpuSeconds" in its sandbox entry in config\.json$/,
    );
    assert.match(
      p.limits!.reached({ limit: 'processes', detail: 'y' }),
      /raise it with "processes": 4096 in a sandbox entry for it in your user configuration$/,
    );
    p.cleanup();
    for (const [key, value] of [
      ['processes', 0],
      ['memoryMiB', '8g'],
      ['cpuSeconds', 1.5],
      ['memoryMiB', 32],
    ] as const) {
      const bad = run(repo(), { sandbox: { servers: [{ server: 's', project, [key]: value }] } }, BWRAP);
      assert.equal(bad.c.kind, 'refused');
      assert.match(
        bad.c.kind === 'refused' ? bad.c.problems[0] : '',
        new RegExp(`sandbox\\.servers\\[0\\]: "${key}" must be a whole number of at least ${LIMIT_KEYS[key]}`),
      );
      await assert.rejects(bad.plan, ContainRefused);
    }
  });

  it("package.json's mcpGate.sandbox schema has the keys the parser accepts", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const conf = pkg.contributes.configuration;
    const props = (Array.isArray(conf) ? conf.map((c: { properties: Record<string, unknown> }) => c.properties) : [conf.properties]).find(
      (p: Record<string, unknown>) => p['mcpGate.sandbox'],
    );
    const schema = props['mcpGate.sandbox'];
    assert.deepEqual(Object.keys(schema.properties), [...SANDBOX_KEYS]);
    assert.deepEqual(Object.keys(schema.properties.servers.items.properties), [...SANDBOX_ENTRY_KEYS]);
    for (const [k, least] of Object.entries(LIMIT_KEYS))
      assert.deepEqual(schema.properties.servers.items.properties[k], { type: 'integer', minimum: least }, k);
  });
});
