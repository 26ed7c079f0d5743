// The launch plan's reading of a command line (./launch-plan.ts planLaunch): the program's family, found on MCP
// Gate's PATH, and what its arguments name — scripts, modules, flags' values, inline code, the folders package
// launchers resolve from, wrapped commands — as execution closure entries (./closure.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_SETTINGS, type ClosureEntry } from './closure';
import { ClosureError } from './closure-files';
import { rewriteProcPath, within } from './realpath';
import { nodeOptionKind } from './node-options';
import { packageLaunchOf, WRAPPERS } from './launchers';
import { loaderVariable } from './loader-variables';

export class PlanError extends Error {}

type Family = 'node' | 'python' | 'shell' | 'ruby' | 'perl' | 'php' | 'runner' | 'wrapper' | 'other';

const FAMILIES: [RegExp, Family][] = [
  [/^(node|nodejs|bun|tsx|ts-node|ts-node-esm|esno|esr|vite-node|npx-cli\.js)$/, 'node'],
  [/^(deno)$/, 'runner'],
  [/^(python|python[23](\.\d+)?|pypy3?|py)$/, 'python'],
  // Shells, and programs that run whatever their arguments (or the repository's own settings) say: git (aliases,
  // hooks), script, unshare, xargs, find -exec, awk/sed programs, editors, su/sudo, terminal multiplexers.
  [
    /^(sh|bash|dash|zsh|ksh|mksh|fish|ash|busybox|git|script|unshare|nsenter|chroot|firejail|watch|parallel|entr|xargs|find|awk|gawk|mawk|nawk|sed|expect|tmux|screen|vim?|nvim|emacs|su|runuser|sudo|doas|flock|bwrap|systemd-run|dbus-run-session|strace|ltrace|gdb|valgrind|perf|ssh)$/,
    'shell',
  ],
  [/^(ruby|irb)$/, 'ruby'],
  [/^(perl)$/, 'perl'],
  [/^(php)$/, 'php'],
  [
    /^(npm|npx|pnpm|pnpx|yarn|yarnpkg|bunx|uv|uvx|poetry|pipx|pdm|hatch|rye|corepack|make|gmake|just|task|cargo|go|mix|bundle|rake|gradle|mvn)$/,
    'runner',
  ],
  [WRAPPERS, 'wrapper'],
];

function familyOf(...names: (string | undefined)[]): Family {
  for (const n of names) {
    if (!n) continue;
    const base = path.basename(n).replace(/\.exe$/i, '');
    for (const [re, f] of FAMILIES) if (re.test(base)) return f;
  }
  return 'other';
}

/** Flags whose next argument (or `=value`) is inline code that can load anything. */
const INLINE_FLAGS: Partial<Record<Family, RegExp>> = {
  node: /^(-e|--eval|-p|--print|-pe|-ep)$/,
  python: /^-c$/,
  shell: /^-[a-z]*c[a-z]*$/,
  ruby: /^-e$/,
  perl: /^-[a-zA-Z]*[eE]$/,
  php: /^-r$/,
  runner: /^(-c|--call|-e|--eval)$/,
};

/** Finds `name` on MCP Gate's own PATH (absolute entries only: a relative entry would depend on the server's folder). */
export function findOnPath(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const p = path.join(dir, name);
    try {
      const st = fs.statSync(p, { throwIfNoEntry: false });
      if (st?.isFile() && (st.mode & 0o111) !== 0) return fs.realpathSync(p);
    } catch {
      // unreadable entry: not here
    }
  }
  return undefined;
}
export interface PlanOptions {
  /** MCP Gate's own PATH (never the definition's). */
  searchPath: string | undefined;
  /** Repository-relative paths of the MCP configuration files (pinned field by field, left out of closures). */
  configFiles: ReadonlySet<string>;
  /** The definition is the repository's: refuse loader variables and pin the closure. */
  gated: boolean;
  /**
   * Its Node or Python processes will run under the load guard (src/guard/), which checks each file that becomes
   * code when it loads: the closure is then the guarded one (guarded-closure.ts guardedClosureOf) when it can be, and what
   * would pin the whole workspace runs on the approved snapshot instead (closure.ts snapshotClosureOf).
   */
  guard?: boolean;
}

