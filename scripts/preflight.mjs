#!/usr/bin/env node
// The system packages each of the README's two commands needs, found before anything runs: `npm run test:all`
// starts with `preflight.mjs tests`, `npm run demo` with `preflight.mjs demo`, and scripts/vscode-host.sh with
// `preflight.mjs vscode-host`. What is missing is installed with apt-get when this runs as root on Debian/Ubuntu;
// otherwise it prints the one command that installs it and exits 2 within seconds, before any suite or server.
// This file is the one list: .ci/run, the host installer and the demo name no package of their own.
//   node scripts/preflight.mjs <tests|demo|vscode-host>... [--check]   (--check: report only, never install)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * One row per need: what it is for, how to tell it is here, the Debian package that brings it, and whether apt may
 * add the package's recommended packages (podman's runtime helpers come that way; chromium's long recommends list
 * does not need to).
 */
const bin = (name) => () => onPath(name);
const file =
  (...candidates) =>
  () =>
    candidates.some((f) => fs.existsSync(f));
const NEEDS = [
  // plain-Node suites (test/unit): the sandbox, network namespaces, certificates, container image pins
  {
    pkg: 'bubblewrap',
    has: bin('bwrap'),
    why: 'the sandbox every repository server runs in (test/unit/host/sandbox*)',
    for: ['tests', 'servers', 'demo'],
    recommends: true,
  },
  {
    pkg: 'iproute2',
    has: bin('ip'),
    why: 'network namespaces for the remote-server and address-guard tests',
    for: ['tests', 'servers'],
    recommends: true,
  },
  {
    pkg: 'openssl',
    has: bin('openssl'),
    why: 'test certificates for the pinned HTTPS client',
    for: ['tests', 'servers'],
    recommends: true,
  },
  {
    pkg: 'podman',
    has: bin('podman'),
    why: "Podman's Docker API for the container image pins (test/unit/containers.ts)",
    for: ['tests'],
    recommends: true,
  },
  { pkg: 'runc', has: bin('runc'), why: 'the OCI runtime podman runs the fixture image with', for: ['tests'], recommends: true },
  {
    pkg: 'docker-registry',
    has: bin('docker-registry'),
    why: 'a container registry on 127.0.0.1 for the image-pin tests',
    for: ['tests'],
    recommends: true,
  },
  { pkg: 'docker.io', has: bin('docker'), why: 'the docker CLI that `docker run` servers use', for: ['tests'], recommends: true },
  {
    pkg: 'openssh-client',
    has: bin('ssh-keygen'),
    why: 'ssh-keygen signs and verifies team approvals (test/unit/cli/team*)',
    for: ['tests'],
  },
  {
    pkg: 'strace',
    has: bin('strace'),
    why: 'the runtime oracle of the execution closure records every file a server opens (test/unit/trust/plan/oracle*)',
    for: ['tests'],
    recommends: true,
  },
  { pkg: 'gcc', has: bin('gcc'), why: 'builds the static fixture server of the image-pin tests', for: ['tests'], recommends: true },
  {
    pkg: 'libc6-dev',
    has: file('/usr/lib/x86_64-linux-gnu/libc.a', '/usr/lib/aarch64-linux-gnu/libc.a'),
    why: 'static libc for that fixture',
    for: ['tests'],
    recommends: true,
  },
  {
    pkg: 'proxychains4',
    has: file('/usr/bin/proxychains4-daemon'),
    why: "carries a contained server's libc clients (libpq, curl without proxy variables) through its network door (src/host/net/libc-carrier.ts; without it that is simply off)",
    for: ['tests', 'servers', 'demo'],
  },
  {
    pkg: 'nftables',
    has: file('/usr/sbin/nft', '/sbin/nft'),
    why: "the transparent carrier's redirect inside a contained server's network namespace (src/host/net/transparent-carrier.ts: Go and static binaries through the door, as root; without it that is simply off)",
    for: ['tests', 'servers', 'demo'],
  },
  {
    pkg: 'perl',
    has: file('/usr/bin/perl', '/bin/perl'),
    why: "the transparent carrier's forwarder inside the sandbox (src/host/net/transparent-carrier.ts)",
    for: ['tests', 'servers', 'demo'],
  },
  {
    pkg: 'golang-go',
    has: () => onPath('go') || fs.existsSync('/usr/lib/go/bin/go'),
    why: 'builds the CGO_ENABLED=0 Go probe of the transparent-carrier test (test/unit/host/transparent-carrier*)',
    for: ['tests'],
  },
  {
    pkg: 'python3-jinja2',
    has: file('/usr/lib/python3/dist-packages/jinja2/__init__.py'),
    why: 'jinja2, the template engine whose compiles the Python load guard lets through when the template is approved (test/unit/guard/python-guard*)',
    for: ['tests'],
  },
  {
    pkg: 'python3-attr',
    has: file('/usr/lib/python3/dist-packages/attr/__init__.py'),
    why: 'attrs, the class generator whose compiles the Python load guard lets through when its names are identifiers (test/unit/guard/python-guard*)',
    for: ['tests'],
  },
  {
    pkg: 'python3-psycopg2',
    has: file('/usr/lib/python3/dist-packages/psycopg2/__init__.py'),
    why: 'psycopg2 (libpq), the libc client the carrier test and the python-psycopg2 server of test/servers drive (test/unit/host/libc-carrier*)',
    for: ['tests', 'servers'],
  },
  // the VS Code host (code-server from npm, built here) and the browser that drives it
  {
    pkg: 'chromium',
    has: file('/usr/bin/chromium'),
    why: 'the browser for the web workbench (VS Code suites, e2e, demo) and the browser MCP servers (test/servers)',
    for: ['tests', 'demo', 'vscode-host', 'servers'],
  },
  { pkg: 'ripgrep', has: bin('rg'), why: "VS Code's search binary (seeded into code-server 4.112's install)", for: ['vscode-host'] },
  { pkg: 'libkrb5-dev', has: file('/usr/include/gssapi/gssapi.h'), why: "headers for code-server's kerberos addon", for: ['vscode-host'] },
  { pkg: 'python3', has: bin('python3'), why: "node-gyp, for code-server's native addons", for: ['vscode-host'] },
  { pkg: 'make', has: bin('make'), why: "node-gyp; the closure oracle's make-started server", for: ['vscode-host', 'tests'] },
  { pkg: 'g++', has: bin('g++'), why: 'node-gyp', for: ['vscode-host'] },
  { pkg: 'tar', has: bin('tar'), why: 'unpacks the Node builds the VS Code host runs on', for: ['vscode-host'] },
  { pkg: 'git', has: bin('git'), why: '`npm run test:all` checks the working tree stays clean', for: ['tests'] },
  // the servers people use, contained (npm run test:servers)
  {
    pkg: 'postgresql',
    has: () => {
      try {
        return fs.readdirSync('/usr/lib/postgresql').some((v) => fs.existsSync(`/usr/lib/postgresql/${v}/bin/postgres`));
      } catch {
        return false;
      }
    },
    why: 'a real PostgreSQL the postgres MCP server reaches by raw TCP in a network namespace (test/servers)',
    for: ['servers'],
  },
];
/** What a command needs, including what it runs: the test command and the demo both install the VS Code host. */
const INCLUDES = { tests: ['vscode-host', 'servers'], demo: ['vscode-host'], 'vscode-host': [], servers: [] };

