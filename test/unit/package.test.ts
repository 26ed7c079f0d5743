// The .vsix as the Marketplace and VS Code's extension page see it: `npm run package` (scripts/package.mjs) into a
// temp folder, then the zip itself is read (yauzl): icon, README for users (images as alt text; https images with --base-images-url), manifest
// fields a search finds, minified bundles without source maps, no warning from vsce.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir } from './helpers';

// yauzl 3 has no bundled types; the little of it used here.
interface ZipEntry {
  fileName: string;
}
interface ZipFile {
  on(ev: 'entry', cb: (e: ZipEntry) => void): void;
  on(ev: 'end', cb: () => void): void;
  on(ev: 'error', cb: (e: Error) => void): void;
  readEntry(): void;
  openReadStream(e: ZipEntry, cb: (err: Error | null, s: NodeJS.ReadableStream) => void): void;
}
const yauzl = require('yauzl') as { open(p: string, o: { lazyEntries: boolean }, cb: (err: Error | null, z: ZipFile) => void): void };

function readZip(file: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const files = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(files));
      zip.on('entry', (e) => {
        if (e.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(e, (err2, s) => {
          if (err2) return reject(err2);
          const chunks: Buffer[] = [];
          s.on('data', (c: Buffer) => chunks.push(c));
          s.on('end', () => {
            files.set(e.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
          s.on('error', reject);
        });
      });
      zip.readEntry();
    });
  });
}

