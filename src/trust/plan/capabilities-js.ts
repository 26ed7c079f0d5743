// What a JavaScript or TypeScript file's code does that a person reviewing it should read first, from the same
// parser the closure reads it with (@babel/parser, through ./loads.ts): it starts programs (child_process and the
// packages that wrap it), reaches the network (http, https, net, tls, dgram, dns, undici, fetch, WebSocket and the
// common client packages), reads or writes outside the workspace (an fs call whose path is absolute, under `~`, or
// built from the home folder), or loads code computed at run time (eval, Function, vm, a require or import() of a
// computed name). Each with its line and the source it was read from. Only code counts: a string or a comment that
// names child_process is not a use of it. A reading for the headline, not a proof: a file that hands these modules on
// through names this walk does not follow is still reported at the line that takes the module.
import { calleeName, isLiteral, lineOf, unwrap, visitAll, type Node } from './loads-ast';
import { goals, parseAs } from './loads';
import type { Capability, CapabilityKind } from './capability';

const bare = (m: string) => m.replace(/^node:/, '');

/** A module (built-in or package) whose taking alone is the capability; its functions' calls are read too. */
const MODULE_KIND: Record<string, CapabilityKind> = {
  child_process: 'programs',
  execa: 'programs',
  'cross-spawn': 'programs',
  shelljs: 'programs',
  zx: 'programs',
  http: 'network',
  https: 'network',
  http2: 'network',
  net: 'network',
  tls: 'network',
  dgram: 'network',
  dns: 'network',
  'dns/promises': 'network',
  undici: 'network',
  axios: 'network',
  'node-fetch': 'network',
  got: 'network',
  ws: 'network',
  request: 'network',
  superagent: 'network',
  'cross-fetch': 'network',
  vm: 'computed-code',
};
const moduleKind = (m: string): CapabilityKind | undefined => MODULE_KIND[bare(m)] ?? MODULE_KIND[bare(m).split('/')[0]];

const FS_MODULES = new Set(['fs', 'fs/promises', 'fs-extra']);
/** fs functions that read or write what their first argument names. */
const FS_PATH_CALL =
  /^(readFile|writeFile|appendFile|createReadStream|createWriteStream|open|opendir|readdir|mkdir|mkdtemp|rm|rmdir|unlink|copyFile|cp|rename|symlink|link|chmod|chown|truncate|outputFile|outputJson|writeJson|readJson|remove|ensureDir|ensureFile|copy|move)(Sync)?$/;
/** Globals that reach the network whatever imports the file has. */
const NETWORK_GLOBALS = /^(fetch|WebSocket|XMLHttpRequest|EventSource)$/;

/** The module a `require('m')` (or `await import('m')`) call names, when it is a literal. */
function requiredModule(n: Node | undefined | null): string | undefined {
  if (!n) return undefined;
  let x = unwrap(n);
  if (x.type === 'AwaitExpression') x = unwrap(x.argument as Node);
  const isCall = x.type === 'CallExpression' || x.type === 'ImportExpression';
  if (!isCall) return undefined;
  const c = x.callee as Node | undefined;
  const dynamic = x.type === 'ImportExpression' || c?.type === 'Import';
  if (!dynamic && !(c?.type === 'Identifier' && c.name === 'require')) return undefined;
  const a = (x.type === 'ImportExpression' ? x.source : (x.arguments as Node[])[0]) as Node | undefined;
  return a?.type === 'StringLiteral' ? (a.value as string) : undefined;
}

/** One walk of one parsed file. */
class CapabilityWalk {
  readonly found: Capability[] = [];
  /** Local names bound to a whole module (`const cp = require('child_process')`, `import * as cp from …`). */
  private readonly modules = new Map<string, string>();
  /** Local names bound to one export of a module (`const { exec } = require('child_process')`): module.export. */
  private readonly exports = new Map<string, { module: string; name: string }>();

  constructor(
    private readonly file: string,
    private readonly text: string,
  ) {}

  private add(kind: CapabilityKind, n: Node, evidence: string, how: Capability['how']): void {
    this.found.push({ kind, file: this.file, line: lineOf(n), evidence, how });
  }

  /** The source of a node, on one line, at most 80 characters. */
  private source(n: Node): string {
    const s = this.text.slice(n.start as number, n.end as number).replace(/\s+/g, ' ');
    return s.length > 80 ? `${s.slice(0, 79)}…` : s;
  }

  private taken(m: string, at: Node): void {
    const kind = moduleKind(m);
    if (kind) this.add(kind, at, this.source(at), 'import');
  }

  read(ast: Node): Capability[] {
    visitAll(ast, (n) => this.bind(n));
    visitAll(ast, (n) => this.visit(n));
    return this.found;
  }

  /** The names a file binds to modules and their exports, and each place it takes a module. */
  private bind(n: Node): void {
    if (n.type === 'ImportDeclaration') {
      const m = (n.source as Node).value as string;
      this.taken(m, n);
      for (const sp of n.specifiers as Node[]) {
        const local = (sp.local as Node).name as string;
        if (sp.type === 'ImportSpecifier') {
          const imported = sp.imported as Node;
          this.exports.set(local, { module: bare(m), name: (imported.name ?? imported.value) as string });
        } else this.modules.set(local, bare(m));
      }
    } else if ((n.type === 'ExportNamedDeclaration' || n.type === 'ExportAllDeclaration') && n.source) {
      this.taken((n.source as Node).value as string, n);
    } else if (n.type === 'VariableDeclarator') {
      const m = requiredModule(n.init as Node);
      if (m === undefined) return;
      const id = n.id as Node;
      if (id.type === 'Identifier') this.modules.set(id.name as string, bare(m));
      else if (id.type === 'ObjectPattern')
        for (const p of id.properties as Node[]) {
          const key = p.key as Node | undefined;
          const value = p.value as Node | undefined;
          if (p.type === 'ObjectProperty' && key && value?.type === 'Identifier')
            this.exports.set(value.name as string, { module: bare(m), name: (key.name ?? key.value) as string });
        }
    }
  }

