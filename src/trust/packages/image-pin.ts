// Pinning a container image (`docker run image:tag`, `podman run …`) to its content digest. At approval the
// runtime the command names (the docker or podman on MCP Gate's PATH, with the minimal environment a server
// gets) is asked for the image's registry digest — pulling it first when it is not on the machine — and the
// approval records `name@sha256:…` with a digest of its own; at start the host runs that reference in place of
// the tag, after checking the runtime has it (pulling by digest when not). Where the digest cannot be obtained
// (no runtime, no daemon, an image never pushed to a registry) the approval records why: the server runs as
// written and the preview says "not pinned", never silently.
import { execFile } from 'node:child_process';
import { canonicalJson, sha256, type Pinned } from '../plan/digest';
import { minimalEnv } from '../plan/launch-plan';
import { NOT_PINNED, packageLaunchOf, type ImageLaunch } from '../plan/launchers';

/** What image pinning reads of a gated server (a ServerReport has these; the store's record carries the pin). */
export interface ImagePinned {
  gated: boolean;
  pinned?: Pinned;
  record?: { decision: string; digest: string; image?: ImagePin };
}

/** What an approval records about the image of a container launch. */
export interface ImagePin {
  runtime: 'docker' | 'podman';
  /** The image as written in the definition. */
  image: string;
  /** What runs: `repository@sha256:<64 hex>`. Absent when it could not be pinned (see `why`). */
  pinned?: string;
  /** Why it is not pinned (the preview's words, starting with "not pinned: …"). */
  why?: string;
  resolvedAt: string;
  /** sha256 of the fields above: a pin edited in the store no longer matches. */
  digest: string;
}

export class ImagePinError extends Error {}

const REPO_DIGEST = /^([^@\s]+)@(sha256:[0-9a-f]{64})$/;
/** How long one runtime call may take: inspecting is quick; a pull downloads the image. */
const INSPECT_MS = 30_000;
const PULL_MS = 600_000;

/** The container launch of a server that MCP Gate pins to an image digest, if it has one. */
export function imageLaunchOf(server: Pick<ImagePinned, 'pinned'>): ImageLaunch | undefined {
  const plan = server.pinned?.plan;
  const p = plan ? packageLaunchOf(plan.command, plan.args) : undefined;
  return p?.kind === 'image' ? p : undefined;
}

function sealed(p: Omit<ImagePin, 'digest'>): ImagePin {
  return { ...p, digest: `sha256:${sha256(canonicalJson(p))}` };
}

/** The pin's own digest matches its fields, and its reference has the form MCP Gate writes. */
export function imagePinIntact(p: ImagePin): boolean {
  const { digest, ...rest } = p;
  if (typeof digest !== 'string' || digest !== `sha256:${sha256(canonicalJson(rest))}`) return false;
  if (p.pinned !== undefined) return typeof p.pinned === 'string' && REPO_DIGEST.test(p.pinned) && p.why === undefined;
  return typeof p.why === 'string';
}

/** The reference names its registry (`localhost:5000/x`, `ghcr.io/x`), as Docker reads the first component. */
function namesRegistry(ref: string): boolean {
  const first = ref.split('/')[0];
  return ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
}

/** `host/path` of a reference, with Docker's defaults filled in (`fetch` → `docker.io/library/fetch`). */
export function repositoryOf(ref: string): string {
  let name = ref.replace(/@.*$/, '');
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > slash) name = name.slice(0, colon);
  if (!namesRegistry(name)) name = `docker.io/${name.includes('/') ? name : `library/${name}`}`;
  return name.replace(/^index\.docker\.io\//, 'docker.io/');
}

interface Run {
  ok: boolean;
  stdout: string;
  /** The runtime's own message, one line. */
  problem: string;
}

function run(executable: string, args: string[], env: Record<string, string>, timeout: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(executable, args, { env, timeout, maxBuffer: 4 * 1024 * 1024, windowsHide: true }, (err, stdout, stderr) => {
      const text = `${stderr}`.trim().split('\n').filter(Boolean).pop() ?? (err ? err.message : '');
      resolve({
        ok: !err,
        stdout: `${stdout}`,
        problem: (err as { killed?: boolean } | null)?.killed
          ? `it did not answer within ${Math.round(timeout / 1000)} s`
          : text.slice(0, 500),
      });
    });
  });
}

async function repoDigests(
  executable: string,
  image: string,
  env: Record<string, string>,
): Promise<{ digests: string[] } | { problem: string }> {
  const r = await run(executable, ['image', 'inspect', '--format', '{{json .RepoDigests}}', image], env, INSPECT_MS);
  if (!r.ok) return { problem: r.problem };
  let v: unknown;
  try {
    v = JSON.parse(r.stdout.trim().split('\n')[0] || 'null');
  } catch {
    return { problem: `its answer is not a list of digests: ${JSON.stringify(r.stdout.slice(0, 200))}` };
  }
  if (v === null) return { digests: [] };
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    return { problem: `its answer is not a list of digests: ${JSON.stringify(r.stdout.slice(0, 200))}` };
  return { digests: v as string[] };
}

