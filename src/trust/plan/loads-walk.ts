// The walk that reads what a parsed JavaScript or TypeScript file can load (./loads.ts): the names it binds
// first (./loads-names.ts), then one visit of every node, one method per kind of node (strings and templates,
// imports and exports, assignments, member expressions, destructuring, import(), calls and `new`, identifiers),
// each adding the relative paths it names and flagging the first load of a path computed at run time and the first
// use of what runs code a load guard cannot check (eval, Function, a child process, Node's loader internals).
import {
  benignModuleRef,
  bareModule,
  calleeName,
  CHILD_SHELL,
  CHILD_START,
  PROCESS_EXEC,
  CODE_MODULES,
  CODE_NAMES,
  codeModule,
  compared,
  DATA_INERT,
  DATA_URL,
  isLiteral,
  keyName,
  lineOf,
  LOADER_STATE,
  visitAll,
  type Loads,
  type Node,
} from './loads-ast';
import { LoadNames } from './loads-names';

/** One reading of one parsed file: `new LoadsWalk().read(ast)`, once per walk. */
export class LoadsWalk extends LoadNames {
  readonly specs = new Set<string>();
  computed: Loads['computed'];
  code: Loads['code'];
  /** The properties of a destructuring (`const { a: b } = …`), whose keys take values: not object literal keys. */
  readonly patternProps = new WeakSet<Node>();
  // `delete require.cache[…]` only makes the next require read the file again (checked then): not code.
  readonly deletedFromCache = new Set<Node>();

  /** What the file can load: its JSX pragmas, the names it binds, then every node. */
  read(ast: Node): Loads {
    // A JSX pragma in any comment (`/** @jsxImportSource ../x */`): esbuild, tsx and Babel then import
    // `<source>/jsx-runtime` (or `jsx-dev-runtime`) into the file, a load no string literal of the code names.
    for (const c of (ast as { comments?: Node[] }).comments ?? []) {
      for (const m of String(c.value ?? '').matchAll(/@jsxImportSource\s+(\S+)/g)) {
        for (const runtime of ['jsx-runtime', 'jsx-dev-runtime']) this.addString(`${m[1].replace(/\/+$/, '')}/${runtime}`, c);
      }
    }
    this.collect(ast);
    visitAll(ast, (n, parent, key) => this.visit(n, parent, key));
    // Not only a call: child_process taken at all can be handed to another file that starts programs through it
    // (`module.exports = require('child_process')`), and an alias of the global object reaches eval by any name.
    if (this.globalAlias)
      this.flag(this.globalAlias, 'it takes the global object as a value (eval and Function are reachable through it by a computed name)');
    if (this.usesChild && this.childAt)
      this.flag(this.childAt, 'it takes child_process, which starts programs (through any name it hands it to)');
    return { specs: [...this.specs], computed: this.computed, code: this.code };
  }

  /** `load`: a load of a file (a guard at load sees it); `code`: anything else (the default). */
  private flag(n: Node, what: string, kind: 'load' | 'code' = 'code'): void {
    if (!this.computed) this.computed = { line: lineOf(n), what };
    if (kind === 'code' && !this.code) this.code = { line: lineOf(n), what };
  }

