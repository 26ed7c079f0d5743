// Which package a launcher command line downloads, and whether MCP Gate pins it (src/trust/plan/launchers.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { evaluateGate } from '../../../../src/trust/gate';
import { imagePinIntact, repositoryOf, resolveImage } from '../../../../src/trust/packages/image-pin';
import { findOnPath } from '../../../../src/trust/plan/command-line';
import { NOT_PINNED, packageLaunchOf, type ImageLaunch } from '../../../../src/trust/plan/launchers';
import { ApprovalStore, type ApprovalRecord } from '../../../../src/trust/approval/store';
import { cleanupTemp, world } from '../../helpers';

describe('package launchers', () => {
  it('reads the npm spec, command and arguments of npx, npm exec, pnpm dlx, yarn dlx and bunx', () => {
    assert.deepEqual(packageLaunchOf('npx', ['-y', '@scope/srv@^1', '--port', '1']), {
      kind: 'npm',
      launcher: 'npx',
      spec: '@scope/srv@^1',
      name: '@scope/srv',
      command: undefined,
      rest: ['--port', '1'],
    });
    assert.deepEqual(packageLaunchOf('/usr/bin/npm', ['exec', '--yes', '--package=pkg@2', '--', 'tool', 'a']), {
      kind: 'npm',
      launcher: 'npm exec',
      spec: 'pkg@2',
      name: 'pkg',
      command: 'tool',
      rest: ['a'],
    });
    assert.equal((packageLaunchOf('pnpm', ['dlx', 'srv']) as { spec: string }).spec, 'srv');
    assert.equal((packageLaunchOf('yarn', ['dlx', '-p', 'srv', 'cmd']) as { command: string }).command, 'cmd');
    assert.equal((packageLaunchOf('bunx', ['srv@latest']) as { spec: string }).spec, 'srv@latest');
    assert.equal(packageLaunchOf('node', ['server.js']), undefined);
    assert.equal(packageLaunchOf('npm', ['run', 'start']), undefined);
  });

  it('says "not pinned" and why for what it cannot pin — never silently', () => {
    const cases: [string, string[], RegExp][] = [
      ['npx', ['-y', 'github:someone/srv'], /git spec, not a package from the registry/],
      ['npx', ['--registry', 'https://evil.example', 'srv'], /the option --registry is not one MCP Gate models/],
      ['npx', ['-y', './local'], /directory spec/],
      ['uvx', ['mcp-server-fetch'], /PyPI package run by uv/],
      ['uv', ['tool', 'run', 'mcp-server-git'], /PyPI/],
      ['pipx', ['run', 'srv'], /pipx/],
      ['docker', ['run', '-i', '--frobnicate', 'mcp/fetch:latest'], /the option --frobnicate is not one MCP Gate models for docker run/],
      ['env', ['FOO=1', 'npx', '-y', 'srv'], /not one started through env/],
    ];
    for (const [cmd, args, why] of cases) {
      const p = packageLaunchOf(cmd, args);
      assert.equal(p?.kind, 'unpinned', `${cmd} ${args.join(' ')}`);
      assert.ok(
        p!.kind === 'unpinned' && p.why.startsWith(NOT_PINNED) && why.test(p.why),
        `${cmd} ${args.join(' ')}: ${p && 'why' in p ? p.why : ''}`,
      );
    }
    assert.equal(
      packageLaunchOf('docker', ['run', '-i', `mcp/fetch@sha256:${'a'.repeat(64)}`]),
      undefined,
      'an image by digest is pinned by the definition itself',
    );
  });
});

