// Contained execution with a REAL bubblewrap: a hostile fixture (test/fixtures/sandbox/attacker.ts) runs as an
// approved copy overlaid on the workspace and tries to read ~/.ssh, write outside the workspace, reach a TCP
// listener on the host's 127.0.0.1, change the files it runs, and leave a setsid daemon behind. Nothing is
// skipped: without bwrap every case fails with the probe's reason and fix (CI installs bubblewrap).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  bubblewrapInstallCommand,
  buildSandbox,
  diagnoseBwrapFailure,
  sandboxAvailable,
  SandboxUnavailableError,
  type SandboxProbe,
  type SandboxInput,
} from '../../../../src/host/sandbox/sandbox';
import { SandboxConfigError } from '../../../../src/host/sandbox/mounts';
import { rlimitArgs } from '../../../../src/host/sandbox/limits';
import { socketFilter } from '../../../../src/host/sandbox/seccomp';
import { DEFAULT_LIMITS } from '../../../../src/policy/sandbox-profile';
import { StdioTransport } from '../../../../src/host/sandbox/stdio';
import { openDoor } from '../../../../src/host/net/door';
import { Egress } from '../../../../src/host/net/egress';
import { cleanupTemp, ROOT, tempDir } from '../../helpers';

const ATTACKER = path.join(ROOT, 'out', 'test', 'fixtures', 'sandbox', 'attacker.js');
const FIXTURE_SERVER = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');
const NODE = fs.realpathSync(process.execPath);

/** Every process whose command line contains `marker` (bwrap's own included), from /proc. */
function processesWith(marker: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(marker)) out.push(`${e}: ${cmd.slice(0, 200)}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function waitFor<T>(f: () => T | undefined, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function noneLeft(marker: string): Promise<void> {
  const end = Date.now() + 5000;
  let left = processesWith(marker);
  while (left.length && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    left = processesWith(marker);
  }
  assert.deepEqual(left, [], 'processes of the sandbox outlived the stop');
}

type Outcome = { ok: true; value?: string } | { ok: false; code: string };

interface Stage {
  base: string;
  home: string;
  workspace: string;
  outside: string;
  copies: string;
  readOnly: string;
  writable: string;
  cache: string;
  marker: string;
  port: number;
  input: (network: boolean, unixSockets?: boolean) => SandboxInput;
}

let listener: net.Server;
let abstractListener: net.Server;
const ABSTRACT = `mcp-gate-sandbox-test-${process.pid}`;
let port = 0;
let available: SandboxProbe;

function stage(): Stage {
  const base = fs.realpathSync(tempDir('mcp-gate-sandbox-'));
  const home = path.join(base, 'home');
  const workspace = path.join(base, 'workspace');
  const outside = path.join(base, 'outside');
  const copies = path.join(base, 'copies');
  const readOnly = path.join(base, 'extra-read');
  const writable = path.join(base, 'extra-write');
  const cache = path.join(home, '.cache', 'tool');
  for (const d of [path.join(home, '.ssh'), path.join(home, '.aws'), workspace, outside, copies, readOnly, writable, cache])
    fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(home, '.ssh', 'id_test'), 'PRIVATE KEY');
  fs.writeFileSync(path.join(home, '.aws', 'credentials'), 'aws_secret_access_key = x');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
  fs.writeFileSync(path.join(readOnly, 'data.txt'), 'readable');
  // The workspace holds different bytes than what was approved: the sandbox must run and show the copies.
  fs.writeFileSync(path.join(workspace, 'server.js'), 'process.exit(42) // swapped after approval');
  fs.writeFileSync(path.join(workspace, 'config.txt'), 'tampered in the workspace');
  fs.copyFileSync(ATTACKER, path.join(copies, 'server.js'));
  fs.writeFileSync(path.join(copies, 'config.txt'), 'approved bytes');
  const marker = `mcp-gate-sandbox-marker-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const input = (network: boolean, unixSockets = false): SandboxInput => ({
    launch: {
      executable: NODE,
      argv: [path.join(workspace, 'server.js'), marker],
      cwd: workspace,
      env: {
        PATH: '/usr/bin:/bin',
        HOME: home,
        TMPDIR: outside,
        FIXTURE_RESULT: path.join(workspace, 'result.json'),
        FIXTURE_OVERLAY: path.join(workspace, 'config.txt'),
        FIXTURE_OUTSIDE_SECRET: path.join(outside, 'secret.txt'),
        FIXTURE_OUTSIDE_WRITE: path.join(outside, 'pwned.txt'),
        FIXTURE_WORKSPACE_WRITE: path.join(workspace, 'written.txt'),
        FIXTURE_EXTRA_READ: path.join(readOnly, 'data.txt'),
        FIXTURE_EXTRA_WRITE: path.join(writable, 'out.txt'),
        FIXTURE_CACHE_WRITE: path.join(cache, 'entry'),
        FIXTURE_PORT: String(port),
        FIXTURE_ABSTRACT: ABSTRACT,
        FIXTURE_SOCKET_FILE: path.join(workspace, 'host.sock'),
      },
    },
    workspace,
    overlays: [
      { source: path.join(copies, 'server.js'), target: path.join(workspace, 'server.js') },
      { source: path.join(copies, 'config.txt'), target: path.join(workspace, 'config.txt') },
    ],
    profile: {
      network,
      unixSockets,
      extraRead: [readOnly],
      extraWrite: [writable],
      caches: ['~/.cache/tool', '~/.npm-missing'],
      home,
      limits: DEFAULT_LIMITS,
    },
  });
  return { base, home, workspace, outside, copies, readOnly, writable, cache, marker, port, input };
}

