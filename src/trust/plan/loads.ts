// What a JavaScript or TypeScript file can load, read with a real parser (@babel/parser), never a pattern: every
// string the file holds (escapes decoded by the parser: `'\56\56/x'`, `'\x2e\x2e/x'`, a line continuation) that
// reads as a relative path, and every place where the file loads code from a value it computes at run time — a
// `require`, `import()`, `require.resolve`, `createRequire(…)`, `import.meta.resolve`, `module.register`,
// `process.dlopen`, `new Worker`, a child process, `eval`/`Function`/`vm` — whose argument is not a literal, or a
// loader handed on as a value (`const r = require`). A computed load, or a file that does not parse, means the
// file can load any file of the workspace: the closure (./closure.ts) then pins the whole workspace, and says
// why with the file and line. Pure: text in, verdict out.
import { parse, type ParserPlugin } from '@babel/parser';

export interface Loads {
  /** Relative-looking literals (`./x`, `../x`, `..`), decoded, with `/` separators: a superset of what it loads. */
  specs: string[];
  /** Set when the file can load a path computed at run time (or cannot be read as code): line and what does it. */
  computed?: { line: number; what: string };
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

/** Modules whose use lets a file run code it is given at run time (vm, the REPL, the inspector's evaluate). */
const CODE_MODULES = new Set(['vm', 'repl', 'inspector']);
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

/** What `file` (its name decides TypeScript and JSX) with this text can load. */
export function loadsOf(file: string, text: string): Loads {
  let ast: Node;
  try {
    ast = parse(text, {
      sourceType: 'unambiguous', plugins: pluginsFor(file), errorRecovery: false,
      allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true, allowImportExportEverywhere: true, allowSuperOutsideMethod: true, allowUndeclaredExports: true,
    }) as unknown as Node;
  } catch (e) {
    const line = (e as { loc?: { line: number } }).loc?.line ?? 0;
    return { specs: [], computed: { line, what: `it cannot be read as ${TS.test(file) || TSX.test(file) ? 'TypeScript' : 'JavaScript'} (${(e as Error).message.replace(/\s*\(\d+:\d+\)$/, '')}), so what it loads is not known` } };
  }
  const specs = new Set<string>();
  let computed: Loads['computed'];
  const flag = (n: Node, what: string) => {
    if (!computed) computed = { line: lineOf(n), what };
  };
  const addString = (v: string) => {
    const s = v.replace(/\\/g, '/');
    if (s === '..' || s === '../') specs.add('..');
    else if (s.startsWith('../') || s.startsWith('./')) specs.add(s);
  };
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
  visitAll(ast, (n) => {
    if (n.type === 'StringLiteral') {
      const m = bareModule(n.value as string);
      if (m === 'child_process') usesChild = true;
      if (m === 'module') usesModule = true;
    }
    if (n.type === 'VariableDeclarator' && (n.id as Node).type === 'Identifier' && n.init) {
      let init = n.init as Node;
      while (init.type === 'TSAsExpression' || init.type === 'TSNonNullExpression' || init.type === 'ParenthesizedExpression') init = init.expression as Node;
      if ((init.type === 'CallExpression' && makers.has(calleeName(init.callee as Node) ?? '')) || (init.type === 'Identifier' && init.name === 'require')) loaderNames.add((n.id as Node).name as string);
    }
  });
  const checkCall = (n: Node) => {
    const callee = n.callee as Node;
    const args = (n.arguments as Node[]) ?? [];
    const computedArg = (a: Node | undefined, what: string) => {
      if (!isLiteral(a)) flag(n, what);
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
    if (isMember && objectName !== undefined && loaderNames.has(objectName) && /^(call|apply|bind)$/.test(name)) return flag(n, `${objectName}.${name}() loads what it is given at run time`);
    if (isMember && name === 'require') return computedArg(args[0], `${objectName ?? 'a'}.require() loads a path computed at run time`);
    if (isMember && name === 'dlopen') return computedArg(args[1], 'process.dlopen() loads a path computed at run time');
    if (isMember && (name === 'binding' || name === '_linkedBinding')) return flag(n, `${name}() reaches Node's internals (it can start programs)`);
    if (/^(_load|_resolveFilename|_compile|_extensions)$/.test(name)) return flag(n, `${name}() is Node's module loader, called with what the file computes`);
    if (usesModule && name === 'register') return computedArg(args[0], 'register() loads a module hook computed at run time');
    if (usesChild && CHILD_SHELL.test(name)) return flag(n, `${name}() runs a shell command line, which can run any file`);
    if (usesChild && CHILD_START.test(name)) {
      for (const a of args) {
        if (a.type === 'ObjectExpression') {
          if ((a.properties as Node[]).some((p) => p.type !== 'ObjectProperty' || keyName(p) === 'shell' || keyName(p) === 'env' || keyName(p) === 'execArgv')) return flag(n, `${name}() with a shell, its own variables (NODE_OPTIONS can load any file) or options computed at run time runs what MCP Gate cannot read`);
        } else if (!isLiteral(a)) return flag(n, `${name}() starts a program computed at run time`);
      }
    }
  };
  visitAll(ast, (n, parent, key) => {
    switch (n.type) {
      case 'StringLiteral':
        addString(n.value as string);
        return;
      case 'TemplateLiteral':
        for (const q of n.quasis as Node[]) {
          const cooked = (q.value as { cooked?: string | null }).cooked;
          if (typeof cooked === 'string') addString(cooked);
        }
        return;
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration': {
        const src = n.source as Node | null;
        if (src && CODE_MODULES.has(bareModule(src.value as string))) flag(n, `it imports ${src.value as string}, which runs code it is given at run time`);
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
        // `Module.prototype.require.call(…)`, `const r = module.require`: a require taken as a value.
        if (!n.computed && (n.property as Node).type === 'Identifier' && loaderNames.has((n.property as Node).name as string) && !(parent && (parent.type === 'CallExpression' || parent.type === 'OptionalCallExpression') && key === 'callee') && !(parent?.type === 'AssignmentExpression' && key === 'left')) flag(n, `it takes ${(n.property as Node).name as string} as a value, so what it loads through it is not seen`);
        return;
      }
      case 'ImportExpression': {
        if (!isLiteral(n.source as Node)) flag(n, 'import() loads a path computed at run time');
        return;
      }
      case 'NewExpression':
      case 'CallExpression':
      case 'OptionalCallExpression':
        checkCall(n);
        return;
      case 'Identifier': {
        // A loader handed on as a value (`foo(require)`, `x = require`, `[require]`): calls through it are not seen.
        if (!loaderNames.has(n.name as string) || !parent) return;
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
  return { specs: [...specs], computed };
}