describe('docker run / podman run: which argument is the image', () => {
  const image = (cmd: string, args: string[]) => {
    const p = packageLaunchOf(cmd, args);
    assert.equal(p?.kind, 'image', `${cmd} ${args.join(' ')}: ${JSON.stringify(p)}`);
    return p as ImageLaunch;
  };
  it('skips options and their values (separate, attached, =value, short clusters) and `--`', () => {
    const cases: [string, string[], string, number][] = [
      ['docker', ['run', '-i', '--rm', 'mcp/fetch:latest'], 'mcp/fetch:latest', 3],
      [
        'docker',
        ['run', '-e', 'TOKEN=x', '-v', '/a:/b', '--name', 'srv', '--network', 'none', '--entrypoint', '/bin/sh', 'img:1', '-c', 'x'],
        'img:1',
        11,
      ],
      ['docker', ['run', '-ePORT=1', '-e=A=b', '--env=B=c', '-it', '--rm', 'img'], 'img', 6],
      ['docker', ['run', '-ite', 'A=1', 'localhost:5000/team/img:2.0', '--flag'], 'localhost:5000/team/img:2.0', 3],
      ['docker', ['run', '--sig-proxy=false', '--init', '-p', '8080:80', '--pull', 'always', 'img'], 'img', 7],
      ['docker', ['run', '--rm', '--', 'img', '--rm'], 'img', 3],
      ['/usr/bin/docker', ['container', 'run', '-i', 'ghcr.io/o/srv'], 'ghcr.io/o/srv', 3],
      ['podman', ['run', '--pod', 'p', '--userns', 'keep-id', '--replace', '-i', 'quay.io/o/srv:v1'], 'quay.io/o/srv:v1', 7],
    ];
    for (const [cmd, args, img, index] of cases) {
      const p = image(cmd, args);
      assert.equal(p.image, img, args.join(' '));
      assert.equal(p.index, index, args.join(' '));
      assert.equal(p.runtime, cmd.endsWith('podman') ? 'podman' : 'docker');
    }
    // A switch does not take the next argument: `--rm false` runs the image "false" (as docker reads it).
    assert.equal(image('docker', ['run', '--rm', 'false']).image, 'false');
  });

  it('an image already written with its digest stays as written (pinned by the definition itself)', () => {
    assert.equal(packageLaunchOf('docker', ['run', '-i', `mcp/fetch@sha256:${'a'.repeat(64)}`]), undefined);
    assert.equal(packageLaunchOf('podman', ['run', '-i', `mcp/fetch:1@sha256:${'b'.repeat(64)}`]), undefined);
  });

  it('refuses to pin, saying why, when the image cannot be found for certain', () => {
    const cases: [string, string[], RegExp][] = [
      ['docker', ['run', '-i'], /it names no image/],
      ['docker', ['run', '--name'], /the option --name has no value/],
      ['docker', ['run', '-e'], /the option -e has no value/],
      ['docker', ['run', '--frob', 'x', 'img'], /the option --frob is not one MCP Gate models for docker run/],
      ['docker', ['run', '-iZ', 'img'], /the option -Z \(in -iZ\) is not one MCP Gate models for docker run/],
      ['docker', ['--context', 'prod', 'run', 'img'], /options before "run" \(--context\) can point docker at another daemon/],
      ['docker', ['-H', 'tcp://evil:2375', 'container', 'run', 'img'], /options before "run"/],
      ['podman', ['run', '--rootfs', '/srv/root', '/bin/sh'], /with --rootfs the first argument is a folder, not an image/],
      ['docker', ['run', '-i', '${input:image}'], /is not an image reference MCP Gate reads/],
      ['docker', ['run', '-i', 'Upper/Case'], /is not an image reference/],
      ['docker', ['run', '-i', 'img@sha256:abc'], /has a digest that is not sha256:<64 hex>/],
      ['docker', ['run', '--'], /it names no image/],
    ];
    for (const [cmd, args, why] of cases) {
      const p = packageLaunchOf(cmd, args);
      assert.equal(p?.kind, 'unpinned', `${cmd} ${args.join(' ')}`);
      assert.ok(
        p!.kind === 'unpinned' && p.why.startsWith(NOT_PINNED) && why.test(p.why),
        `${cmd} ${args.join(' ')}: ${p && 'why' in p ? p.why : ''}`,
      );
    }
    assert.equal(packageLaunchOf('docker', ['ps']), undefined, 'not a run');
  });

  it("normalizes repositories as Docker does, to match a runtime's digests", () => {
    assert.equal(repositoryOf('fetch'), 'docker.io/library/fetch');
    assert.equal(repositoryOf('mcp/fetch:latest'), 'docker.io/mcp/fetch');
    assert.equal(repositoryOf('index.docker.io/mcp/fetch'), 'docker.io/mcp/fetch');
    assert.equal(repositoryOf('localhost:5000/x:1'), 'localhost:5000/x');
    assert.equal(repositoryOf('localhost/x'), 'localhost/x');
    assert.equal(repositoryOf(`ghcr.io/o/x@sha256:${'a'.repeat(64)}`), 'ghcr.io/o/x');
  });
});

