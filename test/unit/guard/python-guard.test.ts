// The Python load guard (src/guard/python/mcp_gate_guard.py, the entry, and its parts in mcp_gate_guard_parts/;
// contract src/guard/CONTRACT.md): for each shape a
// workspace is approved (manifest of every file's sha256), runs, still runs after README.md is edited, and is
// refused — before the changed code runs — once the file it loads changes. A control run without
// MCP_GATE_GUARD shows the changed code would have run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../helpers';
import { LOADER_EXACT, LOADER_PREFIXES } from '../../../src/trust/plan/loader-variables';
import { EVERYDAY, INIT, R } from './git-steps';

const GUARD = path.join(ROOT, 'src', 'guard', 'python', 'mcp_gate_guard.py');
const PY = '/usr/bin/python3';
const made: string[] = [];

interface Ws {
  root: string;
  scratch: string;
  out: string;
  manifest: string;
  report: string;
  marker: string;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function write(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
}

function workspace(files: (ws: Ws) => Record<string, string | Buffer>): Ws {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-pyguard-')));
  made.push(base);
  const ws: Ws = {
    root: path.join(base, 'ws'),
    scratch: path.join(base, 'scratch'),
    out: path.join(base, 'out'),
    manifest: path.join(base, 'out', 'manifest.json'),
    report: path.join(base, 'out', 'report.jsonl'),
    marker: path.join(base, 'out', 'changed-ran'),
  };
  for (const d of [ws.root, ws.scratch, ws.out]) fs.mkdirSync(d, { recursive: true });
  write(ws.root, { 'README.md': '# approved\n', ...files(ws) });
  approve(ws);
  return ws;
}

function walk(dir: string, rel = '', links?: Record<string, string>): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(dir, r, links));
    else if (e.isFile()) out.push(r);
    else if (e.isSymbolicLink() && links) links[r] = fs.readlinkSync(path.join(dir, r));
  }
  return out;
}

/** Every folder under `dir` (rel posix paths, .git's inside too, as the host's walk). */
function folders(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(r, ...folders(dir, r));
  }
  return out;
}

/** The approval: sha256 of every regular file of the workspace, the text of each symbolic link, every folder holding no
 * file or link (`folders`) and when the measure began (`since`, ms: what the host writes; a file changed later shows it
 * in its ctime). */
function approve(ws: Ws): void {
  const since = Date.now();
  const files: Record<string, string> = {};
  const links: Record<string, string> = {};
  for (const rel of walk(ws.root, '', links))
    files[rel] = createHash('sha256')
      .update(fs.readFileSync(path.join(ws.root, rel)))
      .digest('hex');
  const holding = new Set<string>();
  for (const k of [...Object.keys(files), ...Object.keys(links)])
    for (let i = k.indexOf('/'); i > 0; i = k.indexOf('/', i + 1)) holding.add(k.slice(0, i));
  const empty = folders(ws.root)
    .filter((d) => !holding.has(d))
    .sort();
  fs.writeFileSync(
    ws.manifest,
    JSON.stringify({
      version: 1,
      root: ws.root,
      files,
      links,
      folders: empty,
      since,
      scratch: [ws.scratch],
      report: ws.report,
      server: 'test',
    }),
  );
}

/** The manifest without "folders", as an older approval wrote it. */
function withoutFolders(ws: Ws): void {
  const m = JSON.parse(fs.readFileSync(ws.manifest, 'utf8')) as Record<string, unknown>;
  delete m.folders;
  fs.writeFileSync(ws.manifest, JSON.stringify(m));
}

