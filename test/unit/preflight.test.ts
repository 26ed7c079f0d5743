// scripts/preflight.mjs, the first step of the README's two commands: on a machine without a system package a suite
// needs it names each missing package with what it is for and stops within seconds with the one command that
// installs them (here with --check, which never installs; as root without it, that command runs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir } from './helpers';

const PREFLIGHT = path.join(ROOT, 'scripts', 'preflight.mjs');

/** A PATH with every program of the real one but those named: a machine without those packages. */
function pathWithout(...missing: string[]): string {
  const bin = tempDir('mcp-gate-path-');
  for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean)) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) {
      if (missing.includes(n) || fs.existsSync(path.join(bin, n))) continue;
      try {
        fs.symlinkSync(path.join(dir, n), path.join(bin, n));
      } catch {
        /* a name twice */
      }
    }
  }
  return bin;
}

describe("preflight (the README commands' system packages)", () => {
  after(cleanupTemp);

  it('without bubblewrap and podman: names them and what needs them, prints the one install command, exits 2 fast', () => {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [PREFLIGHT, 'tests', '--check'], {
      env: { PATH: pathWithout('bwrap', 'podman') },
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.ok(Date.now() - t0 < 10_000, 'within seconds');
    assert.match(r.stdout, /missing bubblewrap: the sandbox every repository server runs in/);
    assert.match(r.stdout, /missing podman: /);
    assert.match(
      r.stdout,
      /run this, then the same command again:\n {2}(sudo )?apt-get update && (sudo )?apt-get install -y bubblewrap podman(\n|$| &&)/,
    );
    assert.doesNotMatch(r.stdout, /missing (openssl|iproute2|git)/, 'only what is missing');
  });

  it('with everything present says so and exits 0; an unknown command is a usage error', () => {
    const ok = spawnSync(process.execPath, [PREFLIGHT, 'tests', '--check'], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /every system package is here/);
    const bad = spawnSync(process.execPath, [PREFLIGHT, 'deploy'], { encoding: 'utf8' });
    assert.equal(bad.status, 64);
    assert.match(bad.stderr, /usage: .*unknown: deploy/);
  });
});
