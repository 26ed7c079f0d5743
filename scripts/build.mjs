// Bundles the extension, the CLI, the extension's package worker (dist/lock-worker.js), the chat relay (dist/relay.js)
// and the parts they load when first needed (dist/parser.js, dist/undici.js) with esbuild (minified; options in
// build-options.mjs). The extension keeps `vscode` external;
// the CLI is a self-contained Node script with a shebang. The trust panel's webview script is a browser bundle in
// dist/webview/ (with codicons' css and font beside it): the panel loads only from dist/webview/ and media/.
import { build } from 'esbuild';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { cli, extension, lockWorker, parser, relay, undiciPart } from './build-options.mjs';
import { buildGuard } from './build-guard.mjs';
import { buildNetShim } from './build-netshim.mjs';

await build(cli);
chmodSync('dist/cli.js', 0o755);

await build(extension);
await build(lockWorker);
await build(relay);
await build(parser);
await build(undiciPart);
// The load guard: its own bundle, loaded inside servers' processes (src/guard/; scripts/build-guard.mjs), and the
// Python guard beside it as it is written.
await buildGuard();
mkdirSync('dist/guard', { recursive: true });
// The Python guard: its entry and its parts (src/guard/python/mcp_gate_guard_parts/), the .py files and the tables
// it reads (.json) only (no __pycache__ a test run left there).
rmSync('dist/guard/mcp_gate_guard_parts', { recursive: true, force: true });
mkdirSync('dist/guard/mcp_gate_guard_parts');
copyFileSync('src/guard/python/mcp_gate_guard.py', 'dist/guard/mcp_gate_guard.py');
for (const f of readdirSync('src/guard/python/mcp_gate_guard_parts').filter((n) => n.endsWith('.py') || n.endsWith('.json')))
  copyFileSync(`src/guard/python/mcp_gate_guard_parts/${f}`, `dist/guard/mcp_gate_guard_parts/${f}`);
// The network shim: its own bundle, preloaded into a contained server's Node processes that have a network door
// (src/netshim/; scripts/build-netshim.mjs).
await buildNetShim();
copyFileSync('src/netshim/mcp_gate_netshim.py', 'dist/netshim/mcp_gate_netshim.py');

await build({
  entryPoints: ['webview/main.ts'],
  outfile: 'dist/webview/panel.js',
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: 'chrome120',
  minify: true,
  sourcemap: false,
  legalComments: 'linked',
  logLevel: 'warning',
});

const codicons = path.dirname(createRequire(import.meta.url).resolve('@vscode/codicons/dist/codicon.css'));
mkdirSync('dist/webview/codicons', { recursive: true });
for (const f of ['codicon.css', 'codicon.ttf']) copyFileSync(path.join(codicons, f), path.join('dist/webview/codicons', f));
