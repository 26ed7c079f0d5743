#!/usr/bin/env node
// `npm run pack:cli`: the CLI as an npm package a user installs with `npm i -g ./mcp-gate-<version>.tgz`, which puts
// `mcp-gate` on PATH. The bundles carry every dependency (esbuild), so the package has none: nothing is fetched at
// install time, and the installed copy does not depend on this checkout (move or delete it; `mcp-gate install
// <agent>` entries written by the installed CLI name the installed files).
//   --out DIR     where to write the .tgz (default: the repository root)
//   --no-build    package what dist/ holds now
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CLI_FILES } from './build-options.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({ options: { out: { type: 'string' }, 'no-build': { type: 'boolean', default: false } } });
const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const outDir = path.resolve(opt.out ?? REPO);

if (!opt['no-build']) {
  const b = spawnSync(process.execPath, [path.join(REPO, 'scripts/build.mjs')], { cwd: REPO, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-pack-'));
try {
  fs.mkdirSync(path.join(stage, 'dist'));
  // the CLI, its package worker, and the parts they load when first needed (scripts/build-options.mjs)
  for (const f of CLI_FILES) {
    const from = path.join(REPO, 'dist', f);
    if (!fs.existsSync(from)) throw new Error(`${from} is missing (npm run build)`);
    fs.mkdirSync(path.dirname(path.join(stage, 'dist', f)), { recursive: true });
    fs.copyFileSync(from, path.join(stage, 'dist', f));
  }
  fs.chmodSync(path.join(stage, 'dist', 'cli.js'), 0o755);
  for (const f of ['README.md', 'LICENSE', 'CHANGELOG.md']) fs.copyFileSync(path.join(REPO, f), path.join(stage, f));
  fs.writeFileSync(
    path.join(stage, 'package.json'),
    JSON.stringify(
      {
        name: manifest.name,
        version: manifest.version,
        description: 'MCP Gate command line: the trust gate and hardened client for MCP servers (mcp-gate)',
        license: manifest.license,
        bin: { 'mcp-gate': 'dist/cli.js' },
        files: [...CLI_FILES.map((f) => `dist/${f}`), 'CHANGELOG.md'],
        engines: { node: manifest.engines.node },
      },
      null,
      2,
    ) + '\n',
  );
  const r = spawnSync('npm', ['pack', '--silent', '--pack-destination', outDir], {
    cwd: stage,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
  const file = path.join(outDir, r.stdout.trim().split('\n').pop());
  console.log(
    `${path.relative(process.cwd(), file) || file} ${fs.statSync(file).size} bytes: npm i -g ${path.relative(process.cwd(), file) || file}`,
  );
} finally {
  fs.rmSync(stage, { recursive: true, force: true });
}
