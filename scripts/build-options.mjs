// The esbuild options of the Node bundles (dist/extension.js, dist/cli.js, dist/lock-worker.js, dist/relay.js, and
// the parts they load when first needed: dist/parser.js, dist/undici.js), shared by scripts/build.mjs and the
// bundle-size benchmark (bench/run.mjs builds the same bundles unminified as its baseline). Minified with names
// kept (error messages and stack traces keep class and function names); source maps beside the bundles in dist/,
// never in the .vsix (.vscodeignore). @npmcli/run-script resolves node-gyp only to run install scripts, which MCP
// Gate never runs (ignoreScripts): esbuild's warning about that require.resolve is silenced. The SDK's runtime
// shims are MCP Gate's (src/host/session/sdk-shims.ts: the SDK's interpreting JSON Schema validator, not its bundled ajv).
const sdkShims = {
  '@modelcontextprotocol/client/_shims': './src/host/session/sdk-shims.ts',
  '@modelcontextprotocol/server/_shims': './src/host/session/sdk-shims.ts',
};
// Two libraries are loaded only when first needed, each from a file of its own beside the bundle that requires it:
// the closure's parser (src/trust/plan/babel.ts → dist/parser.js, at the first file read) and undici
// (src/host/net/undici.ts → dist/undici.js, at the first remote exchange). A bundle's `require('./babel')` or
// `require('./undici')` of those modules stays a require of the part's file.
import path from 'node:path';
const PARTS = { [path.resolve('src/trust/plan/babel.ts')]: './parser.js', [path.resolve('src/host/net/undici.ts')]: './undici.js' };
const parts = {
  name: 'mcp-gate-parts',
  setup(b) {
    b.onResolve({ filter: /^\.\/(babel|undici)$/ }, (a) => {
      const to = PARTS[path.resolve(a.resolveDir, `${a.path}.ts`)];
      return to ? { path: to, external: true } : undefined;
    });
  },
};
// npm nests copies of one package at one version under several packages (glob 13.0.7 three times, lru-cache 11.5.3
// six times under the npm libraries): a bundle carries the first copy it meets of a name at a version, and every
// other copy of that name and version resolves to it (the same files; a different version is never merged).
import fs from 'node:fs';
const sameVersion = {
  name: 'mcp-gate-same-version',
  setup(b) {
    const first = new Map();
    b.onResolve({ filter: /^[^./]/ }, async (a) => {
      if (a.pluginData?.sameVersion || a.path.startsWith('node:') || a.kind === 'entry-point') return undefined;
      const r = await b.resolve(a.path, {
        kind: a.kind,
        resolveDir: a.resolveDir,
        importer: a.importer,
        pluginData: { sameVersion: true },
      });
      if (r.errors.length || r.external || !r.path) return undefined;
      const m = /^(.*[\\/]node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/](.*)$/.exec(r.path);
      if (!m) return undefined;
      let id;
      try {
        const pkg = JSON.parse(fs.readFileSync(path.join(m[1], 'package.json'), 'utf8'));
        id = `${pkg.name}@${pkg.version}`;
      } catch {
        return undefined;
      }
      const root = first.get(id);
      if (root === undefined) first.set(id, m[1]);
      const file = root === undefined || root === m[1] ? r.path : path.join(root, m[2]);
      return fs.existsSync(file) ? { path: file, sideEffects: r.sideEffects } : undefined;
    });
  },
};
export const common = {
  bundle: true,
  plugins: [parts, sameVersion],
  alias: sdkShims,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  keepNames: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  mainFields: ['module', 'main'],
  logOverride: { 'require-resolve-not-external': 'silent' },
};
export const cli = { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } };
export const extension = { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] };
// The worker thread the extension resolves and installs pinned npm packages in (src/host/workers/lock-worker.ts). Three
// libraries the npm libraries require but MCP Gate never has them call are stand-ins (src/host/workers/npm-absent.ts).
const npmAbsent = {
  'iconv-lite': './src/host/workers/npm-absent.ts',
  sigstore: './src/host/workers/npm-absent.ts',
  '@npmcli/query': './src/host/workers/npm-absent.ts',
};
export const lockWorker = {
  ...common,
  alias: { ...sdkShims, ...npmAbsent },
  entryPoints: ['src/host/workers/lock-worker.ts'],
  outfile: 'dist/lock-worker.js',
};
// The relay a gated server's stdio definition starts (src/host/gateway/relay.ts): Node's own modules only.
export const relay = { ...common, entryPoints: ['src/host/gateway/relay.ts'], outfile: 'dist/relay.js' };
// The parts (above): each a bundle of its own library, required by the bundles above when first needed.
export const parser = { ...common, entryPoints: ['src/trust/plan/babel.ts'], outfile: 'dist/parser.js' };
export const undiciPart = { ...common, entryPoints: ['src/host/net/undici.ts'], outfile: 'dist/undici.js' };
// The files the CLI runs from (dist/): itself, its package worker and the parts. The CLI package ships them
// (scripts/pack-cli.mjs), and src/cli/install.ts copies them into the store for an agent's entry (a unit test
// holds its list equal to this one).
export const CLI_FILES = [
  'cli.js',
  'lock-worker.js',
  'parser.js',
  'undici.js',
  'guard/node-guard.cjs',
  'guard/mcp_gate_guard.py',
  'guard/mcp_gate_guard_parts/state.py',
  'guard/mcp_gate_guard_parts/rule.py',
  'guard/mcp_gate_guard_parts/loaders.py',
  'guard/mcp_gate_guard_parts/reads.py',
  'guard/mcp_gate_guard_parts/places.py',
  'guard/mcp_gate_guard_parts/gitfiles.py',
  'guard/mcp_gate_guard_parts/compiles.py',
  'guard/mcp_gate_guard_parts/engines.py',
  'guard/mcp_gate_guard_parts/programs.py',
  'guard/mcp_gate_guard_parts/native.py',
  'guard/mcp_gate_guard_parts/children.py',
  'guard/mcp_gate_guard_parts/pickles.py',
  'guard/mcp_gate_guard_parts/audit.py',
  'guard/mcp_gate_guard_parts/installing.py',
  'guard/mcp_gate_guard_parts/cmdline.py',
  'guard/mcp_gate_guard_parts/command_lines.json',
  'netshim/net-shim.cjs',
];
