// node:sqlite for the load guard: a database's loadExtension loads a native library, checked as one (the path as
// given, and with `.so` appended, as SQLite tries both). The module is guarded when it is first asked for — by
// require, import or process.getBuiltinModule — and never loaded ahead (loading it emits an experimental warning),
// except where the ES module loader runs in another thread and an import of it would go unseen.
import { checkNative } from './native';

/** SQLite's loadExtension: the path as given, then with `.so` appended (sqlite3_load_extension tries both). */
const GUARDED = Symbol('mcp-gate-guard');
export function guardSqlite(mod: unknown): void {
  if (!mod || typeof mod !== 'object') return;
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