function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {}
  }
  // root's sbin folders are not on every PATH (`ip` lives in /usr/sbin)
  return ['/usr/sbin', '/sbin'].some((d) => {
    try {
      fs.accessSync(path.join(d, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The rows `commands` need, in table order, each once. */
export function needsFor(commands) {
  const want = new Set();
  const add = (c) => {
    if (!want.has(c)) {
      want.add(c);
      for (const i of INCLUDES[c] ?? []) add(i);
    }
  };
  commands.forEach(add);
  return NEEDS.filter((n) => n.for.some((c) => want.has(c)));
}

/** The shell command that installs `missing` (Debian package rows). */
export function installCommand(missing, { root }) {
  const sudo = root ? '' : 'sudo ';
  const plain = missing.filter((n) => n.recommends).map((n) => n.pkg);
  const lean = missing.filter((n) => !n.recommends).map((n) => n.pkg);
  const parts = [`${sudo}apt-get update`];
  if (plain.length) parts.push(`${sudo}apt-get install -y ${plain.join(' ')}`);
  if (lean.length) parts.push(`${sudo}apt-get install -y --no-install-recommends ${lean.join(' ')}`);
  return parts.join(' && ');
}

function main(argv) {
  const commands = argv.filter((a) => !a.startsWith('--'));
  const checkOnly = argv.includes('--check');
  const unknown = commands.filter((c) => !(c in INCLUDES));
  if (!commands.length || unknown.length) {
    console.error(
      `usage: node scripts/preflight.mjs <${Object.keys(INCLUDES).join('|')}>... [--check]${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`,
    );
    return 64;
  }
  const say = (m) => console.log(`[preflight] ${m}`);
  const missing = needsFor(commands).filter((n) => !n.has());
  if (!missing.length) {
    say(`${commands.join(', ')}: every system package is here`);
    return 0;
  }
  for (const n of missing) say(`missing ${n.pkg}: ${n.why}`);
  const root = process.getuid?.() === 0;
  const apt = process.platform === 'linux' && onPath('apt-get');
  const cmd = installCommand(missing, { root });
  if (!apt) {
    say(`this machine has no apt-get (${process.platform}): install the programs above with its own package manager.`);
    if (process.platform !== 'linux')
      say("MCP Gate's sandbox (bubblewrap) and these suites need Linux; on this platform repository servers cannot start.");
    return 2;
  }
  if (checkOnly || !root) {
    say(`run this, then the same command again:\n  ${cmd}`);
    return 2;
  }
  say(`installing as root: ${cmd}`);
  const t0 = Date.now();
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const step of cmd.split(' && ')) {
    const [exe, ...args] = step.split(' ');
    const r = spawnSync(exe, [...args.slice(0, 1), '-q', ...args.slice(1)], { stdio: ['ignore', 'pipe', 'pipe'], env, encoding: 'utf8' });
    if (r.status !== 0) {
      say(`FAILED: ${step} (exit ${r.status ?? r.signal}); its last lines:`);
      console.error(`${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n').slice(-30).join('\n'));
      return 1;
    }
  }
  const still = missing.filter((n) => !n.has());
  if (still.length) {
    say(`still missing after the install: ${still.map((n) => n.pkg).join(', ')}`);
    return 1;
  }
  say(`installed ${missing.map((n) => n.pkg).join(' ')} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  process.exitCode = main(process.argv.slice(2));
}
