// The approval enforced where code loads (issue 43): a Node server with a computed load and a Python server, each
// approved and running contained under the load guard. Edits to files they never load leave them approved, running
// and answering; a changed file they load lazily is refused when it loads (its code never runs: it would write a
// marker), the server is stopped, the log names the file, and the gate shows the server as changed since approval,
// naming the file — until a person approves again, which takes the workspace as it is then.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { Session } from '../../../../src/host/session';
import { EventLog } from '../../../../src/host/log/log';
import { Masker } from '../../../../src/policy/mask';
import { sandboxAvailable } from '../../../../src/host/sandbox/sandbox';
import { cleanupTemp, cli, world, writeFiles, type World } from '../../helpers';
import { miniServer, pythonServer } from '../../mini-server';
import { sessionOptions } from '../session-options';

/** Debian's python3 by its real path, and the folder of its site-packages inside a virtual environment. */
const PYTHON = fs.realpathSync('/usr/bin/python3');
const VENV_SITE = `.venv/lib/${path.basename(PYTHON).replace(/^python(\d+\.\d+).*$/, 'python$1')}/site-packages`;

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);
const answer = (o: unknown) => JSON.stringify(o);

function guarded(files: Record<string, string>): World {
  // MCP Gate's own PATH finds node and python3, as the session's does.
  const w = world(files, {}, { PATH: process.env.PATH ?? '' });
  w.input.loadGuard = true;
  writeFiles(w.home, {
    '.config/mcp-gate/config.json': JSON.stringify({ rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }] }),
  });
  return w;
}

/** A session over the gate's report now (the server approved); whether it started is the caller's to assert. */
function open(w: World, log: EventLog): Promise<Session> {
  const report = evaluateGate(w.input);
  assert.equal(report.servers[0].state, 'approved', report.servers[0].reason);
  return Session.start(sessionOptions(w, { report, log }));
}

async function start(w: World, log: EventLog): Promise<Session> {
  const session = await open(w, log);
  assert.equal(session.servers().length, 1, session.notes.join('\n'));
  return session;
}

