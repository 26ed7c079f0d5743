// What a file can load, read with a parser (src/trust/plan/loads.ts): literal paths found whatever their spelling,
// and every load of a path computed at run time reported with its line, so the closure pins the whole workspace.
import assert from 'node:assert/strict';
import { loadsOf } from '../../../../src/trust/plan/loads';
import { substitute } from '../../../../src/trust/plan/launch-plan';

const computed = (file: string, text: string) => loadsOf(file, text).computed?.what;

describe('loads: what a JavaScript or TypeScript file can load', () => {
  it('finds literal paths however they are spelled (escapes, octal, line continuation, templates, comments around)', () => {
    assert.deepEqual(loadsOf('a.js', "require('\\x2e\\x2e/a.js'); require('\\56\\56/b.js'); require('..\\\n/c.js'); import(`../d.mjs`); /* require('../e') */").specs, ['../a.js', '../b.js', '../c.js', '../d.mjs']);
    assert.deepEqual(loadsOf('a.mjs', "import x from '../lib/a.js';\nexport * from './b.js';\nexport { y } from '../c.js';").specs, ['../lib/a.js', './b.js', '../c.js']);
  });

  it('reads TypeScript (and TSX) by the file name, types included', () => {
    const l = loadsOf('a.ts', "import type { T } from '../types';\nimport x = require('../lib/x');\nconst f = <U,>(u: U): U => u;\nexport = f;");
    assert.equal(l.computed, undefined);
    assert.deepEqual(l.specs, ['../types', '../lib/x']);
    assert.equal(loadsOf('a.tsx', "import '../x'; const e = <div a={1 as number} />;").computed, undefined);
  });

  it('a load of a computed path names its line and what does it', () => {
    assert.deepEqual(loadsOf('a.js', "const p = require('path');\nrequire(p.join(__dirname, 'x'));").computed, { line: 2, what: 'require() loads a path computed at run time' });
    assert.match(computed('a.js', "require(__dirname + '/../x')")!, /require\(\) loads a path computed/);
    assert.match(computed('a.mjs', 'await import(`./p/${n}.js`)')!, /import\(\) loads a path computed/);
    assert.match(computed('a.js', 'require.resolve(name)')!, /require\.resolve\(\) names a path computed/);
    assert.match(computed('a.mjs', 'import.meta.resolve(name)')!, /import\.meta\.resolve\(\)/);
    assert.match(computed('a.js', "const { Worker } = require('worker_threads'); new Worker(file)")!, /new Worker\(\) runs a path computed/);
    assert.match(computed('a.js', 'process.dlopen(module, file)')!, /process\.dlopen\(\)/);
    assert.match(computed('a.js', "const m = require('module'); m.register(hook, import.meta.url)")!, /register\(\) loads a module hook|more than createRequire/);
  });

  it('a loader under another name is a loader: createRequire, an alias, require handed on as a value', () => {
    assert.equal(computed('a.mjs', "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq('./x.json');"), undefined);
    assert.match(computed('a.mjs', "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq(name);")!, /req\(\) loads a path computed/);
    assert.match(computed('a.js', 'createRequire(base)(name)')!, /createRequire/);
    assert.match(computed('a.js', 'const r = require; r(x)')!, /r\(\) loads a path computed/);
    assert.match(computed('a.js', 'plugins.load(require)')!, /hands require on as a value/);
    assert.match(computed('a.js', 'require.call(null, x)')!, /require\.call\(\)/);
    assert.equal(computed('a.js', "if (require.main === module) main(); typeof require; module.exports = {};"), undefined);
  });

  it('loaders reached another way: renamed createRequire, a destructured require, Module.prototype.require, process.binding, import("vm")', () => {
    assert.match(computed('a.mjs', "import { createRequire as cr } from 'node:module';\nconst q = cr(import.meta.url);\nq(name);")!, /q\(\) loads a path computed/);
    assert.match(computed('a.js', "const { createRequire: cr } = require('module'); cr(__filename)(name)")!, /createRequire loads a path computed/);
    assert.match(computed('a.js', 'const { require: r } = module; r(name)')!, /r\(\) loads a path computed|hands r on as a value/);
    assert.match(computed('a.js', "const M = require('module'); M.prototype.require.call(module, name)")!, /takes require as a value|more than createRequire/);
    assert.match(computed('a.js', "globalThis.process.binding('spawn_sync')")!, /binding\(\) reaches Node's internals/);
    assert.match(computed('a.mjs', "await import('node:vm')")!, /imports node:vm/);
    assert.equal(computed('a.js', "module.exports.require = 1; const o = { require: 2 };"), undefined);
  });

  it('a child process given its own variables, or process.env changed before one starts, is a computed load', () => {
    assert.match(computed('a.js', "const { spawn } = require('child_process'); spawn('node', ['s.js'], { env: { NODE_OPTIONS: '--require ../x.js' } })")!, /starts a program/);
    assert.match(computed('a.js', "const cp = require('child_process'); process.env.NODE_OPTIONS = '--require ../x.js'; cp.spawn('node', ['s.js'])")!, /changes process\.env before starting a child|starts a program/);
    assert.equal(computed('a.js', "process.env.FOO = '1';"), undefined);
  });

  it('code built at run time: eval, Function, vm, a function looked up by a computed name', () => {
    assert.match(computed('a.js', "eval('1')")!, /eval\(\) runs code/);
    assert.match(computed('a.js', "new Function('return this')")!, /Function\(\) runs code/);
    assert.match(computed('a.js', "globalThis['ev' + 'al'](s)")!, /looks up by a name computed/);
    assert.match(computed('a.mjs', "import vm from 'node:vm';")!, /imports node:vm/);
    assert.match(computed('a.js', "require('vm')")!, /requires vm/);
    assert.equal(computed('a.js', "handlers['list'](x); arr[0](y)"), undefined);
  });

  it('child processes: starting any program is a computed load (it reads what it likes, code on stdin included)', () => {
    assert.match(computed('a.js', "const { spawn } = require('child_process'); spawn('node', ['../lib/s.js'])")!, /spawn\(\) starts a program/);
    assert.match(computed('a.js', "require('child_process').execFileSync('node', ['data/plugin.js'])")!, /execFileSync\(\) starts a program/);
    assert.match(computed('a.js', "const cp = require('node:child_process'); cp.execSync('ls')")!, /execSync\(\) starts a program/);
    // Without child_process, `.exec` is a regular expression's or a database's.
    assert.equal(computed('a.js', "/a/.exec(s); db.exec(q)"), undefined);
  });

  it('what the red team found: indirect eval, constructors, Reflect, getBuiltinModule, module state, /proc paths, HTML comments', () => {
    assert.match(computed('a.js', "(0, eval)(src)")!, /uses eval/);
    assert.match(computed('a.js', "[eval][0](src)")!, /uses eval/);
    assert.match(computed('a.js', "(() => {}).constructor(src)()")!, /constructor by value/);
    assert.match(computed('a.js', "Reflect.get(module, 'require').call(module, p)")!, /Reflect\.get\(\)|module\.\[/);
    assert.match(computed('a.js', "process.getBuiltinModule('vm').runInThisContext(s)")!, /getBuiltinModule/);
    assert.match(computed('a.js', "module.paths.unshift(dir); require('plugin')")!, /module\.paths reaches the module loader/);
    assert.match(computed('a.js', "const r = module['re' + 'quire']")!, /module\.\[…\]|looks up module/);
    assert.match(computed('a.js', "require('/proc/self/cwd/data/plugin.js')")!, /\/proc\/self\/cwd/);
    assert.match(computed('a.js', "const { Module } = require('module'); new Module('x', module)")!, /more than createRequire/);
    assert.match(computed('a.mjs', "import { Module } from 'node:module';")!, /more than createRequire/);
    assert.equal(computed('a.mjs', "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); require('./x.json');"), undefined);
    assert.equal(computed('a.js', "const { createRequire } = require('module');"), undefined);
    // `<!--` starts a comment in a script (how Node runs CommonJS), not in a module: both readings count.
    assert.match(computed('a.js', 'var x = 0, y = 0;\nx <!--y; `\nrequire(require("path").join(process.cwd(), "data", "p.js"));\nx <!--`;\n')!, /require\(\) loads a path computed/);
    assert.equal(computed('a.js', "if (x.constructor === Object) module.exports = x instanceof Function;"), undefined);
    assert.deepEqual(loadsOf('a.js', "require('/abs/lib/x.js')").specs, ['/abs/lib/x.js']);
  });

  it('what the second red team found: a destructured constructor, cluster, node:test, v8, WebAssembly, prototype lookups, require.extensions', () => {
    assert.match(computed('a.js', "const { constructor: F } = () => {}; F(src)()")!, /constructor by destructuring/);
    assert.match(computed('a.js', "const { [k]: f } = obj; f(p)")!, /destructures a member by a name computed/);
    assert.match(computed('a.js', "(() => {})['constructor'](src)()")!, /constructor by value/);
    assert.match(computed('a.js', "require('cluster').setupPrimary({ exec: p })")!, /requires cluster/);
    assert.match(computed('a.mjs', "import { run } from 'node:test'; run({ files: [p] })")!, /imports node:test/);
    assert.match(computed('a.js', "require('v8').setFlagsFromString(f)")!, /requires v8/);
    assert.match(computed('a.js', "new WebAssembly.Module(bytes)")!, /WebAssembly/);
    assert.match(computed('a.js', "Reflect.getPrototypeOf(f)['const' + 'ructor'](src)")!, /computed at run time/);
    assert.match(computed('a.js', "Object.getPrototypeOf(f)[k](src)")!, /prototype's member|computed/);
    assert.match(computed('a.js', "require.extensions['.txt'] = (m, f) => m._compile(read(f), f)")!, /require\.extensions|_compile/);
    // Ordinary code stays computed-free.
    assert.equal(computed('a.js', "const { readFileSync: r, join } = require('fs'); class A { constructor() {} }; const o = { constructor: 1 };"), undefined);
  });

  it('what a load guard cannot check is told apart from a load of a file (code): the closure then falls back to the prediction', () => {
    const code = (text: string) => loadsOf('a.js', text).code?.what;
    // Loads of files: the guard checks each when it loads.
    for (const text of ['require(name)', "import(`./p/${n}.js`)", 'const r = require; r(x)', 'new Worker(f)']) {
      assert.ok(loadsOf('a.js', text).computed, text);
      assert.equal(code(text), undefined, text);
    }
    // Code from strings, programs, the module loader: not a file the guard sees.
    assert.match(code('eval(x)')!, /eval\(\) runs code/);
    assert.match(code("require('vm').runInThisContext(s)")!, /runs code it is given/);
    assert.match(code("const { spawn } = require('child_process'); spawn('sh')")!, /starts a program/);
    // child_process handed on by another file, and the global object taken as a value (red team, issue 43).
    assert.match(code("module.exports = require('child_process');")!, /takes child_process/);
    assert.match(code("const g = globalThis; const run = g[['ev', 'al'].join('')]; run(src);")!, /global object as a value/);
  });

  it('new Worker(new URL(literal, import.meta.url)) is a literal path', () => {
    const l = loadsOf('a.mjs', "import { Worker } from 'node:worker_threads'; new Worker(new URL('./w.js', import.meta.url));");
    assert.equal(l.computed, undefined);
    assert.deepEqual(l.specs, ['./w.js']);
  });

  it('a file that does not parse says so (the closure then pins the whole workspace for a .js file)', () => {
    assert.match(computed('a.js', 'this is not javascript')!, /cannot be read as JavaScript/);
    assert.match(computed('a.ts', 'let x: = 1')!, /cannot be read as TypeScript/);
  });
});

describe('launch plan: workspace variables', () => {
  it('are substituted in one pass: a folder whose name holds ${workspaceRoot} is not substituted again', () => {
    assert.equal(substitute('${workspaceFolder}/x:${workspaceFolderBasename}', '/tmp/a-${workspaceRoot}'), '/tmp/a-${workspaceRoot}/x:a-${workspaceRoot}');
  });
});
