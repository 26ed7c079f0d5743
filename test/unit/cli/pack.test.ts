// The CLI as users install it (README "Install"): `npm run pack:cli` makes a tarball without dependencies,
// `npm i -g` of it (into a fresh prefix, offline) puts `mcp-gate` on PATH, and `mcp-gate install claude` run from
// that install writes an entry naming the installed files, not this checkout, and the agent's entry keeps working.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir, world } from '../helpers';

describe('the CLI package (npm i -g)', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('installs offline with no dependency, runs as mcp-gate from PATH, and install claude names the installed copy', () => {
    const out = tempDir('mcp-gate-tgz-');
    const p = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'pack-cli.mjs'), '--no-build', '--out', out], { encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    const tgz = fs.readdirSync(out).find((f) => f.endsWith('.tgz'));
    assert.ok(tgz, p.stdout);
    const prefix = tempDir('mcp-gate-prefix-');
    const i = spawnSync('npm', ['install', '-g', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, path.join(out, tgz!)], {
      encoding: 'utf8',
    });
    assert.equal(i.status, 0, i.stderr);
    const bin = path.join(prefix, 'bin', 'mcp-gate');
    const w = world({});
    const env = { ...w.env, PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}`, MCP_GATE_STORE: w.store } as Record<string, string>;
    const help = spawnSync('mcp-gate', ['--help'], { env, encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /usage: mcp-gate <command>/);
    const inst = spawnSync(bin, ['install', 'claude', '--yes', '--project', w.project], { env, encoding: 'utf8' });
    assert.equal(inst.status, 0, inst.stderr);
    const entry = JSON.parse(fs.readFileSync(path.join(w.home, '.claude.json'), 'utf8')).mcpServers['mcp-gate'];
    assert.equal(
      entry.args[0],
      fs.realpathSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate', 'dist', 'cli.js')),
      'the installed file, where it is',
    );
    assert.ok(!entry.args[0].startsWith(ROOT + path.sep));
    assert.deepEqual(fs.readdirSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate')).sort(), [
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'dist',
      'package.json',
    ]);
    // the parts the CLI loads when first needed are installed beside it: a JavaScript server's files are read (the
    // parser), and its closure shown
    assert.deepEqual(fs.readdirSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate', 'dist')).sort(), [
      'cli.js',
      'guard',
      'lock-worker.js',
      'netshim',
      'parser.js',
      'undici.js',
    ]);
    assert.deepEqual(fs.readdirSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate', 'dist', 'guard')).sort(), [
      'mcp_gate_guard.py',
      'mcp_gate_guard_parts',
      'node-guard.cjs',
    ]);
    // the Python guard's parts, each file its entry loads (src/guard/python/mcp_gate_guard.py, PARTS)
    assert.deepEqual(
      fs.readdirSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate', 'dist', 'guard', 'mcp_gate_guard_parts')).sort(),
      [
        'state',
        'rule',
        'loaders',
        'reads',
        'places',
        'gitfiles',
        'compiles',
        'engines',
        'programs',
        'native',
        'children',
        'pickles',
        'audit',
        'installing',
        'cmdline',
      ]
        .map((p) => `${p}.py`)
        .concat('command_lines.json') // (the table of starts after taking in, shared with the Node guard)
        .sort(),
    );
    assert.deepEqual(fs.readdirSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate', 'dist', 'netshim')), ['net-shim.cjs']);
    fs.writeFileSync(path.join(w.project, 'server.js'), "import './lib/tool.js';\n");
    fs.mkdirSync(path.join(w.project, 'lib'));
    fs.writeFileSync(path.join(w.project, 'lib', 'tool.js'), 'export {};\n');
    fs.writeFileSync(path.join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { js: { command: 'node', args: ['server.js'] } } }));
    const get = spawnSync(bin, ['get', 'js', '--project', w.project], { env, encoding: 'utf8' });
    assert.equal(get.status, 0, get.stderr);
    assert.match(get.stdout, /lib\/tool\.js/, 'the file it imports is among the files it can load');
    // an installed copy whose parser is gone refuses (nothing read as "does not parse", nothing approved) and says what to do
    fs.writeFileSync(path.join(w.project, 'package.json'), JSON.stringify({ name: 'p', type: 'module' }));
    fs.rmSync(path.join(prefix, 'lib', 'node_modules', 'mcp-gate', 'dist', 'parser.js'));
    const broken = spawnSync(bin, ['get', 'js', '--project', w.project], { env, encoding: 'utf8' });
    assert.equal(broken.status, 1, broken.stdout);
    assert.match(
      broken.stderr,
      /MCP Gate cannot read JavaScript or TypeScript files: its parser \(parser\.js beside MCP Gate's own files\) cannot be loaded .*; install MCP Gate again/,
    );
    const approve = spawnSync(bin, ['approve', 'js', '--yes', '--project', w.project], { env, encoding: 'utf8' });
    assert.notEqual(approve.status, 0);
    assert.ok(!fs.existsSync(path.join(w.store, 'approvals.json')), 'nothing approved');
  });
});
