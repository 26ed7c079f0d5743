#!/usr/bin/env node
// `npm run test:all` leaves the working tree as it found it. `--start` records `git status` (and the content hash
// of every file it lists) in test-results/tree-start.json (gitignored); `--end` compares and fails, naming each
// file a suite created, changed or removed. Local edits made before the run are in the record, so they do not
// count; screenshots and other artefacts belong in test-results/ (or docs/ only with --docs).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const record = path.join(REPO, 'test-results', 'tree-start.json');

function snapshot() {
  const r = spawnSync('git', ['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git status failed: ${r.stderr}`);
  const out = {};
  for (const entry of r.stdout.split('\0').filter(Boolean)) {
    const file = entry.slice(3);
    const abs = path.join(REPO, file);
    out[file] =
      `${entry.slice(0, 2)} ${fs.existsSync(abs) && fs.statSync(abs).isFile() ? createHash('sha256').update(fs.readFileSync(abs)).digest('hex') : '-'}`;
  }
  return out;
}

if (process.argv.includes('--start')) {
  fs.mkdirSync(path.dirname(record), { recursive: true });
  fs.writeFileSync(record, JSON.stringify(snapshot(), null, 1));
} else if (process.argv.includes('--end')) {
  // A suite may have cleared test-results/; without a record, the tree must be clean.
  const before = fs.existsSync(record) ? JSON.parse(fs.readFileSync(record, 'utf8')) : {};
  const now = snapshot();
  const changed = [...new Set([...Object.keys(before), ...Object.keys(now)])].filter((f) => before[f] !== now[f]).sort();
  if (changed.length) {
    console.error(
      `the test run changed the working tree (git status):\n${changed.map((f) => `  ${now[f]?.slice(0, 2) ?? 'gone'} ${f}`).join('\n')}`,
    );
    process.exit(1);
  }
  console.log('working tree as before the run');
} else {
  console.error('usage: node scripts/tree-check.mjs --start | --end');
  process.exit(2);
}