const SHAPES: {
  name: string;
  files: (marker: string) => Record<string, string>;
  server: Record<string, unknown>;
  loaded: string;
  change: (marker: string) => string;
  /** Symbolic links to make in the workspace (path → target). */
  links?: Record<string, string>;
}[] = [
  {
    name: 'a Node server with a load computed at run time (require of a joined path)',
    server: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] },
    files: () => ({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'tools/server.js': miniServer(
        "const path = require('node:path');\nconst pick = (n) => path.join(__dirname, 'plugins', n + '.js');",
        "require(pick(['gre', 'et'].join('')))",
      ),
      'tools/plugins/greet.js': "module.exports = 'hello from the approved plugin';\n",
      'README.md': '# app\n',
    }),
    loaded: 'tools/plugins/greet.js',
    change: (marker) => `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nmodule.exports = 'CHANGED-CODE';\n`,
  },
  {
    // Node 20.19+ and 22.12+ load an ES module's imports by require() around module.register's hooks: contained, node
    // is started with --expose-internals, so the guard wraps the loader itself and sees them (a changed one ran before).
    name: 'a Node server requiring an ES module by a computed path, whose import changed',
    server: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] },
    files: () => ({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'tools/server.js': miniServer(
        "const path = require('node:path');\nconst pick = (n) => path.join(__dirname, 'plugins', n + '.mjs');",
        "require(pick(['gre', 'et'].join(''))).WORD",
      ),
      'tools/plugins/greet.mjs': "export { WORD } from './words.mjs';\n",
      'tools/plugins/words.mjs': "export const WORD = 'hello from the approved plugin';\n",
      'README.md': '# app\n',
    }),
    loaded: 'tools/plugins/words.mjs',
    change: (marker) =>
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport const WORD = 'CHANGED-CODE';\n`,
  },
  {
    name: 'a Python server importing a module by a computed name',
    // Debian's python3 by its path: a version manager's shim (pyenv) is a shell script that cannot run contained.
    server: { command: '/usr/bin/python3', args: ['${workspaceFolder}/srv/server.py'] },
    files: () => ({
      'srv/server.py': pythonServer("import plugins\nreturn importlib.import_module('plugins.' + 'gre' + 'et').WORD"),
      'srv/plugins/__init__.py': '',
      'srv/plugins/greet.py': "WORD = 'hello from the approved plugin'\n",
      'README.md': '# app\n',
    }),
    loaded: 'srv/plugins/greet.py',
    change: (marker) => `open(${JSON.stringify(marker)}, 'w').write('ran')\nWORD = 'CHANGED-CODE'\n`,
  },
  {
    // A virtual environment as `python -m venv` makes it: the server runs by the name `.venv/bin/python` (a link to the
    // real binary), and its packages are the venv's (red team 8p, case 04: run by the real path, the venv was lost).
    name: 'a Python server run by its virtual environment (.venv/bin/python), importing a venv package by a computed name',
    server: { command: '.venv/bin/python', args: ['srv/server.py'] },
    files: () => ({
      'srv/server.py': pythonServer("return importlib.import_module('venvplug.' + 'gre' + 'et').WORD"),
      '.venv/pyvenv.cfg': `home = ${path.dirname(PYTHON)}\ninclude-system-site-packages = false\n`,
      [`${VENV_SITE}/venvplug/__init__.py`]: '',
      [`${VENV_SITE}/venvplug/greet.py`]: "WORD = 'hello from the approved plugin'\n",
      'README.md': '# app\n',
    }),
    links: { '.venv/bin/python': PYTHON },
    loaded: `${VENV_SITE}/venvplug/greet.py`,
    change: (marker) => `open(${JSON.stringify(marker)}, 'w').write('ran')\nWORD = 'CHANGED-CODE'\n`,
  },
];

describe('the approval enforced where code loads (the load guard)', function () {
  this.timeout(120_000);
  after(cleanupTemp);
  before(function () {
    if (!sandboxAvailable().ok) throw new Error(`bubblewrap is needed: ${JSON.stringify(sandboxAvailable())}`);
  });

  for (const shape of SHAPES) {
    it(`${shape.name}: 50 edits elsewhere leave it approved and answering; a changed file it loads is refused when it loads`, async () => {
      const w = guarded(shape.files(''));
      writeFiles(w.project, { '.mcp.json': MCP({ s: shape.server }) });
      for (const [link, target] of Object.entries(shape.links ?? {})) {
        fs.mkdirSync(path.dirname(path.join(w.project, link)), { recursive: true });
        fs.symlinkSync(target, path.join(w.project, link));
      }
      const marker = path.join(w.project, 'changed-code-ran');
      const pending = evaluateGate(w.input).servers[0];
      assert.equal(pending.state, 'pending', pending.reason);
      assert.ok(pending.pinned?.pinned.guarded, `a guarded closure: ${JSON.stringify(pending.pinned?.pinned)}`);
      assert.ok(!(shape.loaded in pending.pinned.pinned.files), 'the computed load is left to the guard, not pinned');
      assert.ok(!('README.md' in pending.pinned.pinned.files), 'the workspace is not pinned whole');
      await recordDecision(w.input, 's', undefined, 'approved');
      const log = new EventLog(w.store, new Masker());
      const session = await start(w, log);
      try {
        assert.match(answer(await session.call('s', 'hello')), /hello from the approved plugin/);
        for (let i = 0; i < 50; i++) {
          writeFiles(w.project, {
            'README.md': `# app\nedit ${i}\n`,
            [`notes/n${i % 5}.md`]: `note ${i}\n`,
            'data.json': JSON.stringify({ i }),
          });
          if (i % 10 === 9) {
            const s = evaluateGate(w.input).servers[0];
            assert.equal(s.state, 'approved', `after ${i + 1} edits: ${s.reason}`);
            assert.match(answer(await session.call('s', 'hello')), /hello from the approved plugin/, `after ${i + 1} edits`);
          }
        }
        // A fresh start of the same approval runs too: only what it loads is checked.
        const again = await start(w, log);
        assert.match(answer(await again.call('s', 'hello')), /hello from the approved plugin/);
        await again.close();

        fs.writeFileSync(path.join(w.project, shape.loaded), shape.change(marker));
        // Node and Python keep a module once loaded: the changed file is loaded by the next start's call.
        const next = await start(w, log);
        const r = answer(await next.call('s', 'hello').catch((e: Error) => ({ error: e.message })));
        assert.ok(!fs.existsSync(marker), 'the changed code ran');
        assert.doesNotMatch(r, /CHANGED-CODE/, r);
        // Stopped, and said: the log names the file; the gate shows the server as changed, naming it.
        const deadline = Date.now() + 5000;
        let s = evaluateGate(w.input).servers[0];
        while (s.state === 'approved' && Date.now() < deadline) {
          await new Promise((res) => setTimeout(res, 100));
          s = evaluateGate(w.input).servers[0];
        }
        assert.equal(s.state, 'approval-changed', s.reason);
        assert.match(s.reason, new RegExp(`${shape.loaded.replace(/\./g, '\\.')} changed since it was approved`));
        const refused = log.read().filter((e) => e.kind === 'guard.refused');
        assert.equal(refused.length >= 1, true, JSON.stringify(log.read().slice(-5)));
        assert.equal((refused[0] as { file?: string }).file, shape.loaded);
        // `get` shows the refused file as a diff against what was approved.
        const got = cli(w, ['get', 's']);
        assert.match(
          got.stdout,
          new RegExp(`refused when it loaded \\(${shape.loaded.replace(/\./g, '\\.')} changed since it was approved\\): approved ↔ now`),
          got.stdout + got.stderr,
        );
        assert.match(got.stdout, /^ {4}-.*hello from the approved plugin/m, got.stdout);
        assert.match(got.stdout, /^ {4}\+.*CHANGED-CODE/m, got.stdout);
        const later = answer(await next.call('s', 'hello').catch((e: Error) => ({ error: e.message })));
        assert.match(later, /load guard refused|changed since it was approved/, later);
        await next.close();
        assert.ok(!fs.existsSync(marker), 'the changed code ran');

        // Approving again takes the workspace as it is: the changed file now loads.
        await recordDecision(w.input, 's', undefined, 'approved');
        assert.equal(evaluateGate(w.input).servers[0].state, 'approved');
        const third = await start(w, log);
        assert.match(answer(await third.call('s', 'hello')), /CHANGED-CODE/);
        await third.close();
        assert.ok(fs.existsSync(marker), 'the approved change runs once approved');
      } finally {
        await session.close();
      }
    });
  }

  it("uncontained by the user's opt-out: the guard is on the command line, a changed plugin is still refused when it loads", async () => {
    const w = guarded(SHAPES[0].files(''));
    writeFiles(w.home, {
      '.config/mcp-gate/config.json': JSON.stringify({
        rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }],
        sandbox: { servers: [{ server: 's', project: w.project, off: true }] },
      }),
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const log = new EventLog(w.store, new Masker());
    const first = await start(w, log);
    try {
      assert.match(answer(await first.call('s', 'hello')), /hello from the approved plugin/);
    } finally {
      await first.close();
    }
    assert.ok(
      log.read().some((e) => e.kind === 'sandbox.off'),
      'it ran uncontained',
    );
    const marker = path.join(w.project, 'changed-code-ran');
    fs.writeFileSync(path.join(w.project, SHAPES[0].loaded), SHAPES[0].change(marker));
    const next = await start(w, log);
    try {
      const r = answer(await next.call('s', 'hello'));
      assert.doesNotMatch(r, /CHANGED-CODE/, r);
      assert.match(r, /the load guard refused it/, r);
    } finally {
      await next.close();
    }
    assert.ok(!fs.existsSync(marker), 'the changed code ran');
    assert.equal(evaluateGate(w.input).servers[0].state, 'approval-changed');
  });

  it('through the CLI (what a person runs): the review says what is checked when it loads; a README edit leaves it approved; a changed plugin is refused and named by get and log', () => {
    const w = guarded(SHAPES[0].files(''));
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    const get = cli(w, ['get', 's']);
    assert.match(
      get.stdout,
      /checked when it loads: tools\/server\.js:\d+ require\(\) loads a path computed at run time/,
      get.stdout + get.stderr,
    );
    assert.doesNotMatch(get.stdout, /the whole workspace/);
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    assert.match(cli(w, ['call', 's', 'hello']).stdout, /hello from the approved plugin/);
    writeFiles(w.project, { 'README.md': '# edited\n', 'docs/new.md': 'new\n' });
    assert.match(cli(w, ['get', 's']).stdout, /state +approved/);
    const marker = path.join(w.project, 'changed-code-ran');
    fs.writeFileSync(path.join(w.project, SHAPES[0].loaded), SHAPES[0].change(marker));
    const call = cli(w, ['call', 's', 'hello']);
    assert.ok(!fs.existsSync(marker), 'the changed code ran');
    assert.doesNotMatch(call.stdout, /CHANGED-CODE/);
    const after = cli(w, ['get', 's']).stdout;
    assert.match(after, /changed since approval: tools\/plugins\/greet\.js changed since it was approved/, after);
    const log = cli(w, ['log', '--json']).stdout;
    assert.match(log, /"kind": ?"guard\.refused"[^}]*"file": ?"tools\/plugins\/greet\.js"/, log);
  });

  it('text turned into code after the server read a changed file: the call, get and the log say it read the file and then ran text (eval), not that it loaded it', () => {
    const w = guarded({
      ...SHAPES[0].files(''),
      'tools/plugins/greet.js': "const fs = require('fs');\nmodule.exports = eval(fs.readFileSync(__dirname + '/../data.txt', 'utf8'));\n",
      'tools/data.txt': "'hello from the data'",
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    assert.match(cli(w, ['call', 's', 'hello']).stdout, /hello from the data/);
    const marker = path.join(w.project, 'changed-text-ran');
    fs.writeFileSync(path.join(w.project, 'tools/data.txt'), `(require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'), 'CHANGED')`);
    const call = cli(w, ['call', 's', 'hello']);
    assert.ok(!fs.existsSync(marker), 'the changed text ran');
    assert.match(
      call.stdout + call.stderr,
      /tools\/data\.txt changed since it was approved; "s" took it in and then turned text into code \(eval\), which the load guard refused/,
      call.stdout + call.stderr,
    );
    const after = cli(w, ['get', 's']).stdout;
    assert.match(
      after,
      /tools\/data\.txt changed since it was approved \(on [^)]*\); it took it in on [^\n]* and then turned text into code \(eval\)/,
      after,
    );
    assert.doesNotMatch(after, /tried to load it/);
    const log = cli(w, ['log', '--json']).stdout;
    assert.match(log, /"kind": ?"guard\.refused"[^}]*"file": ?"tools\/data\.txt"[^}]*took it in, then turned text into code/, log);
  });

  it('metadata through the CLI: a time set on an unchanged data file the server reads the times of refuses its eval, saying to approve again; approved again, it answers', () => {
    const w = guarded({
      ...SHAPES[0].files(''),
      'tools/plugins/greet.js':
        "const fs = require('fs');\nconst s = fs.statSync(__dirname + '/../data.txt');\nmodule.exports = eval(JSON.stringify('mtime ' + (s.mtimeMs > 0)));\n",
      'tools/data.txt': 'x',
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    assert.match(cli(w, ['call', 's', 'hello']).stdout, /mtime true/);
    fs.utimesSync(path.join(w.project, 'tools/data.txt'), 1000, 1000);
    const call = cli(w, ['call', 's', 'hello']);
    assert.doesNotMatch(call.stdout, /mtime true/, call.stdout + call.stderr);
    assert.match(
      call.stdout + call.stderr,
      /tools\/data\.txt[^\n]*changed since it was approved; "s" took it in and then turned text into code \(eval\)[^\n]*mcp-gate approve s/,
      call.stdout + call.stderr,
    );
    const get = cli(w, ['get', 's']).stdout;
    assert.match(get, /tools\/data\.txt/, get);
    // what the message says to do, as written
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    const again = cli(w, ['call', 's', 'hello']);
    assert.match(again.stdout, /mtime true/, again.stdout + again.stderr);
  });

  it('a refusal by a rule (a source whose coding declaration names a codec registered at run time) is shown by get with that rule, not generic words', () => {
    const w = guarded({
      'srv/server.py': pythonServer(
        "import codecs\ncodecs.register(lambda n: codecs.lookup('utf-8') if n == 'plain_x' else None)\nimport plugins\nreturn importlib.import_module('plugins.' + 'gre' + 'et').WORD",
      ),
      'srv/plugins/__init__.py': '',
      'srv/plugins/greet.py': "# -*- coding: plain_x -*-\nWORD = 'hello'\n",
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: '/usr/bin/python3', args: ['${workspaceFolder}/srv/server.py'] } }) });
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    const call = cli(w, ['call', 's', 'hello']);
    assert.notEqual(call.code, 0, call.stdout);
    // approving again cannot help here: the hint says to fix it, not to approve
    assert.match(call.stdout + call.stderr, /declare utf-8 or one of Python's codecs .*fix what it names, then start it again/);
    assert.doesNotMatch(call.stdout + call.stderr, /mcp-gate approve/);
    const after = cli(w, ['get', 's']).stdout;
    assert.match(after, /srv\/plugins\/greet\.py: [^\n]*coding/, after);
    assert.doesNotMatch(after, /asked for a module that runs code it is given/, 'the rule is said, not the generic words');
  });

  it('the watch starts before the verified copy is made: a pinned file changed while the server starts stops it once it runs', async () => {
    const w = guarded({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      // Slow to answer: the change below falls between the copy and the answer to initialize.
      'tools/server.js': miniServer(
        "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);\nconst lib = require('./lib.js');",
        'lib',
      ),
      'tools/lib.js': "module.exports = 'approved';\n",
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] } }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const log = new EventLog(w.store, new Masker());
    const starting = open(w, log);
    await new Promise((r) => setTimeout(r, 700));
    fs.writeFileSync(path.join(w.project, 'tools', 'lib.js'), "module.exports = 'CHANGED-CODE';\n");
    const session = await starting;
    try {
      const r = answer(await session.call('s', 'hello').catch((e: Error) => ({ error: e.message })));
      assert.doesNotMatch(r, /CHANGED-CODE/, r);
      assert.match(r, /tools\/lib\.js changed on disk/, r);
    } finally {
      await session.close();
    }
  });

  it("a module that runs code it is given (vm), asked for by a computed name from a file the approval pins, is refused (red team: code from a file's text)", async () => {
    const w = guarded({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'tools/server.js': miniServer(
        "const fs = require('node:fs'), path = require('node:path');\nconst m = require(['v', 'm'].join(''));",
        "m.runInThisContext(fs.readFileSync(path.join(__dirname, 'plugin.txt'), 'utf8'))",
      ),
      'tools/plugin.txt': "'approved'",
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] } }) });
    assert.ok(evaluateGate(w.input).servers[0].pinned?.pinned.guarded, 'a computed require is left to the guard');
    await recordDecision(w.input, 's', undefined, 'approved');
    const marker = path.join(w.project, 'changed-code-ran');
    writeFiles(w.project, { 'tools/plugin.txt': `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); 'CHANGED-CODE'` });
    const log = new EventLog(w.store, new Masker());
    const session = await open(w, log);
    try {
      assert.equal(session.servers().length, 0, 'it does not start');
      assert.match(
        session.notes.join('\n'),
        /tools\/server\.js asked for a module that runs code it is given .* by a name computed at run time/,
      );
    } finally {
      await session.close();
    }
    assert.ok(!fs.existsSync(marker), 'the changed text ran as code');
    assert.equal(evaluateGate(w.input).servers[0].state, 'approval-changed');
  });

  it("a python started by a name in a folder it can write, beside a pyvenv.cfg naming a standard library of its own, still runs the installation's (no code before the guard)", async () => {
    // Python finds its standard library from the name it runs under (a `pyvenv.cfg` beside it whose `home` leads to a
    // `lib/python3.X/os.py`): the wrapper gives it its real path, so an `encodings` written to /tmp never runs before
    // the guard exists.
    const w = guarded({
      'srv/server.py': pythonServer(
        [
          'import shutil, subprocess, sysconfig',
          "std = sysconfig.get_paths()['stdlib']",
          "lib = '/tmp/x/lib/' + os.path.basename(std)",
          "shutil.copytree(os.path.join(std, 'encodings'), lib + '/encodings', dirs_exist_ok=True)",
          "shutil.copy(os.path.join(std, 'os.py'), lib + '/os.py')",
          'open(lib + \'/encodings/__init__.py\', \'a\').write(\'\\nimport os as _o\\n_o.close(_o.open(_o.environ.get("WS", "/nowhere") + "/changed-code-ran", _o.O_CREAT | _o.O_WRONLY))\\n\')',
          "os.makedirs('/tmp/x/bin', exist_ok=True)",
          "open('/tmp/x/pyvenv.cfg', 'w').write('home = /tmp/x/bin\\n')",
          "os.path.lexists('/tmp/x/bin/python') or os.symlink(sys.executable, '/tmp/x/bin/python')",
          "r = subprocess.run(['/tmp/x/bin/python', '-c', 'import encodings; print(encodings.__file__)'], capture_output=True, text=True, env=dict(os.environ, WS=os.getcwd()))",
          "return 'encodings ' + r.stdout.strip() + ' ' + r.stderr[-200:]",
        ].join('\n'),
      ),
      'README.md': '# app\n',
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: PYTHON, args: ['srv/server.py'] } }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const log = new EventLog(w.store, new Masker());
    const session = await start(w, log);
    try {
      const r = answer(await session.call('s', 'hello').catch((e: Error) => ({ error: e.message })));
      assert.ok(!fs.existsSync(path.join(w.project, 'changed-code-ran')), `an encodings module from /tmp ran before the guard: ${r}`);
      assert.match(r, /encodings \/usr\/lib\/python3[.\d]*\/encodings\/__init__\.py/, r);
    } finally {
      await session.close();
    }
  });

  it("a changed plugin copied by the server to /dev (a tmpfs) or to the guard's report folder, both writable in the sandbox, is refused there as a scratch file (red team 13, cases 05 and 07)", async () => {
    const w = guarded({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'tools/plugins/p.js': "module.exports = 'approved plugin';\n",
      'tools/server.js': miniServer(
        "const fs = require('node:fs'), path = require('node:path');",
        "['/dev', '/run/mcp-gate/report'].map((d) => { const to = path.join(d, 'p' + Date.now() + '.js'); try { fs.copyFileSync(path.join(__dirname, 'plugins', ['p'].join('') + '.js'), to); return d + ': ' + require(to); } catch (e) { return d + ': ' + (e.code || e.message); } }).join('; ')",
      ),
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] } }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const log = new EventLog(w.store, new Masker());
    let session = await start(w, log);
    try {
      const r = answer(await session.call('s', 'hello'));
      assert.match(r, /"\/dev: approved plugin; \/run\/mcp-gate\/report: approved plugin"/, 'the approved bytes load from either place');
    } finally {
      await session.close();
    }
    const marker = path.join(w.project, 'changed-code-ran');
    writeFiles(w.project, {
      'tools/plugins/p.js': `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); module.exports = 'changed';\n`,
    });
    session = await start(w, log);
    try {
      const r = answer(await session.call('s', 'hello').catch((e: Error) => ({ error: e.message })));
      assert.ok(!fs.existsSync(marker), `a changed plugin ran from a copy outside the workspace: ${r}`);
      assert.match(r, /was written outside the workspace and is no file that was approved|ERR_MCP_GATE_GUARD|refused/, r);
    } finally {
      await session.close();
    }
  });

  it('a file the server was not approved with (new) is refused at load; a server whose approval has no workspace record does not start', async () => {
    const w = guarded({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'tools/server.js': miniServer(
        "const path = require('node:path');",
        "require(path.join(__dirname, 'plugins', ['ne', 'w'].join('') + '.js'))",
      ),
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] } }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const marker = path.join(w.project, 'new-code-ran');
    writeFiles(w.project, {
      'tools/plugins/new.js': `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); module.exports = 'new';\n`,
    });
    const log = new EventLog(w.store, new Masker());
    const session = await start(w, log);
    try {
      await session.call('s', 'hello').catch(() => undefined);
      assert.ok(!fs.existsSync(marker), 'a file that was not there at approval ran');
      const deadline = Date.now() + 5000;
      while (evaluateGate(w.input).servers[0].state === 'approved' && Date.now() < deadline)
        await new Promise((res) => setTimeout(res, 100));
      assert.match(evaluateGate(w.input).servers[0].reason, /tools\/plugins\/new\.js was not there when it was approved/);
    } finally {
      await session.close();
    }
    // The store's record of the workspace removed: the server is not started, and the message says what to do.
    for (const f of fs.readdirSync(path.join(w.store, 'manifests'))) fs.rmSync(path.join(w.store, 'manifests', f));
    await recordDecision(w.input, 's', undefined, 'approved').catch(() => undefined);
    for (const f of fs.readdirSync(path.join(w.store, 'manifests'))) fs.rmSync(path.join(w.store, 'manifests', f));
    const s2 = await open(w, log);
    assert.equal(s2.servers().length, 0);
    assert.match(s2.notes.join('\n'), /record of the workspace as approved .* cannot be read.*approve it again/);
    await s2.close();
  });
});
