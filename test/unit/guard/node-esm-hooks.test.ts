// The Node.js load guard (dist/guard/node-guard.cjs) and module hooks a server registers itself with module.register
// (red team 17, case n10): their hooks run in Node's loader thread, after the guard's were registered, and may answer
// for a URL with any text — a `virtual:` module built from a JSON file the server reads there, a file's text
// transformed. What they hand back for a URL that is not a file as approved is text turned into code: refused once
// the server (its main thread or the loader thread) took in content that is not as approved; an honest hook (a
// virtual module of constant text, a transpiler) still runs, also after a README edit. On Node 20 (the guard wraps
// the loader's defaults, --expose-internals) and on 22 and 24 (registerHooks) when their binaries are there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir, writeFiles } from '../helpers';

const GUARD = process.env.MCP_GATE_TEST_GUARD || path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');

interface Ws {
  root: string;
  manifest: string;
  report: string;
  marker: string;
}

/** A workspace with `files` and a README, approved as it is (every file's sha256, `since` now). */
function approved(files: Record<string, string>): Ws {
  const root = fs.realpathSync(tempDir('mcp-gate-guard-ws-'));
  const out = fs.realpathSync(tempDir('mcp-gate-guard-out-'));
  const scratch = fs.realpathSync(tempDir('mcp-gate-guard-scratch-'));
  writeFiles(root, { 'README.md': '# server\n', ...files });
  const sums: Record<string, string> = {};
  for (const rel of fs.readdirSync(root))
    sums[rel] = createHash('sha256')
      .update(fs.readFileSync(path.join(root, rel)))
      .digest('hex');
  const ws = { root, manifest: path.join(out, 'manifest.json'), report: path.join(out, 'report.jsonl'), marker: path.join(out, 'ran') };
  const manifest = { version: 1, root, files: sums, links: {}, since: Date.now(), scratch: [scratch], report: ws.report };
  fs.writeFileSync(ws.manifest, JSON.stringify(manifest));
  return ws;
}

