// The servers people use, contained, through the CLI (issue 44, item 8): each MCP server of the corpus is declared
// in a repository's `.mcp.json` the way its README says (`npx -y <package> …`), approved with `mcp-gate approve`,
// listed with `mcp-gate tools` and called with `mcp-gate call` — in bubblewrap, with a fresh HOME — in a plain
// repository and in one with a real `node_modules` (next, react, webpack, eslint, typescript from the registry: 165
// packages, 400 MB, a native binary over 64 MiB). Network servers reach a test host in a network namespace this
// suite creates: a real PostgreSQL from Debian by raw TCP, and HTTPS hosts (api.github.com, context7.com,
// circleci.test) named through a private /etc/hosts in a mount namespace of the CLI's own, with certificates of a
// test CA the servers are told to trust. Nothing else of this machine is reachable to them.
//
// Timings (approve, tools, call) go to out/servers-results.json; MCP_GATE_SERVERS_RESULTS=1 also writes them to
// bench/RESULTS.md (the section between `<!-- servers:start -->` and `<!-- servers:end -->`).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, CLI, ROOT, tempDir, world, type World } from '../unit/helpers';
import { pythonServer } from '../unit/mini-server';
import { HTTPS_NAMES, POSTGRES_NAME, startPeers, type Peers } from './peers';

export interface Entry {
  /** The server's name in `.mcp.json`. */
  name: string;
  /** An npm package, run as its README says (`npx -y <pkg> …`); or `command` with its `files` in the repository. */
  pkg?: string;
  command?: string;
  files?: Record<string, string>;
  args?: (p: Peers) => string[];
  env?: (p: Peers) => Record<string, string>;
  /** Network rules it needs (hosts or [addresses]); none: it runs with no network. */
  network?: (p: Peers) => string[];
  /** A call that needs no account, and what its answer must show; `then`, a second call in a second start. */
  call: { tool: string; args: (p: Peers) => Record<string, unknown>; expect: RegExp };
  then?: { tool: string; args: Record<string, unknown>; expect: RegExp };
}

const data = (html: string) => `data:text/html,${html}`;

