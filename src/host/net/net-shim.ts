// The network shim's place in a contained server's sandbox (issue 44; the shim itself is src/netshim/, built to
// dist/netshim/net-shim.cjs). A sandbox with a network door (./egress.ts) shows the built file read-only at
// NETSHIM_MOUNT and gives the server MCP_GATE_DOOR (the door's address inside) and `--require NETSHIM_MOUNT`
// appended to its NODE_OPTIONS, so every Node process it starts (children inherit the environment) carries its
// built-in fetch, http/https requests and raw TCP through the door, with no proxy setting or npm package of its
// own. Clients that honour the proxy variables (./egress-terms.ts PROXY_ENV) are not changed by it: their connections go
// to the door on loopback, which the shim never tunnels.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOOR_PORT } from './egress';

/** Where the shim is shown inside the sandbox (beside the load guard's files, ../sandbox/load-guard.ts GUARD_MOUNT). */
export const NETSHIM_MOUNT = '/run/mcp-gate/net-shim.cjs';
const NETSHIM_FILE = 'net-shim.cjs';
/**
 * The Python shim (src/netshim/mcp_gate_netshim.py), copied beside the Node one by the build and shown at this fixed
 * place; the Python load guard runs it from there (and only from there) when MCP_GATE_DOOR is set.
 */
export const NETSHIM_PY_MOUNT = '/run/mcp-gate/net-shim.py';
export const NETSHIM_PY_FILE = 'mcp_gate_netshim.py';
/** The variable that turns the shim on: the door's address as the server sees it. */
export const NETSHIM_VAR = 'MCP_GATE_DOOR';
const REQUIRE = `--require ${NETSHIM_MOUNT}`;

/** MCP Gate's built shim: dist/netshim/ beside the running bundle, or the checkout's dist/netshim (tests); undefined when not built. */
export function defaultNetShim(): string | undefined {
  const candidates = [
    path.join(__dirname, 'netshim'),
    path.resolve(__dirname, '..', '..', '..', '..', 'dist', 'netshim'),
    path.resolve(__dirname, '..', '..', '..', 'dist', 'netshim'),
  ];
  return candidates.map((d) => path.join(d, NETSHIM_FILE)).find((f) => fs.existsSync(f));
}

/** The variables that turn the shim on, given the server's own environment (its NODE_OPTIONS kept, the shim after it). */
export function netShimEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const theirs = env.NODE_OPTIONS ?? '';
  return { [NETSHIM_VAR]: `127.0.0.1:${DOOR_PORT}`, NODE_OPTIONS: theirs.includes(REQUIRE) ? theirs : `${theirs} ${REQUIRE}`.trim() };
}