/** Width and height from a PNG's IHDR chunk; throws when the bytes are not a PNG. */
function pngSize(b: Buffer): { width: number; height: number } {
  assert.equal(b.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'not a PNG');
  assert.equal(b.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** Image sources of a Markdown text: ![alt](src "title") and <img src="…">. */
function imageSources(md: string): string[] {
  const out: string[] = [];
  for (const m of md.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push(m[1]!);
  for (const m of md.matchAll(/<img\b[^>]*\bsrc\s*=\s*["']([^"']+)["']/gi)) out.push(m[1]!);
  return out;
}

const tracked = (rel: string) => spawnSync('git', ['ls-files', '--error-unmatch', '--', rel], { cwd: ROOT, stdio: 'ignore' }).status === 0;

describe('package: the .vsix (npm run package)', function () {
  this.timeout(180_000);
  let files: Map<string, Buffer>;
  let output: string;
  after(cleanupTemp);

  before(async () => {
    const out = path.join(tempDir('mcp-gate-vsix-'), 'mcp-gate.vsix');
    // dist/ is built by `npm test`'s pretest; --no-build packages exactly that.
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/package.mjs'), '--no-build', '--out', out], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    output = `${r.stdout}${r.stderr}`;
    assert.equal(r.status, 0, `npm run package failed:\n${output}`);
    files = await readZip(out);
  });

  it('vsce prints no warning', () => {
    const warnings = output.split('\n').filter((l) => /warn/i.test(l));
    assert.deepEqual(warnings, []);
    assert.match(output, /DONE\s+Packaged/);
  });

  it('has a 128×128 PNG icon, named by the manifest and present in the package', () => {
    const manifest = files.get('extension.vsixmanifest')!.toString('utf8');
    assert.match(manifest, /<Icon>extension\/media\/icon\.png<\/Icon>/);
    const pkg = JSON.parse(files.get('extension/package.json')!.toString('utf8')) as { icon: string };
    assert.equal(pkg.icon, 'media/icon.png');
    assert.deepEqual(pngSize(files.get('extension/media/icon.png')!), { width: 128, height: 128 });
  });

  it("carries the users' README, each image as its alt text (an installed extension's page shows no image offline)", () => {
    const readme = files.get('extension/readme.md')!.toString('utf8');
    assert.match(readme, /^# MCP Gate/);
    assert.match(readme, /## How to use it/);
    assert.match(readme, /## Settings/);
    assert.doesNotMatch(readme, /npm run test:all|## Development|npm ci/, 'the developer setup belongs to the repository README');
    const source = fs.readFileSync(path.join(ROOT, 'README.extension.md'), 'utf8');
    const written = imageSources(source);
    assert.ok(written.length >= 4, `expected the README's screenshots, found ${written.length}`);
    for (const w of written) assert.ok(tracked(w), `${w} is a committed file`);
    assert.deepEqual(imageSources(readme), [], 'no image is left to show broken');
    for (const m of source.matchAll(/!\[([^\]]*)\]/g)) assert.ok(readme.includes(`*${m[1]}*`), `the alt text "${m[1]}" is on the page`);
    for (const l of readme.matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)/g)) assert.match(l[1]!, /^(https?:|mailto:|#)/, `relative link ${l[1]}`);
    assert.equal(files.has('extension/README.extension.md'), false, 'the README is packaged once, as readme.md');
  });

  it('the image check catches a broken image', () => {
    assert.deepEqual(imageSources('![a](docs/x.png) <img src="./y.png"> ![b](https://e.example/z.png "t")'), [
      'docs/x.png',
      'https://e.example/z.png',
      './y.png',
    ]);
    assert.equal(tracked('docs/screenshots/no-such-shot.png'), false);
    assert.equal(tracked('docs/screenshots/demo.png'), true);
  });

  it("carries the walkthrough's media: every step's page is in the package", () => {
    const pkg = JSON.parse(files.get('extension/package.json')!.toString('utf8')) as {
      contributes: { walkthroughs: { steps: { media: { markdown: string } }[] }[] };
    };
    const pages = pkg.contributes.walkthroughs.flatMap((w) => w.steps.map((st) => st.media.markdown));
    assert.ok(pages.length >= 3);
    for (const md of pages) assert.ok(files.has(`extension/${md}`), `${md} packaged`);
  });

  it('images as text refuses a missing or non-PNG image, a file outside the checkout, a relative link', () => {
    const repo = tempDir('mcp-gate-inline-');
    fs.mkdirSync(path.join(repo, 'docs'));
    fs.copyFileSync(path.join(ROOT, 'media/icon.png'), path.join(repo, 'docs/a.png'));
    fs.writeFileSync(path.join(repo, 'docs/b.svg'), '<svg/>');
    const run = (md: string) =>
      spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { imagesAsText } from ${JSON.stringify(path.join(ROOT, 'scripts/inline-images.mjs'))}; process.stdout.write(imagesAsText(process.argv[1], process.argv[2]))`,
          md,
          repo,
        ],
        { encoding: 'utf8' },
      );
    const ok = run('![A shot](docs/a.png) <img src="docs/a.png" alt="B shot"> ![w](https://e.example/w.png) [site](https://e.example/)');
    assert.equal(ok.status, 0, ok.stderr);
    assert.equal(ok.stdout, '*A shot* *B shot* ![w](https://e.example/w.png) [site](https://e.example/)');
    const bad = run('![m](docs/missing.png) ![s](docs/b.svg) ![o](../outside.png) [more](docs/more.md)');
    assert.notEqual(bad.status, 0);
    assert.match(
      bad.stderr,
      /README\.extension\.md: image docs\/missing\.png: not a PNG file of this checkout; image docs\/b\.svg: not a PNG file of this checkout; image \.\.\/outside\.png: not a PNG file of this checkout; link docs\/more\.md: relative, leads nowhere in the \.vsix/,
    );
  });

  it('for the Marketplace (--base-images-url): the README as written, each image at that https URL', async () => {
    const out = path.join(tempDir('mcp-gate-vsix-'), 'm.vsix');
    const base = 'https://raw.githubusercontent.com/mcp-gate/mcp-gate/v0.1.0/';
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/package.mjs'), '--no-build', '--base-images-url', base, '--out', out], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    const readme = (await readZip(out)).get('extension/readme.md')!.toString('utf8');
    const written = imageSources(fs.readFileSync(path.join(ROOT, 'README.extension.md'), 'utf8'));
    assert.deepEqual(
      imageSources(readme),
      written.map((w) => base + w),
    );
    const bad = spawnSync(
      process.execPath,
      [path.join(ROOT, 'scripts/package.mjs'), '--no-build', '--base-images-url', 'http://e.example/', '--out', out],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /--base-images-url must be an https URL/);
  });

  it('is found by a search for MCP, security, trust; has repository, bugs and homepage', () => {
    const pkg = JSON.parse(files.get('extension/package.json')!.toString('utf8')) as Record<string, unknown>;
    const keywords = pkg.keywords as string[];
    for (const k of ['mcp', 'security', 'trust']) assert.ok(keywords.includes(k), `keyword ${k}`);
    assert.ok((pkg.categories as string[]).includes('AI'));
    assert.ok(!(pkg.categories as string[]).every((c) => c === 'Other'));
    assert.match((pkg.repository as { url: string }).url, /^https:\/\/github\.com\//);
    assert.match((pkg.bugs as { url: string }).url, /^https:\/\//);
    assert.match(pkg.homepage as string, /^https:\/\//);
    const manifest = files.get('extension.vsixmanifest')!.toString('utf8');
    assert.match(manifest, /<Tags>[^<]*\bmcp\b[^<]*\bsecurity\b[^<]*\btrust\b/);
  });

  it('ships minified bundles, no source maps, nothing from the source tree', () => {
    const names = [...files.keys()];
    assert.deepEqual(
      names.filter((n) => n.endsWith('.map')),
      [],
    );
    assert.deepEqual(
      names.filter((n) => /^extension\/(src|test|bench|scripts|node_modules|webview|docs)\//.test(n)),
      [],
    );
    for (const f of [
      'extension/dist/extension.js',
      'extension/dist/cli.js',
      'extension/dist/lock-worker.js',
      'extension/dist/relay.js',
      'extension/dist/parser.js',
      'extension/dist/undici.js',
    ]) {
      const text = files.get(f)!.toString('utf8');
      assert.ok(text.split('\n').length < 2_000, `${f} has ${text.split('\n').length} lines: not minified`);
    }
    // The load guard ships beside the bundles: a guarded server does not start without it (src/host/sandbox/load-guard.ts).
    for (const f of [
      'extension/dist/guard/node-guard.cjs',
      'extension/dist/guard/mcp_gate_guard.py',
      // the Python guard's parts, which its entry loads (src/guard/python/mcp_gate_guard_parts/)
      ...fs
        .readdirSync(path.join(ROOT, 'src/guard/python/mcp_gate_guard_parts'))
        .filter((n) => n.endsWith('.py'))
        .map((n) => `extension/dist/guard/mcp_gate_guard_parts/${n}`),
      'extension/dist/netshim/net-shim.cjs',
    ])
      assert.ok(files.has(f), `${f} is not in the package`);
    // The source maps stay in dist/ for debugging.
    assert.ok(fs.existsSync(path.join(ROOT, 'dist/extension.js.map')));
  });

  it('the npm libraries are in the package worker only: the extension and the CLI start it instead of carrying them', () => {
    // Each bundle's source map lists the files it was built from.
    const sources = (f: string) =>
      (JSON.parse(fs.readFileSync(path.join(ROOT, 'dist', `${f}.map`), 'utf8')) as { sources: string[] }).sources;
    const npm = (list: string[]) => list.filter((s) => /node_modules\/(pacote|@npmcli\/arborist|cacache|npm-registry-fetch)\//.test(s));
    assert.deepEqual(npm(sources('extension.js')), [], 'dist/extension.js carries npm libraries');
    assert.deepEqual(npm(sources('cli.js')), [], 'dist/cli.js carries npm libraries');
    assert.ok(npm(sources('lock-worker.js')).length > 0, 'the package worker carries them');
    assert.ok(sources('lock-worker.js').some((s) => s.endsWith('src/trust/packages/npm-resolve.ts')));
    // The relay VS Code starts for each gated server is Node's modules only (it starts fast, carries no library):
    // itself and its handshake.
    assert.deepEqual(
      sources('relay.js').map((s) => s.replace(/^(\.\.\/)+/, '')),
      ['src/host/gateway/relay.ts', 'src/host/gateway/handshake.ts'],
    );
    assert.ok(
      !sources('extension.js').some((s) => s.endsWith('src/trust/packages/npm-resolve.ts')) &&
        !sources('cli.js').some((s) => s.endsWith('src/trust/packages/npm-resolve.ts')),
    );
  });
});