export const CORPUS: Entry[] = [
  {
    name: 'filesystem',
    pkg: '@modelcontextprotocol/server-filesystem',
    args: () => ['.'],
    call: { tool: 'write_file', args: () => ({ path: 'from-server.txt', content: 'written contained\n' }), expect: /Successfully wrote/ },
    then: { tool: 'list_directory', args: { path: '.' }, expect: /\[FILE\] from-server\.txt/ },
  },
  {
    name: 'memory',
    pkg: '@modelcontextprotocol/server-memory',
    call: {
      tool: 'create_entities',
      args: () => ({ entities: [{ name: 'gate', entityType: 'tool', observations: ['kept between starts'] }] }),
      expect: /"gate"/,
    },
    then: { tool: 'read_graph', args: {}, expect: /kept between starts/ },
  },
  {
    name: 'everything',
    pkg: '@modelcontextprotocol/server-everything',
    args: () => ['stdio'],
    call: { tool: 'echo', args: () => ({ message: 'hello contained' }), expect: /hello contained/ },
  },
  {
    name: 'sequential-thinking',
    pkg: '@modelcontextprotocol/server-sequential-thinking',
    call: {
      tool: 'sequentialthinking',
      args: () => ({ thought: 'one step', thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false }),
      expect: /"thoughtHistoryLength": 1/,
    },
  },
  {
    name: 'playwright',
    pkg: '@playwright/mcp',
    args: () => ['--headless', '--executable-path', '/usr/bin/chromium', '--no-sandbox', '--isolated'],
    call: { tool: 'browser_navigate', args: () => ({ url: data('<h1>hello playwright</h1>') }), expect: /Page URL: data:text\/html/ },
  },
  {
    name: 'chrome-devtools',
    pkg: 'chrome-devtools-mcp',
    args: () => ['--headless', '--isolated', '--executablePath', '/usr/bin/chromium', '--chromeArg=--no-sandbox'],
    call: {
      tool: 'new_page',
      args: () => ({ url: data('<h1>hello devtools</h1>') }),
      expect: /data:text\/html,<h1>hello devtools<\/h1> \[selected\]/,
    },
  },
  {
    name: 'postgres',
    pkg: '@modelcontextprotocol/server-postgres',
    args: (p) => [`postgresql://mcp@${p.address}:${p.postgresPort}/corpus`],
    network: (p) => [`[${p.address}]`],
    call: {
      tool: 'query',
      args: () => ({ sql: 'select name, stars from repos order by stars desc limit 1' }),
      expect: /"name": "mcp-gate"/,
    },
  },
  {
    name: 'github',
    pkg: '@modelcontextprotocol/server-github',
    env: () => ({ GITHUB_PERSONAL_ACCESS_TOKEN: 'test-token' }),
    network: () => ['api.github.com'],
    call: { tool: 'search_repositories', args: () => ({ query: 'gate' }), expect: /"full_name": "corpus\/mcp-gate"/ },
  },
  {
    name: 'context7',
    pkg: '@upstash/context7-mcp',
    network: () => ['context7.com'],
    call: {
      tool: 'resolve-library-id',
      args: () => ({ libraryName: 'gate', query: 'how to approve a server' }),
      expect: /\/corpus\/mcp-gate/,
    },
  },
  // Python's own HTTPS client (urllib: the proxy from the environment, OpenSSL's trust from SSL_CERT_FILE).
  {
    name: 'python-urllib',
    command: '/usr/bin/python3',
    args: () => ['${workspaceFolder}/tools/fetch_server.py'],
    files: {
      'tools/fetch_server.py': pythonServer(
        "import urllib.request\nreturn urllib.request.urlopen('https://api.github.com/search/repositories?q=gate', timeout=20).read().decode()",
      ),
    },
    network: () => ['api.github.com'],
    call: { tool: 'hello', args: () => ({}), expect: /"full_name":"corpus\/mcp-gate"/ },
  },
  // Python without the proxy: http.client by name, asyncio streams by name, a raw socket to PostgreSQL by address
  // (MCP Gate's Python network shim, in the load guard of every contained Python process).
  {
    name: 'python-socket',
    command: '/usr/bin/python3',
    args: (p) => ['${workspaceFolder}/tools/socket_server.py', p.address, String(p.postgresPort)],
    files: {
      'tools/socket_server.py': pythonServer(
        [
          'import http.client, asyncio, socket, ssl, struct',
          "c = http.client.HTTPSConnection('api.github.com', 443, timeout=20)",
          "c.request('GET', '/search/repositories?q=gate')",
          'one = c.getresponse().read().decode()',
          'async def streams():',
          "    r, w = await asyncio.open_connection('context7.com', 443, ssl=ssl.create_default_context())",
          "    w.write(b'GET /api/v2/libs/search?query=q&libraryName=gate HTTP/1.1\\r\\nHost: context7.com\\r\\nConnection: close\\r\\n\\r\\n')",
          '    body = await r.read()',
          '    w.close()',
          '    return body.decode()',
          'two = asyncio.run(streams())',
          's = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)',
          "s.sendall(struct.pack('!ii', 8, 80877103))",
          'three = s.recv(1).decode()',
          's.close()',
          "return ' '.join(['github' if 'corpus/mcp-gate' in one else 'no-github', 'context7' if '/corpus/mcp-gate' in two else 'no-context7', 'postgres-' + three])",
        ].join('\n'),
        'import sys',
      ),
    },
    network: (p) => ['api.github.com', 'context7.com', `[${p.address}]`],
    call: { tool: 'hello', args: () => ({}), expect: /^github context7 postgres-N$/m },
  },
  // A C client that opens its own sockets and resolves the name itself: psycopg2 (libpq) from Debian, by name,
  // through the libc carrier (proxychains4 preloaded, src/host/net/libc-carrier.ts).
  {
    name: 'python-psycopg2',
    command: '/usr/bin/python3',
    args: () => ['${workspaceFolder}/tools/pg_server.py'],
    files: {
      'tools/pg_server.py': pythonServer(
        [
          `c = psycopg2.connect(host='${POSTGRES_NAME}', port=5432, user='mcp', dbname='corpus', connect_timeout=20)`,
          'cur = c.cursor()',
          "cur.execute('select count(*) from repos')",
          "return 'psycopg2 repos=%d' % cur.fetchone()[0]",
        ].join('\n'),
        'import psycopg2',
      ),
    },
    network: () => [POSTGRES_NAME],
    call: { tool: 'hello', args: () => ({}), expect: /^psycopg2 repos=[1-9]\d*$/m },
  },
  {
    name: 'circleci',
    pkg: '@circleci/mcp-server-circleci',
    env: () => ({ CIRCLECI_TOKEN: 'test-token', CIRCLECI_BASE_URL: 'https://circleci.test' }),
    network: () => ['circleci.test'],
    call: { tool: 'list_followed_projects', args: () => ({}), expect: /corpus\/mcp-gate/ },
  },
];

