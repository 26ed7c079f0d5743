// What a JavaScript or TypeScript file can load, read with a real parser (@babel/parser), never a pattern: every
// string the file holds (escapes decoded by the parser: `'\56\56/x'`, `'\x2e\x2e/x'`, a line continuation) that
// reads as a relative path, and every place where the file loads code from a value it computes at run time — a
// `require`, `import()`, `require.resolve`, `createRequire(…)`, `import.meta.resolve`, `module.register`,
// `process.dlopen`, `new Worker`, a child process, `eval`/`Function`/`vm` — whose argument is not a literal, or a
// loader handed on as a value (`const r = require`). A computed load, or a file that does not parse, means the
// file can load any file of the workspace: the closure (./closure.ts) then pins the whole workspace, and says
// why with the file and line. Pure: text in, verdict out. The parser is loaded at the first parse (./babel.ts).
//
// `code` (what a load guard cannot check; the server then runs on the snapshot) is a deliberate superset, by name:
// - eval, Function, AsyncFunction, GeneratorFunction, AsyncGeneratorFunction, WebAssembly: a reference by name, as
//   a property (`globalThis.Function`), as a destructured key, or as a string not only compared (`g['Function']`,
//   `Reflect.get(g, 'eval')`); `x instanceof Function`, `typeof`, TypeScript types and object-literal keys (`eval`
//   excepted: a Worker option) are not. `.constructor` / `['constructor']` taken as a value, and the string
//   'constructor' used other than compared or as an object-literal key.
// - The global object (`globalThis`, `global`, not rebound) taken as a value, or reached as `.globalThis`/`.global`.
// - createRequire: its require called with a code module or a computed name, or handed on (its parent is made up);
//   `x.require(…)` with a code module, or with a computed name on anything but `module`; `require.cache`,
//   `require.main` / `module.parent` / `process.mainModule` (except compared, tested, or their filename read),
//   `module.children`, Module internals (`_load`, `_resolveFilename`, `_compile`, …) by property or string.
// - Worker (any local name for it): options not an object literal of literal keys without eval, spread or extra
//   arguments, a computed first argument that need not be a file (a URL object may be a data: URL), Worker as a value.
// - data: a string or template starting with a `data:` URL Node could run (any but image/audio/video/font and plain
//   text ones); and any import() (or module.register) of a computed value that is not provably a file path or file:
//   URL (a literal `./`, `../`, `/`, `file:` prefix; __dirname, import.meta.dirname, process.cwd(); node:path's
//   resolve, join/dirname of such; node:url's pathToFileURL/fileURLToPath; a const bound once to one of those), since
//   `'da' + 'ta:…'` builds a data: URL and a computed name can be a built-in such as vm.
import type { ParserPlugin } from '@babel/parser';
import type * as Babel from './babel';

let babel: typeof Babel | undefined;
/**
 * @babel/parser, loaded once, when a file is first read (the bundles carry it in dist/parser.js). A parser that
 * cannot be loaded is MCP Gate's own failure, never a file that "does not parse": it throws, and the check refuses.
 */
function parser(): typeof Babel {
  if (babel) return babel;
  try {
    babel = require('./babel') as typeof Babel;
  } catch (e) {
    throw new Error(
      `MCP Gate cannot read JavaScript or TypeScript files: its parser (parser.js beside MCP Gate's own files) cannot be loaded (${(e as Error).message.split('\n')[0]}); install MCP Gate again`,
    );
  }
  return babel;
}

export interface Loads {
  /** Relative-looking literals (`./x`, `../x`, `..`), decoded, with `/` separators: a superset of what it loads. */
  specs: string[];
  /** Set when the file can load a path computed at run time (or cannot be read as code): line and what does it. */
  computed?: { line: number; what: string };
  /**
   * Set when what it does at run time is not a load of a file (code built from strings, a child process, Node's
   * loader internals): the first such, which a load guard cannot check (`computed` is then set too).
   */
  code?: { line: number; what: string };
}

type Node = { type: string; loc?: { start: { line: number } } | null; [k: string]: unknown };

const TS = /\.(ts|mts|cts)$/i;
const TSX = /\.tsx$/i;
const JSX = /\.jsx$/i;

/** Parser plugins by file name: TypeScript for .ts/.mts/.cts, with JSX for .tsx; JSX for .jsx; plain JS else. */
function pluginsFor(file: string): ParserPlugin[] {
  if (TSX.test(file)) return ['typescript', 'jsx'];
  if (TS.test(file)) return ['typescript'];
  if (JSX.test(file)) return ['jsx'];
  return [];
}

/**
 * Modules whose use lets a file run code it is given at run time: vm, the REPL, the inspector's evaluate, cluster
 * (`setupPrimary({ exec })` forks any file), node:test (`run({ files })`), v8 (`setFlagsFromString`), wasi.
 */
const CODE_MODULES = new Set(['vm', 'repl', 'inspector', 'cluster', 'test', 'v8', 'wasi']);
const bareModule = (s: string) => s.replace(/^node:/, '');
/** Names that run code however they are reached (a name, a property, a string, a destructured key): eval, the Function constructors, WebAssembly. */
const CODE_NAMES = /^(eval|Function|AsyncFunction|GeneratorFunction|AsyncGeneratorFunction|WebAssembly)$/;
/** Node's module loader internals (Module._load, require.extensions, …), by property name on any object. */
const LOADER_STATE =
  /^(_load|_resolveFilename|_compile|_extensions|_cache|_pathCache|_findPath|_resolveLookupPaths|_initPaths|_preloadModules|_nodeModulePaths|runMain)$/;
/** A `data:` URL that Node could run as a module (any but an image, audio, video, font or plain text one). */
const DATA_URL = /^\s*data:([\w.+-]+\/[\w.+-]+)?\s*([;,]|$)/i;
const DATA_INERT = /^\s*data:((image|audio|video|font)\/|text\/(plain|html|css|csv|markdown)\s*[;,])/i;
const CHILD_START = /^(execFile|execFileSync|spawn|spawnSync|fork)$/;
const CHILD_SHELL = /^(exec|execSync)$/;

