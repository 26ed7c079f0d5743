// The Node load guard and native code that does not come through process.dlopen alone (red team 6n, cases 01–03,
// 05): the libraries an addon needs (DT_NEEDED along $ORIGIN), node:sqlite's loadExtension, crypto.setEngine, a
// file in the workspace that is no ELF loaded as an addon, and Node's compile cache. Real shared libraries are built
// with the machine's C compiler (skipped without one); each one's constructor appends its name to a marker file, so
// "its code ran" is seen whether or not the load then fails (a plain library is no addon, engine or extension).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readElfDynamic } from '../../../src/guard/node/guard';
import { cleanupTemp, ROOT, tempDir, writeFiles } from '../helpers';

const GUARD = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');
const CC = ['gcc', 'cc'].find((c) => spawnSync(c, ['--version']).status === 0);
const LINUX = process.platform === 'linux';

interface Ws {
  root: string;
  scratch: string;
  out: string;
  manifest: string;
  report: string;
  marker: string;
}

function workspace(): Ws {
  const root = fs.realpathSync(tempDir('mcp-gate-native-ws-'));
  const scratch = fs.realpathSync(tempDir('mcp-gate-native-scratch-'));
  const out = fs.realpathSync(tempDir('mcp-gate-native-out-'));
  writeFiles(root, { 'README.md': '# server\n' });
  return {
    root,
    scratch,
    out,
    manifest: path.join(out, 'manifest.json'),
    report: path.join(out, 'report.jsonl'),
    marker: path.join(out, 'ran'),
  };
}

/** Records the workspace as MCP Gate does: a file over 256 MiB unhashed ("too-large"), with its size, time and inode. */
function approve(ws: Ws): void {
  const files: Record<string, string> = {};
  const large: Record<string, { size: number; mtimeNs: string; ino: string }> = {};
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      const rel = path.relative(ws.root, p).split(path.sep).join('/');
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.statSync(p).size > 256 * 1024 * 1024) {
        const st = fs.lstatSync(p, { bigint: true });
        files[rel] = 'too-large';
        large[rel] = { size: Number(st.size), mtimeNs: String(st.mtimeNs), ino: String(st.ino) };
      } else if (e.isFile()) files[rel] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(ws.root);
  fs.writeFileSync(
    ws.manifest,
    JSON.stringify({ version: 1, root: ws.root, files, links: {}, large, scratch: [ws.scratch], report: ws.report, server: 'test' }),
  );
}

function run(ws: Ws, code: string, timeout = 20_000): { status: number | null; stdout: string; stderr: string } {
  const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest, MARK: ws.marker };
  delete env.NODE_OPTIONS;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  const file = path.join(ws.root, 'server.js');
  const r = spawnSync(process.execPath, ['--expose-internals', '--require', GUARD, file], {
    cwd: ws.root,
    env,
    encoding: 'utf8',
    timeout,
  });
  void code;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const ran = (ws: Ws): string => (fs.existsSync(ws.marker) ? fs.readFileSync(ws.marker, 'utf8') : '');

