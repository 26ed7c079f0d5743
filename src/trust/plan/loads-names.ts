// The names a JavaScript or TypeScript file binds, read in two passes before ./loads-walk.ts checks it: names
// bound to a loader (`const r = require`, a require made by createRequire), to createRequire itself, to Worker, to
// node:path and node:url or their functions; how often each name is bound (a helper or `__dirname` is trusted only
// unrebound) and the init of each const; whether it names child_process or node:module; an alias of the global
// object. From them, fileish: whether a value computed at run time is a file path or file: URL whatever it holds.
import { bareModule, calleeName, keyName, PATH_MODULES, requiresPath, unwrap, visitAll, type Node } from './loads-ast';

/** What a file binds, collected by read() before the walk's checks (./loads-walk.ts extends it). */
export class LoadNames {
  // Names bound to a loader (`const req = createRequire(import.meta.url)`, `const r = require`): calls through them
  // are loads too. Collected before the walk's checks, in a first pass.
  readonly loaderNames = new Set(['require']);
  /** Names of createRequire itself (`import { createRequire as cr } from 'module'`, `const { createRequire: cr } = …`). */
  readonly makers = new Set(['createRequire']);
  // The modules it names anywhere (import, require, a string): calls named like theirs are checked only then.
  usesChild = false;
  usesModule = false;
  /** Names bound to a require made by createRequire: a computed name through one is code (its parent is made up). */
  readonly madeNames = new Set<string>();
  /** Names of worker_threads' Worker (`const { Worker: W } = …`, `const W = wt.Worker`). */
  readonly workerNames = new Set(['Worker']);
  /** How often each name is bound (declared, a parameter, assigned): a path helper or `__dirname` is trusted only unrebound. */
  readonly bindings = new Map<string, number>();
  /** `const x = <init>`: the init of a name bound once, by const. */
  readonly constInit = new Map<string, Node>();
  /** Names bound to node:path or node:url (`const path = require('path')`, `import * as url from 'node:url'`). */
  readonly pathNs = new Set<string>();
  /** Functions of node:path or node:url under a local name (`const { join } = require('path')`): local → theirs. */
  readonly pathFns = new Map<string, string>();
  childAt: Node | undefined;
  globalAlias: Node | undefined;

  /** The two passes over the file, in order: bindings and names, then aliases and the modules it names. */
  protected collect(ast: Node): void {
    visitAll(ast, (n, parent, key) => this.bindingPass(n, parent, key));
    visitAll(ast, (n) => this.aliasPass(n));
  }

  private bind(id: Node | undefined | null): void {
    if (id?.type === 'Identifier') this.bindings.set(id.name as string, (this.bindings.get(id.name as string) ?? 0) + 1);
  }