describe('approvals of npm launches without a lock', () => {
  after(cleanupTemp);
  it('an approval recorded before packages were pinned shows as changed, asking to approve again', async () => {
    const w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { srv: { command: 'npx', args: ['-y', 'some-server@^1'] } } }) },
      {},
      { PATH: process.env.PATH! },
    );
    const s = evaluateGate(w.input).servers[0];
    await new ApprovalStore(w.store, w.input.masker).update((records) => ({
      records: [
        ...records,
        {
          project: fs.realpathSync(w.project),
          source: '.mcp.json',
          server: 'srv',
          decision: 'approved',
          digest: s.pinned!.digest,
          pinned: s.pinned!.pinned,
          texts: {},
          decidedAt: '2026-01-01T00:00:00.000Z',
        },
      ],
      result: undefined,
    }));
    const after = evaluateGate(w.input).servers[0];
    assert.equal(after.state, 'approval-changed');
    assert.match(
      after.reason,
      /before MCP Gate pinned the packages a server downloads: approve it again to pin some-server@\^1 to an exact version/,
    );
  });
});

describe('approvals of container launches', () => {
  after(cleanupTemp);
  const mcp = (image: string) => JSON.stringify({ mcpServers: { srv: { command: 'docker', args: ['run', '--rm', '-i', image] } } });
  async function approvedWith(w: ReturnType<typeof world>, image?: unknown) {
    const s = evaluateGate(w.input).servers[0];
    await new ApprovalStore(w.store, w.input.masker).update((records) => ({
      records: [
        ...records,
        {
          project: fs.realpathSync(w.project),
          source: '.mcp.json',
          server: 'srv',
          decision: 'approved',
          digest: s.pinned!.digest,
          pinned: s.pinned!.pinned,
          texts: {},
          decidedAt: '2026-01-01T00:00:00.000Z',
          ...(image ? { image } : {}),
        } as ApprovalRecord,
      ],
      result: undefined,
    }));
    return evaluateGate(w.input).servers[0];
  }

  it('an approval recorded before images were pinned, or with an edited pin, shows as changed', async () => {
    const w = world({ '.mcp.json': mcp('mcp/fetch:1') }, {}, { PATH: process.env.PATH! });
    const before = await approvedWith(w);
    assert.equal(before.state, 'approval-changed');
    assert.match(before.reason, /before MCP Gate pinned container images: approve it again to pin mcp\/fetch:1 to its digest/);

    const launch = packageLaunchOf('docker', ['run', '--rm', '-i', 'mcp/fetch:1']) as ImageLaunch;
    const w2 = world({ '.mcp.json': mcp('mcp/fetch:1') }, {}, { PATH: process.env.PATH! });
    const pin = await resolveImage(launch, undefined, w2.env);
    const edited = await approvedWith(w2, { ...pin, why: undefined, pinned: `mcp/fetch@sha256:${'c'.repeat(64)}` });
    assert.equal(edited.state, 'approval-changed');
    assert.match(edited.reason, /the image pin recorded with its approval does not match its digest/);
  });

  it('without a runtime, or with a docker that reaches no daemon, the approval records "not pinned" and why', async () => {
    const launch = packageLaunchOf('docker', ['run', '-i', 'mcp/fetch:1']) as ImageLaunch;
    const none = await resolveImage(launch, undefined, {});
    assert.equal(none.pinned, undefined);
    assert.ok(imagePinIntact(none));
    assert.equal(
      none.why,
      `${NOT_PINNED} (docker is not on MCP Gate's PATH, so the digest of mcp/fetch:1 could not be read at approval; it runs by its tag)`,
    );
    // The real docker client, its HOME empty: it looks for /var/run/docker.sock, which is not there.
    const docker = findOnPath('docker', process.env.PATH);
    assert.ok(docker, 'the docker CLI is on PATH (Debian docker.io or a static client)');
    const home = world().home;
    const r = await resolveImage(launch, docker, { PATH: process.env.PATH, HOME: home, DOCKER_HOST: `unix://${home}/nothing.sock` });
    assert.equal(r.pinned, undefined);
    assert.match(
      r.why!,
      /^not pinned: the bytes this downloads can change \(docker could not read or pull mcp\/fetch:1 at approval: .*docker daemon.*; it runs by its tag\)$/i,
    );
    assert.doesNotMatch(
      r.why!,
      /nothing\.sock/,
      'DOCKER_HOST is not passed to the runtime (it gets the minimal environment a server gets)',
    );
  });
});
