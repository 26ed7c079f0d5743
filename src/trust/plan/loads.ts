// What a JavaScript or TypeScript file can load, read with a real parser (@babel/parser), never a pattern: every
// string the file holds (escapes decoded by the parser: `'\56\56/x'`, `'\x2e\x2e/x'`, a line continuation) that
// reads as a relative path, and every place where the file loads code from a value it computes at run time — a
// `require`, `import()`, `require.resolve`, `createRequire(…)`, `import.meta.resolve`, `module.register`,
// `process.dlopen`, `new Worker`, a child process, `eval`/`Function`/`vm` — whose argument is not a literal, or a
// loader handed on as a value (`const r = require`). A computed load, or a file that does not parse, means the
// file can load any file of the workspace: the closure (./closure.ts) then pins the whole workspace, and says
// why with the file and line. Pure: text in, verdict out. The parser is loaded at the first parse (./babel.ts).
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
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    babel = require('./babel') as typeof Babel;
  } catch (e) {
    throw new Error(`MCP Gate cannot read JavaScript or TypeScript files: its parser (parser.js beside MCP Gate's own files) cannot be loaded (${(e as Error).message.split('\n')[0]}); install MCP Gate again`);
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
  if (n.type === 'TSAsExpression' || n.type === 'TSNonNullExpression' || n.type === 'TSSatisfiesExpression' || n.type === 'ParenthesizedExpression') return isLiteral(n.expression as Node);
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
        sourceType: goal, plugins: pluginsFor(file), errorRecovery: false, allowHashBang: true,
        allowReturnOutsideFunction: goal === 'script', allowAwaitOutsideFunction: true, allowImportExportEverywhere: goal === 'module', allowSuperOutsideMethod: true, allowUndeclaredExports: true,
      } as Parameters<typeof parse>[1]) as unknown as Node;
    } catch (e) {
      failure ??= { line: (e as { loc?: { line: number } }).loc?.line ?? 0, message: (e as Error).message.replace(/\s*\(\d+:\d+\)$/, '') };
      continue;
    }
    readings.push(loadsOfAst(ast));
  }
  if (!readings.length) {
    // Nothing is known of it: what it does at run time may be more than loading files.
    const unread = { line: failure?.line ?? 0, what: `it cannot be read as ${TS.test(file) || TSX.test(file) ? 'TypeScript' : 'JavaScript'} (${failure?.message ?? 'no reading'}), so what it loads is not known` };
    return { specs: [], computed: unread, code: unread };
  }
  return { specs: [...new Set(readings.flatMap((r) => r.specs))], computed: readings.find((r) => r.computed)?.computed, code: readings.find((r) => r.code)?.code };
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
  for (const c of ((ast as { comments?: Node[] }).comments ?? [])) {
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
        if (k === 'loc' || k === 'start' || k === 'end' || k === 'extra' || k === 'leadingComments' || k === 'trailingComments' || k === 'innerComments') continue;
        const v = n[k];
        if (Array.isArray(v)) {
          for (let i = v.length - 1; i >= 0; i--) if (v[i] && typeof v[i] === 'object' && typeof (v[i] as Node).type === 'string') stack.push([v[i] as Node, n, k]);
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
  visitAll(ast, (n) => {
    if (n.type === 'ImportSpecifier' && ((n.imported as Node).name ?? (n.imported as Node).value) === 'createRequire') makers.add((n.local as Node).name as string);
    if (n.type === 'ObjectPattern') {
      for (const p of n.properties as Node[]) {
        if (p.type !== 'ObjectProperty' || (p.value as Node).type !== 'Identifier') continue;
        const k = keyName(p);
        if (k === 'createRequire') makers.add((p.value as Node).name as string);
        if (k === 'require') loaderNames.add((p.value as Node).name as string);
      }
    }
  });
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
      while (init.type === 'TSAsExpression' || init.type === 'TSNonNullExpression' || init.type === 'ParenthesizedExpression') init = init.expression as Node;
      // `const g = globalThis; g[name]`: eval and Function reached by a computed name on an alias.
      if (init.type === 'Identifier' && (init.name === 'globalThis' || init.name === 'global')) globalAlias ??= n;
      if ((init.type === 'CallExpression' && makers.has(calleeName(init.callee as Node) ?? '')) || (init.type === 'Identifier' && init.name === 'require')) loaderNames.add((n.id as Node).name as string);
    }
  });
  const checkCall = (n: Node) => {
    const callee = n.callee as Node;
    const args = (n.arguments as Node[]) ?? [];
    const computedArg = (a: Node | undefined, what: string) => {
      if (!isLiteral(a)) flag(n, what, 'load');
    };
    if (callee.type === 'Import') {
      if (args[0]?.type === 'StringLiteral' && CODE_MODULES.has(bareModule(args[0].value as string))) return flag(n, `it imports ${args[0].value as string}, which runs code it is given at run time`);
      return computedArg(args[0], 'import() loads a path computed at run time');
    }
    if (callee.type === 'CallExpression' && makers.has(calleeName(callee.callee as Node) ?? '')) return computedArg(args[0], 'a require made by createRequire loads a path computed at run time');
    const name = calleeName(callee);
    if (name === undefined) {
      // `x[k](…)` with a key computed at run time can be any function, a loader included.
      if ((callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') && callee.computed && !isLiteral(callee.property as Node)) flag(n, 'it calls a function it looks up by a name computed at run time (it could be a loader)');
      return;
    }
    const isMember = callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression';
    const object = isMember ? (callee.object as Node) : undefined;
    const objectName = object?.type === 'Identifier' ? (object.name as string) : undefined;
    if (name === 'eval' || name === 'Function') return flag(n, `${name}() runs code the file builds at run time`);
    if (n.type === 'NewExpression' && name === 'Worker') {
      const opts = args[1];
      if (opts?.type === 'ObjectExpression' && (opts.properties as Node[]).some((p) => p.type !== 'ObjectProperty' || keyName(p) === 'eval')) return flag(n, 'new Worker() with eval runs code it is given');
      return computedArg(args[0], 'new Worker() runs a path computed at run time');
    }
    if (!isMember && makers.has(name)) return; // what it makes is checked where it is called
    if (!isMember && loaderNames.has(name)) {
      const a0 = args[0];
      if (a0?.type === 'StringLiteral' && CODE_MODULES.has(bareModule(a0.value as string))) return flag(n, `it requires ${a0.value as string}, which runs code it is given at run time`);
      return computedArg(a0, `${name}() loads a path computed at run time`);
    }
    if (isMember && name === 'resolve' && ((objectName !== undefined && loaderNames.has(objectName)) || object?.type === 'MetaProperty')) return computedArg(args[0], `${objectName ?? 'import.meta'}.resolve() names a path computed at run time`);
    if (isMember && objectName !== undefined && loaderNames.has(objectName) && /^(call|apply|bind)$/.test(name)) return flag(n, `${objectName}.${name}() loads what it is given at run time`, 'load');
    if (isMember && name === 'require') return computedArg(args[0], `${objectName ?? 'a'}.require() loads a path computed at run time`);
    if (isMember && name === 'dlopen') return computedArg(args[1], 'process.dlopen() loads a path computed at run time');
    if (isMember && (name === 'binding' || name === '_linkedBinding')) return flag(n, `${name}() reaches Node's internals (it can start programs)`);
    if (/^(_load|_resolveFilename|_compile|_extensions)$/.test(name)) return flag(n, `${name}() is Node's module loader, called with what the file computes`);
    if (usesModule && name === 'register') return computedArg(args[0], 'register() loads a module hook computed at run time');
    // A child process runs a program that reads what it likes (a path relative to its own folder, code on stdin,
    // `git show` of fetched objects): none of it is pinned, so the whole workspace is.
    if (usesChild && (CHILD_SHELL.test(name) || CHILD_START.test(name))) return flag(n, `${name}() starts a program, which can run any file of the workspace`);
    // Reflection that reaches any function or constructor by value.
    if (isMember && objectName === 'Reflect' && /^(apply|construct|get)$/.test(name)) return flag(n, `Reflect.${name}() calls or reaches what it is given at run time (a loader or eval included)`);
  };
  visitAll(ast, (n, parent, key) => {
    switch (n.type) {
      case 'StringLiteral':
        addString(n.value as string, n);
        return;
      case 'TemplateLiteral':
        for (const q of n.quasis as Node[]) {
          const cooked = (q.value as { cooked?: string | null }).cooked;
          if (typeof cooked === 'string') addString(cooked, q);
        }
        return;
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration': {
        const src = n.source as Node | null;
        if (src && CODE_MODULES.has(bareModule(src.value as string))) flag(n, `it imports ${src.value as string}, which runs code it is given at run time`);
        // From node:module only createRequire (whose requires are checked): Module itself loads anything.
        if (src && bareModule(src.value as string) === 'module' && (n.type !== 'ImportDeclaration' || (n.specifiers as Node[]).some((x) => x.type !== 'ImportSpecifier' || ((x.imported as Node).name ?? (x.imported as Node).value) !== 'createRequire'))) flag(n, `it takes more than createRequire from ${src.value as string} (the module loader itself)`);
        return;
      }
      case 'AssignmentExpression': {
        // `process.env.NODE_OPTIONS = '--require …'` before starting a child: the child loads what the value says.
        const left = n.left as Node;
        if (usesChild && (left.type === 'MemberExpression' || left.type === 'OptionalMemberExpression')) {
          const o = left.object as Node;
          if ((o.type === 'MemberExpression' && (o.object as Node).type === 'Identifier' && (o.object as Node).name === 'process' && calleeName(o) === 'env') || (o.type === 'Identifier' && o.name === 'process' && calleeName(left) === 'env')) flag(n, 'it changes process.env before starting a child process (NODE_OPTIONS and its kin load any file)');
        }
        return;
      }
      case 'MemberExpression':
      case 'OptionalMemberExpression': {
        // `(() => {}).constructor(code)`: Function reached through any function's constructor; comparing is fine.
        const property = n.property as Node;
        const prop = n.computed ? (property.type === 'StringLiteral' ? (property.value as string) : property.type === 'TemplateLiteral' && (property.expressions as Node[]).length === 0 ? ((property.quasis as Node[])[0].value as { cooked?: string }).cooked : undefined) : property.type === 'Identifier' ? (property.name as string) : undefined;
        if (prop === 'constructor' && !(parent?.type === 'BinaryExpression' && /^[!=]==?$/.test(parent.operator as string))) flag(n, 'it reaches a constructor by value (Function runs code it is given)');
        // `Object.getPrototypeOf(f)[k]`, `f.__proto__[k]`: a computed name on a function's prototype can be its constructor.
        const obj = n.object as Node;
        if (n.computed && !isLiteral(property) && ((obj.type === 'CallExpression' && calleeName(obj.callee as Node) === 'getPrototypeOf') || ((obj.type === 'MemberExpression' || obj.type === 'OptionalMemberExpression') && !obj.computed && (obj.property as Node).name === '__proto__'))) flag(n, 'it looks up a prototype\'s member by a name computed at run time (it could be Function)');
        // `require.extensions[…] = …`: a handler for what every later require loads.
        if (prop === 'extensions' && obj.type === 'Identifier' && (loaderNames.has(obj.name as string) || obj.name === 'require')) flag(n, 'it reaches require.extensions, which decides how every later file is loaded');
        if (n.computed && !isLiteral(n.property as Node) && (n.object as Node).type === 'Identifier' && (loaderNames.has((n.object as Node).name as string) || (n.object as Node).name === 'module' || (n.object as Node).name === 'process' || (n.object as Node).name === 'globalThis' || (n.object as Node).name === 'global')) flag(n, `it looks up ${(n.object as Node).name as string}[…] by a name computed at run time`);
        // `Module.prototype.require.call(…)`, `const r = module.require`: a require taken as a value.
        if (!n.computed && (n.property as Node).type === 'Identifier' && loaderNames.has((n.property as Node).name as string) && !(parent && (parent.type === 'CallExpression' || parent.type === 'OptionalCallExpression') && key === 'callee') && !(parent?.type === 'AssignmentExpression' && key === 'left')) flag(n, `it takes ${(n.property as Node).name as string} as a value, so what it loads through it is not seen`, 'load');
        return;
      }
      case 'ObjectPattern': {
        // `const { constructor: F } = () => {}`: Function taken by destructuring; a computed key can be anything.
        for (const p of n.properties as Node[]) {
          if (p.type !== 'ObjectProperty') continue;
          if (keyName(p) === 'constructor') flag(p, 'it reaches a constructor by destructuring (Function runs code it is given)');
          else if (p.computed && !isLiteral(p.key as Node)) flag(p, 'it destructures a member by a name computed at run time (it could be a constructor or a loader)');
        }
        return;
      }
      case 'ImportExpression': {
        if (!isLiteral(n.source as Node)) flag(n, 'import() loads a path computed at run time', 'load');
        return;
      }
      case 'NewExpression':
      case 'CallExpression':
      case 'OptionalCallExpression': {
        const a0 = ((n.arguments as Node[]) ?? [])[0];
        if ((n.callee as Node).type === 'Identifier' && loaderNames.has((n.callee as Node).name as string) && a0?.type === 'StringLiteral' && bareModule(a0.value as string) === 'module') {
          const onlyMaker = (parent?.type === 'VariableDeclarator' && key === 'init' && (parent.id as Node).type === 'ObjectPattern' && ((parent.id as Node).properties as Node[]).every((p) => p.type === 'ObjectProperty' && keyName(p) === 'createRequire'))
            || ((parent?.type === 'MemberExpression' || parent?.type === 'OptionalMemberExpression') && key === 'object' && !parent.computed && (parent.property as Node).name === 'createRequire');
          if (!onlyMaker) flag(n, `it takes more than createRequire from ${a0.value as string} (the module loader itself)`);
        }
        checkCall(n);
        return;
      }
      case 'Identifier': {
        const id = n.name as string;
        const asProperty = parent && (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') && key === 'property' && !parent.computed;
        const asKey = parent && (parent.type === 'ObjectProperty' || parent.type === 'ObjectMethod' || parent.type === 'ClassProperty' || parent.type === 'ClassMethod') && key === 'key' && !parent.computed;
        // eval and Function run code however they are reached (`(0, eval)(s)`, `[eval][0](s)`, `Reflect.apply(eval, …)`).
        if ((id === 'eval' || id === 'Function') && !asKey && !(asProperty && id === 'Function') && !(parent?.type === 'BinaryExpression' && parent.operator === 'instanceof')) return flag(n, `it uses ${id}, which runs code the file builds at run time`);
        if (id === 'WebAssembly' && !asKey && !asProperty) return flag(n, 'it compiles WebAssembly, code it may read at run time');
        // process.getBuiltinModule(name) reaches vm, module and child_process by a name it may compute.
        if (id === 'getBuiltinModule' && !asKey) return flag(n, 'process.getBuiltinModule() reaches any built-in module (vm, child_process) by a name it may compute');
        // `module.paths.unshift(…)`, `module.constructor`, `module[k]`: the loader's own state.
        if (id === 'module' && parent && (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') && key === 'object') {
          const prop = parent.computed ? undefined : ((parent.property as Node).name as string | undefined);
          if (prop === undefined || !/^(exports|id|filename|loaded|parent|children|path|hot)$/.test(prop)) return flag(n, `module.${prop ?? '[…]'} reaches the module loader itself`);
        }
        // A loader handed on as a value (`foo(require)`, `x = require`, `[require]`): calls through it are not seen.
        if (!loaderNames.has(id) || !parent) return;
        const p = parent;
        if ((p.type === 'CallExpression' || p.type === 'OptionalCallExpression' || p.type === 'NewExpression') && key === 'callee') return;
        if ((p.type === 'MemberExpression' || p.type === 'OptionalMemberExpression') && key === 'object') return; // require.resolve, require.main, require.cache
        if ((p.type === 'MemberExpression' || p.type === 'OptionalMemberExpression') && key === 'property' && !p.computed) return;
        if ((p.type === 'ObjectProperty' || p.type === 'ObjectMethod' || p.type === 'ClassProperty' || p.type === 'ClassMethod') && key === 'key' && !p.computed) return;
        if (p.type === 'VariableDeclarator' && key === 'id') return;
        if (p.type === 'VariableDeclarator' && key === 'init') return; // its new name is a loader too (first pass)
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
  if (globalAlias) flag(globalAlias, 'it takes the global object as a value (eval and Function are reachable through it by a computed name)');
  if (usesChild && childAt) flag(childAt, 'it takes child_process, which starts programs (through any name it hands it to)');
  return { specs: [...specs], computed, code };
}
