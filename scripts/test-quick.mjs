#!/usr/bin/env node
// `npm run test:quick [-- <file or folder>…]`: the inner loop. The unit tests of what you are changing — each changed
// file under src/ maps to its mirror under test/unit/ (src/host/sandbox/sandbox.ts → test/unit/host/sandbox/sandbox.test.ts, or the
// folder test/unit/host/sandbox/ when there is one), each changed unit test is itself — plus the layer rules, after
// an incremental compile (and a build when the guard, the network shim or the bundles changed). "Changed" is the
// working tree and the commits not on main yet. Paths given on the command line are used instead.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const git = (...args) => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
};

function changedFiles() {
  const base = git('merge-base', 'HEAD', 'main')[0];
  return [
    ...new Set([
      ...(base ? git('diff', '--name-only', base, 'HEAD') : []),
      ...git('diff', '--name-only', 'HEAD'),
      ...git('ls-files', '--others', '--exclude-standard'),
    ]),
  ];
}

/** The compiled unit tests for one source or test path (a file or a folder). */
function testsFor(p) {
  const rel = p.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/$/, '');
  const out = [];
  const add = (ts) => {
    if (!fs.existsSync(ts)) return;
    if (fs.statSync(ts).isDirectory()) out.push(`out/${ts}/**/*.test.js`);
    else out.push(`out/${ts.replace(/\.ts$/, '.js')}`);
  };
  if (rel.startsWith('test/unit/')) {
    if (/\.test\.ts$/.test(rel) || (fs.existsSync(rel) && fs.statSync(rel).isDirectory())) add(rel);
  } else if (rel.startsWith('src/')) {
    const mirror = `test/unit/${rel.slice(4)}`;
    if (/\.(ts|py)$/.test(rel)) {
      const stem = mirror.replace(/\.(ts|py)$/, '');
      add(`${stem}.test.ts`);
      add(stem);
    } else add(mirror);
  }
  return out;
}

const given = process.argv.slice(2);
const files = given.length ? given : changedFiles();
const specs = [...new Set(files.flatMap(testsFor))];
const needsBuild = files.some((f) => /^(src\/(guard|netshim)\/|webview\/|scripts\/build)/.test(f) || f === 'src/cli.ts');
const run = (cmd, args) => {
  console.error(`[test:quick] ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

if (!specs.length)
  console.error(`[test:quick] no unit test mirrors ${files.length ? files.join(', ') : 'the changes'}; running the layer rules only`);
if (needsBuild) run(process.execPath, ['scripts/build.mjs']);
run(process.execPath, [path.join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.test.json']);
// .mocharc's spec would add every test: its other options are given here instead.
run(process.execPath, [
  path.join('node_modules', 'mocha', 'bin', 'mocha.js'),
  '--no-config',
  '--timeout',
  '120000',
  '--exit',
  '--enable-source-maps',
  '--reporter',
  './test/reporter.js',
  'out/test/unit/layers.test.js',
  ...specs,
]);