function run(node: string, ws: Ws): { status: number | null; out: string } {
  const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest };
  delete env.NODE_OPTIONS;
  const r = spawnSync(node, ['--expose-internals', '--require', GUARD, 'server.js'], {
    cwd: ws.root,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The Nodes to run on: this one (20 in CI) and VS Code's 22 and 24, when downloaded. */
function nodes(): string[] {
  const dir = process.env.MCP_GATE_VSCODE_DIR || path.join(os.homedir(), '.cache', 'mcp-gate-vscode');
  const more = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((n) => /^node-2[2-9]\./.test(n))
    .map((n) => path.join(dir, n, 'bin', 'node'))
    .filter((b) => fs.existsSync(b));
  return [process.execPath, ...more];
}

// The server registers its hooks with module.register on every Node (the loader thread), imports `virtual:cfg` and
// a TypeScript-ish file, and prints what they give.
const SERVER =
  "const m = require('module'), url = require('url');\n" +
  "m.register('./hooks.mjs', url.pathToFileURL(__dirname + '/'));\n" +
  "Promise.all([import('virtual:cfg'), import('./lib.ts')]).then(([c, l]) => console.log('ANSWER ' + c.default.v + ' ' + l.twice(2)),\n" +
  "  (e) => { console.log('FAILED ' + (e.code || '') + ' ' + e.message); process.exitCode = 3; });\n";
const LIB = 'export function twice(n: number): number { return n * 2; }\n';
/** A transpiler's load: the file's text with its type annotations taken out. */
const TRANSPILE =
  "export async function load(u, c, n) {\n  if (u.endsWith('.ts')) { const r = await n(u, { ...c, format: 'module' });\n" +
  "    return { format: 'module', source: String(r.source).replace(/: number/g, '') + EXTRA(), shortCircuit: true }; }\n" +
  "  return u === 'virtual:cfg' ? { format: 'module', source: 'export default ' + CFG(), shortCircuit: true } : n(u, c);\n}\n" +
  "export async function resolve(s, c, n) { return s === 'virtual:cfg' ? { url: 'virtual:cfg', shortCircuit: true } : n(s, c); }\n";
const hooks = (cfg: string, extra = "''"): string =>
  `import fs from 'node:fs';\nimport cp from 'node:child_process';\nconst W = new URL('.', import.meta.url);\n` +
  `const CFG = () => ${cfg};\nconst EXTRA = () => ${extra};\n${TRANSPILE}`;
/** What the attack writes: the value, then code that says it ran. */
const payload = (ws: Ws): string => `; process.getBuiltinModule('fs').writeFileSync(${JSON.stringify(ws.marker)}, 'ran')`;

describe("Node load guard: module hooks of the server's own (module.register, the loader thread)", function () {
  this.timeout(300_000);
  before(() => {
    if (process.env.MCP_GATE_TEST_GUARD) return;
    const b = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-guard.mjs')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(b.status, 0, b.stderr);
  });
  after(cleanupTemp);

  for (const node of nodes()) {
    const v = spawnSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim();

    it(`${v}: a virtual: module whose text a hook built from a changed cfg.json it read in the loader thread is refused, naming it (n10)`, () => {
      const ws = approved({
        'server.js': SERVER,
        'hooks.mjs': hooks("fs.readFileSync(new URL('cfg.json', W), 'utf8')"),
        'lib.ts': LIB,
        'cfg.json': '{"v":"ok"}',
      });
      let r = run(node, ws);
      assert.match(r.out, /ANSWER ok 4/, r.out);
      fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited by the person\n');
      r = run(node, ws);
      assert.match(r.out, /ANSWER ok 4/, `a README edit: ${r.out}`);
      fs.writeFileSync(path.join(ws.root, 'cfg.json'), '{"v":"ok"}' + payload(ws));
      r = run(node, ws);
      assert.ok(!fs.existsSync(ws.marker), `the changed text ran: ${r.out}`);
      assert.match(
        r.out,
        /FAILED ERR_MCP_GATE_GUARD .*virtual:cfg: text turned into code.*\(cfg\.json\): it changed since approval/,
        r.out,
      );
      assert.match(fs.readFileSync(ws.report, 'utf8'), /"rel":"cfg.json","why":"changed".*"took":true/);
    });

    /** A transpiler whose hook adds `extra` (read from cfg.json): answers approved; after cfg.json changes, what it said. */
    const attackedThrough = (extra: string): string => {
      const ws = approved({ 'server.js': SERVER, 'hooks.mjs': hooks('\'{"v":"ok"}\'', extra), 'lib.ts': LIB, 'cfg.json': '// nothing\n' });
      let r = run(node, ws);
      assert.match(r.out, /ANSWER ok 4/, r.out);
      fs.writeFileSync(path.join(ws.root, 'cfg.json'), payload(ws).slice(1));
      r = run(node, ws);
      assert.ok(!fs.existsSync(ws.marker), `the changed text ran: ${r.out}`);
      return r.out;
    };

    it(`${v}: a transpiled file with text its hook added from a changed file it read is refused (source that is not the file's bytes)`, () => {
      const out = attackedThrough("fs.readFileSync(new URL('cfg.json', W), 'utf8')");
      assert.match(out, /FAILED ERR_MCP_GATE_GUARD .*lib\.ts \(text a module hook.*\(cfg\.json\): it changed since approval/, out);
    });

    it(`${v}: a transpiler whose hook adds what a program it started printed of a changed file is refused (the loader thread's programs are guarded)`, () => {
      const out = attackedThrough("cp.execFileSync('cat', ['cfg.json'], { cwd: W, encoding: 'utf8' })");
      assert.match(out, /FAILED ERR_MCP_GATE_GUARD .*\(cfg\.json\): it changed since approval/, out);
    });

    it(`${v}: an honest hook (a virtual module of constant text, a transpiler) runs unchanged and after a README edit`, () => {
      const ws = approved({ 'server.js': SERVER, 'hooks.mjs': hooks('\'{"v":"ok"}\''), 'lib.ts': LIB });
      let r = run(node, ws);
      assert.match(r.out, /ANSWER ok 4/, r.out);
      fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited by the person\n');
      r = run(node, ws);
      assert.match(r.out, /ANSWER ok 4/, `a README edit: ${r.out}`);
      assert.ok(!fs.existsSync(ws.report), 'nothing refused');
    });

    // tsx (a real transpiler, `--import tsx`): on Node 23 and later its hooks also give require() the transpiled text
    // of a CommonJS TypeScript file, which the guard took for a changed file (Node 20 cannot run this even unguarded:
    // ERR_REQUIRE_CYCLE_MODULE).
    if (!/^v20\./.test(v))
      it(`${v}: tsx runs an unchanged CommonJS TypeScript server, also after a README edit; a changed lib.ts is refused`, () => {
        const ws = approved({
          'package.json': '{ "name": "t" }\n',
          'server.ts': "import { greet } from './lib.ts';\nconst n: number = 2;\nconsole.log('ANSWER ' + greet('w') + ' ' + n);\n",
          'lib.ts': "export function greet(n: string): string { return 'hello ' + n; }\n",
        });
        const tsx = (): string => {
          const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest };
          delete env.NODE_OPTIONS;
          const args = [
            '--expose-internals',
            '--require',
            GUARD,
            '--import',
            path.join(ROOT, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs'),
            'server.ts',
          ];
          const r = spawnSync(node, args, { cwd: ws.root, env, encoding: 'utf8', timeout: 60_000 });
          return `${r.stdout}${r.stderr}`;
        };
        assert.match(tsx(), /ANSWER hello w 2/);
        fs.writeFileSync(path.join(ws.root, 'README.md'), '# edited\n');
        assert.match(tsx(), /ANSWER hello w 2/, 'after a README edit');
        fs.writeFileSync(path.join(ws.root, 'lib.ts'), "export function greet(n: string): string { return 'CHANGED ' + n; }\n");
        const out = tsx();
        assert.doesNotMatch(out, /CHANGED/, out);
        assert.match(out, /refused to load .*lib\.ts \(lib\.ts\): it changed since approval/, out);
      });
  }
});
