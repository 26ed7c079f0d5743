// What a project's settings files make reachable or run, read as data (pure: the files come in through the
// functions given): a package.json's main, bin, exports and imports; a tsconfig.json's (or jsconfig.json's)
// `extends` chain, `baseUrl` and `paths`, through which TypeScript loaders resolve bare imports; an `.npmrc`'s
// settings npm could run code with. The execution closure (./closure.ts) pins what they reach.
import * as path from 'node:path';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { rel, within } from './realpath';

/** Relative paths a package.json names for Node to load: main, module, bin, exports, imports. */
export function manifestPaths(text: string): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return [];
  }
  const out: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > 16) return;
    if (typeof v === 'string') {
      if (v.startsWith('.') || v.startsWith('/')) out.push(v);
    } else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, depth + 1);
  };
  if (doc && typeof doc === 'object') {
    const d = doc as Record<string, unknown>;
    for (const k of ['main', 'module', 'browser', 'bin', 'exports', 'imports', 'types']) walk(d[k], 0);
  }
  return out;
}

/** TypeScript's project files: tsx, ts-node, bun and vite-node resolve bare imports through their `paths` and `baseUrl`. */
export const TSCONFIG = /^(tsconfig(\..*)?|jsconfig)\.json$/i;

/** Configs one tsconfig's `extends` chain may hold (a package's JSON files count as candidates). */
const MAX_TSCONFIG_CHAIN = 256;

interface TsConfigDoc {
  file: string;
  extends?: unknown;
  compilerOptions?: { baseUrl?: unknown; paths?: unknown; jsxImportSource?: unknown };
}

/**
 * What a tsconfig.json (or jsconfig.json) makes reachable, read as a superset of how tsx (get-tsconfig),
 * ts-node and bun merge it: the whole `extends` chain — relative files (`x`, `x.json`, `x/tsconfig.json`) and
 * packages in a workspace node_modules (every JSON file of the package is taken as a possible base: its
 * `tsconfig` field, `exports` and subpaths all name one of them) —, then every `baseUrl` of the chain resolved
 * against its own folder and the root config's (`${configDir}` as either), and every `paths` target against
 * every such base. Each folder reached joins the closure, as does each config file. What MCP Gate cannot bound
 * is `computed`: a root config or a relative base that does not parse, a `jsxImportSource` that is a path (each
 * .tsx file then imports its runtime from where it lies), a chain longer than MAX_TSCONFIG_CHAIN.
 */
export function tsconfigReach(
  root: string,
  workspace: string,
  read: (file: string) => string | undefined,
  isFile: (file: string) => boolean,
  isDir: (dir: string) => boolean,
  jsonFiles: (dir: string, max: number) => string[] | undefined,
): { targets: { path: string; why: string }[]; computed?: string } {
  const chain = tsconfigChain(root, workspace, read, isFile, isDir, jsonFiles);
  if ('computed' in chain) return { targets: [], computed: chain.computed };
  const { configs, missing } = chain;
  const rootName = rel(workspace, root);
  const rootDir = path.dirname(root);
  const targets: { path: string; why: string }[] = [...configs.slice(1).map((c) => c.file), ...missing].map((f) => ({
    path: f,
    why: `extended by ${rootName}`,
  }));
  const subst = (v: string, own: string) => [...new Set([v.replaceAll('${configDir}', rootDir), v.replaceAll('${configDir}', own)])];
  const bases = new Set<string>([rootDir]);
  for (const c of configs) {
    const own = path.dirname(c.file);
    bases.add(own);
    const b = c.compilerOptions?.baseUrl;
    if (typeof b !== 'string') continue;
    for (const v of subst(b, own))
      for (const from of [own, rootDir]) {
        const p = path.resolve(from, v);
        bases.add(p);
        targets.push({ path: p, why: `${rootName} (or what it extends) sets baseUrl, from which TypeScript loaders resolve bare imports` });
      }
  }
  for (const c of configs) {
    const own = path.dirname(c.file);
    const src = c.compilerOptions?.jsxImportSource;
    if (typeof src === 'string' && (src.startsWith('.') || path.isAbsolute(src))) {
      return {
        targets: [],
        computed: `${rel(workspace, c.file)} sets jsxImportSource to the path ${src.slice(0, 60)}: each JSX file imports its runtime from where it lies`,
      };
    }
    const paths = c.compilerOptions?.paths;
    if (!paths || typeof paths !== 'object') continue;
    for (const [alias, list] of Object.entries(paths as Record<string, unknown>)) {
      for (const t of Array.isArray(list) ? list : []) {
        if (typeof t !== 'string') continue;
        for (const v of subst(t, own))
          for (const base of bases) {
            // `lib/*` and `lib/` name the folder lib, `lib/x*` the folder lib, `lib/x.ts` that file.
            const literal = v.split('*')[0];
            const p = path.resolve(base, literal);
            targets.push({
              path: v.includes('*') && !literal.endsWith('/') ? path.dirname(p) : p,
              why: `${rel(workspace, c.file)} maps ${alias} there (paths)`,
            });
          }
      }
    }
  }
  const unique = new Map(targets.map((t) => [t.path, t]));
  return { targets: [...unique.values()] };
}

