#!/usr/bin/env node
// `npm run package`: builds the bundles and packages the extension with vsce into mcp-gate-<version>.vsix (or the
// file given with --out). The .vsix carries README.extension.md as its README (written for extension users; the
// developer setup stays in README.md). Its relative links are rewritten by vsce to absolute URLs of the repository
// (package.json `repository`: https://github.com/mcp-gate/mcp-gate/raw/HEAD/<path> for images, /blob/HEAD/ for
// links): VS Code's extension page renders only http(s) images (its sanitizer drops relative, file: and data:
// sources: measured in VS Code 1.112), and so does the Marketplace. The icon is packaged (media/icon.png).
// Fails when vsce prints a warning (test/unit/package.test.ts checks the .vsix itself).
//   --out FILE      where to write the .vsix
//   --no-build      package what dist/ holds now
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({ options: { out: { type: 'string' }, 'no-build': { type: 'boolean', default: false } } });
const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const out = path.resolve(opt.out ?? path.join(REPO, `mcp-gate-${version}.vsix`));

if (!opt['no-build']) {
  const b = spawnSync(process.execPath, [path.join(REPO, 'scripts/build.mjs')], { cwd: REPO, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const vsce = path.join(REPO, 'node_modules/@vscode/vsce/vsce');
const r = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--readme-path', 'README.extension.md',
  '--out', out], { cwd: REPO, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
process.stdout.write(text);
const warnings = text.split('\n').filter((l) => /\bWARNING\b|\bwarn(ing)?\b/i.test(l));
if (r.status !== 0) {
  console.error(`package: vsce failed (exit ${r.status ?? r.signal})`);
  process.exit(1);
}
if (warnings.length) {
  console.error(`package: vsce printed ${warnings.length} warning line(s); fix them:\n${warnings.join('\n')}`);
  process.exit(1);
}
console.log(`${path.relative(process.cwd(), out) || out} ${fs.statSync(out).size} bytes`);
