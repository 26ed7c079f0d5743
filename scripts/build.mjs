// Bundles the extension and the CLI with esbuild. The extension keeps `vscode` external;
// the CLI is a self-contained Node script with a shebang.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';

const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: true, logLevel: 'warning', mainFields: ['module', 'main'] };

await build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } });
chmodSync('dist/cli.js', 0o755);

await build({ ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] });
