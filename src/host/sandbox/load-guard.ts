// Starting a server under the load guard (src/guard/, its own bundle in dist/guard/): a server whose approval
// relies on it (its pinned definition has `guarded`) has every Node and Python process check each file that
// becomes code against the workspace as approved (src/trust/approval/workspace-manifest.ts) when it loads.
//
// Contained, the guard does not depend on what the server does with its environment or command lines: MCP Gate
// binds a small wrapper over the server's interpreter and every node and python binary in the system's bin folders
// (BIN_DIRS; an interpreter elsewhere, under /opt for one, is not wrapped), the real binary at
// /run/mcp-gate/real/, the guard's files at /run/mcp-gate/guard/ and the manifest at /run/mcp-gate/manifest.json
// (all read-only). Each wrapper sets MCP_GATE_GUARD itself and starts the interpreter with the guard first, so a
// child started with a cleared environment, other flags (`-I -S`) or by another path to the same binary is
// guarded too. Uncontained (the user's opt-out), the guard is put on the command line and in the environment, and
// the guard's own patches carry it into child processes and workers (weaker: a child that clears its
// environment and is not started through Node's or Python's own calls is not guarded).
//
// A refusal is appended by the guard to a report file MCP Gate reads (`readRefusals`): the session stops the
// server, logs the file, and records it with the approval so the server waits for a review.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GUARDED_PROGRAM } from '../../trust/plan/launch-plan';
import { loadManifest, ManifestError, type GuardRefusal, type ManifestRef } from '../../trust/approval/workspace-manifest';

/** Where the guard's files are shown inside the sandbox. */
export const GUARD_MOUNT = '/run/mcp-gate';
const NODE_GUARD = 'node-guard.cjs';
/**
 * Flags node is started with before the guard. --expose-internals: on a Node without module.registerHooks (20, 22
 * before 22.15) the guard wraps the ES module loader's own functions in the thread that loads, instead of starting
 * module.register's loader thread (about 25 ms a start on Node 20), and so also sees the imports of an ES module
 * loaded by require(), which that thread's hooks do not (bench/RESULTS.md, "guard"). It is not allowed in
 * NODE_OPTIONS: a child the guard marks only through its environment uses module.register, and is refused
 * require() of an ES module in the workspace. What it gives the server's own code, Node's internal modules, builds
 * code from data no more than vm already does (README, "Does not protect against").
 */
const NODE_FLAGS = ['--expose-internals'];
const PYTHON_GUARD = 'mcp_gate_guard.py';
/** The Python guard's parts, which its entry loads from beside itself (src/guard/python/mcp_gate_guard_parts/). */
const PYTHON_GUARD_PARTS = 'mcp_gate_guard_parts';
/** Folders whose node and python binaries get a wrapper in the sandbox (the system's). */
const BIN_DIRS = ['/usr/bin', '/usr/local/bin', '/bin', '/usr/sbin', '/usr/local/sbin'];

export class GuardUnavailable extends Error {}

/** MCP Gate's guard files: dist/guard/ beside the running bundle, or the checkout's dist/guard (tests). */
export function defaultGuardDir(): string {
  const candidates = [
    path.join(__dirname, 'guard'),
    path.resolve(__dirname, '..', '..', '..', '..', 'dist', 'guard'),
    path.resolve(__dirname, '..', '..', '..', 'dist', 'guard'),
  ];
  return candidates.find((d) => fs.existsSync(path.join(d, NODE_GUARD))) ?? candidates[0];
}

/** One file the guard refused, as its report line says. */
export interface Refusal extends GuardRefusal {
  /** Absolute path as the server saw it. */
  path: string;
  runtime?: string;
  how?: string;
}

export interface GuardedStart {
  /** The arguments and variables to start with (uncontained: the guard on the command line). */
  executable: string;
  args: string[];
  /** Uncontained: the whole environment. Contained: only the guard's own variables, added to the server's. */
  env: Record<string, string>;
  /** Contained: files to bind into the sandbox (source on the host, target inside). */
  binds: { source: string; target: string; writable?: boolean }[];
  /** Host path of the report file the guard appends to. */
  report: string;
  /** One line for the sandbox's description. */
  text: string;
  cleanup(): void;
}

type Kind = 'node' | 'python';

function kindOf(file: string): Kind | undefined {
  const base = path.basename(file);
  if (!GUARDED_PROGRAM.test(base)) return undefined;
  return base.startsWith('node') ? 'node' : 'python';
}