/** The function that names closure entries into `entries`: a path as written, relative to the working folder. */
export function namer(cwd: string, entries: ClosureEntry[]): Name {
  return (p, why, how = 'tree') => {
    let abs: string;
    try {
      abs = rewriteProcPath(path.isAbsolute(p) ? p : `${cwd}/${p}`, cwd);
    } catch (e) {
      throw new ClosureError(`${why}: ${(e as Error).message}`);
    }
    const exact = how === 'file' ? 'file' : how === 'folder' ? 'tree' : undefined;
    entries.push({
      path: abs,
      why,
      whole: how === 'whole' || how === 'guardable',
      guardable: how === 'guardable' || undefined,
      optional: how === 'if-exists',
      exact,
    });
    if (exact) return;
    // Node and most interpreters also normalise `..` lexically before opening: pin that spelling too.
    const lexical = path.resolve(cwd, p);
    if (lexical !== abs && how !== 'whole' && how !== 'guardable') {
      try {
        entries.push({ path: rewriteProcPath(lexical, cwd), why, optional: how === 'if-exists' });
      } catch (e) {
        throw new ClosureError(`${why}: ${(e as Error).message}`);
      }
    }
  };
}

/**
 * Node options that make resolution follow what MCP Gate does not read: links resolved from their own folders
 * (`--preserve-symlinks`), a package map, a URL entry, a package script (`--run`), a global test setup module.
 */
const NODE_RESOLUTION_FLAGS =
  /^(--preserve-symlinks|--preserve-symlinks-main|--experimental-package-map|--entry-url|--run|--test-global-setup)$/;
/** Node options that load a module before the entry: a bare specifier resolves from the working folder's node_modules. */
const NODE_PRELOAD_FLAGS = /^(-r|--require|--import|--loader|--experimental-loader|--test-reporter)$/;
const PYTHON_VALUE_FLAGS = /^(-W|-X|-Q)$/;
/** Node options that make Node load code named in a file (OpenSSL engines and providers, snapshots, policies). */
const NODE_CODE_CONFIG_FLAGS =
  /^(--openssl-config|--openssl-shared-config|--snapshot-blob|--experimental-policy|--experimental-config-file|--experimental-default-config-file|--experimental-sea-config|--build-snapshot|--build-snapshot-config)$/;

/**
 * Variable names a dotenv-style file sets (`NAME=`, `export NAME=`). A file that is missing sets nothing (Node
 * refuses to start); one that cannot be read whole — not a regular file, over 1 MiB — is refused (PlanError).
 */
