// The pure parts of reading what a JavaScript or TypeScript file can load (./loads.ts): the shape of a parsed
// node and of the verdict, the names and patterns that mark code run at run time (CODE_NAMES, LOADER_STATE, the
// code modules, data: URLs, child processes), and helpers that look at one node and nothing else — is it a
// literal, its line, a key's name, a callee's name, the node under TypeScript wrappers, a require of node:path or
// node:url, a value only compared — with the walk that visits every node of a tree with its parent and key.
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

export type Node = { type: string; loc?: { start: { line: number } } | null; [k: string]: unknown };

/**
 * Modules whose use lets a file run code it is given at run time: vm, the REPL, the inspector's evaluate, cluster
 * (`setupPrimary({ exec })` forks any file), node:test (`run({ files })`), v8 (`setFlagsFromString`), wasi.
 */
export const CODE_MODULES = new Set(['vm', 'repl', 'inspector', 'cluster', 'test', 'v8', 'wasi']);
export const bareModule = (s: string) => s.replace(/^node:/, '');
/** Names that run code however they are reached (a name, a property, a string, a destructured key): eval, the Function constructors, WebAssembly. */
export const CODE_NAMES = /^(eval|Function|AsyncFunction|GeneratorFunction|AsyncGeneratorFunction|WebAssembly)$/;
/** Node's module loader internals (Module._load, require.extensions, …), by property name on any object. */
export const LOADER_STATE =
  /^(_load|_resolveFilename|_compile|_extensions|_cache|_pathCache|_findPath|_resolveLookupPaths|_initPaths|_preloadModules|_nodeModulePaths|runMain)$/;
/** A `data:` URL that Node could run as a module (any but an image, audio, video, font or plain text one). */
export const DATA_URL = /^\s*data:([\w.+-]+\/[\w.+-]+)?\s*([;,]|$)/i;
export const DATA_INERT = /^\s*data:((image|audio|video|font)\/|text\/(plain|html|css|csv|markdown)\s*[;,])/i;
export const CHILD_START = /^(execFile|execFileSync|spawn|spawnSync|fork)$/;
/** process.execve (Node 23.11+): the process becomes a program, however the function is reached. */
export const PROCESS_EXEC = /^execve$/;
export const CHILD_SHELL = /^(exec|execSync)$/;

export function isLiteral(n: Node | undefined): boolean {
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

export function lineOf(n: Node): number {
  return n.loc?.start.line ?? 0;
}

export const PATH_MODULES = /^(node:)?(path|url)$/;
export const keyName = (p: Node): string | undefined => {
  const k = p.key as Node | undefined;
  if (!k) return undefined;
  if (k.type === 'Identifier' && !p.computed) return k.name as string;
  if (k.type === 'StringLiteral') return k.value as string;
  return undefined;
};
export const visitAll = (root: Node, fn: (n: Node, parent: Node | undefined, key: string) => void) => {
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
export const calleeName = (c: Node): string | undefined => {
  if (c.type === 'Identifier') return c.name as string;
  if (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') {
    const p = c.property as Node;
    if (!c.computed && p.type === 'Identifier') return p.name as string;
    if (p.type === 'StringLiteral') return p.value as string;
  }
  return undefined;
};
export const unwrap = (x: Node): Node => {
  while (
    x.type === 'TSAsExpression' ||
    x.type === 'TSNonNullExpression' ||
    x.type === 'TSSatisfiesExpression' ||
    x.type === 'ParenthesizedExpression'
  )
    x = x.expression as Node;
  return x;
};
export const requiresPath = (x: Node | undefined | null): boolean => {
  if (!x) return false;
  x = unwrap(x);
  if (x.type !== 'CallExpression' || (x.callee as Node).type !== 'Identifier' || (x.callee as Node).name !== 'require') return false;
  const a = (x.arguments as Node[])[0];
  return a?.type === 'StringLiteral' && PATH_MODULES.test(a.value as string);
};
/** Where a value is only compared (`=== 'constructor'`, `'eval' in o`, `case 'Function':`): it is not taken. */
export const compared = (parent: Node | undefined, key: string) =>
  !!parent &&
  ((parent.type === 'BinaryExpression' && (/^[!=]==?$/.test(parent.operator as string) || (parent.operator === 'in' && key === 'left'))) ||
    (parent.type === 'SwitchCase' && key === 'test'));
/** How `require.main`, `module.parent`, `process.mainModule` may be used without reaching the loader: compared, tested, or their file name read. */
export const benignModuleRef = (n: Node, parent: Node | undefined, key: string) => {
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
/** A require of a module that runs code it is given at run time (CODE_MODULES). */
export const codeModule = (a: Node | undefined) => a?.type === 'StringLiteral' && CODE_MODULES.has(bareModule(a.value as string));