/** A shared library whose constructor appends `who` to $MARK; `link` adds -l options (and an $ORIGIN RUNPATH). */
function lib(dir: string, out: string, who: string, link: string[] = []): void {
  const src = path.join(dir, `${who}.c`);
  fs.writeFileSync(
    src,
    `#include <stdio.h>\n#include <stdlib.h>\nint ${who.replace(/\W/g, '_')}_fn(void){return 1;}\n__attribute__((constructor)) static void init(void){const char*p=getenv("MARK");if(p){FILE*f=fopen(p,"a");if(f){fputs("${who};",f);fclose(f);}}}\n`,
  );
  const r = spawnSync(CC!, ['-shared', '-fPIC', '-o', out, src, ...link], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

/** The server: runs `body`, prints OK or the error's code and message. */
const server = (body: string): string => `try { ${body}; console.log('OK'); } catch (e) { console.log('ERR', e.code, e.message); }\n`;

describe('Node load guard: native code around process.dlopen (red team 6n)', function () {
  after(cleanupTemp);
  before(function () {
    if (!CC || !LINUX) this.skip();
  });

  it("an addon's needed library ($ORIGIN RUNPATH) is checked: changed, or new in a glibc-hwcaps folder, it is refused before its code runs", () => {
    const ws = workspace();
    const rel = path.join(ws.root, 'build', 'Release');
    fs.mkdirSync(rel, { recursive: true });
    const tmp = tempDir('mcp-gate-native-cc-');
    lib(tmp, path.join(rel, 'libhelper.so'), 'helper1');
    lib(tmp, path.join(rel, 'greet.node'), 'addon', [
      '-Wl,--no-as-needed',
      '-L',
      rel,
      '-lhelper',
      '-Wl,-rpath,$ORIGIN',
      '-Wl,--enable-new-dtags',
    ]);
    const dyn = readElfDynamic(path.join(rel, 'greet.node'));
    assert.ok(typeof dyn !== 'string' && dyn.needed.includes('libhelper.so') && dyn.runpath.includes('$ORIGIN'), JSON.stringify(dyn));
    fs.writeFileSync(path.join(ws.root, 'server.js'), server("require('./build/Release/greet.node')"));
    approve(ws);
    let r = run(ws, '');
    assert.match(ran(ws), /helper1;addon;/, r.stderr);
    assert.doesNotMatch(r.stdout, /ERR_MCP_GATE_GUARD/); // (a plain library is no addon: Node's own error after)

    fs.rmSync(ws.marker, { force: true });
    lib(tmp, path.join(rel, 'libhelper.so'), 'helper2');
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*build\/Release\/libhelper\.so.*changed since approval/, r.stdout + r.stderr);
    assert.equal(ran(ws), '');

    lib(tmp, path.join(rel, 'libhelper.so'), 'helper1');
    approve(ws);
    fs.mkdirSync(path.join(rel, 'glibc-hwcaps', 'x86-64-v2'), { recursive: true });
    lib(tmp, path.join(rel, 'glibc-hwcaps', 'x86-64-v2', 'libhelper.so'), 'hwcaps');
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*glibc-hwcaps\/x86-64-v2\/libhelper\.so.*not in what was approved/, r.stdout);
    assert.equal(ran(ws), '');
  });

  it('a workspace file that is no readable ELF (truncated, or text) loaded as an addon is refused, naming the file and why', () => {
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    lib(tmp, path.join(tmp, 'whole.so'), 'whole');
    const whole = fs.readFileSync(path.join(tmp, 'whole.so'));
    writeFiles(ws.root, { 'cut.node': whole.subarray(0, 40), 'text.node': 'not a library\n' });
    fs.writeFileSync(path.join(ws.root, 'server.js'), server("require('./cut.node')") + server("require('./text.node')"));
    approve(ws);
    const r = run(ws, '');
    const lines = r.stdout.trim().split('\n');
    assert.match(
      lines[0],
      /ERR_MCP_GATE_GUARD .*cut\.node.*cannot read it as an ELF shared library: its ELF header is truncated/,
      r.stdout,
    );
    assert.match(lines[1], /ERR_MCP_GATE_GUARD .*text\.node.*cannot read it as an ELF shared library: it is not an ELF file/, r.stdout);
    assert.equal(ran(ws), '');
  });

  it('crypto.setEngine of a changed library in the workspace is refused before its constructor runs', () => {
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'engines'));
    lib(tmp, path.join(ws.root, 'engines', 'hsm.so'), 'engine1');
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      server("require('node:crypto').setEngine(require('node:path').join(__dirname, 'engines', 'hsm.so'))"),
    );
    approve(ws);
    let r = run(ws, '');
    assert.doesNotMatch(r.stdout, /ERR_MCP_GATE_GUARD/);
    if (ran(ws) === '') return; // this Node's OpenSSL has no engines: nothing is loaded either way
    assert.match(ran(ws), /^(engine1;)+$/); // (OpenSSL may open it more than once)
    fs.rmSync(ws.marker);
    lib(tmp, path.join(ws.root, 'engines', 'hsm.so'), 'engine2');
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*engines\/hsm\.so.*changed since approval/, r.stdout);
    assert.equal(ran(ws), '');
  });

  it('node:sqlite loadExtension of a changed library is refused, also when named without its .so (SQLite appends it)', function () {
    const has = spawnSync(process.execPath, ['-e', "process.exit(process.getBuiltinModule?.('node:sqlite') ? 0 : 1)"]).status === 0;
    if (!has) this.skip();
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'ext'));
    lib(tmp, path.join(ws.root, 'ext', 'greet.so'), 'ext1');
    const open = "const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(':memory:', { allowExtension: true });";
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      server(`${open} db.loadExtension(require('node:path').join(__dirname, 'ext', 'greet'))`),
    );
    approve(ws);
    let r = run(ws, '');
    assert.doesNotMatch(r.stdout, /ERR_MCP_GATE_GUARD/);
    assert.equal(ran(ws), 'ext1;', r.stdout + r.stderr); // (no sqlite3_extension_init in it: SQLite's error after)
    fs.rmSync(ws.marker);
    lib(tmp, path.join(tmp, 'ext2.so'), 'ext2');
    lib(tmp, path.join(tmp, 'ext1.so'), 'ext1');
    fs.copyFileSync(path.join(tmp, 'ext2.so'), path.join(ws.root, 'ext', 'greet.so'));
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*ext\/greet\.so.*changed since approval/, r.stdout);
    assert.equal(ran(ws), '');
    // The same through import (ESM) and process.getBuiltinModule.
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      `import('./load.mjs').then(() => console.log('OK'), (e) => console.log('ERR', e.code, e.message));\n`,
    );
    fs.writeFileSync(
      path.join(ws.root, 'load.mjs'),
      "import { DatabaseSync } from 'node:sqlite';\nnew DatabaseSync(':memory:', { allowExtension: true }).loadExtension(new URL('./ext/greet.so', import.meta.url).pathname);\n",
    );
    fs.copyFileSync(path.join(tmp, 'ext1.so'), path.join(ws.root, 'ext', 'greet.so'));
    approve(ws);
    fs.copyFileSync(path.join(tmp, 'ext2.so'), path.join(ws.root, 'ext', 'greet.so'));
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*ext\/greet\.so.*changed since approval/, r.stdout + r.stderr);
    assert.equal(ran(ws), '');
  });

  it("Node's compile cache stays off: enableCompileCache reports DISABLED, and children get NODE_DISABLE_COMPILE_CACHE=1", function () {
    const ws = workspace();
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      `const m = require('node:module');
const r = m.enableCompileCache ? m.enableCompileCache(require('node:path').join(__dirname, '.cache')) : { status: 'none' };
const child = require('node:child_process').execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.env.NODE_DISABLE_COMPILE_CACHE))'], { env: { NODE_COMPILE_CACHE: __dirname } }).toString();
console.log(JSON.stringify({ status: r.status, dir: m.getCompileCacheDir ? m.getCompileCacheDir() ?? null : null, child, cache: require('node:fs').existsSync(require('node:path').join(__dirname, '.cache')) }));
`,
    );
    approve(ws);
    const r = run(ws, '');
    const o = JSON.parse(r.stdout) as { status: unknown; dir: unknown; child: string; cache: boolean };
    assert.deepEqual(
      o,
      {
        status: typeof (require('node:module') as { enableCompileCache?: unknown }).enableCompileCache === 'function' ? 3 : 'none',
        dir: null,
        child: '1',
        cache: false,
      },
      r.stderr,
    );
  });

  it('a program the repository ships (ELF) is walked like an addon when started: a changed library it needs (RUNPATH, LD_LIBRARY_PATH, LD_PRELOAD) is refused (red team 7n, case 03)', () => {
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'bin'));
    fs.mkdirSync(path.join(ws.root, 'lib'));
    lib(tmp, path.join(ws.root, 'lib', 'libhelper.so'), 'helper1');
    lib(tmp, path.join(ws.root, 'lib', 'pre.so'), 'pre1');
    const main = path.join(tmp, 'main.c');
    fs.writeFileSync(main, 'int main(void){return 0;}\n');
    const cc = (out: string, extra: string[]): void => {
      const r = spawnSync(CC!, ['-o', out, main, '-Wl,--no-as-needed', '-L', path.join(ws.root, 'lib'), '-lhelper', ...extra], {
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
    };
    cc(path.join(ws.root, 'bin', 'tool'), ['-Wl,-rpath,$ORIGIN/../lib', '-Wl,--enable-new-dtags']);
    cc(path.join(ws.root, 'bin', 'bare'), []);
    const start = (prog: string, env: string): string =>
      server(
        `require('node:child_process').execFileSync(require('node:path').join(__dirname, 'bin', '${prog}'), [], { env: { PATH: process.env.PATH, MARK: process.env.MARK, ${env} } })`,
      );
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      start('tool', '') +
        start('bare', "LD_LIBRARY_PATH: require('node:path').join(__dirname, 'lib')") +
        start(
          'bare',
          "LD_LIBRARY_PATH: require('node:path').join(__dirname, 'lib'), LD_PRELOAD: require('node:path').join(__dirname, 'lib', 'pre.so')",
        ),
    );
    approve(ws);
    let r = run(ws, '');
    assert.equal(r.stdout, 'OK\nOK\nOK\n', r.stderr);
    assert.match(ran(ws), /^helper1;helper1;(pre1;helper1;|helper1;pre1;)$/);
    fs.rmSync(ws.marker);
    lib(tmp, path.join(ws.root, 'lib', 'libhelper.so'), 'helper2');
    r = run(ws, '');
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 3, r.stdout);
    for (const l of lines) assert.match(l, /ERR_MCP_GATE_GUARD .*lib\/libhelper\.so.*changed since approval/);
    assert.equal(ran(ws), '');
    lib(tmp, path.join(ws.root, 'lib', 'libhelper.so'), 'helper1');
    approve(ws);
    lib(tmp, path.join(ws.root, 'lib', 'pre.so'), 'pre2');
    r = run(ws, '');
    // (a native program from the workspace may dlopen() any library beside it: each start is refused while one is not as approved)
    for (const l of r.stdout.trim().split('\n'))
      assert.match(l, /^ERR ERR_MCP_GATE_GUARD .*lib\/pre\.so.*changed since approval/, r.stdout);
    assert.doesNotMatch(ran(ws), /pre2/);
  });

  it('an addon from the workspace that can dlopen() a plugin itself: every native library of the workspace and scratch folders must be as approved (red team 7n, case 04)', () => {
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'build', 'plugins'), { recursive: true });
    lib(tmp, path.join(ws.root, 'build', 'greet.node'), 'addon');
    lib(tmp, path.join(ws.root, 'build', 'plugins', 'fmt.so'), 'fmt1');
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      server("try { require('./build/greet.node') } catch (e) { if (e.code === 'ERR_MCP_GATE_GUARD') throw e }"),
    );
    approve(ws);
    let r = run(ws, '');
    assert.equal(r.stdout, 'OK\n', r.stderr);
    lib(tmp, path.join(ws.root, 'build', 'plugins', 'fmt.so'), 'fmt2');
    fs.rmSync(ws.marker);
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*build\/plugins\/fmt\.so.*changed since approval/, r.stdout);
    assert.equal(ran(ws), '');
    approve(ws);
    lib(tmp, path.join(ws.scratch, 'libnew.so.1'), 'new1');
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*libnew\.so\.1.*written outside the workspace/, r.stdout);
    fs.rmSync(path.join(ws.scratch, 'libnew.so.1'));
    fs.writeFileSync(path.join(ws.root, 'notes.txt'), 'an edit that is no library\n');
    r = run(ws, '');
    assert.equal(r.stdout, 'OK\n', r.stderr);
  });

  it('a file over 2 GiB is hashed in chunks, not skipped: a changed addon, or a changed script bash runs, padded past 4 GiB is refused (red team 8n, 01-02)', function () {
    this.timeout(120_000);
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'plugins'));
    lib(tmp, path.join(ws.root, 'plugins', 'greet.node'), 'addon1');
    writeFiles(ws.root, { 'tools/fmt.sh': 'echo fmt1\n' });
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      server("try { require('./plugins/greet.node') } catch (e) { if (e.code === 'ERR_MCP_GATE_GUARD') throw e }") +
        server("process.stdout.write(require('node:child_process').execFileSync('bash', ['tools/fmt.sh'], { encoding: 'utf8' }))"),
    );
    approve(ws);
    let r = run(ws, '');
    assert.equal(r.stdout, 'OK\nfmt1\nOK\n', r.stderr);
    fs.rmSync(ws.marker, { force: true });
    const GIB2 = 4 * 1024 * 1024 * 1024 + 4096; // past 2 GiB and past Node 20's largest Buffer (4 GiB)
    lib(tmp, path.join(ws.root, 'plugins', 'greet.node'), 'addon2');
    fs.truncateSync(path.join(ws.root, 'plugins', 'greet.node'), GIB2); // sparse: trailing zeros
    fs.writeFileSync(path.join(ws.root, 'tools', 'fmt.sh'), 'echo PWNED\nexit 0\n');
    fs.truncateSync(path.join(ws.root, 'tools', 'fmt.sh'), 2 * 1024 * 1024 * 1024 + 4096);
    r = run(ws, '', 100_000); // (6 GiB to hash)
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0], /ERR_MCP_GATE_GUARD .*plugins\/greet\.node.*changed since approval/, r.stdout + r.stderr);
    assert.match(lines[1], /ERR_MCP_GATE_GUARD .*tools\/fmt\.sh.*changed since approval/, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /PWNED/);
    assert.equal(ran(ws), '');
    fs.rmSync(path.join(ws.root, 'plugins', 'greet.node'));
    fs.rmSync(path.join(ws.root, 'tools', 'fmt.sh'));
  });

  it('a file that exists but cannot be read (a FIFO named like an addon) is refused, naming why, instead of let through', () => {
    const ws = workspace();
    assert.equal(spawnSync('mkfifo', [path.join(ws.root, 'pipe.node')]).status, 0);
    fs.writeFileSync(path.join(ws.root, 'server.js'), server("require('./pipe.node')"));
    approve(ws);
    const r = run(ws, '');
    assert.match(
      r.stdout,
      /ERR_MCP_GATE_GUARD .*pipe\.node.*exists but cannot be read to be checked \(not a regular file\)/,
      r.stdout + r.stderr,
    );
  });

  it('a program given workspace native code by an argument (sqlite3 -cmd ".load ext/greet", .so appended; --x=path) has it checked (red team 8n, 03)', () => {
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'ext'));
    lib(tmp, path.join(ws.root, 'ext', 'greet.so'), 'ext1');
    const spawn = (args: string[]): string => server(`require('node:child_process').execFileSync('/bin/true', ${JSON.stringify(args)})`);
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      spawn(['-cmd', '.load ext/greet', 'data/app.db']) + spawn(['--provider-path=ext/greet.so']) + spawn(['README.md']),
    );
    approve(ws);
    let r = run(ws, '');
    assert.equal(r.stdout, 'OK\nOK\nOK\n', r.stderr);
    lib(tmp, path.join(ws.root, 'ext', 'greet.so'), 'ext2');
    r = run(ws, '');
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0], /ERR_MCP_GATE_GUARD .*ext\/greet\.so.*changed since approval/, r.stdout);
    assert.match(lines[1], /ERR_MCP_GATE_GUARD .*ext\/greet\.so.*changed since approval/, r.stdout);
    assert.equal(lines[2], 'OK'); // data, not native code
  });

  it('a library over 256 MiB recorded unhashed is as approved while its size, time and inode are; changed (or unrecorded) it is refused by the rule, not as a load (red team 8n, 22)', () => {
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'build'));
    fs.mkdirSync(path.join(ws.root, '.venv', 'torch', 'lib'), { recursive: true });
    lib(tmp, path.join(ws.root, 'build', 'greet.node'), 'addon');
    const big = path.join(ws.root, '.venv', 'torch', 'lib', 'libtorch_cpu.so');
    lib(tmp, big, 'torch');
    fs.truncateSync(big, 300 * 1024 * 1024); // sparse
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      server("try { require('./build/greet.node') } catch (e) { if (e.code === 'ERR_MCP_GATE_GUARD') throw e }"),
    );
    approve(ws);
    assert.equal(JSON.parse(fs.readFileSync(ws.manifest, 'utf8')).files['.venv/torch/lib/libtorch_cpu.so'], 'too-large');
    let r = run(ws, '');
    assert.equal(r.stdout, 'OK\n', r.stderr);
    fs.utimesSync(big, new Date(), new Date(Date.now() + 5000));
    r = run(ws, '');
    assert.match(
      r.stdout,
      /ERR_MCP_GATE_GUARD mcp-gate-guard: refused dlopen: native code from a writable place was loaded .* must be as approved, and \S*libtorch_cpu\.so \(\.venv\/torch\/lib\/libtorch_cpu\.so\): it changed since approval \(its size, time or inode\)/,
      r.stdout,
    );
    const line = JSON.parse(fs.readFileSync(ws.report, 'utf8').trim().split('\n')[0]) as { rule?: string; why: string };
    assert.equal(line.why, 'changed');
    assert.match(line.rule ?? '', /may dlopen\(\) any library/);
    const m = JSON.parse(fs.readFileSync(ws.manifest, 'utf8'));
    approve(ws);
    delete m.large;
    fs.writeFileSync(ws.manifest, JSON.stringify(m));
    r = run(ws, '');
    assert.match(r.stdout, /ERR_MCP_GATE_GUARD .*libtorch_cpu\.so.*changed since approval/, r.stdout);
  });

  it("the walk for native libraries looks through more than 200,000 entries of a scratch folder (a server's own data) without refusing (red team 8n, 23)", function () {
    this.timeout(120_000);
    const ws = workspace();
    const tmp = tempDir('mcp-gate-native-cc-');
    fs.mkdirSync(path.join(ws.root, 'build'));
    lib(tmp, path.join(ws.root, 'build', 'greet.node'), 'addon');
    const cache = path.join(ws.scratch, 'cache');
    fs.mkdirSync(cache);
    for (let d = 0; d < 21; d++) {
      const sub = path.join(cache, String(d));
      fs.mkdirSync(sub);
      for (let i = 0; i < 10_000; i++) fs.closeSync(fs.openSync(path.join(sub, `${i}.html`), 'w'));
    }
    fs.writeFileSync(
      path.join(ws.root, 'server.js'),
      server("try { require('./build/greet.node') } catch (e) { if (e.code === 'ERR_MCP_GATE_GUARD') throw e }"),
    );
    approve(ws);
    const r = run(ws, '');
    assert.equal(r.stdout, 'OK\n', r.stdout + r.stderr);
    fs.rmSync(cache, { recursive: true, force: true });
  });

  it('DT_AUXILIARY and DT_FILTER objects are read as needed ones (red team 7n, case 05)', () => {
    const tmp = tempDir('mcp-gate-native-cc-');
    lib(tmp, path.join(tmp, 'libaux.so'), 'aux');
    lib(tmp, path.join(tmp, 'a.so'), 'a', ['-Wl,-f,libaux.so', '-Wl,-rpath,$ORIGIN']);
    lib(tmp, path.join(tmp, 'f.so'), 'f', ['-Wl,-F,libaux.so']);
    const a = readElfDynamic(path.join(tmp, 'a.so'));
    assert.ok(typeof a !== 'string' && a.needed.includes('libaux.so'), JSON.stringify(a));
    const f = readElfDynamic(path.join(tmp, 'f.so'));
    assert.ok(typeof f !== 'string' && f.needed.includes('libaux.so'), JSON.stringify(f));
  });

  it('the ELF reader: ELF32 little-endian dynamic sections are read; broken ones give a reason, never a throw', () => {
    const dir = tempDir('mcp-gate-native-elf-');
    // A minimal ELF32 LE shared object: header, PT_LOAD over the whole file at address 0x1000, PT_DYNAMIC.
    const strtab = Buffer.from('\0libz.so.1\0$ORIGIN/../lib\0');
    const dynOff = 52 + 2 * 32,
      strOff = dynOff + 5 * 8,
      size = strOff + strtab.length;
    const b = Buffer.alloc(size);
    b.write('\x7fELF', 0, 'latin1');
    b[4] = 1;
    b[5] = 1;
    b[6] = 1;
    b.writeUInt16LE(3, 16);
    b.writeUInt16LE(3, 18);
    b.writeUInt32LE(1, 20);
    b.writeUInt32LE(52, 28);
    b.writeUInt16LE(52, 40);
    b.writeUInt16LE(32, 42);
    b.writeUInt16LE(2, 44);
    const ph = (i: number, type: number, off: number, vaddr: number, filesz: number): void => {
      const o = 52 + i * 32;
      b.writeUInt32LE(type, o);
      b.writeUInt32LE(off, o + 4);
      b.writeUInt32LE(vaddr, o + 8);
      b.writeUInt32LE(filesz, o + 16);
    };
    ph(0, 1, 0, 0x1000, size);
    ph(1, 2, dynOff, 0x1000 + dynOff, 5 * 8);
    [
      [1, 1],
      [15, 11],
      [5, 0x1000 + strOff],
      [10, strtab.length],
      [0, 0],
    ].forEach(([tag, val], i) => {
      b.writeUInt32LE(tag, dynOff + i * 8);
      b.writeUInt32LE(val, dynOff + i * 8 + 4);
    });
    strtab.copy(b, strOff);
    fs.writeFileSync(path.join(dir, 'a.so'), b);
    assert.deepEqual(readElfDynamic(path.join(dir, 'a.so')), { needed: ['libz.so.1'], rpath: ['$ORIGIN/../lib'], runpath: [] });
    for (let cut = 0; cut < size; cut += 7) {
      fs.writeFileSync(path.join(dir, 'c.so'), b.subarray(0, cut));
      assert.equal(typeof readElfDynamic(path.join(dir, 'c.so')), 'string', `cut at ${cut}`);
    }
    const bad = Buffer.from(b);
    bad.writeUInt32LE(0xfffffff0, dynOff + 2 * 8 + 4); // DT_STRTAB outside every segment
    fs.writeFileSync(path.join(dir, 'd.so'), bad);
    assert.match(String(readElfDynamic(path.join(dir, 'd.so'))), /string table/);
    const big = Buffer.from(b);
    big[5] = 2;
    fs.writeFileSync(path.join(dir, 'e.so'), big);
    assert.match(String(readElfDynamic(path.join(dir, 'e.so'))), /big-endian/);
  });
});