interface Timing {
  server: string;
  repo: string;
  approve: number;
  tools: number;
  call: number;
  then?: number;
  tools_listed: number;
}

const REAL_DEPENDENCIES = ['next@15', 'react@19', 'react-dom@19', 'webpack@5', 'eslint@9', 'typescript@5'];

/** The CLI, in a mount namespace of its own whose /etc/hosts names the test hosts (the door resolves there). */
function cli(w: World, p: Peers, args: string[], timeout = 180_000): { code: number; stdout: string; stderr: string; ms: number } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
  for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
  const t0 = process.hrtime.bigint();
  const r = spawnSync(
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      'mount --bind "$0" /etc/hosts && exec "$@"',
      p.hostsFile,
      process.execPath,
      CLI,
      ...args,
      '--project',
      w.project,
    ],
    { env, encoding: 'utf8', timeout, input: '' },
  );
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

function repository(kind: 'plain' | 'node_modules', p: Peers): World {
  const mcpServers = Object.fromEntries(
    CORPUS.map((e) => [
      e.name,
      {
        command: e.command ?? 'npx',
        args: [...(e.pkg ? ['-y', e.pkg] : []), ...(e.args?.(p) ?? [])],
        ...(e.env ? { env: e.env(p) } : {}),
      },
    ]),
  );
  const files = Object.assign({}, ...CORPUS.map((e) => e.files ?? {})) as Record<string, string>;
  // The registry as this machine reaches it (its proxy's CA included), and the test CA: the person's own trust,
  // which servers they start share (NODE_EXTRA_CA_CERTS in their environment, src/trust/plan/launch-plan.ts TRUST_ENV).
  const reach = Object.fromEntries(['npm_config_registry'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!]));
  const w = world(
    { '.mcp.json': JSON.stringify({ mcpServers }, null, 2), 'README.md': '# a repository\n', ...files },
    {},
    { PATH: process.env.PATH!, ...reach, NODE_EXTRA_CA_CERTS: p.trustFile, SSL_CERT_FILE: p.opensslTrustFile },
  );
  fs.mkdirSync(path.join(w.home, '.npm'));
  if (kind === 'node_modules') {
    fs.writeFileSync(path.join(w.project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...REAL_DEPENDENCIES], {
      cwd: w.project,
      stdio: 'ignore',
      env: { ...process.env, npm_config_cache: path.join(process.env.HOME ?? '/root', '.npm') },
    });
  }
  const rules = CORPUS.flatMap((e) => [
    { action: `mcp.${e.name}.tool.*`, decision: 'allow', project: w.project },
    // a host as rules name it: its labels reversed (mcp.github.network.com.github.api); an address in brackets
    ...(e.network?.(p) ?? []).map((host) => ({
      action: `mcp.${e.name}.network.${host.startsWith('[') ? host : host.split('.').reverse().join('.')}`,
      decision: 'allow',
      project: w.project,
    })),
  ]);
  fs.mkdirSync(path.join(w.home, '.config', 'mcp-gate'), { recursive: true });
  fs.writeFileSync(path.join(w.home, '.config', 'mcp-gate', 'config.json'), JSON.stringify({ rules }));
  return w;
}

