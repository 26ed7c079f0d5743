#!/usr/bin/env node
// Renders media/icon.svg to media/icon.png (128×128, transparent corners), the extension's icon in the .vsix and
// on the extension page. Uses playwright-core with Debian's chromium (/usr/bin/chromium or $CHROMIUM); run it after
// editing the SVG and commit both files: `node scripts/icon.mjs`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const svg = fs.readFileSync(path.join(REPO, 'media/icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: path.join(REPO, 'media/icon.png'), omitBackground: true });
} finally {
  await browser.close();
}
console.log('media/icon.png written');
