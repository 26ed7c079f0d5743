// Text turned into code in a Node server (src/guard/node/strings.ts, taken.ts): an approved file loaded by a computed
// name (so the static reader never saw it) that reads a data file and runs it. Before the data file changes, every
// way runs; after, every way is refused before the text runs, naming the data file; the code generators of zod, depd
// and Ajv still compile; text the process wrote itself is its own; a child and a worker carry what was taken in.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir, writeFiles, vscodeNode } from '../helpers';
import { EVERYDAY, INIT, R } from './git-steps';

const GUARD = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');
const NM = path.join(ROOT, 'node_modules');

interface Ws {
  root: string;
  scratch: string;
  manifest: string;
  report: string;
  marker: string;
}

function workspace(files: Record<string, string>): Ws {
  const root = fs.realpathSync(tempDir('mcp-gate-strings-ws-'));
  const scratch = fs.realpathSync(tempDir('mcp-gate-strings-scratch-'));
  const out = fs.realpathSync(tempDir('mcp-gate-strings-out-'));
  writeFiles(root, { 'README.md': '# server\n', ...files });
  return {
    root,
    scratch,
    manifest: path.join(out, 'manifest.json'),
    report: path.join(out, 'report.jsonl'),
    marker: path.join(out, 'ran'),
  };
}

function approve(ws: Ws): void {
  const files: Record<string, string> = {};
  const links: Record<string, string> = {};
  const since = Date.now(); // (as MCP Gate's manifest: when the measure began)
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isSymbolicLink()) links[path.relative(ws.root, p).split(path.sep).join('/')] = fs.readlinkSync(p);
      else if (e.isFile())
        files[path.relative(ws.root, p).split(path.sep).join('/')] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(ws.root);
  // the folders holding no file or link, as MCP Gate's record of the workspace has them
  const holding = new Set<string>();
  for (const k of [...Object.keys(files), ...Object.keys(links)])
    for (let i = k.indexOf('/'); i > 0; i = k.indexOf('/', i + 1)) holding.add(k.slice(0, i));
  const folders: string[] = [];
  const dirs = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) {
        const rel = path.relative(ws.root, path.join(dir, e.name)).split(path.sep).join('/');
        if (!holding.has(rel)) folders.push(rel);
        dirs(path.join(dir, e.name));
      }
  };
  dirs(ws.root);
  // server.js is what the static reader read (its closure); plugins/ are loaded by a computed name
  fs.writeFileSync(
    ws.manifest,
    JSON.stringify({
      version: 1,
      root: ws.root,
      files,
      links,
      since,
      folders,
      scratch: [ws.scratch],
      report: ws.report,
      closure: ['server.js'],
    }),
  );
}

