// The approved snapshot (issue 43, item 4): a server MCP Gate cannot check file by file (a shell script that starts
// Node, a Node server that runs child processes) runs on the workspace as it was approved — a read-only copy made from
// what the approval kept — never on the live files. Edits to any other file neither reach it nor re-gate it; a
// changed plugin's code never runs (it would write a marker); approving again brings the edits in. An edit to a file
// the plan names is a change to what the person reviewed. A kept copy that is missing refuses the start, naming it;
// uncontained, a server on the snapshot starts only while the live workspace is what was approved.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { Session } from '../../../src/host/session';
import { EventLog } from '../../../src/host/log/log';
import { Masker } from '../../../src/policy/mask';
import { sandboxAvailable } from '../../../src/host/sandbox/sandbox';
import { blobPath, loadManifest } from '../../../src/trust/approval/workspace-manifest';
import { serverText } from '../../../src/report/render';
import { cleanupTemp, world, writeFiles, type World } from '../helpers';
import { miniServer } from '../mini-server';
import { sessionOptions } from './session-options';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);
const answer = (o: unknown) => JSON.stringify(o);

function snapshotWorld(files: Record<string, string>, config: Record<string, unknown> = {}): World {
  const w = world(files, {}, { PATH: process.env.PATH ?? '' });
  w.input.loadGuard = true;
  writeFiles(w.home, {
    '.config/mcp-gate/config.json': JSON.stringify({
      rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }],
      ...config,
    }),
  });
  return w;
}

function open(w: World, log: EventLog): Promise<Session> {
  const report = evaluateGate(w.input);
  assert.equal(report.servers[0].state, 'approved', report.servers[0].reason);
  return Session.start(sessionOptions(w, { report, log }));
}

// The plugin is read by a path computed at run time and handed to a child process: neither is checked file by file.
const SERVER = miniServer(
  "const cp = require('node:child_process');\nconst path = require('node:path');",
  "cp.execFileSync(process.execPath, [path.join(__dirname, 'plugins', ['gre', 'et'].join('') + '.js')]).toString().trim()",
);

const SHAPES: { name: string; server: Record<string, unknown>; files: Record<string, string>; named: string }[] = [
  {
    name: 'a shell script that starts a Node server',
    server: { command: 'bash', args: ['${workspaceFolder}/run.sh'] },
    files: { 'run.sh': 'cd "$(dirname "$0")" && exec node tools/server.js\n', 'tools/server.js': SERVER },
    named: 'run.sh',
  },
  {
    // Perl loads modules along library paths it computes (`use lib "$FindBin::Bin/../lib"`): red team 6, case 08.
    name: 'a Perl script that starts a Node server',
    server: { command: 'perl', args: ['${workspaceFolder}/run.pl'] },
    files: { 'run.pl': 'use FindBin;\nchdir "$FindBin::Bin" or die;\nexec "node", "tools/server.js";\n', 'tools/server.js': SERVER },
    named: 'run.pl',
  },
  {
    name: 'a Node server that runs child processes',
    server: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] },
    files: { 'tools/server.js': SERVER },
    named: 'tools/server.js',
  },
];