  /** The module and function a call reaches, when its callee is a name this file bound to a module. */
  private target(c: Node): { module: string; name: string } | undefined {
    c = unwrap(c);
    if (c.type === 'Identifier') return this.exports.get(c.name as string);
    if (c.type !== 'MemberExpression' && c.type !== 'OptionalMemberExpression') return undefined;
    const name = calleeName(c);
    if (!name) return undefined;
    const o = unwrap(c.object as Node);
    if (o.type === 'Identifier' && this.modules.has(o.name as string)) return { module: this.modules.get(o.name as string)!, name };
    // `fs.promises.writeFile`, `require('fs').writeFileSync`
    if ((o.type === 'MemberExpression' && calleeName(o) === 'promises') || o.type === 'CallExpression') {
      const inner = o.type === 'CallExpression' ? requiredModule(o) : this.target(o)?.module;
      if (inner) return { module: bare(inner), name };
    }
    return undefined;
  }

  private visit(n: Node): void {
    if (n.type === 'ImportExpression' || (n.type === 'CallExpression' && (n.callee as Node).type === 'Import')) {
      const a = (n.type === 'ImportExpression' ? n.source : (n.arguments as Node[])[0]) as Node;
      if (a?.type === 'StringLiteral') this.taken(a.value as string, n);
      else if (!isLiteral(a)) this.add('computed-code', n, this.source(n), 'call');
      return;
    }
    if (n.type !== 'CallExpression' && n.type !== 'NewExpression' && n.type !== 'OptionalCallExpression') return;
    const callee = unwrap(n.callee as Node);
    const args = n.arguments as Node[];
    const name = callee.type === 'Identifier' ? (callee.name as string) : undefined;
    if (name === 'require') {
      if (args[0]?.type === 'StringLiteral') this.taken(args[0].value as string, n);
      else if (!isLiteral(args[0])) this.add('computed-code', n, this.source(n), 'call');
      return;
    }
    if (
      name === 'eval' ||
      name === 'Function' ||
      (callee.type === 'MemberExpression' &&
        /^(globalThis|global|window)$/.test(String((callee.object as Node).name)) &&
        /^(eval|Function)$/.test(String(calleeName(callee))))
    )
      return this.add('computed-code', n, this.source(callee), 'call');
    const global =
      name ??
      (callee.type === 'MemberExpression' && /^(globalThis|global|window)$/.test(String((callee.object as Node).name))
        ? calleeName(callee)
        : undefined);
    if (global && NETWORK_GLOBALS.test(global) && !this.exports.has(global) && !this.modules.has(global))
      return this.add('network', n, this.source(callee), 'call');
    const t = this.target(callee);
    if (!t) return;
    const kind = moduleKind(t.module);
    if (kind) return this.add(kind, n, this.source(callee), 'call');
    if (FS_MODULES.has(t.module) && FS_PATH_CALL.test(t.name) && args[0] && outside(args[0]))
      this.add('outside-workspace', n, this.source(n), 'call');
  }
}

/** A path argument that names a place outside the workspace: absolute, under `~`, or built from the home folder. */
function outside(a: Node): boolean {
  a = unwrap(a);
  const first =
    a.type === 'TemplateLiteral'
      ? String(((a.quasis as Node[])[0].value as { cooked?: string }).cooked ?? '')
      : a.type === 'StringLiteral'
        ? String(a.value)
        : undefined;
  if (first !== undefined && /^(\/|~(\/|$)|[A-Za-z]:[\\/]|\\\\)/.test(first)) return true;
  if (a.type === 'CallExpression' && /^(join|resolve)$/.test(String(calleeName(a.callee as Node))) && (a.arguments as Node[])[0])
    if (outside((a.arguments as Node[])[0])) return true;
  let home = false;
  visitAll(a, (x) => {
    if (x.type === 'CallExpression' && /^(homedir|tmpdir)$/.test(String(calleeName(x.callee as Node)))) home = true;
    if (x.type === 'MemberExpression' && /^(HOME|USERPROFILE|APPDATA|TMPDIR)$/.test(String(calleeName(x)))) home = true;
  });
  return home;
}

/** What one JavaScript or TypeScript file does (see the file's header); a file that parses in neither goal: one computed-code entry. */
export function jsCapabilities(file: string, text: string): Capability[] {
  let failure: number | undefined;
  for (const goal of goals(file).reverse()) {
    try {
      return new CapabilityWalk(file, text).read(parseAs(file, text, goal));
    } catch (e) {
      failure ??= (e as { loc?: { line: number } }).loc?.line ?? 0;
    }
  }
  return [
    { kind: 'computed-code', file, line: failure ?? 0, evidence: 'it cannot be read as code: what it does is not known', how: 'call' },
  ];
}