function run(ws: Ws, args: string[], guarded = true, more: Record<string, string> = {}): Run {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws.out, LANG: 'C.UTF-8', ...more };
  if (guarded) env.MCP_GATE_GUARD = ws.manifest;
  const r = spawnSync(PY, ['-S', GUARD, ...args], { cwd: ws.root, env, encoding: 'utf8', timeout: 20000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function report(ws: Ws): Array<Record<string, unknown>> {
  if (!fs.existsSync(ws.report)) return [];
  return fs
    .readFileSync(ws.report, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Python code that leaves the marker file: it must never run under the guard once changed. */
function evil(ws: Ws): string {
  return `import os as _os\nopen(${JSON.stringify(ws.marker)}, 'w').write('ran')\nprint('CHANGED')\n`;
}

function assertRuns(ws: Ws, args: string[], what: string): void {
  const r = run(ws, args);
  assert.equal(r.status, 0, `${what}: exit ${r.status}\n${r.stderr}`);
  assert.match(r.stdout, /APPROVED/, `${what}: the approved code ran`);
  assert.doesNotMatch(r.stderr, /mcp-gate-guard/, what);
  assert.deepEqual(report(ws), [], `${what}: nothing reported`);
}

function assertRefused(ws: Ws, args: string[], file: string, why: string, how?: string, marker = true): void {
  const p = fs.existsSync(file) ? fs.realpathSync(file) : file;
  const r = run(ws, args);
  assert.notEqual(r.status, 0, `refused run must fail; stdout: ${r.stdout}`);
  assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${p} (`), `stderr names ${p}:\n${r.stderr}`);
  const lines = report(ws);
  const line = lines.find((l) => l.file === p);
  assert.ok(line, `report names ${p}: ${JSON.stringify(lines)}`);
  assert.equal(line.why, why);
  assert.equal(line.runtime, 'python');
  assert.equal(line.pid !== undefined && typeof line.time === 'string' && typeof line.sha256 === 'string', true);
  assert.equal(line.sha256, createHash('sha256').update(fs.readFileSync(p)).digest('hex'));
  if (how) assert.equal(line.how, how);
  if (why === 'scratch') assert.equal(line.rel, null);
  else assert.equal(line.rel, path.relative(ws.root, p).split(path.sep).join('/'));
  if (marker) {
    assert.equal(fs.existsSync(ws.marker), false, 'the changed code did not run');
    assert.doesNotMatch(r.stdout, /CHANGED/);
    // control: without the guard the same change does run
    const c = run(ws, args, false);
    assert.ok(fs.existsSync(ws.marker), `without the guard the changed code runs (control):\n${c.stderr}`);
  }
}

interface Shape {
  name: string;
  files: (ws: Ws) => Record<string, string | Buffer>;
  args?: string[];
  /** the file that changes (relative to root, or absolute) and its expected refusal */
  change: string;
  refused?: (ws: Ws) => string;
  why?: 'changed' | 'new' | 'scratch';
  how?: string;
  /** the changed content, when not evil(ws) */
  content?: (ws: Ws) => string;
}

const shapes: Shape[] = [
  {
    name: '`import helper`',
    files: () => ({ 'server.py': 'import helper\nprint(helper.WORD)\n', 'helper.py': 'WORD = "APPROVED"\n' }),
    change: 'helper.py',
    how: 'python-import',
  },
  {
    name: 'a package pkg/__init__.py',
    files: () => ({ 'server.py': 'import pkg\nprint(pkg.WORD)\n', 'pkg/__init__.py': 'WORD = "APPROVED"\n' }),
    change: 'pkg/__init__.py',
    how: 'python-import',
  },
  {
    name: "sys.path.insert(0, 'plugins'); import plug",
    files: () => ({
      'server.py': "import sys\nsys.path.insert(0, 'plugins')\nimport plug\nprint(plug.WORD)\n",
      'plugins/plug.py': 'WORD = "APPROVED"\n',
    }),
    change: 'plugins/plug.py',
    how: 'python-import',
  },
  {
    name: 'importlib.import_module of a computed name',
    files: () => ({
      'server.py': "import importlib\nm = importlib.import_module('tool_' + ''.join(['he', 'lp']))\nprint(m.WORD)\n",
      'tool_help.py': 'WORD = "APPROVED"\n',
    }),
    change: 'tool_help.py',
    how: 'python-import',
  },
  {
    name: "runpy.run_path('lib/task.py')",
    files: () => ({ 'server.py': "import runpy\nrunpy.run_path('lib/task.py')\n", 'lib/task.py': 'print("APPROVED")\n' }),
    change: 'lib/task.py',
  },
  {
    name: "exec(open('lib/task.py').read())",
    files: () => ({ 'server.py': "exec(open('lib/task.py').read())\n", 'lib/task.py': 'print("APPROVED")\n' }),
    change: 'lib/task.py',
    how: 'exec',
  },
  {
    name: "exec(open('lib/task.txt').read()) (a data file's text compiled)",
    files: () => ({ 'server.py': "exec(open('lib/task.txt').read())\n", 'lib/task.txt': 'print("APPROVED")\n' }),
    change: 'lib/task.txt',
    how: 'exec',
  },
  {
    name: 'a new module that did not exist at approval',
    files: () => ({ 'server.py': "import os\nif os.path.exists('extra.py'):\n    import extra\nprint('APPROVED')\n" }),
    change: 'extra.py',
    why: 'new',
    how: 'python-import',
  },
  {
    name: 'a new .pth file in a folder site processes (site.addsitedir(root))',
    files: () => ({
      'server.py': "import os, site\nsite.addsitedir(os.getcwd())\nprint('APPROVED')\n",
      'paths.pth': 'lib\n',
      'lib/keep.txt': 'x\n',
    }),
    change: 'zz-new.pth',
    content: (ws) => `import os; open(${JSON.stringify(ws.marker)}, 'w').write('ran')\n`,
    why: 'new',
    how: 'open',
  },
  {
    name: 'the script itself',
    files: () => ({ 'server.py': "print('APPROVED')\n" }),
    change: 'server.py',
    how: 'script',
  },
  {
    name: '`python -m pkg.mod` as the target',
    files: () => ({ 'pkg/__init__.py': '', 'pkg/mod.py': "print('APPROVED')\n" }),
    args: ['-m', 'pkg.mod'],
    change: 'pkg/mod.py',
    how: 'python-import',
  },
  {
    name: '`-c` code importing a workspace module',
    files: () => ({ 'helper.py': 'WORD = "APPROVED"\n' }),
    args: ['-c', 'import helper; print(helper.WORD)'],
    change: 'helper.py',
    how: 'python-import',
  },
  {
    name: "child subprocess.run([sys.executable, '-I', '-S', 'lib/job.py']) (exec check)",
    files: () => ({
      'server.py': "import subprocess, sys\nsubprocess.run([sys.executable, '-I', '-S', 'lib/job.py'], check=True)\n",
      'lib/job.py': "print('APPROVED')\n",
    }),
    change: 'lib/job.py',
    how: 'spawn',
  },
  {
    name: 'child started by os.system (each word of the command checked)',
    files: () => ({
      'server.py': "import os, sys\nassert os.system(sys.executable + ' -S lib/job.py') == 0\n",
      'lib/job.py': "print('APPROVED', flush=True)\n",
    }),
    change: 'lib/job.py',
    how: 'spawn',
  },
  {
    name: 'a changed workspace text copied to a scratch folder, then run from there',
    files: (ws) => ({
      'server.py': `import runpy, shutil\ndst = ${JSON.stringify(path.join(ws.scratch, 'task.py'))}\nshutil.copy('lib/task.txt', dst)\nrunpy.run_path(dst)\n`,
      'lib/task.txt': 'print("APPROVED")\n',
    }),
    change: 'lib/task.txt',
    refused: (ws) => path.join(ws.scratch, 'task.py'),
    why: 'scratch',
  },
];

describe('python load guard (mcp_gate_guard.py)', function () {
  this.timeout(60000);
  after(() => {
    for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  for (const s of shapes) {
    it(`${s.name}: approved runs, README edit runs, the change is refused before it runs`, () => {
      const ws = workspace(s.files);
      const args = s.args ?? ['server.py'];
      assertRuns(ws, args, 'approved');
      fs.appendFileSync(path.join(ws.root, 'README.md'), 'edited after approval\n');
      assertRuns(ws, args, 'README.md edited');
      const changed = path.isAbsolute(s.change) ? s.change : path.join(ws.root, s.change);
      fs.mkdirSync(path.dirname(changed), { recursive: true });
      fs.writeFileSync(changed, s.content ? s.content(ws) : evil(ws));
      assertRefused(ws, args, s.refused ? s.refused(ws) : changed, s.why ?? (s.refused ? 'scratch' : 'changed'), s.how);
    });
  }

  it('an import through a workspace link to a file outside: the approved link loads; a retargeted or new link is refused', () => {
    const ws = workspace(() => ({
      'server.py':
        "import importlib, os, sys\nsys.path.insert(0, 'plugins')\nfor n in sorted(os.listdir('plugins')):\n    if n.endswith('.py'): importlib.import_module(n[:-3])\nprint('APPROVED')\n",
      'plugins/.keep': '',
    }));
    const elsewhere = path.join(path.dirname(ws.root), 'clone');
    write(elsewhere, { 'ok.py': 'x = 1\n', 'evil.py': evil(ws) });
    const link = path.join(ws.root, 'plugins', 'a.py');
    fs.symlinkSync(path.join(elsewhere, 'ok.py'), link);
    approve(ws);
    assertRuns(ws, ['server.py'], 'approved link');
    const refused = (file: string, why: string): void => {
      fs.rmSync(ws.report, { force: true });
      const r = run(ws, ['server.py']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${file} (${path.relative(ws.root, file)}): `), r.stderr);
      assert.equal(fs.existsSync(ws.marker), false, 'the code behind the link ran');
      assert.deepEqual(
        report(ws).map((l) => [l.file, l.why, l.how]),
        [[file, why, 'python-import through a symbolic link']],
      );
    };
    fs.rmSync(link);
    fs.symlinkSync(path.join(elsewhere, 'evil.py'), link);
    refused(link, 'changed');
    fs.rmSync(link);
    fs.symlinkSync(path.join(elsewhere, 'ok.py'), link);
    fs.symlinkSync(path.join(elsewhere, 'evil.py'), path.join(ws.root, 'plugins', 'b.py'));
    refused(path.join(ws.root, 'plugins', 'b.py'), 'new');
    // control: without the guard the new link's code runs
    run(ws, ['server.py'], false);
    assert.ok(fs.existsSync(ws.marker));
  });

  it('text turned into code after the process took in a changed file (through `cat`, a pickle, a child) is refused; generated stdlib code, literal_eval and its own files are not', () => {
    const ws = workspace((w) => ({
      'server.py': [
        'import subprocess, pickle, sys, os, collections, dataclasses, ast',
        'mode = sys.argv[1]',
        "if mode == 'cat':",
        "    print('APPROVED', eval(subprocess.check_output(['cat', 'plugin.txt'])))",
        "elif mode == 'pickle':",
        "    print('APPROVED', pickle.load(open('data.pkl', 'rb')))",
        "elif mode == 'child':",
        "    open('plugin.txt').read()",
        `    r = subprocess.run([sys.executable, '-S', ${JSON.stringify(GUARD)}, '-c', 'import sys; exec(sys.stdin.read())'], input="print('APPROVED child')", capture_output=True, text=True, env={'PATH': os.environ['PATH'], 'MCP_GATE_GUARD': os.environ['MCP_GATE_GUARD']})`,
        '    sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); sys.exit(r.returncode)',
        "elif mode == 'plain':",
        "    open('state.txt', 'w').write('40 + 2')",
        "    own = eval(open('state.txt').read())",
        "    text = open('README.md').read() + open('plugin.txt').read()",
        "    P = collections.namedtuple('P', 'a b')",
        '    @dataclasses.dataclass',
        '    class D:',
        '        x: int = 1',
        "    print('APPROVED', P(1, 2), D(), ast.literal_eval('[1, 2]'), own)",
        '',
      ].join('\n'),
      'plugin.txt': "'plugin v1'\n",
      'data.pkl': Buffer.from('80047d942e', 'hex'), // pickle of {}
    }));
    for (const mode of ['cat', 'pickle', 'child', 'plain']) assertRuns(ws, ['server.py', mode], `approved, ${mode}`);
    fs.rmSync(path.join(ws.root, 'state.txt'));
    approve(ws);
    // A README edit and a plugin edit: read as data, with generated code after it, is not refused.
    write(ws.root, { 'README.md': '# edited\n', 'plugin.txt': `__import__('os').open(${JSON.stringify(ws.marker)}, 0o101)\n` });
    assertRuns(ws, ['server.py', 'plain'], 'its own file, then data read, then namedtuple, dataclass, literal_eval');
    fs.rmSync(path.join(ws.root, 'state.txt'));
    // eval of what `cat` printed: the changed file handed to the program is named.
    assertRefused(
      ws,
      ['server.py', 'cat'],
      path.join(ws.root, 'plugin.txt'),
      'changed',
      'exec (text turned into code after this process took in a file that is not as approved)',
    );
    fs.rmSync(ws.report);
    // a child given code on stdin by a process that read a changed file: refused in the child
    const r = run(ws, ['server.py', 'child']);
    assert.notEqual(r.status, 0, r.stdout);
    assert.doesNotMatch(r.stdout, /APPROVED child/);
    assert.match(r.stderr, /refused to load \S+plugin\.txt \(plugin\.txt\): it changed since approval \((exec|-c)/);
    fs.rmSync(ws.report);
    // a pickle whose reduce is eval
    fs.rmSync(ws.marker, { force: true });
    const payload = `import pickle\nclass E:\n    def __reduce__(self): return (eval, (${JSON.stringify(`open(${JSON.stringify(ws.marker)}, 'w').write('ran')`)},))\npickle.dump(E(), open('data.pkl', 'wb'))\n`;
    const w = spawnSync(PY, ['-c', payload], { cwd: ws.root, encoding: 'utf8' });
    assert.equal(w.status, 0, w.stderr);
    assertRefused(
      ws,
      ['server.py', 'pickle'],
      path.join(ws.root, 'data.pkl'),
      'changed',
      'pickle builtins.eval (a pickle names what it calls; loaded after this process took in a file that is not as approved)',
    );
  });

  it('a pickle after taking in may name classes and functions of the standard library and approved modules (a pool of workers after an edit runs); names that run code, start programs or reach insides are refused', () => {
    // red team 8p, case 06: multiprocessing's own tasks after a README edit were refused (fork, forkserver, spawn)
    const ws = workspace(() => ({
      'server.py': [
        'import multiprocessing as mp, os, sys, pickle',
        "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib'))",
        'import work',
        'def zero(x):',
        '    return x - 1',
        "if __name__ == '__main__':",
        '    if sys.argv[1:] == ["pool"]:',
        '        out = []',
        "        for m in ('fork', 'forkserver', 'spawn'):",
        '            with mp.get_context(m).Pool(2) as p:',
        "                out.append('%s=%s' % (m, p.map(work.total, ['data/input.csv'] * 2, chunksize=1)[0] + p.map(zero, [1])[0]))",
        "        print('APPROVED', ' '.join(out))",
        '    else:',
        "        open('README.md').read()",
        "        print('APPROVED', pickle.loads(open(sys.argv[1], 'rb').read()))",
        '',
      ].join('\n'),
      'lib/work.py': "import os\ndef total(path):\n    return sum(int(x) for x in open(path).read().split(','))\n",
      'lib/lazy.py': 'from operator import attrgetter\n',
      'data/input.csv': '1,2,3\n',
    }));
    write(ws.root, { 'README.md': '# edited\n', 'data/input.csv': '1,2,3,4\n' });
    const r = run(ws, ['server.py', 'pool']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /APPROVED fork=10 forkserver=10 spawn=10/);
    assert.deepEqual(report(ws), []);
    // Pickles read after the edited README: a class of the standard library and an approved module's function pass.
    const made = (expr: string, name: string) => {
      const w = spawnSync(
        PY,
        [
          '-c',
          `import pickle, sys, collections, operator, os, dataclasses\nsys.path.insert(0, 'lib')\nimport work\npickle.dump(${expr}, open(${JSON.stringify(name)}, 'wb'))`,
        ],
        {
          cwd: ws.root,
          encoding: 'utf8',
        },
      );
      assert.equal(w.status, 0, w.stderr);
      return path.join(ws.out, name);
    };
    const ok = made('[collections.OrderedDict(a=1), work.total]', '../out/ok.pkl');
    const fine = run(ws, ['server.py', ok]);
    assert.equal(fine.status, 0, fine.stderr);
    assert.match(fine.stdout, /APPROVED \[OrderedDict\(\[\('a', 1\)\]\), <function total/);
    // red team 9p: a generator that builds code from its arguments (01), `type` to build a str whose == lies (02), and
    // a dotted name reaching os from an allowed-looking module (12) are refused too (protocol 4, written by hand).
    const dotted = path.join(ws.out, 'dotted.pkl');
    fs.writeFileSync(
      dotted,
      Buffer.concat([
        Buffer.from([0x80, 4, 0x8c, 5]),
        Buffer.from('shlex'),
        Buffer.from([0x94, 0x8c, 9]),
        Buffer.from('os.getuid'),
        Buffer.from([0x94, 0x93, 0x94, 0x2e]),
      ]),
    );
    const bad = run(ws, ['server.py', dotted]);
    assert.notEqual(bad.status, 0, bad.stdout);
    assert.match(bad.stderr, /it changed since approval \(pickle shlex\.os\.getuid/, bad.stderr);
    fs.rmSync(ws.report, { force: true });
    // red team 11p: a name an approved module that is not imported yet merely imported (lazy.attrgetter)
    const lazy = path.join(ws.out, 'lazy.pkl');
    fs.writeFileSync(
      lazy,
      Buffer.concat([
        Buffer.from([0x80, 4, 0x8c, 4]),
        Buffer.from('lazy'),
        Buffer.from([0x94, 0x8c, 10]),
        Buffer.from('attrgetter'),
        Buffer.from([0x94, 0x93, 0x94, 0x2e]),
      ]),
    );
    const lz = run(ws, ['server.py', lazy]);
    assert.notEqual(lz.status, 0, lz.stdout);
    assert.match(lz.stderr, /it changed since approval \(pickle lazy\.attrgetter/, lz.stderr);
    fs.rmSync(ws.report, { force: true });
    // red team 11p: a class a pool module merely imported is not the pool's own (multiprocessing.reduction.ABCMeta)
    const imported = path.join(ws.out, 'imported.pkl');
    const mod = 'multiprocessing.reduction';
    fs.writeFileSync(
      imported,
      Buffer.concat([
        Buffer.from([0x80, 4, 0x8c, mod.length]),
        Buffer.from(mod),
        Buffer.from([0x94, 0x8c, 7]),
        Buffer.from('ABCMeta'),
        Buffer.from([0x94, 0x93, 0x94, 0x2e]),
      ]),
    );
    const im = run(ws, ['server.py', imported]);
    assert.notEqual(im.status, 0, im.stdout);
    assert.match(im.stderr, /it changed since approval \(pickle multiprocessing\.reduction\.ABCMeta/, im.stderr);
    fs.rmSync(ws.report, { force: true });
    // red team 10p: a dotted name through an approved module reaches what it imported (work.os.system)
    const through = path.join(ws.out, 'through.pkl');
    fs.writeFileSync(
      through,
      Buffer.concat([
        Buffer.from([0x80, 4, 0x8c, 4]),
        Buffer.from('work'),
        Buffer.from([0x94, 0x8c, 9]),
        Buffer.from('os.getuid'),
        Buffer.from([0x94, 0x93, 0x94, 0x2e]),
      ]),
    );
    const via = run(ws, ['server.py', through]);
    assert.notEqual(via.status, 0, via.stdout);
    assert.match(via.stderr, /it changed since approval \(pickle work\.os\.getuid/, via.stderr);
    fs.rmSync(ws.report, { force: true });
    for (const [expr, named] of [
      ['os.system', 'posix.system'],
      ["operator.attrgetter('__globals__')", 'operator.attrgetter'],
      ['type', 'builtins.type'],
      ['dataclasses._create_fn', 'dataclasses._create_fn'],
    ]) {
      const f = made(expr, `../out/${named}.pkl`);
      const bad = run(ws, ['server.py', f]);
      assert.notEqual(bad.status, 0, bad.stdout);
      assert.match(bad.stderr, new RegExp(`README\\.md\\): it changed since approval \\(pickle ${named.replace('.', '\\.')}`), bad.stderr);
      fs.rmSync(ws.report, { force: true });
    }
  });

  it("an Enum member in a pickle after taking in (Python 3.11 names it `builtins.getattr(EnumClass, 'NAME')`) loads, in a pool's jobs too; getattr to anything else, or through another unpickler, is refused", () => {
    // red team 10p, case 30: a process pool's jobs and results hold a dataclass with an Enum field after a README edit
    const ws = workspace(() => ({
      'server.py': [
        'import concurrent.futures, multiprocessing, os, pickle, signal, sys',
        "sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lib'))",
        'import jobs, work',
        "if __name__ == '__main__':",
        "    open('README.md').read()",
        '    if sys.argv[1:] == ["pool"]:',
        '        out = []',
        "        for m in ('fork', 'spawn'):",
        '            with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(m)) as ex:',
        '                done = list(ex.map(jobs.run, [jobs.Job(jobs.Kind.FAST, 1), jobs.Job(jobs.Kind.SLOW, 2)]))',
        "            out.append('%s=%s' % (m, ','.join('%s:%d' % (j.kind.name, j.n) for j in done)))",
        "        print('APPROVED', ' '.join(out))",
        '    else:',
        "        load = pickle._loads if sys.argv[2:] == ['python'] else pickle.loads",
        "        print('APPROVED', load(open(sys.argv[1], 'rb').read()))",
        '',
      ].join('\n'),
      'lib/jobs.py': [
        'import dataclasses, enum',
        'class Kind(enum.Enum):',
        "    FAST = 'fast'",
        "    SLOW = 'slow'",
        '@dataclasses.dataclass',
        'class Job:',
        '    kind: Kind',
        '    n: int',
        '    def label(self):',
        '        return self.kind.value',
        'def run(job):',
        '    return Job(job.kind, job.n * 2)',
        '',
      ].join('\n'),
      'lib/work.py': 'import os\ndef total(path):\n    return 0\n',
    }));
    write(ws.root, { 'README.md': '# edited\n' });
    const pool = run(ws, ['server.py', 'pool']);
    assert.equal(pool.status, 0, pool.stderr);
    assert.match(pool.stdout, /APPROVED fork=FAST:2,SLOW:4 spawn=FAST:2,SLOW:4/);
    assert.deepEqual(report(ws), []);
    const made = (expr: string, name: string) => {
      const w = spawnSync(
        PY,
        ['-c', `import pickle, sys, signal\nsys.path.insert(0, 'lib')\nimport jobs\nopen(${JSON.stringify(name)}, 'wb').write(${expr})`],
        {
          cwd: ws.root,
          encoding: 'utf8',
        },
      );
      assert.equal(w.status, 0, w.stderr);
      return path.join(ws.root, name);
    };
    const ok = made('pickle.dumps([jobs.Job(jobs.Kind.SLOW, 3), signal.Signals.SIGTERM])', '../out/enum.pkl');
    const fine = run(ws, ['server.py', ok]);
    assert.equal(fine.status, 0, fine.stderr);
    assert.match(fine.stdout, /APPROVED \[Job\(kind=<Kind\.SLOW: 'slow'>, n=3\), <Signals\.SIGTERM: 15>\]/);
    assert.deepEqual(report(ws), []);
    // Hand-made pickles (protocol 4) calling getattr on what else they can name: refused before anything runs. The
    // last one reaches os.system through an approved function's globals (it runs without the guard: the control).
    const s = (x: string) => `pickle.SHORT_BINUNICODE + bytes([len(${JSON.stringify(x)})]) + ${JSON.stringify(x)}.encode()`;
    const g = (m: string, n: string) => `${s(m)} + ${s(n)} + pickle.STACK_GLOBAL`;
    const ga = (obj: string, name: string) => `${g('builtins', 'getattr')} + ${obj} + ${s(name)} + pickle.TUPLE2 + pickle.REDUCE`;
    const call1 = (f: string, arg: string) => `${f} + ${arg} + pickle.TUPLE1 + pickle.REDUCE`;
    const pk = (body: string) => `pickle.PROTO + bytes([4]) + ${body} + pickle.STOP`;
    const osm = call1(ga(ga(g('work', 'total'), '__globals__'), 'get'), s('os'));
    const cmd = `touch ${ws.marker}`;
    for (const [label, body, of] of [
      ['a function', ga(g('work', 'total'), '__globals__'), 'function'],
      ['a class that is no Enum', ga(g('collections', 'OrderedDict'), 'fromkeys'), 'type'],
      ["an Enum's other attribute", ga(g('jobs', 'Kind'), '_member_map_'), 'EnumType'],
      ['an Enum member’s method', ga(ga(g('jobs', 'Kind'), 'FAST'), 'value'), 'Kind'],
      ['os.system through globals', call1(ga(osm, 'system'), s(cmd)), 'function'],
    ]) {
      const f = made(pk(body), `../out/${label.replace(/\W+/g, '-')}.pkl`);
      const bad = run(ws, ['server.py', f]);
      assert.notEqual(bad.status, 0, `${label}: ${bad.stdout}`);
      assert.match(
        bad.stderr,
        new RegExp(`README\\.md\\): it changed since approval \\(pickle builtins\\.getattr \\(of ${of}`),
        `${label}: ${bad.stderr}`,
      );
      assert.equal(fs.existsSync(ws.marker), false, label);
      fs.rmSync(ws.report, { force: true });
    }
    const control = run(ws, ['server.py', path.join(ws.out, 'os-system-through-globals.pkl')], false);
    assert.equal(control.status, 0, control.stderr);
    assert.ok(fs.existsSync(ws.marker), 'without the guard the pickle runs its command (control)');
    fs.rmSync(ws.marker);
    // The pure-Python unpickler (and _pickle's own) names builtins.getattr itself: refused, even for an Enum member.
    const py = run(ws, ['server.py', ok, 'python']);
    assert.notEqual(py.status, 0, py.stdout);
    assert.match(py.stderr, /it changed since approval \(pickle builtins\.getattr \(a pickle names/, py.stderr);
  });

  it("a jinja2 template compiled after taking in runs when its text is approved (a file or a literal) through jinja2's own pipeline; changed templates, changed text and a pipeline patched from a changed file are refused", () => {
    // red team 8p, cases 01-03 and 08: a template engine after a program start, its own log, or an edited config file
    const how = 'exec (text turned into code after this process took in a file that is not as approved)';
    const ws = workspace(() => ({
      'server.py': [
        'import sys, subprocess, jinja2, jinja2.compiler',
        "env = jinja2.Environment(loader=jinja2.FileSystemLoader('templates'))",
        "cfg = open('config.txt').read().strip()",
        "REPORT = 'Const {{ cfg }}'",
        'def render_constant():',
        '    return env.from_string(REPORT).render(cfg=cfg)',
        "subprocess.run(['true'])",
        'mode = sys.argv[1]',
        "if mode == 'file':",
        "    print('APPROVED', env.get_template('a.j2').render(cfg=cfg))",
        "elif mode == 'literal':",
        "    print('APPROVED', env.from_string('Lit {{ cfg }}').render(cfg=cfg))",
        "elif mode == 'text':",
        "    print('APPROVED', env.from_string(cfg).render())",
        "elif mode == 'table':",
        "    jinja2.compiler.operators['eq'] = cfg",
        "    print('APPROVED', env.get_template('a.j2').render(cfg=cfg))",
        "elif mode == 'subclass':",
        '    class E(jinja2.Environment):',
        '        def _generate(self, source, name, filename, defer_init=False):',
        '            return cfg',
        "    print('APPROVED', E(loader=env.loader).get_template('a.j2').render(cfg=cfg))",
        "elif mode == 'patched':",
        '    jinja2.Environment._generate = lambda self, *a, **k: cfg',
        "    print('APPROVED', env.get_template('a.j2').render(cfg=cfg))",
        "elif mode == 'read':",
        "    print('APPROVED', jinja2.Template(open('templates/a.j2').read()).render(cfg=cfg))",
        "elif mode == 'fixture':",
        "    print('APPROVED', env.from_string(open('fixtures/page.txt').read()).render(cfg=cfg))",
        "elif mode == 'constant':",
        "    print('APPROVED', render_constant())",
        "elif mode == 'preprocess':",
        "    env.preprocess = lambda source, *a, **k: source.replace('@@', cfg)",
        "    print('APPROVED', env.from_string('Lit @@').render())",
        "elif mode == 'liar':",
        "    print('APPROVED', env.from_string(type('S', (str,), {'__eq__': lambda a, b: True, '__hash__': str.__hash__})(cfg)).render())",
        "elif mode == 'lexer':",
        "    env.lexer.rules['root'] = env.lexer.rules['root'][::-1]",
        "    print('APPROVED', env.get_template('a.j2').render(cfg=cfg))",
        '',
      ].join('\n'),
      'templates/a.j2': 'Hello {{ cfg }} {{ 1 == 1 }}\n',
      'fixtures/page.txt': 'Fixture {{ cfg }}\n',
      'config.txt': 'v1\n',
    }));
    // The config edited: the process took in a changed file (and started a program) before jinja2 compiles.
    write(ws.root, { 'config.txt': `__import__('os').open(${JSON.stringify(ws.marker)}, 0o101)\n` });
    for (const mode of ['file', 'literal', 'constant', 'read'])
      assertRuns(ws, ['server.py', mode], `an approved template (${mode}) after an edit`);
    // red team 9p: an instance attribute standing in for a method (03), a str subclass whose == says yes (02)
    // red team 11p: an approved file that is no template (a fixture) compiled as one after taking in: refused
    for (const mode of ['text', 'table', 'subclass', 'patched', 'lexer', 'preprocess', 'liar', 'fixture']) {
      assertRefused(ws, ['server.py', mode], path.join(ws.root, 'config.txt'), 'changed', how, false);
      assert.ok(!fs.existsSync(ws.marker), `${mode}: the changed text ran`);
      fs.rmSync(ws.report, { force: true });
    }
    // The template itself changed: it is code, refused (named as the file that changed).
    write(ws.root, { 'config.txt': 'v1\n', 'templates/a.j2': "{{ cycler.__init__.__globals__.os.open('x', 65) }}\n" });
    assertRefused(ws, ['server.py', 'file'], path.join(ws.root, 'templates/a.j2'), 'changed', how, false);
  });

  it("a jinja2 Extension the application defines in an approved module compiles an approved template after taking in; one from a changed module, a package's, made at run time or rewriting the text is refused", () => {
    // red team 9p 07 / 10p 20: the documented way to add a tag ({% upper %}), rendering an approved template
    const how = 'exec (text turned into code after this process took in a file that is not as approved)';
    const ext = [
      'from jinja2 import nodes',
      'from jinja2.ext import Extension',
      'class Upper(Extension):',
      "    tags = {'upper'}",
      '    def parse(self, parser):',
      '        lineno = next(parser.stream).lineno',
      "        body = parser.parse_statements(['name:endupper'], drop_needle=True)",
      "        return nodes.CallBlock(self.call_method('_up'), [], [], body).set_lineno(lineno)",
      '    def _up(self, caller):',
      '        return caller().upper()',
      '',
    ].join('\n');
    const ws = workspace(() => ({
      'server.py': [
        'import sys, subprocess, jinja2',
        "sys.path[:0] = ['lib', 'vendor/site-packages']",
        "cfg = open('config.txt').read().strip()",
        "subprocess.run(['true'])",
        'mode = sys.argv[1]',
        "if mode == 'class':",
        '    import exts',
        '    env = jinja2.Environment(extensions=[exts.Upper])',
        "elif mode == 'named':",
        "    env = jinja2.Environment(extensions=['exts.Upper'])",
        "elif mode == 'computed':",
        '    env = jinja2.Environment(extensions=[cfg])',
        "elif mode == 'runtime':",
        '    import exts',
        "    Made = type('Made', (exts.Upper,), {'parse': exts.Upper.parse})",
        '    env = jinja2.Environment(extensions=[Made])',
        "elif mode == 'rewrite':",
        '    import exts',
        '    class Rewrite(exts.Upper):',
        '        def preprocess(self, source, name, filename=None):',
        "            return source.replace('@@', cfg)",
        '    env = jinja2.Environment(extensions=[Rewrite])',
        "elif mode == 'replaced':",
        '    import exts, functools',
        "    exts.Upper._up = functools.partial(str.upper, 'x')",
        '    env = jinja2.Environment(extensions=[exts.Upper])',
        "print('APPROVED', env.from_string('{% upper %}report-ok{% endupper %} @@').render())",
        '',
      ].join('\n'),
      'lib/exts.py': ext,
      'vendor/site-packages/vext.py': ext,
      'config.txt': 'v1\n',
    }));
    write(ws.root, { 'config.txt': 'vext.Upper\n' });
    for (const mode of ['class', 'named']) assertRuns(ws, ['server.py', mode], `the application's extension (${mode}) after an edit`);
    const ok = run(ws, ['server.py', 'class']);
    assert.match(ok.stdout, /APPROVED REPORT-OK @@/);
    // a name from the changed file resolving to a package's extension, a class made at run time, one that rewrites
    // the approved text, one whose method was replaced by another callable: refused, nothing of it compiled
    for (const mode of ['computed', 'runtime', 'rewrite', 'replaced']) {
      assertRefused(ws, ['server.py', mode], path.join(ws.root, 'config.txt'), 'changed', how, false);
      fs.rmSync(ws.report, { force: true });
    }
    // the extension's module changed: refused as it is imported
    write(ws.root, { 'lib/exts.py': `${ext}\nUpper.tags = {'upper', 'evil'}\n` });
    assertRefused(ws, ['server.py', 'class'], path.join(ws.root, 'lib/exts.py'), 'changed', 'python-import', false);
  });

  it('a dataclass or an attrs class made after taking in compiles when its names are identifiers; generated code named by changed data is refused', () => {
    // red team 9p: 09 (attrs after `git status` and an edit: the mcp SDK's dependencies) and 01 (a generator's own
    // code-making function, called with text from a changed file)
    const how = 'exec (text turned into code after this process took in a file that is not as approved)';
    const ws = workspace(() => ({
      'server.py': [
        'import sys, subprocess, dataclasses',
        "names = open('fields.txt').read().split()",
        "subprocess.run(['true'])",
        'mode = sys.argv[1]',
        "if mode == 'dataclass':",
        '    @dataclasses.dataclass',
        '    class Row:',
        '        a: int = 1',
        '        b: str = "x"',
        "    print('APPROVED', Row(), dataclasses.make_dataclass('Made', names)(*range(len(names))))",
        "elif mode == 'attrs':",
        '    import attr',
        '    @attr.s',
        '    class Row:',
        '        a = attr.ib(default=1)',
        "    print('APPROVED', Row(), attr.make_class('Made', names)(*range(len(names))))",
        "elif mode == 'dataclass-named':",
        "    Bad = type('Bad', (), {'__annotations__': {n: int for n in names}})",
        "    print('APPROVED', dataclasses.dataclass(Bad))",
        "elif mode == 'attrs-named':",
        '    import attr',
        "    print('APPROVED', attr.make_class('Bad', names))",
        "elif mode == 'attrs-alias':",
        '    import attr',
        "    print('APPROVED', attr.make_class('Bad', {'a': attr.ib(alias=names[0])}))",
        "elif mode == 'create-fn':",
        "    f = dataclasses._create_fn('f', [], [' '.join(names)], globals={})",
        "    print('APPROVED', f())",
        '',
      ].join('\n'),
      'fields.txt': 'x y\n',
    }));
    write(ws.root, { 'README.md': '# edited\n', 'fields.txt': 'p q r\n' });
    for (const mode of ['dataclass', 'attrs']) assertRuns(ws, ['server.py', mode], `${mode} after an edit and a program`);
    write(ws.root, { 'fields.txt': `x=__import__('os').open(${JSON.stringify(ws.marker)},0o101)\n` });
    for (const mode of ['dataclass-named', 'attrs-named', 'attrs-alias', 'create-fn']) {
      const r = run(ws, ['server.py', mode]);
      assert.ok(!fs.existsSync(ws.marker), `${mode}: the changed text ran`);
      assert.notEqual(r.status, 0, `${mode}: ${r.stdout}`);
      assert.match(
        r.stderr,
        new RegExp(`fields\\.txt \\(fields\\.txt\\): it changed since approval \\(${how.replace(/[()]/g, '\\$&')}`),
        `${mode}: ${r.stderr}`,
      );
      fs.rmSync(ws.report, { force: true });
    }
  });

  it('an annotation of an approved module that postpones its annotations compiles after taking in; other text with a call is refused', () => {
    // red team 10p, case 31: the MCP SDK's types (`from __future__ import annotations`, `Annotated[X | None,
    // Field(alias='_meta')]`) evaluated by pydantic in a pool's worker after an edited config was read: refused as
    // text turned into code, though it is the approved module's own annotation.
    const ws = workspace(() => ({
      'models.py': [
        'from __future__ import annotations',
        'from typing import Annotated, Optional',
        'def Field(**k):',
        '    return k',
        'class Meta:',
        "    meta: Annotated[Optional[int], Field(alias='_meta')] = None",
        "    def f(self, x: Annotated[int, Field(ge=0)]) -> 'Annotated[str, Field(max_length=3)]': ...",
        '',
      ].join('\n'),
      'server.py': [
        'import sys, typing',
        "cfg = open('config.toml').read()",
        'import models',
        'h = typing.get_type_hints(models.Meta, include_extras=True)',
        'g = typing.get_type_hints(models.Meta.f, include_extras=True)',
        "print('HINTS', h['meta'].__metadata__, g['x'].__metadata__, g['return'].__metadata__)",
        "if sys.argv[1:] == ['data']:",
        "    eval(compile(cfg.strip(), 'cfg', 'eval'), vars(models))",
        "print('APPROVED')",
        '',
      ].join('\n'),
      'config.toml': 'name = 1\n',
    }));
    approve(ws);
    write(ws.root, { 'config.toml': 'name = 2\n' });
    const r = run(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /HINTS \(\{'alias': '_meta'\},\) \(\{'ge': 0\},\) \(\{'max_length': 3\},\)/);
    // text from the edited file that looks like an annotation but is none of the approved ones stays refused
    write(ws.root, { 'config.toml': `Annotated[int, Field(alias=open(${JSON.stringify(ws.marker)}, 'w').write('ran'))]\n` });
    const bad = run(ws, ['server.py', 'data']);
    assert.ok(!fs.existsSync(ws.marker), `the text ran:\n${bad.stdout}\n${bad.stderr}`);
    assert.match(bad.stderr, /refused to load \S+config\.toml \(config\.toml\): it changed since approval/);
  });

  it('types.coroutine marking a generator after taking in (asyncio imported late) is no code from data; another code.replace is refused', () => {
    // red team 10p, case 31: the pool's spawn worker imported asyncio after the parent had read an edited config; the
    // standard library's @types.coroutine replaces a function's code with its own bytecode and one more flag.
    const ws = workspace(() => ({
      'server.py': [
        'import sys, types',
        "cfg = open('config.toml').read()",
        "if 'asyncio' in sys.modules: raise SystemExit('asyncio already imported: the test shows nothing')",
        'import asyncio',
        '@types.coroutine',
        'def tick():',
        '    yield',
        "print('CORO', asyncio.iscoroutinefunction(tick) or bool(tick.__code__.co_flags & 0x100))",
        "if sys.argv[1:] == ['replace']:",
        '    def f(): return 1',
        '    f.__code__ = f.__code__.replace(co_flags=f.__code__.co_flags)',
        "print('APPROVED')",
        '',
      ].join('\n'),
      'config.toml': 'name = 1\n',
    }));
    approve(ws);
    write(ws.root, { 'config.toml': 'name = 2\n' });
    const r = run(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /CORO True/);
    const bad = run(ws, ['server.py', 'replace']);
    assert.notEqual(bad.status, 0, bad.stdout);
    assert.match(bad.stderr, /config\.toml\): it changed since approval \(code object built after this process took in/);
  });

  it('red team 12, 30b: modules of an approved, unchanged archive (zipimport: a source and a .pyc member) import after taking in; a changed archive is refused', () => {
    // zipimport compiles each member's source itself (and unmarshals a .pyc's code): its text is no approved file's,
    // only the archive's bytes are; after an edited config was read that was refused as text turned into code.
    const zipOf = (ws: Ws, members: Record<string, string>): void => {
      const py = [
        'import sys, json, zipfile, importlib.util, marshal',
        'm = json.loads(sys.argv[2])',
        "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)",
        'for n, t in sorted(m.items()):',
        "    if n.endswith('.pyc'):",
        "        code = compile(t, n[:-1], 'exec', dont_inherit=True)",
        "        z.writestr(n, importlib.util.MAGIC_NUMBER + b'\\0' * 12 + marshal.dumps(code))",
        '    else:',
        '        z.writestr(n, t)',
        'z.close()',
      ].join('\n');
      const r = spawnSync(PY, ['-c', py, path.join(ws.root, 'lib', 'plugins.zip'), JSON.stringify(members)], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    };
    const ws = workspace(() => ({
      'server.py': [
        'import sys',
        "cfg = open('config.toml').read()",
        "sys.path.insert(0, 'lib/plugins.zip')",
        'import greet, fast',
        "print(greet.greet(), fast.VALUE, 'APPROVED')",
        '',
      ].join('\n'),
      'config.toml': 'name = 1\n',
      'lib/plugins.zip': '',
    }));
    zipOf(ws, { 'greet.py': "def greet():\r\n    return 'zip'\r\n", 'fast.pyc': 'VALUE = 42\n' });
    approve(ws);
    write(ws.root, { 'config.toml': 'name = 2\n' });
    const r = run(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /zip 42 APPROVED/);
    // the archive changed: refused as it is opened, before its member runs
    zipOf(ws, { 'greet.py': `${evil(ws)}def greet():\n    return 'zip'\n`, 'fast.pyc': 'VALUE = 42\n' });
    assertRefused(ws, ['server.py'], path.join(ws.root, 'lib', 'plugins.zip'), 'changed');
  });

  it('red team 12, 01: a source whose coding declaration names a codec registered at run time is refused, imported or compiled from its approved bytes; latin-1 and cp1252 load', () => {
    // The server registers `legacy_cp` with a table read from a data file: the module's bytes are approved, but the
    // text Python compiles is what the table makes of them. The pull changes only the table.
    const table = (map: (i: number) => number): string =>
      Array.from({ length: 256 }, (_, i) => `0x${i.toString(16)}\t0x${map(i).toString(16)}\n`).join('');
    const ws = workspace(() => ({
      'server.py': [
        'import codecs, sys',
        'def _search(name):',
        "    if name != 'legacy_cp':",
        '        return None',
        '    t = {}',
        "    for line in open('legacy_cp.txt'):",
        "        a, b = line.split('\\t')",
        '        t[int(a, 16)] = chr(int(b, 16))',
        "    dec = lambda b, errors='strict': codecs.charmap_decode(b, errors, t)",
        "    return codecs.CodecInfo(lambda s, errors='strict': (s.encode('latin-1'), len(s)), dec, name='legacy_cp')",
        'codecs.register(_search)',
        'import latin, windows',
        "if sys.argv[1:] == ['exec']:",
        "    exec(compile(open('legacy.py', 'rb').read(), 'legacy.py', 'exec'), {})",
        'else:',
        '    import legacy',
        "print(latin.WORD, windows.WORD, 'APPROVED')",
        '',
      ].join('\n'),
      'legacy.py': Buffer.concat([
        Buffer.from("# -*- coding: legacy_cp -*-\nBANNER = '"),
        Buffer.from(Array.from({ length: 128 }, (_, i) => 0x80 + i)),
        Buffer.from("'\n"),
      ]),
      'legacy_cp.txt': table((i) => i),
      'latin.py': Buffer.concat([Buffer.from("# -*- coding: latin-1 -*-\nWORD = 'Gr"), Buffer.from([0xfc, 0xdf]), Buffer.from("e'\n")]),
      'windows.py': Buffer.concat([
        Buffer.from("#!/usr/bin/env python3\n# vim: set fileencoding=cp1252 :\nWORD = '"),
        Buffer.from([0x80]),
        Buffer.from("'\n"),
      ]),
    }));
    const payload = `';open(${JSON.stringify(ws.marker)},'w').write('ran');print('CHANGED');X='`;
    // the pull: bytes 0x80.. of the banner now decode to Python text
    write(ws.root, { 'legacy_cp.txt': table((i) => (i < 0x80 ? i : i - 0x80 < payload.length ? payload.charCodeAt(i - 0x80) : 0x78)) });
    assertRefused(ws, ['server.py'], path.join(ws.root, 'legacy.py'), 'sink', 'python-import (coding: legacy_cp)');
    fs.rmSync(ws.report, { force: true });
    fs.rmSync(ws.marker, { force: true });
    assertRefused(ws, ['server.py', 'exec'], path.join(ws.root, 'legacy.py'), 'sink', 'exec (coding: legacy_cp)');
    // codecs of Python's own, after taking in (the table read as it changed again)
    write(ws.root, { 'server.py': "open('legacy_cp.txt').read()\nimport latin, windows\nprint(latin.WORD, windows.WORD, 'APPROVED')\n" });
    approve(ws);
    write(ws.root, { 'legacy_cp.txt': table((i) => i) });
    fs.rmSync(ws.report, { force: true });
    const r = run(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Grüße € APPROVED/);
  });

  it("a library's own generated helpers as it loads (typing_inspection, pydantic's), from the venv it runs in, compile after taking in while their names are identifiers; a name from a changed file, or a folder merely named site-packages, is refused", () => {
    // red team 10p, cases 31-32: importing pydantic after reading an edited config was refused
    const how = 'exec (text turned into code after this process took in a file that is not as approved)';
    const pyVersion = path.basename(fs.realpathSync(PY)).replace(/^python(\d+\.\d+).*$/, 'python$1');
    const site = `.venv/lib/${pyVersion}/site-packages/typing_inspection`;
    const lib = (member: string) =>
      [
        'def _compile_identity_check_function(member, function_name):',
        '    g = {}',
        "    exec('def %s(obj):\\n    return obj is %r' % (function_name, member), g)",
        '    return g[function_name]',
        `is_x = _compile_identity_check_function(${member}, 'is_x')`,
        '',
      ].join('\n');
    const ws = workspace(() => ({
      'server.py': [
        'import sys',
        "open('config.json').read()",
        "if sys.argv[1:] == ['plain-folder']: sys.path.insert(0, 'vendor/site-packages')",
        'import typing_inspection.typing_objects as t',
        "print('APPROVED', t.is_x('x'))",
        '',
      ].join('\n'),
      '.venv/pyvenv.cfg': `home = ${path.dirname(fs.realpathSync(PY))}\ninclude-system-site-packages = false\n`,
      [`${site}/__init__.py`]: '',
      [`${site}/typing_objects.py`]: lib("'Annotated'"),
      'vendor/site-packages/typing_inspection/__init__.py': '',
      'vendor/site-packages/typing_inspection/typing_objects.py': lib("'Annotated'"),
      'config.json': '{}\n',
      'names.txt': 'Annotated\n',
    }));
    fs.mkdirSync(path.join(ws.root, '.venv', 'bin'), { recursive: true });
    fs.symlinkSync(fs.realpathSync(PY), path.join(ws.root, '.venv', 'bin', 'python'));
    const venv = { MCP_GATE_GUARD_ARGV0: path.join(ws.root, '.venv', 'bin', 'python') };
    write(ws.root, { 'config.json': '{"edited": true}\n' });
    const ok = run(ws, ['server.py'], true, venv);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /APPROVED False/);
    // the same code in a folder merely named site-packages (not the venv it runs in) is the application's: refused
    const plain = run(ws, ['server.py', 'plain-folder']);
    assert.notEqual(plain.status, 0, plain.stdout);
    assert.match(plain.stderr, /config\.json \(config\.json\): it changed since approval \(exec/, plain.stderr);
    fs.rmSync(ws.report, { force: true });
    // the venv's library naming its helper from a file that changed: refused
    write(ws.root, { [`${site}/typing_objects.py`]: lib("open('names.txt').read().strip()") });
    approve(ws);
    write(ws.root, { 'names.txt': `x(): pass\n__import__('os').open(${JSON.stringify(ws.marker)}, 0o101)\ndef y\n` });
    const r = run(ws, ['server.py'], true, venv);
    assert.ok(!fs.existsSync(ws.marker), 'the changed text ran');
    assert.notEqual(r.status, 0, r.stdout);
    assert.match(
      r.stderr,
      new RegExp(`names\\.txt \\(names\\.txt\\): it changed since approval \\(${how.replace(/[()]/g, '\\$&')}`),
      r.stderr,
    );
  });

  it("what follows a python script on a child's command line is its data: a changed data file does not stop the start; a changed script does", () => {
    const ws = workspace(() => ({
      'server.py':
        "import subprocess, sys\nr = subprocess.run([sys.executable, '-S', 'lib/job.py', 'data/input.txt'], capture_output=True, text=True)\nsys.stdout.write(r.stdout); sys.stderr.write(r.stderr); sys.exit(r.returncode)\n",
      'lib/job.py': "import sys\nprint('APPROVED', open(sys.argv[1]).read().strip())\n",
      'data/input.txt': 'one\n',
    }));
    write(ws.root, { 'data/input.txt': 'two\n' });
    const r = run(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /APPROVED two/);
    assert.deepEqual(report(ws), []);
    write(ws.root, { 'lib/job.py': evil(ws) });
    assertRefused(ws, ['server.py'], path.join(ws.root, 'lib/job.py'), 'changed', 'spawn', false);
  });

  it('red team 3: an unchecked-hash .pyc beside an approved source, a worker fed a changed file through its pipe, exec through a retargeted link are refused; a forward reference after reading an edited file is not', () => {
    const ws = workspace((w) => ({
      'server.py': [
        'import importlib.util, subprocess, sys, os, typing',
        'mode = sys.argv[1]',
        "if mode == 'spec':",
        "    spec = importlib.util.spec_from_file_location('greet', 'plugins/greet.py')",
        '    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)',
        "    print('APPROVED', m.WORD)",
        "elif mode == 'worker':",
        `    w = subprocess.Popen([sys.executable, '-S', ${JSON.stringify(GUARD)}, '-c', 'import sys\\nexec(sys.stdin.read())'], stdin=subprocess.PIPE, text=True, env={'PATH': os.environ['PATH'], 'MCP_GATE_GUARD': os.environ['MCP_GATE_GUARD']})`,
        "    text = open('plugins/rule.py').read()",
        '    w.communicate(text); sys.exit(w.returncode)',
        "elif mode == 'link':",
        "    exec(open('plugins/rule.py').read())",
        "elif mode == 'typing':",
        "    open('README.md').read()",
        '    class Node: pass',
        "    hints = typing.get_type_hints(type('T', (), {'__annotations__': {'n': typing.Optional['Node'], 'm': 'list[int] | None'}}), localns={'Node': Node})",
        '    try:',
        "        typing.get_type_hints(type('U', (), {'__annotations__': {'x': \"__import__('os').getcwd()\"}}))",
        "        print('CALL EVALUATED')",
        '    except Exception as e:',
        "        print('APPROVED', sorted(hints), type(e).__name__)",
        '',
      ].join('\n'),
      'plugins/greet.py': "WORD = 'hello'\n",
      'plugins/rule.py': "print('APPROVED rule')\n",
    }));
    for (const mode of ['spec', 'worker', 'link']) assertRuns(ws, ['server.py', mode], `approved, ${mode}`);
    write(ws.root, { 'README.md': '# edited\n' });
    const t = run(ws, ['server.py', 'typing']);
    assert.equal(t.status, 0, t.stderr);
    assert.match(t.stdout, /APPROVED \['m', 'n'\] McpGateGuardRefused/);
    fs.rmSync(ws.report, { force: true });
    // 01: an unchecked-hash .pyc planted in plugins/__pycache__ (the source untouched)
    const pyc = path.join(ws.root, 'plugins', '__pycache__', 'greet.cpython-311.pyc');
    const made = spawnSync(
      PY,
      [
        '-c',
        `import py_compile, sys, os, tempfile\nd = tempfile.mkdtemp(); src = os.path.join(d, 'greet.py')\nopen(src, 'w').write(${JSON.stringify(evil(ws) + "WORD = 'x'\n")})\nos.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)\npy_compile.compile(src, cfile=sys.argv[1], invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)`,
        pyc,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(made.status, 0, made.stderr);
    const spec = run(ws, ['server.py', 'spec']);
    assert.equal(spec.status, 0, spec.stderr);
    assert.match(spec.stdout, /APPROVED hello/, 'the approved source runs, the planted bytecode is not read');
    assert.equal(fs.existsSync(ws.marker), false);
    fs.rmSync(path.join(ws.root, 'plugins', '__pycache__'), { recursive: true });
    // 02: a worker started before anything changed is fed the changed file's text through its stdin
    write(ws.root, { 'plugins/rule.py': evil(ws) });
    const worker = run(ws, ['server.py', 'worker']);
    assert.notEqual(worker.status, 0, worker.stdout);
    assert.equal(fs.existsSync(ws.marker), false, 'the worker ran the changed text');
    assert.match(worker.stderr, /refused to load \S+ \(\S+\): it (changed since approval|is not in what was approved) \(exec/);
    // 05: exec of text read through a workspace link retargeted to another clone's file
    write(ws.root, { 'plugins/rule.py': "print('APPROVED rule')\n" });
    const other = path.join(path.dirname(ws.root), 'other-clone');
    write(other, { 'rule.py': evil(ws) });
    fs.rmSync(path.join(ws.root, 'plugins', 'rule.py'));
    fs.symlinkSync(path.join(other, 'rule.py'), path.join(ws.root, 'plugins', 'rule.py'));
    fs.rmSync(ws.report, { force: true });
    const link = run(ws, ['server.py', 'link']);
    assert.notEqual(link.status, 0, link.stdout);
    assert.equal(fs.existsSync(ws.marker), false, 'the text behind the retargeted link ran');
    assert.match(link.stderr, /refused to load \S+plugins\/rule\.py \(plugins\/rule\.py\): it changed since approval/);
  });

  it("red team 4: a changed file read relative to a folder descriptor, through O_EXCL, as a link's text or from a dbm database is taken in; logging.config after an edit is not refused", () => {
    const ws = workspace(() => ({
      'server.py': [
        'import os, sys, shelve, dbm.ndbm, logging.config',
        'mode = sys.argv[1]',
        "if mode == 'dirfd':",
        "    d = os.open('plugins', os.O_RDONLY)",
        "    fd = os.open('rule.txt', os.O_RDONLY, dir_fd=d)",
        "    print('APPROVED', eval(os.read(fd, 4096).decode()))",
        "elif mode == 'excl':",
        "    fd = os.open('state/hook.py', os.O_RDWR | os.O_EXCL)",
        '    exec(os.read(fd, 4096).decode())',
        "elif mode == 'readlink':",
        "    print('APPROVED', eval(os.readlink('plugins/link')))",
        "elif mode == 'dbm':",
        "    with shelve.Shelf(dbm.ndbm.open('state/db', 'r')) as s:",
        "        print('APPROVED', s['greeting'])",
        "elif mode == 'logging':",
        "    open('README.md').read()",
        "    logging.config.fileConfig('log.ini')",
        "    print('APPROVED', logging.getLogger().handlers[0].__class__.__name__)",
        '',
      ].join('\n'),
      'plugins/rule.txt': "'rule v1'\n",
      'state/hook.py': "print('APPROVED hook')\n",
      'log.ini':
        '[loggers]\nkeys=root\n[handlers]\nkeys=h\n[formatters]\nkeys=\n[logger_root]\nlevel=INFO\nhandlers=h\n[handler_h]\nclass=StreamHandler\nargs=(sys.stderr,)\n',
    }));
    fs.symlinkSync('1 + 1', path.join(ws.root, 'plugins', 'link'));
    const db = (value: string, evilReduce: boolean): void => {
      for (const f of fs.readdirSync(path.join(ws.root, 'state'))) if (f.startsWith('db')) fs.rmSync(path.join(ws.root, 'state', f));
      const w = spawnSync(
        PY,
        [
          '-c',
          `import shelve, dbm.ndbm, sys\nclass E:\n    def __reduce__(self): return (eval, (sys.argv[1],))\nwith shelve.Shelf(dbm.ndbm.open('state/db', 'c')) as s: s['greeting'] = E() if sys.argv[2] == 'evil' else sys.argv[1]\n`,
          value,
          evilReduce ? 'evil' : 'plain',
        ],
        { cwd: ws.root, encoding: 'utf8' },
      );
      assert.equal(w.status, 0, w.stderr);
    };
    db('hello', false);
    approve(ws);
    for (const mode of ['dirfd', 'excl', 'readlink', 'dbm', 'logging']) assertRuns(ws, ['server.py', mode], `approved, ${mode}`);
    write(ws.root, { 'README.md': '# edited\n' });
    assertRuns(
      ws,
      ['server.py', 'logging'],
      'logging.config.fileConfig after reading an edited file (it evaluates `(sys.stderr,)` and `{}`)',
    );
    const code = `__import__('os').open(${JSON.stringify(ws.marker)}, 0o101)`;
    const how = 'exec (text turned into code after this process took in a file that is not as approved)';
    // 10: read relative to a folder descriptor: where it is cannot be told, so it counts as taken in
    const refusedTakingIn = (mode: string, named: string, why: string): void => {
      const r = run(ws, ['server.py', mode]);
      assert.notEqual(r.status, 0, r.stdout);
      assert.equal(fs.existsSync(ws.marker), false, `${mode}: the changed text ran`);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${named}`), r.stderr);
      assert.deepEqual(
        report(ws).map((l) => [l.file, l.why, l.how]),
        [[named, why, how]],
      );
      fs.rmSync(ws.report);
      run(ws, ['server.py', mode], false);
      assert.ok(fs.existsSync(ws.marker), `${mode}: without the guard the changed text runs (control)`);
      fs.rmSync(ws.marker);
    };
    write(ws.root, { 'plugins/rule.txt': code + '\n' });
    assertRefused(ws, ['server.py', 'dirfd'], path.join(ws.root, 'plugins/rule.txt'), 'changed', 'exec');
    fs.rmSync(ws.report);
    fs.rmSync(ws.marker);
    // 12: O_EXCL without O_CREAT creates nothing: the pulled file is not the process's own
    write(ws.root, { 'state/hook.py': evil(ws) });
    assertRefused(ws, ['server.py', 'excl'], path.join(ws.root, 'state/hook.py'), 'changed', 'exec');
    fs.rmSync(ws.report);
    fs.rmSync(ws.marker);
    // 13: a workspace link whose text changed: its text is content
    fs.rmSync(path.join(ws.root, 'plugins', 'link'));
    fs.symlinkSync(code, path.join(ws.root, 'plugins', 'link'));
    refusedTakingIn('readlink', path.join(ws.root, 'plugins', 'link'), 'changed');
    // 14: a dbm database the C library reads: a pickle in a pulled one whose reduce is eval
    db(`open(${JSON.stringify(ws.marker)}, 'w').write('ran')`, true);
    const r = run(ws, ['server.py', 'dbm']);
    assert.notEqual(r.status, 0, r.stdout);
    assert.equal(fs.existsSync(ws.marker), false, 'the pickle in the pulled database ran');
    assert.match(r.stderr, /refused to load \S+state\/db\S* \(state\/db\S*\): it changed since approval \(pickle builtins\.eval/);
  });

  it("red team 5: a line of a changed file from linecache, an ATTACHed database, a changed file linked onto its own, posix.readlink and a dangling link's text are taken in; a dir_fd read of unchanged files with a same-named one in the working folder is not", () => {
    const ws = workspace(() => ({
      'server.py': [
        'import os, sys, linecache, sqlite3, posix',
        'mode = sys.argv[1]',
        "if mode == 'linecache':",
        "    print('APPROVED', eval(linecache.getline('plugins/rule.txt', 1)))",
        "elif mode == 'attach':",
        "    c = sqlite3.connect(':memory:')",
        "    c.execute('ATTACH DATABASE ? AS p', ('plugins.db',))",
        "    src, = c.execute('SELECT src FROM p.t').fetchone()",
        "    print('APPROVED', eval(src))",
        "elif mode == 'own':",
        "    open('spool.txt', 'w').write(\"'idle'\")",
        "    if os.path.exists('inbox.txt'):",
        "        os.link('inbox.txt', 'spool.take'); os.replace('spool.take', 'spool.txt')",
        "    print('APPROVED', eval(open('spool.txt').read()))",
        "elif mode == 'posix':",
        "    print('APPROVED', eval(posix.readlink('plugins/link')))",
        "elif mode == 'dangling':",
        "    print('APPROVED', eval(os.path.basename(os.path.realpath('plugins/dangling'))))",
        "elif mode == 'dirfd':",
        "    d = os.open('plugins', os.O_RDONLY)",
        "    text = os.read(os.open('greet.txt', os.O_RDONLY, dir_fd=d), 4096).decode()",
        "    print('APPROVED', eval(repr(text.strip()) + ' + \"!\"'))",
        '',
      ].join('\n'),
      'plugins/rule.txt': "'rule v1'\n",
      'plugins/greet.txt': 'hello\n',
      'greet.txt': 'another file of the same name\n',
    }));
    fs.symlinkSync('1 + 1', path.join(ws.root, 'plugins', 'link'));
    fs.symlinkSync('2 + 2', path.join(ws.root, 'plugins', 'dangling'));
    const db = (src: string): void => {
      fs.rmSync(path.join(ws.root, 'plugins.db'), { force: true });
      const w = spawnSync(
        PY,
        [
          '-c',
          'import sqlite3, sys\nc = sqlite3.connect("plugins.db"); c.execute("create table t(src)"); c.execute("insert into t values (?)", (sys.argv[1],)); c.commit()',
          src,
        ],
        { cwd: ws.root, encoding: 'utf8' },
      );
      assert.equal(w.status, 0, w.stderr);
    };
    db("'from the database'");
    approve(ws);
    for (const mode of ['linecache', 'attach', 'own', 'posix', 'dangling', 'dirfd']) {
      assertRuns(ws, ['server.py', mode], `approved, ${mode}`);
      fs.rmSync(path.join(ws.root, 'spool.txt'), { force: true });
    }
    const code = `__import__('os').open(${JSON.stringify(ws.marker)}, 0o101)`;
    const refused = (mode: string, named: RegExp): void => {
      const r = run(ws, ['server.py', mode]);
      assert.notEqual(r.status, 0, `${mode}: ${r.stdout}`);
      assert.equal(fs.existsSync(ws.marker), false, `${mode}: the changed text ran`);
      assert.match(r.stderr, named, mode);
      fs.rmSync(ws.report, { force: true });
      fs.rmSync(path.join(ws.root, 'spool.txt'), { force: true });
      run(ws, ['server.py', mode], false);
      assert.ok(fs.existsSync(ws.marker), `${mode}: without the guard the changed text runs (control)`);
      fs.rmSync(ws.marker);
      fs.rmSync(path.join(ws.root, 'spool.txt'), { force: true });
    };
    write(ws.root, { 'plugins/rule.txt': code + '\n' });
    refused('linecache', /refused to load \S+plugins\/rule\.txt \(plugins\/rule\.txt\): it changed since approval\n/);
    db(code);
    refused('attach', /refused to load \S+plugins\.db \(plugins\.db\): it changed since approval \(exec/);
    write(ws.root, { 'inbox.txt': code });
    refused('own', /refused to load \S+spool\.txt \(spool\.txt\): it is not in what was approved/);
    fs.rmSync(path.join(ws.root, 'inbox.txt'));
    fs.rmSync(path.join(ws.root, 'plugins', 'link'));
    fs.symlinkSync(code, path.join(ws.root, 'plugins', 'link'));
    refused('posix', /refused to load \S+plugins\/link \(plugins\/link\): it changed since approval/);
    fs.rmSync(path.join(ws.root, 'plugins', 'dangling'));
    fs.symlinkSync(code.replace(/\//g, '\\x2f'), path.join(ws.root, 'plugins', 'dangling'));
    refused('dangling', /refused to load \S+plugins\/dangling \(plugins\/dangling\): it changed since approval/);
  });

  it("red team 6p: bytecode through a SourcelessFileLoader of any name, a forked or spawned worker's read, libc open through ctypes and a new file name listed are refused; a `python -c` child after a README edit is not", () => {
    const pyc = (src: string): Buffer => {
      const r = spawnSync(PY, [
        '-c',
        'import sys, marshal, importlib.util\nsys.stdout.buffer.write(importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile(sys.argv[1], "greet.py", "exec")))',
        src,
      ]);
      assert.equal(r.status, 0, String(r.stderr));
      return r.stdout;
    };
    const ws = workspace((w) => ({
      'server.py': [
        'import os, sys, subprocess, multiprocessing, importlib.machinery, importlib.util',
        'def read(p):',
        '    with open(p) as f:',
        '        return f.read()',
        "if __name__ == '__main__':",
        '    mode = sys.argv[1]',
        "    if mode == 'bin':",
        "        ld = importlib.machinery.SourcelessFileLoader('greet', 'plugins/greet.bin')",
        "        m = importlib.util.module_from_spec(importlib.util.spec_from_loader('greet', ld))",
        '        ld.exec_module(m)',
        "        print('APPROVED', m.said)",
        "    elif mode == 'fork':",
        '        r, wr = os.pipe()',
        '        pid = os.fork()',
        '        if pid == 0:',
        "            os.write(wr, read('plugins/rule.txt').encode()); os._exit(0)",
        '        os.close(wr); os.waitpid(pid, 0)',
        "        print('APPROVED', eval(os.read(r, 65536)))",
        "    elif mode == 'spawn':",
        "        with multiprocessing.get_context('spawn').Pool(1) as pool:",
        "            text = pool.apply(read, ('plugins/rule.txt',))",
        "        print('APPROVED', eval(text))",
        "    elif mode == 'ctypes':",
        '        import ctypes',
        "        fd = ctypes.CDLL(None).open(b'plugins/rule.txt', 0)",
        "        print('APPROVED', eval(os.read(fd, 65536)))",
        "    elif mode == 'names':",
        "        print('APPROVED', [eval(n) for n in sorted(os.listdir('plugins/names'))])",
        "    elif mode == 'dash-c':",
        `        r = subprocess.run([sys.executable, '-S', ${JSON.stringify(GUARD)}, '-c', 'print(2 + 2)'], capture_output=True, text=True)`,
        "        assert r.stdout == '4\\n', r.stderr",
        "        print('APPROVED', r.stdout)",
        '',
      ].join('\n'),
      'plugins/greet.bin': pyc("said = 'v1'"),
      'plugins/rule.txt': "'rule v1'\n",
      "plugins/names/'a'": '',
    }));
    const modes = ['bin', 'fork', 'spawn', 'ctypes', 'names', 'dash-c'];
    for (const mode of modes) assertRuns(ws, ['server.py', mode], `approved, ${mode}`);
    // an edit nothing reads: a fixed `python -c` child (compiled from its own command line) still runs
    fs.appendFileSync(path.join(ws.root, 'README.md'), 'edited after approval\n');
    for (const mode of ['bin', 'names', 'dash-c']) assertRuns(ws, ['server.py', mode], `README.md edited, ${mode}`);
    fs.writeFileSync(path.join(ws.root, 'README.md'), '# approved\n');
    const code = `__import__('os').open(${JSON.stringify(ws.marker)}, 0o101)`;
    const refused = (mode: string, rel: string, why: string): void => {
      const file = path.join(ws.root, rel);
      const r = run(ws, ['server.py', mode]);
      assert.notEqual(r.status, 0, `${mode}: ${r.stdout}`);
      assert.equal(fs.existsSync(ws.marker), false, `${mode}: the changed code ran`);
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${file} (${rel}): ${why}`), `${mode}:\n${r.stderr}`);
      assert.ok(
        report(ws).some((l) => l.file === file),
        `${mode}: reported`,
      );
      fs.rmSync(ws.report, { force: true });
      run(ws, ['server.py', mode], false);
      assert.ok(fs.existsSync(ws.marker), `${mode}: without the guard the changed code runs (control)`);
      fs.rmSync(ws.marker);
    };
    write(ws.root, { 'plugins/rule.txt': code + '\n' });
    for (const mode of ['fork', 'spawn', 'ctypes']) refused(mode, 'plugins/rule.txt', 'it changed since approval');
    write(ws.root, { 'plugins/rule.txt': "'rule v1'\n", 'plugins/greet.bin': pyc(code) });
    refused('bin', 'plugins/greet.bin', 'it changed since approval');
    write(ws.root, { 'plugins/greet.bin': pyc("said = 'v1'"), [`plugins/names/${code.replace(/\//g, '\\x2f')}`]: '' });
    refused('names', `plugins/names/${code.replace(/\//g, '\\x2f')}`, 'it is not in what was approved');
  });

  it("red team 7p, 01: a `python -c` child whose parent took in changed content runs its text under the took-in rule; with no mark it runs, and multiprocessing's own line runs", () => {
    const ws = workspace(() => ({ 'rule.txt': 'v1\n' }));
    const env = (took?: string): Record<string, string> => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: ws.out,
      MCP_GATE_GUARD: ws.manifest,
      MCP_GATE_GUARD_CHILD: '1',
      ...(took ? { MCP_GATE_GUARD_TOOK_IN: took } : {}),
    });
    const code = `open(${JSON.stringify(ws.marker)}, 'w').write('ran'); print('CHANGED')`;
    const child = (e: Record<string, string>, text = code) =>
      spawnSync(PY, ['-S', GUARD, '-c', text], { cwd: ws.root, env: e, encoding: 'utf8' });
    const plain = child(env());
    assert.equal(plain.status, 0, plain.stderr);
    fs.rmSync(ws.marker);
    const rule = path.join(ws.root, 'rule.txt');
    const took = JSON.stringify([rule, 'rule.txt', 'changed', 'a'.repeat(64)]);
    const r = child(env(took));
    assert.notEqual(r.status, 0, r.stdout);
    assert.equal(fs.existsSync(ws.marker), false, 'the -c text did not run');
    assert.match(r.stderr, /refused to load \S+rule\.txt \(rule\.txt\): it changed since approval \(-c /);
    const mp = child(env(took), 'from multiprocessing.resource_tracker import main; main(-1)');
    assert.doesNotMatch(mp.stderr, /mcp-gate-guard/, mp.stderr);
  });

  it('a script started through find -exec or a wrapper is checked as a program it runs (red team 12, 05c)', () => {
    const ws = workspace(() => ({
      'server.py': [
        'import subprocess, sys',
        "argv = {'find': ['find', 'run.sh', '-maxdepth', '0', '-exec', 'sh', 'run.sh', ';'],",
        "        'stdbuf': ['stdbuf', '-oL', 'sh', 'run.sh'],",
        "        'plain': ['find', '.', '-maxdepth', '1', '-name', '*.md']}[sys.argv[1]]",
        'subprocess.run(argv, check=True)',
        "print('APPROVED')",
        '',
      ].join('\n'),
      'run.sh': 'echo approved-run\n',
    }));
    for (const m of ['find', 'stdbuf', 'plain']) assertRuns(ws, ['server.py', m], m);
    write(ws.root, { 'README.md': '# edited\n' });
    assertRuns(ws, ['server.py', 'plain'], 'find alone, after an edit elsewhere');
    write(ws.root, { 'run.sh': `echo ran > ${ws.marker}\n` });
    for (const m of ['find', 'stdbuf']) {
      const r = run(ws, ['server.py', m]);
      assert.equal(fs.existsSync(ws.marker), false, `${m}: the changed script ran\n${r.stderr}`);
      assert.match(r.stderr, /mcp-gate-guard: refused to load \S+\/run\.sh \(run\.sh\): it changed since approval/, m);
      fs.rmSync(ws.report, { force: true });
    }
  });

  it('red team 7p, 02: after taking in changed content, a shell line (shell=True, os.system, sh -c) is refused and python -c is refused by its own guard; plain programs (git status, echo) and a guarded interpreter start', () => {
    const ws = workspace(() => ({
      'server.py': [
        'import subprocess, sys, os',
        "line = open('task.txt').read().strip()",
        'mode = sys.argv[1]',
        "if mode == 'plain':",
        "    subprocess.run(['git', 'status', '--short'], capture_output=True)",
        "    subprocess.run(['echo', line], capture_output=True, check=True)",
        "elif mode == 'shell':",
        '    subprocess.run(line, shell=True)',
        "elif mode == 'system':",
        '    os.system(line)',
        "elif mode == 'node':",
        '# an interpreter is guarded itself (it refuses its own -e text): it starts, with the mark of what was taken in',
        "    print(subprocess.run([sys.argv[2], '-p', 'process.env.MCP_GATE_GUARD_TOOK_IN || \"none\"'], capture_output=True, text=True).stdout)",
        '# red team 12, 04b, 05b, 05c: options before -c, a wrapper or find -exec before the shell',
        "elif mode == 'sh-o':",
        "    subprocess.run(['sh', '-o', 'errexit', '-c', line])",
        "elif mode == 'sh+e':",
        "    subprocess.run(['sh', '+e', '-c', line])",
        "elif mode == 'find':",
        "    subprocess.run(['find', '/etc/hostname', '-maxdepth', '0', '-exec', 'sh', '-c', line, ';'])",
        "elif mode == 'wrapped':",
        "    subprocess.run(['timeout', '5', 'nice', '-n', '5', 'sh', '-c', line])",
        "elif mode == 'stdbuf':",
        "    subprocess.run(['stdbuf', '-oL', 'sh', '-c', line])",
        "elif mode == 'python-W':",
        `    subprocess.run([sys.executable, '-S', ${JSON.stringify(GUARD)}, '-W', 'ignore', '-c', 'import os; os.system(%r)' % line], check=True)`,
        "elif mode == 'script-args':",
        "    subprocess.run([sys.executable, 'worker.py', '-c', 'cfg'], check=True)",
        "    subprocess.run(['wc', '-c', 'task.txt'], check=True, capture_output=True)",
        "print('APPROVED')",
        '',
      ].join('\n'),
      'task.txt': 'true\n',
      'worker.py': "import sys\nprint('worker', sys.argv[1:])\n",
    }));
    const modes = ['shell', 'system', 'sh-o', 'sh+e', 'find', 'wrapped', 'stdbuf', 'python-W'];
    for (const m of ['plain', 'script-args', 'node', ...modes]) assertRuns(ws, ['server.py', m, process.execPath], `approved, ${m}`);
    write(ws.root, { 'task.txt': `echo ran > ${ws.marker}\n` });
    for (const m of ['plain', 'script-args']) {
      const ok = run(ws, ['server.py', m, process.execPath]);
      assert.equal(ok.status, 0, ok.stderr);
      assert.deepEqual(report(ws), [], `${m}: an edited data file and plain programs (a script's own -c argument): nothing refused`);
    }
    const node = run(ws, ['server.py', 'node', process.execPath]);
    assert.equal(node.status, 0, node.stderr);
    assert.match(node.stdout, /^\[.*"task\.txt".*\]$/m, 'node started with the mark of what was taken in');
    for (const m of modes) {
      const r = run(ws, ['server.py', m, process.execPath]);
      assert.notEqual(r.status, 0, `${m}: ${r.stdout}`);
      assert.equal(fs.existsSync(ws.marker), false, `${m}: the line ran`);
      assert.match(
        r.stderr,
        // a wrapper at the front (timeout) reads files no guard sees itself: the workspace differs, refused as such
        m === 'wrapped'
          ? /refused to load \S+task\.txt \(task\.txt\): it changed since approval$/m
          : m === 'python-W' // a guarded interpreter starts; its guard refuses its -c text
            ? /refused to load \S+task\.txt \(task\.txt\): it changed since approval \(-c \(the command line of a child/
            : /refused to load \S+task\.txt \(task\.txt\): it changed since approval \(spawn \S+: started after this process took in a file that is not as approved \(it may run code it is given: .*\)\)/,
        m,
      );
      if (m === 'wrapped') assert.equal(report(ws)[0].how, 'spawn timeout (it reads workspace files no guard sees)');
      fs.rmSync(ws.report, { force: true });
    }
  });

  it("red team 7p, 03: a child whose environment makes it load code (BASH_ENV, exported functions, LD_PRELOAD, PERL5OPT, a library path in a scratch folder) is refused; the guard keeps MCP Gate's loader list", () => {
    const ws = workspace((w) => ({
      'server.py': [
        'import subprocess, sys, os',
        'extra = dict(a.split("=", 1) for a in sys.argv[1:])',
        "subprocess.run(['bash', '-c', 'true'], env={**os.environ, **extra}, stdin=subprocess.DEVNULL, check=True)",
        "print('APPROVED')",
        '',
      ].join('\n'),
      'env.sh': 'true\n',
    }));
    assertRuns(ws, ['server.py'], 'no variable');
    assertRuns(ws, ['server.py', 'PYTHONUNBUFFERED=1', 'GIT_TERMINAL_PROMPT=0', 'ENV=production'], 'harmless variables');
    for (const v of [
      'BASH_ENV=env.sh',
      'BASH_FUNC_true%%=() { echo x; }',
      'LD_PRELOAD=/usr/lib/nothing.so',
      'PERL5OPT=-Mstrict',
      `LD_LIBRARY_PATH=${ws.scratch}`,
    ]) {
      const r = run(ws, ['server.py', v]);
      assert.notEqual(r.status, 0, `${v}: ${r.stdout}`);
      assert.match(r.stderr, new RegExp(`spawn with ${v.split('=')[0].replace(/%/g, '%')}=.* in its environment`), v);
      fs.rmSync(ws.report, { force: true });
    }
    // the guard's copy of loader-variables.ts's list of variables that decide which code runs
    const lists = spawnSync(
      PY,
      [
        '-S',
        '-c',
        `import sys, json; sys.path.insert(0, ${JSON.stringify(path.dirname(GUARD))}); import mcp_gate_guard as g; print(json.dumps([sorted(g.LOADER_EXACT), list(g.LOADER_PREFIXES)]))`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(lists.status, 0, lists.stderr);
    assert.deepEqual(JSON.parse(lists.stdout), [[...LOADER_EXACT].sort(), [...LOADER_PREFIXES]]);
  });

  describe('starts after taking in: a guarded interpreter, a safe program of command_lines.json or a simple sh -c line (red team 18)', () => {
    // Each mode starts a fixed program line after reading task.txt (`before`: without reading it). Once task.txt
    // changed, only a start the rule allows runs (CONTRACT.md, "Starts after taking in"); any other one — whatever
    // program it is, known to run code or not — is refused while the workspace is not as approved.
    const STARTED =
      /refused to load \S+task\.txt \(task\.txt\): it changed since approval \(spawn \S+: started after this process took in a file that is not as approved \(it may run code it is given: .*\)\)/;
    function lineWorkspace(): Ws {
      const ws = workspace((w) => ({
        'server.py': [
          'import subprocess, sys, os',
          "if sys.argv[2:] != ['before']:",
          "    task = open('task.txt').read()",
          'mode = sys.argv[1]',
          `MARK = ${JSON.stringify(w.marker)}`,
          `OUT = ${JSON.stringify(w.out)}`,
          'LINES = {',
          "    'sed-e': (['sed', '-n', '-e', '1e touch ' + MARK, 'data.txt'], ''),",
          "    'gdb': (['gdb', '-nx', '-batch', '-ex', 'shell touch ' + MARK], ''),",
          "    'ed': (['ed', '-s', 'data.txt'], '!touch ' + MARK + '\\nq\\n'),",
          "    'sh-line': (['sh', '-c', 'touch ' + MARK + '; true'], ''),",
          "    'xargs': (['xargs', 'touch', MARK], ''),",
          "    'env-wrap': (['env', 'X=1', 'touch', MARK], ''),",
          "    'tar-abbrev': (['tar', '--to-com=touch ' + MARK, '-xf', os.path.join(OUT, 'a.tar')], ''),",
          "    'ssh-cluster': (['ssh', '-vo', 'ProxyCommand=touch ' + MARK, '-o', 'BatchMode=yes', 'x'], ''),",
          "    'git-c': (['git', '-c', 'alias.zz=!touch ' + MARK, 'zz'], ''),",
          "    'git-exec-path': (['git', '--exec-path=' + os.path.join(OUT, 'bin'), 'zz'], ''),",
          "    'git-config-global': (['git', 'zz'], ''),",
          "    'git': (['git', '--version'], ''),",
          "    'git-status': (['git', 'status', '--short'], ''),",
          "    'ls': (['ls', '-la'], ''),",
          "    'sh-simple': (['sh', '-c', 'git --version'], ''),",
          "    'rg': (['rg', '-n', 'server', 'data.txt'], ''),",
          "    'grep': (['grep', '-n', 'server', 'data.txt'], ''),",
          '}',
          'argv, stdin = LINES[mode]',
          'env = None',
          "if mode == 'git-config-global':",
          "    env = {**os.environ, 'GIT_CONFIG_GLOBAL': 'gitconfig'}",
          'r = subprocess.run(argv, capture_output=True, text=True, input=stdin, env=env, timeout=20)',
          'print(r.stdout + r.stderr)',
          "print('APPROVED')",
          '',
        ].join('\n'),
        'task.txt': 'nothing\n',
        'data.txt': 'server\n',
        gitconfig: `[alias]\n\tzz = !touch ${w.marker}\n`,
      }));
      write(ws.out, { 'bin/git-zz': `#!/bin/sh\ntouch ${ws.marker}\n`, 'data.txt': 'x\n' });
      fs.chmodSync(path.join(ws.out, 'bin', 'git-zz'), 0o755);
      const made = spawnSync('tar', ['-cf', 'a.tar', 'data.txt'], { cwd: ws.out, encoding: 'utf8' });
      assert.equal(made.status, 0, made.stderr);
      fs.rmSync(path.join(ws.out, 'data.txt'));
      const init = spawnSync('git', ['init', '-q', '.'], { cwd: ws.root, encoding: 'utf8', env: { ...process.env, HOME: ws.out } });
      assert.equal(init.status, 0, init.stderr);
      approve(ws);
      return ws;
    }
    const refusedModes = [
      'sed-e',
      'gdb',
      'ed',
      'sh-line',
      'xargs',
      'env-wrap',
      'tar-abbrev',
      'ssh-cluster',
      'git-c',
      'git-exec-path',
      'git-config-global',
    ];
    const allowedModes = ['git', 'git-status', 'ls', 'sh-simple', 'rg', 'grep'];
    const WRAPPERS = ['xargs', 'env-wrap'];

    it('after taking in a changed file: sed -e, gdb -ex, ed on its stdin, a sh -c line that is not simple, xargs and env wrappers, tar --to-com, ssh -vo ProxyCommand, git -c, git --exec-path and GIT_CONFIG_GLOBAL are refused; before, and after a README edit never read, they run', () => {
      const ws = lineWorkspace();
      for (const m of refusedModes) {
        const r = run(ws, ['server.py', m, 'before']);
        assert.equal(r.status, 0, `${m}, before taking in: ${r.stderr}`);
        assert.deepEqual(report(ws), [], `${m}, before taking in: nothing refused`);
        assert.equal(fs.existsSync(ws.marker), true, `${m}: before anything was taken in the line runs (its code too)\n${r.stdout}`);
        fs.rmSync(ws.marker);
      }
      write(ws.root, { 'README.md': '# edited\n' });
      // (xargs and env read files no guard sees themselves, and GIT_CONFIG_GLOBAL names a workspace file: refused
      // while the workspace differs, whatever was taken in)
      for (const m of refusedModes.filter((x) => !WRAPPERS.includes(x) && x !== 'git-config-global')) {
        const r = run(ws, ['server.py', m]);
        assert.equal(r.status, 0, `${m}, README edited (never read): ${r.stderr}`);
        assert.deepEqual(report(ws), [], `${m}: nothing refused`);
        fs.rmSync(ws.marker, { force: true });
      }
      write(ws.root, { 'README.md': '# approved\n', 'task.txt': 'changed\n' });
      for (const m of refusedModes) {
        const r = run(ws, ['server.py', m]);
        assert.notEqual(r.status, 0, `${m}: ${r.stdout}`);
        assert.equal(fs.existsSync(ws.marker), false, `${m}: the line ran`);
        if (m === 'git-config-global')
          // a variable naming a workspace file: refused by the environment check first
          assert.match(
            r.stderr,
            /refused to load \S+task\.txt \(task\.txt\): it changed since approval \(spawn with GIT_CONFIG_GLOBAL=gitconfig in its environment/,
            m,
          );
        else if (WRAPPERS.includes(m)) assert.match(r.stderr, /refused to load \S+task\.txt \(task\.txt\): it changed since approval$/m, m);
        else assert.match(r.stderr, STARTED, m);
        fs.rmSync(ws.report, { force: true });
      }
    });

    it('after taking in a changed file: git --version, git status, ls, sh -c with a simple line, rg and grep start', () => {
      const ws = lineWorkspace();
      write(ws.root, { 'task.txt': 'changed\n' });
      for (const m of allowedModes) {
        const r = run(ws, ['server.py', m]);
        assert.equal(r.status, 0, `${m}: ${r.stderr}`);
        assert.match(r.stdout, /APPROVED/, m);
        assert.doesNotMatch(r.stderr, /mcp-gate-guard/, m);
        assert.deepEqual(report(ws), [], `${m}: nothing refused`);
      }
      assert.match(run(ws, ['server.py', 'sh-simple']).stdout, /^git version /m, 'sh -c ran git');
      assert.match(run(ws, ['server.py', 'git-status']).stdout, /\?\? |M task\.txt|^\s*$/m, 'git status ran');
      assert.match(run(ws, ['server.py', 'rg']).stdout, /^1:server$/m, 'rg ran');
    });
  });

  describe('starts after taking in: the program is the file it resolves to, in a system folder, and PATH is as started (red team 19)', () => {
    // A link or a copy named git or python3 in the home folder (or a folder put first in PATH) is none of the
    // table's, whatever its name: what counts is the file it resolves to. And PATH, HOME, XDG_CONFIG_HOME and git's
    // variables must be as the process started with (git runs `git-<alias>` from PATH).
    const STARTED =
      /refused to load \S+task\.txt \(task\.txt\): it changed since approval \(spawn \S+: started after this process took in a file that is not as approved \(it may run code it is given: (.*)\)\)/;
    function nameWorkspace(): { ws: Ws; bin: string; gitbin: string } {
      const ws = workspace((w) => ({
        'server.py': [
          'import subprocess, sys, os',
          "if sys.argv[2:] != ['before']:",
          "    task = open('task.txt').read()",
          'mode = sys.argv[1]',
          `MARK = ${JSON.stringify(w.marker)}`,
          `GITBIN = ${JSON.stringify(path.join(w.out, 'gitbin'))}`,
          'LINES = {',
          "    'home-git': (['git', '-s'], 'touch ' + MARK + '\\n'),",
          "    'home-python3': (['python3', '-s'], 'touch ' + MARK + '\\n'),",
          "    'sh-fake-git': (['sh', '-c', 'git status'], ''),",
          "    'path-changed': (['git', 'zz'], ''),",
          "    'usr-bin-git': (['/usr/bin/git', '--version'], ''),",
          "    'git-status': (['git', 'status', '--short'], ''),",
          "    'venv-python': ([os.path.join(os.path.dirname(GITBIN), 'venv', 'bin', 'python'), '-V'], ''),",
          '}',
          'argv, stdin = LINES[mode]',
          'env = None',
          "if mode == 'path-changed':",
          "    env = {**os.environ, 'PATH': GITBIN + ':' + os.environ['PATH']}",
          'r = subprocess.run(argv, capture_output=True, text=True, input=stdin, env=env, timeout=20)',
          'print(r.stdout + r.stderr)',
          "print('APPROVED')",
          '',
        ].join('\n'),
        'task.txt': 'nothing\n',
      }));
      // the home folder (HOME of the run, outside the workspace and scratch): bin/git and bin/python3 are links to
      // /bin/sh; fake/git a script; gitbin/git-zz what `git zz` runs from PATH
      const bin = path.join(ws.out, 'bin');
      write(ws.out, { 'fake/git': `#!/bin/sh\ntouch ${ws.marker}\n`, 'gitbin/git-zz': `#!/bin/sh\ntouch ${ws.marker}\n` });
      fs.mkdirSync(bin, { recursive: true });
      fs.symlinkSync('/bin/sh', path.join(bin, 'git'));
      fs.symlinkSync('/bin/sh', path.join(bin, 'python3'));
      // a virtual environment's python: a link to the system's (what multiprocessing starts)
      fs.mkdirSync(path.join(ws.out, 'venv', 'bin'), { recursive: true });
      fs.symlinkSync(fs.realpathSync(PY), path.join(ws.out, 'venv', 'bin', 'python'));
      for (const f of ['fake/git', 'gitbin/git-zz']) fs.chmodSync(path.join(ws.out, f), 0o755);
      const init = spawnSync('git', ['init', '-q', '.'], { cwd: ws.root, encoding: 'utf8', env: { ...process.env, HOME: ws.out } });
      assert.equal(init.status, 0, init.stderr);
      approve(ws);
      return { ws, bin, gitbin: path.join(ws.out, 'gitbin') };
    }
    const SYSTEM_PATH = process.env.PATH ?? '/usr/bin:/bin';
    // each refused mode, with the PATH the server is started with (the home bin or the fake git's folder first: PATH
    // itself is then as started, only what it finds is not a system program)
    function refused(ws: Ws, bin: string): Record<string, [string, RegExp]> {
      return {
        'home-git': [`${bin}:${SYSTEM_PATH}`, /^the program is \S+\/bin\/git \(\/\S+\), not a file of the system's bin folders$/],
        'home-python3': [`${bin}:${SYSTEM_PATH}`, /^the program is \S+\/bin\/python3 \(\/\S+\), not a file of the system's bin folders$/],
        'sh-fake-git': [
          `${path.join(ws.out, 'fake')}:${SYSTEM_PATH}`,
          /^a -c line: the program is \S+\/fake\/git, not a file of the system's bin folders$/,
        ],
        'path-changed': [SYSTEM_PATH, /^PATH in its environment$/],
      };
    }

    it('after taking in a changed file: a link $HOME/bin/git or python3 to /bin/sh, sh -c "git status" finding a fake git along PATH, and git started with another PATH are refused; before taking in they run', () => {
      const { ws, bin } = nameWorkspace();
      for (const [m, [p]] of Object.entries(refused(ws, bin))) {
        const r = run(ws, ['server.py', m, 'before'], true, { PATH: p });
        assert.equal(r.status, 0, `${m}, before taking in: ${r.stderr}`);
        assert.deepEqual(report(ws), [], `${m}, before taking in: nothing refused`);
        assert.equal(fs.existsSync(ws.marker), true, `${m}: before anything was taken in the start runs (its code too)\n${r.stdout}`);
        fs.rmSync(ws.marker);
      }
      write(ws.root, { 'task.txt': 'changed\n' });
      for (const [m, [p, why]] of Object.entries(refused(ws, bin))) {
        const r = run(ws, ['server.py', m], true, { PATH: p });
        assert.notEqual(r.status, 0, `${m}: ${r.stdout}`);
        assert.equal(fs.existsSync(ws.marker), false, `${m}: the start ran`);
        const got = STARTED.exec(r.stderr);
        assert.ok(got, `${m}: ${r.stderr}`);
        assert.match(got[1], why, m);
        fs.rmSync(ws.report, { force: true });
      }
    });

    it("after taking in a changed file: /usr/bin/git --version, git status with PATH as started and a virtual environment's link to the system python run", () => {
      const { ws } = nameWorkspace();
      write(ws.root, { 'task.txt': 'changed\n' });
      for (const m of ['usr-bin-git', 'git-status', 'venv-python']) {
        const r = run(ws, ['server.py', m]);
        assert.equal(r.status, 0, `${m}: ${r.stderr}`);
        assert.match(r.stdout, /APPROVED/, m);
        assert.doesNotMatch(r.stderr, /mcp-gate-guard/, m);
        assert.deepEqual(report(ws), [], `${m}: nothing refused`);
      }
      assert.match(run(ws, ['server.py', 'usr-bin-git']).stdout, /^git version /m, '/usr/bin/git ran');
      assert.match(run(ws, ['server.py', 'git-status']).stdout, /\?\? |M task\.txt/m, 'git status ran');
      assert.match(run(ws, ['server.py', 'venv-python']).stdout, /^Python 3\./m, 'the venv python ran');
    });
  });

  it('git after taking in: a repository it made and the commands servers use go ahead; a config key, a hook or a ~/.gitconfig it wrote is refused (gitfiles.py, red team 19)', () => {
    const ws = workspace((w) => ({
      'server.py': [
        'import json, os, shutil, subprocess',
        `S = ${JSON.stringify(w.scratch)}`,
        "shutil.rmtree(os.path.join(S, 'r'), ignore_errors=True)",
        "shutil.rmtree(os.path.join(S, 'home'), ignore_errors=True)",
        "os.makedirs(os.path.join(S, 'home'))",
        "for s in json.load(open('steps.json')):",
        '    if isinstance(s, dict):',
        "        p = os.path.join(S, s['write'])",
        '        os.makedirs(os.path.dirname(p), exist_ok=True)',
        "        open(p, 'w').write(s['text'])",
        '        os.chmod(p, 0o755)',
        '        continue',
        "    w = [x.replace('@S@', S).replace('@O@', os.environ['OUTSIDE']).replace('@W@', os.getcwd()) for x in s]",
        "    r = subprocess.run(['git'] + w, capture_output=True, text=True, timeout=20)",
        '    assert r.returncode == 0, r.stderr',
        "print('APPROVED')",
        '',
      ].join('\n'),
      'steps.json': JSON.stringify(EVERYDAY),
    }));
    // (a terminal: git's default editor is vi; a folder outside the workspace and scratch folders)
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-outside-')));
    made.push(outside);
    // (and a workspace folder first on PATH, as `uv run` puts one)
    const home = {
      HOME: path.join(ws.scratch, 'home'),
      TERM: 'xterm',
      OUTSIDE: outside,
      PATH: `${path.join(ws.root, 'bin')}:${process.env.PATH ?? ''}`,
    };
    const first = run(ws, ['server.py'], true, home);
    assert.equal(first.status, 0, first.stderr);
    write(ws.root, { 'README.md': '# edited\n', 'steps.json': JSON.stringify([...EVERYDAY, [...R, 'diff', '--stat']]) });
    const again = run(ws, ['server.py'], true, home);
    assert.equal(again.status, 0, `the same commands after taking in a changed steps.json: ${again.stderr}`);
    assert.match(again.stdout, /APPROVED/);
    write(ws.root, { 'README.md': '# approved\n' });
    const attacks: [string, unknown[], RegExp, Record<string, string>?][] = [
      [
        'core.fsmonitor',
        [...INIT, [...R, 'config', 'core.fsmonitor', `touch ${ws.marker}; false`], [...R, 'status']],
        /git, obeying \S+\/r\/\.git\/config \(core\.fsmonitor\), which is not as approved/,
      ],
      ['an alias', [...INIT, [...R, 'config', 'alias.p', `!touch ${ws.marker}`], [...R, 'p']], /git p, not a git command of the table/],
      [
        'a hook the process wrote',
        [
          ...INIT,
          { write: 'r/.git/hooks/pre-commit', text: `#!/bin/sh\ntouch ${ws.marker}\n` },
          [...R, 'commit', '-q', '--allow-empty', '-m', 'x'],
        ],
        /git, with the hook \S+\/r\/\.git\/hooks\/pre-commit, which is not as approved/,
      ],
      [
        'a repository made outside the workspace and scratch folders (red team 21, g01)',
        [
          ['init', '-q', '@O@/r'],
          ['-C', '@O@/r', 'config', 'core.fsmonitor', `touch ${ws.marker}; false`],
          ['-C', '@O@/r', 'status'],
        ],
        /git, obeying \S+\/r\/\.git\/config \(core\.fsmonitor\), which is not as approved/,
      ],
      [
        'a gitdir: file whose path ends in a blank (g03)',
        [['-C', 'sub2', 'status']],
        /git, obeying .*\/gd2 \/config \(core\.fsmonitor\), which is not as approved/,
        {
          'sub2/.git': 'gitdir: ../gd2 \n',
          'gd2 /HEAD': 'ref: refs/heads/main\n',
          'gd2 /config': `[core]\n\tfsmonitor = "touch ${ws.marker}; false"\n`,
          'gd2 /objects/info/.keep': '',
          'gd2 /refs/heads/.keep': '',
        },
      ],
      [
        'a push to <path>, which git opens as <path>.git, with a hook (g04)',
        [...INIT, [...R, 'commit', '-q', '--allow-empty', '-m', 'x'], [...R, 'push', '-q', '@W@/dst', 'HEAD:refs/heads/x']],
        /git, with the hook \S+\/dst\.git\/hooks\/pre-receive, which is not as approved/,
        {
          'dst.git/HEAD': 'ref: refs/heads/main\n',
          'dst.git/config': '[core]\n\tbare = true\n',
          'dst.git/objects/info/.keep': '',
          'dst.git/refs/heads/.keep': '',
          'dst.git/hooks/pre-receive': `#!/bin/sh\ntouch ${ws.marker}\n`,
        },
      ],
      [
        'a ~/.gitconfig the process wrote',
        [{ write: 'home/.gitconfig', text: `[core]\n\tfsmonitor = touch ${ws.marker}; false\n` }, ...INIT, [...R, 'status']],
        /git, obeying \S+\/home\/\.gitconfig \(core\.fsmonitor\), which is not as approved/,
      ],
      [
        'a gitdir: file of the workspace pointing at a repository laid out in it',
        [['-C', 'sub', 'status']],
        /git, obeying \S+\/gd\/config \(core\.fsmonitor\), which is not as approved/,
        {
          'sub/.git': 'gitdir: ../gd\n',
          'gd/HEAD': 'ref: refs/heads/main\n',
          'gd/config': `[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch ${ws.marker}; false"\n`,
          'gd/objects/info/.keep': '',
          'gd/refs/heads/.keep': '',
        },
      ],
    ];
    for (const [what, steps, why, files] of attacks) {
      write(ws.root, { ...(files ?? {}), 'steps.json': JSON.stringify(steps) });
      const r = run(ws, ['server.py'], true, home);
      assert.notEqual(r.status, 0, `${what}: ${r.stdout}`);
      assert.equal(fs.existsSync(ws.marker), false, `${what}: git ran what it was told`);
      assert.match(
        r.stderr,
        /refused to load \S+steps\.json \(steps\.json\): it changed since approval \(spawn git: started after this process took in/,
        `${what}: ${r.stderr}`,
      );
      assert.match(r.stderr, why, `${what}: ${r.stderr}`);
      fs.rmSync(ws.report, { force: true });
    }
    // what git itself would run is off after taking in (git.neutral): no editor, no hook, no submodule, no ssh found
    // along PATH
    write(ws.root, {
      'bin/ssh': `#!/bin/sh\ntouch ${ws.marker}\n`,
      'evil.git/HEAD': 'ref: refs/heads/main\n',
      'evil.git/config': '[core]\n\tbare = true\n',
      'evil.git/objects/info/.keep': '',
      'evil.git/refs/heads/.keep': '',
      'evil.git/hooks/pre-receive': `#!/bin/sh\ntouch ${ws.marker}\n`,
    });
    for (const f of ['bin/ssh', 'evil.git/hooks/pre-receive']) fs.chmodSync(path.join(ws.root, f), 0o755);
    for (const [what, steps, shows] of [
      [
        'git commit with no message (vi would read a ~/.vimrc the process wrote)',
        [...INIT, { write: 'home/.vimrc', text: `:!touch ${ws.marker}\n:qa!\n` }, [...R, 'commit', '-q', '--allow-empty']],
        /Aborting commit due to empty commit message/,
      ],
      [
        'git add -e (an editor of the patch)',
        [...INIT, { write: 'home/.vimrc', text: `:!touch ${ws.marker}\n:qa!\n` }, [...R, 'add', '-e']],
        /AssertionError/,
      ],
      [
        'a push to a repository on this machine named inside an option (receive-pack there obeys its hooks; red team 22)',
        [...INIT, [...R, 'commit', '-q', '--allow-empty', '-m', 'x'], [...R, 'push', '--repo=@W@/evil.git', '--all']],
        /transport 'file' not allowed/,
      ],
      [
        'ssh for an ssh:// remote, a new bin/ssh first on PATH',
        [...INIT, ['ls-remote', 'ssh://127.0.0.1:1/x']],
        /ssh: connect to host 127\.0\.0\.1 port 1/,
      ],
    ] as [string, unknown[], RegExp][]) {
      write(ws.root, { 'steps.json': JSON.stringify(steps) });
      const r = run(ws, ['server.py'], true, home);
      assert.equal(fs.existsSync(ws.marker), false, `${what}: the editor ran`);
      assert.doesNotMatch(r.stderr, /mcp-gate-guard/, what);
      assert.match(r.stderr, shows, `${what}: ${r.stderr}`);
    }
  });

  it('red team 20: a changed file linked by folder descriptors onto a name the process wrote and removed (r09), or a folder renamed onto its own folder (r10), is taken in', () => {
    const ws = workspace((w) => ({
      'expr.txt': "'APPROVED'\n",
      'cfg/expr.txt': "'APPROVED'\n",
      'server.py': [
        'import os, sys',
        'W = os.path.dirname(os.path.abspath(__file__))',
        `S = ${JSON.stringify(w.scratch)}`,
        "if sys.argv[1] == 'link':",
        "    n = 'x%d.txt' % os.getpid()",
        "    open(os.path.join(S, n), 'w').write('1')",
        '    os.unlink(os.path.join(S, n))',
        '    wfd, sfd = os.open(W, os.O_RDONLY | os.O_DIRECTORY), os.open(S, os.O_RDONLY | os.O_DIRECTORY)',
        "    os.link('expr.txt', n, src_dir_fd=wfd, dst_dir_fd=sfd)",
        '    text = open(os.path.join(S, n)).read()',
        'else:',
        "    d = os.path.join(S, 'd%d' % os.getpid())",
        '    os.mkdir(d)',
        "    open(os.path.join(d, 'expr.txt'), 'w').write('1')",
        "    os.remove(os.path.join(d, 'expr.txt'))",
        '    os.rmdir(d)',
        "    os.rename(os.path.join(W, 'cfg'), d)",
        '    try:',
        "        text = open(os.path.join(d, 'expr.txt')).read()",
        '    finally:',
        "        os.rename(d, os.path.join(W, 'cfg'))",
        'print(eval(text))',
        '',
      ].join('\n'),
    }));
    for (const mode of ['link', 'rename']) assertRuns(ws, ['server.py', mode], mode);
    write(ws.root, { 'README.md': '# edited\n' });
    for (const mode of ['link', 'rename']) assert.match(run(ws, ['server.py', mode]).stdout, /APPROVED/, `${mode}, README edited`);
    write(ws.root, { 'README.md': '# approved\n' });
    for (const [mode, file] of [
      ['link', 'expr.txt'],
      ['rename', 'cfg/expr.txt'],
    ]) {
      approve(ws);
      // (a text of its own per mode: a scratch file holding content the approval has anywhere is approved content)
      write(ws.root, { [file]: `(open(${JSON.stringify(ws.marker)}, 'w').write('ran'), 'CHANGED ${mode}')[1]\n` });
      const r = run(ws, ['server.py', mode]);
      assert.notEqual(r.status, 0, `${mode}: ${r.stdout}`);
      assert.equal(fs.existsSync(ws.marker), false, `${mode}: the changed text ran`);
      assert.match(r.stderr, /mcp-gate-guard: refused to load \S+ \(|mcp-gate-guard: refused/, `${mode}: ${r.stderr}`);
      fs.rmSync(ws.report, { force: true });
    }
  });

  it('red team 7p, 04 and 12: a changed file GNU readline or OpenSSL reads itself is taken in', () => {
    const ws = workspace(() => ({
      'server.py': [
        'import sys',
        "if sys.argv[1] == 'readline':",
        '    import readline',
        "    readline.read_history_file('session.hist')",
        '    text = readline.get_history_item(1)',
        "elif sys.argv[1] == 'object':",
        '    import readline',
        '    class P:',
        '        def __fspath__(self):',
        '            f = sys._getframe(1)',
        "            while f and f.f_code.co_name != '_take_in_names': f = f.f_back",
        "            return 'README.md' if f else 'session.hist'   # the guard is shown another name than readline",
        '    readline.read_history_file(P())',
        '    text = readline.get_history_item(1)',
        'else:',
        '    import ssl',
        '    try:',
        "        ssl.create_default_context().load_verify_locations('ca.pem')",
        '    except ssl.SSLError:',
        '        pass',
        "    text = open('README.md').read().replace('# approved', 'print(\"APPROVED\")')",
        'exec(text)',
        "print('APPROVED')",
        '',
      ].join('\n'),
      'session.hist': 'x = 1\n',
      'ca.pem': 'not a certificate\n',
    }));
    for (const m of ['readline', 'ssl']) assertRuns(ws, ['server.py', m], m);
    write(ws.root, { 'session.hist': `open(${JSON.stringify(ws.marker)}, 'w').write('ran')\n`, 'ca.pem': 'another\n' });
    assertRefused(ws, ['server.py', 'readline'], path.join(ws.root, 'session.hist'), 'changed', undefined, false);
    assert.equal(fs.existsSync(ws.marker), false);
    fs.rmSync(ws.report);
    assertRefused(ws, ['server.py', 'ssl'], path.join(ws.root, 'ca.pem'), 'changed', undefined, false);
    // a path object is asked for its name again by the library: it counts as taken in whatever it told the guard
    const r = run(ws, ['server.py', 'object']);
    assert.equal(fs.existsSync(ws.marker), false, `the changed text ran:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /refused to load \(a path object: P\)/);
  });

  it('red team 8p, 10: a module a .pth line imports is not exempt: its exec of text from a changed file is refused', () => {
    const ws = workspace(() => ({
      'server.py':
        "import site, sys\nsite.addsitedir(sys.argv[1])\nif sys.argv[1] == 'vendor':\n    import proj_rules\n    print(proj_rules.SAID)\nelse:\n    print(said)\n",
      'inline/inline.pth': "import builtins; exec(open('rules/rule.txt').read(), vars(builtins))\n",
      'vendor/proj.pth': 'import proj_rules\n',
      'vendor/proj_rules.py': [
        'import os',
        "text = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'rules', 'rule.txt')).read()",
        'ns = {}',
        "exec('\\n'.join(l for l in text.splitlines() if not l.lstrip().startswith('#')), ns)",
        "SAID = ns.get('said')",
        '',
      ].join('\n'),
      'rules/rule.txt': "# rule\nsaid = 'APPROVED'\n",
    }));
    for (const m of ['vendor', 'inline']) assertRuns(ws, ['server.py', m], m);
    write(ws.root, { 'rules/rule.txt': `# rule v2\n${evil(ws)}said = 'CHANGED'\n` });
    const rule = path.join(ws.root, 'rules', 'rule.txt');
    assertRefused(ws, ['server.py', 'vendor'], rule, 'changed');
    fs.rmSync(ws.marker);
    fs.rmSync(ws.report);
    // a workspace .pth line's own exec of what it read (only the line itself is exempt)
    assertRefused(ws, ['server.py', 'inline'], rule, 'changed');
  });

  it('red team 8p, 11: a sqlite file: URI is decoded as SQLite does (%XX, //localhost), for connect and ATTACH; a path object for connect', () => {
    const ws = workspace(() => ({
      'server.py': [
        'import os, sqlite3, sys, urllib.parse',
        "db = os.path.abspath('rule store/rules.db')",
        'q = urllib.parse.quote(db)',
        "if sys.argv[1] == 'quote':",
        "    c = sqlite3.connect('file:' + q + '?mode=ro', uri=True)",
        "elif sys.argv[1] == 'localhost':",
        "    c = sqlite3.connect('file://localhost' + q + '#x', uri=True)",
        "elif sys.argv[1] == 'pathlib':",
        '    import pathlib; c = sqlite3.connect(pathlib.Path(db))',
        "elif sys.argv[1] == 'object':",
        '    class P:',
        '        def __fspath__(self):',
        '            f = sys._getframe(1)',
        "            while f and f.f_code.co_name != '_on_sqlite': f = f.f_back",
        "            return ':memory:' if f else db   # the guard is shown another name than SQLite",
        '    c = sqlite3.connect(P())',
        'else:',
        "    c = sqlite3.connect(':memory:', uri=True); c.execute(\"attach database 'file:%s?mode=ro' as r\" % q)",
        "exec(c.execute('select src from r.t' if sys.argv[1] == 'attach' else 'select src from t').fetchone()[0])",
        "print('APPROVED')",
        '',
      ].join('\n'),
    }));
    const db = (src: string): void => {
      const f = path.join(ws.root, 'rule store', 'rules.db');
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.rmSync(f, { force: true });
      const w = spawnSync(
        PY,
        [
          '-c',
          'import sqlite3, sys\nc = sqlite3.connect(sys.argv[1]); c.execute("create table t(src)"); c.execute("insert into t values (?)", (sys.argv[2],)); c.commit()',
          f,
          src,
        ],
        { encoding: 'utf8' },
      );
      assert.equal(w.status, 0, w.stderr);
    };
    db('x = 1');
    approve(ws);
    for (const m of ['quote', 'localhost', 'attach', 'pathlib']) assertRuns(ws, ['server.py', m], m);
    db(evil(ws));
    for (const m of ['quote', 'localhost', 'attach', 'pathlib']) {
      assertRefused(ws, ['server.py', m], path.join(ws.root, 'rule store', 'rules.db'), 'changed');
      fs.rmSync(ws.marker);
      fs.rmSync(ws.report);
    }
    // sqlite3.connect's event gets the object itself, and the connection asks it for its name again: a __fspath__
    // that says ':memory:' to the guard and the changed file to SQLite counts as taken in.
    const r = run(ws, ['server.py', 'object']);
    assert.ok(!fs.existsSync(ws.marker), `the changed text ran:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /refused to load \(a path object: P\)/);
  });

  it('red team 8p, 15: the files SSL_CERT_FILE and SSL_CERT_DIR name, read by OpenSSL for its default verify paths, are taken in', () => {
    const ws = workspace(() => ({
      'server.py': [
        'import os, ssl, sys',
        "if sys.argv[1] == 'file':",
        "    os.environ['SSL_CERT_FILE'] = 'certs/ca.pem'",
        '    ssl.create_default_context()',
        "elif sys.argv[1] == 'dir':",
        "    os.environ['SSL_CERT_DIR'] = '/nonexistent:certs'",
        '    ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_default_certs()',
        'else:',
        "    os.environ['SSL_CERT_FILE'] = 'certs/ca.pem'",
        '    ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).set_default_verify_paths()',
        "text = open('README.md').read().replace('# approved', 'print(\"APPROVED\")')",
        'exec(text)',
        "print('APPROVED')",
        '',
      ].join('\n'),
      'certs/ca.pem': 'not a certificate\n',
    }));
    for (const m of ['file', 'dir', 'paths']) assertRuns(ws, ['server.py', m], m);
    write(ws.root, { 'certs/ca.pem': 'another\n' });
    for (const m of ['file', 'dir', 'paths']) {
      assertRefused(ws, ['server.py', m], path.join(ws.root, 'certs', 'ca.pem'), 'changed', undefined, false);
      fs.rmSync(ws.report);
    }
  });

  it('red team 7p, 05: a file too large to hash is compared by the size, modification time and inode the approval recorded (none recorded: changed)', () => {
    const ws = workspace(() => ({
      'server.py': "import subprocess\nsubprocess.run(['bash', 'ok.sh'], check=True)\nprint('APPROVED')\n",
      'ok.sh': 'true\n',
    }));
    const big = path.join(ws.root, 'data', 'model.bin');
    fs.mkdirSync(path.dirname(big));
    fs.writeFileSync(big, '');
    fs.truncateSync(big, 257 * 1024 * 1024); // sparse
    const record = (large: boolean): void => {
      const m = JSON.parse(fs.readFileSync(ws.manifest, 'utf8')) as { files: Record<string, string>; large?: unknown };
      m.files['data/model.bin'] = 'too-large';
      const st = fs.statSync(big, { bigint: true });
      if (large) m.large = { 'data/model.bin': { size: Number(st.size), mtimeNs: String(st.mtimeNs), ino: String(st.ino) } };
      else delete m.large;
      fs.writeFileSync(ws.manifest, JSON.stringify(m));
    };
    record(true);
    assertRuns(ws, ['server.py'], 'the large file as recorded');
    const fd = fs.openSync(big, 'r+');
    fs.writeSync(fd, 'changed', 1000);
    fs.closeSync(fd);
    fs.utimesSync(big, new Date(), new Date(Date.now() + 5000));
    const refused = (): void => {
      const r = run(ws, ['server.py']);
      assert.notEqual(r.status, 0, r.stdout);
      assert.ok(r.stderr.includes(`refused to load ${big} (data/model.bin): it changed since approval`), r.stderr);
      assert.deepEqual(
        report(ws).map((l) => [l.file, l.why, l.how]),
        [[big, 'changed', 'spawn bash (it reads workspace files no guard sees)']],
      );
      fs.rmSync(ws.report);
    };
    refused();
    record(false); // no record of it at all: cannot be told unchanged
    refused();
  });

  it('red team 7p, 08-10: a library a program, an extension module or a ctypes library needs from the workspace ($ORIGIN RUNPATH, LD_LIBRARY_PATH) is checked', function () {
    if (spawnSync('gcc', ['--version']).status !== 0) this.skip();
    const ws = workspace(() => ({
      'server.py': [
        'import subprocess, sys, os, ctypes',
        "if sys.argv[1] == 'rpath':",
        "    r = subprocess.run(['bin/greet'], capture_output=True, text=True)",
        "elif sys.argv[1] == 'env':",
        "    r = subprocess.run(['bin/greet-plain'], capture_output=True, text=True, env={**os.environ, 'LD_LIBRARY_PATH': 'lib'})",
        'else:',
        "    ctypes.CDLL('./lib/libouter.so')",
        "    r = subprocess.run(['true'], capture_output=True, text=True)",
        "print('APPROVED', r.returncode)",
        '',
      ].join('\n'),
    }));
    const build = path.join(ws.out, 'build');
    fs.mkdirSync(build);
    fs.mkdirSync(path.join(ws.root, 'lib'));
    fs.mkdirSync(path.join(ws.root, 'bin'));
    const gcc = (...a: string[]) => {
      const r = spawnSync('gcc', a, { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    };
    const lib = (word: string) => {
      fs.writeFileSync(path.join(build, 'g.c'), `const char *said(void){ return "${word}"; }\n`);
      gcc('-shared', '-fPIC', '-o', path.join(ws.root, 'lib', 'libgreet.so'), path.join(build, 'g.c'));
    };
    lib('v1');
    fs.writeFileSync(path.join(build, 'm.c'), '#include <stdio.h>\nconst char *said(void);\nint main(void){ puts(said()); return 0; }\n');
    gcc('-o', path.join(ws.root, 'bin', 'greet'), path.join(build, 'm.c'), `-L${ws.root}/lib`, '-lgreet', '-Wl,-rpath,$ORIGIN/../lib');
    gcc('-o', path.join(ws.root, 'bin', 'greet-plain'), path.join(build, 'm.c'), `-L${ws.root}/lib`, '-lgreet');
    fs.writeFileSync(path.join(build, 'o.c'), 'const char *said(void);\nconst char *outer(void){ return said(); }\n');
    gcc(
      '-shared',
      '-fPIC',
      '-o',
      path.join(ws.root, 'lib', 'libouter.so'),
      path.join(build, 'o.c'),
      `-L${ws.root}/lib`,
      '-lgreet',
      '-Wl,-rpath,$ORIGIN',
    );
    approve(ws);
    for (const m of ['rpath', 'env', 'ctypes']) assertRuns(ws, ['server.py', m], m);
    lib('v2');
    for (const m of ['rpath', 'env', 'ctypes']) {
      assertRefused(ws, ['server.py', m], path.join(ws.root, 'lib', 'libgreet.so'), 'changed', undefined, false);
      fs.rmSync(ws.report);
    }
  });

  it("red team 7p, 11: a file refused in the server's own home (kept between its starts) says so and to delete it", () => {
    const ws = workspace(() => ({ 'server.py': "print('APPROVED')\n" }));
    const home = path.join(ws.scratch, 'home');
    const site = spawnSync(PY, ['-c', 'import site; print(site.getusersitepackages())'], {
      env: { HOME: home, PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    }).stdout.trim();
    fs.mkdirSync(site, { recursive: true });
    fs.writeFileSync(path.join(site, 'x.pth'), `import os; open(${JSON.stringify(ws.marker)}, 'w').write('ran')\n`);
    const r = spawnSync(PY, ['-S', GUARD, 'server.py'], {
      cwd: ws.root,
      env: { PATH: process.env.PATH ?? '', HOME: home, MCP_GATE_GUARD: ws.manifest },
      encoding: 'utf8',
    });
    assert.notEqual(r.status, 0, r.stdout);
    assert.equal(fs.existsSync(ws.marker), false);
    assert.match(
      r.stderr,
      /in the server's own home \(\S+\), which is kept between its starts, so approving again does not remove it: delete \S+x\.pth/,
    );
    const line = report(ws)[0];
    assert.equal(line.why, 'scratch');
    assert.equal(line.home, true);
  });

  it('a program started with an environment the guard cannot mark (a read-only mapping) is refused, naming why; a dict is fine', () => {
    const ws = workspace(() => ({
      'server.py':
        "import subprocess, types, os\nsubprocess.run(['/bin/true'], env=dict(os.environ))\nprint('APPROVED')\nsubprocess.run(['/bin/true'], env=types.MappingProxyType(dict(os.environ)))\nprint('STARTED UNMARKED')\n",
    }));
    const r = run(ws, ['server.py']);
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /^APPROVED\n$/);
    assert.match(
      r.stderr,
      /it was asked to start a program the guard could not follow \(spawn with an environment the guard cannot mark \(a read-only mapping: pass a dict\)\)/,
    );
    assert.deepEqual(
      report(ws).map((l) => [l.why, l.how]),
      [['sink', 'spawn with an environment the guard cannot mark (a read-only mapping: pass a dict)']],
    );
  });

  it("a check that throws refuses what it checks: changed text compiled near the recursion limit, where the guard's own frames overflow, does not run", () => {
    // The landed guard swallowed its own errors ("never break an unrelated call"): at the right depth its compile check
    // raised RecursionError and the changed text ran. Every depth is tried; none may run it.
    const ws = workspace((w) => ({
      'data.txt': 'x = 1\n',
      'server.py': [
        'import sys',
        "text = open('data.txt').read()",
        'ran = []',
        'def at(depth):',
        '    if depth > 0:',
        '        return at(depth - 1)',
        '    try:',
        "        exec(compile(text, 'x', 'exec'))",
        '        ran.append(1)',
        '    except BaseException:',
        '        pass',
        'for k in range(1, 80):',
        '    try:',
        '        at(sys.getrecursionlimit() - k - 5)',
        '    except RecursionError:',
        '        pass',
        "print('APPROVED', len(ran))",
        '',
      ].join('\n'),
    }));
    const plain = run(ws, ['server.py']);
    assert.equal(plain.status, 0, plain.stderr);
    write(ws.root, { 'data.txt': evil(ws) });
    const r = run(ws, ['server.py']);
    assert.ok(!fs.existsSync(ws.marker), `the changed text ran:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /APPROVED 0\b/);
    // Where the check itself failed, the refusal says so (and where it did not, the changed file is named).
    assert.match(r.stderr, /mcp-gate-guard: refused /);
    for (const l of report(ws))
      assert.ok(l.why === 'changed' || (l.why === 'sink' && /could not check compile/.test(String(l.rule))), JSON.stringify(l));
  });

  it('a read the guard cannot look at by its real path (a folder deeper than PATH_MAX, reached by chdir) is still taken in', () => {
    // The landed guard stat()ed the real path, which is too long to name in one call (ENAMETOOLONG), and let the read
    // through unremembered: the server read the file by a relative name and its changed text ran.
    const seg = 'd'.repeat(200);
    const ws = workspace(() => ({
      'server.py': [
        'import os',
        'for i in range(22):',
        `    if os.path.isdir('${seg}'): os.chdir('${seg}')`,
        "text = open('data.txt').read() if os.path.exists('data.txt') else 'x = 1'",
        "exec(compile(text, 'data', 'exec'))",
        "print('APPROVED')",
        '',
      ].join('\n'),
    }));
    assertRuns(ws, ['server.py'], 'approved, no data yet');
    // the deep data file, written as a pull would (folder by folder: its full path is too long for one call)
    const r0 = spawnSync(
      PY,
      [
        '-c',
        `import os\nfor i in range(22):\n    os.makedirs('${seg}', exist_ok=True); os.chdir('${seg}')\nopen('data.txt', 'w').write(${JSON.stringify(evil(ws))})`,
      ],
      { cwd: ws.root },
    );
    assert.equal(r0.status, 0);
    const r = run(ws, ['server.py']);
    // the tree is too deep for fs.rmSync: Python's rmtree removes it folder by folder
    spawnSync(PY, ['-c', `import shutil; shutil.rmtree('${seg}')`], { cwd: ws.root });
    assert.ok(!fs.existsSync(ws.marker), `the changed text ran:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /mcp-gate-guard: refused to load \S+\/data\.txt \(\S+\/data\.txt\): it is not in what was approved/);
    assert.deepEqual(
      report(ws).map((l) => [l.why, l.how]),
      [['new', 'exec']],
    );
  });

  it('a program that reads its own files, started while a workspace folder cannot be listed (deeper than PATH_MAX), is refused', () => {
    // The walk that compares the whole workspace with the approval before such a program starts skipped folders it
    // could not list: a new script deeper than PATH_MAX, which a shell reaches by relative cd, ran unseen.
    const seg = 'd'.repeat(200);
    const ws = workspace(() => ({
      'server.py': "import subprocess\nsubprocess.run(['perl', 'run.pl'], check=True)\nprint('APPROVED')\n",
      'run.pl': `for (1 .. 22) { chdir '${seg}' if -d '${seg}'; }\ndo './x.pl' if -f 'x.pl';\n`,
    }));
    assertRuns(ws, ['server.py'], 'approved, nothing deep yet');
    const r0 = spawnSync(
      PY,
      [
        '-c',
        `import os\nfor i in range(22):\n    os.makedirs('${seg}', exist_ok=True); os.chdir('${seg}')\nopen('x.pl', 'w').write('open(my $f, q(>), q(${ws.marker})); print $f 1;\\n')`,
      ],
      { cwd: ws.root },
    );
    assert.equal(r0.status, 0, r0.stderr?.toString());
    const r = run(ws, ['server.py']);
    spawnSync(PY, ['-c', `import shutil; shutil.rmtree('${seg}')`], { cwd: ws.root });
    assert.ok(!fs.existsSync(ws.marker), `the new script ran:\n${r.stdout}\n${r.stderr}`);
    assert.match(
      r.stderr,
      /refused to load \S+ \(\S+\): a folder of the workspace that cannot be listed.*: make it readable, or move it out of the workspace/,
    );
    assert.deepEqual(
      report(ws).map((l) => [l.why, /cannot be listed/.test(String(l.rule))]),
      [['sink', true]],
    );
  });

  for (const [what, call] of [
    ['os.open(dir_fd=)', "got.append(os.read(os.open('data.txt', os.O_RDONLY, dir_fd=dfd), 1 << 20).decode())"],
    ['os.readlink', "got.append(os.readlink('cfg'))"],
  ] as const) {
    it(`a check that throws inside the guard's ${what} wrapper refuses what it checks (near the recursion limit)`, () => {
      // The wrappers swallowed their own check's error ("never break the call"): at the depth where the check's
      // frames overflow, the changed file's text (or the retargeted link's) came back unremembered and ran.
      const ws = workspace(() => ({
        'data.txt': 'x = 1\n',
        'server.py': [
          'import os, sys',
          "dfd = os.open('.', os.O_RDONLY)",
          'got = []',
          'def at(depth):',
          '    if depth > 0:',
          '        return at(depth - 1)',
          `    ${call}`,
          "k = int(os.environ['K'])",
          'try:',
          '    at(sys.getrecursionlimit() - k)',
          'except RecursionError:',
          '    pass',
          'for t in got:',
          "    exec(compile(t, 'x', 'exec'))",
          "print('APPROVED', len(got))",
          '',
        ].join('\n'),
      }));
      fs.symlinkSync('1 + 1', path.join(ws.root, 'cfg'));
      approve(ws);
      assert.equal(run(ws, ['server.py'], true, { K: '40' }).status, 0);
      write(ws.root, { 'data.txt': evil(ws) });
      fs.rmSync(path.join(ws.root, 'cfg'));
      fs.symlinkSync(`open(${JSON.stringify(ws.marker)}, 'w').write('ran')`, path.join(ws.root, 'cfg'));
      let unchecked = 0;
      for (let k = 1; k <= 30; k++) {
        const r = run(ws, ['server.py'], true, { K: String(k) });
        assert.ok(!fs.existsSync(ws.marker), `k=${k}: the changed text ran:\n${r.stdout}\n${r.stderr}`);
        if (/could not check/.test(r.stderr)) unchecked++;
      }
      assert.ok(unchecked > 0, 'some depth made the check itself fail');
    });
  }

  it('a path object asked for its name again (io.FileIO calls __fspath__ after the opener did) counts as taken in', () => {
    // The guard decoded the object itself: a __fspath__ that names the approved README to the guard and the changed
    // file to the opener had the changed text read unremembered, and it ran.
    const ws = workspace(() => ({
      'data.txt': 'x = 1\n',
      'server.py': [
        'import io, pathlib',
        'class P:',
        '    n = 0',
        '    def __fspath__(self):',
        '        P.n += 1',
        "        return 'data.txt' if P.n % 2 == 1 else 'README.md'",
        "exec(compile(io.FileIO(pathlib.PosixPath('README.md')).read(), 'r', 'exec'))",
        "exec(compile(io.FileIO(P()).read(), 'd', 'exec'))",
        "print('APPROVED')",
        '',
      ].join('\n'),
    }));
    write(ws.root, { 'README.md': 'y = 2\n' });
    approve(ws);
    assertRuns(ws, ['server.py'], 'approved');
    write(ws.root, { 'data.txt': evil(ws) });
    const r = run(ws, ['server.py']);
    assert.ok(!fs.existsSync(ws.marker), `the changed text ran:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stderr, /refused to load \(a path object: P\)/);
  });

  it('data is not code: a server that reads a changed .py as text, or runs `wc` on a changed README, is not refused', () => {
    const ws = workspace(() => ({
      'server.py':
        "import subprocess, sys\nsrc = open('src/app.py').read()\nn = subprocess.run(['wc', '-l', 'README.md'], capture_output=True, text=True).stdout.split()[0]\nprint('APPROVED', len(src.splitlines()), n)\n",
      'src/app.py': "print('user code')\n",
      'README.md': 'one\n',
    }));
    assertRuns(ws, ['server.py'], 'approved');
    write(ws.root, { 'src/app.py': "print('user code, edited')\nprint('more')\n", 'README.md': 'one\ntwo\n' });
    const r = run(ws, ['server.py']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /APPROVED 2 2/);
    assert.deepEqual(report(ws), []);
    // …while a program that runs what it is given is checked: the same README handed to sh is refused.
    write(ws.root, { 'server.py': "import subprocess\nsubprocess.run(['sh', 'README.md'])\nprint('APPROVED')\n" });
    approve(ws);
    write(ws.root, { 'README.md': 'echo changed\n' });
    assertRefused(ws, ['server.py'], `${ws.root}/README.md`, 'changed', 'spawn', false);
  });

  it('a program that reads files no guard sees (bash sourcing a script, make, os.system) starts only while the workspace is as approved', () => {
    const how = (prog: string) => `spawn ${prog} (it reads workspace files no guard sees)`;
    const ws = workspace((w) => ({
      'server.py':
        "import subprocess, os\nout = subprocess.run(['bash', 'scripts/check.sh'], capture_output=True, text=True)\nprint('APPROVED' if out.returncode == 0 else 'FAILED', out.stdout.strip())\n",
      'scripts/check.sh': 'source "$(dirname "$0")/lib.sh"\ngreet\n',
      'scripts/lib.sh': 'greet() { echo approved-lib; }\n',
      Makefile: 'test:\n\t@echo approved-make\n',
      'make.py':
        "import subprocess\nr = subprocess.run(['make', '-s', 'test'], capture_output=True, text=True)\nprint('APPROVED', r.stdout.strip())\n",
      'system.py': "import os\nos.system('make -s test')\nprint('APPROVED')\n",
      'notes/n.txt': String(w.root.length),
    }));
    assertRuns(ws, ['server.py'], 'bash sourcing the approved lib');
    assertRuns(ws, ['make.py'], 'make with the approved Makefile');
    write(ws.root, { 'scripts/lib.sh': `greet() { echo ran > ${JSON.stringify(ws.marker)}; echo CHANGED; }\n` });
    assertRefused(ws, ['server.py'], `${ws.root}/scripts/lib.sh`, 'changed', how('bash'));
    for (const f of [ws.report, ws.marker]) fs.rmSync(f, { force: true });
    write(ws.root, {
      'scripts/lib.sh': 'greet() { echo approved-lib; }\n',
      Makefile: `test:\n\t@echo ran > ${JSON.stringify(ws.marker)}; echo CHANGED\n`,
    });
    assertRefused(ws, ['make.py'], `${ws.root}/Makefile`, 'changed', how('make'));
    for (const f of [ws.report, ws.marker]) fs.rmSync(f, { force: true });
    assertRefused(ws, ['system.py'], `${ws.root}/Makefile`, 'changed', how('make'));
    // What no guard can tell apart: any other file changed refuses such a start too (make could read it); said.
    for (const f of [ws.report, ws.marker]) fs.rmSync(f, { force: true });
    write(ws.root, { Makefile: 'test:\n\t@echo approved-make\n', 'notes/new.txt': 'added\n' });
    assertRefused(ws, ['make.py'], `${ws.root}/notes/new.txt`, 'new', how('make'), false);
  });

  it('programs that read files no guard sees, however they are started: a #! script, shell keywords and braces, -lc, sed -f', () => {
    const how = (prog: string) => `spawn ${prog} (it reads workspace files no guard sees)`;
    const ws = workspace(() => ({
      'shebang.py':
        "import subprocess\nr = subprocess.run(['./scripts/check.sh'], capture_output=True, text=True)\nprint('APPROVED', r.stdout.strip())\n",
      'keyword.py':
        "import subprocess\nr = subprocess.run(['sh', '-c', 'if true; then { bash scripts/check.sh; }; fi'], capture_output=True, text=True)\nprint('APPROVED', r.stdout.strip())\n",
      'lc.py':
        "import subprocess\nr = subprocess.run(['bash', '-lc', 'echo ok'], capture_output=True, text=True)\nprint('APPROVED', r.stdout.strip())\n",
      'sed.py':
        "import subprocess\nr = subprocess.run(['sed', '-f', 'fmt.sed', 'README.md'], capture_output=True, text=True)\nprint('APPROVED', r.stdout.strip())\n",
      'scripts/check.sh': '#!/usr/bin/env bash\nsource "$(dirname "$0")/lib.sh"\ngreet\n',
      'scripts/lib.sh': 'greet() { echo approved-lib; }\n',
      'fmt.sed': 's/approved/APPROVED-SED/\n',
    }));
    fs.chmodSync(path.join(ws.root, 'scripts/check.sh'), 0o755);
    approve(ws);
    for (const f of ['shebang.py', 'keyword.py', 'lc.py', 'sed.py']) assertRuns(ws, [f], f);
    // `bash -lc 'echo ok'` reads nothing of the workspace: a README edit does not stop it.
    write(ws.root, { 'README.md': '# approved, edited\n' });
    assertRuns(ws, ['lc.py'], 'bash -lc after a README edit');
    write(ws.root, { 'README.md': '# approved\n', 'scripts/lib.sh': `greet() { echo ran > ${JSON.stringify(ws.marker)}; }\n` });
    assertRefused(ws, ['shebang.py'], `${ws.root}/scripts/lib.sh`, 'changed', how('bash'));
    for (const f of [ws.report, ws.marker]) fs.rmSync(f, { force: true });
    assertRefused(ws, ['keyword.py'], `${ws.root}/scripts/lib.sh`, 'changed', how('bash'));
    for (const f of [ws.report, ws.marker]) fs.rmSync(f, { force: true });
    write(ws.root, { 'scripts/lib.sh': 'greet() { echo approved-lib; }\n', 'fmt.sed': `1e echo ran > ${ws.marker}\n` });
    assertRefused(ws, ['sed.py'], `${ws.root}/fmt.sed`, 'changed', 'spawn');
  });

  it('a planted __pycache__/*.pyc for an unchanged module is ignored (the approved source runs)', () => {
    const ws = workspace(() => ({ 'server.py': 'import helper\nprint(helper.WORD)\n', 'helper.py': 'WORD = "APPROVED"\n' }));
    // a valid timestamp .pyc (matching helper.py's mtime and size) compiled from other code
    const plant = [
      'import importlib.util as u, importlib._bootstrap_external as e, os, sys',
      "src = 'helper.py'; st = os.stat(src)",
      'code = compile(sys.argv[1], os.path.abspath(src), "exec")',
      'data = e._code_to_timestamp_pyc(code, st.st_mtime, st.st_size)',
      'p = u.cache_from_source(os.path.abspath(src)); os.makedirs(os.path.dirname(p), exist_ok=True)',
      "open(p, 'wb').write(data)",
    ].join('\n');
    const r0 = spawnSync(PY, ['-S', '-c', plant, `${evil(ws)}WORD = "PLANTED"\n`], { cwd: ws.root, encoding: 'utf8' });
    assert.equal(r0.status, 0, r0.stderr);
    const control = run(ws, ['server.py'], false);
    assert.match(control.stdout, /PLANTED/, 'without the guard the planted .pyc runs (control)');
    fs.rmSync(ws.marker);
    assertRuns(ws, ['server.py'], 'guarded');
    assert.equal(fs.existsSync(ws.marker), false);
  });

  it('an extension module (.so) and a ctypes library are checked before dlopen', function () {
    const probe = spawnSync(PY, ['-S', '-c', 'import xxlimited, ctypes.util; print(xxlimited.__file__)'], { encoding: 'utf8' });
    const libz = ['/usr/lib/x86_64-linux-gnu/libz.so.1', '/lib/x86_64-linux-gnu/libz.so.1', '/usr/lib/aarch64-linux-gnu/libz.so.1'].find(
      (f) => fs.existsSync(f),
    );
    if (probe.status !== 0 || !libz) this.skip();
    const ext = probe.stdout.trim();
    const ws = workspace(() => ({
      'server.py':
        "import sys, ctypes\nsys.path.insert(0, 'native')\nimport xxlimited\nassert xxlimited.__file__.startswith(sys.path[0]) or 'native' in xxlimited.__file__\nctypes.CDLL('./native/libz.so.1')\nprint('APPROVED')\n",
      [`native/${path.basename(ext)}`]: fs.readFileSync(ext),
      'native/libz.so.1': fs.readFileSync(libz),
    }));
    assertRuns(ws, ['server.py'], 'approved');
    fs.appendFileSync(path.join(ws.root, 'native/libz.so.1'), Buffer.from([0]));
    assertRefused(ws, ['server.py'], path.join(ws.root, 'native/libz.so.1'), 'changed', 'dlopen', false);
    fs.rmSync(ws.report);
    fs.appendFileSync(path.join(ws.root, 'native', path.basename(ext)), Buffer.from([0]));
    assertRefused(ws, ['server.py'], path.join(ws.root, 'native', path.basename(ext)), 'changed', 'dlopen', false);
  });

  it('a manifest that cannot be parsed: standard library works, every workspace import is refused', () => {
    const ws = workspace((w) => ({ 'helper.py': evil(w) }));
    fs.writeFileSync(ws.manifest, '{ "version": 1, "root": ');
    const r = run(ws, ['-c', 'import json, decimal, email.message, asyncio, sqlite3\nprint("STDLIB")\nimport helper']);
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /STDLIB/);
    assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${path.join(ws.root, 'helper.py')}`), r.stderr);
    assert.match(r.stderr, /manifest .* could not be read/);
    assert.equal(fs.existsSync(ws.marker), false);
    const script = run(ws, ['helper.py']);
    assert.notEqual(script.status, 0);
    assert.equal(fs.existsSync(ws.marker), false, 'nor the script itself');
    // A program that reads workspace files no guard sees does not start either: what was approved is not known.
    const shell = run(ws, ['-c', `import subprocess\nsubprocess.run(['sh', '-c', 'make -s; echo ran > ${ws.marker}'])`]);
    assert.notEqual(shell.status, 0);
    assert.match(shell.stderr, /manifest .* could not be read/);
    assert.equal(fs.existsSync(ws.marker), false, 'the shell ran');
  });

  describe('file metadata looked at is content taken in (red team 16)', () => {
    // Approved code that decodes a program from which names exist, from sizes or times, or from where a link leads, and
    // execs it: the names a metadata call looks at are recorded and compared with the approval when text turns into code.
    const TOOK = 'exec (text turned into code after this process took in a file that is not as approved)';
    function metaWorkspace(): Ws {
      const ws = workspace((w) => ({
        'server.py': [
          'import os, sys, pathlib, posix',
          `MARK = ${JSON.stringify(w.marker)}`,
          'def run(n):  # the decoded program: 0 is what was approved, anything else the payload',
          '    exec("print(\'APPROVED\')" if n == 0 else \'open(%r, "w").write("ran")\' % MARK)',
          'mode = sys.argv[1]',
          "if mode == 'exists':",
          "    run(sum(1 << i for i in range(8) if os.path.exists('bits/n%d' % i)))",
          "elif mode == 'deleted':",
          "    run(0 if os.path.isfile('data/keep.txt') else 1)",
          "elif mode == 'size':",
          "    run(os.path.getsize('data/pad.bin') - 4)",
          "elif mode == 'posix':",
          "    run(posix.stat('data/pad.bin').st_size - 4)",
          "elif mode == 'scandir':",
          "    run(sum(e.stat().st_size for e in os.scandir('data') if e.name == 'pad.bin') - 4)",
          "elif mode == 'mtime':",
          "    run(1 if pathlib.Path('data/keep.txt').stat().st_mtime < 1e9 else 0)",
          "elif mode == 'link':",
          "    run(0 if os.path.realpath('data/link').endswith('keep.txt') else 1)",
          "elif mode == 'clean':",
          "    open('data/made.txt', 'w').write('its own')  # a file it makes: its own, and its folder's ctime moves",
          "    os.makedirs('data', exist_ok=True)",
          "    seen = [os.stat(n).st_size for n in ('server.py', 'data/keep.txt', 'data/pad.bin', 'data/made.txt')]",
          "    seen += [os.path.exists('bits/n%d' % i) for i in range(8)] + [os.path.islink('data/link'), os.path.isdir('bits')]",
          "    seen += [e.is_file() for e in os.scandir('data')] + [pathlib.Path('data').exists(), os.path.getmtime('data')]",
          '    run(0)',
          "elif mode == 'cost':",
          '    import time',
          '    t = time.perf_counter()',
          '    for _ in range(20000):',
          "        os.stat('data/big.bin')",
          "    print('COST %.3f' % (time.perf_counter() - t))",
          '    run(0)',
          '',
        ].join('\n'),
        'bits/.keep': '',
        'data/keep.txt': 'kept\n',
        'data/pad.bin': 'pads',
        'data/big.bin': Buffer.alloc(1 << 20),
      }));
      fs.symlinkSync('keep.txt', path.join(ws.root, 'data', 'link'));
      approve(ws);
      const until = Date.now() + 5; // a change below is in a later millisecond than the measure's start
      while (Date.now() < until);
      return ws;
    }

    function refusedAfterLook(ws: Ws, mode: string, rel: string, why: 'changed' | 'new'): void {
      const p = path.join(ws.root, rel);
      const r = run(ws, ['server.py', mode]);
      assert.notEqual(r.status, 0, `${mode}: ${r.stdout}`);
      assert.equal(fs.existsSync(ws.marker), false, `${mode}: the decoded payload ran`);
      const reason = why === 'new' ? 'it is not in what was approved' : 'it changed since approval';
      assert.ok(r.stderr.includes(`mcp-gate-guard: refused to load ${p} (${rel}): ${reason} (${TOOK})`), `${mode}:\n${r.stderr}`);
      const line = report(ws).find((l) => l.file === p);
      assert.ok(line, `${mode}: report names ${p}: ${JSON.stringify(report(ws))}`);
      assert.equal(line.why, why);
      assert.equal(line.rel, rel);
      assert.equal(line.how, TOOK);
      fs.rmSync(ws.report, { force: true });
    }

    it('new names (exists bits): exec of the decoded text is refused naming the first new file; an unguarded run shows the channel', () => {
      const ws = metaWorkspace();
      assertRuns(ws, ['server.py', 'exists'], 'approved');
      write(ws.root, { 'bits/n0': '', 'bits/n2': '' });
      const control = run(ws, ['server.py', 'exists'], false);
      assert.equal(control.status, 0, control.stderr);
      assert.equal(fs.readFileSync(ws.marker, 'utf8'), 'ran', 'without the guard the payload ran');
      fs.rmSync(ws.marker);
      refusedAfterLook(ws, 'exists', 'bits/n0', 'new');
      // a new empty folder is a new name when the approval lists its folders ("folders"); in an older one, no content
      fs.rmSync(path.join(ws.root, 'bits', 'n0'));
      fs.rmSync(path.join(ws.root, 'bits', 'n2'));
      fs.mkdirSync(path.join(ws.root, 'bits', 'n1'));
      refusedAfterLook(ws, 'exists', 'bits/n1', 'new');
      withoutFolders(ws);
      const empty = run(ws, ['server.py', 'exists']);
      assert.doesNotMatch(empty.stderr, /mcp-gate-guard/, empty.stderr);
      assert.equal(fs.readFileSync(ws.marker, 'utf8'), 'ran');
    });

    it('an approved file deleted: its absence is taken in', () => {
      const ws = metaWorkspace();
      fs.rmSync(path.join(ws.root, 'data', 'keep.txt'));
      refusedAfterLook(ws, 'deleted', 'data/keep.txt', 'changed');
    });

    it("a changed file's size, through os.path.getsize, posix.stat and a scandir entry's stat(): refused naming it", () => {
      const ws = metaWorkspace();
      write(ws.root, { 'data/pad.bin': 'pads+' });
      for (const mode of ['size', 'posix', 'scandir']) refusedAfterLook(ws, mode, 'data/pad.bin', 'changed');
    });

    it('a modification time set on an unchanged file (os.utime / touch -d, read through pathlib): its ctime is after the approval', () => {
      const ws = metaWorkspace();
      assertRuns(ws, ['server.py', 'mtime'], 'approved');
      fs.utimesSync(path.join(ws.root, 'data', 'keep.txt'), 946684800, 946684800);
      refusedAfterLook(ws, 'mtime', 'data/keep.txt', 'changed');
      // without "since" in the manifest that test is skipped: the same content passes
      const m = JSON.parse(fs.readFileSync(ws.manifest, 'utf8')) as Record<string, unknown>;
      delete m.since;
      fs.writeFileSync(ws.manifest, JSON.stringify(m));
      const r = run(ws, ['server.py', 'mtime']);
      assert.doesNotMatch(r.stderr, /mcp-gate-guard/, r.stderr);
    });

    it('a retargeted link, looked at through os.path.realpath: refused naming the link', () => {
      const ws = metaWorkspace();
      fs.rmSync(path.join(ws.root, 'data', 'link'));
      fs.symlinkSync('pad.bin', path.join(ws.root, 'data', 'link'));
      refusedAfterLook(ws, 'link', 'data/link', 'changed');
    });

    it('no false refusal: a server that stats, scans and probes unchanged approved names, then execs a string, runs', () => {
      const ws = metaWorkspace();
      write(ws.root, { 'README.md': '# edited, never looked at\n' });
      const r = run(ws, ['server.py', 'clean']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /APPROVED/);
      assert.doesNotMatch(r.stderr, /mcp-gate-guard/);
      assert.deepEqual(report(ws), []);
    });

    it('a look costs no hashing: 20000 os.stat of a changed file stay cheap, the exec after them is refused', () => {
      const ws = metaWorkspace();
      write(ws.root, { 'data/big.bin': Buffer.alloc(48 << 20, 1) });
      const r = run(ws, ['server.py', 'cost']);
      const cost = Number(/COST (\S+)/.exec(r.stdout)?.[1]);
      assert.ok(cost < 2, `20000 looks took ${cost} s (hashing 48 MiB each time would take minutes)\n${r.stderr}`);
      assert.notEqual(r.status, 0, r.stdout);
      assert.ok(r.stderr.includes(`refused to load ${path.join(ws.root, 'data', 'big.bin')} (data/big.bin): it changed`), r.stderr);
    });

    describe('red team 16, second round: appends, listings both ways, empty folders, failed opens, xattrs, importlib listings', () => {
      function rt16Workspace(): Ws {
        const ws = workspace((w) => ({
          'server.py': [
            'import os, sys, pathlib, subprocess',
            `MARK = ${JSON.stringify(w.marker)}`,
            'def run(n):  # the decoded program: 0 is what was approved, anything else the payload',
            '    exec("print(\'APPROVED\')" if n == 0 else \'open(%r, "w").write("ran")\' % MARK)',
            "B = ('0', '1', '2', '3')",
            'mode = sys.argv[1]',
            "if mode == 'applog':  # an honest server: a log folder and files it creates by appending",
            "    os.makedirs('logs', exist_ok=True)",
            "    with open('logs/app.log', 'a') as f:",
            "        f.write('start\\n')",
            "    os.close(os.open('logs/b.log', os.O_WRONLY | os.O_CREAT | os.O_APPEND))",
            "    seen = [os.path.getsize('logs/app.log'), os.listdir('logs'), os.path.isdir('logs'), os.listdir('.')]",
            '    run(0)',
            "elif mode == 'append-there':  # appending to a file that was there before is no making of it",
            "    open('data/old.log', 'a').write('x')",
            "    run(os.path.getsize('data/old.log') - 1)",
            "elif mode == 'listdir':",
            "    run(sum(1 << i for i, n in enumerate(B) if n not in os.listdir('b')))",
            "elif mode == 'iterdir':",
            "    have = [p.name for p in pathlib.Path('b').iterdir()]",
            '    run(sum(1 << i for i, n in enumerate(B) if n not in have))',
            "elif mode == 'removed':  # its own removal is no change",
            "    os.remove('b/1')",
            "    run(sum(1 << i for i, n in enumerate(B) if n not in os.listdir('b')) - 2)",
            "elif mode == 'dirs':",
            "    run(len([n for n in os.listdir('bits') if n != '.keep']))",
            "elif mode == 'walk':",
            "    run(sum(len(d) for r, d, f in os.walk('bits')))",
            "elif mode == 'ls':",
            "    run(len(subprocess.run(['ls', 'bits'], capture_output=True, text=True).stdout.split()))",
            "elif mode == 'mkdir':  # a folder it makes is its own",
            "    os.mkdir('bits/mine')",
            "    run(len([n for n in os.listdir('bits') if n not in ('.keep', 'mine')]) + sum(len(d) for r, d, f in os.walk('bits')) - 1)",
            "elif mode == 'open':",
            '    try:',
            "        open(os.path.abspath('b/1'), 'rb').close()",
            '        run(0)',
            '    except FileNotFoundError:',
            '        run(1)',
            "elif mode == 'dirfd':",
            "    fd = os.open('b', os.O_RDONLY)",
            '    try:',
            "        os.close(os.open('1', os.O_RDONLY, dir_fd=fd))",
            '        run(0)',
            '    except FileNotFoundError:',
            '        run(1)',
            "elif mode == 'getxattr':",
            '    try:',
            "        run(len(os.getxattr('data/keep.txt', 'user.x')))",
            '    except OSError:',
            '        run(0)',
            "elif mode == 'listxattr':",
            "    run(len(os.listxattr('data/keep.txt')))",
            "elif mode == 'finder':  # importlib's listing, filled by the server itself or by an import",
            '    import importlib.machinery',
            "    ff = importlib.machinery.FileFinder(os.path.abspath('bits'))",
            '    ff._fill_cache()',
            '    try:',
            '        import mcp_gate_no_such_module',
            '    except ImportError:',
            '        pass',
            '    cached = sys.path_importer_cache[sys.path[0]]._path_cache',
            "    run(len(set(ff._path_cache) - {'.keep'}) + len([n for n in cached if n.startswith('x_')]))",
            '',
          ].join('\n'),
          'bits/.keep': '',
          'data/keep.txt': 'kept\n',
          'b/0': '',
          'b/1': '',
          'b/2': '',
          'b/3': '',
        }));
        const until = Date.now() + 5; // a change below is in a later millisecond than the measure's start
        while (Date.now() < until);
        return ws;
      }

      it('p15: a log file the server creates by appending (open "a", O_CREAT|O_APPEND) in a folder it makes is its own', () => {
        const ws = rt16Workspace();
        assertRuns(ws, ['server.py', 'applog'], 'approved run, logs made by appending');
        // a file that was there before (brought by a pull) and appended to is no file of its own
        fs.rmSync(path.join(ws.root, 'logs'), { recursive: true });
        write(ws.root, { 'data/old.log': '' });
        refusedAfterLook(ws, 'append-there', 'data/old.log', 'new');
      });

      it('p02, p10: os.listdir and pathlib iterdir of an approved folder: an approved file gone is taken in; its own removal is not', () => {
        const ws = rt16Workspace();
        assertRuns(ws, ['server.py', 'listdir'], 'approved');
        fs.rmSync(path.join(ws.root, 'b', '1'));
        for (const mode of ['listdir', 'iterdir']) refusedAfterLook(ws, mode, 'b/1', 'changed');
        const own = rt16Workspace();
        assertRuns(own, ['server.py', 'removed'], 'its own removal');
      });

      it('p01, p08, p12: a new empty folder (listing, os.walk, ls after a program start) is a new name; its own is not; not in an older approval', () => {
        const ws = rt16Workspace();
        assertRuns(ws, ['server.py', 'mkdir'], 'a folder it makes');
        fs.rmdirSync(path.join(ws.root, 'bits', 'mine'));
        assertRuns(ws, ['server.py', 'ls'], 'approved');
        fs.mkdirSync(path.join(ws.root, 'bits', 'x_payload'));
        for (const mode of ['dirs', 'walk', 'ls']) refusedAfterLook(ws, mode, 'bits/x_payload', 'new');
        // an approved empty folder is no new name
        const empty = rt16Workspace();
        fs.mkdirSync(path.join(empty.root, 'bits', 'x_payload'));
        approve(empty);
        for (const mode of ['dirs', 'walk', 'ls']) {
          const r = run(empty, ['server.py', mode]);
          assert.equal(r.status, 0, `${mode}: an approved empty folder is no new name:\n${r.stderr}`);
        }
        // an older approval (no "folders"): an empty folder is not counted, as before
        withoutFolders(ws);
        const old = run(ws, ['server.py', 'dirs']);
        assert.doesNotMatch(old.stderr, /mcp-gate-guard/, old.stderr);
      });

      it('p06, p13: a failed open() or os.open(dir_fd=) of a deleted approved file is a look at it', () => {
        const ws = rt16Workspace();
        assertRuns(ws, ['server.py', 'open'], 'approved');
        assertRuns(ws, ['server.py', 'dirfd'], 'approved');
        fs.rmSync(path.join(ws.root, 'b', '1'));
        for (const mode of ['open', 'dirfd']) refusedAfterLook(ws, mode, 'b/1', 'changed');
      });

      it('p09: os.getxattr / os.listxattr of an approved file are looks (an extended attribute set since moves its ctime)', function () {
        const ws = rt16Workspace();
        assertRuns(ws, ['server.py', 'getxattr'], 'approved');
        const set = spawnSync(PY, [
          '-c',
          'import os, sys; os.setxattr(sys.argv[1], "user.x", b"payload")',
          path.join(ws.root, 'data', 'keep.txt'),
        ]);
        if (set.status !== 0) this.skip(); // no user extended attributes on this file system
        for (const mode of ['getxattr', 'listxattr']) refusedAfterLook(ws, mode, 'data/keep.txt', 'changed');
      });

      it("p04: importlib's FileFinder listing (filled by the server, or by an import) holds only approved and own names", () => {
        const ws = rt16Workspace();
        assertRuns(ws, ['server.py', 'finder'], 'approved');
        write(ws.root, { 'bits/x_payload': 'named', x_payload: 'named' });
        const control = run(ws, ['server.py', 'finder'], false);
        assert.equal(control.status, 0, control.stderr);
        assert.ok(fs.existsSync(ws.marker), 'without the guard the listing carries the name');
        fs.rmSync(ws.marker);
        const r = run(ws, ['server.py', 'finder']);
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stdout, /APPROVED/);
        assert.equal(fs.existsSync(ws.marker), false, 'the name reached the server');
        // a new module is still found by an import, and refused as it loads
        write(ws.root, { 'x_mod.py': 'print("CHANGED")\n' });
        const imp = run(ws, ['-c', 'import x_mod']);
        assert.notEqual(imp.status, 0, imp.stdout);
        assert.ok(imp.stderr.includes(`refused to load ${path.join(ws.root, 'x_mod.py')} (x_mod.py)`), imp.stderr);
      });
    });
  });

  it('standard library imports work and Python argument conventions are kept', () => {
    const ws = workspace(() => ({
      'server.py': [
        'import sys, json, decimal, email.message, asyncio, sqlite3, ctypes, xml.dom.minidom, subprocess',
        'print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "name": __name__, "file": __file__,',
        '  "flags": subprocess._args_from_interpreter_flags(), "B": sys.dont_write_bytecode, "buf": type(sys.stdout.buffer).__name__}))',
        "print('APPROVED')",
      ].join('\n'),
    }));
    const r = run(ws, ['-uB', '-W', 'ignore', 'server.py', 'a', '-b']);
    assert.equal(r.status, 0, r.stderr);
    const info = JSON.parse(r.stdout.split('\n')[0]) as Record<string, unknown>;
    assert.deepEqual(info.argv, ['server.py', 'a', '-b']);
    assert.equal(info.path0, ws.root);
    assert.equal(info.name, '__main__');
    assert.equal(info.file, path.join(ws.root, 'server.py'));
    assert.equal(info.B, true);
    assert.equal(info.buf, 'FileIO', '-u: unbuffered stdout');
    assert.ok(!(info.flags as string[]).includes('-S'), "children do not inherit the guard's own -S");
    const iso = run(ws, ['-I', '-c', 'import sys; print(sys.flags.isolated, sys.flags.no_site, repr(sys.path[0]), sys.argv)', 'x']);
    assert.equal(iso.status, 0, iso.stderr);
    assert.ok(iso.stdout.startsWith('1 0 ') && !iso.stdout.includes(`'${ws.root}'`) && iso.stdout.includes("['-c', 'x']"), iso.stdout);
    const stdin = run(ws, []);
    assert.equal(stdin.status, 2);
    assert.match(stdin.stderr, /standard input/);
  });
});
