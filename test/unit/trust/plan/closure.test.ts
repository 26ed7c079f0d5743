// The execution closure, attacked class by class: for each way a repository could change the code that runs
// under an existing approval, a fixture repository is approved, started through the built CLI, then changed the
// way the attack changes it. The state must leave `approved` and the changed code must not run (it would write
// a marker file). Also: loader variables refused, unpinnable spellings blocked, the check-then-spawn race.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { approveOffline } from '../../locks';
import { evaluateGate, GateCache } from '../../../../src/trust/gate';
import { type GateInput } from '../../../../src/trust/report';
import { loaderVariable } from '../../../../src/trust/plan/loader-variables';
import { MAX_CLOSURE_FILES, MAX_WALK_ENTRIES } from '../../../../src/trust/plan/closure-files';
import { Session } from '../../../../src/host/session';
import { EventLog } from '../../../../src/host/log/log';
import { loadUserPolicy } from '../../../../src/policy/user-policy';
import { Masker } from '../../../../src/policy/mask';
import { cleanupTemp, cli, installTsx, tempDir, TSX_BIN, world, writeFiles, type World } from '../../helpers';
import { inProcess } from '../../../../src/trust/packages/npm-resolve';
import { serverText } from '../../../../src/report/render';
import { miniServer } from '../../mini-server';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);
const state = (input: GateInput, name = 's') => evaluateGate(input).servers.find((x) => x.name === name)!;

/** A dependency-free stdio MCP server with one tool, `hello`. `prelude` runs first (the attack's payload goes there). */
const serverJs = (prelude = '') => miniServer(prelude);

const markerCode = (marker: string) => `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');`;

interface Attack {
  name: string;
  files: (w: World) => Record<string, string>;
  def: (w: World) => Record<string, unknown>;
  /** Changes what runs; returns nothing. The changed code writes `marker` when it runs. */
  attack: (w: World, marker: string) => void;
}

const lib = (extra = '') => `${extra}\nmodule.exports = 1;\n`;