function envFileNames(file: string): string[] {
  let text: string;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw new PlanError(`the variables file ${file} is not a regular file`);
      if (st.size > 1024 * 1024) throw new PlanError(`the variables file ${file} is over 1 MiB, more than MCP Gate checks`);
      const buf = Buffer.alloc(st.size);
      text = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (e) {
    if (e instanceof PlanError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new PlanError(`the variables file ${file} cannot be read: ${(e as Error).message}`);
  }
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/** `guardable`: the whole workspace, unless every process runs under the load guard (the guard then checks it). */
type Name = (p: string, why: string, how?: 'tree' | 'whole' | 'guardable' | 'if-exists' | 'file' | 'folder') => void;

/** What a package launcher (npx, bunx, uvx, …) reads from the project it starts in, at each folder up to the workspace. */
const LAUNCHER_SETTINGS = PROJECT_SETTINGS;

/**
 * A package launcher runs a package by name — from the project's node_modules when it is installed there, else
 * downloaded into its own cache — and reads the project's settings: those settings files and node_modules are
 * its closure, not the whole folder. Script runners (`npm run`, `uv run`, `make`, …) run the project itself.
 */
export function isPackageLauncher(prog: string, args: readonly string[]): boolean {
  const sub = args.find((a) => !a.startsWith('-'));
  if (/^(npx|pnpx|bunx|uvx)$/.test(prog)) return true;
  if (prog === 'npm' && (sub === 'exec' || sub === 'x')) return true;
  if ((prog === 'pnpm' || prog === 'yarn' || prog === 'yarnpkg') && sub === 'dlx') return true;
  if (prog === 'bun' && sub === 'x') return true;
  if (prog === 'pipx' && sub === 'run') return true;
  if (prog === 'uv' && sub === 'tool') return args[args.indexOf('tool') + 1] === 'run';
  return false;
}

/** Walks one command line, naming entries: paths it names, inline code, the folder launchers resolve from. */
export function analyse(
  command: string,
  executable: string | undefined,
  args: readonly string[],
  cwd: string,
  workspace: string,
  opts: PlanOptions,
  named: Name,
  depth: number,
): void {
  if (depth > 8) throw new ClosureError('the command wraps other commands more than 8 levels deep');
  const family = familyOf(command, executable);
  const prog = path.basename(command);
  const everything = (why: string) => named(workspace, why, 'whole');

  if (family === 'wrapper') return analyseWrapper(prog, args, cwd, workspace, opts, named, depth);
  // Arguments a program reads as data (a config file, a folder to serve): a file named there is pinned as itself;
  // a folder is data, not code (server-filesystem serves it), and is not pinned.
  const dataArgs = (from: number) => {
    for (let i = from; i < args.length; i++) for (const c of candidates(args[i])) named(c, `the argument ${short(args[i])}`, 'file');
  };
  if (family === 'shell') {
    // A shell script or -c code can run any file of the workspace.
    everything(`${prog} can run any file of the workspace`);
    return dataArgs(0);
  }
  if (family === 'perl' || family === 'ruby' || family === 'php') {
    // Perl's `use lib "$FindBin::Bin/../lib"`, Ruby's require_relative and $LOAD_PATH, PHP's include of a computed
    // path: these interpreters load files MCP Gate neither reads nor guards, so the server runs on the approved
    // snapshot (the whole workspace as approved; red team 6, case 08: a pulled ../lib/Greet.pm ran). Its entry and
    // arguments are still named as themselves.
    everything(
      `${prog} loads modules along library paths its code computes (MCP Gate neither reads nor guards ${prog}): it runs on the workspace as approved`,
    );
  }
  if (executable && within(workspace, executable) && family === 'other') {
    everything(`${command} is a workspace program that may run any workspace file`);
    return dataArgs(0);
  }
  if (family === 'runner' && within(workspace, cwd) && isPackageLauncher(prog.replace(/\.exe$/i, '').replace(/-cli\.js$/, ''), args)) {
    // A repository's npm launch runs from its approved lock in MCP Gate's package cache (src/host/sandbox/contain.ts): the
    // launcher never runs, so the project's settings and node_modules are not what runs and are not pinned.
    const locked = depth === 0 && opts.gated && packageLaunchOf(command, args)?.kind === 'npm';
    // Otherwise the project's settings and installed packages, at the working folder and every folder above it in the workspace.
    for (let d = cwd; !locked && within(workspace, d); d = path.dirname(d)) {
      for (const f of LAUNCHER_SETTINGS) named(path.join(d, f), `${prog} reads the project's ${f}`, 'file');
      named(path.join(d, 'node_modules'), `${prog} runs a package from the project's node_modules when it is installed there`, 'folder');
      if (d === workspace) break;
    }
    for (const a of args) if (INLINE_FLAGS.runner!.test(a)) everything(`inline code (${prog} ${a}) can load any file of the workspace`);
    return dataArgs(0);
  }
  if (family === 'runner') {
    // Package scripts, make recipes, tasks: shell command lines of the project's own, which can run any file.
    everything(`${prog} runs the project's own scripts or tasks (shell command lines), which can run any file of the workspace`);
    return dataArgs(0);
  }
  if (family === 'other') {
    // A program MCP Gate does not read (not an interpreter, launcher or wrapper it models: `setarch`, `fakeroot`,
    // `ld.so`, `perl5.36`, a server binary) may run or load any file it is given or finds: the whole workspace.
    // Not for a container run (its image is pinned; the workspace reaches it only through mounts it names) nor for
    // a program that is not there (nothing runs; its appearance changes the plan).
    if (executable && !/^(docker|podman)$/.test(prog.replace(/\.exe$/i, '')))
      everything(`${prog} is a program MCP Gate does not model: it may run or load any file of the workspace`);
    return dataArgs(0);
  }

  // Python finds modules along sys.path, which its code may change at run time (sys.path, importlib, __import__,
  // runpy, .pth files of an environment): MCP Gate does not read Python sources, so a Python server pins the
  // whole workspace (its options are still checked below).
  if (family === 'python')
    named(workspace, `${prog} imports along a path its code can change at run time (MCP Gate does not read Python sources)`, 'guardable');
  // TypeScript loaders (tsx, ts-node, bun, a `--import tsx`) read the working folder's tsconfig.json, whose
  // `paths` and `baseUrl` map bare imports into the workspace: each one from there up is pinned as itself.
  if (family === 'node') {
    for (let d = cwd; within(workspace, d); d = path.dirname(d)) {
      for (const f of ['tsconfig.json', 'jsconfig.json'])
        named(path.join(d, f), `TypeScript loaders resolve imports through the working folder's ${f}`, 'file');
      if (d === workspace) break;
    }
  }
  analyseInterpreter(family, prog, args, cwd, opts, named, everything, dataArgs);
}

/**
 * `env K=V cmd …`, `nice cmd`, `timeout 5 cmd`: the assignments are environment, the rest another command line.
 * Every `NAME=value` anywhere in a wrapper's arguments is checked (an option's value could hide one), and any
 * option MCP Gate does not model (it could change the folder, read arguments from a file, …) pins the whole
 * workspace: a superset, never less.
 */
function analyseWrapper(
  prog: string,
  args: readonly string[],
  cwd: string,
  workspace: string,
  opts: PlanOptions,
  named: Name,
  depth: number,
): void {
  const everything = (why: string) => named(workspace, why, 'whole');
  // `env K=V cmd …`, `nice cmd`, `timeout 5 cmd`: the assignments are environment, the rest another command line.
  // Every `NAME=value` anywhere in a wrapper's arguments is checked (an option's value could hide one), and any
  // option MCP Gate does not model (it could change the folder, read arguments from a file, …) pins the whole
  // workspace: a superset, never less.
  const list = [...args];
  // `NAME=` anywhere: after option letters (`-SNODE_OPTIONS=…`, `-iS…`) or another option's `=`.
  const refuse = (a: string) => {
    const segments = a.split('=');
    for (let k = 0; k < segments.length - 1; k++) {
      const seg = segments[k].replace(/^-+/, '');
      for (let i = 0; i <= Math.min(3, seg.length - 1); i++) {
        const name = seg.slice(i);
        if (!/^[A-Za-z_][A-Za-z0-9_]*(%%)?$/.test(name)) continue;
        const why = loaderVariable(name);
        if (opts.gated && why) throw new PlanError(`it sets ${name} through ${prog}: ${why}; MCP Gate does not pass it`);
      }
    }
  };
  for (const a of list) for (const part of a.split(/\s+/)) refuse(part);
  let i = 0;
  for (; i < list.length; i++) {
    const a = list[i];
    if (a === '--') {
      i++;
      break;
    }
    if (prog === 'env' && (a === '-S' || a === '--split-string' || /^-[a-zA-Z]*S./.test(a) || a.startsWith('--split-string='))) {
      // The value is itself a command line: split it and read on.
      const value =
        a === '-S' || a === '--split-string'
          ? (list[i + 1] ?? '')
          : a.startsWith('--')
            ? a.slice(a.indexOf('=') + 1)
            : a.slice(a.indexOf('S') + 1);
      list.splice(i, a === '-S' || a === '--split-string' ? 2 : 1, ...value.split(/\s+/).filter(Boolean));
      i--;
      continue;
    }
    if (prog === 'env' && (a === '-u' || a === '--unset')) {
      i++; // its value is a name to remove
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) continue;
    if (/^\d+(\.\d+)?[smhd]?$/.test(a)) continue; // timeout 5, nice 10
    if (a.startsWith('-')) {
      if (!/^-(n|i|0|v|-ignore-environment|-null|-debug)$/.test(a)) everything(`${prog} ${a} is an option MCP Gate does not model`);
      continue;
    }
    break;
  }
  if (i < list.length) {
    const inner = list[i];
    let innerExe: string | undefined;
    if (inner.includes('/')) {
      named(inner, `the command ${inner}`);
      innerExe = path.resolve(cwd, inner);
    } else {
      innerExe = findOnPath(inner, opts.searchPath);
      if (innerExe && within(workspace, innerExe)) named(innerExe, `the program ${inner}`);
    }
    analyse(inner, innerExe, list.slice(i + 1), cwd, workspace, opts, named, depth + 1);
  }
}

/** An interpreter's command line (Node, Python): its options, then the entry (a script, -m module, or inline code), then the script's own arguments. */
function analyseInterpreter(
  family: Family,
  prog: string,
  args: readonly string[],
  cwd: string,
  opts: PlanOptions,
  named: Name,
  everything: (why: string) => void,
  dataArgs: (from: number) => void,
): void {
  const inline = INLINE_FLAGS[family]!;
  for (let i = 0; i < args.length; i++) {
    // Node takes `_` for `-` in option names (`--experimental_loader`): read them as Node does.
    const a = family === 'node' && args[i].startsWith('--') ? args[i].replace(/^--[^=]*/, (n) => n.replace(/_/g, '-')) : args[i];
    if (inline.test(a) || (family === 'node' && /^--(eval|print)=/.test(a))) {
      everything(`inline code (${prog} ${a.replace(/=.*$/s, '')}) can load any file of the workspace`);
      return dataArgs(i + 1);
    }
    if (family === 'python' && /^-[A-Za-z]*[EI]/.test(a) && !a.startsWith('--') && !/^-[XmcwW]/.test(a)) {
      throw new PlanError(
        `${prog} ${a} ignores the environment, and with it the bytecode folder MCP Gate sets outside the workspace: bytecode in the workspace would run unpinned; remove ${a}`,
      );
    }
    if (family === 'python' && (a === '-X' || a.startsWith('-X')) && /pycache_prefix/.test(a === '-X' ? (args[i + 1] ?? '') : a)) {
      throw new PlanError(
        `${prog} -X pycache_prefix sets where Python reads bytecode from, which MCP Gate keeps outside the workspace; remove it`,
      );
    }
    if (family === 'node' && /^--test(=|$)/.test(a)) {
      everything(`${prog} --test runs every test file it finds`);
      continue;
    }
    if (family === 'python' && (a === '-m' || (a.startsWith('-m') && a.length > 2))) {
      named(cwd, `${prog} -m finds the module from its working folder`);
      return dataArgs(i + 1);
    }
    if (family === 'node' && a === '--') {
      // The end of Node's options: the next argument is the entry, whatever it looks like.
      if (i + 1 < args.length) for (const c of candidates(args[i + 1])) named(c, `the entry ${short(args[i + 1])} that ${prog} runs`);
      return dataArgs(i + 2);
    }
    if (a.startsWith('-')) {
      i = interpreterOption(family, prog, a, args, i, cwd, opts, named, everything);
      continue;
    }
    if (a === '-') continue; // the program from stdin: MCP Gate's own pipe
    for (const c of candidates(a)) named(c, `the entry ${short(a)} that ${prog} runs`);
    return dataArgs(i + 1);
  }
}

/** One option of an interpreter's command line at `i` (with its value, when it takes the next argument): returns where it ends. */
function interpreterOption(
  family: Family,
  prog: string,
  a: string,
  args: readonly string[],
  i: number,
  cwd: string,
  opts: PlanOptions,
  named: Name,
  everything: (why: string) => void,
): number {
  const eq = a.indexOf('=');
  const flag = eq > 0 ? a.slice(0, eq) : a;
  let value: string | undefined = eq > 0 ? a.slice(eq + 1) : undefined;
  if (family === 'node') {
    // Read with Node's own option table (./node-options.ts): what takes the next argument decides the entry.
    const kind = nodeOptionKind(flag);
    if (kind === 'unknown' || (kind === 'v8-value' && value === undefined)) {
      everything(
        `${prog} ${flag} is an option MCP Gate does not model (Node's --help does not list it${kind === 'v8-value' ? ' without =' : ''}), so what it runs is uncertain`,
      );
      return i;
    }
    if (NODE_RESOLUTION_FLAGS.test(flag))
      everything(`${prog} ${flag} changes which files Node resolves modules to (or runs the project's scripts)`);
    if (value === undefined && kind === 'value') value = args[++i];
  } else if (value === undefined && family === 'python' && PYTHON_VALUE_FLAGS.test(flag)) value = args[++i];
  if (family === 'node' && NODE_CODE_CONFIG_FLAGS.test(flag)) {
    // A file that can load native code or any module (an OpenSSL config naming engines, a snapshot, a policy).
    everything(`${prog} ${flag} can load code from any file of the workspace`);
    if (value !== undefined) for (const c of candidates(value)) named(c, `the value of ${flag}`, 'file');
    return i;
  }
  if (value === undefined) return i;
  if (family === 'node' && /^--env-file(-if-exists)?$/.test(flag)) {
    // Its variables are the repository's too: the same variables are refused as in "env".
    for (const c of candidates(value)) {
      named(c, `the variables file of ${flag}`, 'file');
      if (opts.gated)
        for (const name of envFileNames(path.resolve(cwd, c))) {
          const why = loaderVariable(name);
          if (why) throw new PlanError(`${flag} ${value} sets ${name}: ${why}; MCP Gate does not pass a repository's ${name}`);
        }
    }
    return i;
  }
  if (family === 'node' && NODE_PRELOAD_FLAGS.test(flag)) {
    // A data: URL is inline code (`--import data:text/javascript,import(…)`): it can load any file.
    if (/^data:/i.test(value)) {
      everything(`inline code (${prog} ${flag} data:…) can load any file of the workspace`);
      return i;
    }
    const spec = /^file:/i.test(value) ? candidates(value)[0] : value;
    if (spec.startsWith('.') || path.isAbsolute(spec)) named(spec, `the module ${short(value)} that ${flag} loads`);
    else named(cwd, `${flag} ${short(value)} is resolved from the working folder's packages`);
  } else for (const c of candidates(value)) named(c, `the value of ${flag}`, 'file');
  return i;
}

function short(a: string): string {
  return a.length > 120 ? `${a.slice(0, 117)}...` : a;
}

/** Paths an argument could name: itself, a flag's `=value`, a file:// URL. */
export function candidates(a: string): string[] {
  const out: string[] = [];
  const add = (v: string) => {
    if (!v) return;
    if (/^file:/i.test(v)) {
      try {
        out.push(fileURLToPath(v));
      } catch {
        throw new ClosureError(`the argument ${v} is a file URL MCP Gate cannot read`);
      }
      return;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) return; // another URL scheme: not a local path
    out.push(v);
  };
  if (a.startsWith('-')) {
    const eq = a.indexOf('=');
    if (eq > 0) add(a.slice(eq + 1));
    return out;
  }
  add(a);
  return out;
}