function isLiteral(n: Node | undefined): boolean {
  if (!n) return true; // no argument: nothing computed
  if (n.type === 'StringLiteral' || n.type === 'NumericLiteral') return true;
  // `new URL('./worker.js', import.meta.url)`: a literal path beside the file.
  if (n.type === 'NewExpression' && (n.callee as Node).type === 'Identifier' && (n.callee as Node).name === 'URL') {
    const [a, b] = n.arguments as Node[];
    return isLiteral(a) && (b === undefined || (b.type === 'MemberExpression' && (b.object as Node).type === 'MetaProperty'));
  }
  if (n.type === 'TemplateLiteral') return (n.expressions as unknown[]).length === 0;
  if (n.type === 'ArrayExpression') return (n.elements as (Node | null)[]).every((e) => e === null || isLiteral(e));
  if (
    n.type === 'TSAsExpression' ||
    n.type === 'TSNonNullExpression' ||
    n.type === 'TSSatisfiesExpression' ||
    n.type === 'ParenthesizedExpression'
  )
    return isLiteral(n.expression as Node);
  return false;
}

function lineOf(n: Node): number {
  return n.loc?.start.line ?? 0;
}

/**
 * How Node may compile the file: an `.mjs` as a module, a `.cjs` as a script; any other (`.js`, extensionless,
 * unknown) as either — its package.json `type`, or Node's own syntax detection, decides at run time — so it is
 * read both ways and what either reading loads counts (`<!--` is a comment in a script, not in a module).
 */
function goals(file: string): ('script' | 'module')[] {
  if (/\.mjs$/i.test(file)) return ['module'];
  if (/\.cjs$/i.test(file)) return ['script'];
  if (TS.test(file) || TSX.test(file)) return ['module'];
  return ['script', 'module'];
}

/** What `file` (its name decides TypeScript, JSX and how Node compiles it) with this text can load. */
export function loadsOf(file: string, text: string): Loads {
  const { parse } = parser();
  const readings: Loads[] = [];
  let failure: { line: number; message: string } | undefined;
  for (const goal of goals(file)) {
    let ast: Node;
    try {
      ast = parse(text, {
        sourceType: goal,
        plugins: pluginsFor(file),
        errorRecovery: false,
        allowHashBang: true,
        allowReturnOutsideFunction: goal === 'script',
        allowAwaitOutsideFunction: true,
        allowImportExportEverywhere: goal === 'module',
        allowSuperOutsideMethod: true,
        allowUndeclaredExports: true,
      } as Parameters<typeof parse>[1]) as unknown as Node;
    } catch (e) {
      failure ??= { line: (e as { loc?: { line: number } }).loc?.line ?? 0, message: (e as Error).message.replace(/\s*\(\d+:\d+\)$/, '') };
      continue;
    }
    readings.push(loadsOfAst(ast));
  }
  if (!readings.length) {
    // Nothing is known of it: what it does at run time may be more than loading files.
    const unread = {
      line: failure?.line ?? 0,
      what: `it cannot be read as ${TS.test(file) || TSX.test(file) ? 'TypeScript' : 'JavaScript'} (${failure?.message ?? 'no reading'}), so what it loads is not known`,
    };
    return { specs: [], computed: unread, code: unread };
  }
  return {
    specs: [...new Set(readings.flatMap((r) => r.specs))],
    computed: readings.find((r) => r.computed)?.computed,
    code: readings.find((r) => r.code)?.code,
  };
}

