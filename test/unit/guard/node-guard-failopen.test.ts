// The Node.js load guard (dist/guard/node-guard.cjs) when its own check cannot run as written: an error in the check
// (a stack overflow at a deep recursion, a realpath that fails) or a built-in the guard uses that approved code
// replaced before loading a changed file. Each must refuse the changed file (fail closed), never let it run; an
// approved file still loads.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir, vscodeNode, writeFiles } from '../helpers';

const GUARD = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');

interface Ws {
  root: string;
  manifest: string;
  report: string;
}

/** A workspace with `files`, approved as it is (the manifest of every file's sha256). */
function approved(files: Record<string, string>): Ws {
  const root = fs.realpathSync(tempDir('mcp-gate-guard-ws-'));
  const out = fs.realpathSync(tempDir('mcp-gate-guard-out-'));
  const scratch = fs.realpathSync(tempDir('mcp-gate-guard-scratch-'));
  writeFiles(root, files);
  const sums: Record<string, string> = {};
  for (const rel of Object.keys(files))
    sums[rel] = createHash('sha256')
      .update(fs.readFileSync(path.join(root, rel)))
      .digest('hex');
  const ws = { root, manifest: path.join(out, 'manifest.json'), report: path.join(out, 'report.jsonl') };
  fs.writeFileSync(ws.manifest, JSON.stringify({ version: 1, root, files: sums, scratch: [scratch], report: ws.report }));
  return ws;
}

