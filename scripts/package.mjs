#!/usr/bin/env node
// `npm run package`: builds the bundles and packages the extension with vsce into mcp-gate-<version>.vsix (or the
// file given with --out). The .vsix carries README.extension.md as its README (written for extension users; the
// developer setup stays in README.md). An installed extension's details page shows no image offline — measured in
// VS Code 1.112 and 1.139 (code-server, an installed .vsix, no network; the webview's CSP says `img-src https:
// data:` but its sanitizer drops every source that is not http(s): relative paths, packaged files, <img>, SVG and
// data: URIs alike) — so by default each relative image of README.extension.md becomes its alt text as an italic
// line (scripts/inline-images.mjs, into out/package/README.extension.md, packaged with --no-rewrite-relative-links):
// words, never a broken image. A relative link that is not an image, or an image that is not a PNG of this
// checkout, fails the packaging.
// --base-images-url URL packages for the Marketplace instead: README.extension.md as written, its relative images
// rewritten by vsce to URL/<path> (vsce --baseImagesUrl; https, which the Marketplace and VS Code show online);
// URL must serve this checkout's files (e.g. https://raw.githubusercontent.com/<owner>/<repo>/<tag>/). Offline
// that page shows broken images. The icon is packaged (media/icon.png) either way.
// Fails when vsce prints a warning (test/unit/package.test.ts checks the .vsix itself).
//   --out FILE               where to write the .vsix
//   --no-build               package what dist/ holds now
//   --base-images-url URL    images as URL/<path> (for the Marketplace) instead of their alt text
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { imagesAsText } from './inline-images.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({
  options: { out: { type: 'string' }, 'no-build': { type: 'boolean', default: false }, 'base-images-url': { type: 'string' } },
});
const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const out = path.resolve(opt.out ?? path.join(REPO, `mcp-gate-${version}.vsix`));

if (!opt['no-build']) {
  const b = spawnSync(process.execPath, [path.join(REPO, 'scripts/build.mjs')], { cwd: REPO, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
let readmePath = 'README.extension.md';
const extra = [];
if (opt['base-images-url']) {
  if (!/^https:\/\//.test(opt['base-images-url'])) {
    console.error('package: --base-images-url must be an https URL');
    process.exit(1);
  }
  extra.push('--baseImagesUrl', opt['base-images-url']);
} else {
  let inlined;
  try {
    inlined = imagesAsText(fs.readFileSync(path.join(REPO, 'README.extension.md'), 'utf8'), REPO);
  } catch (e) {
    console.error(`package: ${e.message}`);
    process.exit(1);
  }
  readmePath = 'out/package/README.extension.md'; // out/ is gitignored; vsce takes the readme from inside the folder
  fs.mkdirSync(path.join(REPO, 'out/package'), { recursive: true });
  fs.writeFileSync(path.join(REPO, readmePath), inlined);
  extra.push('--no-rewrite-relative-links');
}
const vsce = path.join(REPO, 'node_modules/@vscode/vsce/vsce');
const r = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--readme-path', readmePath, ...extra, '--out', out], {
  cwd: REPO,
  encoding: 'utf8',
  env: { ...process.env, NO_COLOR: '1' },
});
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