/**
 * A tsconfig's `extends` chain, the root config first: every config it reads (a package's JSON files each taken as
 * a possible base), and the relative bases that are not there (pinned where they would appear); or why it cannot
 * be bounded.
 */
function tsconfigChain(
  root: string,
  workspace: string,
  read: (file: string) => string | undefined,
  isFile: (file: string) => boolean,
  isDir: (dir: string) => boolean,
  jsonFiles: (dir: string, max: number) => string[] | undefined,
): { configs: TsConfigDoc[]; missing: string[] } | { computed: string } {
  const rootName = rel(workspace, root);
  const configs: TsConfigDoc[] = [];
  const seen = new Set<string>();
  const parseConfig = (file: string): TsConfigDoc | undefined | 'bad' => {
    const text = read(file);
    if (text === undefined) return 'bad';
    const errors: ParseError[] = [];
    const doc = parseJsonc(text, errors, { allowTrailingComma: true }) as unknown;
    if (errors.length || !doc || typeof doc !== 'object' || Array.isArray(doc)) return 'bad';
    return { file, ...(doc as Omit<TsConfigDoc, 'file'>) };
  };
  const queue: { file: string; strict: boolean }[] = [{ file: root, strict: true }];
  const missing: string[] = [];
  while (queue.length) {
    const { file, strict } = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (seen.size > MAX_TSCONFIG_CHAIN)
      return { computed: `${rootName} extends more than ${MAX_TSCONFIG_CHAIN} configuration files, more than MCP Gate reads` };
    const doc = parseConfig(file);
    if (doc === 'bad' || doc === undefined) {
      if (strict)
        return {
          computed: `${rel(workspace, file)} does not parse as JSON with comments, so where TypeScript loaders resolve imports is not known`,
        };
      continue; // a package's other JSON files: not a config
    }
    configs.push(doc);
    const dir = path.dirname(file);
    for (const x of Array.isArray(doc.extends) ? doc.extends : [doc.extends]) {
      if (typeof x !== 'string') continue;
      if (x.startsWith('.') || path.isAbsolute(x)) {
        const p = path.resolve(dir, x);
        const found = [p, `${p}.json`, path.join(p, 'tsconfig.json')].find((c) => within(workspace, c) && isFile(c));
        if (found) queue.push({ file: found, strict: true });
        else missing.push(p); // pinned where it would appear: its creation changes what the chain says
        continue;
      }
      // A package: the first node_modules/<name> at or above the config, inside the workspace.
      const name = x.startsWith('@') ? x.split('/').slice(0, 2).join('/') : x.split('/')[0];
      for (let d = dir; within(workspace, d); d = path.dirname(d)) {
        const pkg = path.join(d, 'node_modules', name);
        if (isDir(pkg)) {
          const candidates = jsonFiles(pkg, MAX_TSCONFIG_CHAIN);
          if (!candidates)
            return {
              computed: `${rel(workspace, file)} extends the package ${name}, whose JSON files MCP Gate cannot list whole (over ${MAX_TSCONFIG_CHAIN}, or a linked folder or file), so which one it uses is not known`,
            };
          for (const f of candidates) queue.push({ file: f, strict: false });
          break;
        }
        if (d === workspace) break;
      }
    }
  }
  return { configs, missing };
}

/** A workspace `.npmrc` setting npm reads when it starts code (node-options, script-shell, …): any it does not model. */
const NPMRC_SAFE =
  /^(registry|@[^:]+:registry|\/\/.*|strict-ssl|ca|cafile|save-exact|save-prefix|fund|audit|audit-level|loglevel|progress|package-lock|package-lock-only|legacy-peer-deps|engine-strict|always-auth|update-notifier|lockfile-version|auto-install-peers|strict-peer-dependencies|shamefully-hoist|color|unicode|prefer-offline|prefer-online|offline|fetch-retries|fetch-timeout|maxsockets|omit|include|save|save-dev|workspaces-update|install-links|dedupe-peer-dependents)$/;

export function npmrcUnmodelled(text: string): string | undefined {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const key = line.split('=')[0].trim().toLowerCase().replace(/_/g, '-');
    if (!NPMRC_SAFE.test(key)) return key;
  }
  return undefined;
}