function run(
  ws: Ws,
  args: string[],
  env: Record<string, string> = {},
  node = process.execPath,
): { status: number | null; out: string; err: string } {
  const e: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest, SCRATCH: ws.scratch, NM, ...env };
  delete e.NODE_OPTIONS;
  const r = spawnSync(node, ['--expose-internals', '--require', GUARD, ...args], {
    cwd: ws.root,
    env: e,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function reports(ws: Ws): Array<Record<string, unknown>> {
  return fs.existsSync(ws.report)
    ? fs
        .readFileSync(ws.report, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
}

/** server.js loads plugins/<argv[2]>.js by a computed name and prints what its function returns. */
const SERVER = `const name = process.argv[2];\nconst f = require('./plugins/' + name + '.js');\nPromise.resolve().then(() => f()).then((v) => console.log('ANSWER ' + v), (e) => { console.log('FAILED ' + (e.code || '') + ' ' + e.message); process.exitCode = 3; });\n`;

/** Each way text becomes code, given the text of data.txt (an expression that writes the marker and gives 'ok'). */
const WAYS: Record<string, string> = {
  eval: 'eval(t)',
  'indirect eval': '(0, eval)(t)',
  'eval kept from before': 'E(t)',
  Function: "new Function('return ' + t)()",
  'a function literal constructor': "(() => {}).constructor('return ' + t)()",
  'the async function constructor': "await Object.getPrototypeOf(async function () {}).constructor('return ' + t)()",
  'the generator constructor': "Object.getPrototypeOf(function* () {}).constructor('yield ' + t)().next().value",
  'Reflect.construct': "Reflect.construct(Function, ['return ' + t])()",
  'vm.runInThisContext': "require('vm').runInThisContext(t)",
  'vm.Script': "new (require('vm').Script)(t).runInThisContext()",
  "a Script's own constructor": "new (new (require('vm').Script)('1').constructor)(t).runInThisContext()",
  'vm.compileFunction': "require('vm').compileFunction('return ' + t)()",
  'vm.runInNewContext': "require('vm').runInNewContext('eval(t)', { t })",
  'a new context kept from before': 'CTX(t)',
  'Module._compile under a name that is no file':
    "(() => { const M = require('module'); const m = new M('x'); m._compile('module.exports = ' + t, '/nonexistent/x.js'); return m.exports; })()",
  'a data: import': "(await import('data:text/javascript,' + encodeURIComponent('export default ' + t))).default",
  // (red team 17: text put around a module by Module.wrap or Module.wrapper, compiled with it; a breakpoint's condition)
  'Module.wrap replaced':
    "(() => { const M = require('module'); const o = M.wrap; M.wrap = (s) => o('globalThis.T = ' + t + ';' + s); const f = require.resolve('../lib.js'); delete require.cache[f]; try { require(f); } finally { M.wrap = o; } return globalThis.T; })()",
  'Module.wrapper replaced':
    "(() => { const M = require('module'); const w = M.wrapper[0]; M.wrapper[0] = w + 'globalThis.T = ' + t + ';'; const f = require.resolve('../lib.js'); delete require.cache[f]; try { require(f); } finally { M.wrapper[0] = w; } return globalThis.T; })()",
  "an inspector breakpoint's condition":
    "await (async () => { const s = new (require('inspector').Session)(); s.connect(); const post = (m, a) => new Promise((r, j) => s.post(m, a, (e, v) => (e ? j(e) : r(v)))); await post('Debugger.enable', {}); await post('Debugger.setBreakpointByUrl', { lineNumber: 0, urlRegex: 'lib\\\\.js$', condition: '(globalThis.T = ' + t + ', false)' }); const f = require.resolve('../lib.js'); delete require.cache[f]; require(f); s.disconnect(); return globalThis.T; })()",
  'a Worker from a string':
    "await new Promise((res, rej) => { const w = new (require('worker_threads').Worker)('require(\"worker_threads\").parentPort.postMessage(' + t + ')', { eval: true }); w.on('message', res); w.on('error', rej); })",
};

const plugin = (way: string): string =>
  `const fs = require('fs');\nconst E = eval;\nconst CTX = require('vm').runInNewContext('(t) => eval(t)');\n` +
  `module.exports = async () => {\n  const t = fs.readFileSync(require('path').join(__dirname, '..', 'data.txt'), 'utf8');\n  return ${way};\n};\n`;

describe('Node load guard: text turned into code after the process took in a changed file (strings.ts)', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('every way runs the approved text; after data.txt changes, each is refused before the text runs, naming data.txt', () => {
    const files: Record<string, string> = { 'server.js': SERVER, 'data.txt': "'ok'", 'lib.js': 'module.exports = 1;\n' };
    const names = Object.keys(WAYS);
    names.forEach((w, i) => (files[`plugins/p${i}.js`] = plugin(WAYS[w])));
    const ws = workspace(files);
    approve(ws);
    const failedBefore: string[] = [];
    names.forEach((w, i) => {
      const r = run(ws, ['server.js', `p${i}`]);
      if (!/ANSWER ok/.test(r.out)) failedBefore.push(`${w}: ${r.out}${r.err}`);
    });
    // (a context of its own has no code generation from strings, guarded or not: the one way that fails before)
    assert.deepEqual(
      failedBefore.map((f) => f.split(':')[0]),
      ['vm.runInNewContext', 'a new context kept from before'],
      failedBefore.join('\n'),
    );

    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`);
    const ran: string[] = [];
    names.forEach((w, i) => {
      const r = run(ws, ['server.js', `p${i}`]);
      if (fs.existsSync(ws.marker) || /PWNED/.test(r.out)) {
        ran.push(`${w}: ${r.out}${r.err}`);
        fs.rmSync(ws.marker, { force: true });
      } else if (!/vm\.runInNewContext|new context/.test(w)) {
        assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, `${w}: ${r.out}${r.err}`);
        assert.match(
          r.err,
          /refused .*: text turned into code after this process took in a file that is not as approved .*, and .*data\.txt \(data\.txt\): it changed since approval/,
          w,
        );
      }
    });
    assert.deepEqual(ran, [], 'changed text ran');
    const lines = reports(ws);
    assert.ok(lines.length >= names.length - 2, JSON.stringify(lines));
    for (const l of lines) {
      assert.equal(l.file, path.join(ws.root, 'data.txt'));
      assert.equal(l.rel, 'data.txt');
      assert.equal(l.why, 'changed');
      assert.equal(l.runtime, 'node');
    }
    // the person's README edit is no change the process took in
    fs.writeFileSync(path.join(ws.root, 'data.txt'), "'ok'");
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
    assert.match(run(ws, ['server.js', 'p0']).out, /ANSWER ok/);
  });

  it("after taking in a changed file, zod's JIT, depd and Ajv still compile from their own frames; zod's Doc asked by a workspace file does not", () => {
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': "'ok'",
      'plugins/libs.js':
        "const fs = require('fs');\nconst NM = process.env.NM;\nmodule.exports = () => {\n  fs.readFileSync(__dirname + '/../data.txt', 'utf8');\n" +
        "  const z = require(NM + '/zod/v4');\n  const s = z.object({ a: z.string(), b: z.number() });\n  const v = s.parse({ a: 'x', b: 1 });\n" +
        "  const depd = require(NM + '/depd')('t');\n  const old = depd.function(function (x, y) { return x + y; }, 'old');\n" +
        "  const Ajv = require(NM + '/ajv');\n  const check = new Ajv().compile({ type: 'object', properties: { n: { type: 'integer' } } });\n" +
        "  return [v.a, typeof old, check({ n: 1 }), check({ n: 'x' })].join(',');\n};\n",
      'plugins/doc.js':
        "const fs = require('fs');\nmodule.exports = () => {\n  const t = fs.readFileSync(__dirname + '/../data.txt', 'utf8');\n" +
        "  const { Doc } = require(process.env.NM + '/zod/v4/core/doc.cjs');\n  const d = new Doc([]);\n  d.write('return ' + t);\n  return d.compile()();\n};\n",
    });
    approve(ws);
    assert.match(run(ws, ['server.js', 'libs']).out, /ANSWER x,function,true,false/);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`);
    const r = run(ws, ['server.js', 'libs']);
    assert.match(r.out, /ANSWER x,function,true,false/, r.out + r.err);
    assert.doesNotMatch(r.err, /mcp-gate-guard/);
    const d = run(ws, ['server.js', 'doc']);
    assert.match(d.out, /FAILED ERR_MCP_GATE_GUARD/, d.out + d.err);
    assert.equal(fs.existsSync(ws.marker), false);
  });

  it('a file the process wrote itself is its own; one a program wrote for it, a new name listed, and a parent that took in are not', () => {
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': "'ok'",
      'plugins/own.js':
        "const fs = require('fs');\nmodule.exports = () => {\n  const f = process.env.SCRATCH + '/cache.js';\n  fs.writeFileSync(f, \"'ok' + 'own'\");\n  return eval(fs.readFileSync(f, 'utf8'));\n};\n",
      'plugins/cat.js':
        "const fs = require('fs'), cp = require('child_process');\nmodule.exports = () => {\n  const f = process.env.SCRATCH + '/copy.txt';\n  cp.execFileSync('cp', [__dirname + '/../data.txt', f]);\n  return eval(fs.readFileSync(f, 'utf8'));\n};\n",
      'plugins/list.js':
        "const fs = require('fs');\nmodule.exports = () => {\n  const names = fs.readdirSync(__dirname + '/../names');\n  return eval(names.sort().join(''));\n};\n",
      'plugins/child.js':
        "const fs = require('fs'), cp = require('child_process');\nmodule.exports = () => {\n  fs.readFileSync(__dirname + '/../data.txt', 'utf8');\n" +
        "  return cp.execFileSync(process.execPath, ['-e', 'process.stdout.write(String(eval(\"1+1\")))']).toString();\n};\n",
      'names/a': '',
      'plugins/empty.js':
        "const fs = require('fs');\nmodule.exports = () => {\n  fs.readdirSync(__dirname + '/..');\n  return eval('1 + 1');\n};\n",
    });
    fs.mkdirSync(path.join(ws.root, 'cache', 'empty'), { recursive: true }); // an empty folder, approved as it is
    approve(ws);
    assert.match(run(ws, ['server.js', 'own']).out, /ANSWER okown/);
    assert.match(run(ws, ['server.js', 'cat']).out, /ANSWER ok/);
    assert.match(run(ws, ['server.js', 'empty']).out, /ANSWER 2/, 'listing a folder that holds an approved empty folder');
    assert.match(run(ws, ['server.js', 'list']).out, /FAILED|ANSWER/); // 'a' is a name, not a value: either way nothing new
    fs.writeFileSync(path.join(ws.root, 'data.txt'), "'changed'");
    fs.writeFileSync(path.join(ws.root, 'names', "'x'"), '');
    assert.match(run(ws, ['server.js', 'own']).out, /ANSWER okown/, 'what it wrote itself first');
    const c = run(ws, ['server.js', 'cat']);
    assert.match(c.out, /FAILED ERR_MCP_GATE_GUARD/, c.out + c.err);
    const l = run(ws, ['server.js', 'list']);
    assert.match(l.out, /FAILED ERR_MCP_GATE_GUARD/, l.out + l.err);
    assert.match(l.err, /names\/'x'/);
    const ch = run(ws, ['server.js', 'child']);
    assert.doesNotMatch(ch.out, /ANSWER 2/, ch.out + ch.err);
    assert.match(ch.err, /took in a file that is not as approved.*data\.txt/, ch.err);
  });

  it('a library frame named by a vm filename or a sourceURL is not taken for the library', () => {
    const doc = path.join(NM, 'zod', 'v4', 'core', 'doc.cjs');
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': "'ok'",
      'plugins/forge.js':
        "const fs = require('fs'), vm = require('vm');\n" +
        `const make = vm.runInThisContext('(function compile(t) { return new Function(t); })', { filename: ${JSON.stringify(doc)} });\n` +
        "module.exports = () => {\n  const t = fs.readFileSync(__dirname + '/../data.txt', 'utf8');\n  return make('return ' + t)();\n};\n",
    });
    approve(ws);
    assert.match(run(ws, ['server.js', 'forge']).out, /ANSWER ok/);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`);
    const r = run(ws, ['server.js', 'forge']);
    assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, r.out + r.err);
    assert.equal(fs.existsSync(ws.marker), false);
  });

  it('a library outside the workspace compiles its own text after taking in, also from code it compiled; asked by workspace code it does not', () => {
    const lib = fs.realpathSync(tempDir('mcp-gate-strings-lib-'));
    // a library: compile() builds a function from the text given; jit() builds one that itself compiles later
    fs.writeFileSync(
      path.join(lib, 'lib.js'),
      "exports.compile = (t) => new Function('return ' + t)();\n" +
        'exports.later = (t) => new Promise((res) => setTimeout(() => res(exports.compile(t)), 1));\n' +
        "exports.jit = () => new Function('c', 'return c(\"1 + 2\")')(exports.compile);\n" +
        'exports.own = () => new Promise((res) => setTimeout(() => res(exports.jit()), 1));\n',
    );
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': "'ok'",
      'plugins/direct.js':
        "const fs = require('fs');\nmodule.exports = () => require(process.env.LIB + '/lib.js').compile(fs.readFileSync(__dirname + '/../data.txt', 'utf8'));\n",
      'plugins/own.js':
        "const fs = require('fs');\nmodule.exports = () => { fs.readFileSync(__dirname + '/../data.txt', 'utf8'); return require(process.env.LIB + '/lib.js').own(); };\n",
      'plugins/spawn.js':
        "const fs = require('fs'), cp = require('child_process');\nmodule.exports = () => {\n  cp.execFileSync('true');\n" +
        "  fs.writeFileSync(__dirname + '/../out.yml', 'x');\n  return eval(JSON.stringify('made ' + fs.readFileSync(__dirname + '/../out.yml', 'utf8')));\n};\n",
    });
    approve(ws);
    const env = { LIB: lib };
    assert.match(run(ws, ['server.js', 'direct'], env).out, /ANSWER ok/);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`);
    const d = run(ws, ['server.js', 'direct'], env);
    assert.match(d.out, /FAILED ERR_MCP_GATE_GUARD/, d.out + d.err);
    assert.equal(fs.existsSync(ws.marker), false);
    const o = run(ws, ['server.js', 'own'], env);
    assert.match(o.out, /ANSWER 3/, o.out + o.err);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), "'ok'");
    // a program started (the workspace is compared at the next compile, metadata too: the program could have handed
    // over what `ls -l` shows): data.txt as approved again, but rewritten after approval, is a change of its times
    const m = run(ws, ['server.js', 'spawn']);
    assert.match(m.err, /data\.txt \(data\.txt\): its metadata \(times, mode or owner\) changed after approval/, m.out + m.err);
    approve(ws);
    // a file it wrote itself is no change
    const s0 = run(ws, ['server.js', 'spawn']);
    assert.match(s0.out, /ANSWER made x/, s0.out + s0.err);
    fs.writeFileSync(path.join(ws.root, 'other.yml'), 'y');
    const sp = run(ws, ['server.js', 'spawn']);
    assert.match(sp.out, /FAILED ERR_MCP_GATE_GUARD/, sp.out + sp.err);
    assert.match(sp.err, /other\.yml/);
  });

  it("red team 15: eval handed to a timer or an event, approved text compiled under a library's name, a failed exclusive open, a copy over its own file and the REPL do not get past", () => {
    const depd = path.join(NM, 'depd', 'index.js');
    const P = "require('path').join(__dirname, '..', 'data.txt')";
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': "'ok'",
      'plugins/timer.js': `const fs = require('fs');\nmodule.exports = () => new Promise((res) => { const t = fs.readFileSync(${P}, 'utf8'); setImmediate(eval, 'globalThis.__r = ' + t); setImmediate(() => res(globalThis.__r)); });\n`,
      'plugins/apply.js': `const fs = require('fs');\nmodule.exports = () => new Promise((res, rej) => { const t = fs.readFileSync(${P}, 'utf8'); setImmediate(Reflect.apply, Function, null, ['return ' + t]); setTimeout(() => { try { res((0, eval)('1') && 'done'); } catch (e) { rej(e); } }, 5); });\n`,
      'plugins/event.js': `const fs = require('fs'), { EventEmitter } = require('events');\nmodule.exports = () => new Promise((res) => { const e = new EventEmitter(); e.on('x', eval); const t = fs.readFileSync(${P}, 'utf8'); setImmediate(() => { try { e.emit('x', 'globalThis.__r = ' + t); } catch (err) { res('FAILED-INSIDE ' + err.code); return; } res(globalThis.__r); }); });\n`,
      'plugins/forge.js': `const fs = require('fs'), M = require('module');\nconst m = new M('x'); m._compile(fs.readFileSync(__dirname + '/gen.js', 'utf8'), ${JSON.stringify(depd)});\nmodule.exports = () => m.exports.gen(fs.readFileSync(${P}, 'utf8'));\n`,
      'plugins/gen.js': "exports.gen = (t) => new Function('return ' + t)();\n",
      'plugins/repl.js': `const fs = require('fs'), { Readable, Writable } = require('stream');\nmodule.exports = () => new Promise((res) => { const t = fs.readFileSync(${P}, 'utf8'); let out = ''; const r = require('repl').start({ input: Readable.from(['globalThis.__r = ' + t + '\\n']), output: new Writable({ write(c, e, cb) { out += c; cb(); } }), terminal: false, prompt: '', useGlobal: true }); r.on('exit', () => res(globalThis.__r === undefined ? 'none: ' + out.slice(0, 300) : globalThis.__r)); });\n`,
      'plugins/wx.js': `const fs = require('fs');\nmodule.exports = () => { try { fs.openSync(${P}, 'wx'); } catch {} return eval(fs.readFileSync(${P}, 'utf8')); };\n`,
      'plugins/copy.js': `const fs = require('fs');\nmodule.exports = () => { const f = process.env.SCRATCH + '/mine.txt'; fs.writeFileSync(f, "'mine'"); fs.copyFileSync(${P}, f); return eval(fs.readFileSync(f, 'utf8')); };\n`,
    });
    approve(ws);
    for (const w of ['timer', 'event', 'forge', 'wx', 'copy', 'repl']) assert.match(run(ws, ['server.js', w]).out, /ANSWER ok/, w);
    assert.match(run(ws, ['server.js', 'apply']).out, /ANSWER done/);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`);
    for (const w of ['timer', 'apply', 'event', 'forge', 'wx', 'copy', 'repl']) {
      const r = run(ws, ['server.js', w]);
      assert.doesNotMatch(r.out, /PWNED/, `${w}: ${r.out}${r.err}`);
      assert.equal(fs.existsSync(ws.marker), false, `${w}: the changed text ran`);
      assert.match(r.err, /text turned into code after this process took in a file that is not as approved/, `${w}: ${r.out}${r.err}`);
    }
  });

  it("on a Node with module.registerHooks (VS Code's): an ES module importing fs/promises, the REPL and the inspector gets them guarded, and a read through fs/promises is taken in", function () {
    const node = vscodeNode();
    if (!node) this.skip(); // npm run vscode-host (part of npm run test:all) installs it
    const ws = workspace({
      'server.mjs':
        "import { readFile } from 'node:fs/promises'; import repl from 'node:repl'; import { Session } from 'node:inspector';\n" +
        "const t = await readFile(new URL('./data.txt', import.meta.url), 'utf8');\nconsole.log('ANSWER ' + typeof repl.start + typeof Session + ' ' + eval(t));\n",
      'data.txt': "'ok'",
    });
    approve(ws);
    const r = run(ws, ['server.mjs'], {}, node);
    assert.match(r.out, /ANSWER functionfunction ok/, r.out + r.err);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(process.stdout.write('PWNED'), 'x')`);
    const c = run(ws, ['server.mjs'], {}, node);
    assert.doesNotMatch(c.out, /PWNED/, c.out + c.err);
    assert.match(c.err, /took in a file that is not as approved.*data\.txt/, c.err);
  });

  it("the fuzzer's two: a data: import after the server registered its own loader hooks (a loader thread) is refused after taking in; an eval worker is judged by what was taken in before it", () => {
    const ws = workspace({
      'server.mjs':
        "import fs from 'node:fs';\nimport { register } from 'node:module';\n" +
        "register('data:text/javascript,export async function resolve(s, c, n) { return n(s, c); }');\n" +
        "const t = fs.readFileSync(new URL('./data.txt', import.meta.url), 'utf8');\n" +
        "console.log('ANSWER ' + (await import('data:text/javascript,' + encodeURIComponent('export default ' + t))).default);\n",
      'worker.js':
        "const { Worker } = require('node:worker_threads');\nconst w = new Worker('require(\"node:worker_threads\").parentPort.postMessage(1 + 1)', { eval: true });\n" +
        "w.on('message', (m) => { console.log('ANSWER ' + m); process.exit(0); });\n",
      'data.txt': "'ok'",
    });
    approve(ws);
    assert.match(run(ws, ['server.mjs']).out, /ANSWER ok/);
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
    const w = run(ws, ['worker.js']);
    assert.match(w.out, /ANSWER 2/, w.out + w.err);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`);
    const r = run(ws, ['server.mjs']);
    assert.doesNotMatch(r.out, /PWNED/, r.out + r.err);
    assert.equal(fs.existsSync(ws.marker), false, 'the changed text ran');
    assert.match(r.err, /refused import of data:.*took in a file that is not as approved.*data\.txt/, r.err);
  });

  describe('metadata: what a name shows is content too (red team 14, cases 41–42)', () => {
    // Each plugin decodes a text from metadata alone — which names exist, sizes, times, a link's target, what
    // require.resolve finds — and evals it. Approved, the text is 'ok'; the attacker's change makes it code.
    const PAYLOAD = (ws: Ws): string => `(require('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran'), 'PWNED')`;
    const hex = (t: string): string[] => [...Buffer.from(t)].map((b) => b.toString(16).padStart(2, '0'));
    const decodeHex = "Buffer.from(h.join(''), 'hex').toString()";
    const ways: Record<string, { plugin: string; set: (ws: Ws, t: string) => void; why: RegExp }> = {
      // e/<i>_<hex byte>: the name that exists at position i
      'which names exist (existsSync)': {
        plugin: `const h = []; for (let i = 0; i < 200; i++) { let b = null; for (let c = 0; c < 256 && b === null; c++) { const x = c.toString(16).padStart(2, '0'); if (fs.existsSync(W + '/e/' + i + '_' + x)) b = x; } if (b === null) break; h.push(b); }\n  return eval(${decodeHex});`,
        set: (ws, t) => {
          fs.rmSync(path.join(ws.root, 'e'), { recursive: true, force: true });
          hex(t).forEach((x, i) => writeFiles(ws.root, { [`e/${i}_${x}`]: '' }));
        },
        why: /e\/0_[0-9a-f]{2} \(e\/0_[0-9a-f]{2}\): it (is not in what was approved|was approved and is gone)/,
      },
      // s/<i>: its size is the byte
      'sizes (statSync)': {
        plugin: `const h = []; for (let i = 0; fs.existsSync(W + '/s/' + i); i++) h.push(fs.statSync(W + '/s/' + i).size.toString(16).padStart(2, '0'));\n  return eval(${decodeHex});`,
        set: (ws, t) => {
          fs.rmSync(path.join(ws.root, 's'), { recursive: true, force: true });
          hex(t).forEach((x, i) => writeFiles(ws.root, { [`s/${i}`]: 'x'.repeat(parseInt(x, 16)) }));
        },
        why: /s\/0 \(s\/0\): it changed since approval/,
      },
      // t/<i>: its modification time, in seconds, is the byte (the files' content never changes)
      'times (touch, then statSync().mtime)': {
        plugin: `const h = []; for (let i = 0; fs.existsSync(W + '/t/' + i); i++) h.push(Math.round(fs.statSync(W + '/t/' + i).mtimeMs / 1000).toString(16).padStart(2, '0'));\n  return eval(${decodeHex});`,
        set: (ws, t) => {
          const bytes = hex(t);
          for (let i = 0; i < 200; i++) {
            const f = path.join(ws.root, 't', String(i));
            if (i < bytes.length) {
              if (!fs.existsSync(f)) writeFiles(ws.root, { [`t/${i}`]: '' });
              fs.utimesSync(f, parseInt(bytes[i], 16), parseInt(bytes[i], 16));
            } else fs.rmSync(f, { force: true });
          }
        },
        why: /t\/\d+ \(t\/\d+\): its metadata \(times, mode or owner\) changed after approval/,
      },
      // a link's target, through realpathSync (the target's name in base64url)
      "a link's target (realpathSync)": {
        plugin: `return eval(Buffer.from(require('path').basename(fs.realpathSync(W + '/l')), 'base64url').toString());`,
        set: (ws, t) => {
          const name = Buffer.from(t).toString('base64url');
          writeFiles(ws.root, { [`targets/${name}`]: '' });
          fs.rmSync(path.join(ws.root, 'l'), { force: true });
          fs.symlinkSync(`targets/${name}`, path.join(ws.root, 'l'));
        },
        why: /l \(l\): it changed since approval/,
      },
      // which names Node's loader finds (require.resolve), and approved files gone (a failed resolve)
      'what require.resolve finds': {
        plugin: `const h = []; for (let i = 0; i < 200; i++) { let b = null; for (let c = 0; c < 256 && b === null; c++) { const x = c.toString(16).padStart(2, '0'); try { require.resolve(W + '/r/' + i + '_' + x); b = x; } catch {} } if (b === null) break; h.push(b); }\n  return eval(${decodeHex});`,
        set: (ws, t) => {
          fs.rmSync(path.join(ws.root, 'r'), { recursive: true, force: true });
          hex(t).forEach((x, i) => writeFiles(ws.root, { [`r/${i}_${x}.js`]: '' }));
        },
        why: /r\/0_[0-9a-f]{2}(\.js)? \(r\/0_[0-9a-f]{2}(\.js)?\): it (is not in what was approved|was approved and is gone)/,
      },
    };
    const plugin = (body: string): string =>
      `const fs = require('fs');\nconst W = require('path').join(__dirname, '..');\nmodule.exports = () => {\n  ${body}\n};\n`;

    for (const [name, w] of Object.entries(ways)) {
      it(`${name}: approved, the decoded text runs; changed, it is refused before it runs, naming the name`, () => {
        const ws = workspace({ 'server.js': SERVER, 'plugins/p.js': plugin(w.plugin), l: '' });
        fs.rmSync(path.join(ws.root, 'l'));
        w.set(ws, "'ok'");
        if (!fs.existsSync(path.join(ws.root, 'l'))) fs.symlinkSync('README.md', path.join(ws.root, 'l'));
        approve(ws);
        const a = run(ws, ['server.js', 'p']);
        assert.match(a.out, /ANSWER ok/, a.out + a.err);
        // the person's edit of a file nobody looks at changes nothing
        fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
        assert.match(run(ws, ['server.js', 'p']).out, /ANSWER ok/);
        w.set(ws, PAYLOAD(ws));
        const r = run(ws, ['server.js', 'p']);
        assert.equal(fs.existsSync(ws.marker), false, `the changed text ran: ${r.out}${r.err}`);
        assert.doesNotMatch(r.out, /PWNED/);
        assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, r.out + r.err);
        assert.match(r.err, /text turned into code after this process took in a file that is not as approved/, r.err);
        assert.match(r.err, w.why, r.err);
      });
    }

    // Red team 16: each channel carries one bit per name; the text is the bits' bytes, trimmed.
    const N = 8 * 100;
    const bitsOf = (t: string): number[] => {
      const b = Buffer.from(t.padEnd(N / 8, ' '));
      return Array.from({ length: N }, (_, i) => (b[i >> 3] >> (7 - (i & 7))) & 1);
    };
    // base: each name's state at approval; the attacker only moves names away from it (the way that got past)
    const channels: Record<string, { base: number; bit: string; set: (ws: Ws, i: number, v: number) => void; pre?: string }> = {
      'new empty folders (existsSync)': {
        base: 0,
        bit: "fs.existsSync(W + '/e/' + i)",
        set: (ws, i, v) =>
          v
            ? fs.mkdirSync(path.join(ws.root, 'e', String(i)), { recursive: true })
            : fs.rmSync(path.join(ws.root, 'e', String(i)), { recursive: true, force: true }),
      },
      'approved names gone from a listing (readdirSync)': {
        base: 1,
        pre: "const names = fs.readdirSync(W + '/d');",
        bit: 'names.includes(String(i))',
        set: (ws, i, v) => (v ? writeFiles(ws.root, { [`d/${i}`]: '' }) : fs.rmSync(path.join(ws.root, 'd', String(i)), { force: true })),
      },
      'kinds, approved folders become files (withFileTypes)': {
        base: 1,
        pre: "const kinds = new Map(fs.readdirSync(W + '/k', { withFileTypes: true }).map((e) => [e.name, e.isDirectory()]));",
        bit: 'kinds.get(String(i))',
        set: (ws, i, v) => {
          const p = path.join(ws.root, 'k', String(i));
          fs.rmSync(p, { recursive: true, force: true });
          if (v) writeFiles(ws.root, { [`k/${i}/x`]: '' });
          else writeFiles(ws.root, { [`k/${i}`]: '' });
        },
      },
      "names as Buffers (readdirSync, encoding 'buffer')": {
        base: 0,
        pre: "const bn = fs.readdirSync(W + '/n', { encoding: 'buffer' }).map(String);",
        bit: 'bn.includes(String(i))',
        set: (ws, i, v) => (v ? writeFiles(ws.root, { [`n/${i}`]: 'x' }) : fs.rmSync(path.join(ws.root, 'n', String(i)), { force: true })),
      },
      'mode bits (chmod, then accessSync X_OK)': {
        base: 0,
        bit: "(() => { try { fs.accessSync(W + '/x/' + i, fs.constants.X_OK); return 1; } catch { return 0; } })()",
        set: (ws, i, v) => {
          if (!fs.existsSync(path.join(ws.root, 'x', String(i)))) writeFiles(ws.root, { [`x/${i}`]: '' });
          fs.chmodSync(path.join(ws.root, 'x', String(i)), v ? 0o755 : 0o644);
        },
      },
      'require.resolve with a paths option': {
        base: 1,
        bit: "(() => { try { require.resolve('p' + i, { paths: [W + '/q'] }); return 1; } catch { return 0; } })()",
        set: (ws, i, v) =>
          v
            ? writeFiles(ws.root, { [`q/node_modules/p${i}/index.js`]: '' })
            : fs.rmSync(path.join(ws.root, 'q', 'node_modules', `p${i}`), { recursive: true, force: true }),
      },
      'Module._findPath': {
        base: 1,
        bit: "require('module')._findPath(W + '/f/' + i, [], false) ? 1 : 0",
        set: (ws, i, v) =>
          v ? writeFiles(ws.root, { [`f/${i}.json`]: '{}' }) : fs.rmSync(path.join(ws.root, 'f', `${i}.json`), { force: true }),
      },
      "mkdir's EEXIST": {
        base: 1,
        bit: "(() => { const p = W + '/m/' + i; try { fs.mkdirSync(p); fs.rmdirSync(p); return 0; } catch { return 1; } })()",
        set: (ws, i, v) => (v ? writeFiles(ws.root, { [`m/${i}`]: '' }) : fs.rmSync(path.join(ws.root, 'm', String(i)), { force: true })),
      },
      "an exclusive create's EEXIST (wx)": {
        base: 1,
        bit: "(() => { const p = W + '/w/' + i; try { fs.writeFileSync(p, '', { flag: 'wx' }); fs.unlinkSync(p); return 0; } catch { return 1; } })()",
        set: (ws, i, v) => (v ? writeFiles(ws.root, { [`w/${i}`]: '' }) : fs.rmSync(path.join(ws.root, 'w', String(i)), { force: true })),
      },
    };
    for (const [name, ch] of Object.entries(channels)) {
      it(`red team 16, ${name}: the bits approved decode to text that runs; the attacker's bits are refused before they run`, () => {
        const ok = bitsOf("'ok'");
        const mask = ok.map((x) => x ^ ch.base).join('');
        const body =
          `${ch.pre ?? ''}\n  const M = '${mask}';\n  const b = []; for (let i = 0; i < ${N}; i++) b.push((${ch.bit} ? 1 : 0) ^ Number(M[i]));\n` +
          `  const t = Buffer.from(Array.from({ length: ${N / 8} }, (_, k) => b.slice(k * 8, k * 8 + 8).reduce((v, x) => v * 2 + x, 0))).toString().trim();\n  return eval(t);`;
        const ws = workspace({ 'server.js': SERVER, 'plugins/p.js': plugin(body) });
        for (const d of ['e', 'd', 'k', 'n', 'x', 'q', 'f', 'm', 'w']) fs.mkdirSync(path.join(ws.root, d), { recursive: true });
        for (let i = 0; i < N; i++) ch.set(ws, i, ch.base);
        approve(ws);
        const a = run(ws, ['server.js', 'p']);
        assert.match(a.out, /ANSWER ok/, a.out + a.err);
        fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
        assert.match(run(ws, ['server.js', 'p']).out, /ANSWER ok/, 'a README edit');
        bitsOf(PAYLOAD(ws)).forEach((x, i) => {
          if (x !== ok[i]) ch.set(ws, i, 1 - ch.base);
        });
        const r = run(ws, ['server.js', 'p']);
        assert.equal(fs.existsSync(ws.marker), false, `the changed text ran: ${r.out}${r.err}`);
        assert.match(r.err, /text turned into code after this process took in a file that is not as approved/, r.out + r.err);
      });
    }

    it('red team 16, h04: a log the server creates by appending, then stats, is its own; an approved file gone is a change', () => {
      const ws = workspace({
        'server.js': SERVER,
        'g/0': '',
        'g/1': '',
        'plugins/gone.js': plugin(
          "let v = ''; for (let i = 0; i < 2; i++) { try { fs.closeSync(fs.openSync(W + '/g/' + i, 'r')); v += '1'; } catch { v += '0'; } }\n  return eval(v === '11' ? \"'ok'\" : \"'PWNED'\");",
        ),
        'plugins/own.js': plugin(
          "const d = W + '/data/cache'; fs.mkdirSync(d, { recursive: true }); fs.writeFileSync(d + '/a.json', '{}');\n" +
            "  fs.mkdirSync(W + '/logs', { recursive: true }); fs.appendFileSync(W + '/logs/app.log', 'started\\n'); fs.statSync(W + '/logs/app.log'); fs.readdirSync(W + '/logs');\n" +
            "  fs.statSync(d + '/a.json'); fs.statSync(d); fs.existsSync(W + '/none'); try { require.resolve('not-installed-anywhere'); } catch {}\n" +
            "  fs.statSync(W + '/README.md'); fs.readdirSync(d); fs.rmSync(d + '/a.json'); fs.existsSync(d + '/a.json');\n  return eval(\"'o' + 'k'\");",
        ),
      });
      approve(ws);
      assert.match(run(ws, ['server.js', 'gone']).out, /ANSWER ok/);
      const o = run(ws, ['server.js', 'own']);
      assert.match(o.out, /ANSWER ok/, o.out + o.err);
      fs.rmSync(path.join(ws.root, 'g', '1'));
      const r = run(ws, ['server.js', 'gone']);
      assert.doesNotMatch(r.out, /PWNED/, r.out + r.err);
      assert.match(r.err, /g\/1 \(g\/1\): it was approved and is gone/, r.err);
    });

    it('red team 17, h10: a JSON cache the server writes in the workspace and then requires is its own data; an approved JSON module changed by another is refused', () => {
      const ws = workspace({
        'server.js': SERVER,
        'conf.json': '{ "v": "ok" }\n',
        'plugins/cache.js': plugin(
          "const c = W + '/.cache/index.json'; fs.mkdirSync(W + '/.cache', { recursive: true }); fs.writeFileSync(c, JSON.stringify({ v: 'ok' }));\n  return require(c).v;",
        ),
        'plugins/conf.js': plugin('return require(W + "/conf.json").v;'),
      });
      approve(ws);
      const a = run(ws, ['server.js', 'cache']);
      assert.match(a.out, /ANSWER ok/, a.out + a.err);
      assert.match(run(ws, ['server.js', 'conf']).out, /ANSWER ok/);
      fs.writeFileSync(path.join(ws.root, 'conf.json'), '{ "v": "PWNED" }\n');
      const r = run(ws, ['server.js', 'conf']);
      assert.doesNotMatch(r.out, /PWNED/, r.out + r.err);
      assert.match(r.err, /refused to load .*conf\.json \(conf\.json\): it changed since approval/, r.err);
    });
  });
});

