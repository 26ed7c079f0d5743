// What a file can load, read with a parser (src/trust/plan/loads.ts): literal paths found whatever their spelling,
// and every load of a path computed at run time reported with its line, so the closure pins the whole workspace.
import assert from 'node:assert/strict';
import { loadsOf } from '../../../../src/trust/plan/loads';
import { substitute } from '../../../../src/trust/plan/launch-plan';

const computed = (file: string, text: string) => loadsOf(file, text).computed?.what;

describe('loads: what a JavaScript or TypeScript file can load', () => {
  it('finds literal paths however they are spelled (escapes, octal, line continuation, templates, comments around)', () => {
    assert.deepEqual(
      loadsOf(
        'a.js',
        "require('\\x2e\\x2e/a.js'); require('\\56\\56/b.js'); require('..\\\n/c.js'); import(`../d.mjs`); /* require('../e') */",
      ).specs,
      ['../a.js', '../b.js', '../c.js', '../d.mjs'],
    );
    assert.deepEqual(loadsOf('a.mjs', "import x from '../lib/a.js';\nexport * from './b.js';\nexport { y } from '../c.js';").specs, [
      '../lib/a.js',
      './b.js',
      '../c.js',
    ]);
  });

  it('reads TypeScript (and TSX) by the file name, types included', () => {
    const l = loadsOf(
      'a.ts',
      "import type { T } from '../types';\nimport x = require('../lib/x');\nconst f = <U,>(u: U): U => u;\nexport = f;",
    );
    assert.equal(l.computed, undefined);
    assert.deepEqual(l.specs, ['../types', '../lib/x']);
    assert.equal(loadsOf('a.tsx', "import '../x'; const e = <div a={1 as number} />;").computed, undefined);
  });

  it('a load of a computed path names its line and what does it', () => {
    assert.deepEqual(loadsOf('a.js', "const p = require('path');\nrequire(p.join(__dirname, 'x'));").computed, {
      line: 2,
      what: 'require() loads a path computed at run time',
    });
    assert.match(computed('a.js', "require(__dirname + '/../x')")!, /require\(\) loads a path computed/);
    assert.match(computed('a.mjs', 'await import(`./p/${n}.js`)')!, /import\(\) loads a path computed/);
    assert.match(computed('a.js', 'require.resolve(name)')!, /require\.resolve\(\) names a path computed/);
    assert.match(computed('a.mjs', 'import.meta.resolve(name)')!, /import\.meta\.resolve\(\)/);
    assert.match(
      computed('a.js', "const { Worker } = require('worker_threads'); new Worker(file)")!,
      /new Worker\(\) runs a path computed/,
    );
    assert.match(computed('a.js', 'process.dlopen(module, file)')!, /process\.dlopen\(\)/);
    assert.match(
      computed('a.js', "const m = require('module'); m.register(hook, import.meta.url)")!,
      /register\(\) loads a module hook|more than createRequire/,
    );
  });

  it('a loader under another name is a loader: createRequire, an alias, require handed on as a value', () => {
    assert.equal(
      computed('a.mjs', "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq('./x.json');"),
      undefined,
    );
    assert.match(
      computed('a.mjs', "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq(name);")!,
      /req\(\) loads a path computed/,
    );
    assert.match(computed('a.js', 'createRequire(base)(name)')!, /createRequire/);
    assert.match(computed('a.js', 'const r = require; r(x)')!, /r\(\) loads a path computed/);
    assert.match(computed('a.js', 'plugins.load(require)')!, /hands require on as a value/);
    assert.match(computed('a.js', 'require.call(null, x)')!, /require\.call\(\)/);
    assert.equal(computed('a.js', 'if (require.main === module) main(); typeof require; module.exports = {};'), undefined);
  });

  it('loaders reached another way: renamed createRequire, a destructured require, Module.prototype.require, process.binding, import("vm")', () => {
    assert.match(
      computed('a.mjs', "import { createRequire as cr } from 'node:module';\nconst q = cr(import.meta.url);\nq(name);")!,
      /q\(\) loads a path computed/,
    );
    assert.match(
      computed('a.js', "const { createRequire: cr } = require('module'); cr(__filename)(name)")!,
      /createRequire loads a path computed/,
    );
    assert.match(computed('a.js', 'const { require: r } = module; r(name)')!, /r\(\) loads a path computed|hands r on as a value/);
    assert.match(
      computed('a.js', "const M = require('module'); M.prototype.require.call(module, name)")!,
      /takes require as a value|more than createRequire/,
    );
    assert.match(computed('a.js', "globalThis.process.binding('spawn_sync')")!, /binding\(\) reaches Node's internals/);
    // process.execve (Node 23.11+; red team 13, case 22): the process becomes a program, however it is reached
    assert.match(computed('a.js', "process.execve('/bin/sh', ['sh', '-c', line])")!, /execve\(\) replaces the process with a program/);
    assert.match(computed('a.js', "const { execve } = process;\nexecve('/bin/sh', ['sh'])")!, /takes execve by destructuring/);
    assert.match(computed('a.js', "const f = process['exec' + 've'] || process[k]; f()")!, /computed at run time|execve/);
    assert.match(computed('a.js', "const f = process['execve'];")!, /execve/);
    // Function reached through the prototype of a function value, its properties enumerated (red team 13, case 02)
    assert.match(
      computed(
        'a.js',
        'const F = Object.values(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(() => 0))).map((d) => d.value)[0];',
      )!,
      /prototype of a function/,
    );
    assert.match(computed('a.js', 'Reflect.getPrototypeOf(async function () {});')!, /prototype of a function/);
    assert.equal(computed('a.js', 'const proto = Object.getPrototypeOf(obj);'), undefined, 'the prototype of a value is not flagged');
    assert.match(computed('a.mjs', "await import('node:vm')")!, /imports node:vm/);
    assert.equal(computed('a.js', 'module.exports.require = 1; const o = { require: 2 };'), undefined);
  });

  it('a child process given its own variables, or process.env changed before one starts, is a computed load', () => {
    assert.match(
      computed(
        'a.js',
        "const { spawn } = require('child_process'); spawn('node', ['s.js'], { env: { NODE_OPTIONS: '--require ../x.js' } })",
      )!,
      /starts a program/,
    );
    assert.match(
      computed('a.js', "const cp = require('child_process'); process.env.NODE_OPTIONS = '--require ../x.js'; cp.spawn('node', ['s.js'])")!,
      /changes process\.env before starting a child|starts a program/,
    );
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
    assert.match(
      computed('a.js', "const { spawn } = require('child_process'); spawn('node', ['../lib/s.js'])")!,
      /spawn\(\) starts a program/,
    );
    assert.match(
      computed('a.js', "require('child_process').execFileSync('node', ['data/plugin.js'])")!,
      /execFileSync\(\) starts a program/,
    );
    assert.match(computed('a.js', "const cp = require('node:child_process'); cp.execSync('ls')")!, /execSync\(\) starts a program/);
    // Without child_process, `.exec` is a regular expression's or a database's.
    assert.equal(computed('a.js', '/a/.exec(s); db.exec(q)'), undefined);
  });

  it('what the red team found: indirect eval, constructors, Reflect, getBuiltinModule, module state, /proc paths, HTML comments', () => {
    assert.match(computed('a.js', '(0, eval)(src)')!, /uses eval/);
    assert.match(computed('a.js', '[eval][0](src)')!, /uses eval/);
    assert.match(computed('a.js', '(() => {}).constructor(src)()')!, /constructor by value/);
    assert.match(computed('a.js', "Reflect.get(module, 'require').call(module, p)")!, /Reflect\.get\(\)|module\.\[/);
    assert.match(computed('a.js', "process.getBuiltinModule('vm').runInThisContext(s)")!, /getBuiltinModule/);
    assert.match(computed('a.js', "module.paths.unshift(dir); require('plugin')")!, /module\.paths reaches the module loader/);
    assert.match(computed('a.js', "const r = module['re' + 'quire']")!, /module\.\[…\]|looks up module/);
    assert.match(computed('a.js', "require('/proc/self/cwd/data/plugin.js')")!, /\/proc\/self\/cwd/);
    assert.match(computed('a.js', "const { Module } = require('module'); new Module('x', module)")!, /more than createRequire/);
    assert.match(computed('a.mjs', "import { Module } from 'node:module';")!, /more than createRequire/);
    assert.equal(
      computed(
        'a.mjs',
        "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); require('./x.json');",
      ),
      undefined,
    );
    assert.equal(computed('a.js', "const { createRequire } = require('module');"), undefined);
    // `<!--` starts a comment in a script (how Node runs CommonJS), not in a module: both readings count.
    assert.match(
      computed('a.js', 'var x = 0, y = 0;\nx <!--y; `\nrequire(require("path").join(process.cwd(), "data", "p.js"));\nx <!--`;\n')!,
      /require\(\) loads a path computed/,
    );
    assert.equal(computed('a.js', 'if (x.constructor === Object) module.exports = x instanceof Function;'), undefined);
    assert.deepEqual(loadsOf('a.js', "require('/abs/lib/x.js')").specs, ['/abs/lib/x.js']);
  });

  it('what the second red team found: a destructured constructor, cluster, node:test, v8, WebAssembly, prototype lookups, require.extensions', () => {
    assert.match(computed('a.js', 'const { constructor: F } = () => {}; F(src)()')!, /constructor by destructuring/);
    assert.match(computed('a.js', 'const { [k]: f } = obj; f(p)')!, /destructures a member by a name computed/);
    assert.match(computed('a.js', "(() => {})['constructor'](src)()")!, /constructor by value/);
    assert.match(computed('a.js', "require('cluster').setupPrimary({ exec: p })")!, /requires cluster/);
    assert.match(computed('a.mjs', "import { run } from 'node:test'; run({ files: [p] })")!, /imports node:test/);
    assert.match(computed('a.js', "require('v8').setFlagsFromString(f)")!, /requires v8/);
    assert.match(computed('a.js', 'new WebAssembly.Module(bytes)')!, /WebAssembly/);
    assert.match(computed('a.js', "Reflect.getPrototypeOf(f)['const' + 'ructor'](src)")!, /computed at run time/);
    assert.match(computed('a.js', 'Object.getPrototypeOf(f)[k](src)')!, /prototype's member|computed/);
    assert.match(computed('a.js', "require.extensions['.txt'] = (m, f) => m._compile(read(f), f)")!, /require\.extensions|_compile/);
    // Ordinary code stays computed-free.
    assert.equal(
      computed('a.js', "const { readFileSync: r, join } = require('fs'); class A { constructor() {} }; const o = { constructor: 1 };"),
      undefined,
    );
  });

  it('what a load guard cannot check is told apart from a load of a file (code): the closure then falls back to the prediction', () => {
    const code = (text: string) => loadsOf('a.js', text).code?.what;
    // Loads of files: the guard checks each when it loads.
    for (const text of [
      'require(name)',
      'import(`./p/${n}.js`)',
      'const r = require; r(x)',
      "const path = require('path'); new Worker(path.join(__dirname, f))",
    ]) {
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

  describe('what the third red team found: each is code (a load guard cannot see it), with its line', () => {
    /** The `code` verdict's line, and that its `what` matches. */
    const codeAt = (text: string, line: number, what: RegExp, file = 'a.js') => {
      const c = loadsOf(file, text).code;
      assert.ok(c, `not code: ${text}`);
      assert.equal(c.line, line, `${text}: ${c.what}`);
      assert.match(c.what, what, text);
    };
    const notCode = (text: string, file = 'a.js') => assert.equal(loadsOf(file, text).code, undefined, text);

    it('02: Function (and its kin, eval) reached as a value through the global object, a string key, destructuring, a constructor', () => {
      codeAt(
        "const fs = require('fs');\nconst F = globalThis.Function;\nF(fs.readFileSync('p.txt', 'utf8'))();",
        2,
        /Function as a property/,
      );
      codeAt('x();\nconst F = global.Function;', 2, /Function as a property/);
      codeAt('x();\nconst F = self.Function;', 2, /Function as a property/);
      codeAt("x();\nconst F = globalThis['Function'];", 2, /Function as a property|'Function' as a string/);
      codeAt("x();\nconst F = Reflect.get(globalThis, 'Function');", 2, /global object as a value|Reflect\.get|'Function'/);
      codeAt('x();\nconst { Function: F } = globalThis;', 2, /Function by destructuring|global object/);
      codeAt('x();\nconst A = Object.getPrototypeOf(async function () {}).constructor;\nA(src)();', 2, /constructor by value/);
      codeAt('x();\n(function () {}).constructor(src)();', 2, /constructor by value/);
      codeAt('x();\nconst G = Object.getPrototypeOf(function* () {}).constructor;', 2, /constructor by value/);
      codeAt('x();\nconst e = globalThis.eval;', 2, /eval/);
      codeAt('x();\nconst A = AsyncFunction;', 2, /uses AsyncFunction/);
    });

    it('03: WebAssembly however it is reached (globalThis.WebAssembly, a string key, destructuring)', () => {
      codeAt(
        "const fs = require('fs');\nfunction run() { const W = globalThis.WebAssembly; return new W.Instance(new W.Module(fs.readFileSync('p.wasm'))); }",
        2,
        /WebAssembly/,
      );
      codeAt("x();\nconst W = global['WebAssembly'];", 2, /WebAssembly/);
      codeAt('x();\nconst { WebAssembly: W } = globalThis;', 2, /WebAssembly by destructuring|global object/);
    });

    it('04 / 04b / 05b: createRequire(anything) with a code module, a computed name, or handed on', () => {
      codeAt(
        "const { createRequire } = require('node:module');\nfunction run() { return createRequire('/usr/lib/x.js')('vm').runInThisContext(s); }",
        2,
        /requires vm through createRequire/,
      );
      codeAt(
        "const { createRequire } = require('node:module');\nfunction run() { const mod = ['v','m'].join(''); return createRequire('/usr/lib/x.js')(mod); }",
        2,
        /createRequire loads a path computed.*parent is made up/,
      );
      codeAt(
        "const path = require('path'); const { createRequire } = require('node:module');\nconst cp = createRequire(path.join(__dirname, 'none.js'))(['child','process'].join('_'));\ncp.execFileSync('/bin/sh', ['-c', '. \"$PLUGIN\"']);",
        2,
        /createRequire loads a path computed/,
      );
      codeAt(
        "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq(name);",
        3,
        /req\(\) loads a path computed.*createRequire/,
        'a.mjs',
      );
      codeAt(
        "import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq('node:vm');",
        3,
        /requires node:vm/,
        'a.mjs',
      );
      codeAt(
        "const { createRequire } = require('module');\nplugins.init(createRequire(base));",
        2,
        /hands a require made by createRequire on/,
      );
      // A literal file through one stays a plain load.
      notCode("import { createRequire } from 'node:module';\nconst req = createRequire(import.meta.url);\nreq('./x.json');", 'a.mjs');
    });

    it('14, not: `delete require.cache[…]` only makes the next require read the file again (checked then)', () => {
      const l = loadsOf('a.js', "delete require.cache[require.resolve('./lib.js')];\nmodule.exports = () => require('./lib.js');");
      assert.equal(l.code, undefined, JSON.stringify(l));
      assert.deepEqual(l.specs, ['./lib.js']);
    });

    it('14: require.cache, require.main, module.parent, module.children, module.constructor, process.mainModule, Module internals', () => {
      codeAt(
        "x();\nconst host = Object.values(require.cache).find((m) => m.filename.indexOf(__dirname) !== 0);\nhost.require('vm').runInThisContext(s);",
        2,
        /require\.cache/,
      );
      codeAt("x();\nhost.require('vm');", 2, /requires vm/);
      codeAt('x();\nhost.require(name);', 2, /as another module/);
      codeAt("x();\nrequire.main.require('vm');", 2, /require\.main|requires vm/);
      codeAt('x();\nconst p = module.parent; p.require(n);', 2, /module\.parent/);
      codeAt('x();\nmodule.children[0].require(n);', 2, /module\.children|as another module/);
      codeAt('x();\nconst M = module.constructor;', 2, /module\.constructor|constructor by value/);
      codeAt('x();\nprocess.mainModule.require(n);', 2, /mainModule|as another module/);
      codeAt('x();\nconst c = module.children;', 2, /module\.children/);
      codeAt('x();\nconst m = process.mainModule;', 2, /mainModule/);
      codeAt("x();\nconst l = M['_load'];", 2, /_load/);
      codeAt('x();\nconst l = M._resolveFilename;', 2, /_resolveFilename/);
      // The usual idioms stay as they were.
      notCode(
        "if (require.main === module) main();\nif (!module.parent) main();\nconst root = require('path').dirname(require.main.filename);",
      );
    });

    it('01: new Worker(src, opts) with options not an object literal of literal keys without eval', () => {
      codeAt(
        "const { Worker } = require('node:worker_threads');\nconst opts = { eval: true };\nnew Worker(src, opts);",
        2,
        /uses eval|'eval'/,
      );
      codeAt(
        "const { Worker } = require('node:worker_threads');\nconst opts = JSON.parse(text);\nnew Worker('./w.js', opts);",
        3,
        /options that may say eval/,
      );
      codeAt("const { Worker } = require('node:worker_threads');\nx();\nnew Worker('./w.js', { ...o });", 3, /options that may say eval/);
      codeAt(
        "const { Worker } = require('node:worker_threads');\nx();\nnew Worker('./w.js', { [k]: true });",
        3,
        /options that may say eval/,
      );
      codeAt("const { Worker: W } = require('node:worker_threads');\nx();\nnew W(src, o);", 3, /new W\(\) is given options/);
      codeAt("const wt = require('node:worker_threads');\nx();\nspawnWith(wt.Worker);", 3, /takes Worker as a value|Worker/);
      // A URL object may be a data: URL.
      codeAt("const { Worker } = require('node:worker_threads');\nx();\nnew Worker(new URL(u));", 3, /need not be a file/);
      // An object literal of literal keys, no eval: a load of a file as before.
      const l = loadsOf(
        'a.js',
        "const { Worker } = require('node:worker_threads'); const path = require('path');\nnew Worker(path.join(__dirname, name), { workerData: { a: 1 }, 'stdout': true });",
      );
      assert.equal(l.code, undefined);
      assert.match(l.computed!.what, /new Worker\(\) runs a path computed/);
      notCode("const { Worker } = require('node:worker_threads');\nnew Worker('./w.js', { workerData: 1 });");
    });

    it('06: data: URLs and an import() of a value that need not be a file', () => {
      codeAt(
        "const fs = require('fs');\nasync function load() { const m = await import('data:text/javascript,' + encodeURIComponent(fs.readFileSync('p.txt'))); }",
        2,
        /data: URL/,
      );
      codeAt('x();\nconst u = `DATA:application/javascript,${src}`;', 2, /data: URL/);
      codeAt(
        "x();\nawait import(['da', 'ta:text/javascript,'].join('') + src);",
        2,
        /import\(\) loads a value computed at run time that need not be a file/,
        'a.mjs',
      );
      codeAt("x();\nawait import('da' + 'ta:text/javascript,' + src);", 2, /need not be a file/, 'a.mjs');
      codeAt('x();\nawait import(spec);', 2, /need not be a file/, 'a.mjs');
      codeAt("import 'data:text/javascript,console.log(1)';", 1, /data: URL/, 'a.mjs');
      // A computed path under a literal folder, or a file: URL of one, is still a plain load the guard checks.
      for (const text of [
        'await import(`./plugins/${n}.js`)',
        "import path from 'node:path'; import { pathToFileURL } from 'node:url';\nawait import(pathToFileURL(path.join(import.meta.dirname, 'p', n)).href)",
        "const path = require('path');\nconst file = path.resolve(dir, n);\nimport(file)",
      ]) {
        const r = loadsOf('a.mjs', text);
        assert.equal(r.code, undefined, text);
        assert.ok(r.computed, text);
      }
      // Strings that say data but are no runnable URL.
      notCode("const kind = 'data'; const img = `data:image/png;base64,${b64}`; log('data: loaded', 'metadata:x');");
    });

    it('aliases of our own: a descriptor of eval, import() of a built-in by a computed name, vm through module.require', () => {
      codeAt("x();\nObject.getOwnPropertyDescriptor(globalThis, 'eval').value(src);", 2, /global object as a value|'eval'/);
      codeAt("x();\nObject.getOwnPropertyDescriptor(Object.getPrototypeOf(f), 'constructor').value(src);", 2, /'constructor'/);
      codeAt("x();\nconst m = await import('node:' + ['v', 'm'].join(''));", 2, /need not be a file/, 'a.mjs');
      codeAt("x();\nmodule.require('node:vm').runInThisContext(s);", 2, /requires node:vm/);
      codeAt('x();\nconst { eval: e } = globalThis;', 2, /eval by destructuring|global object/);
      codeAt('x();\nconst g = globalThis.globalThis; g[k](s);', 2, /\.globalThis/);
      codeAt('x();\nconst v = Object.values(Object.getOwnPropertyDescriptors(global));', 2, /global object as a value/);
    });

    it('ordinary code that mentions none of these stays not code', () => {
      notCode(
        "const fs = require('fs'); const path = require('path');\nrequire('./x');\nconst o = { data: 1, kind: 'data', constructor: 2 };\nif (typeof v === 'function' && v instanceof Function) o.data = v;\nif (key === 'constructor' || key === '__proto__') return;\nclass A { constructor() {} }\nmodule.exports = { a: fs.readFileSync(path.join(__dirname, 'data.json'), 'utf8') };",
      );
      notCode(
        "import { readFile } from 'node:fs/promises';\nimport './x.js';\nconst s: Function = () => 1;\nexport const t = typeof globalThis.fetch;\nexport default globalThis.process?.env;",
        'a.ts',
      );
    });
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
    assert.equal(
      substitute('${workspaceFolder}/x:${workspaceFolderBasename}', '/tmp/a-${workspaceRoot}'),
      '/tmp/a-${workspaceRoot}/x:a-${workspaceRoot}',
    );
  });
});
