// The esbuild options of the Node bundles (dist/extension.js, dist/cli.js, dist/lock-worker.js), shared by scripts/build.mjs and the
// bundle-size benchmark (bench/run.mjs builds the same bundles unminified as its baseline). Minified with names
// kept (error messages and stack traces keep class and function names); source maps beside the bundles in dist/,
// never in the .vsix (.vscodeignore). @npmcli/run-script resolves node-gyp only to run install scripts, which MCP
// Gate never runs (ignoreScripts): esbuild's warning about that require.resolve is silenced. The SDK's runtime
// shims are MCP Gate's (src/host/sdk-shims.ts: the SDK's interpreting JSON Schema validator, not its bundled ajv).
const sdkShims = { '@modelcontextprotocol/client/_shims': './src/host/sdk-shims.ts', '@modelcontextprotocol/server/_shims': './src/host/sdk-shims.ts' };
export const common = { bundle: true, alias: sdkShims, platform: 'node', format: 'cjs', target: 'node20', minify: true, keepNames: true, sourcemap: 'linked', logLevel: 'warning', mainFields: ['module', 'main'], logOverride: { 'require-resolve-not-external': 'silent' } };
export const cli = { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } };
export const extension = { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] };
// The worker thread the extension resolves and installs pinned npm packages in (src/host/lock-worker.ts). Three
// libraries the npm libraries require but MCP Gate never has them call are stand-ins (src/host/npm-absent.ts).
const npmAbsent = { 'iconv-lite': './src/host/npm-absent.ts', sigstore: './src/host/npm-absent.ts', '@npmcli/query': './src/host/npm-absent.ts' };
export const lockWorker = { ...common, alias: { ...sdkShims, ...npmAbsent }, entryPoints: ['src/host/lock-worker.ts'], outfile: 'dist/lock-worker.js' };
