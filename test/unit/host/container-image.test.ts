// `docker run image:tag` is pinned to the image's digest (src/trust/packages/image-pin.ts), against a real registry, the
// real Docker CLI and Podman's Docker API service on this machine (test/unit/containers.ts): the approval records
// `name@sha256:…`, the contained start runs that digest even after the tag is moved (locally and in the
// registry), pulls it by digest when it is gone from the machine, refuses to start when it cannot be had, and a
// changed image in the definition re-gates. `podman run` is resolved by podman itself.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startContainers, type Containers } from '../containers';
import { cleanupTemp, cli, world, type World } from '../helpers';

describe('container images: pinned to their digest (real registry, docker CLI, podman)', function () {
  this.timeout(600_000);
  let c: Containers;
  before(async () => {
    c = await startContainers();
  });
  after(() => {
    c?.stop();
    cleanupTemp();
  });

  /** A project declaring `fx` as `runtime run --rm -i <image>`, contained, its docker CLI pointed at the podman service. */
  function project(runtime: string, image: string): World {
    const w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { fx: { command: runtime, args: ['run', '--rm', '-i', image] } } }) },
      {},
      { PATH: process.env.PATH! },
    );
    c.dockerHome(w.home);
    config(w, true);
    return w;
  }
  /** The user's configuration: the tools allowed; the sandbox shows the docker CLI the daemon's socket, with Unix sockets allowed or not. */
  function config(w: World, unixSockets: boolean): void {
    const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      JSON.stringify({
        rules: [{ action: 'mcp.fx.tool.*', decision: 'allow', project: w.project }],
        // The sandbox holds the docker CLI; it reaches the daemon only through a socket the user shows it.
        sandbox: {
          servers: [
            { server: 'fx', project: w.project, read: [path.join(w.home, '.docker'), c.socket], ...(unixSockets ? { unixSockets } : {}) },
          ],
        },
      }),
    );
  }
  const digestIn = (text: string) => /fixture@(sha256:[0-9a-f]{64})/.exec(text)?.[1];

  it('approval pins the tag to its digest; a re-tagged image does not run; gone locally it is pulled by digest; unobtainable it is refused; update moves it', async () => {
    c.publish('1', 'fixture:1');
    const image = `${c.registry}/fixture:1`;
    const w = project('docker', image);

    const approved = cli(w, ['approve', 'fx', '--yes']);
    assert.equal(approved.code, 0, approved.stdout + approved.stderr);
    assert.match(
      approved.stdout,
      new RegExp(
        `image       "${image.replace(/[.]/g, '\\.')}" \\(docker run\\): pinned to ${c.registry.replace(/[.]/g, '\\.')}/fixture@sha256:[0-9a-f]{64}`,
      ),
    );
    const d1 = digestIn(approved.stdout)!;
    assert.ok(d1, approved.stdout);
    assert.match(cli(w, ['get', 'fx']).stdout, new RegExp(`pinned \\(approved\\) to .*fixture@${d1}`));

    // Without unixSockets the docker CLI cannot reach the socket it is shown: the failure names the setting.
    config(w, false);
    assert.match(
      cli(w, ['get', 'fx']).stdout,
      new RegExp(
        `Unix sockets: refused \\(a seccomp filter\\) — ${c.socket.replace(/[.]/g, '\\.')} is a Unix socket it can see, so it may make none of its own \\(it could connect to that one\\): "unixSockets": true in its sandbox entry allows them`,
      ),
    );
    const blocked = cli(w, ['tools', 'fx']);
    assert.match(
      blocked.stdout + blocked.stderr,
      /operation not permitted.* is a Unix socket it can see, so it may make none of its own \(it could connect to that one\): "unixSockets": true in its sandbox entry allows them/,
      blocked.stdout + blocked.stderr,
    );
    config(w, true);
    const first = cli(w, ['tools', 'fx']);
    assert.match(first.stdout, /fixture_v1\s+\[allow\]/, first.stdout + first.stderr);

    // The tag moves, in the registry and on this machine: running the tag now runs version 2 …
    c.publish('2', 'fixture:1');
    c.pull(image);
    const byTag = c.docker(w.home, ['run', '--rm', '-i', image], '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n');
    assert.match(byTag.stdout, /fixture_v2/, byTag.stdout + byTag.stderr);
    // … and the approved server still runs version 1, still approved (its tools did not change).
    const moved = cli(w, ['tools', 'fx']);
    assert.match(moved.stdout, /fixture_v1\s+\[allow\]/, moved.stdout + moved.stderr);
    assert.doesNotMatch(moved.stdout, /fixture_v2/);
    assert.match(cli(w, ['get', 'fx']).stdout, /state\s+approved/);
    const log = fs.readFileSync(path.join(w.store, 'log.jsonl'), 'utf8');
    assert.match(log, new RegExp(`"kind":"gate.approve".*"detail":"image ${c.registry.replace(/[.]/g, '\\.')}/fixture@${d1}"`));

    // Gone from the machine: pulled again by its digest at start.
    await c.removeLocal(`${c.registry}/fixture@${d1}`);
    const pulled = cli(w, ['tools', 'fx']);
    assert.match(pulled.stdout, /fixture_v1\s+\[allow\]/, pulled.stdout + pulled.stderr);

    // Gone from the machine and from the registry: refused, naming the server, the image and what to do.
    await c.removeLocal(`${c.registry}/fixture@${d1}`);
    await c.deleteFromRegistry('fixture', d1);
    const refused = cli(w, ['tools', 'fx']);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stdout + refused.stderr,
      new RegExp(
        `"fx" is not started: its approved image ${c.registry.replace(/[.]/g, '\\.')}/fixture@${d1} \\(pinned from ${image.replace(/[.]/g, '\\.')}\\) cannot be used: docker does not have it and cannot pull it by its digest: .*manifest unknown.*mcp-gate update fx`,
      ),
    );

    // `update` pulls the tag again and records what it names now; the server then runs version 2.
    const updated = cli(w, ['update', 'fx', '--yes']);
    assert.equal(updated.code, 0, updated.stdout + updated.stderr);
    assert.match(updated.stdout, new RegExp(`approved .*fixture@${d1}[\\s\\S]*now .*fixture@sha256:`));
    const d2 = digestIn(updated.stdout.split('now')[1])!;
    assert.notEqual(d2, d1);
    const v2 = cli(w, ['tools', 'fx']);
    assert.match(v2.stdout, /fixture_v2\s+\[allow\]/, v2.stdout + v2.stderr);

    // A changed image in the definition re-gates (the definition's digest covers its arguments).
    fs.writeFileSync(
      path.join(w.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { fx: { command: 'docker', args: ['run', '--rm', '-i', `${c.registry}/fixture:2`] } } }),
    );
    const changed = cli(w, ['get', 'fx']);
    assert.match(changed.stdout, /state\s+changed since approval: its definition changed/);
    assert.notEqual(cli(w, ['tools', 'fx']).code, 0);
  });

  it('podman run is resolved by podman; a daemon that cannot be reached leaves it "not pinned" with the reason in the preview', async () => {
    c.publish('3', 'other:1');
    const image = `${c.registry}/other:1`;
    c.pull(image); // the test registry is reachable by podman only with this suite's registries.conf
    const w = project('podman', image);
    const r = cli(w, ['approve', 'fx', '--yes']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`\\(podman run\\): pinned to ${c.registry.replace(/[.]/g, '\\.')}/other@sha256:[0-9a-f]{64}`));

    // docker with its context pointing at no daemon: the approval says why it is not pinned.
    const n = project('docker', image);
    fs.rmSync(path.join(n.home, '.docker'), { recursive: true });
    fs.mkdirSync(path.join(n.home, '.docker'));
    fs.writeFileSync(path.join(n.home, '.docker', 'config.json'), JSON.stringify({ currentContext: 'nothing' }));
    c.docker(n.home, ['context', 'create', 'nothing', '--docker', `host=unix://${path.join(n.home, 'no.sock')}`]);
    const a = cli(n, ['approve', 'fx', '--yes']);
    assert.equal(a.code, 0, a.stdout + a.stderr);
    assert.match(
      a.stdout,
      /\(docker run\): not pinned: the bytes this downloads can change \(docker could not read or pull .* at approval: .*no\.sock.*; it runs by its tag\)/,
    );
    assert.match(cli(n, ['get', 'fx']).stdout, /not pinned: the bytes this downloads can change .*\(approved so\)/);
    assert.match(cli(n, ['get', 'fx']).stdout, /state\s+approved/);
  });
});
