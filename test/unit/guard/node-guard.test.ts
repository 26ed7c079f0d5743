// The Node.js load guard (src/guard/node/guard.ts, built to dist/guard/node-guard.cjs): for each shape a server loads
// code in, a temp workspace is approved (manifest of every file's sha256), run under the guard, a README edit still
// runs, and a changed loaded file is refused before its code runs (stderr, report line, no marker written).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import { prepareGuard } from '../../../src/host/sandbox/load-guard';
import { saveManifest, takeManifest } from '../../../src/trust/approval/workspace-manifest';
import { cleanupTemp, ROOT, tempDir, writeFiles, vscodeNode } from '../helpers';

const GUARD = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');

interface Ws {
  root: string;
  scratch: string;
  out: string;
  manifest: string;
  report: string;
  marker: string;
}

function workspace(files: Record<string, string>): Ws {
  const root = fs.realpathSync(tempDir('mcp-gate-guard-ws-'));
  const scratch = fs.realpathSync(tempDir('mcp-gate-guard-scratch-'));
  const out = fs.realpathSync(tempDir('mcp-gate-guard-out-'));
  const ws = {
    root,
    scratch,
    out,
    manifest: path.join(out, 'manifest.json'),
    report: path.join(out, 'report.jsonl'),
    marker: path.join(out, 'changed-code-ran'),
  };
  writeFiles(root, { 'README.md': '# server\n', ...files });
  return ws;
}

/** The approval: sha256 of every regular file of the workspace, and the text of each symbolic link. */
function approve(ws: Ws): void {
  const files: Record<string, string> = {};
  const links: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      const rel = path.relative(ws.root, p).split(path.sep).join('/');
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files[rel] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
      else if (e.isSymbolicLink()) links[rel] = fs.readlinkSync(p);
    }
  };
  walk(ws.root);
  fs.writeFileSync(
    ws.manifest,
    JSON.stringify({ version: 1, root: ws.root, files, links, scratch: [ws.scratch], report: ws.report, server: 'test' }),
  );
}

/** Flags before the guard: MCP Gate's own starts pass --expose-internals (src/host/sandbox/load-guard.ts); a child marked
 * only through NODE_OPTIONS has none. Each describe below sets them. */
let FLAGS: string[] = [];

