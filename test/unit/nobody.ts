// The CLI as the unprivileged user `nobody`, as a normal user's machine runs it (the suite runs as root): the test's
// world handed to nobody (its files, its store) with a copy of the built CLI in it, since the checkout may lie in a
// folder only root can enter (a mktemp clone in CI).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI_FILES } from '../../src/cli/install';
import { ROOT, type World } from './helpers';

export const NOBODY = ['--reuid=65534', '--regid=65534', '--clear-groups'];

/** Where `nobody` runs the CLI from: a copy in its world. */
export const cliOf = (w: World) => path.join(path.dirname(w.project), 'mcp-gate-cli', 'cli.js');

/** Hands the world to `nobody` (its files, its store, a copy of the CLI). */
export function toNobody(w: World): void {
  const base = path.dirname(w.project);
  fs.mkdirSync(path.dirname(cliOf(w)));
  for (const f of CLI_FILES) {
    fs.mkdirSync(path.dirname(path.join(path.dirname(cliOf(w)), f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'dist', f), path.join(path.dirname(cliOf(w)), f));
  }
  fs.chmodSync(base, 0o755);
  const r = spawnSync('chown', ['-R', '65534:65534', base], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

/** `mcp-gate <args> --project <project>` as `nobody`, with the world's environment. */
export function cliAsNobody(w: World, args: string[]): { code: number; out: string; stdout: string } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
  for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
  const r = spawnSync('setpriv', [...NOBODY, process.execPath, cliOf(w), ...args, '--project', w.project], {
    env,
    cwd: '/',
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}