  private bindingPass(n: Node, parent: Node | undefined, key: string): void {
    if (n.type === 'ImportSpecifier' && ((n.imported as Node).name ?? (n.imported as Node).value) === 'createRequire')
      this.makers.add((n.local as Node).name as string);
    if (n.type === 'ImportSpecifier' && ((n.imported as Node).name ?? (n.imported as Node).value) === 'Worker')
      this.workerNames.add((n.local as Node).name as string);
    if (n.type === 'ObjectPattern') {
      for (const p of n.properties as Node[]) {
        if (p.type !== 'ObjectProperty' || (p.value as Node).type !== 'Identifier') continue;
        const k = keyName(p);
        if (k === 'createRequire') this.makers.add((p.value as Node).name as string);
        if (k === 'require') this.loaderNames.add((p.value as Node).name as string);
        if (k === 'Worker') this.workerNames.add((p.value as Node).name as string);
        if (k && parent?.type === 'VariableDeclarator' && key === 'id' && requiresPath(parent.init as Node))
          this.pathFns.set((p.value as Node).name as string, k);
      }
    }
    if (n.type === 'ImportDeclaration' && PATH_MODULES.test(String((n.source as Node).value))) {
      for (const x of n.specifiers as Node[]) {
        if (x.type === 'ImportSpecifier')
          this.pathFns.set((x.local as Node).name as string, String((x.imported as Node).name ?? (x.imported as Node).value));
        else this.pathNs.add((x.local as Node).name as string);
      }
    }
    // Bindings: declarators, parameters, catch clauses, patterns, assignments, imports.
    if (n.type === 'VariableDeclarator') {
      const id = n.id as Node;
      if (id.type === 'Identifier') {
        this.bind(id);
        if (n.init && parent?.type === 'VariableDeclaration' && parent.kind === 'const')
          this.constInit.set(id.name as string, n.init as Node);
        if (requiresPath(n.init as Node)) this.pathNs.add(id.name as string);
        if (n.init) {
          const init = unwrap(n.init as Node);
          if (init.type === 'CallExpression' && this.makers.has(calleeName(init.callee as Node) ?? ''))
            this.madeNames.add(id.name as string);
          if (
            (init.type === 'Identifier' && this.workerNames.has(init.name as string)) ||
            ((init.type === 'MemberExpression' || init.type === 'OptionalMemberExpression') && calleeName(init) === 'Worker')
          )
            this.workerNames.add(id.name as string);
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
      for (const q of n.params as Node[]) this.bind(q);
    if (n.type === 'FunctionDeclaration' || n.type === 'ClassDeclaration') this.bind(n.id as Node);
    if (n.type === 'CatchClause') this.bind(n.param as Node);
    if (n.type === 'AssignmentPattern' || n.type === 'AssignmentExpression') this.bind(n.left as Node);
    if (n.type === 'RestElement') this.bind(n.argument as Node);
    if (n.type === 'ArrayPattern') for (const e of n.elements as (Node | null)[]) this.bind(e);
    if (n.type === 'ObjectProperty' && parent?.type === 'ObjectPattern') this.bind(n.value as Node);
    if (n.type === 'UpdateExpression') this.bind(n.argument as Node);
    if (n.type === 'ImportSpecifier' || n.type === 'ImportDefaultSpecifier' || n.type === 'ImportNamespaceSpecifier')
      this.bind(n.local as Node);
  }

  protected once(name: string): boolean {
    return (this.bindings.get(name) ?? 0) === 1;
  }

  protected unbound(name: string): boolean {
    return !this.bindings.has(name);
  }

  /**
   * A value that is a file path or a file: URL whatever it holds at run time, never a data: URL: a literal path
   * prefix (`./`, `../`, `/`, `file:`) before what is computed; `__dirname`, `__filename`, `import.meta.dirname`,
   * `process.cwd()` (not rebound); node:path's resolve, and join/dirname of such a path; node:url's pathToFileURL and
   * fileURLToPath (and `.href`, `.pathname`, `.toString()` of those); a const bound once to any of these.
   */
  protected fileish(x: Node | undefined, depth = 0): boolean {
    if (!x || depth > 8) return false;
    x = unwrap(x);
    const prefix = (s: unknown) => typeof s === 'string' && /^(\.{1,2}\/|\/|file:)/i.test(s);
    if (x.type === 'StringLiteral') return prefix(x.value);
    if (x.type === 'TemplateLiteral') {
      const q0 = ((x.quasis as Node[])[0].value as { cooked?: string | null }).cooked;
      if (prefix(q0)) return true;
      return q0 === '' && (x.expressions as Node[]).length > 0 && this.fileish((x.expressions as Node[])[0], depth + 1);
    }
    if (x.type === 'BinaryExpression' && x.operator === '+') return this.fileish(x.left as Node, depth + 1);
    if (x.type === 'Identifier') {
      const name = x.name as string;
      if ((name === '__dirname' || name === '__filename') && this.unbound(name)) return true;
      return this.once(name) && this.constInit.has(name) && this.fileish(this.constInit.get(name), depth + 1);
    }
    if (x.type === 'MetaProperty') return false;
    if ((x.type === 'MemberExpression' || x.type === 'OptionalMemberExpression') && !x.computed) {
      const o = x.object as Node;
      const prop = (x.property as Node).name;
      if (o.type === 'MetaProperty' && (prop === 'dirname' || prop === 'filename')) return true;
      if (prop === 'href' || prop === 'pathname') return this.fileish(o, depth + 1);
      return false;
    }
    if (x.type === 'CallExpression' || x.type === 'NewExpression') {
      const c = unwrap(x.callee as Node);
      const args = x.arguments as Node[];
      if (x.type === 'NewExpression')
        return c.type === 'Identifier' && c.name === 'URL' && this.unbound('URL') && this.fileish(args[0], depth + 1);
      if (
        (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') &&
        !c.computed &&
        (c.object as Node).type === 'Identifier' &&
        (c.object as Node).name === 'process' &&
        this.unbound('process') &&
        (c.property as Node).name === 'cwd'
      )
        return true;
      if (
        (c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') &&
        !c.computed &&
        (c.property as Node).name === 'toString' &&
        args.length === 0
      )
        return this.fileish(c.object as Node, depth + 1);
      let fn: string | undefined;
      if (c.type === 'Identifier' && this.pathFns.has(c.name as string) && this.once(c.name as string))
        fn = this.pathFns.get(c.name as string);
      else if ((c.type === 'MemberExpression' || c.type === 'OptionalMemberExpression') && !c.computed) {
        const o = c.object as Node;
        const viaNs = o.type === 'Identifier' && this.pathNs.has(o.name as string) && this.once(o.name as string);
        const viaPosix =
          o.type === 'MemberExpression' &&
          !o.computed &&
          (o.object as Node).type === 'Identifier' &&
          this.pathNs.has((o.object as Node).name as string) &&
          this.once((o.object as Node).name as string) &&
          /^(posix|win32)$/.test(String((o.property as Node).name));
        if (viaNs || viaPosix || requiresPath(o)) fn = (c.property as Node).name as string;
      }
      if (fn === 'resolve' || fn === 'pathToFileURL' || fn === 'fileURLToPath') return true;
      if (fn === 'join' || fn === 'dirname' || fn === 'normalize') return this.fileish(args[0], depth + 1);
      return false;
    }
    return false;
  }

  private aliasPass(n: Node): void {
    if (n.type === 'StringLiteral') {
      const m = bareModule(n.value as string);
      if (m === 'child_process') {
        this.usesChild = true;
        this.childAt ??= n;
      }
      if (m === 'module') this.usesModule = true;
    }
    if (n.type === 'VariableDeclarator' && (n.id as Node).type === 'Identifier' && n.init) {
      let init = n.init as Node;
      while (init.type === 'TSAsExpression' || init.type === 'TSNonNullExpression' || init.type === 'ParenthesizedExpression')
        init = init.expression as Node;
      // `const g = globalThis; g[name]`: eval and Function reached by a computed name on an alias.
      if (init.type === 'Identifier' && (init.name === 'globalThis' || init.name === 'global')) this.globalAlias ??= n;
      if (
        (init.type === 'CallExpression' && this.makers.has(calleeName(init.callee as Node) ?? '')) ||
        (init.type === 'Identifier' && init.name === 'require')
      )
        this.loaderNames.add((n.id as Node).name as string);
    }
  }

  protected isGlobalName(id: string): boolean {
    return (id === 'globalThis' || id === 'global') && this.unbound(id);
  }
}
