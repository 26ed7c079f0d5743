// The words a person reads, from their one place each: the state label table (src/trust/approval/gate-state.ts),
// counts with their plural (src/text/count.ts), one time format (src/text/time.ts), one timestamp per log line in
// VS Code's output channel (src/report/log-line.ts), and the CLI's human output using them while JSON keeps codes.
import assert from 'node:assert/strict';
import { STATE_LABEL, stateWords, type GateState } from '../../../src/trust/approval/gate-state';
import { count } from '../../../src/text/count';
import { exactTime, whenText } from '../../../src/text/time';
import { logLine } from '../../../src/report/log-line';
import { cleanupTemp, cli, world, writeFiles } from '../helpers';
import { evaluateGate } from '../../../src/trust/gate';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { serverText } from '../../../src/report/render';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers });

describe('words a person uses', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  it('every state has a label in words, none of them a code', () => {
    const states: GateState[] = ['trusted', 'pending', 'approved', 'approval-changed', 'rejected', 'blocked'];
    assert.deepEqual(Object.keys(STATE_LABEL).sort(), [...states].sort());
    assert.equal(STATE_LABEL['approval-changed'], 'changed since approval');
    assert.equal(STATE_LABEL.pending, 'waiting for review');
    for (const s of states) assert.doesNotMatch(STATE_LABEL[s], /-|\(hatch\)|,/, `${s}: ${STATE_LABEL[s]}`);
    assert.equal(stateWords({ state: 'pending', disabled: true }), 'waiting for review, disabled');
    assert.equal(stateWords({ state: 'approved', viaEscapeHatch: true }), 'approved by MCP_GATE_ALLOW_PROJECT');
  });

  it('counts say one and many, zero in the plural', () => {
    assert.equal(count(0, 'file'), '0 files');
    assert.equal(count(1, 'file'), '1 file');
    assert.equal(count(7, 'file'), '7 files');
    assert.equal(count(1, 'repository', 'repositories'), '1 repository');
    assert.equal(count(2, 'repository', 'repositories'), '2 repositories');
  });

  it('one time format: relative, with the exact time in parentheses; never the raw ISO string', () => {
    const now = Date.parse('2026-12-01T19:38:53.213Z');
    assert.equal(whenText('2026-12-01T19:35:53.213Z', now), '3 minutes ago (2026-12-01 19:35:53 UTC)');
    assert.equal(exactTime('2026-12-01T19:35:53.213Z'), '2026-12-01 19:35:53 UTC');
    assert.equal(whenText('garbage', now), 'garbage');
  });

  it("the output channel's line carries no time of its own (the channel stamps it): one timestamp a line", () => {
    const e = { at: '2026-12-01T19:35:53.213Z', kind: 'gate.route', detail: 'x' };
    assert.equal(logLine(e), '2026-12-01T19:35:53.213Z gate.route — x');
    assert.equal(logLine(e, { time: false }), 'gate.route — x');
  });

  it('a file added to the folder a single-file server runs from is said as added, not as a file it runs; the folder says why it is pinned', () => {
    // Pinned by the prediction (the gate without the load guard's design): the entry's folder is its package.
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['s.js'] } }), 's.js': 'eval("safe()")\n' });
    assert.match(
      serverText(evaluateGate(w.input).servers[0]),
      /folder \. \(the whole workspace\)\s+— the entry s\.js that node runs \(no package manifest at or above its folder, so the folder is its package\)/,
    );
    return recordDecision(w.input, 's', undefined, 'approved').then(() => {
      writeFiles(w.project, { 'notes.txt': 'hi\n' });
      assert.match(
        evaluateGate(w.input).servers[0].reason,
        /^a file was added to a folder it runs from \(notes\.txt\) since it was approved/,
      );
      writeFiles(w.project, { 's.js': 'eval("changed()")\n' });
      assert.match(
        evaluateGate(w.input).servers[0].reason,
        /^a file it runs changed \(s\.js\) and a file was added to a folder it runs from \(notes\.txt\)/,
      );
    });
  });

  it('a server on the approved snapshot: the review says why and what it is shown; other edits leave it approved; its own file is "a file it runs changed"', () => {
    // Code built from strings is no load the load guard sees: the server runs on the workspace as approved.
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['s.js'] } }), 's.js': 'eval("safe()")\n' });
    const get = cli(w, ['get', 's']).stdout;
    assert.match(
      get,
      /runs the workspace as it is when you approve: a read-only copy, never the live files; later edits reach it when you review them and approve it again/,
    );
    assert.match(get, /why not checked file by file: s\.js:1 /);
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    assert.match(cli(w, ['get', 's']).stdout, /runs the workspace as approved on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ files?\)/);
    writeFiles(w.project, { 'notes.txt': 'hi\n' });
    assert.match(
      cli(w, ['get', 's']).stdout,
      /state\s+approved: approved on .*; it runs on the workspace as it was then \(later edits reach it when you approve it again\)/,
    );
    writeFiles(w.project, { 's.js': 'eval("changed()")\n' });
    assert.match(cli(w, ['get', 's']).stdout, /state\s+changed since approval: a file it runs changed \(s\.js\) since it was approved/);
  });

  it('the CLI says "a file it runs changed" apart from "its definition changed", in words and exact times; JSON keeps the code', () => {
    const w = world({ '.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }), 'db.js': 'safe()\n' });
    assert.equal(cli(w, ['approve', 'db', '--yes']).code, 0);
    writeFiles(w.project, { 'db.js': 'safe()\nexfiltrate()\n' });
    const file = cli(w, ['get', 'db']).stdout;
    assert.match(
      file,
      /state\s+changed since approval: a file it runs changed \(db\.js\) since it was approved on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; its definition as written is the same/,
    );
    assert.doesNotMatch(file, /\d{4}-\d\d-\d\dT\d\d:\d\d/, 'no raw ISO time');
    assert.match(file, /files it names \(content pinned\): 1 file, \d+ bytes/);
    assert.equal(JSON.parse(cli(w, ['list', '--json']).stdout).servers[0].state, 'approval-changed');

    writeFiles(w.project, { 'db.js': 'safe()\n', '.mcp.json': MCP({ db: { command: 'node', args: ['db.js', '--verbose'] } }) });
    const def = cli(w, ['get', 'db']).stdout;
    assert.match(def, /state\s+changed since approval: its definition changed since it was approved on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    assert.match(cli(w, ['list']).stdout, /changed since approval\s+repository\s+\.mcp\.json\s+db/);
  });
});
