// Argument rules through the CLI against the real filesystem server from npm (@modelcontextprotocol/server-filesystem),
// run as a user's own server that may read all of a folder holding both the workspace and a home: the rule keeps the
// model's `read_text_file` to the workspace. A read inside answers; one outside, through "..", or through a link in
// the workspace is refused before the server sees it, and the log's line names the rule; `explain --args` says
// the same before any call; a rule with a broken "args" denies everything with the file and the reason.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, ROOT, world } from '../helpers';

const FS_SERVER = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

describe('CLI: argument rules against server-filesystem', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  function setup(args: unknown) {
    const w = world({ 'notes.txt': 'inside the workspace\n' }, { 'secret.txt': "the user's secret\n" });
    const base = path.dirname(fs.realpathSync(w.project));
    fs.symlinkSync(w.home, path.join(w.project, 'home-link'));
    const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      JSON.stringify(
        {
          servers: { files: { command: process.execPath, args: [FS_SERVER, base] } },
          rules: [{ action: 'mcp.files.tool.read_text_file', decision: 'allow', args }],
        },
        null,
        2,
      ),
    );
    return { w, project: fs.realpathSync(w.project), home: fs.realpathSync(w.home), file };
  }

  it('a read in the workspace answers; outside, "..", a link out: refused before the server, the rule in the log', () => {
    const { w, project, home } = setup({ path: { under: '${workspaceFolder}' } });
    const inside = cli(w, ['call', 'files', 'read_text_file', '--args', JSON.stringify({ path: path.join(project, 'notes.txt') })]);
    assert.equal(inside.code, 0, inside.stderr);
    assert.match(inside.stdout, /inside the workspace/);
    const attempts: [string, RegExp][] = [
      [path.join(home, 'secret.txt'), /is not under/],
      [`${project}/../home/secret.txt`, /is not under/],
      [path.join(project, 'home-link', 'secret.txt'), /leads through a symbolic link to ".*secret\.txt", which is not under/],
      ['~/secret.txt', /starts with "~"/],
    ];
    for (const [p, why] of attempts) {
      const r = cli(w, ['call', 'files', 'read_text_file', '--args', JSON.stringify({ path: p })]);
      assert.equal(r.code, 1, `${p}: ${r.stdout}`);
      assert.doesNotMatch(r.stdout + r.stderr, /secret\n|the user's secret/);
      assert.match(
        r.stderr,
        /refused: mcp\.files\.tool\.read_text_file is refused by rule \{"action":"mcp\.files\.tool\.read_text_file","decision":"allow","args":\{"path":\{"under":\["\$\{workspaceFolder\}"\]\}\}\} \(rules\[0\] in .*config\.json:\d+\): argument "path"/,
      );
      assert.match(r.stderr, why);
    }
    const log = JSON.parse(cli(w, ['log', '--server', 'files', '--json']).stdout) as Record<string, unknown>[];
    const refusals = log.filter((e) => e.kind === 'mcp.request' && e.outcome === 'refused_by_policy');
    assert.equal(refusals.length, attempts.length);
    for (const e of refusals) {
      assert.equal(e.about, 'read_text_file');
      assert.deepEqual(JSON.parse(String(e.rule)), {
        action: 'mcp.files.tool.read_text_file',
        decision: 'allow',
        args: { path: { under: ['${workspaceFolder}'] } },
      });
      assert.match(String(e.detail), /argument "path"/);
    }
    assert.equal(log.filter((e) => e.kind === 'tool.call').length, 1, 'only the allowed call reached the server');
  });

  it('explain --args decides a call before it is made, and says what each argument must be', () => {
    const { w, project, home } = setup({ path: { under: '${workspaceFolder}' } });
    const ok = cli(w, ['explain', 'mcp.files.tool.read_text_file', '--args', JSON.stringify({ path: path.join(project, 'notes.txt') })]);
    assert.equal(ok.code, 0, ok.stdout);
    assert.match(
      ok.stdout,
      new RegExp(
        `arguments: argument "path" must be an absolute path under \\$\\{workspaceFolder\\} \\(${project.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)`,
      ),
    );
    const no = cli(w, ['explain', 'mcp.files.tool.read_text_file', '--args', JSON.stringify({ path: path.join(home, 'secret.txt') })]);
    assert.equal(no.code, 1);
    assert.match(no.stdout, /^decision: deny$/m);
    assert.match(no.stdout, /reason: .*argument "path" \(".*secret\.txt"\) is not under/);
    const usage = cli(w, ['explain', 'mcp.files.tool.read_text_file', '--args', '[1]']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--args must be a JSON object/);
  });

  it('a broken "args" is an invalid rule: the file, the rule and why; every action is denied until it is fixed', () => {
    const { w, project, file } = setup({ path: { under: 'src' } });
    const r = cli(w, ['call', 'files', 'read_text_file', '--args', JSON.stringify({ path: path.join(project, 'notes.txt') })]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stdout + r.stderr,
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*"args" "path": "under" "src" must be an absolute folder or start with \\$\\{workspaceFolder\\}`,
        's',
      ),
    );
    assert.doesNotMatch(r.stdout, /inside the workspace/);
  });
});
