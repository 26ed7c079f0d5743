// A real container world on 127.0.0.1 for the image-pin tests, without internet: the distribution registry
// (Debian's docker-registry) on a free port, Podman's Docker-compatible API service on a private socket (the real
// Docker CLI talks to it through a `docker context` in a test HOME), and fixture images built from a static MCP
// server (test/fixtures/container/server.c) by `podman import`. Podman is configured for this machine by files
// in the temp folder only (runc, cgroupfs, lowered rlimits): nothing global is changed except the images it
// stores under /var/lib/containers, which stop() removes. Needs (Debian): podman, runc, docker-registry, gcc,
// libc6-dev, and a docker CLI (docker.io or a static client); .ci/run installs them.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort, ROOT, tempDir } from './helpers';

export interface Containers {
  /** `127.0.0.1:<port>`: the registry. */
  registry: string;
  /** The podman API socket (what the docker CLI talks to). */
  socket: string;
  /** Builds an image whose tool is `fixture_v<version>` and pushes it to `<registry>/<repoTag>` (nothing kept locally). */
  publish(version: string, repoTag: string): void;
  /** Pulls a reference into the local store (the tag now names what the registry has). */
  pull(ref: string): void;
  /** Removes an image from the local store by its id. */
  removeLocal(ref: string): Promise<void>;
  /** Deletes a manifest from the registry (it can no longer be pulled by that digest). */
  deleteFromRegistry(repository: string, digest: string): Promise<void>;
  /** Makes `home`'s docker CLI use the podman service (its `~/.docker`). */
  dockerHome(home: string): void;
  /** Runs the docker CLI as a user of `home` would. */
  docker(home: string, args: string[], input?: string): { code: number; stdout: string; stderr: string };
  stop(): void;
}

function need(cmd: string): void {
  if (spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0) {
    throw new Error(
      `the container tests need ${cmd} on PATH (Debian: apt-get install -y podman runc docker-registry gcc libc6-dev docker.io; .ci/run installs them)`,
    );
  }
}