const ATTACKS: Attack[] = [
  {
    name: 'a module the approved file requires (./lib.js)',
    files: () => ({ 'tools/server.js': `require('./lib');\n${serverJs()}`, 'tools/lib.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/lib.js': lib(markerCode(m)) }),
  },
  {
    name: 'a module outside the entry folder, reached by a literal ../ import',
    files: () => ({ 'tools/server.js': `require('../shared/util.js');\n${serverJs()}`, 'shared/util.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'shared/util.js': lib(markerCode(m)) }),
  },
  {
    name: 'an ES module import',
    files: () => ({
      'tools/server.mjs': `import './dep.mjs';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${serverJs()}`,
      'tools/dep.mjs': 'export {};\n',
    }),
    def: () => ({ command: 'node', args: ['tools/server.mjs'] }),
    attack: (w, m) =>
      writeFiles(w.project, { 'tools/dep.mjs': `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(m)}, 'ran');\n` }),
  },
  {
    name: 'module resolution: node tools/server (Node adds .js)',
    files: () => ({ 'tools/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['tools/server'] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'module resolution: a new extensionless file shadows tools/server.js',
    files: () => ({ 'tools/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['tools/server'] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/server': serverJs(markerCode(m)) }),
  },
  {
    name: 'module resolution: a directory with package.json main',
    files: () => ({ 'srvdir/package.json': JSON.stringify({ main: 'main.js' }), 'srvdir/main.js': serverJs() }),
    def: () => ({ command: 'node', args: ['srvdir'] }),
    attack: (w, m) => writeFiles(w.project, { 'srvdir/main.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'module resolution: a directory whose package.json main is changed to another file',
    files: () => ({
      'srvdir/package.json': JSON.stringify({ main: 'main.js' }),
      'srvdir/main.js': serverJs(),
      'srvdir/other.js': serverJs(''),
    }),
    def: () => ({ command: 'node', args: ['srvdir'] }),
    attack: (w, m) =>
      writeFiles(w.project, { 'srvdir/other.js': serverJs(markerCode(m)), 'srvdir/package.json': JSON.stringify({ main: 'other.js' }) }),
  },
  {
    name: 'python3 -m pkg (pkg/__main__.py)',
    files: () => ({
      'pkg/__init__.py': '',
      'pkg/__main__.py':
        'import sys, json\nfor line in sys.stdin:\n    m = json.loads(line)\n    if "id" not in m: continue\n    if m["method"] == "initialize": r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}\n    elif m["method"] == "tools/list": r = {"tools": [{"name": "hello", "description": "hi", "inputSchema": {"type": "object"}}]}\n    else: r = {}\n    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)\n',
    }),
    // The system's python (a pyenv shim lives under HOME, which the sandbox hides: it would need a read path).
    def: () => ({ command: '/usr/bin/python3', args: ['-m', 'pkg'] }),
    attack: (w, m) => {
      const p = path.join(w.project, 'pkg/__main__.py');
      fs.writeFileSync(p, `open(${JSON.stringify(m)}, "w").write("ran")\n` + fs.readFileSync(p, 'utf8'));
    },
  },
  {
    name: 'npm run start: the script text in package.json',
    files: () => ({
      'package.json': JSON.stringify({ name: 'x', scripts: { start: 'node server.js' } }),
      'server.js': serverJs(),
      'evil.js': serverJs(''),
    }),
    def: () => ({ command: 'npm', args: ['--silent', 'run', 'start'] }),
    attack: (w, m) =>
      writeFiles(w.project, {
        'evil.js': serverJs(markerCode(m)),
        'package.json': JSON.stringify({ name: 'x', scripts: { start: 'node evil.js' } }),
      }),
  },
  {
    name: 'npm run start: what the script runs',
    files: () => ({ 'package.json': JSON.stringify({ name: 'x', scripts: { start: 'node server.js' } }), 'server.js': serverJs() }),
    def: () => ({ command: 'npm', args: ['--silent', 'run', 'start'] }),
    attack: (w, m) => writeFiles(w.project, { 'server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'inline code: node -e "require(\'./x\')"',
    files: () => ({ 'x.js': serverJs() }),
    def: () => ({ command: 'node', args: ['-e', "require('./x')"] }),
    attack: (w, m) => writeFiles(w.project, { 'x.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'inline code: sh -c "exec node tools/server.js"',
    files: () => ({ 'tools/server.js': serverJs() }),
    def: () => ({ command: 'sh', args: ['-c', 'exec node tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'inline code: bash -lc',
    files: () => ({ 'tools/server.js': serverJs() }),
    def: () => ({ command: 'bash', args: ['-lc', 'exec node tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'a workspace script ./run.sh and what it runs',
    files: () => ({ 'run.sh': '#!/bin/sh\nexec node "$(dirname "$0")/srv/main.js"\n', 'srv/main.js': serverJs() }),
    def: () => ({ command: './run.sh' }),
    attack: (w, m) => writeFiles(w.project, { 'srv/main.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'a /proc/self/cwd spelling of the server file',
    files: () => ({ 'tools/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['/proc/self/cwd/tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'a spelling longer than 4096 characters (././././…)',
    files: () => ({ 'tools/server.js': serverJs() }),
    def: (w) => ({ command: 'node', args: [`${w.project}/${'./'.repeat(2100)}tools/server.js`] }),
    attack: (w, m) => writeFiles(w.project, { 'tools/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: '--import file://${workspaceFolder}/tools/pre.mjs',
    files: () => ({ 'tools/pre.mjs': 'export {};\n', 'main/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['--import', 'file://${workspaceFolder}/tools/pre.mjs', 'main/server.js'] }),
    attack: (w, m) =>
      writeFiles(w.project, { 'tools/pre.mjs': `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(m)}, 'ran');\n` }),
  },
  {
    name: 'node -r ./pre.js',
    files: () => ({ 'pre/pre.js': lib(), 'srv/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['-r', './pre/pre.js', 'srv/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'pre/pre.js': lib(markerCode(m)) }),
  },
  {
    name: 'cwd with .. into another folder of the workspace',
    files: () => ({ 'a/b/.keep': '', 'srv/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['server.js'], cwd: 'a/b/../../srv' }),
    attack: (w, m) => writeFiles(w.project, { 'srv/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'a symlinked server file retargeted',
    files: () => ({ 'real/a.js': serverJs(), 'real/b.js': serverJs('') }),
    def: () => ({ command: 'node', args: ['link/server.js'] }),
    attack: (w, m) => {
      writeFiles(w.project, { 'real/b.js': serverJs(markerCode(m)) });
      fs.unlinkSync(path.join(w.project, 'link/server.js'));
      fs.symlinkSync('../real/b.js', path.join(w.project, 'link/server.js'));
    },
  },
  // The shapes that threw the literal scanner off (issue "The closure is known, not guessed"): read with a parser now.
  {
    name: 'a quote inside a regular expression literal before the require',
    files: () => ({ 'tools/server.js': `const re = /'/; require('../lib/x.js'); const t = '';\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: "a legacy octal escape in the path ('\\56\\56/lib/x.js')",
    files: () => ({ 'tools/server.js': `require('\\56\\56/lib/x.js');\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'a line continuation inside the string',
    files: () => ({ 'tools/server.js': `require('..\\\n/lib/x.js');\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: "a path built at run time (__dirname + '/../lib/x.js'): the whole workspace is pinned",
    files: () => ({ 'tools/server.js': `require(__dirname + '/../lib/x.js');\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'require handed on as a value (const r = require; r(p))',
    files: () => ({ 'tools/server.js': `const r = require;\nr(['..', 'lib', 'x.js'].join('/'));\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'an extensionless entry (CommonJS runs it as JavaScript) that requires outside its folder',
    files: () => ({ 'tools/serve': `require('../lib/x.js');\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/serve'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'a plugin named as a data argument, whose own require reaches outside',
    files: () => ({
      'tools/server.js': `require(require('path').resolve(process.argv[3]));\n${serverJs()}`,
      'plugins/main.js': `require('../lib/x.js');\n`,
      'lib/x.js': lib(),
    }),
    def: () => ({ command: 'node', args: ['tools/server.js', '--plugin', 'plugins/main.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'a file of an unknown extension that CommonJS loads as JavaScript',
    files: () => ({
      'tools/server.js': `require('./boot.weird');\n${serverJs()}`,
      'tools/boot.weird': `require('../lib/x.js');\n`,
      'lib/x.js': lib(),
    }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'a dynamic import of a computed path',
    files: () => ({
      'tools/server.mjs': `const n = 'x';\nawait import(\`../lib/\${n}.mjs\`);\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${serverJs()}`,
      'lib/x.mjs': 'export {};\n',
    }),
    def: () => ({ command: 'node', args: ['tools/server.mjs'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.mjs': `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(m)}, 'ran');\n` }),
  },
  {
    name: 'eval of code the server builds',
    files: () => ({ 'tools/server.js': `eval("require('../lib/" + "x.js')");\n${serverJs()}`, 'lib/x.js': lib() }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/x.js': lib(markerCode(m)) }),
  },
];

// Found by an attacker working from the README and the built CLI only (each ran changed code under an approval).
ATTACKS.push(
  {
    name: 'review: a hoisted package in the root node_modules, required by bare name',
    files: () => ({
      'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['tools'] }),
      'tools/package.json': JSON.stringify({ name: 'server', version: '1.0.0' }),
      'tools/server.js': `require('dep');\n${serverJs()}`,
      'node_modules/dep/package.json': JSON.stringify({ name: 'dep', main: 'index.js' }),
      'node_modules/dep/index.js': lib(),
    }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'node_modules/dep/index.js': lib(markerCode(m)) }),
  },
  {
    name: 'review: an optional dependency planted later in a node_modules above the package',
    files: () => ({ 'tools/package.json': '{"name":"s"}', 'tools/server.js': `try { require('bufferutil'); } catch {}\n${serverJs()}` }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'node_modules/bufferutil/index.js': markerCode(m) }),
  },
  {
    name: 'review: npm run in a subfolder, and a workspace-root .npmrc with node-options added later',
    files: () => ({
      'tools/package.json': JSON.stringify({ name: 'server', scripts: { start: 'node server.js' } }),
      'tools/server.js': serverJs(),
    }),
    def: () => ({ command: 'npm', args: ['run', 'start', '--silent'], cwd: 'tools' }),
    attack: (w, m) =>
      writeFiles(w.project, {
        'package.json': JSON.stringify({ name: 'root', private: true, workspaces: ['tools'] }),
        '.npmrc': `node-options=--require ${w.project}/evil.js\n`,
        'evil.js': markerCode(m),
      }),
  },
  {
    name: 'review: a package.json main that points outside its folder',
    files: () => ({ 'd/package.json': JSON.stringify({ name: 'x', main: '../lib/server.js' }), 'lib/server.js': serverJs() }),
    def: () => ({ command: 'node', args: ['d'] }),
    attack: (w, m) => writeFiles(w.project, { 'lib/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'review: imports spelled with escapes, comments and createRequire',
    files: () => ({
      'tools/package.json': '{"name":"s"}',
      'tools/server.js': `require('\\x2e\\x2e/oc/x.js'); require(/* c */ '../od/x.js'); require('module').createRequire(__filename)('../og/x.js');\n${serverJs()}`,
      'oc/x.js': lib(),
      'od/x.js': lib(),
      'og/x.js': lib(),
    }),
    def: () => ({ command: 'node', args: ['tools/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'og/x.js': lib(markerCode(m)) }),
  },
  {
    name: 'review: env --chdir into another folder',
    files: () => ({ 'a/b/package.json': '{}', 'c/server.js': serverJs() }),
    def: () => ({ command: 'env', args: ['--chdir=a/b', 'node', '../../c/server.js'] }),
    attack: (w, m) => writeFiles(w.project, { 'c/server.js': serverJs(markerCode(m)) }),
  },
  {
    name: 'review: xargs reading the command line from a file',
    files: () => ({ 'args.txt': 'c/server.js\n', 'c/server.js': serverJs() }),
    def: () => ({ command: 'xargs', args: ['-a', 'args.txt', 'node'] }),
    attack: (w, m) => writeFiles(w.project, { 'c/server.js': serverJs(markerCode(m)) }),
  },
);

// The second review.
ATTACKS.push(
  {
    name: 'review 2: a loader spelled with underscores (--experimental_loader=) and what it imports',
    files: () => ({
      'lib/hook.mjs': "import './helper.mjs';\nexport async function resolve(s, c, n) { return n(s, c); }\n",
      'lib/helper.mjs': '// helper\n',
      'tools/srv.js': serverJs(),
    }),
    def: () => ({ command: 'node', args: ['--experimental_loader=./lib/hook.mjs', 'tools/srv.js'] }),
    attack: (w, m) =>
      writeFiles(w.project, { 'lib/helper.mjs': `import fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(m)}, 'ran');\n` }),
  },
  {
    name: 'review 2: a shell running an MCP configuration file as its script',
    files: () => ({ 'srv.js': serverJs(), '.vscode/mcp.json': '// harmless ; exec node srv.js\n{}\n' }),
    def: () => ({ command: 'sh', args: ['.vscode/mcp.json'] }),
    attack: (w, m) => {
      const f = path.join(w.project, '.vscode/mcp.json');
      fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('// harmless ; exec node srv.js', `// $(echo ran > ${m}) ; exec node srv.js`));
    },
  },
);

describe('execution closure: no changed code runs under an existing approval', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  for (const a of ATTACKS) {
    it(a.name, async () => {
      // As the CLI runs it: Node and Python under the load guard, pinned in the guarded form where they can be.
      const w = world();
      w.input.loadGuard = true;
      writeFiles(w.project, a.files(w));
      if (fs.existsSync(path.join(w.project, 'run.sh'))) fs.chmodSync(path.join(w.project, 'run.sh'), 0o755);
      if (a.name.startsWith('a symlinked')) {
        fs.mkdirSync(path.join(w.project, 'link'));
        fs.symlinkSync('../real/a.js', path.join(w.project, 'link/server.js'));
      }
      writeFiles(w.project, { '.mcp.json': MCP({ s: a.def(w) }) });
      const before = state(w.input);
      assert.equal(before.state, 'pending', before.reason);
      await recordDecision(w.input, 's', undefined, 'approved');
      const ran = cli(w, ['tools', 's']);
      assert.match(ran.stdout, /hello/, `the approved server runs: ${ran.stdout}${ran.stderr}`);

      const marker = path.join(w.project, 'marker-ran'); // inside the workspace: a contained server's /tmp is its own
      a.attack(w, marker);
      const after = state(w.input);
      const r = cli(w, ['tools', 's']);
      if (after.state === 'approved' && after.pinned?.pinned.snapshot) {
        // On the approved snapshot: the approved code answers, the change never reaches it (had the changed code
        // run, it would have written the marker, or failed to load on the read-only workspace and answered nothing).
        assert.match(r.stdout, /hello/, `${r.stdout}${r.stderr}`);
      } else {
        if (after.state === 'approved' && after.pinned?.pinned.guarded) {
          // Left to the load guard: refused when it loads, and said so.
          assert.match(r.stdout + r.stderr, /the load guard refused it/, `${r.stdout}${r.stderr}`);
          assert.equal(state(w.input).state, 'approval-changed', 'a refusal re-gates the server');
        } else assert.ok(['approval-changed', 'blocked'].includes(after.state), `${after.state}: ${after.reason}`);
        assert.doesNotMatch(r.stdout, /hello/);
      }
      assert.equal(fs.existsSync(marker), false, 'the changed code ran');
    });
  }

  it('the check-then-spawn race: a file replaced after the gate checked is refused at spawn', async () => {
    const w = world({ 'tools/server.js': serverJs(), '.mcp.json': MCP({ s: { command: 'node', args: ['tools/server.js'] } }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const report = evaluateGate(w.input);
    assert.equal(report.servers[0].state, 'approved');
    const marker = path.join(w.project, 'marker-ran'); // inside the workspace: a contained server's /tmp is its own
    writeFiles(w.project, { 'tools/server.js': serverJs(markerCode(marker)) }); // after the check, before the spawn
    const session = await Session.start({
      report,
      policy: loadUserPolicy(report.userPolicy),
      log: new EventLog(w.store, new Masker()),
      storeDir: w.store,
      secrets: async () => undefined,
      env: process.env,
      npm: inProcess,
      masker: new Masker(),
    });
    try {
      assert.equal(session.servers().length, 0);
      assert.match(session.notes.join('\n'), /changed after the gate checked/);
      assert.equal(fs.existsSync(marker), false);
    } finally {
      await session.close();
    }
  });
});

describe('launch plan: what a repository may not decide', () => {
  after(cleanupTemp);

  it('refuses every loader-controlling variable the issue names, and their kin', () => {
    for (const v of [
      'NODE_OPTIONS',
      'PATH',
      'PYTHONPATH',
      'PYTHONSTARTUP',
      'NODE_PATH',
      'LD_PRELOAD',
      'LD_LIBRARY_PATH',
      'BASH_ENV',
      'ENV',
      'PERL5LIB',
      'PERL5OPT',
      'RUBYOPT',
      'DYLD_INSERT_LIBRARIES',
      'npm_config_script_shell',
      'NPM_CONFIG_NODE_OPTIONS',
      'HOME',
      'XDG_CONFIG_HOME',
      'GIT_SSH_COMMAND',
      'JAVA_TOOL_OPTIONS',
      'GLIBC_TUNABLES',
    ]) {
      assert.ok(loaderVariable(v), v);
    }
    for (const v of ['DB_URL', 'API_BASE', 'LOG_LEVEL', 'PORT']) assert.equal(loaderVariable(v), undefined, v);
  });

  for (const [k, v] of [
    ['NODE_OPTIONS', '--require ./pre.js'],
    ['PATH', 'bin:/usr/bin'],
    ['LD_PRELOAD', './x.so'],
    ['PYTHONPATH', '.'],
  ]) {
    it(`a repository "env" setting ${k} blocks the server, naming the variable`, () => {
      const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['s.js'], env: { [k]: v } } }), 's.js': serverJs() });
      const s = state(w.input);
      assert.equal(s.state, 'blocked');
      assert.match(s.reason, new RegExp(`sets ${k}`));
      assert.match(s.reason, /\.mcp\.json/);
    });
  }

  it('env K=V through a wrapper is refused the same way', () => {
    const w = world({
      '.mcp.json': MCP({ s: { command: 'env', args: ['NODE_OPTIONS=--require=./p.js', 'node', 's.js'] } }),
      's.js': serverJs(),
    });
    assert.match(state(w.input).reason, /sets NODE_OPTIONS through env/);
  });

  it("the repository's bin/node never runs instead of node: the program is found on MCP Gate's PATH", () => {
    const w = world(
      { '.mcp.json': MCP({ s: { command: 'node', args: ['s.js'] } }), 's.js': serverJs(), 'bin/node': '#!/bin/sh\necho evil\n' },
      {},
      { PATH: process.env.PATH! },
    );
    fs.chmodSync(path.join(w.project, 'bin/node'), 0o755);
    const s = state(w.input);
    const exe = s.pinned!.plan!.executable!;
    assert.ok(exe && !exe.startsWith(fs.realpathSync(w.project)), exe);
    assert.equal(path.basename(exe), 'node');
  });

  it('a path under /proc other than the server\'s own folders, or /dev/fd, blocks with "cannot pin"', () => {
    for (const arg of ['/proc/1/root/etc/passwd', '/dev/fd/3', '/proc/self/fd/0']) {
      const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: [arg] } }) });
      const s = state(w.input);
      assert.equal(s.state, 'blocked', arg);
      assert.match(s.reason, /cannot pin what this runs/);
    }
  });

  it('a closure larger than the budget blocks rather than pins part of it', () => {
    const files: Record<string, string> = {
      '.mcp.json': MCP({ s: { command: 'node', args: ['big/server.js'] } }),
      'big/package.json': '{}',
    };
    const w = world(files);
    for (let i = 0; i <= MAX_CLOSURE_FILES; i++) fs.writeFileSync(path.join(w.project, 'big', `f${i}.js`), `${i}`);
    const s = state(w.input);
    assert.equal(s.state, 'blocked');
    assert.match(s.reason, new RegExp(`cannot pin what this runs: big holds more than ${MAX_CLOSURE_FILES} files`));
  });

  it('a symlink loop in the closure blocks with a reason', () => {
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['t/server.js'] } }), 't/server.js': serverJs() });
    fs.symlinkSync('loop2', path.join(w.project, 't/loop1'));
    fs.symlinkSync('loop1', path.join(w.project, 't/loop2'));
    const s = state(w.input);
    assert.equal(s.state, 'blocked');
    assert.match(s.reason, /loop/);
  });

  it('each file is hashed once per evaluation, whatever number of servers name it', () => {
    const servers: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) servers[`s${i}`] = { command: 'node', args: ['lib/server.js', `--n=${i}`] };
    const w = world({ '.mcp.json': MCP(servers), 'lib/server.js': serverJs(), 'lib/a.js': 'a', 'lib/b.js': 'b' });
    const { ioCounters } = require('../../../../src/trust/sources/fsread') as typeof import('../../../../src/trust/sources/fsread');
    const before = ioCounters.reads;
    const r = evaluateGate(w.input);
    assert.equal(r.servers.filter((s) => s.state === 'pending').length, 20);
    // three closure files, the config file, the store, settings lookups: far fewer than 20 × 3
    assert.ok(ioCounters.reads - before < 12, `${ioCounters.reads - before} reads`);
  });
});

describe('execution closure: package launchers pin what they read, not the whole folder', () => {
  after(cleanupTemp);

  it("npx -y pkg: runs from its approved lock, so no edit re-gates it — not a file it serves, nor the project's .npmrc, package.json or node_modules (the launcher never runs)", async () => {
    const w = world(
      { '.mcp.json': MCP({ s: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] } }), 'README.md': 'hi\n' },
      {},
      { PATH: process.env.PATH! },
    );
    await approveOffline(w.input, 's');
    assert.deepEqual(Object.keys(state(w.input).pinned!.pinned.files), [], 'nothing of the workspace is what it runs');
    writeFiles(w.project, { 'NOTES.md': 'a new note\n', 'README.md': 'changed\n', 'docs/x.md': 'x' });
    assert.equal(state(w.input).state, 'approved', 'a file the server serves as data is not code');
    for (const [file, content] of [
      ['.npmrc', 'registry=https://evil.example/\n'],
      ['package.json', '{"dependencies":{}}'],
      ['node_modules/.bin/mcp-server-filesystem', '#!/bin/sh\n'],
      ['sub/../.python-version', '3.1'],
    ]) {
      writeFiles(w.project, { [file]: content });
      const s = state(w.input);
      assert.equal(s.state, 'approved', `after writing ${file}: ${s.reason}`);
    }
    // Through a wrapper the launcher itself runs (no lock): the project's settings are pinned as before.
    const wrapped = world(
      { '.mcp.json': MCP({ s: { command: 'env', args: ['A=1', 'npx', '-y', 'pkg'] } }) },
      {},
      { PATH: process.env.PATH! },
    );
    await recordDecision(wrapped.input, 's', undefined, 'approved');
    writeFiles(wrapped.project, { '.npmrc': 'node-options=--require ./x.js\n' });
    assert.equal(state(wrapped.input).state, 'approval-changed');
  });

  it("the gate cache notices a launcher setting that appears, and a retargeted link on an entry's path", async () => {
    const w = world(
      {
        '.mcp.json': MCP({ s: { command: 'npx', args: ['-y', 'pkg'] }, t: { command: 'node', args: ['link/s.js'] } }),
        'a/s.js': '1',
        'b/s.js': '2',
      },
      {},
      { PATH: process.env.PATH! },
    );
    fs.symlinkSync('a', path.join(w.project, 'link'));
    await approveOffline(w.input, 's');
    await approveOffline(w.input, 't');
    const cache = new GateCache();
    const states = () => cache.get(w.input).servers.map((x) => x.state);
    assert.deepEqual(states(), ['approved', 'approved']);
    writeFiles(w.project, { '.npmrc': 'registry=https://evil.example/\n' });
    assert.deepEqual(
      states(),
      ['approved', 'approval-changed'],
      'node reads a workspace .npmrc above it; the npm launch runs from its lock',
    );
    await approveOffline(w.input, 't');
    assert.deepEqual(states(), ['approved', 'approved']);
    fs.unlinkSync(path.join(w.project, 'link'));
    fs.symlinkSync('b', path.join(w.project, 'link'));
    assert.deepEqual(states(), ['approved', 'approval-changed']);
  });

  it('npm run start still pins the package it runs', async () => {
    const w = world(
      {
        '.mcp.json': MCP({ s: { command: 'npm', args: ['run', 'start'] } }),
        'package.json': '{"scripts":{"start":"node s.js"}}',
        's.js': '1',
        'lib/x.js': '2',
      },
      {},
      { PATH: process.env.PATH! },
    );
    await recordDecision(w.input, 's', undefined, 'approved');
    writeFiles(w.project, { 'lib/x.js': '3' });
    assert.equal(state(w.input).state, 'approval-changed');
  });

  it('a config file named as a data argument is pinned as itself', async () => {
    const w = world(
      {
        '.mcp.json': MCP({ s: { command: 'node', args: ['srv/s.js', '--config', 'conf/tools.yaml'] } }),
        'srv/s.js': '1',
        'conf/tools.yaml': 'a: 1\n',
        'conf/other.yaml': 'b',
      },
      {},
      { PATH: process.env.PATH! },
    );
    await recordDecision(w.input, 's', undefined, 'approved');
    writeFiles(w.project, { 'conf/other.yaml': 'c' });
    assert.equal(state(w.input).state, 'approved');
    writeFiles(w.project, { 'conf/tools.yaml': 'a: 2\n' });
    assert.equal(state(w.input).state, 'approval-changed');
  });
});

describe('execution closure: what runs code MCP Gate does not read pins the whole workspace', function () {
  this.timeout(60_000);
  after(cleanupTemp);
  const PATH = { PATH: process.env.PATH! };
  /** Approves `s`, changes `file`, and returns the state after; the preview before says why the whole workspace. */
  async function changeAfterApproval(
    files: Record<string, string>,
    def: Record<string, unknown>,
    file: string,
  ): Promise<{ preview: string; after: string }> {
    const w = world({ '.mcp.json': MCP({ s: def }), ...files }, {}, PATH);
    const before = state(w.input);
    assert.equal(before.state, 'pending', before.reason);
    const preview = serverText(before);
    await approveOffline(w.input, 's');
    writeFiles(w.project, { [file]: `${files[file] ?? ''}\n// changed\n` });
    return { preview, after: state(w.input).state };
  }

  it('npm run start whose script runs node ../lib/server.js: a change there re-gates', async () => {
    const r = await changeAfterApproval(
      { 'app/package.json': '{"scripts":{"start":"node ../lib/server.js"}}', 'lib/server.js': '1' },
      { command: 'npm', args: ['run', 'start'], cwd: 'app' },
      'lib/server.js',
    );
    assert.equal(r.after, 'approval-changed');
    assert.match(r.preview, /folder \. \(the whole workspace\)\s+— npm runs the project's own scripts/);
  });

  it('make serve whose recipe runs node ../lib/server.js: a change there re-gates', async () => {
    const r = await changeAfterApproval(
      { 'app/Makefile': 'serve:\n\tnode ../lib/server.js\n', 'lib/server.js': '1' },
      { command: 'make', args: ['serve'], cwd: 'app' },
      'lib/server.js',
    );
    assert.equal(r.after, 'approval-changed');
  });

  it('a project .npmrc with node-options=--require ../lib/boot.js does not reach an npm launch (it runs from its lock, with node, not npm); through a wrapper (npm itself runs) it pins the whole workspace and the preview names the setting', async () => {
    const locked = await changeAfterApproval(
      { 'app/.npmrc': 'node-options=--require ../lib/boot.js\n', 'app/package.json': '{}', 'lib/boot.js': '1' },
      { command: 'npx', args: ['-y', 'some-server'], cwd: 'app' },
      'lib/boot.js',
    );
    assert.equal(locked.after, 'approved');
    const r = await changeAfterApproval(
      { 'app/.npmrc': 'node-options=--require ../lib/boot.js\n', 'app/package.json': '{}', 'lib/boot.js': '1' },
      { command: 'env', args: ['A=1', 'npx', '-y', 'some-server'], cwd: 'app' },
      'lib/boot.js',
    );
    assert.equal(r.after, 'approval-changed');
    assert.match(
      r.preview,
      /app\/\.npmrc sets node-options, which npm can use to run code MCP Gate does not model: MCP Gate pins the whole workspace/,
    );
  });

  it('a .npmrc with only a registry keeps the launcher closure (an ordinary edit does not re-gate)', async () => {
    const r = await changeAfterApproval(
      { 'app/.npmrc': 'registry=http://127.0.0.1:1/\n', 'app/package.json': '{}', 'lib/boot.js': '1' },
      { command: 'npx', args: ['-y', 'some-server'], cwd: 'app' },
      'lib/boot.js',
    );
    assert.equal(r.after, 'approved');
  });

  it('Python: a .pth file added to a workspace virtual environment re-gates; so does sys.path.insert of ../lib', async () => {
    const venv = await changeAfterApproval(
      { '.venv/pyvenv.cfg': 'home = /usr/bin\n', '.venv/lib/python3.11/site-packages/ok.pth': '', 'srv/main.py': 'print(1)\n' },
      { command: 'python3', args: ['srv/main.py'] },
      '.venv/lib/python3.11/site-packages/evil.pth',
    );
    assert.equal(venv.after, 'approval-changed');
    assert.match(venv.preview, /python3 imports along a path its code can change at run time/);
    const sysPath = await changeAfterApproval(
      {
        'srv/main.py': 'import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))\nimport helper\n',
        'lib/helper.py': 'X = 1\n',
      },
      { command: 'python3', args: ['srv/main.py'] },
      'lib/helper.py',
    );
    assert.equal(sysPath.after, 'approval-changed');
  });

  it('the preview names the file and line of a computed load', async () => {
    const r = await changeAfterApproval(
      { 'tools/server.js': 'const p = require("path");\nrequire(p.join(__dirname, "../lib/x.js"));\n', 'lib/x.js': '1' },
      { command: 'node', args: ['tools/server.js'] },
      'lib/x.js',
    );
    assert.equal(r.after, 'approval-changed');
    assert.match(
      r.preview,
      /tools\/server\.js:2 require\(\) loads a path computed at run time: MCP Gate pins the whole workspace for this server/,
    );
  });

  it('literal loads keep the closure to the package folders: an unrelated file does not re-gate', async () => {
    const r = await changeAfterApproval(
      { 'tools/server.js': 'require("../lib/x.js");\n', 'lib/x.js': '1', 'docs/readme.md': 'hi' },
      { command: 'node', args: ['tools/server.js'] },
      'docs/readme.md',
    );
    assert.equal(r.after, 'approved');
  });
});

describe('execution closure: TypeScript loaders resolve bare imports through tsconfig.json', function () {
  this.timeout(120_000);
  after(cleanupTemp);
  const PATH = { PATH: `${TSX_BIN}${path.delimiter}${process.env.PATH!}` };
  const tsServer = (imports: string) => `${imports}\nconst typed: number = 1;\n${serverJs()}`;
  const def = { command: 'tsx', args: ['tools/server.ts'] };
  async function approved(files: Record<string, string>): Promise<World> {
    const w = world({ '.mcp.json': MCP({ s: def }), ...files }, {}, PATH);
    const before = state(w.input);
    assert.equal(before.state, 'pending', before.reason);
    await approveOffline(w.input, 's');
    return w;
  }

  it('a paths alias (no baseUrl) pins the folder it maps to: a change there re-gates, a file elsewhere does not', async () => {
    const files = {
      'tsconfig.json':
        '{\n  // TypeScript allows comments and trailing commas\n  "compilerOptions": { "paths": { "~/*": ["./src/lib/*"], } }\n}\n',
      'tools/server.ts': tsServer("import '~/h';"),
      'src/lib/h.ts': 'export const h = 1;\n',
      'docs/notes.md': 'hi\n',
    };
    const w = await approved(files);
    assert.ok(Object.keys(state(w.input).pinned!.pinned.files).includes('src/lib/h.ts'));
    writeFiles(w.project, { 'docs/notes.md': 'changed\n' });
    assert.equal(state(w.input).state, 'approved', 'a file outside the closure re-gated');
    writeFiles(w.project, { 'src/lib/h.ts': 'export const h = 2;\n' });
    assert.equal(state(w.input).state, 'approval-changed');
  });

  it('a tsconfig.json created after approval (paths into the workspace) re-gates', async () => {
    const w = await approved({ 'tools/server.ts': tsServer(''), 'src/lib/h.ts': 'export const h = 1;\n' });
    writeFiles(w.project, { 'tsconfig.json': '{"compilerOptions":{"paths":{"fs":["./src/lib/h.ts"]}}}' });
    assert.equal(state(w.input).state, 'approval-changed');
  });

  it('paths in a file the tsconfig extends are followed; baseUrl pins the folder bare imports resolve from', async () => {
    const w = await approved({
      'tsconfig.json': '{"extends":"./config/base"}',
      'config/base.json': '{"compilerOptions":{"paths":{"@x":["../vendor/x.ts"]}}}',
      'tools/server.ts': tsServer("import '@x';"),
      'vendor/x.ts': 'export {};\n',
    });
    writeFiles(w.project, { 'vendor/x.ts': 'export const changed = 1;\n' });
    assert.equal(state(w.input).state, 'approval-changed');
    const b = await approved({
      'tsconfig.json': '{"compilerOptions":{"baseUrl":"./src"}}',
      'tools/server.ts': tsServer("import 'lib/h';"),
      'src/lib/h.ts': 'export {};\n',
    });
    writeFiles(b.project, { 'src/lib/h.ts': 'export const changed = 1;\n' });
    assert.equal(state(b.input).state, 'approval-changed');
  });

  // The red team's ways in (tsx on PATH; the package folder is tools/): each changes a file tsx loads.
  const redTeam: { name: string; files: Record<string, string>; server?: string; target: string }[] = [
    {
      name: 'a @jsxImportSource pragma in a comment',
      files: {
        'tools/server.tsx': '/** @jsxRuntime automatic */\n/** @jsxImportSource ../evil */\nexport const el = <div/>;\n',
        'evil/jsx-runtime.ts': 'export function jsx() { return {}; }\n',
      },
      server: 'tools/server.tsx',
      target: 'evil/jsx-runtime.ts',
    },
    {
      name: "paths in an extended config resolved against the child's baseUrl",
      files: {
        'cfg/b.json': '{"compilerOptions":{"paths":{"@ev/*":["../x/*"]}}}',
        'tsconfig.json': '{"extends":"./cfg/b.json","compilerOptions":{"baseUrl":"./a/b"}}',
        'tools/server.ts': tsServer("import '@ev/lib';"),
        'a/x/lib.ts': 'export {};\n',
        'x/lib.ts': 'export {};\n',
      },
      target: 'a/x/lib.ts',
    },
    {
      name: 'a baseUrl inherited from the base config, paths in the child',
      files: {
        'cfg/b.json': '{"compilerOptions":{"baseUrl":"./q"}}',
        'tsconfig.json': '{"extends":"./cfg/b.json","compilerOptions":{"paths":{"@ev/*":["../../x2/*"]}}}',
        'tools/server.ts': tsServer("import '@ev/lib';"),
        'x2/lib.ts': 'export {};\n',
      },
      target: 'x2/lib.ts',
    },
    {
      name: '${configDir} in an inherited baseUrl',
      files: {
        'cfg/b.json': '{"compilerOptions":{"baseUrl":"${configDir}/lib"}}',
        'tsconfig.json': '{"extends":"./cfg/b.json"}',
        'tools/server.ts': tsServer("import 'evmod';"),
        'lib/evmod.ts': 'export {};\n',
      },
      target: 'lib/evmod.ts',
    },
    {
      name: 'extends through a package\'s "tsconfig" field',
      files: {
        'node_modules/cfgpkg/package.json': '{"name":"cfgpkg","tsconfig":"conf/base.json"}',
        'node_modules/cfgpkg/conf/base.json': '{"compilerOptions":{"paths":{"@ev/*":["../../../evil/*"]}}}',
        'tsconfig.json': '{"extends":"cfgpkg"}',
        'tools/server.ts': tsServer("import '@ev/lib';"),
        'evil/lib.ts': 'export {};\n',
      },
      target: 'evil/lib.ts',
    },
    {
      name: 'extends through a package exports subpath',
      files: {
        'node_modules/cfgpkg/package.json': '{"name":"cfgpkg","exports":{"./base":"./conf/base.json"}}',
        'node_modules/cfgpkg/conf/base.json': '{"compilerOptions":{"baseUrl":"../../../lib"}}',
        'tsconfig.json': '{"extends":"cfgpkg/base"}',
        'tools/server.ts': tsServer("import 'evmod';"),
        'lib/evmod.ts': 'export {};\n',
      },
      target: 'lib/evmod.ts',
    },
    {
      name: 'an extended config created after approval',
      files: { 'tsconfig.json': '{"extends":"./cfg/later.json"}', 'tools/server.ts': tsServer(''), 'cfg/keep.txt': '' },
      target: 'cfg/later.json',
    },
  ];
  it('review: a package base config reached through a link, a linked folder, or too many JSON files pin the whole workspace', async () => {
    const w = world(
      {
        '.mcp.json': MCP({ s: def }),
        'node_modules/cfgpkg/package.json': '{"name":"cfgpkg","tsconfig":"base.json"}',
        'real/base.json': '{"compilerOptions":{"paths":{"@ev/*":["../evil/*"]}}}',
        'tsconfig.json': '{"extends":"cfgpkg"}',
        'tools/server.ts': tsServer("import '@ev/lib';"),
        'evil/lib.ts': 'export {};\n',
      },
      {},
      PATH,
    );
    fs.symlinkSync('../../real/base.json', path.join(w.project, 'node_modules/cfgpkg/base.json'));
    assert.match(
      serverText(state(w.input)),
      /tsconfig\.json extends the package cfgpkg, whose JSON files MCP Gate cannot list whole \(over 256, or a linked folder or file\).*: MCP Gate pins the whole workspace/,
    );
    const linked = world(
      {
        '.mcp.json': MCP({ s: def }),
        'node_modules/cfgpkg/package.json': '{"name":"cfgpkg"}',
        'real/conf/base.json': '{}',
        'tsconfig.json': '{"extends":"cfgpkg/conf/base.json"}',
        'tools/server.ts': tsServer(''),
      },
      {},
      PATH,
    );
    fs.symlinkSync('../../real/conf', path.join(linked.project, 'node_modules/cfgpkg/conf'));
    assert.match(
      serverText(state(linked.input)),
      /tsconfig\.json extends the package cfgpkg, whose JSON files MCP Gate cannot list whole \(over 256, or a linked folder or file\).*: MCP Gate pins the whole workspace/,
    );
    const many = world(
      {
        '.mcp.json': MCP({ s: def }),
        'tsconfig.json': '{"extends":"big"}',
        'tools/server.ts': tsServer(''),
        ...Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`node_modules/big/c${i}.json`, '{}'])),
      },
      {},
      PATH,
    );
    assert.match(serverText(state(many.input)), /extends the package big, whose JSON files MCP Gate cannot list whole/);
  });

  for (const r of redTeam) {
    it(`red team: ${r.name} — a change there re-gates`, async () => {
      const w = world(
        {
          '.mcp.json': MCP({ s: { command: 'tsx', args: [r.server ?? 'tools/server.ts'] } }),
          ...r.files,
          ...(r.server ? { [r.server]: `${r.files[r.server]}${serverJs()}` } : {}),
        },
        {},
        PATH,
      );
      const before = state(w.input);
      assert.equal(before.state, 'pending', before.reason);
      await approveOffline(w.input, 's');
      writeFiles(w.project, {
        [r.target]: r.target.endsWith('.json')
          ? '{"compilerOptions":{"paths":{"@x":["../elsewhere/x.ts"]}}}'
          : 'export const changed = 1;\n',
      });
      assert.equal(state(w.input).state, 'approval-changed');
    });
  }

  it('a jsxImportSource in tsconfig that is a path pins the whole workspace; a package name (react) does not', () => {
    const path_ = world(
      {
        '.mcp.json': MCP({ s: def }),
        'tsconfig.json': '{"compilerOptions":{"jsx":"react-jsx","jsxImportSource":"../evil"}}',
        'tools/server.ts': tsServer(''),
      },
      {},
      PATH,
    );
    assert.match(
      serverText(state(path_.input)),
      /tsconfig\.json sets jsxImportSource to the path \.\.\/evil: each JSX file imports its runtime from where it lies: MCP Gate pins the whole workspace/,
    );
    const pkg = world(
      {
        '.mcp.json': MCP({ s: def }),
        'tsconfig.json': '{"compilerOptions":{"jsx":"react-jsx","jsxImportSource":"preact"}}',
        'tools/server.ts': tsServer(''),
      },
      {},
      PATH,
    );
    assert.doesNotMatch(serverText(state(pkg.input)), /the whole workspace/);
  });

  it('a tsconfig.json that does not parse pins the whole workspace, and the preview says why', () => {
    const w = world({ '.mcp.json': MCP({ s: def }), 'tsconfig.json': '{"compilerOptions": {', 'tools/server.ts': tsServer('') }, {}, PATH);
    const s = state(w.input);
    assert.equal(s.state, 'pending', s.reason);
    assert.match(
      serverText(s),
      /tsconfig\.json does not parse as JSON with comments, so where TypeScript loaders resolve imports is not known: MCP Gate pins the whole workspace/,
    );
  });

  it('tsx installed in the workspace (its esbuild binary, 11 MiB, pinned): the approved server runs; a changed import never does', async () => {
    const w = world();
    w.input.loadGuard = true; // approved as the CLI pins it: tsx is no program the guard runs in, so on the approved snapshot
    installTsx(w.project);
    writeFiles(w.project, {
      'package.json': '{"devDependencies":{"tsx":"*"}}',
      'tsconfig.json': '{"compilerOptions":{"paths":{"@lib/*":["./lib/*"]}}}',
      'tools/server.ts': tsServer("import '@lib/h';"),
      'lib/h.ts': 'export const h: number = 1;\n',
      '.mcp.json': MCP({ s: { command: 'node_modules/.bin/tsx', args: ['tools/server.ts'] } }),
    });
    const before = state(w.input);
    assert.equal(before.state, 'pending', before.reason);
    await recordDecision(w.input, 's', undefined, 'approved');
    // The tsx command listens on a Unix socket of its own (its IPC, in the sandbox's private /tmp): allowed, since no
    // socket file it did not make is visible to it.
    const ran = cli(w, ['tools', 's']);
    assert.match(ran.stdout, /hello/, `the approved server runs: ${ran.stdout}${ran.stderr}`);
    const marker = path.join(w.project, 'marker-ran');
    writeFiles(w.project, { 'lib/h.ts': `${markerCode(marker)}\nexport const h: number = 1;\n` });
    assert.equal(state(w.input).state, 'approved', 'an edit reaches a server on the snapshot only when approved again');
    const r = cli(w, ['tools', 's']);
    assert.match(r.stdout, /hello/, r.stdout + r.stderr);
    assert.equal(fs.existsSync(marker), false, 'the changed code ran');
  });
});

describe('execution closure: what the review found, by state', () => {
  after(cleanupTemp);

  it('env -S, --split-string= and -u X hide no loader variable', () => {
    for (const args of [
      ['-SNODE_OPTIONS=--require=./e.js node s.js'],
      ['--split-string=NODE_OPTIONS=--require=./e.js node s.js'],
      ['-u', 'X', 'NODE_OPTIONS=--require=./e.js', 'node', 's.js'],
      ['-u', 'X', 'LD_PRELOAD=/x.so', 'node', 's.js'],
    ]) {
      const w = world({ '.mcp.json': MCP({ s: { command: 'env', args } }), 's.js': '1' });
      const s = state(w.input);
      assert.equal(s.state, 'blocked', JSON.stringify(args));
      assert.match(s.reason, /sets (NODE_OPTIONS|LD_PRELOAD) through env/);
    }
  });

  it('OPENSSL_CONF and the other variables the review named are refused', () => {
    for (const v of [
      'OPENSSL_CONF',
      'OPENSSL_MODULES',
      'OPENSSL_ENGINES',
      'PYENV_VERSION',
      'PYENV_HOOK_PATH',
      'BASH_FUNC_x%%',
      'SSH_ASKPASS',
      'SUDO_ASKPASS',
      'TERMINFO',
      'INPUTRC',
      'MAVEN_OPTS',
      'DOTNET_STARTUP_HOOKS',
      'CORECLR_PROFILER_PATH',
      'ERL_FLAGS',
      'CC',
      'NVM_DIR',
      'VOLTA_HOME',
      'ASDF_DIR',
      'MISE_CONFIG_FILE',
    ]) {
      assert.ok(loaderVariable(v), v);
    }
    for (const v of ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'HOSTNAME_OVERRIDE', 'AWS_REGION', 'LC_ALL'])
      assert.equal(loaderVariable(v), undefined, v);
  });

  it('a workspace file named by a variable is pinned', async () => {
    const w = world({
      '.mcp.json': MCP({ s: { command: 'node', args: ['t/s.js'], env: { APP_CONFIG: 'conf/app.cnf' } } }),
      't/s.js': '1',
      'conf/app.cnf': 'a',
    });
    await recordDecision(w.input, 's', undefined, 'approved');
    writeFiles(w.project, { 'conf/app.cnf': 'b' });
    assert.equal(state(w.input).state, 'approval-changed');
  });

  it('git -c alias and .git/config: a server that runs git is re-gated when they change', async () => {
    const w = world({
      '.mcp.json': MCP({ s: { command: 'git', args: ['-c', 'alias.x=!node c/server.js', 'x'] }, t: { command: 'node', args: ['t/s.js'] } }),
      'c/server.js': '1',
      't/s.js': '2',
      '.git/config': '[core]\n',
      '.git/HEAD': 'ref: refs/heads/main\n',
    });
    await recordDecision(w.input, 's', undefined, 'approved');
    await recordDecision(w.input, 't', undefined, 'approved');
    writeFiles(w.project, { 'c/server.js': '3' });
    assert.equal(state(w.input, 's').state, 'approval-changed', 'git can run any file');
    await recordDecision(w.input, 's', undefined, 'approved');
    writeFiles(w.project, { '.git/config': '[core]\n\tfsmonitor = .git/fsm.sh\n' });
    assert.deepEqual(
      evaluateGate(w.input).servers.map((x) => x.state),
      ['approval-changed', 'approval-changed'],
    );
    await recordDecision(w.input, 's', undefined, 'approved');
    await recordDecision(w.input, 't', undefined, 'approved');
    writeFiles(w.project, { '.git/HEAD': 'ref: refs/heads/other\n' });
    assert.deepEqual(
      evaluateGate(w.input).servers.map((x) => x.state),
      ['approved', 'approved'],
      'the rest of .git is not code',
    );
  });

  it('node --env-file (either spelling) may not set a loader variable; --openssl-config pins the workspace; a nested .git is pinned', async () => {
    for (const flag of ['--env-file=lib/env', '--env_file=lib/env']) {
      const w = world({
        '.mcp.json': MCP({ s: { command: 'node', args: [flag, 'tools/srv.js'] } }),
        'lib/env': 'NODE_OPTIONS="--require ./lib/pre.js"\n',
        'tools/srv.js': '1',
      });
      const s = state(w.input);
      assert.equal(s.state, 'blocked', flag);
      assert.match(s.reason, /sets NODE_OPTIONS/);
    }
    const big = world({
      '.mcp.json': MCP({ s: { command: 'node', args: ['--env-file=lib/env', 'tools/srv.js'] } }),
      'lib/env': `${'A=1\n'.repeat(300_000)}NODE_OPTIONS=--require=./p.js\n`,
      'tools/srv.js': '1',
    });
    assert.match(state(big.input).reason, /over 1 MiB, more than MCP Gate checks/, 'a variable past what is read must not slip through');
    const o = world({
      '.mcp.json': MCP({ s: { command: 'node', args: ['--openssl-config=lib/ossl.cnf', 'tools/srv.js'] } }),
      'lib/ossl.cnf': 'x',
      'lib/engine.so': 'elf',
      'tools/srv.js': '1',
    });
    await recordDecision(o.input, 's', undefined, 'approved');
    writeFiles(o.project, { 'lib/engine.so': 'changed' });
    assert.equal(state(o.input).state, 'approval-changed');
    const g = world({
      '.mcp.json': MCP({ s: { command: 'node', args: ['tools/main.js'] } }),
      'tools/main.js': "require('./.git/lib.js');",
      'tools/.git/lib.js': '1',
    });
    await recordDecision(g.input, 's', undefined, 'approved');
    writeFiles(g.project, { 'tools/.git/lib.js': '2' });
    assert.equal(state(g.input).state, 'approval-changed');
  });

  it('review 3: python -X pycache_prefix, -I and -E are refused; a node test reporter pins what it imports; node --test pins the workspace', async () => {
    for (const args of [
      ['-X', 'pycache_prefix=pyc', 't/s.py'],
      ['-Xpycache_prefix=pyc', 't/s.py'],
      ['-I', 't/s.py'],
      ['-E', 't/s.py'],
      ['-BI', 't/s.py'],
    ]) {
      const w = world({ '.mcp.json': MCP({ s: { command: '/usr/bin/python3', args } }), 't/s.py': '1' });
      const s = state(w.input);
      assert.equal(s.state, 'blocked', JSON.stringify(args));
      assert.match(s.reason, /bytecode/);
    }
    const ok = world({
      '.mcp.json': MCP({ s: { command: '/usr/bin/python3', args: ['-u', '-Wignore', '-X', 'utf8', 't/s.py'] } }),
      't/s.py': '1',
    });
    assert.equal(state(ok.input).state, 'pending', state(ok.input).reason);
    const r = world({
      '.mcp.json': MCP({ s: { command: 'node', args: ['--test-reporter=./rep/r.mjs', 'srv/s.test.js'] } }),
      'rep/r.mjs': "import './h.mjs';",
      'rep/h.mjs': '1',
      'srv/s.test.js': '1',
    });
    await recordDecision(r.input, 's', undefined, 'approved');
    writeFiles(r.project, { 'rep/h.mjs': '2' });
    assert.equal(state(r.input).state, 'approval-changed');
    const t = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['--test'] } }), 'a/x.test.js': '1' });
    await recordDecision(t.input, 's', undefined, 'approved');
    writeFiles(t.project, { 'b/y.test.js': '2' });
    assert.equal(state(t.input).state, 'approval-changed');
  });

  it('a tree of many empty folders or links is blocked quickly, not walked for minutes', () => {
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['tools/s.js'] } }), 'tools/s.js': '1' });
    for (let i = 0; i <= MAX_WALK_ENTRIES; i++) fs.mkdirSync(path.join(w.project, 'tools', `d${i}`));
    const s = state(w.input);
    assert.equal(s.state, 'blocked');
    assert.match(s.reason, new RegExp(`tools holds more than ${MAX_WALK_ENTRIES} files, folders and links`));
  });

  it('a Python server writes no bytecode into the workspace; valid bytecode planted there never runs (the load guard compiles the approved source), and it stays approved', async () => {
    const g = world({
      '.mcp.json': MCP({ s: { command: '/usr/bin/python3', args: ['srv/main.py'] } }),
      'srv/helper.py': 'NAME = "hello"\n',
      'srv/main.py':
        'import sys, json\nsys.path.insert(0, __import__("os").path.dirname(__file__))\nimport helper\nfor line in sys.stdin:\n    m = json.loads(line)\n    if "id" not in m: continue\n    if m["method"] == "initialize": r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "py", "version": "1"}}\n    elif m["method"] == "tools/list": r = {"tools": [{"name": helper.NAME, "description": "hi", "inputSchema": {"type": "object"}}]}\n    else: r = {}\n    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)\n',
    });
    g.input.loadGuard = true;
    await recordDecision(g.input, 's', undefined, 'approved');
    assert.match(cli(g, ['tools', 's']).stdout, /hello/);
    assert.equal(fs.existsSync(path.join(g.project, 'srv', '__pycache__')), false, 'no bytecode written into the workspace');
    // Valid bytecode of another helper (NAME = "planted"), at the name Python would read it from.
    const plant =
      'import sys, os, importlib._bootstrap_external as b\nsrc, out = sys.argv[1], sys.argv[2]\nst = os.stat(src)\nos.makedirs(os.path.dirname(out), exist_ok=True)\nopen(out, "wb").write(b._code_to_timestamp_pyc(compile(\'NAME = "planted"\', src, "exec"), int(st.st_mtime), st.st_size))\n';
    const planted = spawnSync(
      '/usr/bin/python3',
      ['-c', plant, path.join(g.project, 'srv/helper.py'), path.join(g.project, 'srv/__pycache__/helper.cpython-311.pyc')],
      { encoding: 'utf8' },
    );
    assert.equal(planted.status, 0, planted.stderr);
    // Without the guard, Python runs it (so the check below can fail).
    const plain = spawnSync('/usr/bin/python3', ['-c', 'import sys; sys.path.insert(0, "srv"); import helper; print(helper.NAME)'], {
      cwd: g.project,
      encoding: 'utf8',
    });
    assert.equal(plain.stdout.trim(), 'planted', plain.stderr);
    assert.equal(state(g.input).state, 'approved');
    const tools = cli(g, ['tools', 's']).stdout;
    assert.match(tools, /hello/);
    assert.doesNotMatch(tools, /planted/);
  });
});

describe('execution closure: property', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('a random definition over a random workspace tree is never approved after any file of its closure changes', () => {
    const segment = fc.constantFrom('a', 'b', 'lib', 'src', 'tools');
    const file = fc.tuple(
      fc.array(segment, { maxLength: 2 }),
      fc.constantFrom('x.js', 'y.js', 'main.py', 'run.sh', 'package.json', 'data.txt'),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(file, { minLength: 1, maxLength: 8, selector: ([d, f]) => [...d, f].join('/') }),
        fc.constantFrom('node', 'python3', 'sh', 'npm', 'cat'),
        fc.nat(),
        fc.nat(),
        (files, command, pick, change) => {
          const paths = files.map(([d, f]) => [...d, f].join('/'));
          const entry = paths[pick % paths.length];
          const w = world(Object.fromEntries(paths.map((p) => [p, `content of ${p}`])));
          const args = command === 'npm' ? ['run', 'start'] : [entry];
          writeFiles(w.project, { '.mcp.json': MCP({ s: { command, args } }) });
          const s = state(w.input);
          if (s.state !== 'pending') return true; // blocked: never approved
          const closure = Object.keys(s.pinned!.pinned.files);
          if (command !== 'cat') assert.ok(closure.includes(entry), `${entry} is in the closure of ${command}`);
          const digest = s.pinned!.digest;
          const target = closure[change % closure.length];
          fs.appendFileSync(path.join(w.project, target), '\n// changed');
          const after = state(w.input);
          assert.notEqual(after.pinned?.digest, digest, `changing ${target} must change the digest`);
          return true;
        },
      ),
      { numRuns: 60 },
    );
  });
});
