// The load guards and files that have no path (red team 13): a memfd or an unlinked copy reached through
// /proc/self/fd/N, whose real path names no file (Node's realpath fails with ENOENT; Python's gives "/memfd:x
// (deleted)"), and `node --run`, whose package.json script Node runs through /bin/sh before any preload. A changed
// file loaded so must be refused like a changed file in a scratch folder; the approved bytes loaded so are not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, ROOT, tempDir, writeFiles } from '../helpers';

const NODE_GUARD = path.join(ROOT, 'dist', 'guard', 'node-guard.cjs');
const PY_GUARD = path.join(ROOT, 'src', 'guard', 'python', 'mcp_gate_guard.py');

interface Ws {
  root: string;
  scratch: string;
  manifest: string;
  report: string;
}

/** A workspace with `files`, approved as it is (every file's sha256), with a scratch folder of its own. */
function approved(files: Record<string, string | Buffer>): Ws {
  const root = fs.realpathSync(tempDir('mcp-gate-anon-ws-'));
  const out = fs.realpathSync(tempDir('mcp-gate-anon-out-'));
  const scratch = fs.realpathSync(tempDir('mcp-gate-anon-scratch-'));
  writeFiles(root, files as Record<string, string>);
  const sums: Record<string, string> = {};
  for (const rel of Object.keys(files))
    sums[rel] = createHash('sha256')
      .update(fs.readFileSync(path.join(root, rel)))
      .digest('hex');
  const ws = { root, scratch, manifest: path.join(out, 'manifest.json'), report: path.join(out, 'report.jsonl') };
  fs.writeFileSync(ws.manifest, JSON.stringify({ version: 1, root, files: sums, scratch: [scratch], report: ws.report }));
  return ws;
}

function node(ws: Ws, args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest, SCRATCH: ws.scratch };
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, ['--require', NODE_GUARD, ...args], { cwd: ws.root, env, encoding: 'utf8', timeout: 60_000 });
}

function python(ws: Ws, args: string[]) {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws.scratch, LANG: 'C.UTF-8', MCP_GATE_GUARD: ws.manifest };
  return spawnSync('/usr/bin/python3', ['-S', PY_GUARD, ...args], { cwd: ws.root, env, encoding: 'utf8', timeout: 30_000 });
}