/**
 * Resolves the image of `launch` with the runtime at `executable` (absent: not on MCP Gate's PATH): the image the
 * runtime has under that name, else the one it pulls (`pull`: pull first). Never throws
 * for a runtime that cannot answer: the pin then records why it is not pinned.
 */
export async function resolveImage(
  launch: ImageLaunch,
  executable: string | undefined,
  hostEnv: Readonly<Record<string, string | undefined>>,
  o: { pull?: boolean } = {},
): Promise<ImagePin> {
  const base = { runtime: launch.runtime, image: launch.image, resolvedAt: new Date().toISOString() };
  const notPinned = (why: string) => sealed({ ...base, why: `${NOT_PINNED} (${why})` });
  if (!executable)
    return notPinned(
      `${launch.runtime} is not on MCP Gate's PATH, so the digest of ${launch.image} could not be read at approval; it runs by its tag`,
    );
  const env = minimalEnv(hostEnv);
  // `update` pulls first: the tag may have moved in the registry while the machine kept the old image.
  let found: Awaited<ReturnType<typeof repoDigests>> = o.pull
    ? { problem: 'asked to pull' }
    : await repoDigests(executable, launch.image, env);
  if ('problem' in found) {
    const pulled = await run(executable, ['pull', '--quiet', launch.image], env, PULL_MS);
    if (!pulled.ok)
      return notPinned(
        `${launch.runtime} could not read or pull ${launch.image} at approval: ${found.problem}${pulled.problem && pulled.problem !== found.problem ? `; pull: ${pulled.problem}` : ''}; it runs by its tag`,
      );
    found = await repoDigests(executable, launch.image, env);
    if ('problem' in found)
      return notPinned(`${launch.runtime} pulled ${launch.image} but cannot tell its digest: ${found.problem}; it runs by its tag`);
  }
  const want = repositoryOf(launch.image);
  const parsed = found.digests.map((d) => REPO_DIGEST.exec(d)).filter((m): m is RegExpExecArray => m !== null);
  let matches = parsed.filter((m) => repositoryOf(m[1]) === want);
  // podman resolves a short name through its search registries: the digest is then under the registry it chose.
  if (matches.length === 0 && launch.runtime === 'podman' && !namesRegistry(launch.image)) {
    const path = repositoryOf(launch.image).replace(/^docker\.io\/(library\/)?/, '');
    matches = parsed.filter((m) => repositoryOf(m[1]).replace(/^[^/]+\/(library\/)?/, '') === path);
  }
  const repos = [...new Set(matches.map((m) => m[1]))];
  if (matches.length === 0) {
    return notPinned(
      found.digests.length === 0
        ? `${launch.image} has no registry digest in ${launch.runtime} (an image built or loaded on this machine, never pushed or pulled); it runs by its tag`
        : `${launch.runtime} knows ${launch.image} only under other repositories (${found.digests.join(', ')}); it runs by its tag`,
    );
  }
  if (repos.length > 1)
    return notPinned(`${launch.image} resolves to images in more than one registry (${repos.join(', ')}); write the one you mean in full`);
  const pinned = matches.map((m) => m[0]).sort()[0];
  return sealed({ ...base, pinned });
}

/**
 * The pin an approval of this server records: the one already approved with this same definition (approving again
 * after a tool change does not move the image — `mcp-gate update` does), else a fresh resolution.
 */
export async function imagePinForApproval(
  input: { machine: { env: Readonly<Record<string, string | undefined>> } },
  server: ImagePinned,
): Promise<ImagePin | undefined> {
  const launch = imageLaunchOf(server);
  if (!launch || !server.gated) return undefined;
  const r = server.record;
  if (
    r?.decision === 'approved' &&
    r.digest === server.pinned?.digest &&
    r.image &&
    r.image.image === launch.image &&
    r.image.runtime === launch.runtime &&
    imagePinIntact(r.image)
  )
    return r.image;
  return resolveImage(launch, server.pinned?.plan?.executable, input.machine.env);
}

/** The arguments that run the pinned image: the approved arguments with the image replaced by `name@sha256:…`. */
export function pinnedArgs(args: readonly string[], launch: ImageLaunch, pin: ImagePin): string[] {
  if (!pin.pinned || args[launch.index] !== launch.image || pin.image !== launch.image)
    throw new ImagePinError(`the approved image pin is for ${pin.image}, and the definition runs ${args[launch.index]}`);
  const out = [...args];
  out[launch.index] = pin.pinned;
  return out;
}

/**
 * Makes sure the runtime has the pinned image, pulling it by digest when it does not (a pull by digest gets those
 * bytes or nothing). Throws ImagePinError naming what failed.
 */
export async function ensureImage(executable: string, pin: ImagePin, hostEnv: Readonly<Record<string, string | undefined>>): Promise<void> {
  if (!pin.pinned) return;
  const env = minimalEnv(hostEnv);
  const have = await run(executable, ['image', 'inspect', '--format', '{{.Id}}', pin.pinned], env, INSPECT_MS);
  if (have.ok) return;
  const pulled = await run(executable, ['pull', '--quiet', pin.pinned], env, PULL_MS);
  if (!pulled.ok)
    throw new ImagePinError(`${pin.runtime} does not have it and cannot pull it by its digest: ${pulled.problem || have.problem}`);
}
