// What a JavaScript or TypeScript file can load, read with a real parser (@babel/parser), never a pattern: every
// string the file holds (escapes decoded by the parser: `'\56\56/x'`, `'\x2e\x2e/x'`, a line continuation) that
// reads as a relative path, and every place where the file loads code from a value it computes at run time — a
// `require`, `import()`, `require.resolve`, `createRequire(…)`, `import.meta.resolve`, `module.register`,
// `process.dlopen`, `new Worker`, a child process, `eval`/`Function`/`vm` — whose argument is not a literal, or a
// loader handed on as a value (`const r = require`). A computed load, or a file that does not parse, means the
// file can load any file of the workspace: the closure (./closure.ts) then pins the whole workspace, and says
// why with the file and line. Pure: text in, verdict out. The parser is loaded at the first parse (./babel.ts);
// the walk over what it parses is ./loads-walk.ts.
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
import { type Loads, type Node } from './loads-ast';
import { LoadsWalk } from './loads-walk';

export type { Loads } from './loads-ast';

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
 * How Node may compile the file: an `.mjs` as a module, a `.cjs` as a script; any other (`.js`, extensionless,
 * unknown) as either — its package.json `type`, or Node's own syntax detection, decides at run time — so it is
 * read both ways and what either reading loads counts (`<!--` is a comment in a script, not in a module).
 */
export function goals(file: string): ('script' | 'module')[] {
  if (/\.mjs$/i.test(file)) return ['module'];
  if (/\.cjs$/i.test(file)) return ['script'];
  if (TS.test(file) || TSX.test(file)) return ['module'];
  return ['script', 'module'];
}

/** `file` parsed as Node compiles it with `goal` (TypeScript and JSX by its name); throws the parser's error. */
export function parseAs(file: string, text: string, goal: 'script' | 'module'): Node {
  const { parse } = parser();
  return parse(text, {
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
}

/** What `file` (its name decides TypeScript, JSX and how Node compiles it) with this text can load. */
export function loadsOf(file: string, text: string): Loads {
  // A parser that cannot be loaded is MCP Gate's fault, not the file's: it throws here, never read as "does not parse".
  parser();
  const readings: Loads[] = [];
  let failure: { line: number; message: string } | undefined;
  for (const goal of goals(file)) {
    let ast: Node;
    try {
      ast = parseAs(file, text, goal);
    } catch (e) {
      failure ??= { line: (e as { loc?: { line: number } }).loc?.line ?? 0, message: (e as Error).message.replace(/\s*\(\d+:\d+\)$/, '') };
      continue;
    }
    readings.push(new LoadsWalk().read(ast));
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
