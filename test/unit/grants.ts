// Test helper for the grants grammar: rules, secrets entries and local-development exceptions without "project"
// are for user-scope servers only, so a test that grants a repository server writes them for its project.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { World } from './helpers';

type Config = Record<string, unknown>;

/** The config with `"project": project` added to every rule, secrets entry and exception that has none. */
export function forProject(config: Config, project: string): Config {
  const qualify = (list: unknown) =>
    Array.isArray(list) ? list.map((x) => (x && typeof x === 'object' && !('project' in x) ? { ...x, project } : x)) : list;
  const out: Config = { ...config };
  for (const k of ['rules', 'secrets', 'localExceptions']) if (k in out) out[k] = qualify(out[k]);
  return out;
}

/** The checkout's root, where the compiled fixtures and node_modules live (outside every test workspace). */
const CHECKOUT = path.resolve(__dirname, '..', '..', '..');

/**
 * Writes MCP Gate's user configuration of this world (XDG config), granting its project's repository servers.
 * Unless the config says otherwise, the project's contained servers may read this checkout (the fixtures they run
 * and their node_modules live there, outside the test workspace).
 */
export function writeProjectConfig(w: World, config: Config): void {
  const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const withReach =
    'sandbox' in config ? config : { ...config, sandbox: { servers: [{ server: '*', project: w.project, read: [CHECKOUT] }] } };
  fs.writeFileSync(file, JSON.stringify(forProject(withReach, w.project)));
}