const reported = (ws: Ws): Array<Record<string, unknown>> =>
  fs.existsSync(ws.report)
    ? fs
        .readFileSync(ws.report, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

describe('load guards, red team 13: files with no path (a memfd, an unlinked copy), node --run, Node internals, site and gettext', function () {
  this.timeout(120_000);
  before(() => {
    const b = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build-guard.mjs')], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(b.status, 0, b.stderr);
  });
  after(cleanupTemp);

  it('Node: process.dlopen of /proc/self/fd/N of an unlinked copy of a changed addon is refused; of the approved bytes it is not', function () {
    const [lib, other] = ['libutil.so.1', 'libdl.so.2'].map((n) => path.join('/usr/lib/x86_64-linux-gnu', n));
    if (!fs.existsSync(lib) || !fs.existsSync(other)) this.skip();
    const ws = approved({
      'plugins/x.node': fs.readFileSync(lib),
      'server.js':
        "const fs = require('fs'), path = require('path');\n" +
        "const copy = path.join(process.env.SCRATCH, 'cache.node');\n" +
        "fs.copyFileSync('plugins/x.node', copy);\nconst fd = fs.openSync(copy, 'r');\nfs.unlinkSync(copy);\n" +
        "try { process.dlopen({ exports: {} }, '/proc/self/fd/' + fd); console.log('loaded'); } catch (e) { console.log('code', e.code || 'dlopen', String(e.message).split('\\n')[0]); }\n",
    });
    let r = node(ws, ['server.js']);
    // the approved bytes pass the guard (a library that is no addon: Node's dlopen then says so)
    assert.doesNotMatch(r.stdout, /ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    assert.match(r.stdout, /code ERR_DLOPEN_FAILED/, r.stdout + r.stderr);
    fs.writeFileSync(path.join(ws.root, 'plugins/x.node'), fs.readFileSync(other));
    r = node(ws, ['server.js']);
    assert.match(r.stdout, /code ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    assert.match(r.stderr, /cache\.node \(deleted\)/, r.stderr);
    assert.equal(reported(ws).at(-1)?.why, 'scratch');
  });

  it('Node: a guarded process starts `node --run` only while the workspace is as approved (Node runs the script before any preload)', () => {
    const ws = approved({
      'README.md': '# approved\n',
      'package.json': JSON.stringify({ scripts: { gen: 'echo approved-script' } }),
      'server.js':
        "const cp = require('child_process');\n" +
        "try { const r = cp.spawnSync(process.execPath, ['--run', 'gen'], { encoding: 'utf8' }); console.log('started', r.status); } catch (e) { console.log('code', e.code); }\n",
    });
    let r = node(ws, ['server.js']);
    assert.match(r.stdout, /started/, r.stdout + r.stderr);
    fs.writeFileSync(path.join(ws.root, 'package.json'), JSON.stringify({ scripts: { gen: 'echo CHANGED-RAN' } }));
    r = node(ws, ['server.js']);
    assert.match(r.stdout, /code ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /CHANGED-RAN/);
  });

  it("Node: a server's require of one of Node's internal modules (exposed for the guard's own use) is refused; the guard still works", () => {
    const ws = approved({
      'server.js':
        "try { const vm = require(['internal', 'vm'].join('/')); console.log('loaded', typeof vm.runScriptInThisContext); } catch (e) { console.log('code', e.code); }\n",
    });
    const env: Record<string, string | undefined> = { ...process.env, MCP_GATE_GUARD: ws.manifest };
    delete env.NODE_OPTIONS;
    const r = spawnSync(process.execPath, ['--expose-internals', '--require', NODE_GUARD, 'server.js'], {
      cwd: ws.root,
      env,
      encoding: 'utf8',
    });
    assert.match(r.stdout, /code ERR_MCP_GATE_GUARD/, r.stdout + r.stderr);
    assert.match(r.stderr, /one of Node's internal modules/, r.stderr);
    // a rule approving cannot satisfy: the report carries it, so MCP Gate says what to fix instead of "approve it"
    const line = reported(ws).at(-1);
    assert.equal(line?.why, 'sink');
    assert.match(String(line?.rule), /approving again does not change this/);
  });

  it("Python: code the server compiled under the name <frozen site> is not site's: its exec of text after taking in a changed file is refused", () => {
    const ws = approved({
      'data/rules.txt': "result = 'approved rules'\n",
      'server.py':
        "ns = {}\nexec(compile('def apply(text, g):\\n    exec(text + chr(10), g)\\n    return g.get(\"result\")\\n', '<frozen site>', 'exec'), ns)\n" +
        "print('rules:', ns['apply'](open('data/rules.txt').read(), {}))\n",
    });
    let r = python(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /rules: approved rules/);
    fs.writeFileSync(path.join(ws.root, 'data/rules.txt'), "result = 'CHANGED' + '-RAN'\n");
    r = python(ws, ['server.py']);
    assert.doesNotMatch(r.stdout, /CHANGED-RAN/, r.stdout);
    assert.match(r.stderr, /mcp-gate-guard: refused/, r.stderr);
  });

  it("Python: gettext's plural rule of approved translations still compiles after the server read a data file the person edited (no false refusal)", () => {
    const mo = spawnSync(
      '/usr/bin/python3',
      [
        '-c',
        [
          'import struct, sys',
          "msgs = {b'': b'Content-Type: text/plain; charset=UTF-8\\nPlural-Forms: nplurals=2; plural=(n != 1);\\n', b'%d note\\x00%d notes': b'%d Notiz\\x00%d Notizen'}",
          "keys = sorted(msgs); ids = b''; strs = b''; offs = []",
          'for k in keys:\n    offs.append((len(ids), len(k), len(strs), len(msgs[k]))); ids += k + bytes(1); strs += msgs[k] + bytes(1)',
          'n = len(keys); ko = 28; vo = ko + n * 8; io = vo + n * 8; so = io + len(ids)',
          "out = struct.pack('Iiiiiii', 0x950412de, 0, n, ko, vo, 0, 0)",
          "for o, l, _, _ in offs: out += struct.pack('ii', l, io + o)",
          "for _, _, o, l in offs: out += struct.pack('ii', l, so + o)",
          'sys.stdout.buffer.write(out + ids + strs)',
        ].join('\n'),
      ],
      { encoding: 'buffer' },
    );
    assert.equal(mo.status, 0, String(mo.stderr));
    const ws = approved({
      'locale/de/LC_MESSAGES/app.mo': mo.stdout,
      'data/notes.txt': 'one\n',
      'server.py':
        "import gettext\nnotes = open('data/notes.txt').read().splitlines()\n" +
        "t = gettext.translation('app', localedir='locale', languages=['de'])\nprint(t.ngettext('%d note', '%d notes', len(notes)) % len(notes))\n",
    });
    fs.writeFileSync(path.join(ws.root, 'data/notes.txt'), 'one\ntwo\nthree\n');
    const r = python(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /3 Notizen/);
  });

  it("Python: text shaped like gettext's plural template but holding a call, `**` or a name is still refused after taking in", () => {
    const ws = approved({
      'data/notes.txt': 'one\n',
      'server.py':
        'import sys\nopen("data/notes.txt").read()\n' +
        "t = 'if True:\\n            def func(n):\\n                if not isinstance(n, int):\\n                    n = _as_int(n)\\n                return int(%s)\\n            '\n" +
        "for e in ['(n != 1)', '__import__(\"os\").getpid()', 'n**9**9', '(lambda: 1)()', 'open(n)']:\n" +
        '    try:\n        exec(t % e, {"_as_int": int})\n        print("ran", e)\n    except Exception as x:\n        print("refused", e, type(x).__name__)\n',
    });
    fs.writeFileSync(path.join(ws.root, 'data/notes.txt'), 'edited\n');
    const r = python(ws, ['server.py']);
    assert.match(r.stdout, /^ran \(n != 1\)$/m, r.stdout + r.stderr);
    for (const e of ['__import__', 'n\\*\\*9', 'lambda', 'open\\(n\\)'])
      assert.match(r.stdout, new RegExp(`^refused [^\\n]*${e}[^\\n]* McpGateGuardRefused$`, 'm'), r.stdout + r.stderr);
  });

  it('Python: bytecode unmarshalled by SourcelessFileLoader from a memfd is checked as a scratch file: a changed plugin is refused, the approved one runs', function () {
    if (spawnSync('/usr/bin/python3', ['-c', 'import os; os.memfd_create']).status !== 0) this.skip();
    const compile = (text: string): Buffer => {
      const r = spawnSync(
        '/usr/bin/python3',
        [
          '-c',
          'import sys, importlib._bootstrap_external as e; sys.stdout.buffer.write(e._code_to_timestamp_pyc(compile(sys.argv[1], "p", "exec")))',
          text,
        ],
        { encoding: 'buffer' },
      );
      assert.equal(r.status, 0, String(r.stderr));
      return r.stdout;
    };
    const ws = approved({
      'plugins/p.bin': compile("print('APPROVED-PLUGIN')\n"),
      'server.py':
        'import os, importlib.machinery as m, importlib.util as u\n' +
        "data = open('plugins/p.bin', 'rb').read()\nfd = os.memfd_create('p.pyc')\nos.write(fd, data)\n" +
        "name = '/proc/self/fd/%d' % fd\nloader = m.SourcelessFileLoader('p', name)\n" +
        "spec = u.spec_from_loader('p', loader)\nmod = u.module_from_spec(spec)\nloader.exec_module(mod)\n",
    });
    let r = python(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /APPROVED-PLUGIN/);
    fs.writeFileSync(path.join(ws.root, 'plugins/p.bin'), compile("print('CHANGED-RAN')\n"));
    r = python(ws, ['server.py']);
    assert.notEqual(r.status, 0);
    assert.doesNotMatch(r.stdout, /CHANGED-RAN/);
    assert.match(r.stderr, /mcp-gate-guard: refused to load \/memfd:p\.pyc \(deleted\)/, r.stderr);
  });

  it('Python: ctypes.CDLL of a memfd filled from a changed workspace file is refused before the loader maps it', function () {
    const [lib, other] = ['libutil.so.1', 'libdl.so.2'].map((n) => path.join('/usr/lib/x86_64-linux-gnu', n));
    if (
      spawnSync('/usr/bin/python3', ['-c', 'import os, ctypes; os.memfd_create']).status !== 0 ||
      !fs.existsSync(lib) ||
      !fs.existsSync(other)
    )
      this.skip();
    const ws = approved({
      'plugins/x.bin': fs.readFileSync(lib),
      'server.py':
        'import os, ctypes\n' +
        "fd = os.memfd_create('x.so')\nos.write(fd, open('plugins/x.bin', 'rb').read())\n" +
        "ctypes.CDLL('/proc/self/fd/%d' % fd)\nprint('LOADED')\n",
    });
    let r = python(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /LOADED/);
    fs.writeFileSync(path.join(ws.root, 'plugins/x.bin'), fs.readFileSync(other));
    r = python(ws, ['server.py']);
    assert.doesNotMatch(r.stdout, /LOADED/);
    assert.match(r.stderr, /mcp-gate-guard: .*\/memfd:x\.so \(deleted\)/, r.stderr);
  });
});