function run(ws: Ws, args: string[], node = process.execPath): { status: number | null; stdout: string; stderr: string } {
  const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest, SCRATCH: ws.scratch };
  delete env.NODE_OPTIONS;
  const r = spawnSync(node, [...FLAGS, '--require', GUARD, ...args], { cwd: ws.root, env, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function reports(ws: Ws): Array<Record<string, unknown>> {
  if (!fs.existsSync(ws.report)) return [];
  return fs
    .readFileSync(ws.report, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Code that, if it ever runs, leaves the marker file. */
const cjsMarker = (ws: Ws): string => `require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran');\n`;
const esmMarker = (ws: Ws): string => `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(ws.marker)}, 'ran');\n`;

interface Shape {
  files: Record<string, string>;
  args: string[];
  expectOut: RegExp; // what the approved run prints
  change: (ws: Ws) => void; // the change after approval
  refused: (ws: Ws) => string; // the file then refused
  why: string;
  how: string;
}

/** approve → runs; README edit → runs, no refusal; change → fails, names the file, reports it, changed code never ran. */
function shape(s: Shape): void {
  const ws = workspace(s.files);
  approve(ws);
  let r = run(ws, s.args);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, s.expectOut);
  assert.doesNotMatch(r.stderr, /mcp-gate-guard/);

  fs.writeFileSync(path.join(ws.root, 'README.md'), '# server, edited\n');
  r = run(ws, s.args);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stderr, /mcp-gate-guard/);
  assert.deepEqual(reports(ws), []);

  s.change(ws);
  r = run(ws, s.args);
  const file = s.refused(ws);
  assert.notEqual(r.status, 0, r.stdout + r.stderr);
  assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${file}`), r.stderr);
  assert.equal(fs.existsSync(ws.marker), false, 'the changed code ran');
  const line = reports(ws).find((l) => l.file === file);
  assert.ok(line, JSON.stringify(reports(ws)));
  assert.equal(line.why, s.why);
  assert.equal(line.how, s.how);
  assert.equal(line.runtime, 'node');
  assert.match(String(line.sha256), /^[0-9a-f]{64}$/);
  assert.equal(line.rel, file.startsWith(ws.root + path.sep) ? path.relative(ws.root, file).split(path.sep).join('/') : null);
}

const hasRegisterHooks = typeof (Module as unknown as { registerHooks?: unknown }).registerHooks === 'function';
const requiresEsm = (process as unknown as { features?: { require_module?: boolean } }).features?.require_module === true;

for (const mode of [
  {
    name: 'started as MCP Gate starts node (--expose-internals: without module.registerHooks, the ES module loader wrapped in the loading thread)',
    flags: ['--expose-internals'],
  },
  {
    name: "a node marked only through NODE_OPTIONS (no --expose-internals: module.register's loader thread without module.registerHooks)",
    flags: [],
  },
])
  describe(`Node load guard (dist/guard/node-guard.cjs), ${mode.name}`, function () {
    this.timeout(30_000);
    before(() => {
      FLAGS = mode.flags;
      const b = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-guard.mjs')], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(b.status, 0, b.stderr);
    });
    after(cleanupTemp);

    // require() of an ES module (Node 20.19+, 22.12+) loads what it imports through Node's defaultLoadSync, which
    // module.register's hooks never see (a changed import ran under the guard on Node 20.20).
    const esmByRequire = {
      'server.js': `const m = require('./lib/entry.mjs'); console.log('entry', m.v);\n`,
      'lib/entry.mjs': `import { w } from './dep.mjs';\nexport const v = 'v' + w;\n`,
      'lib/dep.mjs': 'export const w = 1;\n',
    };
    if (mode.flags.length || hasRegisterHooks) {
      it('require() of an ES module: the modules it imports are checked too (a changed one refused before it runs)', function () {
        if (!requiresEsm) this.skip(); // a Node without require(esm): nothing to check
        shape({
          files: esmByRequire,
          args: ['server.js'],
          expectOut: /entry v1/,
          change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/dep.mjs'), esmMarker(ws) + 'export const w = 2;\n'),
          refused: (ws) => path.join(ws.root, 'lib/dep.mjs'),
          why: 'changed',
          how: 'import',
        });
      });
    } else {
      it('require() of an ES module in the workspace is refused, naming the way out (what it imports would go unchecked)', function () {
        if (!requiresEsm) this.skip();
        const ws = workspace(esmByRequire);
        approve(ws);
        const r = run(ws, ['server.js']);
        assert.notEqual(r.status, 0, r.stdout);
        assert.ok(
          r.stderr.includes(
            `mcp-gate-guard: refused to load ${path.join(ws.root, 'lib/entry.mjs')} (lib/entry.mjs): require() of an ES module: on this Node the guard cannot check what it imports unless node is started with --expose-internals`,
          ),
          r.stderr,
        );
        assert.deepEqual(
          reports(ws).map((l) => [l.rel, l.why, l.how]),
          [['lib/entry.mjs', 'sink', 'require() of an ES module']],
        );
        // import() of the same module is checked by the hooks and runs
        fs.writeFileSync(path.join(ws.root, 'server.js'), `import('./lib/entry.mjs').then((m) => console.log('entry', m.v));\n`);
        approve(ws);
        const ok = run(ws, ['server.js']);
        assert.equal(ok.status, 0, ok.stderr);
        assert.match(ok.stdout, /entry v1/);
      });
    }

    it('require of a computed path', () =>
      shape({
        files: {
          'server.js': `const n = ['lib', 'job.js'].join('/'); require('./' + n); console.log('served');\n`,
          'lib/job.js': `console.log('job');\n`,
        },
        args: ['server.js'],
        expectOut: /job\nserved/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/job.js'), cjsMarker(ws)),
        refused: (ws) => path.join(ws.root, 'lib/job.js'),
        why: 'changed',
        how: 'require',
      }));

    it("require('./config.json')", () =>
      shape({
        files: { 'server.js': `console.log('value', require('./config.json').v);\n`, 'config.json': '{"v": "approved"}\n' },
        args: ['server.js'],
        expectOut: /value approved/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'config.json'), '{"v": "evil"}\n'),
        refused: (ws) => path.join(ws.root, 'config.json'),
        why: 'changed',
        how: 'json',
      }));

    it('a transpiler (a require hook compiling .ts): the approved file runs as compiled, a changed one is refused', () =>
      shape({
        files: {
          'hook.js': `const fs = require('fs');\nrequire.extensions['.ts'] = (m, f) => m._compile(fs.readFileSync(f, 'utf8').replace(/: string/g, ''), f);\n`,
          'server.ts': `const word: string = 'typed';\nconsole.log(word);\n`,
        },
        args: ['--require', './hook.js', 'server.ts'],
        expectOut: /typed/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'server.ts'), `${cjsMarker(ws)}const word: string = 'changed';\n`),
        refused: (ws) => path.join(ws.root, 'server.ts'),
        why: 'changed',
        how: 'require',
      }));

    it("a transpiler on .js that wraps Node's handler and the module's _compile (as pirates, @babel/register do): the approved file runs as transformed, a changed one is refused", () =>
      shape({
        files: {
          'hook.js':
            `const Module = require('module'); const old = Module._extensions['.js'];\n` +
            `Module._extensions['.js'] = function (mod, filename) { if (!filename.includes('/lib/')) return old(mod, filename); const compile = mod._compile;\n` +
            `  mod._compile = function (code) { mod._compile = compile; return mod._compile(code.replace('WORD', "'transformed'"), filename); }; return old(mod, filename); };\n`,
          'server.js': `console.log(require('./lib/job.js'));\n`,
          'lib/job.js': `module.exports = WORD;\n`,
        },
        args: ['--require', './hook.js', 'server.js'],
        expectOut: /transformed/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/job.js'), `${cjsMarker(ws)}module.exports = WORD;\n`),
        refused: (ws) => path.join(ws.root, 'lib/job.js'),
        why: 'changed',
        how: 'require',
      }));

    it('red team 4 case 01: fs.readFileSync replaced by an "overlay" that serves another file\'s text for an approved file is refused, naming the approved file', () =>
      shape({
        files: {
          'server.js':
            `const fs = require('fs'), path = require('path'); const read = fs.readFileSync;\n` +
            `fs.readFileSync = function (p, o) { if (typeof p === 'string' && p.includes('/plugins/')) { const alt = path.join(__dirname, 'overrides', path.basename(p)); if (fs.existsSync(alt)) return read.call(fs, alt, o); } return read.apply(fs, arguments); };\n` +
            `console.log(require('./plugins/greet.js'));\n`,
          'plugins/greet.js': `module.exports = 'plugin v1';\n`,
          'overrides/README': 'overrides go here\n',
        },
        args: ['server.js'],
        expectOut: /plugin v1/,
        change: (ws) => writeFiles(ws.root, { 'overrides/greet.js': `${cjsMarker(ws)}module.exports = 'overlay';\n` }),
        refused: (ws) => path.join(ws.root, 'plugins/greet.js'),
        why: 'changed',
        how: 'require',
      }));

    it('red team 5 case 07: fs.openSync replaced by a read cache does not decide what the guard compares a transpiled file with', () =>
      shape({
        files: {
          'server.js':
            `const fs = require('fs'), path = require('path'); const open = fs.openSync;\n` +
            `fs.openSync = function (p, flags, mode) { if (typeof p === 'string' && (flags === 'r' || flags === undefined)) { const alt = path.join(__dirname, '.cache', path.basename(p)); if (alt !== p && fs.existsSync(alt)) return open.call(fs, alt, flags, mode); } return open.apply(fs, arguments); };\n` +
            `require.extensions['.ts'] = (m, f) => m._compile(fs.readFileSync(f, 'utf8').replace(/: string/g, ''), f);\n` +
            `console.log(require('./plugins/greet.ts')());\n`,
          'plugins/greet.ts': `module.exports = (): string => 'plugin v1';\n`,
          '.cache/greet.ts': `module.exports = (): string => 'plugin v1';\n`,
        },
        args: ['server.js'],
        expectOut: /plugin v1/,
        change: (ws) =>
          fs.writeFileSync(path.join(ws.root, 'plugins/greet.ts'), `${cjsMarker(ws)}module.exports = (): string => 'changed';\n`),
        refused: (ws) => path.join(ws.root, 'plugins/greet.ts'),
        why: 'changed',
        how: 'require',
      }));

    it("text compiled under a workspace name that is not a file (a virtual file system such as Yarn PnP's archives) is refused; node -e and -p still run", () => {
      const ws = workspace({
        'server.js':
          `const Module = require('module'), path = require('path');\n` +
          `const name = path.join(__dirname, '.yarn', 'cache', 'pkg.zip', 'node_modules', 'pkg', 'index.js');\n` +
          `const m = new Module(name); m.filename = name; m._compile(require('fs').readFileSync(path.join(__dirname, 'member.txt'), 'utf8'), name);\n` +
          `console.log('member', m.exports);\n`,
        'member.txt': `module.exports = 'served';\n`,
      });
      approve(ws);
      const r = run(ws, ['server.js']);
      assert.notEqual(r.status, 0, r.stdout);
      const named = path.join(ws.root, '.yarn/cache/pkg.zip/node_modules/pkg/index.js');
      assert.ok(
        r.stderr.includes(
          `mcp-gate-guard: refused to load ${named} (.yarn/cache/pkg.zip/node_modules/pkg/index.js): it is not in what was approved`,
        ),
        r.stderr,
      );
      assert.deepEqual(
        reports(ws).map((l) => [l.rel, l.why, l.how]),
        [['.yarn/cache/pkg.zip/node_modules/pkg/index.js', 'new', 'require']],
      );
      for (const args of [
        ['-e', "console.log('evaluated')"],
        ['-p', "'printed'"],
      ]) {
        const e = run(ws, args);
        assert.equal(e.status, 0, e.stderr);
        assert.match(e.stdout, /evaluated|printed/);
      }
    });

    it('an extensionless file', () =>
      shape({
        files: { 'server.js': `require('./bin/job'); console.log('served');\n`, 'bin/job': `console.log('job');\n` },
        args: ['server.js'],
        expectOut: /job\nserved/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'bin/job'), cjsMarker(ws)),
        refused: (ws) => path.join(ws.root, 'bin/job'),
        why: 'changed',
        how: 'require',
      }));

    it('ESM import() of a computed path', () =>
      shape({
        files: {
          'server.js': `import('./lib/' + ['job', 'mjs'].join('.')).then((m) => console.log('job', m.v), (e) => { console.error(e.message); process.exit(3); });\n`,
          'lib/job.mjs': 'export const v = 1;\n',
        },
        args: ['server.js'],
        expectOut: /job 1/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/job.mjs'), esmMarker(ws) + 'export const v = 2;\n'),
        refused: (ws) => path.join(ws.root, 'lib/job.mjs'),
        why: 'changed',
        how: 'import',
      }));

    it('ESM static import of a changed module', () =>
      shape({
        files: { 'server.mjs': `import { v } from './lib/dep.mjs';\nconsole.log('dep', v);\n`, 'lib/dep.mjs': 'export const v = 1;\n' },
        args: ['server.mjs'],
        expectOut: /dep 1/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/dep.mjs'), esmMarker(ws) + 'export const v = 2;\n'),
        refused: (ws) => path.join(ws.root, 'lib/dep.mjs'),
        why: 'changed',
        how: 'import',
      }));

    it('a new file that did not exist at approval', () =>
      shape({
        files: {
          'server.js': `const fs = require('fs'); if (fs.existsSync(__dirname + '/lib/extra.js')) require('./lib/extra.js'); console.log('served');\n`,
        },
        args: ['server.js'],
        expectOut: /served/,
        change: (ws) => writeFiles(ws.root, { 'lib/extra.js': cjsMarker(ws) }),
        refused: (ws) => path.join(ws.root, 'lib/extra.js'),
        why: 'new',
        how: 'require',
      }));

    it('a copy written into a scratch folder: an unchanged copy loads, a changed one is refused', () =>
      shape({
        files: {
          'server.js':
            `const fs = require('fs'), path = require('path'); const copy = path.join(process.env.SCRATCH, 'copy.js');\n` +
            `fs.copyFileSync(path.join(__dirname, 'lib/job.js'), copy); require(copy); console.log('served');\n`,
          'lib/job.js': `console.log('job');\n`,
        },
        args: ['server.js'],
        expectOut: /job\nserved/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/job.js'), cjsMarker(ws)),
        refused: (ws) => path.join(ws.scratch, 'copy.js'),
        why: 'scratch',
        how: 'require',
      }));

    it('JSON the server wrote where it writes (its HOME, /tmp) is its data: it loads by require and import; a .js it wrote is still refused', () => {
      const ws = workspace({
        'server.mjs':
          `import fs from 'node:fs'; import path from 'node:path'; import { createRequire } from 'node:module';\n` +
          `const f = path.join(process.env.SCRATCH, 'latest.json'); fs.writeFileSync(f, JSON.stringify({ at: Date.now(), v: 'cached' }));\n` +
          `const a = createRequire(import.meta.url)(f); const b = (await import(f + '?x', { with: { type: 'json' } })).default;\n` +
          `console.log(a.v, b.v);\n` +
          `const js = path.join(process.env.SCRATCH, 'job.cjs'); fs.writeFileSync(js, ${JSON.stringify(cjsMarker({ marker: '' } as Ws).replace("''", 'process.env.MARK'))});\n` +
          `try { createRequire(import.meta.url)(js); } catch (e) { console.log(e.code); }\n`,
      });
      approve(ws);
      const r = run(ws, ['server.mjs']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^cached cached\nERR_MCP_GATE_GUARD$/m);
      assert.deepEqual(
        reports(ws).map((l) => [path.basename(String(l.file)), l.why]),
        [['job.cjs', 'scratch']],
      );
    });

    it('a Worker started with execArgv: [] and env: {} is guarded', () =>
      shape({
        files: {
          'server.js':
            `const { Worker } = require('worker_threads'); const w = new Worker(__dirname + '/lib/worker.js', { execArgv: [], env: {} });\n` +
            `w.on('message', (m) => console.log('worker', m)); w.on('error', (e) => { console.error('worker failed:', e.message); process.exit(4); });\n`,
          'lib/worker.js': `const d = ['.', 'dep.js'].join('/'); require('worker_threads').parentPort.postMessage(require(d));\n`,
          'lib/dep.js': `module.exports = 'dep';\n`,
        },
        args: ['server.js'],
        expectOut: /worker dep/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/dep.js'), cjsMarker(ws) + `module.exports = 'evil';\n`),
        refused: (ws) => path.join(ws.root, 'lib/dep.js'),
        why: 'changed',
        how: 'require',
      }));

    it('a child `node lib/job.js` spawned with env: {} is guarded', () =>
      shape({
        files: {
          'server.js':
            `const r = require('child_process').spawnSync(process.execPath, ['lib/job.js'], { env: {}, encoding: 'utf8' });\n` +
            `process.stdout.write(r.stdout); process.stderr.write(r.stderr); process.exit(r.status ?? 5);\n`,
          'lib/job.js': `const d = ['.', 'dep.js'].join('/'); console.log('child', require(d), !!process.env.MCP_GATE_GUARD);\n`,
          'lib/dep.js': `module.exports = 'dep';\n`,
        },
        args: ['server.js'],
        expectOut: /child dep true/,
        change: (ws) => fs.writeFileSync(path.join(ws.root, 'lib/dep.js'), cjsMarker(ws) + `module.exports = 'evil';\n`),
        refused: (ws) => path.join(ws.root, 'lib/dep.js'),
        why: 'changed',
        how: 'require',
      }));

    it("exec check: what follows a node script on its command line is the script's data (a changed data file or one it wrote does not stop the start); the script itself and -r files are checked", () => {
      const ws = workspace({
        'server.js':
          `const cp = require('child_process'), fs = require('fs'), path = require('path');\n` +
          `const cache = path.join(process.env.SCRATCH, 'latest.json'); fs.writeFileSync(cache, '{"version":"9"}');\n` +
          `const r = cp.spawnSync(process.execPath, ['-r', './lib/pre.js', 'lib/check.js', cache, 'data/input.txt'], { encoding: 'utf8' });\n` +
          `process.stdout.write(r.stdout); process.stderr.write(r.stderr); process.exit(r.status ?? 7);\n`,
        'lib/pre.js': `// preloaded\n`,
        'lib/check.js': `console.log('checked', require('fs').readFileSync(process.argv[3], 'utf8').trim(), require(process.argv[2]).version);\n`,
        'data/input.txt': 'one\n',
      });
      approve(ws);
      fs.writeFileSync(path.join(ws.root, 'data/input.txt'), 'two\n');
      let r = run(ws, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^checked two 9$/m);
      assert.deepEqual(reports(ws), []);
      fs.writeFileSync(path.join(ws.root, 'lib/pre.js'), cjsMarker(ws));
      r = run(ws, ['server.js']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'lib/pre.js')}`), r.stderr);
      assert.equal(fs.existsSync(ws.marker), false);
    });

    it('exec check: a changed script named in a spawned command line is refused before the start', () => {
      const ws = workspace({
        'server.js': `const r = require('child_process').spawnSync('/bin/sh', ['lib/job.sh'], { encoding: 'utf8' }); process.stdout.write(r.stdout); process.exit(r.error ? 7 : 0);\n`,
        'lib/job.sh': 'echo job\n',
      });
      approve(ws);
      let r = run(ws, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^job$/m);
      fs.writeFileSync(path.join(ws.root, 'lib/job.sh'), `echo ran > ${JSON.stringify(ws.marker)}\n`);
      r = run(ws, ['server.js']);
      assert.notEqual(r.status, 0);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'lib/job.sh')}`), r.stderr);
      assert.equal(reports(ws)[0].how, 'exec');
      assert.equal(fs.existsSync(ws.marker), false, 'the changed script ran');
    });

    it('a shell started through find -exec or a wrapper is checked as if started itself: its script, and what it reads (red team 12, 05c)', () => {
      // find was neither a program that runs its arguments nor one that reads its own files: `find … -exec sh run.sh`
      // ran a changed run.sh, and `find … -exec sh -c '. lib.sh'` a changed lib.sh, under an approval.
      const ws = workspace({
        'server.js': [
          "const { spawnSync } = require('child_process');",
          'const argv = {',
          "  script: ['find', 'run.sh', '-maxdepth', '0', '-exec', 'sh', 'run.sh', ';'],",
          "  sourced: ['find', 'run.sh', '-maxdepth', '0', '-exec', 'sh', '-c', '. ./lib.sh; greet', ';'],",
          "  wrapped: ['stdbuf', '-oL', 'sh', 'run.sh'],",
          "  plain: ['find', '.', '-maxdepth', '1', '-name', '*.md'],",
          '}[process.argv[2]];',
          "const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8' });",
          "process.stdout.write(r.stdout || ''); process.exit(r.error ? 7 : r.status);",
          '',
        ].join('\n'),
        'run.sh': 'echo approved-run\n',
        'lib.sh': 'greet() { echo approved-lib; }\n',
        'README.md': '# r\n',
      });
      approve(ws);
      for (const m of ['script', 'sourced', 'wrapped', 'plain']) assert.equal(run(ws, ['server.js', m]).status, 0, m);
      fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
      assert.equal(
        run(ws, ['server.js', 'plain']).status,
        0,
        'find alone reads no workspace file as code: an edit elsewhere does not stop it',
      );
      fs.writeFileSync(path.join(ws.root, 'run.sh'), `echo ran > ${JSON.stringify(ws.marker)}\n`);
      fs.writeFileSync(path.join(ws.root, 'lib.sh'), `greet() { echo ran > ${JSON.stringify(ws.marker)}; }\n`);
      for (const m of ['script', 'sourced', 'wrapped']) {
        const r = run(ws, ['server.js', m]);
        assert.equal(fs.existsSync(ws.marker), false, `${m}: the change ran\n${r.stderr}`);
        assert.match(r.stderr, /mcp-gate-guard: refused to load \S+\/(run|lib)\.sh/, m);
      }
    });

    it('a program that reads its own files does not start while a workspace folder cannot be listed (deeper than PATH_MAX)', () => {
      // The walk skipped folders it could not list: a new perl file deeper than PATH_MAX, reached by relative chdir, ran.
      const seg = 'd'.repeat(200);
      const ws = workspace({
        'server.js':
          "const r = require('child_process').spawnSync('perl', ['run.pl'], { stdio: 'inherit' });\nprocess.exit(r.status ?? 7);\n",
        'run.pl': `for (1 .. 22) { chdir '${seg}' if -d '${seg}'; }\ndo './x.pl' if -f 'x.pl';\n`,
      });
      approve(ws);
      let r = run(ws, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      const make = spawnSync(
        'perl',
        [
          '-e',
          `for (1 .. 22) { mkdir '${seg}'; chdir '${seg}' or die } open(my $f, '>', 'x.pl') or die; print $f "open(my \\$m, q(>), q(${ws.marker})); print \\$m 1;\\n";`,
        ],
        { cwd: ws.root, encoding: 'utf8' },
      );
      assert.equal(make.status, 0, make.stderr);
      r = run(ws, ['server.js']);
      spawnSync('perl', ['-MFile::Path=rmtree', '-e', `rmtree('${seg}')`], { cwd: ws.root });
      assert.equal(fs.existsSync(ws.marker), false, `the new script ran:\n${r.stderr}`);
      assert.match(
        r.stderr,
        /mcp-gate-guard: refused to load \S+ \(\S+\): a folder of the workspace that cannot be listed \(ENAMETOOLONG\), so what it holds cannot be compared with the approval: make it readable, or move it out of the workspace/,
      );
      assert.deepEqual(
        reports(ws).map((l) => [l.why, /cannot be listed/.test(String(l.rule))]),
        [['sink', true]],
      );
    });

    it('a program that reads files no guard sees (sh running a script that sources another) starts only while the workspace is as approved; `sh -c` running node is fine', () => {
      const ws = workspace({
        'server.js':
          "const { spawnSync } = require('child_process');\nconst how = process.argv[2];\nconst r = how === 'node' ? spawnSync('/bin/sh', ['-c', 'node lib/job.js'], { encoding: 'utf8' }) : spawnSync('/bin/sh', ['lib/run.sh'], { encoding: 'utf8' });\nprocess.stdout.write(r.stdout || ''); process.exit(r.error ? 7 : 0);\n",
        'lib/run.sh': '. "$(dirname "$0")/lib.sh"\ngreet\n',
        'lib/lib.sh': 'greet() { echo approved-lib; }\n',
        'lib/job.js': "console.log('job');\n",
      });
      approve(ws);
      let r = run(ws, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /approved-lib/);
      fs.writeFileSync(path.join(ws.root, 'lib/lib.sh'), `greet() { echo ran > ${JSON.stringify(ws.marker)}; }\n`);
      r = run(ws, ['server.js']);
      assert.notEqual(r.status, 0);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'lib/lib.sh')}`), r.stderr);
      assert.equal(reports(ws)[0].how, 'spawn sh (it reads workspace files no guard sees)');
      assert.equal(fs.existsSync(ws.marker), false, 'the sourced change ran');
      // `sh -c 'node …'`: node runs under the guard, sh reads nothing else: an edit elsewhere does not stop it.
      fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
      r = run(ws, ['server.js', 'node']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^job$/m);
    });

    it('data is not code: `wc -l README.md` after a README edit runs; the same file handed to sh is refused', () => {
      const ws = workspace({
        'server.js':
          "const { spawnSync } = require('child_process');\nconsole.log('lines', spawnSync('wc', ['-l', 'README.md'], { encoding: 'utf8' }).stdout.split(' ')[0]);\nif (process.argv[2] === 'sh') spawnSync('sh', ['README.md'], { stdio: 'inherit' });\n",
      });
      approve(ws);
      fs.writeFileSync(path.join(ws.root, 'README.md'), '# server\nedited\n');
      const r = run(ws, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /lines 2/);
      assert.deepEqual(reports(ws), []);
      const sh = run(ws, ['server.js', 'sh']);
      assert.notEqual(sh.status, 0);
      assert.ok(sh.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'README.md')}`), sh.stderr);
    });

    it('a manifest that cannot be parsed refuses every workspace load (fail closed)', () => {
      const ws = workspace({ 'server.js': `require('fs').writeFileSync(process.env.MARK, 'ran');\n` });
      fs.writeFileSync(ws.manifest, '{ "version": 1, "root": ' + JSON.stringify(ws.root) + ', "files": {');
      const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest, MARK: ws.marker };
      delete env.NODE_OPTIONS;
      const r = spawnSync(process.execPath, ['--require', GUARD, 'server.js'], { cwd: ws.root, env, encoding: 'utf8' });
      assert.notEqual(r.status, 0);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'server.js')}`), r.stderr);
      assert.match(r.stderr, /the approval manifest could not be read/);
      assert.equal(fs.existsSync(ws.marker), false);
      // A program that reads workspace files no guard sees does not start either: what was approved is not known.
      const sh = spawnSync(
        process.execPath,
        ['--require', GUARD, '-e', `require('child_process').spawnSync('sh', ['-c', 'make -s; echo ran > ' + process.env.MARK])`],
        { cwd: ws.root, env, encoding: 'utf8' },
      );
      assert.notEqual(sh.status, 0);
      assert.match(sh.stderr, /the approval manifest could not be read/);
      assert.equal(fs.existsSync(ws.marker), false, 'the shell ran');
    });

    it('a load through a workspace link to a file outside: the approved link loads; a retargeted or new link is refused before the code runs', () => {
      const elsewhere = fs.realpathSync(tempDir('mcp-gate-guard-clone-'));
      const ws0 = workspace({});
      writeFiles(elsewhere, {
        'ok.js': `module.exports = () => 'plugin ok';\n`,
        'evil.js': `${cjsMarker(ws0)}module.exports = () => 'evil';\n`,
        'pkg/index.js': `module.exports = 'linked pkg';\n`,
        'pkg2/index.js': `${cjsMarker(ws0)}module.exports = 'other pkg';\n`,
      });
      writeFiles(ws0.root, {
        'server.js': `const fs = require('fs'), path = require('path');\nconst d = path.join(__dirname, 'plugins');\nfor (const n of fs.readdirSync(d).sort()) console.log(require(path.join(d, n))());\nconsole.log(require('linked'));\n`,
      });
      fs.mkdirSync(path.join(ws0.root, 'plugins'));
      fs.mkdirSync(path.join(ws0.root, 'node_modules'));
      fs.symlinkSync(path.join(elsewhere, 'ok.js'), path.join(ws0.root, 'plugins', 'a.js'));
      fs.symlinkSync(path.join(elsewhere, 'pkg'), path.join(ws0.root, 'node_modules', 'linked'));
      approve(ws0);
      let r = run(ws0, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /plugin ok\nlinked pkg/);
      assert.deepEqual(reports(ws0), []);

      const relink = (at: string, target: string): void => {
        fs.rmSync(at, { force: true });
        fs.symlinkSync(target, at);
      };
      const link = path.join(ws0.root, 'plugins', 'a.js');
      relink(link, path.join(elsewhere, 'evil.js'));
      r = run(ws0, ['server.js']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${link} (plugins/a.js): it changed since approval`), r.stderr);
      assert.equal(fs.existsSync(ws0.marker), false, 'the code behind the retargeted link ran');
      assert.deepEqual(
        reports(ws0).map((l) => [l.rel, l.why, l.how]),
        [['plugins/a.js', 'changed', 'require through a symbolic link']],
      );

      relink(link, path.join(elsewhere, 'ok.js'));
      relink(path.join(ws0.root, 'plugins', 'b.js'), path.join(elsewhere, 'evil.js'));
      r = run(ws0, ['server.js']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.match(r.stderr, /plugins\/b\.js\): it is not in what was approved/);
      assert.equal(fs.existsSync(ws0.marker), false);

      // A bare name through node_modules/<pkg>, a link (npm link) retargeted: refused, in require and in import.
      fs.rmSync(path.join(ws0.root, 'plugins', 'b.js'));
      const pkg = path.join(ws0.root, 'node_modules', 'linked');
      relink(pkg, path.join(elsewhere, 'pkg2'));
      r = run(ws0, ['server.js']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.match(r.stderr, /node_modules\/linked\): it changed since approval/);
      assert.equal(fs.existsSync(ws0.marker), false);
      relink(pkg, path.join(elsewhere, 'pkg'));
      writeFiles(ws0.root, { 'esm.mjs': `const m = await import('linked');\nconsole.log(m.default);\n` });
      approve(ws0);
      r = run(ws0, ['esm.mjs']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /linked pkg/);
      relink(pkg, path.join(elsewhere, 'pkg2'));
      r = run(ws0, ['esm.mjs']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.match(r.stderr, /node_modules\/linked\): it changed since approval/);
      assert.equal(fs.existsSync(ws0.marker), false);
    });

    it("on a Node with module.registerHooks (VS Code's, kept by npm run vscode-host): a server's own load hook returning CommonJS source for a changed plugin is refused; for an approved one it runs", function () {
      const node = vscodeNode();
      if (!node) this.skip(); // npm run vscode-host (part of npm run test:all) installs it
      const ws = workspace({
        'server.mjs':
          `import { registerHooks } from 'node:module'; import fs from 'node:fs'; import { fileURLToPath } from 'node:url';\n` +
          `registerHooks({ load(url, ctx, next) { const r = next(url, ctx); if (url.includes('/plugins/') && r.format === 'commonjs') return { format: 'commonjs', source: fs.readFileSync(fileURLToPath(url), 'utf8').replace('/*banner*/', ''), shortCircuit: true }; return r; } });\n` +
          `const m = await import('./plugins/p.cjs'); console.log(m.default());\n`,
        'plugins/p.cjs': `/*banner*/ module.exports = () => 'plugin v1';\n`,
      });
      approve(ws);
      let r = run(ws, ['server.mjs'], node);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /plugin v1/);
      fs.writeFileSync(path.join(ws.root, 'plugins/p.cjs'), `/*banner*/ ${cjsMarker(ws)} module.exports = () => 'changed';\n`);
      r = run(ws, ['server.mjs'], node);
      assert.notEqual(r.status, 0, r.stdout);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'plugins/p.cjs')}`), r.stderr);
      assert.equal(fs.existsSync(ws.marker), false);
    });

    it("Node's own modules and files outside root and scratch load normally, unapproved", () => {
      const elsewhere = fs.realpathSync(tempDir('mcp-gate-guard-elsewhere-'));
      writeFiles(elsewhere, { 'lib.js': `module.exports = 'outside';\n` });
      const ws = workspace({
        'server.js': `const os = require('node:os'), p = require('path'); console.log(typeof os.cpus, require(${JSON.stringify(path.join(elsewhere, 'lib.js'))}), p.sep);\n`,
      });
      approve(ws);
      const r = run(ws, ['server.js']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /function outside \//);
      assert.doesNotMatch(r.stderr, /mcp-gate-guard/);
      const e = run(ws, ['-e', `console.log(require('node:path').join('a', 'b'))`]);
      assert.equal(e.status, 0, e.stderr);
      assert.equal(e.stdout.trim(), 'a/b');
    });
  });

describe('Node load guard: the real binary and OpenSSL configuration (red team 7n, cases 01, 02, 06, 08)', function () {
  after(cleanupTemp);
  const REAL = fs.realpathSync(process.execPath);

  /** A server behind a wrapper, as in MCP Gate's sandbox: the wrapper marks what it starts with WRAPPED=1. */
  function wrapped(ws: Ws, code: string): { status: number | null; stdout: string; stderr: string } {
    const wrapper = path.join(ws.out, 'node');
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh\nWRAPPED=1; export WRAPPED\nexec ${JSON.stringify(REAL)} --expose-internals --require ${JSON.stringify(GUARD)} "$@"\n`,
      { mode: 0o755 },
    );
    fs.writeFileSync(path.join(ws.root, 'server.js'), code);
    approve(ws);
    const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest, MCP_GATE_GUARD_EXEC: wrapper };
    delete env.NODE_OPTIONS;
    delete env.WRAPPED;
    const r = spawnSync(REAL, ['--expose-internals', '--require', GUARD, 'server.js'], {
      cwd: ws.root,
      env,
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  const attempt = (label: string, body: string): string =>
    `try { console.log(${JSON.stringify(label)}, ${body}); } catch (e) { console.log(${JSON.stringify(label)}, 'ERR', e.code, String(e.message).split('\\n')[0]); }\n`;
  const child = "String(require('node:child_process').execFileSync(";

  it('process.argv[0] names the wrapper; the real binary as a program is started through it, as an argument it is refused', function () {
    if (process.platform !== 'linux') this.skip();
    const ws = workspace({});
    const real = JSON.stringify(REAL);
    const show = JSON.stringify(['-e', 'process.stdout.write(String(process.env.WRAPPED))']);
    const r = wrapped(
      ws,
      attempt('argv0', `process.argv[0] === process.env.MCP_GATE_GUARD_EXEC && process.execPath === process.argv[0]`) +
        attempt('real', `${child}${real}, ${show}, { env: {} }))`) +
        attempt('procexe', `${child}'/proc/self/exe', ${show}, { env: {} }))`) +
        attempt('setpriv', `${child}'env', ['-i', ${real}, '-e', '1']))`) +
        attempt('shell', `${child}'/bin/sh', ['-c', ${real} + ' -e 1']))`) +
        attempt('procpid', `${child}'/bin/sh', ['-c', 'exec /proc/$PPID/exe -e 1']))`),
    );
    const out = Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => [l.split(' ')[0], l.slice(l.indexOf(' ') + 1)]),
    );
    assert.equal(out.argv0, 'true', r.stdout + r.stderr);
    assert.equal(out.real, '1', r.stdout + r.stderr);
    assert.equal(out.procexe, '1', r.stdout + r.stderr);
    for (const k of ['setpriv', 'shell', 'procpid'])
      assert.match(out[k], /ERR ERR_MCP_GATE_GUARD .*real binary.*without the load guard/, `${k}: ${r.stdout}`);
  });

  it('process.execve (Node 22.15+) of the real binary with a cleared environment goes through the wrapper and keeps the guard', function () {
    if (typeof (process as unknown as { execve?: unknown }).execve !== 'function') this.skip();
    const ws = workspace({});
    const r = wrapped(
      ws,
      `if (!process.env.AGAIN) process.execve(${JSON.stringify(REAL)}, [${JSON.stringify(REAL)}, __filename], { AGAIN: '1' });\nconsole.log('again', process.env.WRAPPED, !!process.env.MCP_GATE_GUARD, process.execArgv.includes(${JSON.stringify(GUARD)}));\n`,
    );
    assert.equal(r.stdout.trim(), 'again 1 true true', r.stdout + r.stderr);
  });

  it('a child gets no OPENSSL_CONF / OPENSSL_MODULES / OPENSSL_ENGINES, and NODE_OPTIONS or arguments with --openssl-config are refused', () => {
    const ws = workspace({});
    const show = JSON.stringify([
      '-e',
      "process.stdout.write(['OPENSSL_CONF','OPENSSL_MODULES','OPENSSL_ENGINES'].map((k) => process.env[k] ?? '-').join(','))",
    ]);
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      attempt(
        'env',
        `${child}process.execPath, ${show}, { env: { OPENSSL_CONF: '/x.cnf', OPENSSL_MODULES: '/m', OPENSSL_ENGINES: '/e' } }))`,
      ) +
        attempt('opts', `${child}process.execPath, ['-e', '1'], { env: { NODE_OPTIONS: '--openssl-config=/x.cnf' } }))`) +
        attempt('arg', `${child}process.execPath, ['--openssl-shared-config', '-e', '1']))`),
    );
    approve(ws);
    FLAGS = ['--expose-internals'];
    const r = run(ws, ['server.js']);
    const out = Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => [l.split(' ')[0], l.slice(l.indexOf(' ') + 1)]),
    );
    assert.equal(out.env, '-,-,-', r.stdout + r.stderr);
    assert.match(out.opts, /ERR ERR_MCP_GATE_GUARD .*--openssl-config=\/x\.cnf.*before the load guard/, r.stdout);
    assert.match(out.arg, /ERR ERR_MCP_GATE_GUARD .*--openssl-shared-config.*before the load guard/, r.stdout);
  });

  it("the sandbox's node wrapper unsets OPENSSL_CONF/MODULES/ENGINES and refuses to start with --openssl-config in NODE_OPTIONS (npm's node-options)", async function () {
    if (process.platform !== 'linux') this.skip();
    const ws = workspace({});
    const store = fs.realpathSync(tempDir('mcp-gate-guard-store-'));
    const ref = await saveManifest(store, await takeManifest(ws.root));
    const g = prepareGuard({
      server: 's',
      project: ws.root,
      storeDir: store,
      manifest: ref,
      guardDir: path.dirname(GUARD),
      executable: REAL,
      args: ['server.js'],
      env: {},
      contained: true,
      home: ws.scratch,
      extraWrite: [],
      closure: [],
    });
    try {
      const w = g.binds.find((b) => b.target === REAL)!.source;
      assert.match(fs.readFileSync(w, 'utf8'), /^unset OPENSSL_CONF OPENSSL_MODULES OPENSSL_ENGINES$/m);
      for (const opts of ['--openssl-config=/x.cnf', '--max-old-space-size=100 --openssl-shared-config']) {
        const r = spawnSync(w, ['-e', '1'], { env: { ...process.env, NODE_OPTIONS: opts }, encoding: 'utf8' });
        assert.equal(r.status, 126, r.stderr);
        assert.match(r.stderr, /node not started: NODE_OPTIONS or its arguments name --openssl-config/);
      }
      const r = spawnSync(w, ['--openssl-config=/x.cnf', '-e', '1'], { encoding: 'utf8' });
      assert.equal(r.status, 126, r.stderr);
    } finally {
      g.cleanup();
    }
  });
});
