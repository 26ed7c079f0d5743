// Builds MCP Gate's network shim (src/netshim/net-shim.ts, issue 44) with esbuild into one self-contained CommonJS
// file, dist/netshim/net-shim.cjs: the --require preload that carries a contained server's Node fetch, http/https
// and raw TCP through its network door (src/host/net/egress.ts). `node scripts/build-netshim.mjs`, or
// `await buildNetShim()` (scripts/build.mjs).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildInside } from './build-guard.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const NETSHIM_OUT = path.join(ROOT, 'dist', 'netshim', 'net-shim.cjs');

/** Builds dist/netshim/net-shim.cjs; resolves to its absolute path. */
export async function buildNetShim() {
  return buildInside(
    path.join(ROOT, 'src', 'netshim', 'net-shim.ts'),
    NETSHIM_OUT,
    "// MCP Gate's network shim, built from src/netshim/net-shim.ts by scripts/build-netshim.mjs: do not edit.\n// MCP_GATE_DOOR=127.0.0.1:3128 node --require <this file> server.js (fetch, http/https and raw TCP through the door).",
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildNetShim();