// With a marker: it writes the marker (in the workspace) and says whether it could.
const PLUGIN = (word: string, marker = '') =>
  `${marker ? `try { require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran'); } catch (e) { process.stdout.write(e.code + ' '); }\n` : ''}console.log(${JSON.stringify(word)});\n`;

describe('the approved snapshot: a server that cannot be checked file by file runs the workspace as approved', function () {
  this.timeout(120_000);
  after(cleanupTemp);
  before(function () {
    if (!sandboxAvailable().ok) throw new Error(`bubblewrap is needed: ${JSON.stringify(sandboxAvailable())}`);
  });

  for (const shape of SHAPES) {
    it(`${shape.name}: edits stay out of it and do not re-gate it; approving again brings them in`, async () => {
      const w = snapshotWorld({
        ...shape.files,
        'package.json': JSON.stringify({ name: 'app' }),
        'tools/plugins/greet.js': PLUGIN('hello from the approved plugin'),
        'README.md': '# app\n',
      });
      writeFiles(w.project, { '.mcp.json': MCP({ s: shape.server }) });
      const marker = path.join(w.project, 'changed-code-ran');
      const pending = evaluateGate(w.input).servers[0];
      assert.equal(pending.state, 'pending', pending.reason);
      assert.ok(pending.pinned?.pinned.snapshot?.length, `runs on the snapshot: ${JSON.stringify(pending.pinned?.pinned)}`);
      assert.deepEqual(Object.keys(pending.pinned.pinned.files), [shape.named], 'only the file the plan names is pinned as itself');
      assert.match(serverText(pending), /runs the workspace as it is when you approve: a read-only copy, never the live files/);

      await recordDecision(w.input, 's', undefined, 'approved');
      const approved = evaluateGate(w.input).servers[0];
      assert.equal(approved.state, 'approved', approved.reason);
      assert.match(approved.reason, /it runs on the workspace as it was then/);
      const log = new EventLog(w.store, new Masker());
      const session = await open(w, log);
      assert.equal(session.servers().length, 1, session.notes.join('\n'));
      try {
        assert.match(answer(await session.call('s', 'hello')), /hello from the approved plugin/);
        for (let i = 0; i < 50; i++) {
          writeFiles(w.project, { 'README.md': `# app\nedit ${i}\n`, [`notes/n${i % 5}.md`]: `note ${i}\n` });
          if (i === 25) fs.writeFileSync(path.join(w.project, 'tools/plugins/greet.js'), PLUGIN('CHANGED-CODE', marker));
          if (i % 10 === 9) {
            const s = evaluateGate(w.input).servers[0];
            assert.equal(s.state, 'approved', `after ${i + 1} edits: ${s.reason}`);
            const r = answer(await session.call('s', 'hello'));
            assert.match(r, /hello from the approved plugin/, `after ${i + 1} edits: ${r}`);
          }
        }
        assert.ok(!fs.existsSync(marker), 'the changed plugin ran');
        // A fresh start of the same approval is shown the workspace as approved too.
        const again = await open(w, log);
        assert.equal(again.servers().length, 1, again.notes.join('\n'));
        assert.match(answer(await again.call('s', 'hello')), /hello from the approved plugin/);
        assert.ok(!fs.existsSync(marker), 'the changed plugin ran in a fresh start');
        await again.close();
        // The copy is made once per approval and shown again: one tree for both starts.
        assert.equal(fs.readdirSync(path.join(w.store, 'runs')).filter((n) => n.startsWith('tree-')).length, 1);
      } finally {
        await session.close();
      }

      // Approving again takes the workspace as it is now: the edit reaches it (and its marker is written where the
      // server can write: nowhere in the workspace, which stays read-only to it).
      await recordDecision(w.input, 's', undefined, 'approved');
      const next = await open(w, log);
      try {
        assert.match(answer(await next.call('s', 'hello')), /EROFS CHANGED-CODE/);
      } finally {
        await next.close();
      }
      assert.ok(!fs.existsSync(marker), 'the workspace is read-only to a server on the snapshot');

      // The file the plan names is what the person reviewed: a change to it is a change to the server.
      fs.appendFileSync(path.join(w.project, shape.named), '\n# edited\n');
      const changed = evaluateGate(w.input).servers[0];
      assert.equal(changed.state, 'approval-changed', changed.reason);
      assert.match(changed.reason, new RegExp(shape.named.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    });
  }

  it('a copy its approval kept that is missing refuses the start, naming the file and what to do', async () => {
    const w = snapshotWorld({ ...SHAPES[0].files, 'tools/plugins/greet.js': PLUGIN('hello') });
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const record = evaluateGate(w.input).servers[0].record!;
    const manifest = loadManifest(w.store, record.manifest!);
    fs.rmSync(blobPath(w.store, manifest.files['tools/plugins/greet.js']), { force: true });
    const session = await open(w, new EventLog(w.store, new Masker()));
    try {
      assert.equal(session.servers().length, 0);
      assert.match(session.notes.join('\n'), /the copy of tools\/plugins\/greet\.js its approval kept .* cannot be read.*review it again/);
    } finally {
      await session.close();
    }
  });

  it('uncontained (opted out), it starts only while the live workspace is what was approved, naming what changed', async () => {
    const w = snapshotWorld({ ...SHAPES[0].files, 'tools/plugins/greet.js': PLUGIN('hello from the approved plugin') });
    writeFiles(w.home, {
      '.config/mcp-gate/config.json': JSON.stringify({
        rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }],
        sandbox: { servers: [{ server: 's', project: w.project, off: true }] },
      }),
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    await recordDecision(w.input, 's', undefined, 'approved');
    const log = new EventLog(w.store, new Masker());
    const first = await open(w, log);
    try {
      assert.match(answer(await first.call('s', 'hello')), /hello from the approved plugin/);
    } finally {
      await first.close();
    }
    const marker = path.join(w.project, 'changed-code-ran');
    fs.writeFileSync(path.join(w.project, 'tools/plugins/greet.js'), PLUGIN('CHANGED-CODE', marker));
    const second = await open(w, log);
    try {
      assert.equal(second.servers().length, 0);
      assert.match(
        second.notes.join('\n'),
        /tools\/plugins\/greet\.js changed since it was approved; it is not started — approve it again/,
      );
    } finally {
      await second.close();
    }
    assert.ok(!fs.existsSync(marker));
  });

  it('a file too large to hash: uncontained, a change to it (same size, its time put back) refuses the start; contained, the sandbox line says it is not on the snapshot', async () => {
    const big = (w: World) => path.join(w.project, 'data', 'big.bin');
    const sparse = (f: string, tail: string) => {
      fs.mkdirSync(path.dirname(f), { recursive: true });
      const fd = fs.openSync(f, 'w');
      fs.writeSync(fd, tail, 300 * 1024 * 1024); // sparse: over the 256 MiB hashing bound at no cost
      fs.closeSync(fd);
    };
    // uncontained: its size, time and inode are compared with what the approval recorded
    const w = snapshotWorld({ ...SHAPES[0].files, 'tools/plugins/greet.js': PLUGIN('hello from the approved plugin') });
    writeFiles(w.home, {
      '.config/mcp-gate/config.json': JSON.stringify({
        rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }],
        sandbox: { servers: [{ server: 's', project: w.project, off: true }] },
      }),
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    sparse(big(w), 'echo approved');
    await recordDecision(w.input, 's', undefined, 'approved');
    const log = new EventLog(w.store, new Masker());
    const first = await open(w, log);
    assert.equal(first.servers().length, 1, first.notes.join('\n'));
    await first.close();
    const st = fs.statSync(big(w), { bigint: true });
    const fd = fs.openSync(big(w), 'r+');
    fs.writeSync(fd, 'echo CHANGED', 300 * 1024 * 1024);
    fs.closeSync(fd);
    fs.utimesSync(big(w), new Date(Number(st.atimeNs / 1_000_000n)), new Date(Number(st.mtimeNs / 1_000_000n)));
    const second = await open(w, log);
    try {
      assert.equal(second.servers().length, 0);
      assert.match(second.notes.join('\n'), /data\/big\.bin changed since it was approved/);
    } finally {
      await second.close();
    }
    // contained: it is not on the snapshot, and the sandbox line says so
    const c = snapshotWorld({ ...SHAPES[0].files, 'tools/plugins/greet.js': PLUGIN('hello from the approved plugin') });
    writeFiles(c.project, { '.mcp.json': MCP({ s: SHAPES[0].server }) });
    sparse(big(c), 'data');
    await recordDecision(c.input, 's', undefined, 'approved');
    const contained = await open(c, new EventLog(c.store, new Masker()));
    try {
      assert.equal(contained.servers().length, 1, contained.notes.join('\n'));
      const start = fs
        .readFileSync(path.join(c.store, 'log.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { kind: string; detail?: string })
        .find((e) => e.kind === 'server.start');
      assert.match(String(start?.detail), /not on the workspace as approved: data\/big\.bin — over 256 MiB, never hashed/);
    } finally {
      await contained.close();
    }
  });

  it('the folders kept read-only for the host (.devcontainer, a nested .git, …) are the approved copies too, never the live ones', async () => {
    const w = snapshotWorld({
      'srv/server.js': miniServer(
        "const cp = require('node:child_process'); const fs = require('node:fs');",
        "fs.readFileSync('.devcontainer/check.sh', 'utf8').trim() + ' | ' + fs.readFileSync('vendor/lib/.git/config', 'utf8').trim()",
      ),
      'package.json': '{"name":"app"}',
      '.devcontainer/check.sh': 'echo approved-check',
      'vendor/lib/.git/config': '[approved]',
    });
    writeFiles(w.project, { '.mcp.json': MCP({ s: { command: 'node', args: ['srv/server.js'] } }) });
    assert.ok(evaluateGate(w.input).servers[0].pinned?.pinned.snapshot, 'on the snapshot (it starts programs)');
    await recordDecision(w.input, 's', undefined, 'approved');
    writeFiles(w.project, { '.devcontainer/check.sh': 'echo CHANGED', 'vendor/lib/.git/config': '[CHANGED]' });
    const session = await open(w, new EventLog(w.store, new Masker()));
    try {
      const r = answer(await session.call('s', 'hello'));
      assert.match(r, /approved-check \| \[approved\]/, r);
      assert.doesNotMatch(r, /CHANGED/);
    } finally {
      await session.close();
    }
  });
});
