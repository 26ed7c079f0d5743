// Child processes for the load guard: every spawn, exec, fork and *Sync form (the process_wrap and spawn_sync
// bindings, under child_process and called directly) and process.execve goes through prepareSpawn — the real interpreter binary is never started
// around its wrapper, OpenSSL configuration that loads modules before a child's guard is refused, the exec check runs,
// native code the child's dynamic loader takes from a writable place is checked — and the child's environment gets
// MCP_GATE_GUARD and NODE_OPTIONS=--require <this guard> back even when the caller passed its own.
import fs = require('node:fs');
import path = require('node:path');
import { $, F, MANIFEST, real, tokenize, VAR, withOurOptions } from './base';
import { writable } from './manifest';
import { refuse } from './verdict';
import { childMarks, mayHaveTakenIn, settleLooked, took } from './taken';
import { checkNative, nativeLibsAsApproved } from './native';
import { execCheck } from './exec-check';
import { gitNeutral, startNotSafe } from './inline';
import { codeFromText } from './strings';

// ------------------------------------------------------------------------------ the real interpreter, a child's loader
/** Where MCP Gate's sandbox shows the real node and python binaries (started there, no guard is in them). */
const REAL_DIR = '/run/mcp-gate/real/';
/** This process's own binary, as it was started (before execPath names the wrapper). */
const OWN_REAL = real('/proc/self/exe') ?? real(process.execPath);
/** The wrapper that starts this binary with the guard (MCP Gate's sandbox names it in MCP_GATE_GUARD_EXEC). */
const WRAPPER = ((w) => (w && path.isAbsolute(w) ? w : null))(process.env.MCP_GATE_GUARD_EXEC);
/** A /proc/<pid>/exe link (or a task's), in any text: the binary of a running process, by a name no check resolves. */
const PROC_EXE = /\/proc\/[^/\s'"]+\/(task\/[^/\s'"]+\/)?exe(?![\w.-])/;
/** OpenSSL's configuration: the provider and engine modules it names are loaded when node starts, before the guard. */
const OPENSSL_VARS = /^(OPENSSL_CONF|OPENSSL_MODULES|OPENSSL_ENGINES)=/;
const OPENSSL_FLAG = /^--openssl(-shared)?-config(=|$)/;

/** The file is an interpreter's real binary, which runs without the guard: under REAL_DIR, or this binary behind its wrapper. */
function unguardedInterpreter(p: string): boolean {
  const r = real(p);
  if (r === null) return false;
  if (r.startsWith(REAL_DIR)) return true;
  return WRAPPER !== null && r === OWN_REAL && real(WRAPPER) !== OWN_REAL;
}

/** The file a program name runs: with a `/`, to the working folder; else the first executable file along PATH. */
function programPath(file: string, cwd: string, pathVar: string | undefined): string | null {
  if (file.includes('/')) return path.resolve(cwd, file);
  for (const d of (pathVar ?? '').split(':')) {
    const c = path.resolve(cwd, d || '.', file);
    try {
      F.accessSync(c, fs.constants.X_OK);
      if (F.statSync(c).isFile()) return c;
    } catch {
      /* not here */
    }
  }
  return null;
}

/**
 * The real binary of an interpreter, reached without its wrapper (process.argv[0] as Node set it, /proc/self/exe,
 * setpriv --reset-env or env -i in front of it, a shell line naming it: red team 7n, cases 01–02): as the program,
 * this binary's own is started through its wrapper instead; named anywhere else, the start is refused.
 */
function realInterpreter(opts: { file?: unknown; args?: unknown }, base: string, pathVar: string | undefined): void {
  const args = Array.isArray(opts.args) ? (opts.args as unknown[]) : [];
  const refuseIt = (p: string, what: string): never =>
    refuse({
      p,
      rel: null,
      why: 'sink',
      sum: '',
      how: 'spawn',
      tail: `${what} names an interpreter's real binary (${p}), which would run without the load guard; start it by its usual name (process.execPath)`,
    });
  if (typeof opts.file === 'string') {
    const prog = programPath(opts.file, base, pathVar);
    if (prog && (unguardedInterpreter(prog) || PROC_EXE.test(opts.file))) {
      if (WRAPPER && real(prog) === OWN_REAL) {
        if (typeof args[0] === 'string' && (args[0] === opts.file || unguardedInterpreter(path.resolve(base, args[0])))) args[0] = WRAPPER;
        opts.file = WRAPPER;
      } else if (unguardedInterpreter(prog) || (real(prog) ?? '').startsWith(REAL_DIR)) refuseIt(opts.file, 'the program started');
    }
  }
  for (const [i, a] of args.entries()) {
    if (typeof a !== 'string' || (i === 0 && a === opts.file)) continue;
    if (a.includes(REAL_DIR) || PROC_EXE.test(a)) refuseIt(a, 'an argument of the program started');
    if (a.length > 65536) continue;
    for (const w of a.split(/[\s;&|()<>`'"=:,]+/))
      if (w && (w.includes('/') || i <= 1) && unguardedInterpreter(path.resolve(base, w)))
        refuseIt(w, 'an argument of the program started');
  }
}

/**
 * The native libraries a child's dynamic loader loads from a writable place (red team 7n, case 03): a program in
 * one (an ELF the repository ships) is walked like an addon (its DT_NEEDED along RPATH/RUNPATH and the child's
 * LD_LIBRARY_PATH); LD_PRELOAD / LD_AUDIT libraries are checked; a writable folder in LD_LIBRARY_PATH makes every
 * native library of the workspace and the scratch folders have to be as approved.
 */
function childLoader(file: unknown, base: string, env: Map<string, string>): void {
  const lib = env.get('LD_LIBRARY_PATH');
  const libPath = lib
    ? lib
        .split(/[:;]/)
        .filter((d) => d !== '')
        .map((d) => path.resolve(base, d))
    : [];
  if (typeof file === 'string') {
    const prog = programPath(file, base, env.get('PATH'));
    const rp = prog ? real(prog) : null;
    if (prog && rp !== null && (writable(rp) || libPath.some((d) => writable(real(d) ?? d)))) checkNative(prog, 'exec', libPath, true);
  }
  for (const v of ['LD_PRELOAD', 'LD_AUDIT']) {
    for (const l of (env.get(v) ?? '').split(v === 'LD_PRELOAD' ? /[:\s]+/ : /:/))
      if (l) checkNative(l.includes('/') ? path.resolve(base, l) : l, `exec with ${v}`, libPath);
  }
  if (libPath.some((d) => writable(real(d) ?? d))) nativeLibsAsApproved('exec with LD_LIBRARY_PATH into a writable place');
}

const SHELL_WORD = /^(sh|bash|dash|ash|rbash|zsh|ksh|mksh|fish|busybox)$/;
/**
 * A start after this process took in what is not as approved: allowed only when it cannot run code it is given
 * (inline.ts), else text turned into code — refused naming what was taken in (src/guard/CONTRACT.md, "Starts after
 * taking in").
 */
function afterTakingInStart(opts: { file?: unknown; args?: unknown }, base: string, env: ReadonlyMap<string, string>): void {
  if (!mayHaveTakenIn()) return; // (nothing taken in: no lookup of the program, no stat along PATH, on every start)
  const args = Array.isArray(opts.args) ? (opts.args as unknown[]) : [];
  const words = [opts.file, ...args.slice(1)].map((w) => (typeof w === 'string' ? w : `${w as string}`));
  // (a program that is a file of the workspace or a scratch folder is none of the table's, whatever its name)
  const prog = typeof opts.file === 'string' ? programPath(opts.file, base, env.get('PATH')) : null;
  const own = prog !== null && writable(real(prog) ?? prog);
  const why = own ? `${path.basename(prog)}, a file of the workspace or a scratch folder,` : startNotSafe(words, env, base);
  // (a shell among its words — `sh -c`, `env sh -c` — is never a library's own start: a library function handed the
  // words as a callback, `setImmediate(promiseSpawn, 'sh', ['-c', text])`, runs with no workspace frame under it)
  const shell = words.some((w) => SHELL_WORD.test(path.basename(w)));
  if (why) codeFromText(words.join(' ') || '?', `spawn ${why} (a program that may run code it is given)`, false, shell);
}

/** Spawn options as ChildProcess.prototype.spawn, the spawn_sync binding and process.execve get them (file, args, cwd, envPairs). */
function prepareSpawn(o: unknown): void {
  if (!o || typeof o !== 'object') return;
  const opts = o as { file?: unknown; args?: unknown; cwd?: unknown; envPairs?: unknown };
  // The working folder and the arguments the child gets, made strings once here (a Buffer cwd, an argument that is
  // an object whose toString may answer differently each time): the check resolves and reads the very strings the
  // program is started with (a Buffer cwd was read as "no cwd", and a script relative to it ran unchecked).
  if (opts.cwd != null && typeof opts.cwd !== 'string')
    opts.cwd = $.isUint8Array(opts.cwd) ? $.utf8Slice(opts.cwd, 0, opts.cwd.length) : `${opts.cwd as string}`;
  const strings = (list: unknown[]): unknown[] => list.map((a) => (typeof a === 'string' || a == null ? a : `${a as string}`));
  if (Array.isArray(opts.args)) opts.args = strings(opts.args as unknown[]);
  // (an environment entry that is an object would be made a string by Node too, after the guard's own entries were
  // put in: `{ toString: () => 'MCP_GATE_GUARD=' }` started the child unguarded)
  if (Array.isArray(opts.envPairs)) opts.envPairs = strings(opts.envPairs as unknown[]);
  const base = typeof opts.cwd === 'string' && opts.cwd ? path.resolve(opts.cwd) : process.cwd();
  const env = new Map<string, string>();
  for (const kv of Array.isArray(opts.envPairs) ? (opts.envPairs as unknown[]) : Object.entries(process.env).map(([k, v]) => `${k}=${v}`)) {
    if (typeof kv === 'string' && kv.indexOf('=') > 0) env.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
  }
  realInterpreter(opts, base, env.get('PATH'));
  execCheck(opts.file, opts.args, opts.cwd);
  afterTakingInStart(opts, base, env);
  for (const a of Array.isArray(opts.args) ? (opts.args as unknown[]) : []) {
    if (typeof a === 'string' && OPENSSL_FLAG.test(a))
      refuse({
        p: a,
        rel: null,
        why: 'sink',
        sum: '',
        how: 'spawn',
        tail: `${a}: OpenSSL loads the modules a configuration names when node starts, before the load guard`,
      });
  }
  if (process.platform === 'linux') childLoader(opts.file, base, env);
  if (!Array.isArray(opts.envPairs)) return;
  const pairs = (opts.envPairs as unknown[]).filter((kv) => !(typeof kv === 'string' && kv.startsWith(VAR + '=')));
  const i = pairs.findIndex((kv) => typeof kv === 'string' && kv.startsWith('NODE_OPTIONS='));
  const theirs = i < 0 ? undefined : (pairs.splice(i, 1)[0] as string).slice('NODE_OPTIONS='.length);
  for (const t of tokenize(theirs ?? '')) {
    if (OPENSSL_FLAG.test(t))
      refuse({
        p: t,
        rel: null,
        why: 'sink',
        sum: '',
        how: 'spawn',
        tail: `NODE_OPTIONS has ${t}: OpenSSL loads the modules a configuration names when node starts, before the load guard`,
      });
  }
  // (no compile cache in a child either: NODE_COMPILE_CACHE would turn it on before its guard runs; no OpenSSL
  // configuration from the environment: its modules load before the child's guard, red team 7n, cases 06 and 08)
  // (after taking in, git — started now, through a shell line or by a child — opens no editor, runs no hook and
  // enters no submodule: git.neutral of command_lines.json, in place of the server's own of those variables)
  if (mayHaveTakenIn()) settleLooked();
  const neutral = took.in !== null ? gitNeutral() : [];
  const replaced = new Set(neutral.map((kv) => kv.slice(0, kv.indexOf('=') + 1)));
  const rest = pairs.filter(
    (kv) =>
      !(
        typeof kv === 'string' &&
        (/^NODE_(COMPILE_CACHE|DISABLE_COMPILE_CACHE)=/.test(kv) ||
          OPENSSL_VARS.test(kv) ||
          /^MCP_GATE_GUARD_(CHILD|TOOK_IN)=/.test(kv) ||
          (neutral.length > 0 && (replaced.has(kv.slice(0, kv.indexOf('=') + 1)) || /^GIT_CONFIG_(KEY|VALUE)_\d+=/.test(kv))))
      ),
  );
  // (and the child is marked as one a guarded process started, which can feed it, with what this one took in)
  opts.envPairs = [
    ...rest,
    `${VAR}=${MANIFEST}`,
    `NODE_OPTIONS=${withOurOptions(theirs)}`,
    'NODE_DISABLE_COMPILE_CACHE=1',
    ...childMarks(),
    ...neutral,
  ];
}

/** A binding by process.binding, without the deprecation warning it may emit (--pending-deprecation). */
function binding(name: string): Record<string, unknown> | null {
  const P = process as unknown as { binding?: (n: string) => Record<string, unknown>; emitWarning: typeof process.emitWarning };
  if (typeof P.binding !== 'function') return null;
  const emit = P.emitWarning;
  P.emitWarning = (() => undefined) as typeof process.emitWarning;
  try {
    return P.binding(name);
  } catch {
    return null;
  } finally {
    P.emitWarning = emit;
  }
}

/**
 * The spawn functions of the process_wrap and spawn_sync bindings, each through prepareSpawn. process_wrap's takes
 * the options object (Node 20, 22) or, on newer Node, its fields one by one (file, args, cwd, envPairs, stdio, …):
 * both are checked, and what prepareSpawn made of them is what starts.
 */
function guardBindings(): { async: boolean; sync: boolean } {
  const done = { async: false, sync: false };
  const pw = binding('process_wrap');
  const proto = (pw?.Process as { prototype?: Record<string, unknown> } | undefined)?.prototype;
  const spawnAsync = proto?.spawn;
  if (proto && typeof spawnAsync === 'function') {
    proto.spawn = function spawn(this: unknown, ...a: unknown[]) {
      if (a[0] !== null && typeof a[0] === 'object') prepareSpawn(a[0]);
      else {
        const o = { file: a[0], args: a[1], cwd: a[2], envPairs: a[3] };
        prepareSpawn(o);
        [a[0], a[1], a[2], a[3]] = [o.file, o.args, o.cwd, o.envPairs];
      }
      return (spawnAsync as (...x: unknown[]) => unknown).apply(this, a);
    };
    done.async = true;
  }
  const ss = binding('spawn_sync');
  const spawnSync = ss?.spawn;
  if (ss && typeof spawnSync === 'function') {
    ss.spawn = function (this: unknown, o: unknown) {
      prepareSpawn(o);
      return (spawnSync as (o: unknown) => unknown).call(this, o);
    };
    done.sync = true;
  }
  return done;
}

/** Children carry the guard: the wrapper as execPath, the environment, every way a program is started. */
export function installChildren(): void {
  // In MCP Gate's sandbox node is a wrapper that starts the real binary (at a hidden path) with this guard: the
  // wrapper names itself in MCP_GATE_GUARD_EXEC, so a child started by process.execPath goes through it too.
  // process.argv[0] too: Node set it to the real binary, and "start myself again" with it would skip the wrapper.
  if (WRAPPER) {
    process.execPath = WRAPPER;
    process.argv[0] = WRAPPER;
  }

  // Children and workers carry the guard.
  process.env.NODE_OPTIONS = withOurOptions(process.env.NODE_OPTIONS);
  process.env[VAR] = MANIFEST;

  // Every program started goes through one of two native bindings, wrapped here: process_wrap's Process.prototype.
  // spawn (every asynchronous form — spawn, exec, execFile, fork, cluster, the test runner — and the binding called
  // directly through process.binding('process_wrap'), which went unchecked: red team 17) and spawn_sync's spawn (the
  // *Sync forms). Node's child_process module is not loaded for it (a start costs about 5 ms less).
  const bindings = guardBindings();
  if (!bindings.async) {
    // (no process_wrap binding to reach on this Node: ChildProcess.prototype.spawn, as before)
    const cp = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    const mod = (typeof cp === 'function' ? cp.call(process, 'node:child_process') : require('node:child_process')) as {
      ChildProcess: { prototype: { spawn: (o: unknown) => unknown } };
    };
    const CP = mod.ChildProcess.prototype;
    const spawnAsync = CP.spawn;
    CP.spawn = function (this: unknown, o: unknown) {
      prepareSpawn(o);
      return spawnAsync.call(this, o);
    };
  }
  // process.execve (Node 22.15+, 24): the process replaced by another program, with the environment it is given.
  const P = process as unknown as { execve?: (file: unknown, args?: unknown, env?: unknown) => never };
  const execve = P.execve;
  if (typeof execve === 'function') {
    P.execve = function execve2(this: unknown, file: unknown, args?: unknown, env?: unknown): never {
      const src = env && typeof env === 'object' ? (env as Record<string, unknown>) : process.env;
      const o = {
        file,
        args: Array.isArray(args) ? [...(args as unknown[])] : args,
        cwd: process.cwd(),
        envPairs: Object.entries(src)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${String(v)}`),
      };
      prepareSpawn(o);
      const out: Record<string, string> = {};
      for (const kv of o.envPairs as string[]) out[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
      return execve.call(this, o.file, o.args, out);
    };
    Object.defineProperty(P.execve, 'name', { value: 'execve' });
  }
}