function must(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): string {
  const r = spawnSync(cmd, args, { env, input, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.error ? ` ${r.error.message}` : ''}`);
  return r.stdout;
}

/** Waits until `ready()` is true or the process exits (readiness, not a timed assertion). */
async function until(what: string, p: ChildProcess, log: () => string, ready: () => Promise<boolean> | boolean): Promise<void> {
  for (;;) {
    if (p.exitCode !== null) throw new Error(`${what} exited (${p.exitCode}): ${log()}`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startContainers(): Promise<Containers> {
  for (const c of ['podman', 'runc', 'docker-registry', 'docker', 'gcc']) need(c);
  const dir = tempDir('mcp-gate-ctr-');
  const port = await freePort();
  const registry = `127.0.0.1:${port}`;
  const socket = path.join(dir, 'podman.sock');
  fs.writeFileSync(
    path.join(dir, 'registry.yml'),
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/registry\n  delete:\n    enabled: true\nhttp:\n  addr: ${registry}\n`,
  );
  fs.writeFileSync(path.join(dir, 'registries.conf'), `[[registry]]\nlocation = "${registry}"\ninsecure = true\n`);
  // This machine kind: cgroup v1/v2 hybrid (crun refuses it; runc works), no CAP_SYS_RESOURCE (rlimits may only be lowered).
  fs.writeFileSync(
    path.join(dir, 'containers.conf'),
    '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\nruntime = "runc"\n',
  );
  const penv: NodeJS.ProcessEnv = {
    ...process.env,
    CONTAINERS_CONF: path.join(dir, 'containers.conf'),
    CONTAINERS_REGISTRIES_CONF: path.join(dir, 'registries.conf'),
  };

  let regLog = '';
  const reg = spawn('docker-registry', ['serve', path.join(dir, 'registry.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  reg.stdout!.on('data', (d) => (regLog += d));
  reg.stderr!.on('data', (d) => (regLog += d));
  let svcLog = '';
  const svc = spawn('podman', ['system', 'service', '--time=0', `unix://${socket}`], { env: penv, stdio: ['ignore', 'pipe', 'pipe'] });
  svc.stdout!.on('data', (d) => (svcLog += d));
  svc.stderr!.on('data', (d) => (svcLog += d));
  const ids = new Set<string>();
  const stop = () => {
    for (const p of [svc, reg]) if (p.exitCode === null) p.kill('SIGTERM');
    const listed = spawnSync('podman', ['images', '--format', '{{.ID}} {{.Repository}}'], { env: penv, encoding: 'utf8' }).stdout ?? '';
    for (const line of listed.split('\n')) if (line.split(' ')[1]?.startsWith(`${registry}/`)) ids.add(line.split(' ')[0]);
    if (ids.size) spawnSync('podman', ['rmi', '-f', ...ids], { env: penv });
  };
  try {
    await until(
      'docker-registry',
      reg,
      () => regLog,
      () =>
        fetch(`http://${registry}/v2/`).then(
          (r) => r.ok,
          () => false,
        ),
    );
    await until(
      'podman system service',
      svc,
      () => svcLog,
      () => fs.existsSync(socket) && spawnSync('docker', ['--host', `unix://${socket}`, 'version'], { encoding: 'utf8' }).status === 0,
    );
    must(
      'gcc',
      ['-static', '-O2', '-o', path.join(dir, 'server'), path.join(ROOT, 'test', 'fixtures', 'container', 'server.c')],
      process.env,
    );
  } catch (e) {
    stop();
    throw e;
  }
  const idOf = (ref: string) => must('podman', ['image', 'inspect', '--format', '{{.Id}}', ref], penv).trim();
  let builds = 0;
  return {
    registry,
    socket,
    publish(version, repoTag) {
      const root = path.join(dir, `rootfs-${++builds}`);
      fs.mkdirSync(root);
      fs.copyFileSync(path.join(dir, 'server'), path.join(root, 'server'));
      fs.chmodSync(path.join(root, 'server'), 0o755);
      fs.writeFileSync(path.join(root, 'version'), `${version}\n`);
      const tar = `${root}.tar`;
      must('tar', ['-C', root, '-cf', tar, '.'], process.env);
      const build = `localhost/mcp-gate-fixture-build:${port}-${builds}`;
      must('podman', ['import', '--quiet', '--change', 'CMD ["/server"]', tar, build], penv);
      must('podman', ['push', '--quiet', build, `${registry}/${repoTag}`], penv);
      must('podman', ['rmi', build], penv); // nothing of it stays local: a pull gets the registry's digest
    },
    pull(ref) {
      must('podman', ['pull', '--quiet', ref], penv);
      ids.add(idOf(ref));
    },
    async removeLocal(ref) {
      // A stopped server's container is removed by the service a moment after its client ends (--rm): wait for it.
      const id = idOf(ref);
      for (let i = 0; ; i++) {
        const r = spawnSync('podman', ['rmi', '-f', id], { env: penv, encoding: 'utf8' });
        if (r.status === 0) return;
        if (i >= 100 || !/container .* using image|in use/.test(r.stderr)) throw new Error(`podman rmi -f ${id} failed: ${r.stderr}`);
        await new Promise((res) => setTimeout(res, 200));
      }
    },
    async deleteFromRegistry(repository, digest) {
      const r = await fetch(`http://${registry}/v2/${repository}/manifests/${digest}`, { method: 'DELETE' });
      if (!r.ok) throw new Error(`deleting ${repository}@${digest} from the registry failed: ${r.status} ${await r.text()}`);
    },
    dockerHome(home) {
      const env = { ...process.env, HOME: home };
      must('docker', ['context', 'create', 'fixture', '--docker', `host=unix://${socket}`], env);
      must('docker', ['context', 'use', 'fixture'], env);
    },
    docker(home, args, input) {
      const r = spawnSync('docker', args, { env: { PATH: process.env.PATH, HOME: home }, input, encoding: 'utf8', timeout: 120_000 });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    stop,
  };
}