function run(ws: Ws, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, ['--require', GUARD, ...args], {
    cwd: ws.root,
    env,
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 1 << 28,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The changed file: it says it ran by a global it sets (no call: it needs no stack of its own). */
const CHANGED = 'globalThis.RAN = (globalThis.RAN || 0) + 1; module.exports = 2;\n';
const APPROVED_JOB = 'module.exports = 1;\n';

describe('Node load guard: fail closed when its own check cannot run (errors, replaced built-ins)', function () {
  this.timeout(120_000);
  before(() => {
    const b = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-guard.mjs')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(b.status, 0, b.stderr);
  });
  after(cleanupTemp);

  it('a changed file required at every recursion depth near the stack limit never runs (the guard realpath overflowing is no "not a file")', () => {
    const ws = approved({
      'server.js':
        "function at(n, f) { return n > 0 ? at(n - 1, f) : f(); }\nfunction pad() { return require('./lib/job.js'); }\n" +
        "const kind = (d, k) => { try { at(d, () => pad.apply(null, new Array(k))); return 'ok'; } catch (e) { return e.code || e.name; } };\n" +
        "let lo = 0, hi = 20000; while (hi - lo > 1) { const m = (lo + hi) >> 1; if (kind(m, 0) === 'RangeError') hi = m; else lo = m; }\n" +
        'const seen = {};\nfor (let d = lo + 8; d > lo - 16 && !globalThis.RAN; d--) for (let k = 0; k < 160 && !globalThis.RAN; k += 2) { const r = kind(d, k); seen[r] = (seen[r] || 0) + 1; }\n' +
        "console.log('ran', globalThis.RAN || 0, JSON.stringify(seen));\n",
      'lib/job.js': APPROVED_JOB,
    });
    let r = run(ws, ['server.js']);
    assert.match(r.stdout, /ran 0 .*"ok"/, r.stdout + r.stderr);
    fs.writeFileSync(path.join(ws.root, 'lib/job.js'), CHANGED);
    r = run(ws, ['server.js']);
    assert.match(r.stdout, /ran 0 /, r.stdout + r.stderr);
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD/, r.stdout);
  });

  it('a program that reads workspace files (sh) is not started while a folder of the workspace cannot be listed (deeper than PATH_MAX): a new script there never runs', () => {
    const d = 'd'.repeat(200);
    const ws = approved({
      'run.sh': `for i in $(seq 22); do cd -P ${d} || exit 3; done\n. ./x.sh\n`,
      'server.js':
        "const r = require('child_process').spawnSync('sh', ['run.sh'], { encoding: 'utf8' });\n" +
        "console.log('status', r.status, r.error ? r.error.code : '', String(r.stdout).trim());\n",
    });
    let r = run(ws, ['server.js']);
    assert.match(r.stdout, /status 3 /, r.stdout + r.stderr); // approved: run.sh starts (its cd fails: no folder yet)
    // The change: a new script 22 folders of 200 characters down (its path is longer than PATH_MAX, 4096).
    const made = spawnSync(
      'sh',
      ['-c', `for i in $(seq 22); do mkdir ${d} && cd -P ${d} || exit 1; done; echo 'echo DEEP-CODE-RAN' > x.sh`],
      {
        cwd: ws.root,
      },
    );
    assert.equal(made.status, 0, String(made.stderr));
    try {
      r = run(ws, ['server.js']);
      assert.doesNotMatch(r.stdout, /DEEP-CODE-RAN/, r.stdout + r.stderr);
      assert.match(
        r.stderr,
        /mcp-gate-guard: refused to load .*a folder of the workspace that cannot be listed \(ENAMETOOLONG\)/,
        r.stderr,
      );
    } finally {
      spawnSync('rm', ['-rf', path.join(ws.root, d)]);
    }
  });

  // Approved code that replaces a built-in the guard uses, then loads a changed file (red team 9n): each once, the
  // approved job loading as before.
  const POLLUTIONS: Record<string, string> = {
    'String.prototype.startsWith': `const o = String.prototype.startsWith; String.prototype.startsWith = function (s, i) { return s === ROOT ? false : o.call(this, s, i); };`,
    'crypto.hash': `require('crypto').hash = () => WANT;`,
    'Hash.prototype.digest': `const H = Object.getPrototypeOf(require('crypto').createHash('sha256')); const d = H.digest; H.digest = function (e) { d.call(this, e); return WANT; };`,
    'Set.prototype.has': `const o = Set.prototype.has; Set.prototype.has = function (x) { return typeof x === 'string' && x.includes('\\0') ? true : o.call(this, x); };`,
    'Buffer.concat, under a require hook (the disk read of a transpiled file)': `const o = Buffer.concat; Buffer.concat = function (l, t) { const r = o.call(this, l, t); return r.toString().includes('RAN') ? Buffer.from(APPROVED) : r; }; const fs = require('fs'); require.extensions['.js'] = (m, f) => m._compile(fs.readFileSync(f, 'utf8'), f);`,
    'Buffer.concat and Buffer.prototype.toString (the disk read of a file Node read)': `const o = Buffer.concat; Buffer.concat = function (l, t) { const r = o.call(this, l, t); return r.toString().includes('RAN') ? Buffer.from(APPROVED) : r; }; const s = Buffer.prototype.toString; Buffer.prototype.toString = function (...a) { const t = s.apply(this, a); return t === APPROVED ? require('fs').readFileSync(JOB, 'utf8') : t; };`,
  };

  it('a built-in the guard uses, replaced by approved code before it loads a changed file, does not decide the verdict', () => {
    const ws = approved({
      'server.js':
        "const path = require('path'); const ROOT = __dirname + path.sep; const JOB = path.join(__dirname, 'lib/job.js');\n" +
        `const APPROVED = ${JSON.stringify(APPROVED_JOB)}; const WANT = require('crypto').createHash('sha256').update(APPROVED).digest('hex');\n` +
        `const which = process.argv[2];\n` +
        Object.entries(POLLUTIONS)
          .map(([name, code]) => `if (which === ${JSON.stringify(name)}) { ${code} }\n`)
          .join('') +
        "let v; try { v = require('./lib/job.js'); } catch (e) { v = e.code; }\nconsole.log('job', v, 'ran', globalThis.RAN || 0);\n",
      'lib/job.js': APPROVED_JOB,
    });
    for (const name of Object.keys(POLLUTIONS)) {
      const r = run(ws, ['server.js', name]);
      assert.match(r.stdout, /job 1 ran 0/, `${name}: ${r.stdout}${r.stderr}`);
    }
    fs.writeFileSync(path.join(ws.root, 'lib/job.js'), CHANGED);
    for (const name of Object.keys(POLLUTIONS)) {
      const r = run(ws, ['server.js', name]);
      assert.match(r.stdout, /job ERR_MCP_GATE_GUARD ran 0/, `${name}: ${r.stdout}${r.stderr}`);
    }
  });

  // A file the guard hashes in pieces (a program a spawn runs, an addon) goes through crypto's native hash handle:
  // approved code can reach the handle's prototype from any hash it makes (red team 17), or put an accessor where
  // the handle goes. Either way the changed script must not run.
  it("the hash handle's digest replaced, or an accessor put where the handle goes, does not let a changed program run", () => {
    const HANDLE = `const h0 = require('crypto').createHash('sha256'); const k = Object.getOwnPropertySymbols(h0).find((s) => String(s).includes('Handle'));`;
    const ws = approved({
      'server.js':
        `const m = JSON.parse(require('fs').readFileSync(process.env.MCP_GATE_GUARD, 'utf8')); const sums = new Set(Object.values(m.files)); ${HANDLE}\n` +
        "if (process.argv[2] === 'digest') { const p = Object.getPrototypeOf(h0[k]); const d = p.digest; p.digest = function (e) { const r = d.call(this, e); return sums.has(r) ? r : m.files['tools/run.sh']; }; }\n" +
        "if (process.argv[2] === 'accessor') { const H = Object.getPrototypeOf(h0); const real = require('crypto').createHash('sha256')[k]; Object.defineProperty(H, k, { configurable: true, get() { return real; }, set() {} }); }\n" +
        "let out; try { const r = require('child_process').spawnSync(require('path').join(__dirname, 'tools/run.sh'), [], { encoding: 'utf8' });\n" +
        "out = r.error ? r.error.code : String(r.stdout).trim(); } catch (e) { out = e.code; }\nconsole.log('spawn', out);\n",
      'tools/run.sh': '#!/bin/sh\necho approved-script\n',
    });
    fs.chmodSync(path.join(ws.root, 'tools/run.sh'), 0o755);
    for (const how of ['digest', 'accessor']) {
      const r = run(ws, ['server.js', how]);
      assert.match(
        r.stdout,
        how === 'digest' ? /spawn approved-script/ : /spawn (approved-script|ERR_MCP_GATE_GUARD)/,
        `${how}: ${r.stdout}${r.stderr}`,
      );
    }
    fs.writeFileSync(path.join(ws.root, 'tools/run.sh'), '#!/bin/sh\necho CHANGED-RAN\n');
    for (const how of ['digest', 'accessor']) {
      const r = run(ws, ['server.js', how]);
      assert.doesNotMatch(r.stdout, /CHANGED-RAN/, `${how}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /spawn ERR_MCP_GATE_GUARD/, `${how}: ${r.stdout}${r.stderr}`);
    }
  });

  // The native spawn under child_process, reached by process.binding('process_wrap') (red team 17): on Node 20 and
  // 22 it takes an options object, on Node 24 its fields one by one; both are checked.
  it("a changed script started through process.binding('process_wrap') directly is refused, as through child_process", () => {
    const ws = approved({
      'server.js':
        "const { Process } = process.binding('process_wrap'); const p = new Process(); p.onexit = (c) => console.log('exit', c);\n" +
        "const file = '/bin/sh', args = ['sh', require('path').join(__dirname, 'tools/run.sh')], stdio = [{ type: 'ignore' }, { type: 'inherit', fd: 1 }, { type: 'ignore' }];\n" +
        "let out; try { out = process.version.startsWith('v2') && +process.version.slice(1, 3) >= 24 ? p.spawn(file, args, '/', [], stdio, 0) : p.spawn({ file, args, cwd: '/', envPairs: [], stdio }); } catch (e) { out = e.code; }\n" +
        "console.log('spawn', out);\n",
      'tools/run.sh': 'echo approved-script\n',
    });
    const nodes = [process.execPath, vscodeNode()].filter((n): n is string => !!n);
    const runWith = (node: string) => {
      const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest };
      delete env.NODE_OPTIONS;
      const r = spawnSync(node, ['--expose-internals', '--require', GUARD, 'server.js'], {
        cwd: ws.root,
        env,
        encoding: 'utf8',
        timeout: 60_000,
      });
      return `${r.stdout}${r.stderr}`;
    };
    for (const node of nodes) assert.match(runWith(node), /approved-script/, node);
    fs.writeFileSync(path.join(ws.root, 'tools/run.sh'), 'echo CHANGED-RAN\n');
    for (const node of nodes) {
      const out = runWith(node);
      assert.doesNotMatch(out, /CHANGED-RAN/, `${node}: ${out}`);
      assert.match(out, /spawn ERR_MCP_GATE_GUARD/, `${node}: ${out}`);
    }
  });

  it('text handed to _compile as an object (toString says another text each time; Module.wrap replaced) is checked as the string compiled', () => {
    const ws = approved({
      'server.js':
        "const Module = require('module'); const path = require('path'); const fs = require('fs');\n" +
        'const w = Module.wrap; Module.wrap = function (s) { return w(String(s)); };\n' +
        "const f = path.join(__dirname, 'lib/job.js');\n" +
        'const content = { toString() { return fs.readFileSync(f, "utf8"); } };\n' +
        'const m = new Module(f, module); m.filename = f; m.paths = Module._nodeModulePaths(path.dirname(f));\n' +
        "let v; try { m._compile(content, f); v = m.exports; } catch (e) { v = e.code; }\nconsole.log('job', v, 'ran', globalThis.RAN || 0);\n",
      'lib/job.js': APPROVED_JOB,
    });
    let r = run(ws, ['server.js']);
    assert.match(r.stdout, /job 1 ran 0/, r.stdout + r.stderr);
    fs.writeFileSync(path.join(ws.root, 'lib/job.js'), CHANGED);
    r = run(ws, ['server.js']);
    assert.match(r.stdout, /job ERR_MCP_GATE_GUARD ran 0/, r.stdout + r.stderr);
  });

  it('a program or a native addon named by a relative path whose absolute form is longer than PATH_MAX is refused, not skipped as missing', function () {
    const cc = ['cc', 'gcc'].find((c) => spawnSync(c, ['--version']).status === 0);
    const d = 'd'.repeat(200);
    const two = `${d}/${d}`;
    const ws = approved({
      [`${two}/.keep`]: '',
      'server.js':
        `process.chdir(${JSON.stringify(two)});\nconst rel = './' + ${JSON.stringify(d + '/')}.repeat(20);\n` +
        "try { const r = require('child_process').spawnSync(rel + 'x.sh', [], { encoding: 'utf8' });\n" +
        "console.log('spawn', r.error ? r.error.code : r.status, String(r.stdout).trim()); } catch (e) { console.log('spawn', e.code); }\n" +
        "try { process.dlopen({ exports: {} }, rel + 'evil.node'); } catch (e) { console.log('dlopen', e.code); }\n",
    });
    let r = run(ws, ['server.js']);
    assert.match(r.stdout, /spawn ENOENT/, r.stdout + r.stderr);
    assert.match(r.stdout, /dlopen ERR_DLOPEN_FAILED/, r.stdout + r.stderr);
    const marker = path.join(path.dirname(ws.manifest), 'NATIVE-RAN');
    const chain = `for i in $(seq 20); do mkdir ${d} && cd -P ${d} || exit 1; done; printf '#!/bin/sh\\necho SCRIPT-RAN\\n' > x.sh; chmod +x x.sh`;
    const made = spawnSync('sh', ['-c', `cd -P ${d} && cd -P ${d} && ${chain}`], { cwd: ws.root });
    assert.equal(made.status, 0, String(made.stderr));
    if (cc) {
      const c = path.join(path.dirname(ws.manifest), 'evil.c');
      fs.writeFileSync(
        c,
        `#include <stdio.h>\n__attribute__((constructor)) static void init(void) { FILE *f = fopen(${JSON.stringify(marker)}, "w"); if (f) fclose(f); }\n`,
      );
      const so = path.join(path.dirname(ws.manifest), 'evil.so');
      assert.equal(spawnSync(cc, ['-shared', '-fPIC', '-o', so, c]).status, 0);
      const cp = spawnSync('sh', ['-c', `cd -P ${two} && for i in $(seq 20); do cd -P ${d}; done && cp ${so} evil.node`], { cwd: ws.root });
      assert.equal(cp.status, 0, String(cp.stderr));
    }
    try {
      r = run(ws, ['server.js']);
      assert.doesNotMatch(r.stdout, /SCRIPT-RAN/, r.stdout + r.stderr);
      assert.match(r.stderr, /mcp-gate-guard: refused to load .*cannot be found to be checked \(ENAMETOOLONG\)/, r.stderr);
      assert.equal(fs.existsSync(marker), false, 'the new addon ran');
      assert.match(r.stdout, /spawn ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
      if (cc) assert.match(r.stdout, /dlopen ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    } finally {
      spawnSync('rm', ['-rf', path.join(ws.root, d)]);
    }
  });

  it('a spawn whose cwd is a Buffer, or whose argument is an object, is checked with the strings the program gets', () => {
    const py = spawnSync('python3', ['--version']).status === 0;
    const ws = approved({
      'lib/job.sh': '#!/bin/sh\necho approved-sh\n',
      'lib/job.py': "print('approved-py')\n",
      'server.js':
        "const cp = require('child_process');\nconst out = (r) => (r.error ? r.error.code : String(r.stdout).trim());\n" +
        "try { console.log('cwd', out(cp.spawnSync('./job.sh', [], { cwd: Buffer.from('lib'), encoding: 'utf8' }))); } catch (e) { console.log('cwd', e.code); }\n" +
        (py
          ? "try { console.log('arg', out(cp.spawnSync('python3', [{ toString: () => 'lib/job.py' }], { encoding: 'utf8' }))); } catch (e) { console.log('arg', e.code); }\n"
          : "console.log('arg approved-py');\n"),
    });
    fs.chmodSync(path.join(ws.root, 'lib/job.sh'), 0o755);
    let r = run(ws, ['server.js']);
    assert.match(r.stdout, /cwd approved-sh\narg approved-py/, r.stdout + r.stderr);
    fs.writeFileSync(path.join(ws.root, 'lib/job.sh'), '#!/bin/sh\necho CHANGED-RAN\n');
    fs.writeFileSync(path.join(ws.root, 'lib/job.py'), "print('CHANGED-RAN')\n");
    r = run(ws, ['server.js']);
    assert.match(r.stdout, /cwd ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    if (py) assert.match(r.stdout, /arg ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /CHANGED-RAN/, r.stdout + r.stderr);
  });

  it('process.dlopen of a name that is no string (an object with toString, a Buffer) is checked as the string loaded', function () {
    const cc = ['cc', 'gcc'].find((c) => spawnSync(c, ['--version']).status === 0);
    if (!cc) this.skip();
    const ws = approved({
      'server.js':
        "const f = require('path').join(__dirname, 'lib', 'evil.node');\n" +
        'for (const name of [{ toString: () => f }, Buffer.from(f)]) {\n' +
        "  try { process.dlopen({ exports: {} }, name); console.log('dlopen loaded'); } catch (e) { console.log('dlopen', e.code); }\n}\n",
    });
    const marker = path.join(path.dirname(ws.manifest), 'NATIVE-RAN');
    const c = path.join(path.dirname(ws.manifest), 'evil.c');
    fs.writeFileSync(
      c,
      `#include <stdio.h>\n__attribute__((constructor)) static void init(void) { FILE *f = fopen(${JSON.stringify(marker)}, "w"); if (f) fclose(f); }\n`,
    );
    fs.mkdirSync(path.join(ws.root, 'lib'));
    assert.equal(spawnSync(cc!, ['-shared', '-fPIC', '-o', path.join(ws.root, 'lib', 'evil.node'), c]).status, 0);
    const r = run(ws, ['server.js']);
    assert.equal(fs.existsSync(marker), false, `the new addon ran: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /dlopen ERR_MCP_GATE_GUARD\ndlopen ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
  });

  it('--loader <package> whose exports have only an "import" condition (require cannot resolve it): a changed loader never runs', () => {
    const ws = approved({
      'node_modules/pk/package.json': '{"name":"pk","type":"module","exports":{"import":"./x.mjs"}}\n',
      'node_modules/pk/x.mjs': 'export async function resolve(s, c, n) { return n(s, c); }\n',
      'server.js': "console.log('served');\n",
    });
    let r = run(ws, ['--loader', 'pk', 'server.js']);
    assert.match(r.stdout, /served/, r.stdout + r.stderr);
    fs.writeFileSync(
      path.join(ws.root, 'node_modules/pk/x.mjs'),
      "import { writeFileSync } from 'node:fs';\nwriteFileSync(process.env.MCP_GATE_GUARD + '.RAN', 'x');\nexport async function resolve(s, c, n) { return n(s, c); }\n",
    );
    r = run(ws, ['--loader', 'pk', 'server.js']);
    assert.equal(fs.existsSync(ws.manifest + '.RAN'), false, 'the changed loader ran');
    assert.match(r.stderr, /mcp-gate-guard: refused to load .*node_modules\/pk\/x\.mjs/, r.stderr);
  });

  it('a child whose environment entries are objects (toString "MCP_GATE_GUARD=") still carries the guard', () => {
    const ws = approved({
      'lib/job.js': APPROVED_JOB,
      'server.js':
        "const { ChildProcess } = require('child_process');\nconst cp = new ChildProcess();\n" +
        "cp.spawn({ file: process.execPath, args: [process.execPath, '-e', \"try { console.log('job', require('./lib/job.js'), 'ran', globalThis.RAN || 0); } catch (e) { console.log('job', e.code); }\"], cwd: __dirname,\n" +
        "  envPairs: [{ toString: () => 'MCP_GATE_GUARD=' }, { toString: () => 'NODE_OPTIONS=' }], stdio: ['inherit', 'inherit', 'inherit'] });\n",
    });
    let r = run(ws, ['server.js']);
    assert.match(r.stdout, /job 1 ran 0/, r.stdout + r.stderr);
    fs.writeFileSync(path.join(ws.root, 'lib/job.js'), 'globalThis.RAN = 1; module.exports = 2;\n');
    r = run(ws, ['server.js']);
    assert.match(r.stdout, /job ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
  });
});