describe('the servers people use, contained (npm run test:servers)', function () {
  this.timeout(1_800_000);
  let peers: Peers;
  const timings: Timing[] = [];
  before(async () => {
    peers = await startPeers(tempDir('mcp-gate-servers-peers-'));
  });
  after(async () => {
    await peers?.stop();
    cleanupTemp();
    writeResults(timings);
  });

  for (const kind of ['plain', 'node_modules'] as const) {
    describe(`in a ${kind === 'plain' ? 'plain repository' : 'repository with a real node_modules'}`, () => {
      let w: World;
      before(() => {
        w = repository(kind, peers);
      });
      for (const e of CORPUS) {
        it(`${e.name} (${e.pkg ?? e.command}) starts, lists and answers${e.network ? ' through the network door' : ''}${e.then ? ', and again in a second start' : ''}`, () => {
          const a = cli(w, peers, ['approve', e.name, '--yes']);
          assert.equal(a.code, 0, `approve ${e.name}: ${a.stdout}${a.stderr}`);
          const t = cli(w, peers, ['tools', e.name]);
          assert.match(t.stdout, new RegExp(`\\b${e.call.tool}\\s+\\[allow\\]`), `tools ${e.name}: ${t.stdout}${t.stderr}`);
          const c = cli(w, peers, ['call', e.name, e.call.tool, '--args', JSON.stringify(e.call.args(peers))]);
          assert.match(c.stdout, e.call.expect, `call ${e.name} ${e.call.tool}: exit ${c.code}\n${c.stdout}${c.stderr}`);
          // A network server reached the test host (through the door: the sandbox has no other way out); what it read
          // from PostgreSQL (by address or by its name) is in its answer.
          for (const host of (e.network?.(peers) ?? []).filter((h) => HTTPS_NAMES.includes(h))) {
            assert.ok(
              peers.served().some((l) => l.startsWith(`served ${host} `)),
              `${e.name}: the test host served nothing for ${host}: ${peers.served().join('\n')}`,
            );
          }
          let then: number | undefined;
          if (e.then) {
            const s = cli(w, peers, ['call', e.name, e.then.tool, '--args', JSON.stringify(e.then.args)]);
            assert.match(s.stdout, e.then.expect, `second start, ${e.name} ${e.then.tool}: ${s.stdout}${s.stderr}`);
            then = s.ms;
          }
          // It stays approved: nothing it wrote (its data, its browser profile) re-gates it.
          assert.match(cli(w, peers, ['list']).stdout, new RegExp(`^approved\\s+repository\\s+\\.mcp\\.json\\s+${e.name}\\s`, 'm'));
          const listed = (t.stdout.match(/\[(allow|deny|ask)\]/g) ?? []).length;
          timings.push({ server: e.name, repo: kind, approve: a.ms, tools: t.ms, call: c.ms, then, tools_listed: listed });
        });
      }
      it('an edit anywhere in the repository leaves every server approved', () => {
        fs.appendFileSync(path.join(w.project, 'README.md'), 'edited\n');
        fs.writeFileSync(path.join(w.project, 'notes.md'), 'new file\n');
        const list = cli(w, peers, ['list']).stdout;
        for (const e of CORPUS) assert.match(list, new RegExp(`^approved\\s+repository\\s+\\.mcp\\.json\\s+${e.name}\\s`, 'm'), list);
      });
    });
  }
});

function writeResults(timings: Timing[]): void {
  if (!timings.length) return;
  const ms = (x: number | undefined) => (x === undefined ? '—' : `${(x / 1000).toFixed(2)} s`);
  const lines = [
    `## The servers people use, contained (\`npm run test:servers\`, ${new Date().toISOString().slice(0, 10)})`,
    '',
    'Each through the CLI, one process per command (approve resolves and installs the package; tools and call each start the server contained: bubblewrap, the load guard, the network door), in a plain repository and in one with a real node_modules (next, react, webpack, eslint, typescript: 165 packages, 400 MB, a native binary over 64 MiB).',
    '',
    '| server | repository | approve | tools (start + list) | tools listed | call (start + call) | second start + call |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...timings.map(
      (t) => `| ${t.server} | ${t.repo} | ${ms(t.approve)} | ${ms(t.tools)} | ${t.tools_listed} | ${ms(t.call)} | ${ms(t.then)} |`,
    ),
  ];
  fs.mkdirSync(path.join(ROOT, 'out'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'out', 'servers-results.json'), JSON.stringify(timings, null, 2));
  if (process.env.MCP_GATE_SERVERS_RESULTS !== '1') return;
  const file = path.join(ROOT, 'bench', 'RESULTS.md');
  const text = fs.readFileSync(file, 'utf8');
  const block = `<!-- servers:start -->\n${lines.join('\n')}\n<!-- servers:end -->`;
  const re = /<!-- servers:start -->[\s\S]*?<!-- servers:end -->/;
  fs.writeFileSync(file, re.test(text) ? text.replace(re, block) : `${text.trimEnd()}\n\n${block}\n`);
}
