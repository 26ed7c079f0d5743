// The launch plan: one pure function turns a stdio server's definition and the project into exactly what will
// be executed — the executable as an absolute real path found on MCP Gate's own PATH (a repository's `env`
// never decides which program runs), the arguments, the working folder as a real path, the environment the
// repository declared (variables that control which code an interpreter loads are refused, not passed:
// ./loader-variables.ts), and the
// execution closure (src/trust/plan/closure.ts) of the workspace content it can execute or load. The digest is
// computed over the plan (src/trust/plan/digest.ts); the host spawns the plan and re-resolves nothing. What a
// command line names is read in ./command-line.ts.
import * as path from 'node:path';
import { closureOf, snapshotClosureOf, WholeWorkspace, type ClosureEntry } from './closure';
import { ClosureError, type Closure } from './closure-files';
import { analyse, candidates, findOnPath, isPackageLauncher, namer, PlanError, type PlanOptions } from './command-line';
import { guardedClosureOf } from './guarded-closure';
import type { ServerDefinition } from '../sources/declarations';
import type { TrackingReader } from '../sources/fsread';
import { resolvePhysical, rewriteProcPath, UnpinnablePathError, within } from './realpath';
import { packageLaunchOf } from './launchers';
import { loaderVariable } from './loader-variables';

export interface LaunchPlan {
  /** The command as written. */
  command: string;
  /** Absolute real path of the program that will run; absent when it is not found (the start then fails). */
  executable?: string;
  /** Why `executable` is absent. */
  notFound?: string;
  args: string[];
  /** Real path of the working folder. */
  cwd: string;
  /** The working folder relative to the workspace ('.' for the workspace itself), when it is inside it. */
  cwdInWorkspace?: string;
  /** Variables the definition sets (null values dropped), `${workspaceFolder}` filled in. */
  env: Record<string, string>;
  /** A package launcher (npx, uvx, …): its first start may download, so the host waits longer for it to answer. */
  launcher?: boolean;
  /** Entries that put folders into the closure, for the preview ("why is this pinned"). */
  entries: { path: string; why: string }[];
  closure: Closure;
}

/** Variables passed through from MCP Gate's own environment; everything else (tokens, keys) stays behind. */
export const INHERITED_ENV = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'TEMP',
  'TMP',
  'SYSTEMROOT',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'APPDATA',
  'LOCALAPPDATA',
  'USERPROFILE',
];

/**
 * The certificate authorities you trust, as your environment names them (a company's TLS proxy, a test CA): a
 * server you start trusts them too — Node, OpenSSL, Python's requests, curl. Yours only: a repository may not set
 * them (NODE_EXTRA_CA_CERTS is refused as a loader variable; the others would let it choose whom its server trusts).
 * Contained, the files they name are shown to the server read-only.
 */
export const TRUST_ENV = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'];

/** What a local server (and a container runtime MCP Gate asks about its image) gets of MCP Gate's environment. */
export function minimalEnv(parent: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of [...INHERITED_ENV, ...TRUST_ENV]) if (parent[k] !== undefined) env[k] = parent[k]!;
  return env;
}

/** Substitutes the workspace variables MCP Gate fills in; any other `${…}` is left as written. */
export function substitute(s: string, projectDir: string): string {
  // One pass: a value put in (a folder named `a-${workspaceRoot}`) is never substituted again.
  return s.replace(/\$\{(workspaceFolder|workspaceFolderBasename|workspaceRoot)\}/g, (_, v: string) =>
    v === 'workspaceFolderBasename' ? path.basename(projectDir) : projectDir,
  );
}

/** Per-evaluation memo: a PATH lookup and a folder's physical resolution are done once, whatever number of servers ask. */
const memos = new WeakMap<
  TrackingReader,
  { onPath: Map<string, string | undefined>; folders: Map<string, ReturnType<typeof resolvePhysical>> }
>();
function memoOf(reader: TrackingReader) {
  let m = memos.get(reader);
  if (!m) memos.set(reader, (m = { onPath: new Map(), folders: new Map() }));
  return m;
}
function findOnPathOnce(reader: TrackingReader, name: string, searchPath: string | undefined): string | undefined {
  const m = memoOf(reader).onPath;
  const key = `${searchPath ?? ''}\0${name}`;
  if (!m.has(key)) m.set(key, findOnPath(name, searchPath));
  return m.get(key);
}

/** The interpreters the load guard runs in (by the real path's name): Node and CPython. */
export const GUARDED_PROGRAM = /^(node|nodejs|python[23]?(\.\d+)?)$/;

