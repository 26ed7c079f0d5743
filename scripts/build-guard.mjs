// Builds MCP Gate's Node.js load guard (src/guard/node/guard.ts) with esbuild into one self-contained CommonJS file,
// dist/guard/node-guard.cjs. That one file is both the --require preload and the module.register hooks module
// (it registers itself; its `load` export is the hook). `node scripts/build-guard.mjs`, or `await buildGuard()`.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const GUARD_OUT = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');

/**
 * Bundles code that runs inside a server's own processes (the load guard, the network shim) into one self-contained
 * CommonJS file for the Node versions servers run on; resolves to its absolute path.
 */
export async function buildInside(entry, outfile, banner) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node18',
    minify: false,
    sourcemap: false,
    legalComments: 'none',
    banner: { js: banner },
    logLevel: 'warning',
  });
  return outfile;
}

/** Builds dist/guard/node-guard.cjs; resolves to its absolute path. */
export async function buildGuard() {
  return buildInside(
    path.join(ROOT, 'src', 'guard', 'node', 'guard.ts'),
    GUARD_OUT,
    "// MCP Gate's Node.js load guard, built from src/guard/node/guard.ts by scripts/build-guard.mjs: do not edit.\n// MCP_GATE_GUARD=/abs/manifest.json node --require <this file> server.js (it registers itself as the ESM load hook).",
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildGuard();