// Starts after taking in (src/guard/CONTRACT.md, "Starts after taking in (both guards)"; red teams 17 and 18): once a
// process took in a changed file, a start that could run code it is given is text turned into code; a safe one is not.
describe('Node load guard: starts after taking in a changed file (inline.ts)', function () {
  this.timeout(180_000);
  after(cleanupTemp);

  /** Each start, given the text of its data file (`t`); each prints "ok" with the approved text. */
  const STARTS: Record<string, string> = {
    'execSync of a line (sh -c)': 'cp.execSync(t).toString().trim()',
    "sed's program text (GNU sed's e command runs a shell)": "cp.execFileSync('sed', ['-n', '-e', t, 'input.txt']).toString().trim()",
    'git -c with a command':
      "cp.execFileSync('git', ['-c', 'core.pager=' + t, '--version']).toString().startsWith('git version') ? 'ok' : 'no'",
    'ssh -vo ProxyCommand (a cluster)':
      "(() => { try { cp.execFileSync('ssh', ['-vo', 'ProxyCommand=' + t, '-o', 'BatchMode=yes', 'h'], { stdio: 'pipe' }); } catch (e) { if (e.code === 'ERR_MCP_GATE_GUARD') throw e; } return 'ok'; })()",
    'a command-line variable the process set (GIT_PAGER)':
      "cp.execFileSync('/bin/echo', ['ok'], { env: { ...process.env, GIT_PAGER: t } }).toString().trim()",
    'a safe start after taking in (git --version, a simple sh -c line)':
      "t && cp.execFileSync('git', ['--version']).toString().startsWith('git version') && cp.execSync('git --version').toString().startsWith('git version') ? 'ok' : 'no'",
  };
  const APPROVED: Record<string, string> = {
    'execSync of a line (sh -c)': 'echo ok',
    "sed's program text (GNU sed's e command runs a shell)": '1p',
    'git -c with a command': 'less',
    'ssh -vo ProxyCommand (a cluster)': 'false',
    'a command-line variable the process set (GIT_PAGER)': 'less',
    'a safe start after taking in (git --version, a simple sh -c line)': 'x',
  };
  const CHANGED: Record<string, string | null> = {
    'execSync of a line (sh -c)': 'echo PWNED >&2; echo ok',
    "sed's program text (GNU sed's e command runs a shell)": '1e echo PWNED',
    'git -c with a command': 'sh -c "echo PWNED >&2"',
    'ssh -vo ProxyCommand (a cluster)': 'sh -c "echo PWNED >&2"',
    'a command-line variable the process set (GIT_PAGER)': 'echo PWNED',
    'a safe start after taking in (git --version, a simple sh -c line)': null, // changed, and still runs
  };

  for (const node of [process.execPath, vscodeNode()].filter((n): n is string => !!n))
    it(`each start runs with the approved text and is refused after data.txt changes, naming it (${node === process.execPath ? `Node ${process.version}` : path.basename(path.dirname(path.dirname(node)))})`, () => {
      const names = Object.keys(STARTS);
      const files: Record<string, string> = { 'server.js': SERVER, 'input.txt': 'ok\n' };
      names.forEach((w, i) => {
        files[`plugins/c${i}.js`] =
          `const cp = require('child_process');\nmodule.exports = () => {\n  const t = require('fs').readFileSync(require('path').join(__dirname, '..', 'data${i}.txt'), 'utf8');\n  return ${STARTS[w]};\n};\n`;
        files[`data${i}.txt`] = APPROVED[w];
      });
      const ws = workspace(files);
      approve(ws);
      names.forEach((w, i) => assert.match(run(ws, ['server.js', `c${i}`], {}, node).out, /ANSWER ok/, w));
      // a README edit the process never took in refuses nothing
      fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
      names.forEach((w, i) => assert.match(run(ws, ['server.js', `c${i}`], {}, node).out, /ANSWER ok/, `${w}, after a README edit`));
      names.forEach((w, i) => {
        const changed = CHANGED[w];
        fs.writeFileSync(path.join(ws.root, `data${i}.txt`), changed ?? 'y');
        const r = run(ws, ['server.js', `c${i}`], {}, node);
        if (changed === null) {
          assert.match(r.out, /ANSWER ok/, `${w}: ${r.out}${r.err}`);
          return;
        }
        assert.doesNotMatch(r.out + r.err, /PWNED/, w);
        assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, `${w}: ${r.out}${r.err}`);
        assert.match(
          r.err,
          new RegExp(
            `refused spawn .* \\(a program that may run code it is given\\).*data${i}\\.txt \\(data${i}\\.txt\\): it changed since approval`,
          ),
          w,
        );
      });
    });

  // git runs what its configuration and hooks say: after taking in, each file it obeys that the process or the
  // repository could have written must be as approved or hold only plain keys (git.ts, red team 19)
  const GIT_PLUGIN = `const cp = require('child_process'), fs = require('fs'), path = require('path');
module.exports = () => {
  const S = process.env.SCRATCH;
  fs.rmSync(path.join(S, 'r'), { recursive: true, force: true });
  fs.rmSync(path.join(S, 'home'), { recursive: true, force: true });
  fs.mkdirSync(path.join(S, 'home'));
  const steps = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'steps.json'), 'utf8'));
  for (const s of steps) {
    if (s.write) { fs.mkdirSync(path.dirname(path.join(S, s.write)), { recursive: true }); fs.writeFileSync(path.join(S, s.write), s.text, { mode: 0o755 }); continue; }
    const r = cp.spawnSync('git', s.map((w) => w.split('@S@').join(S).split('@O@').join(process.env.OUTSIDE).split('@W@').join(process.cwd())), { stdio: 'pipe' });
    process.stderr.write(r.stderr || '');
    if (r.status !== 0) throw new Error('git ' + s[s.length - 1] + ': ' + String(r.stderr));
  }
  return 'ok';
};
`;

  it('git after taking in: a repository it made and the commands servers use go ahead; a config key, a hook or a ~/.gitconfig it wrote is refused (red team 19)', () => {
    const ws = workspace({ 'server.js': SERVER, 'plugins/git.js': GIT_PLUGIN, 'steps.json': JSON.stringify(EVERYDAY) });
    approve(ws);
    // (a terminal: git's default editor is vi; a folder outside the workspace and scratch folders)
    // (and a workspace folder first on PATH, as `npm run` or `uv run` put one)
    const env = {
      HOME: path.join(ws.scratch, 'home'),
      TERM: 'xterm',
      OUTSIDE: fs.realpathSync(tempDir('mcp-gate-outside-')),
      PATH: `${path.join(ws.root, 'bin')}:${process.env.PATH ?? ''}`,
    };
    const first = run(ws, ['server.js', 'git'], env);
    assert.match(first.out, /ANSWER ok/, first.out + first.err);
    // the same commands after the process took in a changed steps.json (and a README edit): none refused
    fs.writeFileSync(path.join(ws.root, 'steps.json'), JSON.stringify([...EVERYDAY, [...R, 'diff', '--stat']]));
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
    const again = run(ws, ['server.js', 'git'], env);
    assert.match(again.out, /ANSWER ok/, again.out + again.err);
    const attacks: [string, unknown[], RegExp, Record<string, string>?][] = [
      [
        'core.fsmonitor',
        [...INIT, [...R, 'config', 'core.fsmonitor', 'echo PWNED >&2; false'], [...R, 'status']],
        /spawn git, obeying \S+\/r\/\.git\/config \(core\.fsmonitor\), which is not as approved/,
      ],
      ['an alias', [...INIT, [...R, 'config', 'alias.p', '!echo PWNED >&2'], [...R, 'p']], /spawn git p, not a git command of the table,/],
      [
        'a hook the process wrote',
        [
          ...INIT,
          { write: 'r/.git/hooks/pre-commit', text: '#!/bin/sh\necho PWNED >&2\n' },
          [...R, 'commit', '-q', '--allow-empty', '-m', 'x'],
        ],
        /spawn git, with the hook \S+\/r\/\.git\/hooks\/pre-commit, which is not as approved/,
      ],
      [
        'a repository made outside the workspace and scratch folders (red team 21, g01)',
        [
          ['init', '-q', '@O@/r'],
          ['-C', '@O@/r', 'config', 'core.fsmonitor', 'echo PWNED >&2; false'],
          ['-C', '@O@/r', 'status'],
        ],
        /spawn git, obeying \S+\/r\/\.git\/config \(core\.fsmonitor\), which is not as approved/,
      ],
      [
        'a gitdir: file whose path ends in a blank (g03)',
        [['-C', 'sub2', 'status']],
        /spawn git, obeying .*\/gd2 \/config \(core\.fsmonitor\), which is not as approved/,
        {
          'sub2/.git': 'gitdir: ../gd2 \n',
          'gd2 /HEAD': 'ref: refs/heads/main\n',
          'gd2 /config': '[core]\n\tfsmonitor = "echo PWNED >&2; false"\n',
          'gd2 /objects/info/.keep': '',
          'gd2 /refs/heads/.keep': '',
        },
      ],
      [
        'a push to <path>, which git opens as <path>.git, with a hook (g04)',
        [...INIT, [...R, 'commit', '-q', '--allow-empty', '-m', 'x'], [...R, 'push', '-q', '@W@/dst', 'HEAD:refs/heads/x']],
        /spawn git, with the hook \S+\/dst\.git\/hooks\/pre-receive, which is not as approved/,
        {
          'dst.git/HEAD': 'ref: refs/heads/main\n',
          'dst.git/config': '[core]\n\tbare = true\n',
          'dst.git/objects/info/.keep': '',
          'dst.git/refs/heads/.keep': '',
          'dst.git/hooks/pre-receive': '#!/bin/sh\necho PWNED >&2\n',
        },
      ],
      [
        'a ~/.gitconfig the process wrote',
        [{ write: 'home/.gitconfig', text: '[core]\n\tfsmonitor = echo PWNED >&2; false\n' }, ...INIT, [...R, 'status']],
        /spawn git, obeying \S+\/home\/\.gitconfig \(core\.fsmonitor\), which is not as approved/,
      ],
      [
        'a gitdir: file of the workspace pointing at a repository laid out in it',
        [['-C', 'sub', 'status']],
        /spawn git, obeying \S+\/gd\/config \(core\.fsmonitor\), which is not as approved/,
        {
          'sub/.git': 'gitdir: ../gd\n',
          'gd/HEAD': 'ref: refs/heads/main\n',
          'gd/config': '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "echo PWNED >&2; false"\n',
          'gd/objects/info/.keep': '',
          'gd/refs/heads/.keep': '',
        },
      ],
    ];
    for (const [what, steps, why, files] of attacks) {
      writeFiles(ws.root, { ...(files ?? {}), 'steps.json': JSON.stringify(steps) });
      const r = run(ws, ['server.js', 'git'], env);
      assert.doesNotMatch(r.out + r.err, /PWNED/, what);
      assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, `${what}: ${r.out}${r.err}`);
      assert.match(r.err, why, `${what}: ${r.err}`);
      assert.match(r.err, /steps\.json \(steps\.json\): it changed since approval/, what);
    }
    // what git itself would run is off after taking in (git.neutral): no editor (vi fed keystrokes or a ~/.vimrc), no
    // hook, no submodule — git runs, and what it was set up to run does not
    const neutral: [string, unknown[], RegExp][] = [
      [
        'git commit with no message (vi would read a ~/.vimrc the process wrote)',
        [...INIT, { write: 'home/.vimrc', text: ':!echo PWNED >&2\n:qa!\n' }, [...R, 'commit', '-q', '--allow-empty']],
        /Aborting commit due to empty commit message/,
      ],
      [
        'git add -e (an editor of the patch)',
        [...INIT, { write: 'home/.vimrc', text: ':!echo PWNED >&2\n:qa!\n' }, [...R, 'add', '-e']],
        /FAILED/,
      ],
      [
        'a push to a repository on this machine named inside an option (receive-pack there obeys its hooks; red team 22)',
        [...INIT, [...R, 'commit', '-q', '--allow-empty', '-m', 'x'], [...R, 'push', '--repo=@W@/evil.git', '--all']],
        /transport 'file' not allowed/,
      ],
      [
        'ssh for an ssh:// remote, a new bin/ssh first on PATH',
        [...INIT, ['ls-remote', 'ssh://127.0.0.1:1/x']],
        /ssh: connect to host 127\.0\.0\.1 port 1/,
      ],
    ];
    writeFiles(ws.root, {
      'bin/ssh': '#!/bin/sh\necho PWNED >&2\n',
      'evil.git/HEAD': 'ref: refs/heads/main\n',
      'evil.git/config': '[core]\n\tbare = true\n',
      'evil.git/objects/info/.keep': '',
      'evil.git/refs/heads/.keep': '',
      'evil.git/hooks/pre-receive': '#!/bin/sh\necho PWNED >&2\n',
    });
    for (const f of ['bin/ssh', 'evil.git/hooks/pre-receive']) fs.chmodSync(path.join(ws.root, f), 0o755);
    for (const [what, steps, shows] of neutral) {
      writeFiles(ws.root, { 'steps.json': JSON.stringify(steps) });
      const r = run(ws, ['server.js', 'git'], env);
      assert.doesNotMatch(r.out + r.err, /PWNED/, what);
      assert.doesNotMatch(r.out + r.err, /ERR_MCP_GATE_GUARD/, what);
      assert.match(r.out + r.err, shows, `${what}: ${r.out}${r.err}`);
    }
  });

  // Red team 20: content taken in by a channel the guard did not count, own files a folder moved over, and code a
  // child node runs that passes no hook (its program on standard input as an ES module, a startup snapshot)
  const RT20: Record<string, { plugin: string; files: Record<string, string>; attack: (ws: Ws) => void; why: RegExp }> = {
    'process.loadEnvFile (r01)': {
      plugin:
        "module.exports = () => { process.loadEnvFile(require('path').join(__dirname, '..', '.env')); return new Function('return ' + process.env.EXPR)(); };\n",
      files: { '.env': 'EXPR="\'ok\'"\n' },
      attack: (ws) => fs.writeFileSync(path.join(ws.root, '.env'), "EXPR=\"(console.error('PWNED'), 'ok')\"\n"),
      why: /refused Function: .*\.env \(\.env\): it changed since approval/,
    },
    'a folder renamed onto one whose file the process wrote and removed (r11)': {
      plugin: `const fs = require('fs'), path = require('path');
module.exports = () => {
  const d = path.join(process.env.SCRATCH, 'd'), cfg = path.join(__dirname, '..', 'cfg');
  fs.rmSync(d, { recursive: true, force: true });
  fs.mkdirSync(d);
  fs.writeFileSync(path.join(d, 'expr.txt'), "'ok'");
  fs.unlinkSync(path.join(d, 'expr.txt'));
  fs.rmdirSync(d);
  fs.renameSync(cfg, d);
  try { return new Function('return ' + fs.readFileSync(path.join(d, 'expr.txt'), 'utf8'))(); } finally { fs.renameSync(d, cfg); }
};
`,
      files: { 'cfg/expr.txt': "'ok'" },
      attack: (ws) => fs.writeFileSync(path.join(ws.root, 'cfg', 'expr.txt'), "(console.error('PWNED'), 'ok')"),
      why: /refused Function: .*\/d\/expr\.txt/,
    },
    'a workspace folder copied over files the process wrote (cpSync, r08)': {
      plugin: `const fs = require('fs'), path = require('path');
module.exports = () => {
  const d = path.join(process.env.SCRATCH, 'c');
  fs.rmSync(d, { recursive: true, force: true });
  fs.mkdirSync(d);
  fs.writeFileSync(path.join(d, 'expr.txt'), "'ok'");
  fs.cpSync(path.join(__dirname, '..', 'defaults'), d, { recursive: true });
  return new Function('return ' + fs.readFileSync(path.join(d, 'expr.txt'), 'utf8'))();
};
`,
      files: { 'defaults/expr.txt': "'ok'", 'defaults/sub/more.txt': 'x' },
      attack: (ws) => fs.writeFileSync(path.join(ws.root, 'defaults', 'expr.txt'), "(console.error('PWNED'), 'ok')"),
      why: /refused Function: .*(\/c\/expr\.txt|defaults\/expr\.txt)/,
    },
    'a child node reading an ES module from its standard input (r13)': {
      plugin: `const cp = require('child_process'), fs = require('fs'), path = require('path');
module.exports = () => {
  const t = fs.readFileSync(path.join(__dirname, '..', 'data.txt'), 'utf8');
  try { return cp.execFileSync(process.execPath, ['--input-type=module'], { input: t, stdio: 'pipe' }).toString().trim(); }
  catch (e) { throw new Error(String(e.stderr)); }
};
`,
      files: { 'data.txt': "console.log('ok')\n" },
      attack: (ws) => fs.writeFileSync(path.join(ws.root, 'data.txt'), "console.log('ok'); console.error('PWNED')\n"),
      why: /refused node reading its program from standard input \(or a REPL\): text turned into code after this process took in .*data\.txt \(data\.txt\): it changed since approval/,
    },
    'a child node started from a V8 startup snapshot (--snapshot-blob=, r17)': {
      plugin:
        "module.exports = () => require('child_process').execFileSync(process.execPath, ['--snapshot-blob=' + require('path').join(__dirname, '..', 'snap.blob')]).toString().trim();\n",
      files: {},
      attack: (ws) => snapshot(ws.root, "console.error('PWNED'); console.log('ok')"),
      why: /refused to load \S+snap\.blob \(snap\.blob\): it changed since approval/,
    },
  };
  /** A V8 startup snapshot whose main function runs `main`, built unguarded into <dir>/snap.blob. */
  function snapshot(dir: string, main: string): void {
    const entry = path.join(tempDir('mcp-gate-snap-'), 'entry.js');
    fs.writeFileSync(entry, `require('v8').startupSnapshot.setDeserializeMainFunction(() => { ${main}; });\n`);
    const e: Record<string, string | undefined> = { ...process.env };
    delete e.NODE_OPTIONS;
    const r = spawnSync(process.execPath, ['--snapshot-blob', path.join(dir, 'snap.blob'), '--build-snapshot', entry], {
      env: e,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
  }

  it('red team 20: a changed .env through process.loadEnvFile, a folder moved onto own files, a child node fed an ES module on stdin or started from a snapshot: approved runs, README edit runs, the change is refused', () => {
    const names = Object.keys(RT20);
    const files: Record<string, string> = { 'server.js': SERVER };
    names.forEach((w, i) => Object.assign(files, RT20[w].files, { [`plugins/t${i}.js`]: RT20[w].plugin }));
    const ws = workspace(files);
    snapshot(ws.root, "console.log('ok')");
    approve(ws);
    names.forEach((w, i) => assert.match(run(ws, ['server.js', `t${i}`]).out, /ANSWER ok/, w));
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
    names.forEach((w, i) => assert.match(run(ws, ['server.js', `t${i}`]).out, /ANSWER ok/, `${w}, after a README edit`));
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# server\n');
    names.forEach((w, i) => {
      RT20[w].attack(ws);
      const r = run(ws, ['server.js', `t${i}`]);
      assert.doesNotMatch(r.out + r.err, /PWNED/, w);
      assert.match(r.out, /FAILED/, `${w}: ${r.out}${r.err}`);
      assert.match(r.out + r.err, RT20[w].why, `${w}: ${r.out}${r.err}`);
      approve(ws); // (each attack against an approval of the others' changes)
    });
  });

  it('a changed file handed to a program is taken in, as in the Python guard: a program off the safe list (tar) is then refused, a safe one (cat) runs', () => {
    // (gdb -x, sqlite3 -init, m4 and the like run what such a file says: no list of them is whole)
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': 'approved\n',
      'plugins/tar.js':
        "const cp = require('child_process'), path = require('path');\nmodule.exports = () => { cp.execFileSync('tar', ['-cf', '/dev/null', 'data.txt'], { cwd: path.join(__dirname, '..') }); return 'ok'; };\n",
      'plugins/cat.js':
        "const cp = require('child_process'), path = require('path');\nmodule.exports = () => cp.execFileSync('cat', ['data.txt'], { cwd: path.join(__dirname, '..') }).toString().trim() ? 'ok' : 'no';\n",
    });
    approve(ws);
    for (const p of ['tar', 'cat']) assert.match(run(ws, ['server.js', p]).out, /ANSWER ok/, p);
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
    for (const p of ['tar', 'cat']) assert.match(run(ws, ['server.js', p]).out, /ANSWER ok/, `${p}, README edited (never handed)`);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), 'changed\n');
    const tar = run(ws, ['server.js', 'tar']);
    assert.match(tar.out, /FAILED ERR_MCP_GATE_GUARD/, tar.out + tar.err);
    assert.match(
      tar.err,
      /refused spawn tar \(a program that may run code it is given\).*data\.txt \(data\.txt\): it changed since approval/,
      tar.err,
    );
    assert.match(run(ws, ['server.js', 'cat']).out, /ANSWER ok/, 'cat, a safe program, handed the changed file');
  });

  it("a shell line started by a library function handed it as a callback (no workspace frame under it) is no library's own start", () => {
    const ws = workspace({
      'server.js': SERVER,
      'data.txt': 'echo ok\n',
      'plugins/cb.js': `const fs = require('fs'), path = require('path');
const spawn = require(path.join(process.env.NM, 'cross-spawn'));
module.exports = () => {
  const t = fs.readFileSync(path.join(__dirname, '..', 'data.txt'), 'utf8');
  setImmediate(spawn.sync, 'sh', ['-c', t], { stdio: 'inherit' });
  return new Promise((res) => setTimeout(() => res('ok'), 200));
};
`,
    });
    approve(ws);
    assert.match(run(ws, ['server.js', 'cb']).out, /ANSWER ok/);
    fs.writeFileSync(path.join(ws.root, 'data.txt'), 'echo PWNED >&2; echo ok\n');
    const r = run(ws, ['server.js', 'cb']);
    assert.doesNotMatch(r.out + r.err, /PWNED/, r.out + r.err);
    assert.match(r.err, /refused spawn sh .*data\.txt \(data\.txt\): it changed since approval/, r.err);
  });

  it('a ShadowRealm (its own eval and module loader, which the guard is not in) is refused when made (red team 18)', () => {
    const ws = workspace({
      'server.js': SERVER,
      'plugins/realm.js': "module.exports = () => new ShadowRealm().evaluate('1 + 1');\n",
    });
    approve(ws);
    const r = run(ws, ['--experimental-shadow-realm', 'server.js', 'realm']);
    assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, r.out + r.err);
    assert.match(r.err, /a ShadowRealm has an eval and a module loader of its own/, r.err);
  });

  it("Node's internal modules are refused to a require with no parent, or one that names the guard's file (red team 17, n17)", () => {
    const ws = workspace({
      'server.js': SERVER,
      'plugins/a.js': "module.exports = () => { require('module')._load('internal/vm', null, false); return 'ran'; };\n",
      'plugins/b.js': `module.exports = () => { require('module')._load('internal/vm', { filename: ${JSON.stringify(GUARD)} }, false); return 'ran'; };\n`,
    });
    approve(ws);
    for (const p of ['a', 'b']) {
      const r = run(ws, ['server.js', p]);
      assert.match(r.out, /FAILED ERR_MCP_GATE_GUARD/, `${p}: ${r.out}${r.err}`);
      assert.match(r.err, /it asked for node:internal\/vm, one of Node's internal modules/, r.err);
    }
  });
});
