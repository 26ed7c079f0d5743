// The webview's own code never turns a string into markup: no innerHTML, outerHTML, insertAdjacentHTML,
// document.write, eval, Function or string timers, and no inline event handler attribute. (The bundled
// @vscode-elements/Lit code builds its templates from static strings; this covers what the panel writes.)
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers';

describe('trust panel: webview sources', () => {
  const dir = path.join(ROOT, 'webview');
  const files = (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'));

  it('set untrusted strings only as text', () => {
    assert.ok(files.includes('main.ts') && files.includes('browser/dom.ts'));
    const bad =
      /\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(|setTimeout\(\s*['"`]|setInterval\(\s*['"`]|\.setAttribute\(\s*['"`]on|srcdoc|javascript:/;
    for (const f of files) {
      const lines = fs.readFileSync(path.join(dir, f), 'utf8').split('\n');
      lines.forEach((l, i) => assert.doesNotMatch(l.replace(/^\s*\/\/.*$|\s\/\/ .*$/, ''), bad, `${f}:${i + 1}: ${l.trim()}`));
    }
  });

  it('the DOM helper refuses event-handler attributes', () => {
    const dom = fs.readFileSync(path.join(dir, 'browser', 'dom.ts'), 'utf8');
    assert.match(dom, /if \(\/\^on\/i\.test\(k\)\) throw/);
  });
});