function isElf(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const b = Buffer.alloc(4);
      fs.readSync(fd, b, 0, 4, 0);
      return b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** The real node and python binaries a contained server could start: the plan's own and the system's. */
function interpreters(executable: string): { real: string; kind: Kind }[] {
  const found = new Map<string, Kind>();
  const consider = (p: string) => {
    let real: string;
    try {
      real = fs.realpathSync(p);
    } catch {
      return;
    }
    const kind = kindOf(real) ?? kindOf(p);
    if (kind && !found.has(real) && isElf(real)) found.set(real, kind);
  };
  consider(executable);
  for (const d of BIN_DIRS) {
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) if (GUARDED_PROGRAM.test(n)) consider(path.join(d, n));
  }
  return [...found].map(([real, kind]) => ({ real, kind }));
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What prepareGuard is given: the server, its approval's record of the workspace, and how it starts. */
interface GuardOptions {
  server: string;
  project: string;
  storeDir: string;
  manifest: ManifestRef | undefined;
  guardDir: string;
  executable: string;
  args: readonly string[];
  env: Record<string, string>;
  contained: boolean;
  home: string;
  extraWrite: readonly string[];
  /** The files the approval pins as read (workspace-relative): a sink module asked for from one is refused. */
  closure: readonly string[];
  /** sha256 of content approved outside the workspace (an npm package's own files, where it may write): loads there pass. */
  approved?: readonly string[];
  /**
   * The interpreter as the definition names it (`.venv/bin/python`, absolute), when that is not its real path: Python
   * looks for a virtual environment's `pyvenv.cfg` beside the name it runs under, and the guard gives it that name.
   */
  argv0?: string;
}

/**
 * Prepares a start under the guard: the manifest (verified against the approval) written for the guard, and — for a
 * contained start — the wrappers and binds; for an uncontained one, the guard on the command line. Throws
 * GuardUnavailable with what to do when the guard's files or the manifest cannot be used.
 */
export function prepareGuard(o: GuardOptions): GuardedStart {
  for (const f of [NODE_GUARD, PYTHON_GUARD, PYTHON_GUARD_PARTS]) {
    if (!fs.existsSync(path.join(o.guardDir, f)))
      throw new GuardUnavailable(
        `MCP Gate's load guard (${path.join(o.guardDir, f)}) is missing, and "${o.server}" may run only under it; install MCP Gate again`,
      );
  }
  if (!o.manifest)
    throw new GuardUnavailable(
      `"${o.server}" was approved without a record of the workspace as it was, which its loads are checked against; approve it again`,
    );
  let files: Record<string, string>;
  let links: Record<string, string>;
  let large: Record<string, unknown>;
  let since: number;
  let folders: string[] | undefined;
  try {
    const m = loadManifest(o.storeDir, o.manifest);
    files = m.files;
    links = m.links ?? {};
    large = m.large ?? {};
    since = Date.parse(m.takenAt);
    folders = Array.isArray(m.folders) ? m.folders.filter((f): f is string => typeof f === 'string') : undefined;
    if (!Number.isFinite(since)) throw new ManifestError(`the record of the workspace has no valid time ("takenAt")`);
  } catch (e) {
    if (e instanceof ManifestError) throw new GuardUnavailable(`${e.message}; "${o.server}" is not started — approve it again`);
    throw e;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-guard-'));
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    fs.mkdirSync(path.join(dir, 'report'), { mode: 0o700 });
    const report = path.join(dir, 'report', 'report.jsonl');
    const inside = (p: string) => (o.contained ? path.join(GUARD_MOUNT, p) : path.join(dir, p));
    // Contained: the places it can write outside the workspace (its private /tmp and HOME, /dev — a tmpfs, the
    // guard's report folder, the paths you let it write: red team 13, cases 05 and 07); a file the sandbox binds
    // read-only there is not one (the guards tell by the mount). Uncontained it can write wherever you can, so no
    // folder outside the workspace says more than another: none is checked.
    const scratch = o.contained ? ['/tmp', '/var/tmp', '/dev', path.join(GUARD_MOUNT, 'report'), o.home, ...o.extraWrite] : [];
    const manifest = {
      version: 1,
      root: o.project,
      files,
      links,
      large,
      since,
      ...(folders ? { folders } : {}),
      scratch: [...new Set(scratch)],
      report: o.contained ? path.join(GUARD_MOUNT, 'report', 'report.jsonl') : report,
      server: o.server,
      closure: o.closure,
      ...(o.approved?.length ? { approved: [...o.approved] } : {}),
    };
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest), { mode: 0o600 });
    if (!o.contained) return uncontainedStart(o, dir, report, cleanup);
    const binds: GuardedStart['binds'] = [
      { source: o.guardDir, target: path.join(GUARD_MOUNT, 'guard') },
      { source: path.join(dir, 'manifest.json'), target: path.join(GUARD_MOUNT, 'manifest.json') },
      { source: path.join(dir, 'report'), target: path.join(GUARD_MOUNT, 'report'), writable: true },
    ];
    const bash = fs.existsSync('/bin/bash') ? '/bin/bash' : undefined;
    const wrapped: string[] = [];
    const found = interpreters(o.executable);
    let own: string;
    try {
      own = fs.realpathSync(o.executable);
    } catch {
      own = o.executable;
    }
    if (!found.some((f) => f.real === own)) {
      throw new GuardUnavailable(
        `"${o.server}" runs ${o.executable}, which is no Node or Python binary MCP Gate can put its load guard in front of (a version manager's shim is a script that starts one); it is not started — declare the interpreter by its real path, or declare the server in your user configuration`,
      );
    }
    found.forEach(({ real, kind }, i) => {
      const hidden = path.join(GUARD_MOUNT, 'real', `${i}-${path.basename(real)}`);
      const guard =
        kind === 'node'
          ? `${NODE_FLAGS.join(' ')} --require ${shellQuote(inside(`guard/${NODE_GUARD}`))}`
          : `-S ${shellQuote(inside(`guard/${PYTHON_GUARD}`))}`;
      const script = wrapperScript(o.server, real, kind, hidden, guard, inside, bash);
      const file = path.join(dir, `wrapper-${i}`);
      fs.writeFileSync(file, script, { mode: 0o755 });
      binds.push({ source: real, target: hidden }, { source: file, target: real });
      wrapped.push(real);
    });
    return {
      executable: o.executable,
      args: [...o.args],
      // Only the guard's own variables: the sandbox passes the server's own environment beside them.
      env: o.argv0 && kindOf(own) === 'python' ? { MCP_GATE_GUARD_ARGV0: o.argv0 } : {},
      binds,
      report,
      text: `load guard: every node and python it starts (${wrapped.join(', ') || 'none found'}) checks each file it loads against the workspace as approved`,
      cleanup,
    };
  } catch (e) {
    cleanup();
    throw e;
  }
}

