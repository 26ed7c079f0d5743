// What a package launcher downloads: reads a local server's command line (`npx -y pkg`, `npm exec`, `pnpm dlx`,
// `yarn dlx`, `bunx`, `uvx`, `pipx run`, `docker run`) and says which package it names and whether MCP Gate can
// pin its bytes. npm registry packages are pinned (src/trust/npm-lock.ts resolves them to a lock at approval and
// the host runs that lock); everything else is reported as not pinned, never silently. Pure: no I/O.
import * as path from 'node:path';
import npa from 'npm-package-arg';

/** What one package launch runs, when MCP Gate can pin it. */
export interface NpmLaunch {
  kind: 'npm';
  /** The launcher as written (`npx`, `npm exec`, `pnpm dlx`, …). */
  launcher: string;
  /** The package spec as written (`fixture-server`, `@scope/pkg@^1`). */
  spec: string;
  name: string;
  /** The command named after `--package` (npx -p pkg cmd); absent: the package's own bin, as npx chooses it. */
  command?: string;
  /** The arguments the server gets after the package (or command). */
  rest: string[];
}

export interface UnpinnedLaunch {
  kind: 'unpinned';
  launcher: string;
  /** What it downloads, as far as it can be read. */
  what: string;
  /** Why the bytes are not pinned. */
  why: string;
}

export type PackageLaunch = NpmLaunch | UnpinnedLaunch;

/** The preview's words for a launch MCP Gate cannot pin. */
export const NOT_PINNED = 'not pinned: the bytes this downloads can change';

const base = (c: string) => path.basename(c).replace(/\.(exe|cmd)$/i, '');

/**
 * The package a command line downloads and runs, or undefined when it is not a package launcher. `command` is the
 * command as written (a path or a bare name).
 */
export function packageLaunchOf(command: string, args: readonly string[]): PackageLaunch | undefined {
  const prog = base(command);
  const a = [...args];
  if (WRAPPERS.test(prog)) {
    const inner = a.find((x) => LAUNCHERS.test(base(x)));
    return inner ? { kind: 'unpinned', launcher: `${prog} … ${base(inner)}`, what: a.join(' '), why: `${NOT_PINNED} (MCP Gate pins a package launcher it runs directly, not one started through ${prog})` } : undefined;
  }
  if (prog === 'npx') return npmLike('npx', a);
  if (prog === 'npm' && (a[0] === 'exec' || a[0] === 'x')) return npmLike(`npm ${a[0]}`, a.slice(1));
  if ((prog === 'pnpm' || prog === 'yarn' || prog === 'yarnpkg') && a[0] === 'dlx') return npmLike(`${prog} dlx`, a.slice(1));
  if (prog === 'pnpx') return npmLike('pnpx', a);
  if (prog === 'bunx' || (prog === 'bun' && a[0] === 'x')) return npmLike(prog === 'bun' ? 'bun x' : 'bunx', prog === 'bun' ? a.slice(1) : a);
  if (prog === 'uvx' || (prog === 'uv' && a[0] === 'tool' && a[1] === 'run')) {
    const rest = prog === 'uvx' ? a : a.slice(2);
    return { kind: 'unpinned', launcher: prog === 'uvx' ? 'uvx' : 'uv tool run', what: rest.find((x) => !x.startsWith('-')) ?? '(no package named)', why: `${NOT_PINNED} (MCP Gate pins npm packages; a PyPI package run by uv is resolved by uv at every start)` };
  }
  if (prog === 'pipx' && a[0] === 'run') {
    return { kind: 'unpinned', launcher: 'pipx run', what: a.slice(1).find((x) => !x.startsWith('-')) ?? '(no package named)', why: `${NOT_PINNED} (pipx cannot run a locked set of hashes; MCP Gate pins npm packages only)` };
  }
  if ((prog === 'docker' || prog === 'podman') && a[0] === 'run') {
    const image = dockerImage(a.slice(1));
    if (image && /@sha256:[0-9a-f]{64}$/.test(image)) return undefined; // pinned by the definition itself (its digest covers the arguments)
    return { kind: 'unpinned', launcher: `${prog} run`, what: image ?? '(image not found in the arguments)', why: `${NOT_PINNED} (an image tag can be moved; write the image as name@sha256:… to pin it)` };
  }
  return undefined;
}

const WRAPPERS = /^(env|nice|nohup|timeout|setsid|stdbuf|time|ionice|taskset|chrt|exec|command|unbuffer|setpriv|prlimit|numactl|cpulimit)$/;
const LAUNCHERS = /^(npx|npm|pnpm|pnpx|yarn|yarnpkg|bunx|bun|uvx|uv|pipx|docker|podman)$/;

/** Options npx, npm exec, pnpm dlx, yarn dlx and bunx take that do not change what is downloaded. */
const HARMLESS = /^(-y|--yes|-q|--quiet|-s|--silent|--bun|--no-install)$/;

function npmLike(launcher: string, a: string[]): PackageLaunch {
  let pkg: string | undefined;
  let i = 0;
  for (; i < a.length; i++) {
    const x = a[i];
    if (x === '--') {
      i++;
      break;
    }
    if (!x.startsWith('-')) break;
    if (HARMLESS.test(x)) continue;
    if (x === '-p' || x === '--package') {
      if (pkg !== undefined) return unpinned(launcher, a.join(' '), 'it names more than one --package');
      pkg = a[++i];
      continue;
    }
    if (x.startsWith('--package=')) {
      if (pkg !== undefined) return unpinned(launcher, a.join(' '), 'it names more than one --package');
      pkg = x.slice('--package='.length);
      continue;
    }
    return unpinned(launcher, a.join(' '), `the option ${x} is not one MCP Gate models`);
  }
  const first = a[i];
  if (first === undefined) return unpinned(launcher, '(nothing)', 'it names no package');
  const spec = pkg ?? first;
  let parsed: ReturnType<typeof npa>;
  try {
    parsed = npa(spec);
  } catch (e) {
    return unpinned(launcher, spec, `${JSON.stringify(spec)} is not a package spec npm reads (${(e as Error).message})`);
  }
  if (!['tag', 'version', 'range'].includes(parsed.type) || !parsed.name) {
    return unpinned(launcher, spec, `${spec} is a ${parsed.type} spec, not a package from the registry`);
  }
  return { kind: 'npm', launcher, spec, name: parsed.name, command: pkg !== undefined ? first : undefined, rest: a.slice(i + 1) };
}

function unpinned(launcher: string, what: string, why: string): UnpinnedLaunch {
  return { kind: 'unpinned', launcher, what, why: `${NOT_PINNED} (${why})` };
}

/** The image argument of `docker run [options] image …`: the first argument that is not an option or its value. */
function dockerImage(a: string[]): string | undefined {
  const withValue = /^(-e|--env|-v|--volume|-p|--publish|--name|-w|--workdir|-u|--user|--network|--net|--entrypoint|-l|--label|--env-file|--mount|--platform|-m|--memory|--cpus|--add-host|--device|--cap-add|--cap-drop|--security-opt|-h|--hostname|--pull|--restart|--user|--ulimit)$/;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (x.startsWith('-')) {
      if (withValue.test(x)) i++;
      continue;
    }
    return x;
  }
  return undefined;
}
