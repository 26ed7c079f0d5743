// The network peers of `npm run test:servers`, in a network namespace of their own (test/fixtures/host/netns.ts,
// an address in 198.18.0.0/15): an HTTPS host answering as api.github.com, context7.com and circleci.test
// (test/servers/https-peer.js, a certificate of a test CA made here with openssl), and a real PostgreSQL from Debian
// (initdb, a database `corpus` with a table `repos`). The hosts file names the HTTPS host; the suite binds it over
// /etc/hosts in a mount namespace of the CLI's own, so the door resolves those names to the namespace.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createNetns, type Netns } from '../fixtures/host/netns';
import { ROOT } from '../unit/helpers';

export interface Peers {
  /** The namespace's address (both peers listen there). */
  address: string;
  postgresPort: number;
  /** The test CA's certificate (PEM). */
  caPem: string;
  /** The CAs the person trusts: this machine's NODE_EXTRA_CA_CERTS (if any) and the test CA, one file. */
  trustFile: string;
  /** The same for OpenSSL's SSL_CERT_FILE, which replaces the system's bundle: the system's CAs and the test CA. */
  opensslTrustFile: string;
  /** /etc/hosts for the CLI: the HTTPS host's names → address. */
  hostsFile: string;
  /** Lines `served <host> <method> <url> <status>` the HTTPS host printed so far. */
  served(): string[];
  stop(): Promise<void>;
}

export const HTTPS_NAMES = ['api.github.com', 'context7.com', 'circleci.test'];
/** PostgreSQL's name in the hosts file (a client that resolves it itself: libpq through the libc carrier). */
export const POSTGRES_NAME = 'db.corpus.test';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The newest PostgreSQL server Debian installed (/usr/lib/postgresql/<n>/bin). */
function postgresBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = fs.existsSync(base)
    ? fs
        .readdirSync(base)
        .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'postgres')))
        .sort((a, b) => Number(a) - Number(b))
    : [];
  if (!versions.length)
    throw new Error("test prerequisite missing: PostgreSQL (Debian's postgresql package: node scripts/preflight.mjs tests installs it)");
  return path.join(base, versions.at(-1)!, 'bin');
}

function asPostgres(netns: Netns | null, argv: string[]): string[] {
  return [...(netns ? ['ip', 'netns', 'exec', netns.name] : []), 'runuser', '-u', 'postgres', '--', ...argv];
}

async function startPostgres(dir: string, netns: Netns, port: number): Promise<ChildProcess> {
  const bin = postgresBin();
  const data = path.join(dir, 'pgdata');
  const sock = path.join(dir, 'pgsock');
  fs.mkdirSync(sock, { recursive: true });
  execFileSync('chown', ['postgres:postgres', sock]);
  fs.mkdirSync(data, { mode: 0o700 });
  execFileSync('chown', ['postgres:postgres', data]);
  const [cmd, ...rest] = asPostgres(null, [path.join(bin, 'initdb'), '-D', data, '-U', 'mcp', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  execFileSync(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  // The servers reach it from the namespace's other end (the door on this machine's side of the pair).
  fs.appendFileSync(path.join(data, 'pg_hba.conf'), `host all mcp ${netns.hostAddress}/32 trust\n`);
  const argv = asPostgres(netns, [
    path.join(bin, 'postgres'),
    '-D',
    data,
    '-k',
    sock,
    '-p',
    String(port),
    '-c',
    `listen_addresses=${netns.peerAddress}`,
    '-c',
    'fsync=off',
  ]);
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`PostgreSQL did not start within 30 s:\n${err}`)), 30_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/ready to accept connections/.test(err)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`PostgreSQL exited (code ${code}):\n${err}`));
    });
  });
  const psql = (db: string, sql: string) => {
    const [c, ...r] = asPostgres(null, [
      path.join(bin, 'psql'),
      '-h',
      sock,
      '-p',
      String(port),
      '-U',
      'mcp',
      '-d',
      db,
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      sql,
    ]);
    execFileSync(c, r, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  psql('postgres', 'create database corpus');
  psql('corpus', "create table repos (name text, stars int); insert into repos values ('mcp-gate', 42), ('other', 7)");
  return child;
}

export async function startPeers(dir: string): Promise<Peers> {
  fs.chmodSync(dir, 0o755); // PostgreSQL runs as its own user under it
  const netns = createNetns();
  const children: ChildProcess[] = [];
  try {
    // A test CA, and the HTTPS host's certificate for its names, signed by it.
    const certs = path.join(dir, 'certs');
    fs.mkdirSync(certs, { mode: 0o700 });
    openssl(
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '2',
        '-subj',
        '/CN=MCP Gate test:servers CA',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      certs,
    );
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'peer.key', '-out', 'peer.csr', '-subj', `/CN=${HTTPS_NAMES[0]}`], certs);
    fs.writeFileSync(
      path.join(certs, 'ext.cnf'),
      `subjectAltName=${HTTPS_NAMES.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        'peer.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        'peer.pem',
        '-days',
        '2',
        '-extfile',
        'ext.cnf',
      ],
      certs,
    );
    const servedLog = path.join(dir, 'served.log');
    fs.writeFileSync(servedLog, '');
    await netns.startNode(path.join(ROOT, 'test', 'servers', 'https-peer.js'), {
      PEER_HOST: netns.peerAddress,
      PEER_PORT: '443',
      PEER_KEY: path.join(certs, 'peer.key'),
      PEER_CERT: path.join(certs, 'peer.pem'),
      PEER_LOG: servedLog,
    });
    const postgresPort = 5432;
    children.push(await startPostgres(dir, netns, postgresPort));
    const trustFile = path.join(dir, 'trust.pem');
    const machine =
      process.env.NODE_EXTRA_CA_CERTS && fs.existsSync(process.env.NODE_EXTRA_CA_CERTS)
        ? fs.readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8')
        : '';
    fs.writeFileSync(trustFile, `${machine.trimEnd()}\n${fs.readFileSync(path.join(certs, 'ca.pem'), 'utf8')}`);
    fs.chmodSync(trustFile, 0o644);
    const opensslTrustFile = path.join(dir, 'openssl-trust.pem');
    const system = ['/etc/ssl/certs/ca-certificates.crt'].find((f) => fs.existsSync(f));
    fs.writeFileSync(opensslTrustFile, `${system ? fs.readFileSync(system, 'utf8').trimEnd() : ''}\n${fs.readFileSync(trustFile, 'utf8')}`);
    fs.chmodSync(opensslTrustFile, 0o644);
    const hostsFile = path.join(dir, 'hosts');
    fs.writeFileSync(hostsFile, `127.0.0.1 localhost\n::1 localhost\n${netns.peerAddress} ${HTTPS_NAMES.join(' ')} ${POSTGRES_NAME}\n`);
    fs.chmodSync(hostsFile, 0o644);
    return {
      address: netns.peerAddress,
      postgresPort,
      caPem: fs.readFileSync(path.join(certs, 'ca.pem'), 'utf8'),
      trustFile,
      opensslTrustFile,
      hostsFile,
      served: () =>
        fs
          .readFileSync(servedLog, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('served ')),
      async stop() {
        for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGINT');
        await new Promise((r) => setTimeout(r, 300));
        for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
        await netns.destroy();
      },
    };
  } catch (e) {
    for (const c of children) c.kill('SIGKILL');
    await netns.destroy();
    throw e;
  }
}