/** Turns a stdio definition into the plan. Throws PlanError (or ClosureError) when it cannot be pinned or is refused. */
export function planLaunch(
  def: ServerDefinition,
  workspace: string,
  opts: PlanOptions,
  reader: TrackingReader,
): { plan: LaunchPlan; texts: Record<string, string> } {
  if (def.type !== 'stdio' || !def.command) throw new PlanError('not a local server');
  const sub = (s: string) => substitute(s, workspace);
  const env = planEnv(def, sub, opts.gated);
  const cwd = workingFolder(def, sub, workspace, reader);
  const command = sub(def.command);
  const args = def.args.map(sub);
  const entries: ClosureEntry[] = [];
  const named = namer(cwd, entries);

  // A variable whose value names a workspace file (a config a library loads, OPENSSL_CONF-like): that file is pinned.
  for (const [k, v] of Object.entries(env)) {
    for (const part of v.split(path.delimiter)) {
      if (!part || part.length > 4096) continue;
      for (const c of candidates(part)) {
        named(c, `the variable ${k}`, 'file');
        entries[entries.length - 1].data = true; // under the guard: data, checked only if it loads as code
      }
    }
  }

  // The executable: a path is resolved against the working folder; a bare name on MCP Gate's PATH.
  let executable: string | undefined;
  let notFound: string | undefined;
  if (command.includes('/') || command.includes('\\')) {
    named(command, `the command ${command}`);
    try {
      const r = resolvePhysical(rewriteProcPath(path.resolve(cwd, command), cwd), cwd);
      if (r.exists) executable = r.real;
      else notFound = `${command} does not exist`;
    } catch (e) {
      throw new ClosureError(`the command ${command}: ${(e as Error).message}`);
    }
  } else {
    executable = findOnPathOnce(reader, command, opts.searchPath);
    if (!executable) notFound = `${command} is not on MCP Gate's PATH`;
  }
  if (executable && within(workspace, executable)) entries.push({ path: executable, why: `the program ${command}` });

  analyse(command, executable, args, cwd, workspace, opts, named, 0);

  // By the program's real name, or as written when it is not found (it then does not start, whatever its closure).
  // A repository's npm launch runs its approved lock with node (src/host/sandbox/contain.ts): under the guard as well.
  const lockedNpm = opts.gated && packageLaunchOf(command, args)?.kind === 'npm';
  const guarded =
    opts.gated && opts.guard && (GUARDED_PROGRAM.test(path.basename(executable ?? command)) || lockedNpm)
      ? guardedClosureOf(workspace, entries, opts.configFiles, reader)
      : undefined;
  // Under the guard's design, what would pin the whole workspace runs on the approved snapshot instead.
  const pinned = () => {
    try {
      return closureOf(workspace, entries, opts.configFiles, reader, !!opts.guard);
    } catch (e) {
      // Said by what the guard could not check when that is why (code from strings, a child process), else by what
      // would have pinned the whole workspace.
      if (e instanceof WholeWorkspace)
        return snapshotClosureOf(workspace, entries, opts.configFiles, reader, guarded && 'fallback' in guarded ? guarded.fallback : e.why);
      throw e;
    }
  };
  const { closure, texts } =
    guarded && !('fallback' in guarded) ? guarded : opts.gated ? pinned() : { closure: { roots: [], files: {}, links: {} }, texts: {} };
  const relOf = (p: string) => path.relative(workspace, p).split(path.sep).join('/') || '.';
  const plan: LaunchPlan = {
    command,
    executable,
    notFound,
    args,
    cwd,
    env,
    launcher: isPackageLauncher(path.basename(command), args) || undefined,
    cwdInWorkspace: within(workspace, cwd) ? relOf(cwd) : undefined,
    entries: entries.filter((e) => within(workspace, e.path)).map((e) => ({ path: relOf(e.path), why: e.why })),
    closure,
  };
  return { plan, texts };
}

/** The environment a definition declares, its workspace variables filled in; a repository's loader variable is refused. */
function planEnv(def: ServerDefinition, sub: (s: string) => string, gated: boolean): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(def.env)) if (v !== null) env[k] = sub(v);
  if (gated) {
    for (const k of Object.keys(env)) {
      const why = loaderVariable(k);
      if (why)
        throw new PlanError(
          `its "env" sets ${k}: ${why}; MCP Gate does not pass a repository's ${k} (remove it, or declare the server in your user configuration)`,
        );
    }
  }
  return env;
}

/** The working folder, as the kernel will resolve it at chdir: physically (`link/..` is the link target's parent), never lexically. */
function workingFolder(def: ServerDefinition, sub: (s: string) => string, workspace: string, reader: TrackingReader): string {
  try {
    const written = def.cwd ? sub(def.cwd) : undefined;
    const requested = written === undefined ? workspace : path.isAbsolute(written) ? written : `${workspace}/${written}`;
    const folders = memoOf(reader).folders;
    let r = folders.get(requested);
    if (!r) folders.set(requested, (r = resolvePhysical(requested, workspace)));
    if (!r.exists) throw new PlanError(`its working folder ${def.cwd} does not exist`);
    return r.real;
  } catch (e) {
    if (e instanceof UnpinnablePathError) throw new PlanError(`its working folder: ${e.message}`);
    throw e;
  }
}