/** A service of the host listening on a socket file in the workspace (closed with the test's other listeners). */
const socketFiles: net.Server[] = [];
/** Connections the host's socket-file services accepted, by workspace: a refused server must leave none. */
const accepted = new Map<string, number>();
async function hostSocketFile(s: Stage): Promise<void> {
  accepted.set(s.workspace, 0);
  const l = net.createServer((sock) => {
    accepted.set(s.workspace, (accepted.get(s.workspace) ?? 0) + 1);
    sock.on('error', () => undefined); // a client that closes without reading
    sock.end('hello over a socket file');
  });
  await new Promise<void>((r) => l.listen(path.join(s.workspace, 'host.sock'), r));
  socketFiles.push(l);
}

/** Spawns a sandbox command as the host does: with its seccomp program on fd 3 (see SandboxCommand.seccomp). */
function spawnContained(c: ReturnType<typeof buildSandbox>): ChildProcess {
  const child = spawn(c.command, c.args, {
    cwd: c.cwd,
    env: c.env,
    detached: true,
    stdio: c.door ? ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  (child.stdio[3] as NodeJS.WritableStream).end(c.seccomp);
  if (c.door) {
    // The door as a start opens it (src/host/sandbox/stdio.ts), to a proxy that lets nothing through.
    const fds = child.stdio as unknown as [unknown, unknown, unknown, unknown, NodeJS.ReadableStream, NodeJS.WritableStream];
    let info = '';
    fds[4].on('data', (d: Buffer) => {
      info += d;
      if (!info.includes('}')) return;
      fds[4].removeAllListeners('data');
      const egress = new Egress({
        decide: async () => ({ allow: false, named: false, reason: 'nothing allowed here' }),
        onEvent: () => undefined,
      });
      child.once('exit', () => egress.close());
      void openDoor(JSON.parse(info)['child-pid'], egress).then(() => fds[5].end('1'));
    });
  }
  return child;
}

function start(s: Stage, network: boolean, unixSockets = false): ChildProcess {
  const c = buildSandbox(s.input(network, unixSockets), available);
  const child = spawnContained(c);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.once('exit', (code) => {
    if (code) err += `\n(exited ${code})`;
  });
  (child as ChildProcess & { errText: () => string }).errText = () => err;
  return child;
}

async function result(s: Stage, child?: ChildProcess): Promise<Record<string, Outcome> & { daemonStarter: number; home: string }> {
  const file = path.join(s.workspace, 'result.json');
  const text = await waitFor(
    () => {
      if (child && child.exitCode !== null)
        throw new Error(`the sandbox exited: ${(child as ChildProcess & { errText: () => string }).errText()}`);
      try {
        const t = fs.readFileSync(file, 'utf8');
        return t.endsWith('}') ? t : undefined;
      } catch {
        return undefined;
      }
    },
    20_000,
    'the fixture result',
  );
  // The daemon is started before the result is written; wait until it is there to be killed.
  await waitFor(() => (processesWith(`${s.marker} daemon`).length ? true : undefined), 5000, 'the setsid daemon');
  return JSON.parse(text);
}

describe('host/sandbox: contained execution with bubblewrap', function () {
  this.timeout(60_000);

  before(async function () {
    const probe = sandboxAvailable();
    if (!probe.ok) throw new Error(`bubblewrap sandbox unavailable: ${probe.reason} — fix: ${probe.fix}`);
    available = probe;
    listener = net.createServer((sock) => sock.end('hello from the host'));
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as net.AddressInfo).port;
    abstractListener = net.createServer((sock) => sock.end('hello over an abstract socket'));
    await new Promise<void>((r) => abstractListener.listen(`\0${ABSTRACT}`, r));
  });

  after(() => {
    listener?.close();
    abstractListener?.close();
    for (const l of socketFiles) l.close();
    cleanupTemp();
  });

  it('the probe finds bwrap, names its version and caches the answer', () => {
    const a = sandboxAvailable();
    assert.equal(a.ok, true);
    assert.ok(a.ok && path.isAbsolute(a.bwrap) && /^\d+\.\d+/.test(a.version), JSON.stringify(a));
    assert.equal(sandboxAvailable(), a, 'cached per process');
  });

  it('without network: home, outside files, the host loopback and a host socket file in the workspace are out of reach; the workspace is writable; the approved copies run and cannot be changed; SIGKILL to bwrap leaves nothing', async () => {
    const s = stage();
    await hostSocketFile(s);
    const child = start(s, false);
    try {
      const r = await result(s, child);
      // The process that ran is the approved copy (the workspace's server.js would exit 42).
      assert.equal(r.home, s.home);
      assert.deepEqual(r.readSsh, { ok: false, code: 'ENOENT' });
      assert.deepEqual(r.listHome, { ok: true, value: '.cache' }, 'HOME is empty but for the listed cache');
      assert.equal(r.writeHome.ok, true, 'the write lands in the tmpfs…');
      assert.equal(fs.existsSync(path.join(s.home, 'pwned')), false, '…and never in the real home');
      assert.deepEqual(r.readOutside, { ok: false, code: 'ENOENT' });
      assert.deepEqual(r.writeOutside, { ok: false, code: 'ENOENT' });
      assert.equal(fs.existsSync(path.join(s.outside, 'pwned.txt')), false);
      assert.deepEqual(r.writeEtc, { ok: false, code: 'EROFS' });
      assert.equal(r.readShadow.ok && r.readShadow.value !== '', false, '/etc/shadow is masked');
      assert.ok(r.listRoot.ok, JSON.stringify(r.listRoot));
      for (const hidden of ['home', 'root', 'run', 'var', 'sys', 'mnt', 'srv', 'media', 'work'])
        assert.ok(!r.listRoot.value!.split(',').includes(hidden), `/${hidden} is visible: ${r.listRoot.value}`);
      assert.deepEqual(r.rootHome, { ok: false, code: 'ENOENT' });
      assert.equal(r.connect.ok, false, `reached the host's 127.0.0.1 without network: ${JSON.stringify(r.connect)}`);
      assert.equal(r.connectAbstract.ok, false, `reached the host's abstract socket without network: ${JSON.stringify(r.connectAbstract)}`);
      // The socket file is visible (the workspace is), and the seccomp filter refuses the socket to reach it with.
      assert.deepEqual(r.connectSocketFile, { ok: false, code: 'EPERM' }, "a host service's socket file in the workspace");
      assert.equal(accepted.get(s.workspace), 0, 'the host service saw no connection');
      assert.deepEqual(r.childStdio, { ok: true, value: 'child ok' }, 'child processes with piped stdio still work');
      assert.deepEqual(r.writeWorkspace, { ok: true });
      assert.equal(fs.readFileSync(path.join(s.workspace, 'written.txt'), 'utf8'), 'written inside');
      // The overlay shows the copy's bytes, and no way of changing it works.
      assert.deepEqual(r.overlayRead, { ok: true, value: 'approved bytes' });
      for (const k of ['overlayWrite', 'overlayAppend', 'overlayChmod', 'overlayUnlink', 'overlayRename', 'selfWrite'])
        assert.equal(r[k].ok, false, `${k}: ${JSON.stringify(r[k])}`);
      assert.deepEqual(r.overlayWrite, { ok: false, code: 'EROFS' });
      assert.equal(fs.readFileSync(path.join(s.copies, 'config.txt'), 'utf8'), 'approved bytes');
      assert.equal(fs.readFileSync(path.join(s.copies, 'server.js'), 'utf8'), fs.readFileSync(ATTACKER, 'utf8'));
      assert.equal(fs.readFileSync(path.join(s.workspace, 'config.txt'), 'utf8'), 'tampered in the workspace');
      // extraRead is readable, not writable; extraWrite and the cache are writable.
      assert.deepEqual(r.extraRead, { ok: true, value: 'readable' });
      assert.deepEqual(r.extraReadWrite, { ok: false, code: 'EROFS' });
      assert.deepEqual(r.extraWrite, { ok: true });
      assert.equal(fs.readFileSync(path.join(s.writable, 'out.txt'), 'utf8'), 'written to extraWrite');
      assert.deepEqual(r.cacheWrite, { ok: true });
      assert.equal(fs.readFileSync(path.join(s.cache, 'entry'), 'utf8'), 'cached');
      // Its own PID namespace: a handful of processes, not the host's.
      assert.ok(r.pids.ok && r.pids.value!.split(',').length < 10, JSON.stringify(r.pids));
      assert.equal(r.daemonStarter, 0);
      assert.ok(processesWith(`${s.marker} daemon`).length === 1, 'the daemon runs');
      process.kill(child.pid!, 'SIGKILL');
      await noneLeft(s.marker);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it("with network: true the sandbox keeps its own network namespace (one door, ./egress.ts): the host's 127.0.0.1 and its abstract Unix sockets stay out of reach, unixSockets: true or not", async () => {
    for (const unixSockets of [false, true]) {
      const s = stage();
      const child = start(s, true, unixSockets);
      try {
        const r = await result(s, child);
        assert.equal(r.connect.ok, false, `reached the host's 127.0.0.1 with network: ${JSON.stringify(r.connect)}`);
        assert.equal(
          r.connectAbstract.ok,
          false,
          `reached the host's abstract socket with network (unixSockets ${unixSockets}): ${JSON.stringify(r.connectAbstract)}`,
        );
        if (!unixSockets)
          assert.deepEqual(r.connectAbstract, { ok: false, code: 'EPERM' }, 'the seccomp filter: no Unix socket to reach one with');
        assert.deepEqual(r.readSsh, { ok: false, code: 'ENOENT' }, 'the filesystem stays contained');
        process.kill(child.pid!, 'SIGKILL');
        await noneLeft(s.marker);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
  });

  it("with unixSockets: true (the user's setting) the socket file in the workspace is reachable; the rest stays contained", async () => {
    const s = stage();
    await hostSocketFile(s);
    const c = buildSandbox(s.input(false, true), available);
    assert.ok(c.args.includes('--seccomp'), 'the rest of the filter stays');
    assert.match(c.description.text, /Unix sockets allowed \(your setting unixSockets: true\)/);
    const child = start(s, false, true);
    try {
      const r = await result(s, child);
      assert.deepEqual(r.connectSocketFile, { ok: true, value: 'hello over a socket file' });
      assert.equal(accepted.get(s.workspace), 1, 'the host service saw it');
      assert.equal(r.connect.ok, false, 'still no host loopback');
      assert.deepEqual(r.readSsh, { ok: false, code: 'ENOENT' });
      process.kill(child.pid!, 'SIGKILL');
      await noneLeft(s.marker);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('the seccomp filter, shape by shape (Python in the sandbox), without and with unixSockets: IP and netlink only, no Unix socket or datagram pair unless allowed, no other family, no io_uring, no user namespace (fork still works)', async () => {
    const s = stage();
    await hostSocketFile(s);
    const probe = [
      'import socket, ctypes, json',
      'out = {}',
      'def t(name, f):',
      '    try:',
      '        f(); out[name] = "ok"',
      '    except OSError as e:',
      '        out[name] = e.errno',
      `t("connect_file", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(${JSON.stringify(path.join(s.workspace, 'host.sock'))}))`,
      't("unix_dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))',
      't("unix_stream_cloexec", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC))',
      't("pair_stream", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM))',
      't("pair_seqpacket", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))',
      't("pair_dgram", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))',
      't("pair_dgram_nonblock", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK))',
      't("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))',
      't("inet6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))',
      't("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))',
      // AF_VSOCK reaches a VM's host whatever the network namespace; AF_ALG and AF_PACKET are kernel surface.
      't("vsock", lambda: socket.socket(40, socket.SOCK_STREAM))',
      't("alg", lambda: socket.socket(38, socket.SOCK_SEQPACKET))',
      't("packet", lambda: socket.socket(17, socket.SOCK_RAW))',
      // The family in the upper half of the 64-bit argument: the kernel reads an int, and so does the filter.
      'libc = ctypes.CDLL(None, use_errno=True)',
      'libc.syscall.restype = ctypes.c_long',
      'r = libc.syscall(ctypes.c_long(41 if ctypes.sizeof(ctypes.c_void_p) == 8 and __import__("platform").machine() == "x86_64" else 198), ctypes.c_long((1 << 32) | 1), ctypes.c_long(1), ctypes.c_long(0))',
      'out["unix_high_bits"] = "ok" if r >= 0 else ctypes.get_errno()',
      'params = ctypes.create_string_buffer(120)',
      'r = libc.syscall(ctypes.c_long(425), ctypes.c_long(8), params)',
      'out["io_uring_setup"] = "ok" if r >= 0 else ctypes.get_errno()',
      // No user namespace of its own (unshare and clone with CLONE_NEWUSER; clone3, whose flags a filter cannot read).
      'out["unshare_user"] = "ok" if libc.unshare(0x10000000) == 0 else ctypes.get_errno()',
      'args = ctypes.create_string_buffer(88)',
      'r = libc.syscall(ctypes.c_long(435), args, ctypes.c_long(88))',
      'out["clone3"] = "ok" if r >= 0 else ctypes.get_errno()',
      'import os',
      'pid = os.fork()',
      'os._exit(0) if pid == 0 else None',
      'out["fork"] = "ok" if os.waitpid(pid, 0)[1] == 0 else "failed"',
      'print(json.dumps(out))',
    ].join('\n');
    fs.writeFileSync(path.join(s.workspace, 'probe.py'), probe);
    const runProbe = async (unixSockets: boolean) => {
      const c = buildSandbox(
        {
          launch: {
            executable: fs.realpathSync('/usr/bin/python3'),
            argv: [path.join(s.workspace, 'probe.py')],
            cwd: s.workspace,
            env: { PATH: '/usr/bin:/bin' },
          },
          workspace: s.workspace,
          overlays: [],
          profile: { network: false, unixSockets, extraRead: [], extraWrite: [], caches: [], home: s.home, limits: DEFAULT_LIMITS },
        },
        available,
      );
      const child = spawnContained(c);
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d));
      child.stderr!.on('data', (d: Buffer) => (err += d));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      assert.equal(code, 0, err);
      return JSON.parse(out);
    };
    const { EPERM, ENOSYS, EAFNOSUPPORT } = os.constants.errno;
    const always = {
      pair_stream: 'ok',
      pair_seqpacket: 'ok',
      inet: 'ok',
      inet6: 'ok',
      netlink: 'ok',
      vsock: EAFNOSUPPORT,
      alg: EAFNOSUPPORT,
      packet: EAFNOSUPPORT,
      io_uring_setup: ENOSYS,
      unshare_user: EPERM,
      clone3: ENOSYS,
      fork: 'ok',
    };
    assert.deepEqual(await runProbe(false), {
      ...always,
      connect_file: EPERM,
      unix_dgram: EPERM,
      unix_stream_cloexec: EPERM,
      pair_dgram: EPERM,
      pair_dgram_nonblock: EPERM,
      unix_high_bits: EPERM,
    });
    assert.deepEqual(await runProbe(true), {
      ...always,
      connect_file: 'ok',
      unix_dgram: 'ok',
      unix_stream_cloexec: 'ok',
      pair_dgram: 'ok',
      pair_dgram_nonblock: 'ok',
      unix_high_bits: 'ok',
    });
  });

  it("a normal close through the host's StdioTransport leaves no process (daemon included)", async () => {
    const s = stage();
    const c = buildSandbox(s.input(false), available);
    const t = new StdioTransport({ command: c.command, args: c.args, cwd: c.cwd, env: c.env, seccomp: c.seccomp });
    await t.start();
    try {
      await result(s);
      assert.ok(processesWith(s.marker).length >= 3, processesWith(s.marker).join('\n'));
    } finally {
      await t.close();
    }
    await noneLeft(s.marker);
  });

  it('the server exiting by itself takes its daemons with it', async () => {
    const s = stage();
    fs.writeFileSync(path.join(s.copies, 'server.js'), `${fs.readFileSync(ATTACKER, 'utf8')}\nsetTimeout(() => process.exit(0), 1500);\n`);
    const child = start(s, false);
    await result(s, child).catch((e) => {
      if (!/exited/.test(String(e))) throw e;
    });
    await waitFor(() => (child.exitCode !== null ? true : undefined), 10_000, 'the server to exit');
    await noneLeft(s.marker);
  });

  it('a real MCP server (SDK, over stdio) works contained: tools listed and called, nothing left after close', async () => {
    const s = stage();
    const marker = `${s.marker}-mcp`;
    const c = buildSandbox(
      {
        launch: { executable: NODE, argv: [FIXTURE_SERVER, marker], cwd: s.workspace, env: { PATH: '/usr/bin:/bin', HOME: s.home } },
        workspace: s.workspace,
        overlays: [],
        profile: {
          network: false,
          unixSockets: false,
          extraRead: [ROOT, fs.realpathSync(path.join(ROOT, 'node_modules'))],
          extraWrite: [],
          caches: [],
          home: s.home,
          limits: DEFAULT_LIMITS,
        },
      },
      available,
    );
    const t = new StdioTransport({ command: c.command, args: c.args, cwd: c.cwd, env: c.env, seccomp: c.seccomp });
    const client = new Client({ name: 'sandbox-test', version: '0' });
    await client.connect(t);
    try {
      const tools = await client.listTools();
      assert.deepEqual(
        tools.tools.map((x) => x.name),
        ['t0', 't1'],
      );
      const r = await client.callTool({ name: 't0', arguments: { text: 'contained' } });
      assert.match(JSON.stringify(r.content), /t0: contained/);
    } finally {
      await client.close();
    }
    await noneLeft(marker);
  });

  it('its own home: what it writes under HOME it finds at its next start, never in the real home; a link it left where a mount point goes is removed, not followed', async () => {
    const base = fs.realpathSync(tempDir('mcp-gate-own-home-'));
    const home = path.join(base, 'home');
    const own = path.join(base, 'own');
    const outside = path.join(base, 'outside');
    const workspace = path.join(home, 'project'); // inside HOME: its mount point is made in the own home
    for (const d of [path.join(home, '.ssh'), own, outside, workspace, path.join(base, 'cache')]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(home, '.ssh', 'id_test'), 'PRIVATE KEY');
    const run = async (
      script: string,
      caches: SandboxInput['profile']['caches'],
    ): Promise<{ code: number | null; out: string; err: string }> => {
      const c = buildSandbox(
        {
          launch: { executable: '/bin/sh', argv: ['-c', script], cwd: workspace, env: { PATH: '/usr/bin:/bin', HOME: home } },
          workspace,
          overlays: [],
          profile: {
            network: false,
            unixSockets: false,
            extraRead: [],
            extraWrite: [],
            caches,
            home,
            ownHome: own,
            limits: DEFAULT_LIMITS,
          },
        },
        available,
      );
      assert.match(c.description.text, /its own home, kept between its starts/);
      assert.ok(!c.description.empty.includes(home), 'HOME is not an empty tmpfs');
      const child = spawnContained(c);
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      return { code, out, err };
    };
    // First start: it keeps state under ~/.config, and leaves a link (its text names a host folder) where a cache
    // that does not exist yet would be shown.
    const first = await run(
      `ls -A "$HOME"; mkdir -p "$HOME/.config/srv" && echo first-start > "$HOME/.config/srv/state" && ln -s ${outside} "$HOME/.cache"`,
      [],
    );
    assert.equal(first.code, 0, first.err);
    assert.doesNotMatch(first.out, /\.ssh/, 'the real home is not shown');
    assert.equal(fs.readFileSync(path.join(own, '.config', 'srv', 'state'), 'utf8'), 'first-start\n');
    assert.equal(fs.existsSync(path.join(home, '.config')), false, 'nothing written in the real home');
    // Second start, now with a cache at ~/.cache/tool: the link is removed before bwrap makes the mount point.
    const second = await run('cat "$HOME/.config/srv/state"; ls -A "$HOME/.cache"; touch "$HOME/.cache/tool/entry"', [
      { source: path.join(base, 'cache'), target: '~/.cache/tool' },
    ]);
    assert.equal(second.code, 0, second.err);
    assert.match(second.out, /^first-start\ntool\n$/, 'its state is there at its next start, and the cache is where it belongs');
    assert.ok(fs.lstatSync(path.join(own, '.cache')).isDirectory(), 'the link was replaced by a folder');
    assert.deepEqual(fs.readdirSync(outside), [], 'nothing made through the link');
    assert.ok(fs.existsSync(path.join(base, 'cache', 'entry')), 'the cache is the bound one');
    // An interpreter under the real HOME (nvm's node, pyenv's python): shown as itself, though HOME is the own home.
    const nvmSh = path.join(home, '.nvm', 'bin', 'sh');
    fs.mkdirSync(path.dirname(nvmSh), { recursive: true });
    fs.copyFileSync('/bin/sh', nvmSh);
    fs.chmodSync(nvmSh, 0o755);
    const c3 = buildSandbox(
      {
        launch: { executable: nvmSh, argv: ['-c', 'echo from-nvm'], cwd: workspace, env: { PATH: '/usr/bin:/bin', HOME: home } },
        workspace,
        overlays: [],
        profile: {
          network: false,
          unixSockets: false,
          extraRead: [],
          extraWrite: [],
          caches: [],
          home,
          ownHome: own,
          limits: DEFAULT_LIMITS,
        },
      },
      available,
    );
    const child3 = spawnContained(c3);
    let out3 = '';
    let err3 = '';
    child3.stdout!.on('data', (d: Buffer) => (out3 += d.toString()));
    child3.stderr!.on('data', (d: Buffer) => (err3 += d.toString()));
    assert.equal(await new Promise<number | null>((r) => child3.once('exit', r)), 0, err3);
    assert.equal(out3, 'from-nvm\n');
    // An own home that overlaps the workspace is refused.
    assert.throws(
      () =>
        buildSandbox(
          {
            launch: { executable: '/bin/sh', argv: [], cwd: workspace, env: {} },
            workspace,
            overlays: [],
            profile: {
              network: false,
              unixSockets: false,
              extraRead: [],
              extraWrite: [],
              caches: [],
              home,
              ownHome: workspace,
              limits: DEFAULT_LIMITS,
            },
          },
          available,
        ),
      /overlap/,
    );
  });

  it('orders mounts parent first: /tmp and HOME tmpfs before a workspace inside them, overlays after the workspace', () => {
    const s = stage();
    const c = buildSandbox(s.input(false), available);
    const at = (...xs: string[]) => {
      for (let i = 0; i + xs.length <= c.args.length; i++) if (xs.every((x, j) => c.args[i + j] === x)) return i;
      assert.fail(`${xs.join(' ')} not in ${c.args.join(' ')}`);
    };
    assert.ok(at('--tmpfs', '/tmp') < at('--tmpfs', s.home));
    assert.ok(at('--tmpfs', s.home) < at('--bind', s.cache, s.cache));
    assert.ok(at('--tmpfs', '/tmp') < at('--bind', s.workspace, s.workspace));
    assert.ok(
      at('--bind', s.workspace, s.workspace) < at('--ro-bind', path.join(s.copies, 'config.txt'), path.join(s.workspace, 'config.txt')),
    );
    for (const f of ['--unshare-all', '--die-with-parent', '--new-session', '--dev', '--proc']) at(f);
    at('--cap-drop', 'ALL');
    assert.equal(c.args.includes('--share-net'), false);
    const withDoor = buildSandbox(s.input(true), available);
    assert.equal(withDoor.args.includes('--share-net'), false, "never the host's network namespace");
    assert.equal(withDoor.door, true);
    assert.deepEqual(withDoor.args.slice(withDoor.args.indexOf('--info-fd'), withDoor.args.indexOf('--info-fd') + 4), [
      '--info-fd',
      '4',
      '--block-fd',
      '5',
    ]);
    assert.equal(withDoor.env.HTTPS_PROXY, 'http://127.0.0.1:3128');
    // The first command inside is prlimit with the server's limits (hard = soft), then the server itself.
    assert.deepEqual(c.args.slice(at('--') + 1), [
      available.ok && available.prlimit,
      ...rlimitArgs(DEFAULT_LIMITS),
      '--',
      NODE,
      path.join(s.workspace, 'server.js'),
      s.marker,
    ]);
    // The environment goes to spawn, not on the command line (readable by every user in /proc).
    assert.equal(
      c.args.some((a) => a.includes('FIXTURE_') || a === '--setenv'),
      false,
    );
    assert.equal(c.env.HOME, s.home);
    assert.equal(c.env.TMPDIR, '/tmp');
    assert.match(c.description.text, /network none/);
    assert.deepEqual(c.description.missing, [path.join(s.home, '.npm-missing')]);
    assert.ok(c.description.readWrite.includes(s.workspace) && c.description.readOnly.includes(s.readOnly), c.description.text);
  });

  it('refuses inputs that would defeat it', () => {
    const s = stage();
    const base = s.input(false);
    const refused = (change: (i: SandboxInput) => void, re: RegExp) => {
      const i = structuredClone(base);
      change(i);
      assert.throws(
        () => buildSandbox(i, available),
        (e: unknown) => e instanceof SandboxConfigError && re.test((e as Error).message),
      );
    };
    refused((i) => (i.workspace = s.home), /home directory/);
    refused((i) => (i.workspace = '/'), /whole machine/);
    refused((i) => (i.profile.extraRead = [s.home]), /home directory/);
    refused((i) => (i.profile.caches = ['~']), /home directory/);
    refused(
      (i) => (i.overlays = [{ source: path.join(s.copies, 'config.txt'), target: path.join(s.outside, 'secret.txt') }]),
      /is not inside the workspace/,
    );
    refused((i) => (i.launch.cwd = 'relative'), /absolute path/);
    refused((i) => (i.launch.cwd = s.outside), /would not be visible/);
  });

  it('a missing bwrap comes with the one command that installs it with the package manager on PATH (and none where there is none)', () => {
    const bin = tempDir('mcp-gate-pm-');
    fs.writeFileSync(path.join(bin, 'dnf'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    assert.equal(bubblewrapInstallCommand(bin, false), 'sudo dnf install -y bubblewrap');
    assert.equal(bubblewrapInstallCommand(bin, true), 'dnf install -y bubblewrap');
    fs.writeFileSync(path.join(bin, 'apt-get'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    assert.equal(bubblewrapInstallCommand(bin, false), 'sudo apt-get install -y bubblewrap', 'apt-get is looked for first');
    fs.writeFileSync(path.join(bin, 'pacman'), 'not executable', { mode: 0o644 });
    assert.equal(bubblewrapInstallCommand(path.join(bin, 'none'), false), undefined);
    const probe = sandboxAvailable({ path: bin, refresh: true });
    assert.ok(
      !probe.ok && probe.install === `${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y bubblewrap`,
      JSON.stringify(probe),
    );
    const nowhere = sandboxAvailable({ path: '/nonexistent', refresh: true });
    assert.ok(!nowhere.ok && nowhere.install === undefined, JSON.stringify(nowhere));
  });

  it('the probe reports a missing bwrap with the fix, and namespace trouble by its sysctl', () => {
    const missing = sandboxAvailable({ path: '/nonexistent:/also-not-here', refresh: true });
    assert.equal(missing.ok, false);
    assert.ok(
      !missing.ok && /bubblewrap \(bwrap\) not found on PATH/.test(missing.reason) && /apt-get install bubblewrap/.test(missing.fix),
      JSON.stringify(missing),
    );
    const injected = sandboxAvailable({ bwrap: '/nonexistent/bwrap', refresh: true });
    assert.ok(!injected.ok && /not found at \/nonexistent\/bwrap/.test(injected.reason) && /apt-get install bubblewrap/.test(injected.fix));
    assert.throws(
      () => buildSandbox(stage().input(false), injected),
      (e: unknown) =>
        e instanceof SandboxUnavailableError &&
        /not available: bubblewrap not found at \/nonexistent\/bwrap.*fix: install bubblewrap/.test((e as Error).message),
    );

    const sysctl = (values: Record<string, string>) => (k: string) => values[k];
    const apparmor = diagnoseBwrapFailure(
      'bwrap: setting up uid map: Permission denied\n',
      sysctl({ 'kernel/apparmor_restrict_unprivileged_userns': '1' }),
    );
    assert.match(apparmor.reason, /kernel\.apparmor_restrict_unprivileged_userns=1/);
    assert.match(apparmor.fix, /apparmor_parser -r|sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/);
    const clone = diagnoseBwrapFailure(
      'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.',
      sysctl({ 'kernel/unprivileged_userns_clone': '0' }),
    );
    assert.match(clone.reason, /kernel\.unprivileged_userns_clone=0/);
    assert.match(clone.fix, /sysctl -w kernel\.unprivileged_userns_clone=1/);
    const max = diagnoseBwrapFailure(
      'bwrap: Creating new namespace failed: No space left on device',
      sysctl({ 'user/max_user_namespaces': '0' }),
    );
    assert.match(max.fix, /user\.max_user_namespaces=15000/);
    const unknown = diagnoseBwrapFailure('bwrap: Creating new namespace failed: Operation not permitted', sysctl({}));
    assert.match(unknown.reason, /could not create its namespaces: bwrap: Creating new namespace failed/);
  });

  it('the probe loads the seccomp filter: a bwrap that cannot is "unavailable" with the reason (no contained start without the filter)', () => {
    // A stand-in bwrap that runs everything but refuses a seccomp program, as a kernel without seccomp filters does.
    const dir = tempDir('mcp-gate-fake-bwrap-');
    const fake = path.join(dir, 'bwrap');
    fs.writeFileSync(
      fake,
      `#!/bin/sh\ncase "$*" in --version) echo 'bubblewrap 0.8.0'; exit 0;; *--seccomp*) echo 'bwrap: prctl(PR_SET_SECCOMP): Invalid argument' >&2; exit 1;; esac\nexit 0\n`,
      { mode: 0o755 },
    );
    const p = sandboxAvailable({ bwrap: fake, refresh: true, readSysctl: () => undefined });
    assert.equal(p.ok, false);
    assert.ok(
      !p.ok &&
        /could not load MCP Gate's seccomp filter \(sockets\): bwrap: prctl\(PR_SET_SECCOMP\): Invalid argument/.test(p.reason) &&
        /CONFIG_SECCOMP_FILTER/.test(p.fix),
      JSON.stringify(p),
    );
  });

  it('the seccomp filter is built for x64 and arm64, and for no other architecture (containment is refused there)', () => {
    for (const arch of ['x64', 'arm64']) {
      const f = socketFilter({ unixSockets: false }, arch)!;
      assert.ok(f.length > 0 && f.length % 8 === 0 && f.length / 8 < 64, `${arch}: ${f.length} bytes`);
      // The first instruction loads seccomp_data.arch (offset 4), the second compares it with the architecture's.
      assert.equal(f.readUInt16LE(0), 0x20);
      assert.equal(f.readUInt32LE(4), 4);
      assert.equal(f.readUInt32LE(12), arch === 'x64' ? 0xc000003e : 0xc00000b7);
    }
    assert.notDeepEqual(socketFilter({ unixSockets: false }, 'x64'), socketFilter({ unixSockets: false }, 'arm64'));
    for (const arch of ['ia32', 'riscv64', 's390x', 'ppc64']) assert.equal(socketFilter({ unixSockets: false }, arch), undefined, arch);
  });
});
