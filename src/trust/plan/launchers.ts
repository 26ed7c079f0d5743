// What a package launcher downloads: reads a local server's command line (`npx -y pkg`, `npm exec`, `pnpm dlx`,
// `yarn dlx`, `bunx`, `uvx`, `pipx run`, `docker run`, `podman run`) and says which package it names and whether
// MCP Gate can pin its bytes. npm registry packages are pinned (src/trust/packages/npm-lock.ts resolves them to a lock at
// approval and the host runs that lock); a container image by tag is pinned to its digest (src/trust/packages/image-pin.ts
// resolves it at approval and the host runs `name@sha256:…`); everything else is reported as not pinned, never
// silently. Pure: no I/O.
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

/** A `docker run` / `podman run` of an image by tag: MCP Gate pins it to the image's content digest. */
export interface ImageLaunch {
  kind: 'image';
  /** `docker run`, `podman run`, `docker container run`, … */
  launcher: string;
  /** The runtime the command names. */
  runtime: 'docker' | 'podman';
  /** The image as written (`mcp/fetch`, `localhost:5000/srv:1`). */
  image: string;
  /** Where the image is in the arguments: what the host replaces with the pinned `name@sha256:…`. */
  index: number;
}

export type PackageLaunch = NpmLaunch | ImageLaunch | UnpinnedLaunch;

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
    return inner
      ? {
          kind: 'unpinned',
          launcher: `${prog} … ${base(inner)}`,
          what: a.join(' '),
          why: `${NOT_PINNED} (MCP Gate pins a package launcher it runs directly, not one started through ${prog})`,
        }
      : undefined;
  }
  if (prog === 'npx') return npmLike('npx', a);
  if (prog === 'npm' && (a[0] === 'exec' || a[0] === 'x')) return npmLike(`npm ${a[0]}`, a.slice(1));
  if ((prog === 'pnpm' || prog === 'yarn' || prog === 'yarnpkg') && a[0] === 'dlx') return npmLike(`${prog} dlx`, a.slice(1));
  if (prog === 'pnpx') return npmLike('pnpx', a);
  if (prog === 'bunx' || (prog === 'bun' && a[0] === 'x'))
    return npmLike(prog === 'bun' ? 'bun x' : 'bunx', prog === 'bun' ? a.slice(1) : a);
  if (prog === 'uvx' || (prog === 'uv' && a[0] === 'tool' && a[1] === 'run')) {
    const rest = prog === 'uvx' ? a : a.slice(2);
    return {
      kind: 'unpinned',
      launcher: prog === 'uvx' ? 'uvx' : 'uv tool run',
      what: rest.find((x) => !x.startsWith('-')) ?? '(no package named)',
      why: `${NOT_PINNED} (MCP Gate pins npm packages; a PyPI package run by uv is resolved by uv at every start)`,
    };
  }
  if (prog === 'pipx' && a[0] === 'run') {
    return {
      kind: 'unpinned',
      launcher: 'pipx run',
      what: a.slice(1).find((x) => !x.startsWith('-')) ?? '(no package named)',
      why: `${NOT_PINNED} (pipx cannot run a locked set of hashes; MCP Gate pins npm packages only)`,
    };
  }
  if (prog === 'docker' || prog === 'podman') return containerRun(prog, a);
  return undefined;
}

/** Programs that run another command line after their own options: the one list, used by the launch plan too. */
export const WRAPPERS =
  /^(env|nice|nohup|timeout|setsid|stdbuf|time|ionice|taskset|chrt|exec|command|unbuffer|setpriv|prlimit|numactl|cpulimit)$/;
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

/** An image written with its digest (`name@sha256:<64 hex>`, a tag before it allowed): pinned by the definition's digest. */
export const DIGESTED = /@sha256:[0-9a-f]{64}$/;

/**
 * `docker|podman [container] run [options] image [command…]`. The image is the first argument that is neither an
 * option nor an option's value, as the runtime's own parser (cobra/pflag, interspersed options off) reads it. An
 * option MCP Gate does not model makes the image uncertain: not pinned, naming the option.
 */
function containerRun(prog: 'docker' | 'podman', a: string[]): PackageLaunch | undefined {
  let start: number;
  if (a[0] === 'run') start = 1;
  else if (a[0] === 'container' && a[1] === 'run') start = 2;
  else if (a[0]?.startsWith('-') && a.some((x, i) => x === 'run' || (x === 'container' && a[i + 1] === 'run'))) {
    return unpinned(
      `${prog} run`,
      a.join(' '),
      `options before "run" (${a[0]}) can point ${prog} at another daemon or configuration; MCP Gate pins \`${prog} run\` written with its options after "run"`,
    );
  } else return undefined;
  const launcher = `${prog} ${a.slice(0, start).join(' ')}`;
  const found = imageArgument(prog, a, start);
  if ('why' in found) return unpinned(launcher, a.slice(start).join(' ') || '(nothing)', found.why);
  const image = a[found.index];
  if (DIGESTED.test(image)) return undefined; // pinned by the definition itself (its digest covers the arguments)
  const bad = imageReferenceProblem(image);
  if (bad) return unpinned(launcher, image, bad);
  return { kind: 'image', launcher, runtime: prog, image, index: found.index };
}

