// A real npm registry on this machine for package tests: verdaccio (a devDependency) on loopback, on a free port,
// with its storage in a temp folder, started and stopped by the test. `publish` runs the real npm CLI against it;
// `publishRaw` PUTs a packument written by hand, as a hostile publisher's client may.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort, ROOT, tempDir } from './helpers';

export interface Registry {
  url: string;
  port: number;
  storage: string;
  /** Publishes the package folder `dir` (its package.json names it) and returns npm's output. */
  publish(dir: string): void;
  stop(): Promise<void>;
  /** Starts it again on the same port and storage. */
  restart(): Promise<void>;
}

async function waitUp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited (${child.exitCode}): ${log()}`);
    try {
      const r = await fetch(`${url}-/ping`);
      if (r.ok) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`verdaccio did not answer at ${url}: ${log()}`);
}

export async function startRegistry(): Promise<Registry> {
  const dir = tempDir('mcp-gate-registry-');
  const storage = path.join(dir, 'storage');
  fs.mkdirSync(storage);
  const config = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    config,
    [
      `storage: ${storage}`,
      'auth:',
      '  htpasswd:',
      `    file: ${path.join(dir, 'htpasswd')}`,
      '    max_users: -1',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $all',
      '    unpublish: $all',
      'log: { type: stdout, format: pretty, level: error }',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const bin = path.join(ROOT, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  let child: ChildProcess;
  let output = '';
  const start = async () => {
    output = '';
    child = spawn(process.execPath, [bin, '--config', config, '--listen', `127.0.0.1:${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: dir },
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await waitUp(url, child, () => output);
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await done;
  };
  await start();
  return {
    url,
    port,
    storage,
    stop,
    restart: start,
    publish(pkg: string) {
      const r = spawnSync(
        'npm',
        ['publish', '--registry', url, `--//127.0.0.1:${port}/:_authToken=test`, '--cache', path.join(dir, 'npm-cache'), '--no-audit'],
        { cwd: pkg, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir }, timeout: 60_000 },
      );
      if (r.status !== 0) throw new Error(`npm publish failed: ${r.stderr}`);
    },
  };
}

/** A copy of the fixture package at `version`; `extra` is code put at the top of its server. */
export function fixturePackage(version: string, extra = ''): string {
  const dir = tempDir('mcp-gate-fixture-pkg-');
  fs.cpSync(path.join(ROOT, 'test', 'fixtures', 'npm-fixture-server'), dir, { recursive: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }, null, 2));
  if (extra) {
    const js = fs.readFileSync(path.join(dir, 'server.js'), 'utf8').split('\n');
    fs.writeFileSync(path.join(dir, 'server.js'), [js[0], extra, ...js.slice(1)].join('\n'));
  }
  return dir;
}

/** The fixture package renamed `name` at `version` (its one bin named like it), `fields` merged into package.json. */
export function namedPackage(name: string, version: string, fields: Record<string, unknown> = {}, extra = ''): string {
  const dir = fixturePackage(version, extra);
  const pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ ...pj, name, bin: { [name]: 'server.js' }, ...fields }, null, 2));
  return dir;
}

/**
 * Publishes the tarball of `dir` with a packument written by hand (what any registry client may PUT): `edit`
 * changes the version's manifest (its name, its bin, its dist) as `npm publish` never would.
 */
export async function publishRaw(reg: Registry, dir: string, edit: (manifest: Record<string, any>) => void): Promise<void> {
  const out = tempDir('mcp-gate-raw-pack-');
  const r = spawnSync('npm', ['pack', '--pack-destination', out, '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: out },
  });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  const file = fs.readdirSync(out).find((f) => f.endsWith('.tgz'))!;
  const tgz = fs.readFileSync(path.join(out, file));
  const pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const manifest: Record<string, any> = {
    ...pj,
    _id: `${pj.name}@${pj.version}`,
    dist: {
      tarball: `${reg.url}${pj.name}/-/${file}`,
      shasum: createHash('sha1').update(tgz).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
    },
  };
  edit(manifest);
  const body = {
    _id: pj.name,
    name: pj.name,
    'dist-tags': { latest: pj.version },
    versions: { [pj.version]: manifest },
    _attachments: { [file]: { content_type: 'application/octet-stream', data: tgz.toString('base64'), length: tgz.length } },
  };
  const res = await fetch(`${reg.url}${encodeURIComponent(pj.name).replace('%40', '@')}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`the raw publish of ${pj.name} failed: ${res.status} ${await res.text()}`);
}
