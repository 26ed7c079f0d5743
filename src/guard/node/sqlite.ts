// node:sqlite for the load guard: a database's loadExtension loads a native library, checked as one (the path as
// given, and with `.so` appended, as SQLite tries both). The module is guarded when it is first asked for — by
// require, import or process.getBuiltinModule — and never loaded ahead (loading it emits an experimental warning),
// except where the ES module loader runs in another thread and an import of it would go unseen.
import { checkNative } from './native';
import { tookIn } from './taken';

/** SQLite's loadExtension: the path as given, then with `.so` appended (sqlite3_load_extension tries both). */
const GUARDED = Symbol('mcp-gate-guard');
const construct = Reflect.construct; // (taken at start: the server may replace it)
export function guardSqlite(mod: unknown): void {
  if (!mod || typeof mod !== 'object') return;
  openCounts(mod as Record<string, unknown>);
  for (const v of Object.values(mod as Record<string, unknown>)) {
    const proto = typeof v === 'function' ? (v as { prototype?: Record<string | symbol, unknown> }).prototype : undefined;
    const original = proto?.loadExtension;
    if (!proto || typeof original !== 'function' || (original as unknown as Record<symbol, unknown>)[GUARDED]) continue;
    const wrapped = function (this: unknown, file: unknown, ...rest: unknown[]): unknown {
      if (typeof file === 'string') {
        checkNative(file, 'sqlite loadExtension');
        checkNative(file + '.so', 'sqlite loadExtension');
      }
      return (original as (...a: unknown[]) => unknown).call(this, file, ...rest);
    };
    Object.defineProperty(wrapped, GUARDED, { value: true });
    Object.defineProperty(wrapped, 'name', { value: 'loadExtension' });
    proto.loadExtension = wrapped;
  }
}

/**
 * A database DatabaseSync opens is read by SQLite itself: a file of the workspace or a scratch folder not as
 * approved is taken in when it is opened (red team 20, r02: a row of a changed database handed to `new Function`),
 * as the Python guard counts sqlite3.connect. A `file:` URI names its file as SQLite decodes it.
 */
function openCounts(mod: Record<string, unknown>): void {
  const D = mod.DatabaseSync as (((...a: unknown[]) => unknown) & Record<symbol, unknown>) | undefined;
  if (typeof D !== 'function' || D[GUARDED]) return;
  const W = function DatabaseSync(this: unknown, ...a: unknown[]): unknown {
    const where = a[0];
    tookIn(typeof where === 'string' && where.startsWith('file:') ? uriPath(where) : where);
    return construct(D as unknown as new (...x: unknown[]) => object, a, (new.target as unknown as typeof D | undefined) ?? D);
  };
  W.prototype = D.prototype as object;
  Object.setPrototypeOf(W, D);
  Object.defineProperty(W, GUARDED, { value: true });
  try {
    mod.DatabaseSync = W;
  } catch {
    /* not writable: left as it is */
  }
}

/** The file a `file:` URI names (an authority of '' or 'localhost', the query cut, %XX decoded). */
function uriPath(u: string): string {
  let p = u.slice('file:'.length);
  const q = p.indexOf('?');
  if (q >= 0) p = p.slice(0, q);
  const h = p.indexOf('#');
  if (h >= 0) p = p.slice(0, h);
  if (p.startsWith('//')) p = p.startsWith('//localhost/') ? p.slice('//localhost'.length) : p.slice(2);
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

/** node:sqlite guarded as it is first asked for (loading it emits an experimental warning: never loaded ahead). */
const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
let sqliteDone = false;
export function sqliteNow(quiet = false): void {
  if (sqliteDone || typeof getBuiltin !== 'function') return;
  sqliteDone = true;
  const emit = process.emitWarning;
  if (quiet) process.emitWarning = (() => undefined) as typeof process.emitWarning;
  try {
    guardSqlite(getBuiltin.call(process, 'node:sqlite'));
  } catch {
    /* no node:sqlite here (Node 20; 22 before 22.13 without its flag) */
  } finally {
    process.emitWarning = emit;
  }
}

/** process.getBuiltinModule: node:sqlite guarded when asked for that way too. */
export function installSqlite(): void {
  // node:sqlite (22.5+): guarded when first asked for (require, import, process.getBuiltinModule).
  if (typeof getBuiltin === 'function') {
    (process as unknown as { getBuiltinModule: (id: string) => unknown }).getBuiltinModule = function getBuiltinModule(
      this: unknown,
      id: string,
    ) {
      const m = getBuiltin.call(this, id);
      if (id === 'node:sqlite') guardSqlite(m);
      return m;
    };
  }
}