/** An uncontained start under the guard: the guard on the command line and in the environment (`dir`: the manifest's folder). */
function uncontainedStart(o: GuardOptions, dir: string, report: string, cleanup: () => void): GuardedStart {
  const kind = kindOf(o.executable);
  const env: Record<string, string> = { ...o.env, MCP_GATE_GUARD: path.join(dir, 'manifest.json') };
  if (kind === 'python' && o.argv0) env.MCP_GATE_GUARD_ARGV0 = o.argv0;
  // Node's compile cache runs bytecode from a folder in place of the text the guard checks: off (see guard.ts).
  if (kind === 'node') {
    delete env.NODE_COMPILE_CACHE;
    env.NODE_DISABLE_COMPILE_CACHE = '1';
  }
  const args =
    kind === 'node'
      ? [...NODE_FLAGS, '--require', path.join(o.guardDir, NODE_GUARD), ...o.args]
      : kind === 'python'
        ? ['-S', path.join(o.guardDir, PYTHON_GUARD), ...o.args]
        : [...o.args];
  return {
    executable: o.executable,
    args,
    env,
    binds: [],
    report,
    text: 'load guard: in its Node and Python processes (uncontained: a child that clears its environment is not guarded)',
    cleanup,
  };
}

/**
 * The wrapper bound over the interpreter `real` in the sandbox: it sets the guard's variables, clears what the
 * interpreter would read before the guard exists, and runs the real binary (`hidden`) with the guard first.
 */