/** Why `ref` is not an image reference MCP Gate can pin, or undefined when it is (`[host[:port]/]path[:tag]`). */
export function imageReferenceProblem(ref: string): string | undefined {
  if (/@/.test(ref)) return `${JSON.stringify(ref)} has a digest that is not sha256:<64 hex>`;
  if (!IMAGE_REF.test(ref)) return `${JSON.stringify(ref)} is not an image reference MCP Gate reads ([registry/]name[:tag])`;
  return undefined;
}
const IMAGE_REF =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$/;

/** Options of `docker run` (Docker CLI 28) and `podman run` (Podman 4) that take a value; every other known one is a switch. */
const VALUE_LONG = new Set(
  (
    'add-host annotation arch attach authfile blkio-weight blkio-weight-device cap-add cap-drop cgroup-conf cgroup-parent cgroupns cgroups ' +
    'chrootdirs cidfile conmon-pidfile cpu-count cpu-percent cpu-period cpu-quota cpu-rt-period cpu-rt-runtime cpu-shares cpus cpuset-cpus cpuset-mems ' +
    'detach-keys device device-cgroup-rule device-read-bps device-read-iops device-write-bps device-write-iops dns dns-opt dns-option dns-search domainname ' +
    'entrypoint env env-file env-merge expose gidmap gpus group-add health-cmd health-interval health-on-failure health-retries health-start-interval ' +
    'health-start-period health-timeout hostname hostuser image-volume init-path io-maxbandwidth io-maxiops ip ip6 ipc isolation kernel-memory label ' +
    'label-file link link-local-ip log-driver log-opt mac-address memory memory-reservation memory-swap memory-swappiness mount name net net-alias network ' +
    'network-alias oom-score-adj os passwd-entry personality pid pidfile pids-limit platform pod pod-id-file preserve-fds publish pull requires restart ' +
    'runtime sdnotify seccomp-policy secret security-opt shm-size stop-signal stop-timeout storage-opt subgidname subuidname sysctl systemd timeout ' +
    'tmpfs tz uidmap ulimit umask unsetenv user userns uts variant volume volume-driver volumes-from workdir'
  ).split(' '),
);
const SWITCH_LONG = new Set(
  (
    'detach disable-content-trust env-host help http-proxy init interactive no-healthcheck no-hosts oom-kill-disable passwd privileged ' +
    'publish-all quiet read-only read-only-tmpfs replace rm rmi sig-proxy tls-verify tty unsetenv-all use-api-socket'
  ).split(' '),
);
const VALUE_SHORT = new Set(['a', 'c', 'e', 'h', 'l', 'm', 'p', 'u', 'v', 'w']);
const SWITCH_SHORT = new Set(['d', 'i', 'P', 'q', 't']);
/** Options after which the first argument is not an image. */
const NOT_AN_IMAGE: Record<string, string> = { rootfs: 'with --rootfs the first argument is a folder, not an image' };

function imageArgument(prog: string, a: string[], from: number): { index: number } | { why: string } {
  for (let i = from; i < a.length; i++) {
    const x = a[i];
    if (x === '--') return i + 1 < a.length ? { index: i + 1 } : { why: 'it names no image' };
    if (x === '-' || !x.startsWith('-')) return x === '-' ? { why: 'the argument "-" is not an image' } : { index: i };
    if (x.startsWith('--')) {
      const eq = x.indexOf('=');
      const name = x.slice(2, eq < 0 ? undefined : eq);
      if (NOT_AN_IMAGE[name]) return { why: NOT_AN_IMAGE[name] };
      if (VALUE_LONG.has(name)) {
        if (eq < 0) {
          if (i + 1 >= a.length) return { why: `the option ${x} has no value` };
          i++;
        }
        continue;
      }
      if (SWITCH_LONG.has(name)) continue; // a switch takes a value only as --name=value
      return { why: `the option --${name} is not one MCP Gate models for ${prog} run` };
    }
    // A cluster of short options (-it, -ePORT=1, -e PORT=1): switches, then at most one that takes the rest or the next argument.
    for (let k = 1; k < x.length; k++) {
      const c = x[k];
      if (SWITCH_SHORT.has(c)) continue;
      if (VALUE_SHORT.has(c)) {
        if (k + 1 === x.length) {
          if (i + 1 >= a.length) return { why: `the option -${c} has no value` };
          i++;
        }
        break;
      }
      return { why: `the option -${c}${x.length > 2 ? ` (in ${x})` : ''} is not one MCP Gate models for ${prog} run` };
    }
  }
  return { why: 'it names no image' };
}