function loadsOfAst(ast: Node): Loads {
  const specs = new Set<string>();
  let computed: Loads['computed'];
  let code: Loads['code'];
  /** `load`: a load of a file (a guard at load sees it); `code`: anything else (the default). */
  const flag = (n: Node, what: string, kind: 'load' | 'code' = 'code') => {
    if (!computed) computed = { line: lineOf(n), what };
    if (kind === 'code' && !code) code = { line: lineOf(n), what };
  };
  const addString = (v: string, at: Node) => {
    const s = v.replace(/\\/g, '/');
    // `/proc/self/cwd/…` names the workspace from wherever the process stands: not a path MCP Gate can pin.
    if (/^\/(proc|dev\/fd)\//.test(s)) return flag(at, `it names ${s.slice(0, 60)}, a path the process resolves at run time`, 'load');
    if (s.startsWith('/') && s.length > 1) specs.add(s);
    if (s === '..' || s === '../') specs.add('..');
    else if (s.startsWith('../') || s.startsWith('./')) specs.add(s);
  };
  // A JSX pragma in any comment (`/** @jsxImportSource ../x */`): esbuild, tsx and Babel then import
  // `<source>/jsx-runtime` (or `jsx-dev-runtime`) into the file, a load no string literal of the code names.
  for (const c of (ast as { comments?: Node[] }).comments ?? []) {
    for (const m of String(c.value ?? '').matchAll(/@jsxImportSource\s+(\S+)/g)) {
      for (const runtime of ['jsx-runtime', 'jsx-dev-runtime']) addString(`${m[1].replace(/\/+$/, '')}/${runtime}`, c);
    }
  }
  // Names bound to a loader (`const req = createRequire(import.meta.url)`, `const r = require`): calls through them
  // are loads too. Collected before the walk's checks, in a first pass.
  const loaderNames = new Set(['require']);
  /** Names of createRequire itself (`import { createRequire as cr } from 'module'`, `const { createRequire: cr } = …`). */
  const makers = new Set(['createRequire']);
  // The modules it names anywhere (import, require, a string): calls named like theirs are checked only then.
  let usesChild = false;
  let usesModule = false;
  const keyName = (p: Node): string | undefined => {
    const k = p.key as Node | undefined;
    if (!k) return undefined;
    if (k.type === 'Identifier' && !p.computed) return k.name as string;
    if (k.type === 'StringLiteral') return k.value as string;
    return undefined;
  };
  const visitAll = (root: Node, fn: (n: Node, parent: Node | undefined, key: string) => void) => {
    const stack: [Node, Node | undefined, string][] = [[root, undefined, '']];
    while (stack.length) {
      const [n, parent, key] = stack.pop()!;
      fn(n, parent, key);
      for (const k of Object.keys(n)) {
        if (
          k === 'loc' ||
          k === 'start' ||
          k === 'end' ||
          k === 'extra' ||
          k === 'leadingComments' ||
          k === 'trailingComments' ||
          k === 'innerComments'
        )
          continue;
        const v = n[k];
        if (Array.isArray(v)) {
          for (let i = v.length - 1; i >= 0; i--)
            if (v[i] && typeof v[i] === 'object' && typeof (v[i] as Node).type === 'string') stack.push([v[i] as Node, n, k]);
        } else if (v && typeof v === 'object' && typeof (v as Node).type === 'string') stack.push([v as Node, n, k]);
      }
    }
  };
  const calleeName = (c: Node): string | undefined => {
    if (c.type === 'Identifier') return c.name as string;
    if (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') {
      const p = c.property as Node;
      if (!c.computed && p.type === 'Identifier') return p.name as string;
      if (p.type === 'StringLiteral') return p.value as string;
    }
    return undefined;
  };
  /** Names bound to a require made by createRequire: a computed name through one is code (its parent is made up). */
  const madeNames = new Set<string>();
  /** Names of worker_threads' Worker (`const { Worker: W } = …`, `const W = wt.Worker`). */
  const workerNames = new Set(['Worker']);
  /** How often each name is bound (declared, a parameter, assigned): a path helper or `__dirname` is trusted only unrebound. */
  const bindings = new Map<string, number>();
  const bind = (id: Node | undefined | null) => {
    if (id?.type === 'Identifier') bindings.set(id.name as string, (bindings.get(id.name as string) ?? 0) + 1);
  };
  /** `const x = <init>`: the init of a name bound once, by const. */
  const constInit = new Map<string, Node>();
  /** Names bound to node:path or node:url (`const path = require('path')`, `import * as url from 'node:url'`). */
  const pathNs = new Set<string>();
  /** Functions of node:path or node:url under a local name (`const { join } = require('path')`): local → theirs. */
  const pathFns = new Map<string, string>();
  const PATH_MODULES = /^(node:)?(path|url)$/;
  const unwrap = (x: Node): Node => {
    while (
      x.type === 'TSAsExpression' ||
      x.type === 'TSNonNullExpression' ||
      x.type === 'TSSatisfiesExpression' ||
      x.type === 'ParenthesizedExpression'
    )
      x = x.expression as Node;
    return x;
  };
  const requiresPath = (x: Node | undefined | null): boolean => {
    if (!x) return false;
    x = unwrap(x);
    if (x.type !== 'CallExpression' || (x.callee as Node).type !== 'Identifier' || (x.callee as Node).name !== 'require') return false;
    const a = (x.arguments as Node[])[0];
    return a?.type === 'StringLiteral' && PATH_MODULES.test(a.value as string);
  };
  visitAll(ast, (n, parent, key) => {
    if (n.type === 'ImportSpecifier' && ((n.imported as Node).name ?? (n.imported as Node).value) === 'createRequire')
      makers.add((n.local as Node).name as string);
    if (n.type === 'ImportSpecifier' && ((n.imported as Node).name ?? (n.imported as Node).value) === 'Worker')
      workerNames.add((n.local as Node).name as string);
    if (n.type === 'ObjectPattern') {
      for (const p of n.properties as Node[]) {
        if (p.type !== 'ObjectProperty' || (p.value as Node).type !== 'Identifier') continue;
        const k = keyName(p);
        if (k === 'createRequire') makers.add((p.value as Node).name as string);
        if (k === 'require') loaderNames.add((p.value as Node).name as string);
        if (k === 'Worker') workerNames.add((p.value as Node).name as string);
        if (k && parent?.type === 'VariableDeclarator' && key === 'id' && requiresPath(parent.init as Node))
          pathFns.set((p.value as Node).name as string, k);
      }
    }
    if (n.type === 'ImportDeclaration' && PATH_MODULES.test(String((n.source as Node).value))) {
      for (const x of n.specifiers as Node[]) {
        if (x.type === 'ImportSpecifier')
          pathFns.set((x.local as Node).name as string, String((x.imported as Node).name ?? (x.imported as Node).value));
        else pathNs.add((x.local as Node).name as string);
      }
    }
    // Bindings: declarators, parameters, catch clauses, patterns, assignments, imports.
    if (n.type === 'VariableDeclarator') {
      const id = n.id as Node;
      if (id.type === 'Identifier') {
        bind(id);
        if (n.init && parent?.type === 'VariableDeclaration' && parent.kind === 'const') constInit.set(id.name as string, n.init as Node);
        if (requiresPath(n.init as Node)) pathNs.add(id.name as string);
        if (n.init) {
          const init = unwrap(n.init as Node);
          if (init.type === 'CallExpression' && makers.has(calleeName(init.callee as Node) ?? '')) madeNames.add(id.name as string);
          if (
            (init.type === 'Identifier' && workerNames.has(init.name as string)) ||
            ((init.type === 'MemberExpression' || init.type === 'OptionalMemberExpression') && calleeName(init) === 'Worker')
          )
            workerNames.add(id.name as string);
        }
      }
    }
    if (
      (n.type === 'FunctionDeclaration' ||
        n.type === 'FunctionExpression' ||
        n.type === 'ArrowFunctionExpression' ||
        n.type === 'ObjectMethod' ||
        n.type === 'ClassMethod') &&
      Array.isArray(n.params)
    )
      for (const q of n.params as Node[]) bind(q);
    if (n.type === 'FunctionDeclaration' || n.type === 'ClassDeclaration') bind(n.id as Node);
    if (n.type === 'CatchClause') bind(n.param as Node);
    if (n.type === 'AssignmentPattern' || n.type === 'AssignmentExpression') bind(n.left as Node);
    if (n.type === 'RestElement') bind(n.argument as Node);
    if (n.type === 'ArrayPattern') for (const e of n.elements as (Node | null)[]) bind(e);
    if (n.type === 'ObjectProperty' && parent?.type === 'ObjectPattern') bind(n.value as Node);
    if (n.type === 'UpdateExpression') bind(n.argument as Node);
    if (n.type === 'ImportSpecifier' || n.type === 'ImportDefaultSpecifier' || n.type === 'ImportNamespaceSpecifier') bind(n.local as Node);
  });
  const once = (name: string) => (bindings.get(name) ?? 0) === 1;
  const unbound = (name: string) => !bindings.has(name);
  /**
   * A value that is a file path or a file: URL whatever it holds at run time, never a data: URL: a literal path
   * prefix (`./`, `../`, `/`, `file:`) before what is computed; `__dirname`, `__filename`, `import.meta.dirname`,
   * `process.cwd()` (not rebound); node:path's resolve, and join/dirname of such a path; node:url's pathToFileURL and
   * fileURLToPath (and `.href`, `.pathname`, `.toString()` of those); a const bound once to any of these.
   */
  const fileish = (x: Node | undefined, depth = 0): boolean => {
    if (!x || depth > 8) return false;
    x = unwrap(x);
    const prefix = (s: unknown) => typeof s === 'string' && /^(\.{1,2}\/|\/|file:)/i.test(s);
    if (x.type === 'StringLiteral') return prefix(x.value);
    if (x.type === 'TemplateLiteral') {
      const q0 = ((x.quasis as Node[])[0].value as { cooked?: string | null }).cooked;
      if (prefix(q0)) return true;
      return q0 === '' && (x.expressions as Node[]).length > 0 && fileish((x.expressions as Node[])[0], depth + 1);
    }
    if (x.type === 'BinaryExpression' && x.operator === '+') return fileish(x.left as Node, depth + 1);
    if (x.type === 'Identifier') {
      const name = x.name as string;
      if ((name === '__dirname' || name === '__filename') && unbound(name)) return true;
      return once(name) && constInit.has(name) && fileish(constInit.get(name), depth + 1);
    }
    if (x.type === 'MetaProperty') return false;
    if ((x.type === 'MemberExpression' || x.type === 'OptionalMemberExpression') && !x.computed) {
      const o = x.object as Node;
      const prop = (x.property as Node).name;
      if (o.type === 'MetaProperty' && (prop === 'dirname' || prop === 'filename')) return true;
      if (prop === 'href' || prop === 'pathname') return fileish(o, depth + 1);
      return false;
    }
    if (x.type === 'CallExpression' || x.type === 'NewExpression') {
      const c = unwrap(x.callee as Node);
      const args = x.arguments as Node[];
      if (x.type === 'NewExpression') return c.type === 'Identifier' && c.name === 'URL' && unbound('URL') && fileish(args[0], depth + 1);
      if (
        (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') &&
        !c.computed &&
        (c.object as Node).type === 'Identifier' &&
        (c.object as Node).name === 'process' &&
        unbound('process') &&
        (c.property as Node).name === 'cwd'
      )
        return true;
      if (
        (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') &&
        !c.computed &&
        (c.property as Node).name === 'toString' &&
        args.length === 0
      )
        return fileish(c.object as Node, depth + 1);
      let fn: string | undefined;
      if (c.type === 'Identifier' && pathFns.has(c.name as string) && once(c.name as string)) fn = pathFns.get(c.name as string);
      else if ((c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') && !c.computed) {
        const o = c.object as Node;
        const viaNs = o.type === 'Identifier' && pathNs.has(o.name as string) && once(o.name as string);
        const viaPosix =
          o.type === 'MemberExpression' &&
          !o.computed &&
          (o.object as Node).type === 'Identifier' &&
          pathNs.has((o.object as Node).name as string) &&
          once((o.object as Node).name as string) &&
          /^(posix|win32)$/.test(String((o.property as Node).name));
        if (viaNs || viaPosix || requiresPath(o)) fn = (c.property as Node).name as string;
      }
      if (fn === 'resolve' || fn === 'pathToFileURL' || fn === 'fileURLToPath') return true;
      if (fn === 'join' || fn === 'dirname' || fn === 'normalize') return fileish(args[0], depth + 1);
      return false;
    }
    return false;
  };
  let childAt: Node | undefined;
  let globalAlias: Node | undefined;
  visitAll(ast, (n) => {
    if (n.type === 'StringLiteral') {
      const m = bareModule(n.value as string);
      if (m === 'child_process') {
        usesChild = true;
        childAt ??= n;
      }
      if (m === 'module') usesModule = true;
    }
    if (n.type === 'VariableDeclarator' && (n.id as Node).type === 'Identifier' && n.init) {
      let init = n.init as Node;
      while (init.type === 'TSAsExpression' || init.type === 'TSNonNullExpression' || init.type === 'ParenthesizedExpression')
        init = init.expression as Node;
      // `const g = globalThis; g[name]`: eval and Function reached by a computed name on an alias.
      if (init.type === 'Identifier' && (init.name === 'globalThis' || init.name === 'global')) globalAlias ??= n;
      if (
        (init.type === 'CallExpression' && makers.has(calleeName(init.callee as Node) ?? '')) ||
        (init.type === 'Identifier' && init.name === 'require')
      )
        loaderNames.add((n.id as Node).name as string);
    }
  });
  /**
   * `import(x)` of a computed x: a load guard checks file: URLs only, so x must be a file path or file: URL whatever
   * it holds (see fileish); else it may be a data: URL (`'da' + 'ta:…'`) or a built-in (vm): code.
   */
  const dynamicImport = (n: Node, a: Node | undefined) => {
    if (isLiteral(a)) return;
    if (fileish(a)) return flag(n, 'import() loads a path computed at run time', 'load');
    flag(
      n,
      'import() loads a value computed at run time that need not be a file (a data: URL or a built-in such as vm, which no load guard checks)',
    );
  };
  const checkCall = (n: Node) => {
    const callee = n.callee as Node;
    const args = (n.arguments as Node[]) ?? [];
    const computedArg = (a: Node | undefined, what: string) => {
      if (!isLiteral(a)) flag(n, what, 'load');
    };
    const codeModule = (a: Node | undefined) => a?.type === 'StringLiteral' && CODE_MODULES.has(bareModule(a.value as string));
    if (callee.type === 'Import') {
      if (codeModule(args[0])) return flag(n, `it imports ${args[0].value as string}, which runs code it is given at run time`);
      return dynamicImport(n, args[0]);
    }
    if (callee.type === 'CallExpression' && makers.has(calleeName(callee.callee as Node) ?? '')) {
      if (codeModule(args[0]))
        return flag(n, `it requires ${args[0].value as string} through createRequire, which runs code it is given at run time`);
      // The guard knows a require by its parent, which createRequire makes up (any path, one that does not exist).
      if (!isLiteral(args[0]))
        return flag(
          n,
          'a require made by createRequire loads a path computed at run time (its parent is made up, so no load guard can tell whose load it is)',
        );
      return;
    }
    const name = calleeName(callee);
    if (name === undefined) {
      // `x[k](…)` with a key computed at run time can be any function, a loader included.
      if (
        (callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') &&
        callee.computed &&
        !isLiteral(callee.property as Node)
      )
        flag(n, 'it calls a function it looks up by a name computed at run time (it could be a loader)');
      return;
    }
    const isMember = callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression';
    const object = isMember ? (callee.object as Node) : undefined;
    const objectName = object?.type === 'Identifier' ? (object.name as string) : undefined;
    if (name === 'eval' || name === 'Function') return flag(n, `${name}() runs code the file builds at run time`);
    if (n.type === 'NewExpression' && workerNames.has(name)) {
      // `eval: true` runs the first argument as code: options that are not an object literal of literal keys, none
      // of them eval, may hold it (`new Worker(src, opts)`).
      const opts = args[1];
      if (args.length > 2 || args.some((a) => a.type === 'SpreadElement'))
        return flag(n, `new ${name}() is given arguments it spreads or more than two (eval may be among its options)`);
      if (
        opts &&
        !(
          opts.type === 'ObjectExpression' &&
          (opts.properties as Node[]).every((p) => p.type === 'ObjectProperty' && keyName(p) !== undefined && keyName(p) !== 'eval')
        )
      )
        return flag(n, `new ${name}() is given options that may say eval: true (then it runs its first argument as code)`);
      if (isLiteral(args[0])) return;
      // A URL object may be a data: URL, which runs the code it holds.
      if (!fileish(args[0]))
        return flag(
          n,
          `new ${name}() runs a path computed at run time that need not be a file (a data: URL object runs the code it holds)`,
        );
      return flag(n, `new ${name}() runs a path computed at run time`, 'load');
    }
    if (!isMember && makers.has(name)) return; // what it makes is checked where it is called
    if (!isMember && loaderNames.has(name)) {
      const a0 = args[0];
      if (codeModule(a0)) return flag(n, `it requires ${a0.value as string}, which runs code it is given at run time`);
      if (madeNames.has(name) && !isLiteral(a0))
        return flag(
          n,
          `${name}() loads a path computed at run time through a require made by createRequire (its parent is made up, so no load guard can tell whose load it is)`,
        );
      return computedArg(a0, `${name}() loads a path computed at run time`);
    }
    if (isMember && name === 'resolve' && ((objectName !== undefined && loaderNames.has(objectName)) || object?.type === 'MetaProperty'))
      return computedArg(args[0], `${objectName ?? 'import.meta'}.resolve() names a path computed at run time`);
    if (isMember && objectName !== undefined && loaderNames.has(objectName) && /^(call|apply|bind)$/.test(name))
      return flag(n, `${objectName}.${name}() loads what it is given at run time`, 'load');
    if (isMember && name === 'require') {
      if (codeModule(args[0]))
        return flag(n, `${objectName ?? 'a'}.require() requires ${args[0].value as string}, which runs code it is given at run time`);
      // Another module's require (one from require.cache, require.main) loads as that module: the guard cannot tell.
      if (objectName !== 'module' && !isLiteral(args[0]))
        return flag(
          n,
          `${objectName ?? 'a'}.require() loads a path computed at run time as another module (no load guard can tell whose load it is)`,
        );
      return computedArg(args[0], `${objectName ?? 'a'}.require() loads a path computed at run time`);
    }
    if (isMember && name === 'dlopen') return computedArg(args[1], 'process.dlopen() loads a path computed at run time');
    if (isMember && (name === 'binding' || name === '_linkedBinding'))
      return flag(n, `${name}() reaches Node's internals (it can start programs)`);
    if (/^(_load|_resolveFilename|_compile|_extensions)$/.test(name))
      return flag(n, `${name}() is Node's module loader, called with what the file computes`);
    if (usesModule && name === 'register' && !isLiteral(args[0]))
      return flag(
        n,
        'register() loads a module hook computed at run time (it may be a data: URL, and a hook decides what every later load runs)',
      );
    // A child process runs a program that reads what it likes (a path relative to its own folder, code on stdin,
    // `git show` of fetched objects): none of it is pinned, so the whole workspace is.
    if (usesChild && (CHILD_SHELL.test(name) || CHILD_START.test(name)))
      return flag(n, `${name}() starts a program, which can run any file of the workspace`);
    // Reflection that reaches any function or constructor by value.
    if (isMember && objectName === 'Reflect' && /^(apply|construct|get)$/.test(name))
      return flag(n, `Reflect.${name}() calls or reaches what it is given at run time (a loader or eval included)`);
  };
  /** Where a value is only compared (`=== 'constructor'`, `'eval' in o`, `case 'Function':`): it is not taken. */
  const compared = (parent: Node | undefined, key: string) =>
    !!parent &&
    ((parent.type === 'BinaryExpression' &&
      (/^[!=]==?$/.test(parent.operator as string) || (parent.operator === 'in' && key === 'left'))) ||
      (parent.type === 'SwitchCase' && key === 'test'));
  /** Object literal keys and class members (not a destructuring, whose keys take values). */
  const patternProps = new WeakSet<Node>();
  const literalKey = (parent: Node | undefined, key: string) =>
    !!parent &&
    key === 'key' &&
    !patternProps.has(parent) &&
    /^(ObjectProperty|ObjectMethod|ClassProperty|ClassMethod|ClassPrivateProperty|ClassAccessorProperty|TSPropertySignature|TSMethodSignature)$/.test(
      parent.type,
    );
  /** A string naming what runs code, used other than compared: it can be a key that reaches it (`globalThis['Function']`, `Reflect.get(g, 'eval')`, `getOwnPropertyDescriptor(p, 'constructor')`). */
  const checkString = (v: string, n: Node, parent: Node | undefined, key: string) => {
    if (DATA_URL.test(v) && !DATA_INERT.test(v)) return flag(n, `it names a data: URL (${v.slice(0, 40)}), code no load guard checks`);
    if (compared(parent, key)) return;
    if (CODE_NAMES.test(v) && !(literalKey(parent, key) && v !== 'eval'))
      return flag(n, `it names '${v}' as a string, a key that reaches what runs code it builds at run time`);
    if (LOADER_STATE.test(v) || v === 'mainModule') return flag(n, `it names '${v}' as a string, a key that reaches Node's module loader`);
    if (
      v === 'constructor' &&
      !literalKey(parent, key) &&
      !((parent?.type === 'MemberExpression' || parent?.type === 'OptionalMemberExpression') && key === 'property')
    )
      return flag(n, "it names 'constructor' as a string, a key that reaches Function (it runs code it is given)");
  };
  /** How `require.main`, `module.parent`, `process.mainModule` may be used without reaching the loader: compared, tested, or their file name read. */
  const benignModuleRef = (n: Node, parent: Node | undefined, key: string) => {
    if (!parent) return true;
    if (compared(parent, key)) return true;
    if (parent.type === 'UnaryExpression' && (parent.operator === '!' || parent.operator === 'typeof')) return true;
    if ((parent.type === 'IfStatement' || parent.type === 'ConditionalExpression') && key === 'test') return true;
    if (
      (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') &&
      key === 'object' &&
      !parent.computed &&
      /^(filename|id|path|loaded)$/.test(String((parent.property as Node).name))
    )
      return true;
    return false;
  };
  const isGlobalName = (id: string) => (id === 'globalThis' || id === 'global') && unbound(id);
  // `delete require.cache[…]` only makes the next require read the file again (checked then): not code.
  const deletedFromCache = new Set<Node>();
  visitAll(ast, (n, parent, key) => {
    if (n.type === 'UnaryExpression' && n.operator === 'delete') {
      const arg = n.argument as Node;
      if ((arg.type === 'MemberExpression' || arg.type === 'OptionalMemberExpression') && (arg.object as Node).type === 'MemberExpression')
        deletedFromCache.add(arg.object as Node);
    }
    switch (n.type) {
      case 'StringLiteral':
        addString(n.value as string, n);
        checkString(n.value as string, n, parent, key);
        return;
      case 'TemplateLiteral':
        (n.quasis as Node[]).forEach((q, i) => {
          const cooked = (q.value as { cooked?: string | null }).cooked;
          if (typeof cooked !== 'string') return;
          addString(cooked, q);
          if (i === 0 && DATA_URL.test(cooked) && !DATA_INERT.test(cooked))
            flag(q, `it names a data: URL (${cooked.slice(0, 40)}), code no load guard checks`);
          if ((n.quasis as Node[]).length === 1) checkString(cooked, n, parent, key);
        });
        return;
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration': {
        const src = n.source as Node | null;
        if (src && CODE_MODULES.has(bareModule(src.value as string)))
          flag(n, `it imports ${src.value as string}, which runs code it is given at run time`);
        // From node:module only createRequire (whose requires are checked): Module itself loads anything.
        if (
          src &&
          bareModule(src.value as string) === 'module' &&
          (n.type !== 'ImportDeclaration' ||
            (n.specifiers as Node[]).some(
              (x) => x.type !== 'ImportSpecifier' || ((x.imported as Node).name ?? (x.imported as Node).value) !== 'createRequire',
            ))
        )
          flag(n, `it takes more than createRequire from ${src.value as string} (the module loader itself)`);
        return;
      }
      case 'AssignmentExpression': {
        // `process.env.NODE_OPTIONS = '--require …'` before starting a child: the child loads what the value says.
        const left = n.left as Node;
        if (usesChild && (left.type === 'MemberExpression' || left.type === 'OptionalMemberExpression')) {
          const o = left.object as Node;
          if (
            (o.type === 'MemberExpression' &&
              (o.object as Node).type === 'Identifier' &&
              (o.object as Node).name === 'process' &&
              calleeName(o) === 'env') ||
            (o.type === 'Identifier' && o.name === 'process' && calleeName(left) === 'env')
          )
            flag(n, 'it changes process.env before starting a child process (NODE_OPTIONS and its kin load any file)');
        }
        return;
      }
      case 'MemberExpression':
      case 'OptionalMemberExpression': {
        // `(() => {}).constructor(code)`: Function reached through any function's constructor; comparing is fine.
        const property = n.property as Node;
        const prop = n.computed
          ? property.type === 'StringLiteral'
            ? (property.value as string)
            : property.type === 'TemplateLiteral' && (property.expressions as Node[]).length === 0
              ? ((property.quasis as Node[])[0].value as { cooked?: string }).cooked
              : undefined
          : property.type === 'Identifier'
            ? (property.name as string)
            : undefined;
        if (prop === 'constructor' && !(parent?.type === 'BinaryExpression' && /^[!=]==?$/.test(parent.operator as string)))
          flag(n, 'it reaches a constructor by value (Function runs code it is given)');
        if (prop !== undefined && CODE_NAMES.test(prop))
          flag(
            n,
            `it reaches ${prop} as a property (${prop === 'WebAssembly' ? 'WebAssembly compiles code it may read at run time' : `${prop} runs code it builds at run time`})`,
          );
        if (prop !== undefined && LOADER_STATE.test(prop)) flag(n, `it reaches ${prop}, Node's module loader itself`);
        if (
          prop === 'Worker' &&
          !(parent?.type === 'NewExpression' && key === 'callee') &&
          !(parent?.type === 'VariableDeclarator' && key === 'init' && (parent.id as Node).type === 'Identifier')
        )
          flag(n, 'it takes Worker as a value, so a worker it starts (eval: true runs code) is not seen');
        if (prop === 'globalThis' || prop === 'global')
          flag(n, `it reaches the global object as .${prop} (eval and Function are reachable through it)`);
        if (prop === 'mainModule' && !benignModuleRef(n, parent, key))
          flag(n, 'it reaches process.mainModule, whose require loads as another module (no load guard can tell whose load it is)');
        {
          const o = n.object as Node;
          const onLoader = o.type === 'Identifier' && (loaderNames.has(o.name as string) || o.name === 'require');
          if (onLoader && prop === 'cache' && !deletedFromCache.has(n))
            flag(n, "it reaches require.cache, the loaded modules (their require loads as another module, the load guard's own included)");
          if (onLoader && prop === 'main' && !benignModuleRef(n, parent, key))
            flag(n, 'it reaches require.main, whose require loads as another module (no load guard can tell whose load it is)');
          // module.children is refused with the rest of module's loader state (the Identifier rule below).
          if (o.type === 'Identifier' && o.name === 'module' && prop === 'parent' && !benignModuleRef(n, parent, key))
            flag(n, 'it reaches module.parent, whose require loads as another module (no load guard can tell whose load it is)');
        }
        // `Object.getPrototypeOf(f)[k]`, `f.__proto__[k]`: a computed name on a function's prototype can be its constructor.
        const obj = n.object as Node;
        if (
          n.computed &&
          !isLiteral(property) &&
          ((obj.type === 'CallExpression' && calleeName(obj.callee as Node) === 'getPrototypeOf') ||
            ((obj.type === 'MemberExpression' || obj.type === 'OptionalMemberExpression') &&
              !obj.computed &&
              (obj.property as Node).name === '__proto__'))
        )
          flag(n, "it looks up a prototype's member by a name computed at run time (it could be Function)");
        // `require.extensions[…] = …`: a handler for what every later require loads.
        if (prop === 'extensions' && obj.type === 'Identifier' && (loaderNames.has(obj.name as string) || obj.name === 'require'))
          flag(n, 'it reaches require.extensions, which decides how every later file is loaded');
        if (
          n.computed &&
          !isLiteral(n.property as Node) &&
          (n.object as Node).type === 'Identifier' &&
          (loaderNames.has((n.object as Node).name as string) ||
            (n.object as Node).name === 'module' ||
            (n.object as Node).name === 'process' ||
            (n.object as Node).name === 'globalThis' ||
            (n.object as Node).name === 'global')
        )
          flag(n, `it looks up ${(n.object as Node).name as string}[…] by a name computed at run time`);
        // `Module.prototype.require.call(…)`, `const r = module.require`: a require taken as a value.
        if (
          !n.computed &&
          (n.property as Node).type === 'Identifier' &&
          loaderNames.has((n.property as Node).name as string) &&
          !(parent && (parent.type === 'CallExpression' || parent.type === 'OptionalCallExpression') && key === 'callee') &&
          !(parent?.type === 'AssignmentExpression' && key === 'left')
        )
          flag(
            n,
            `it takes ${(n.property as Node).name as string} as a value, so what it loads through it is not seen (nor as which module)`,
          );
        return;
      }
      case 'ObjectPattern': {
        // `const { constructor: F } = () => {}`: Function taken by destructuring; a computed key can be anything.
        for (const p of n.properties as Node[]) {
          if (p.type !== 'ObjectProperty') continue;
          patternProps.add(p);
          const k = keyName(p);
          if (k !== undefined && (CODE_NAMES.test(k) || LOADER_STATE.test(k) || /^(globalThis|global|mainModule)$/.test(k)))
            flag(p, `it takes ${k} by destructuring (it runs code, or reaches what does)`);
          if (keyName(p) === 'constructor') flag(p, 'it reaches a constructor by destructuring (Function runs code it is given)');
          else if (p.computed && !isLiteral(p.key as Node))
            flag(p, 'it destructures a member by a name computed at run time (it could be a constructor or a loader)');
        }
        return;
      }
      case 'ImportExpression': {
        if (!isLiteral(n.source as Node)) dynamicImport(n, n.source as Node);
        return;
      }
      case 'NewExpression':
      case 'CallExpression':
      case 'OptionalCallExpression': {
        const a0 = ((n.arguments as Node[]) ?? [])[0];
        if (
          (n.callee as Node).type === 'Identifier' &&
          loaderNames.has((n.callee as Node).name as string) &&
          a0?.type === 'StringLiteral' &&
          bareModule(a0.value as string) === 'module'
        ) {
          const onlyMaker =
            (parent?.type === 'VariableDeclarator' &&
              key === 'init' &&
              (parent.id as Node).type === 'ObjectPattern' &&
              ((parent.id as Node).properties as Node[]).every((p) => p.type === 'ObjectProperty' && keyName(p) === 'createRequire')) ||
            ((parent?.type === 'MemberExpression' || parent?.type === 'OptionalMemberExpression') &&
              key === 'object' &&
              !parent.computed &&
              (parent.property as Node).name === 'createRequire');
          if (!onlyMaker) flag(n, `it takes more than createRequire from ${a0.value as string} (the module loader itself)`);
        }
        // `createRequire(x)` is called, bound to a name (whose calls are checked), or asked to resolve: else it is handed on.
        if (
          n.type === 'CallExpression' &&
          makers.has(calleeName(n.callee as Node) ?? '') &&
          !(
            parent &&
            (parent.type === 'CallExpression' || parent.type === 'OptionalCallExpression' || parent.type === 'NewExpression') &&
            key === 'callee'
          ) &&
          !(parent?.type === 'VariableDeclarator' && key === 'init' && (parent.id as Node).type === 'Identifier') &&
          !(
            (parent?.type === 'MemberExpression' || parent?.type === 'OptionalMemberExpression') &&
            key === 'object' &&
            !parent.computed &&
            (parent.property as Node).name === 'resolve'
          )
        )
          flag(
            n,
            'it hands a require made by createRequire on as a value (its parent is made up, so no load guard can tell whose load it is)',
          );
        checkCall(n);
        return;
      }
      case 'Identifier': {
        const id = n.name as string;
        const asProperty =
          parent &&
          (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') &&
          key === 'property' &&
          !parent.computed;
        const asKey =
          parent &&
          (parent.type === 'ObjectProperty' ||
            parent.type === 'ObjectMethod' ||
            parent.type === 'ClassProperty' ||
            parent.type === 'ClassMethod') &&
          key === 'key' &&
          !parent.computed;
        // eval and Function run code however they are reached (`(0, eval)(s)`, `[eval][0](s)`, `Reflect.apply(eval, …)`).
        const typeOnly = !!parent && parent.type.startsWith('TS') && key !== 'expression';
        const objectKey = asKey && !patternProps.has(parent!);
        if (
          CODE_NAMES.test(id) &&
          id !== 'WebAssembly' &&
          !(objectKey && id !== 'eval') &&
          !asProperty &&
          !typeOnly &&
          !(parent?.type === 'BinaryExpression' && parent.operator === 'instanceof' && key === 'right') &&
          !(parent?.type === 'UnaryExpression' && parent.operator === 'typeof')
        )
          return flag(n, `it uses ${id}, which runs code the file builds at run time`);
        if (id === 'WebAssembly' && !objectKey && !asProperty && !typeOnly)
          return flag(n, 'it compiles WebAssembly, code it may read at run time');
        // The global object as a value (`const g = globalThis`, `f(global)`, `Object.values(globalThis)`): eval and
        // Function are reachable through it by a name computed at run time. `globalThis.x` is checked by its name.
        if (
          isGlobalName(id) &&
          !asProperty &&
          !objectKey &&
          !typeOnly &&
          !(
            (parent?.type === 'MemberExpression' || parent?.type === 'OptionalMemberExpression') &&
            key === 'object' &&
            (!parent.computed || isLiteral(parent.property as Node))
          ) &&
          !(parent?.type === 'UnaryExpression' && parent.operator === 'typeof') &&
          !compared(parent, key)
        )
          return flag(n, 'it takes the global object as a value (eval and Function are reachable through it by a computed name)');
        // Worker taken as a value: `new` through another name is not seen (nor its eval option).
        if (
          workerNames.has(id) &&
          !asProperty &&
          !objectKey &&
          !typeOnly &&
          parent &&
          !(parent.type === 'NewExpression' && key === 'callee') &&
          !(parent.type === 'VariableDeclarator' && (key === 'id' || (key === 'init' && (parent.id as Node).type === 'Identifier'))) &&
          !(parent.type === 'ObjectProperty' && patternProps.has(parent)) &&
          !/^(ImportSpecifier|ImportDefaultSpecifier|ImportNamespaceSpecifier|ExportSpecifier)$/.test(parent.type) &&
          !(parent.type === 'BinaryExpression' && parent.operator === 'instanceof') &&
          !(parent.type === 'UnaryExpression' && parent.operator === 'typeof') &&
          !((parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') && key === 'object')
        )
          return flag(n, `it takes ${id} as a value, so a worker it starts (eval: true runs code) is not seen`);
        // process.getBuiltinModule(name) reaches vm, module and child_process by a name it may compute.
        if (id === 'getBuiltinModule' && !asKey)
          return flag(n, 'process.getBuiltinModule() reaches any built-in module (vm, child_process) by a name it may compute');
        // `module.paths.unshift(…)`, `module.constructor`, `module[k]`: the loader's own state.
        if (
          id === 'module' &&
          parent &&
          (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') &&
          key === 'object'
        ) {
          const prop = parent.computed ? undefined : ((parent.property as Node).name as string | undefined);
          if (prop === undefined || !/^(exports|id|filename|loaded|parent|path|hot)$/.test(prop))
            return flag(n, `module.${prop ?? '[…]'} reaches the module loader itself`);
        }
        // A loader handed on as a value (`foo(require)`, `x = require`, `[require]`): calls through it are not seen.
        if (!loaderNames.has(id) || !parent) return;
        const p = parent;
        if ((p.type === 'CallExpression' || p.type === 'OptionalCallExpression' || p.type === 'NewExpression') && key === 'callee') return;
        if ((p.type === 'MemberExpression' || p.type === 'OptionalMemberExpression') && key === 'object') return; // require.resolve, require.main, require.cache
        if ((p.type === 'MemberExpression' || p.type === 'OptionalMemberExpression') && key === 'property' && !p.computed) return;
        if (
          (p.type === 'ObjectProperty' || p.type === 'ObjectMethod' || p.type === 'ClassProperty' || p.type === 'ClassMethod') &&
          key === 'key' &&
          !p.computed
        )
          return;
        if (p.type === 'VariableDeclarator' && key === 'id') return;
        if (p.type === 'VariableDeclarator' && key === 'init' && (p.id as Node).type === 'Identifier') return; // its new name is a loader too (first pass)
        if (p.type === 'UnaryExpression' && p.operator === 'typeof') return;
        if (p.type === 'FunctionDeclaration' || p.type === 'FunctionExpression' || p.type === 'ArrowFunctionExpression') return; // a parameter of that name
        if (p.type.startsWith('TS')) return;
        if (p.type === 'ImportSpecifier' || p.type === 'ImportDefaultSpecifier' || p.type === 'ExportSpecifier') return;
        flag(n, `it hands ${n.name as string} on as a value, so what it loads through it is not seen`);
        return;
      }
      default:
        return;
    }
  });
  // Not only a call: child_process taken at all can be handed to another file that starts programs through it
  // (`module.exports = require('child_process')`), and an alias of the global object reaches eval by any name.
  if (globalAlias)
    flag(globalAlias, 'it takes the global object as a value (eval and Function are reachable through it by a computed name)');
  if (usesChild && childAt) flag(childAt, 'it takes child_process, which starts programs (through any name it hands it to)');
  return { specs: [...specs], computed, code };
}