function wrapperScript(
  server: string,
  real: string,
  kind: Kind,
  hidden: string,
  guard: string,
  inside: (p: string) => string,
  bash: string | undefined,
): string {
  // Node keeps the name it was started by as argv[0] (bash's `exec -a`). Python is given its real path: it finds
  // its standard library from the name it runs under, and a name in a folder the server can write, beside a
  // `lib/python3.X/os.py` or a `pyvenv.cfg` whose `home` points there, would load an `encodings` from that folder
  // before the guard exists. The name it was started by goes to the guard, which treats it as sys.executable
  // (so a virtual environment's site-packages are found, and its children start through the wrapper).
  const run =
    kind === 'python'
      ? `exec -a ${shellQuote(real)} ${shellQuote(hidden)}`
      : bash
        ? `exec -a "$0" ${shellQuote(hidden)}`
        : `exec ${shellQuote(hidden)}`;
  return [
    `#!${bash ?? '/bin/sh'}`,
    `# MCP Gate: ${real} under the load guard for "${server.replace(/[^\w .@/-]/g, '_')}"`,
    `MCP_GATE_GUARD=${shellQuote(inside('manifest.json'))}; export MCP_GATE_GUARD`,
    `MCP_GATE_GUARD_EXEC=${shellQuote(real)}; export MCP_GATE_GUARD_EXEC`,
    // What Python reads before the guard exists (a bytecode folder the server can write, its home, a startup
    // file): never from the environment. The guard compiles workspace sources itself and writes no bytecode.
    // Node's compile cache: bytecode from a folder the server can write, run in place of the text the guard
    // checks (red team 6n, case 05): off in every node, before any of its code runs.
    ...(kind === 'node' ? ['unset NODE_COMPILE_CACHE', 'NODE_DISABLE_COMPILE_CACHE=1; export NODE_DISABLE_COMPILE_CACHE'] : []),
    // OpenSSL's configuration loads the provider and engine modules it names when node starts, before the guard
    // (red team 7n, cases 06 and 08: OPENSSL_CONF from a parent, --openssl-config from npm's `node-options`):
    // never from the environment, and a start that names one is refused.
    ...(kind === 'node'
      ? [
          'unset OPENSSL_CONF OPENSSL_MODULES OPENSSL_ENGINES',
          `case " $NODE_OPTIONS $* " in *--openssl-config*|*--openssl-shared-config*) echo "mcp-gate: node not started: NODE_OPTIONS or its arguments name --openssl-config or --openssl-shared-config (OpenSSL would load the modules a configuration names before MCP Gate's load guard runs)" >&2; exit 126;; esac`,
        ]
      : []),
    ...(kind === 'python'
      ? [
          'unset PYTHONHOME PYTHONPYCACHEPREFIX PYTHONPLATLIBDIR PYTHONSTARTUP',
          'PYTHONDONTWRITEBYTECODE=1; export PYTHONDONTWRITEBYTECODE',
          'MCP_GATE_GUARD_ARGV0="${MCP_GATE_GUARD_ARGV0:-$0}"; export MCP_GATE_GUARD_ARGV0',
        ]
      : []),
    `${run} ${guard} "$@"`,
    '',
  ].join('\n');
}

/** The refusals the guard reported so far (lines that do not parse are skipped; the stderr line says them too). */
export function readRefusals(report: string, project: string): Refusal[] {
  let text: string;
  try {
    // Asked after every call of a guarded server: a stat that does not throw when there is no report (the usual case).
    const st = fs.statSync(report, { throwIfNoEntry: false });
    if (!st || st.size === 0) return [];
    text = fs.readFileSync(report, 'utf8');
  } catch {
    return [];
  }
  const out: Refusal[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (typeof r.file !== 'string' || !['changed', 'new', 'scratch', 'sink'].includes(r.why as string)) continue;
      const rel = path.relative(project, r.file);
      const file = !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : r.file;
      out.push({
        file,
        path: r.file,
        why: r.why as Refusal['why'],
        at: typeof r.time === 'string' ? r.time : new Date().toISOString(),
        runtime: typeof r.runtime === 'string' ? r.runtime : undefined,
        how: typeof r.how === 'string' ? r.how : undefined,
        ...(typeof r.rule === 'string' && r.rule ? { rule: r.rule } : {}),
        ...(r.home === true && r.why === 'scratch' ? { home: true as const } : {}),
        // text turned into code after the process took the file in (the Node guard says so; the Python guard's `how`)
        ...(r.took === true || (typeof r.how === 'string' && r.how.includes('after this process took in')) ? { took: true as const } : {}),
      });
    } catch {
      // a torn or foreign line
    }
  }
  return out;
}

/** Calls `on` for each new refusal in the report (polled, and on a change of its folder); returns the stop. */
export function watchRefusals(report: string, project: string, on: (r: Refusal) => void): () => void {
  let seen = 0;
  const check = () => {
    const all = readRefusals(report, project);
    for (const r of all.slice(seen)) on(r);
    seen = Math.max(seen, all.length);
  };
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(path.dirname(report), check);
    watcher.on('error', () => undefined);
  } catch {
    // polled below
  }
  const timer = setInterval(check, 500);
  timer.unref();
  return () => {
    clearInterval(timer);
    watcher?.close();
  };
}