  private addString(v: string, at: Node): void {
    const s = v.replace(/\\/g, '/');
    // `/proc/self/cwd/…` names the workspace from wherever the process stands: not a path MCP Gate can pin.
    if (/^\/(proc|dev\/fd)\//.test(s)) return this.flag(at, `it names ${s.slice(0, 60)}, a path the process resolves at run time`, 'load');
    if (s.startsWith('/') && s.length > 1) this.specs.add(s);
    if (s === '..' || s === '../') this.specs.add('..');
    else if (s.startsWith('../') || s.startsWith('./')) this.specs.add(s);
  }

  /**
   * `import(x)` of a computed x: a load guard checks file: URLs only, so x must be a file path or file: URL whatever
   * it holds (see fileish); else it may be a data: URL (`'da' + 'ta:…'`) or a built-in (vm): code.
   */
  private dynamicImport(n: Node, a: Node | undefined): void {
    if (isLiteral(a)) return;
    if (this.fileish(a)) return this.flag(n, 'import() loads a path computed at run time', 'load');
    this.flag(
      n,
      'import() loads a value computed at run time that need not be a file (a data: URL or a built-in such as vm, which no load guard checks)',
    );
  }

  private checkCall(n: Node): void {
    const callee = n.callee as Node;
    const args = (n.arguments as Node[]) ?? [];
    if (callee.type === 'Import') {
      if (codeModule(args[0])) return this.flag(n, `it imports ${args[0].value as string}, which runs code it is given at run time`);
      return this.dynamicImport(n, args[0]);
    }
    if (callee.type === 'CallExpression' && this.makers.has(calleeName(callee.callee as Node) ?? '')) {
      if (codeModule(args[0]))
        return this.flag(n, `it requires ${args[0].value as string} through createRequire, which runs code it is given at run time`);
      // The guard knows a require by its parent, which createRequire makes up (any path, one that does not exist).
      if (!isLiteral(args[0]))
        return this.flag(
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
        this.flag(n, 'it calls a function it looks up by a name computed at run time (it could be a loader)');
      return;
    }
    const isMember = callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression';
    const object = isMember ? (callee.object as Node) : undefined;
    const objectName = object?.type === 'Identifier' ? (object.name as string) : undefined;
    if (name === 'eval' || name === 'Function') return this.flag(n, `${name}() runs code the file builds at run time`);
    if (n.type === 'NewExpression' && this.workerNames.has(name)) return this.newWorker(n, name, args);
    if (!isMember && this.makers.has(name)) return; // what it makes is checked where it is called
    if (!isMember && this.loaderNames.has(name)) {
      const a0 = args[0];
      if (codeModule(a0)) return this.flag(n, `it requires ${a0.value as string}, which runs code it is given at run time`);
      if (this.madeNames.has(name) && !isLiteral(a0))
        return this.flag(
          n,
          `${name}() loads a path computed at run time through a require made by createRequire (its parent is made up, so no load guard can tell whose load it is)`,
        );
      return this.computedArg(n, a0, `${name}() loads a path computed at run time`);
    }
    if (
      isMember &&
      name === 'resolve' &&
      ((objectName !== undefined && this.loaderNames.has(objectName)) || object?.type === 'MetaProperty')
    )
      return this.computedArg(n, args[0], `${objectName ?? 'import.meta'}.resolve() names a path computed at run time`);
    if (isMember && objectName !== undefined && this.loaderNames.has(objectName) && /^(call|apply|bind)$/.test(name))
      return this.flag(n, `${objectName}.${name}() loads what it is given at run time`, 'load');
    if (isMember && name === 'require') {
      if (codeModule(args[0]))
        return this.flag(n, `${objectName ?? 'a'}.require() requires ${args[0].value as string}, which runs code it is given at run time`);
      // Another module's require (one from require.cache, require.main) loads as that module: the guard cannot tell.
      if (objectName !== 'module' && !isLiteral(args[0]))
        return this.flag(
          n,
          `${objectName ?? 'a'}.require() loads a path computed at run time as another module (no load guard can tell whose load it is)`,
        );
      return this.computedArg(n, args[0], `${objectName ?? 'a'}.require() loads a path computed at run time`);
    }
    if (isMember && name === 'dlopen') return this.computedArg(n, args[1], 'process.dlopen() loads a path computed at run time');
    // The prototype of a function value is Function's (or AsyncFunction's…): its properties, however enumerated
    // (getOwnPropertyDescriptors, Object.values), hold the constructor that runs code it is given (red team 13, 02).
    if (name === 'getPrototypeOf' && args[0] && /^(FunctionExpression|ArrowFunctionExpression|ClassExpression)$/.test(args[0].type))
      return this.flag(n, 'it takes the prototype of a function, whose constructor (Function) runs code it is given');
    if (isMember && PROCESS_EXEC.test(name))
      return this.flag(n, `${name}() replaces the process with a program, which can run any file of the workspace`);
    if (isMember && (name === 'binding' || name === '_linkedBinding'))
      return this.flag(n, `${name}() reaches Node's internals (it can start programs)`);
    if (/^(_load|_resolveFilename|_compile|_extensions)$/.test(name))
      return this.flag(n, `${name}() is Node's module loader, called with what the file computes`);
    if (this.usesModule && name === 'register' && !isLiteral(args[0]))
      return this.flag(
        n,
        'register() loads a module hook computed at run time (it may be a data: URL, and a hook decides what every later load runs)',
      );
    // A child process runs a program that reads what it likes (a path relative to its own folder, code on stdin,
    // `git show` of fetched objects): none of it is pinned, so the whole workspace is.
    if (this.usesChild && (CHILD_SHELL.test(name) || CHILD_START.test(name)))
      return this.flag(n, `${name}() starts a program, which can run any file of the workspace`);
    // Reflection that reaches any function or constructor by value.
    if (isMember && objectName === 'Reflect' && /^(apply|construct|get)$/.test(name))
      return this.flag(n, `Reflect.${name}() calls or reaches what it is given at run time (a loader or eval included)`);
  }

  private computedArg(n: Node, a: Node | undefined, what: string): void {
    if (!isLiteral(a)) this.flag(n, what, 'load');
  }

  private newWorker(n: Node, name: string, args: Node[]): void {
    // `eval: true` runs the first argument as code: options that are not an object literal of literal keys, none
    // of them eval, may hold it (`new Worker(src, opts)`).
    const opts = args[1];
    if (args.length > 2 || args.some((a) => a.type === 'SpreadElement'))
      return this.flag(n, `new ${name}() is given arguments it spreads or more than two (eval may be among its options)`);
    if (
      opts &&
      !(
        opts.type === 'ObjectExpression' &&
        (opts.properties as Node[]).every((p) => p.type === 'ObjectProperty' && keyName(p) !== undefined && keyName(p) !== 'eval')
      )
    )
      return this.flag(n, `new ${name}() is given options that may say eval: true (then it runs its first argument as code)`);
    if (isLiteral(args[0])) return;
    // A URL object may be a data: URL, which runs the code it holds.
    if (!this.fileish(args[0]))
      return this.flag(
        n,
        `new ${name}() runs a path computed at run time that need not be a file (a data: URL object runs the code it holds)`,
      );
    return this.flag(n, `new ${name}() runs a path computed at run time`, 'load');
  }

  /** Object literal keys and class members (not a destructuring, whose keys take values). */
  private literalKey(parent: Node | undefined, key: string): boolean {
    return (
      !!parent &&
      key === 'key' &&
      !this.patternProps.has(parent) &&
      /^(ObjectProperty|ObjectMethod|ClassProperty|ClassMethod|ClassPrivateProperty|ClassAccessorProperty|TSPropertySignature|TSMethodSignature)$/.test(
        parent.type,
      )
    );
  }

  /** A string naming what runs code, used other than compared: it can be a key that reaches it (`globalThis['Function']`, `Reflect.get(g, 'eval')`, `getOwnPropertyDescriptor(p, 'constructor')`). */
  private checkString(v: string, n: Node, parent: Node | undefined, key: string): void {
    if (DATA_URL.test(v) && !DATA_INERT.test(v)) return this.flag(n, `it names a data: URL (${v.slice(0, 40)}), code no load guard checks`);
    if (compared(parent, key)) return;
    if (CODE_NAMES.test(v) && !(this.literalKey(parent, key) && v !== 'eval'))
      return this.flag(n, `it names '${v}' as a string, a key that reaches what runs code it builds at run time`);
    if (LOADER_STATE.test(v) || v === 'mainModule')
      return this.flag(n, `it names '${v}' as a string, a key that reaches Node's module loader`);
    if (PROCESS_EXEC.test(v) && !this.literalKey(parent, key))
      return this.flag(n, `it names '${v}' as a string, a key that reaches process.execve (it replaces the process with a program)`);
    if (
      v === 'constructor' &&
      !this.literalKey(parent, key) &&
      !((parent?.type === 'MemberExpression' || parent?.type === 'OptionalMemberExpression') && key === 'property')
    )
      return this.flag(n, "it names 'constructor' as a string, a key that reaches Function (it runs code it is given)");
  }

  /** Every node, by its kind. */
  private visit(n: Node, parent: Node | undefined, key: string): void {
    if (n.type === 'UnaryExpression' && n.operator === 'delete') {
      const arg = n.argument as Node;
      if ((arg.type === 'MemberExpression' || arg.type === 'OptionalMemberExpression') && (arg.object as Node).type === 'MemberExpression')
        this.deletedFromCache.add(arg.object as Node);
    }
    switch (n.type) {
      case 'StringLiteral':
        this.addString(n.value as string, n);
        this.checkString(n.value as string, n, parent, key);
        return;
      case 'TemplateLiteral':
        return this.templateLiteral(n, parent, key);
      case 'ImportDeclaration':
      case 'ExportNamedDeclaration':
      case 'ExportAllDeclaration':
        return this.importDeclaration(n);
      case 'AssignmentExpression':
        return this.assignment(n);
      case 'MemberExpression':
      case 'OptionalMemberExpression':
        return this.memberExpression(n, parent, key);
      case 'ObjectPattern':
        return this.objectPattern(n);
      case 'ImportExpression': {
        if (!isLiteral(n.source as Node)) this.dynamicImport(n, n.source as Node);
        return;
      }
      case 'NewExpression':
      case 'CallExpression':
      case 'OptionalCallExpression':
        return this.call(n, parent, key);
      case 'Identifier':
        return this.identifier(n, parent, key);
      default:
        return;
    }
  }

  private templateLiteral(n: Node, parent: Node | undefined, key: string): void {
    (n.quasis as Node[]).forEach((q, i) => {
      const cooked = (q.value as { cooked?: string | null }).cooked;
      if (typeof cooked !== 'string') return;
      this.addString(cooked, q);
      if (i === 0 && DATA_URL.test(cooked) && !DATA_INERT.test(cooked))
        this.flag(q, `it names a data: URL (${cooked.slice(0, 40)}), code no load guard checks`);
      if ((n.quasis as Node[]).length === 1) this.checkString(cooked, n, parent, key);
    });
  }

  private importDeclaration(n: Node): void {
    const src = n.source as Node | null;
    if (src && CODE_MODULES.has(bareModule(src.value as string)))
      this.flag(n, `it imports ${src.value as string}, which runs code it is given at run time`);
    // From node:module only createRequire (whose requires are checked): Module itself loads anything.
    if (
      src &&
      bareModule(src.value as string) === 'module' &&
      (n.type !== 'ImportDeclaration' ||
        (n.specifiers as Node[]).some(
          (x) => x.type !== 'ImportSpecifier' || ((x.imported as Node).name ?? (x.imported as Node).value) !== 'createRequire',
        ))
    )
      this.flag(n, `it takes more than createRequire from ${src.value as string} (the module loader itself)`);
  }

  private assignment(n: Node): void {
    // `process.env.NODE_OPTIONS = '--require …'` before starting a child: the child loads what the value says.
    const left = n.left as Node;
    if (this.usesChild && (left.type === 'MemberExpression' || left.type === 'OptionalMemberExpression')) {
      const o = left.object as Node;
      if (
        (o.type === 'MemberExpression' &&
          (o.object as Node).type === 'Identifier' &&
          (o.object as Node).name === 'process' &&
          calleeName(o) === 'env') ||
        (o.type === 'Identifier' && o.name === 'process' && calleeName(left) === 'env')
      )
        this.flag(n, 'it changes process.env before starting a child process (NODE_OPTIONS and its kin load any file)');
    }
  }

  private memberExpression(n: Node, parent: Node | undefined, key: string): void {
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
      this.flag(n, 'it reaches a constructor by value (Function runs code it is given)');
    if (prop !== undefined && CODE_NAMES.test(prop))
      this.flag(
        n,
        `it reaches ${prop} as a property (${prop === 'WebAssembly' ? 'WebAssembly compiles code it may read at run time' : `${prop} runs code it builds at run time`})`,
      );
    if (prop !== undefined && LOADER_STATE.test(prop)) this.flag(n, `it reaches ${prop}, Node's module loader itself`);
    if (prop !== undefined && PROCESS_EXEC.test(prop)) this.flag(n, `it reaches ${prop}, which replaces the process with a program`);
    if (
      prop === 'Worker' &&
      !(parent?.type === 'NewExpression' && key === 'callee') &&
      !(parent?.type === 'VariableDeclarator' && key === 'init' && (parent.id as Node).type === 'Identifier')
    )
      this.flag(n, 'it takes Worker as a value, so a worker it starts (eval: true runs code) is not seen');
    if (prop === 'globalThis' || prop === 'global')
      this.flag(n, `it reaches the global object as .${prop} (eval and Function are reachable through it)`);
    if (prop === 'mainModule' && !benignModuleRef(n, parent, key))
      this.flag(n, 'it reaches process.mainModule, whose require loads as another module (no load guard can tell whose load it is)');
    {
      const o = n.object as Node;
      const onLoader = o.type === 'Identifier' && (this.loaderNames.has(o.name as string) || o.name === 'require');
      if (onLoader && prop === 'cache' && !this.deletedFromCache.has(n))
        this.flag(n, "it reaches require.cache, the loaded modules (their require loads as another module, the load guard's own included)");
      if (onLoader && prop === 'main' && !benignModuleRef(n, parent, key))
        this.flag(n, 'it reaches require.main, whose require loads as another module (no load guard can tell whose load it is)');
      // module.children is refused with the rest of module's loader state (the Identifier rule below).
      if (o.type === 'Identifier' && o.name === 'module' && prop === 'parent' && !benignModuleRef(n, parent, key))
        this.flag(n, 'it reaches module.parent, whose require loads as another module (no load guard can tell whose load it is)');
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
      this.flag(n, "it looks up a prototype's member by a name computed at run time (it could be Function)");
    // `require.extensions[…] = …`: a handler for what every later require loads.
    if (prop === 'extensions' && obj.type === 'Identifier' && (this.loaderNames.has(obj.name as string) || obj.name === 'require'))
      this.flag(n, 'it reaches require.extensions, which decides how every later file is loaded');
    if (
      n.computed &&
      !isLiteral(n.property as Node) &&
      (n.object as Node).type === 'Identifier' &&
      (this.loaderNames.has((n.object as Node).name as string) ||
        (n.object as Node).name === 'module' ||
        (n.object as Node).name === 'process' ||
        (n.object as Node).name === 'globalThis' ||
        (n.object as Node).name === 'global')
    )
      this.flag(n, `it looks up ${(n.object as Node).name as string}[…] by a name computed at run time`);
    // `Module.prototype.require.call(…)`, `const r = module.require`: a require taken as a value.
    if (
      !n.computed &&
      (n.property as Node).type === 'Identifier' &&
      this.loaderNames.has((n.property as Node).name as string) &&
      !(parent && (parent.type === 'CallExpression' || parent.type === 'OptionalCallExpression') && key === 'callee') &&
      !(parent?.type === 'AssignmentExpression' && key === 'left')
    )
      this.flag(
        n,
        `it takes ${(n.property as Node).name as string} as a value, so what it loads through it is not seen (nor as which module)`,
      );
  }

  private objectPattern(n: Node): void {
    // `const { constructor: F } = () => {}`: Function taken by destructuring; a computed key can be anything.
    for (const p of n.properties as Node[]) {
      if (p.type !== 'ObjectProperty') continue;
      this.patternProps.add(p);
      const k = keyName(p);
      if (
        k !== undefined &&
        (CODE_NAMES.test(k) || LOADER_STATE.test(k) || PROCESS_EXEC.test(k) || /^(globalThis|global|mainModule)$/.test(k))
      )
        this.flag(p, `it takes ${k} by destructuring (it runs code, or reaches what does)`);
      if (keyName(p) === 'constructor') this.flag(p, 'it reaches a constructor by destructuring (Function runs code it is given)');
      else if (p.computed && !isLiteral(p.key as Node))
        this.flag(p, 'it destructures a member by a name computed at run time (it could be a constructor or a loader)');
    }
  }

  private call(n: Node, parent: Node | undefined, key: string): void {
    const a0 = ((n.arguments as Node[]) ?? [])[0];
    if (
      (n.callee as Node).type === 'Identifier' &&
      this.loaderNames.has((n.callee as Node).name as string) &&
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
      if (!onlyMaker) this.flag(n, `it takes more than createRequire from ${a0.value as string} (the module loader itself)`);
    }
    // `createRequire(x)` is called, bound to a name (whose calls are checked), or asked to resolve: else it is handed on.
    if (
      n.type === 'CallExpression' &&
      this.makers.has(calleeName(n.callee as Node) ?? '') &&
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
      this.flag(
        n,
        'it hands a require made by createRequire on as a value (its parent is made up, so no load guard can tell whose load it is)',
      );
    this.checkCall(n);
  }

  private identifier(n: Node, parent: Node | undefined, key: string): void {
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
    const objectKey = asKey && !this.patternProps.has(parent!);
    if (
      CODE_NAMES.test(id) &&
      id !== 'WebAssembly' &&
      !(objectKey && id !== 'eval') &&
      !asProperty &&
      !typeOnly &&
      !(parent?.type === 'BinaryExpression' && parent.operator === 'instanceof' && key === 'right') &&
      !(parent?.type === 'UnaryExpression' && parent.operator === 'typeof')
    )
      return this.flag(n, `it uses ${id}, which runs code the file builds at run time`);
    if (id === 'WebAssembly' && !objectKey && !asProperty && !typeOnly)
      return this.flag(n, 'it compiles WebAssembly, code it may read at run time');
    // The global object as a value (`const g = globalThis`, `f(global)`, `Object.values(globalThis)`): eval and
    // Function are reachable through it by a name computed at run time. `globalThis.x` is checked by its name.
    if (
      this.isGlobalName(id) &&
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
      return this.flag(n, 'it takes the global object as a value (eval and Function are reachable through it by a computed name)');
    // Worker taken as a value: `new` through another name is not seen (nor its eval option).
    if (
      this.workerNames.has(id) &&
      !asProperty &&
      !objectKey &&
      !typeOnly &&
      parent &&
      !(parent.type === 'NewExpression' && key === 'callee') &&
      !(parent.type === 'VariableDeclarator' && (key === 'id' || (key === 'init' && (parent.id as Node).type === 'Identifier'))) &&
      !(parent.type === 'ObjectProperty' && this.patternProps.has(parent)) &&
      !/^(ImportSpecifier|ImportDefaultSpecifier|ImportNamespaceSpecifier|ExportSpecifier)$/.test(parent.type) &&
      !(parent.type === 'BinaryExpression' && parent.operator === 'instanceof') &&
      !(parent.type === 'UnaryExpression' && parent.operator === 'typeof') &&
      !((parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') && key === 'object')
    )
      return this.flag(n, `it takes ${id} as a value, so a worker it starts (eval: true runs code) is not seen`);
    // process.getBuiltinModule(name) reaches vm, module and child_process by a name it may compute.
    if (id === 'getBuiltinModule' && !asKey)
      return this.flag(n, 'process.getBuiltinModule() reaches any built-in module (vm, child_process) by a name it may compute');
    // `module.paths.unshift(…)`, `module.constructor`, `module[k]`: the loader's own state.
    if (
      id === 'module' &&
      parent &&
      (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') &&
      key === 'object'
    ) {
      const prop = parent.computed ? undefined : ((parent.property as Node).name as string | undefined);
      if (prop === undefined || !/^(exports|id|filename|loaded|parent|path|hot)$/.test(prop))
        return this.flag(n, `module.${prop ?? '[…]'} reaches the module loader itself`);
    }
    this.loaderAsValue(n, parent, key);
  }

  private loaderAsValue(n: Node, parent: Node | undefined, key: string): void {
    const id = n.name as string;
    // A loader handed on as a value (`foo(require)`, `x = require`, `[require]`): calls through it are not seen.
    if (!this.loaderNames.has(id) || !parent) return;
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
    this.flag(n, `it hands ${n.name as string} on as a value, so what it loads through it is not seen`);
  }
}
