// `mcp-gate check` as a CI pipeline runs it: the built CLI on repositories made in temp folders, checked on what
// a pipeline sees — the exit code (the sum of 8 pending, 16 changed, 32 blocked, 64 preapproval for the categories
// of --fail-on that have an entry; 1 when the store cannot be read; 2 for a usage error), the text lines and the
// one JSON object on stdout.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, world, writeFiles, type World } from '../helpers';
import { cliAsNobody, toNobody } from '../nobody';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);
const DB = { '.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }), 'db.js': 'serve()\n' };
const CLAUDE_PREAPPROVES = { '.claude/settings.json': '{\n  "enableAllProjectMcpServers": true\n}\n' };

/** `check --json`: stdout must be exactly one JSON object. */
function checkJson(w: World, args: string[] = []) {
  const r = cli(w, ['check', '--json', ...args]);
  return { code: r.code, stderr: r.stderr, j: JSON.parse(r.stdout) };
}

const names = (entries: { name?: string }[]) => entries.map((e) => e.name);
const summary = (stdout: string) => stdout.trimEnd().split('\n').at(-1);

describe('mcp-gate check', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  it('a repository with no servers passes: exit 0, every category empty', () => {
    const w = world({ 'README.md': 'nothing to run here\n' });
    const r = cli(w, ['check']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      summary(r.stdout),
      'check: 0 pending, 0 changed, 0 blocked, 0 preapproval; fails on pending, changed, blocked, preapproval; exit 0 (nothing to fail on)',
    );
    const { code, j } = checkJson(w);
    assert.equal(code, 0);
    assert.equal(j.ok, true);
    assert.equal(j.exitCode, 0);
    assert.deepEqual(j.failOn, ['pending', 'changed', 'blocked', 'preapproval']);
    assert.deepEqual([j.pending, j.changed, j.blocked, j.preapproval], [[], [], [], []]);
    assert.equal(fs.realpathSync(j.project), fs.realpathSync(w.project));
  });

  it('a pending server: exit 8, its line names server, source and what to do; the JSON lists it', () => {
    const w = world(DB);
    const r = cli(w, ['check']);
    assert.equal(r.code, 8, r.stderr);
    assert.match(r.stdout, /^pending \(1, waiting for a first review\):$/m);
    assert.match(
      r.stdout,
      /^ {2}db {2}\.mcp\.json:3 {2}repository scope {2}waiting for review: .* — review it with `mcp-gate get db` and approve it on a machine you trust$/m,
    );
    assert.equal(
      summary(r.stdout),
      'check: 1 pending, 0 changed, 0 blocked, 0 preapproval; fails on pending, changed, blocked, preapproval; exit 8 (8 pending)',
    );
    const { code, j } = checkJson(w);
    assert.equal(code, 8);
    assert.equal(j.ok, false);
    assert.equal(j.exitCode, 8);
    assert.equal(j.pending.length, 1);
    const [db] = j.pending;
    assert.equal(db.name, 'db');
    assert.equal(db.source, '.mcp.json');
    assert.equal(db.scope, 'repository');
    assert.equal(db.state, 'pending');
    assert.equal(typeof db.reason, 'string');
    assert.match(db.next, /mcp-gate get db/);
    assert.deepEqual([j.changed, j.blocked, j.preapproval], [[], [], []]);
  });

  it('approved through the CLI, then changed in the repository: exit 16 until approved again', () => {
    const w = world(DB);
    assert.equal(cli(w, ['approve', 'db', '--yes', '--store', w.store]).code, 0);
    assert.equal(cli(w, ['check', '--store', w.store]).code, 0, 'approved as it stands: passes');
    writeFiles(w.project, { '.mcp.json': MCP({ db: { command: 'node', args: ['db.js', '--evil'] } }) });
    const r = cli(w, ['check', '--store', w.store]);
    assert.equal(r.code, 16, r.stderr);
    assert.match(r.stdout, /^changed \(1, changed since approval\):$/m);
    assert.match(
      r.stdout,
      /^ {2}db {2}\.mcp\.json:3 {2}repository scope {2}changed since approval: .* — review it with `mcp-gate get db` and approve it again on a machine you trust \(`get` shows what changed\)$/m,
    );
    const { code, j } = checkJson(w, ['--store', w.store]);
    assert.equal(code, 16);
    assert.deepEqual(names(j.changed), ['db']);
    assert.equal(j.changed[0].state, 'approval-changed');
    assert.deepEqual(j.pending, []);
  });

  it('a name declared in two files: each line names its file, and its commands carry --source', () => {
    const w = world({ ...DB, '.cursor/mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }) });
    const { code, j } = checkJson(w);
    assert.equal(code, 8);
    assert.deepEqual(j.pending.map((e: { name: string; source: string }) => [e.name, e.source]).sort(), [
      ['db', '.cursor/mcp.json'],
      ['db', '.mcp.json'],
    ]);
    for (const e of j.pending)
      assert.equal(
        e.next,
        `review it with \`mcp-gate get db --source ${e.source}\` and approve it with \`mcp-gate approve db --source ${e.source}\` on a machine you trust`,
      );
  });

  it('a rejected server is blocked: exit 32, with how to take the rejection back', () => {
    const w = world(DB);
    assert.equal(cli(w, ['reject', 'db']).code, 0);
    const r = cli(w, ['check']);
    assert.equal(r.code, 32, r.stderr);
    assert.match(
      r.stdout,
      /^ {2}db {2}\.mcp\.json:3 {2}repository scope {2}rejected: rejected on .* — a person rejected it in this store: remove it from \.mcp\.json, or `mcp-gate reset db` returns it to pending$/m,
    );
    const { j } = checkJson(w);
    assert.deepEqual(
      j.blocked.map((e: { name: string; state: string }) => [e.name, e.state]),
      [['db', 'rejected']],
    );
  });

  it('a blocked entry (both command and url) is blocked: exit 32', () => {
    const w = world({ '.mcp.json': MCP({ confused: { command: 'x', url: 'https://x.example/mcp' } }) });
    const { code, j } = checkJson(w);
    assert.equal(code, 32);
    assert.equal(j.blocked[0].name, 'confused');
    assert.equal(j.blocked[0].state, 'blocked');
    assert.match(j.blocked[0].reason, /declares both "command" and "url"/);
    assert.equal(j.blocked[0].next, 'fix or remove its entry in .mcp.json');
  });

  it('a repository that pre-approves for Claude Code: exit 64 alone, 72 with a pending server', () => {
    const alone = world(CLAUDE_PREAPPROVES);
    const r = cli(alone, ['check']);
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stdout, /^preapproval \(1, pre-approval attempts for other agents\):$/m);
    assert.match(
      r.stdout,
      /^ {2}this repository tries to approve every server of \.mcp\.json for Claude Code \(\.claude\/settings\.json:2, enableAllProjectMcpServers\) — remove enableAllProjectMcpServers from \.claude\/settings\.json: /m,
    );
    const { j } = checkJson(alone);
    assert.deepEqual(
      j.preapproval.map((e: { file: string; agent: string; key: string; what: string }) => [e.file, e.agent, e.key, e.what]),
      [['.claude/settings.json', 'Claude Code', 'enableAllProjectMcpServers', 'every server of .mcp.json']],
    );

    const both = world({ ...DB, ...CLAUDE_PREAPPROVES });
    const b = cli(both, ['check']);
    assert.equal(b.code, 72, b.stderr);
    assert.equal(
      summary(b.stdout),
      'check: 1 pending, 0 changed, 0 blocked, 1 preapproval; fails on pending, changed, blocked, preapproval; exit 72 (8 pending + 64 preapproval)',
    );
    const bj = checkJson(both).j;
    assert.equal(bj.exitCode, 72);
    assert.deepEqual(names(bj.pending), ['db']);
    assert.equal(bj.preapproval.length, 1);
  });

  it('an unparsable .mcp.json fails closed: the whole project blocked, and what it pre-approves unknown', () => {
    const w = world({ '.mcp.json': '{ "mcpServers": { "db": ' });
    const r = cli(w, ['check']);
    assert.equal(r.code, 32 + 64, r.stderr);
    assert.match(
      r.stdout,
      /^ {2}the whole project: repository source \.mcp\.json exists but cannot be used.* — nothing of this project may run until it is fixed$/m,
    );
    assert.match(r.stdout, /^ {2}could not read: \.mcp\.json: .*JSON syntax error/m);
    const { j } = checkJson(w);
    assert.equal(j.exitCode, 96);
    assert.equal(j.blocked[0].kind, 'full-block');
    assert.deepEqual(
      j.blocked[0].files.map((f: string) => path.basename(f)),
      ['.mcp.json'],
    );
    assert.equal(j.preapproval[0].kind, 'unreadable');
    assert.equal(cli(w, ['check', '--fail-on', 'blocked']).code, 32);
  });

  it('--fail-on picks what fails: a pending server alone passes --fail-on preapproval, and is still reported', () => {
    const w = world(DB);
    const r = cli(w, ['check', '--fail-on', 'preapproval']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pending \(1, waiting for a first review; not in --fail-on, reported only\):$/m);
    assert.equal(
      summary(r.stdout),
      'check: 1 pending, 0 changed, 0 blocked, 0 preapproval; fails on preapproval; exit 0 (nothing to fail on)',
    );
    const { code, j } = checkJson(w, ['--fail-on', 'preapproval,blocked']);
    assert.equal(code, 0);
    assert.equal(j.ok, true);
    assert.deepEqual(j.failOn, ['blocked', 'preapproval']);
    assert.deepEqual(names(j.pending), ['db']);
    assert.equal(cli(world({ ...DB, ...CLAUDE_PREAPPROVES }), ['check', '--fail-on', 'preapproval,blocked']).code, 64);
  });

  it('--fail-on with an unknown category is a usage error naming it and the valid ones: exit 2, nothing on stdout', () => {
    const w = world(DB);
    for (const args of [
      ['--fail-on', 'nonsense'],
      ['--fail-on', 'nonsense', '--json'],
      ['--fail-on', 'pending,nonsense'],
    ]) {
      const r = cli(w, ['check', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        /^mcp-gate: --fail-on: unknown category "nonsense"; the categories are pending, changed, blocked, preapproval\n/,
      );
    }
    assert.equal(cli(w, ['check', 'extra']).code, 2, 'check takes no arguments');
  });

  it('an approval store that cannot be read: exit 1, not a verdict; --json still one object saying why', () => {
    const w = world({});
    fs.mkdirSync(path.join(w.store, 'approvals.json'), { recursive: true });
    const r = cli(w, ['check']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^mcp-gate: the approval store .*approvals\.json cannot be read/);
    assert.match(summary(r.stdout)!, /; exit 1 \(could not evaluate: the approval store .* cannot be read/);
    const { code, j } = checkJson(w);
    assert.equal(code, 1);
    assert.equal(j.ok, false);
    assert.equal(j.exitCode, 1);
    assert.match(j.error, /cannot be read/);
  });
  it('every folder of the checkout that declares or pre-approves servers is checked, named with its folder; node_modules is not (issue 47, item 5)', () => {
    // A monorepo whose root declares nothing: its packages/app has its own .mcp.json and a Claude settings file that
    // turns every project server on — an agent started there obeys them.
    const w = world({
      'README.md': 'a monorepo\n',
      'packages/app/.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }),
      'packages/app/db.js': 'serve()\n',
      'packages/app/.claude/settings.json': CLAUDE_PREAPPROVES['.claude/settings.json'],
      'node_modules/dep/.mcp.json': MCP({ dep: { command: 'node', args: ['x.js'] } }),
    });
    const r = cli(w, ['check']);
    assert.equal(r.code, 8 + 64, r.stdout + r.stderr);
    assert.match(r.stdout, /^folders packages\/app \(projects of their own: checked too\)$/m);
    assert.match(r.stdout, /^ {2}in packages\/app\/: db {2}\.mcp\.json:3 {2}repository scope {2}waiting for review: /m);
    assert.match(r.stdout, /^ {2}in packages\/app\/: this repository tries to approve every server of \.mcp\.json for Claude Code /m);
    assert.doesNotMatch(r.stdout, /\bdep\b/, 'a package in node_modules is no project of this checkout');
    const { code, j } = checkJson(w);
    assert.equal(code, 72);
    assert.deepEqual(j.folders, ['packages/app']);
    assert.deepEqual(
      j.pending.map((e: { name: string; folder?: string }) => [e.folder, e.name]),
      [['packages/app', 'db']],
    );
    // Checked from the folder itself, the same entries, without a folder.
    const inner = cli({ ...w, project: path.join(w.project, 'packages', 'app') }, ['check']);
    assert.equal(inner.code, 72, inner.stdout);
  });
  it('--skip keeps a fixtures folder out of the walk and says so; a name that is not a folder below the root is a usage error', () => {
    const w = world({
      'README.md': 'a tool with a demo\n',
      'examples/demo/.mcp.json': MCP({ demo: { command: 'node', args: ['demo.js'] } }),
      'examples/demo/demo.js': 'serve()\n',
      'examples/demo/inner/.claude/settings.json': CLAUDE_PREAPPROVES['.claude/settings.json'],
      'packages/app/.mcp.json': MCP({ db: { command: 'node', args: ['db.js'] } }),
      'packages/app/db.js': 'serve()\n',
      'elsewhere/x.txt': 'x\n',
    });
    fs.symlinkSync(path.join(w.project, 'elsewhere'), path.join(w.project, 'link'));
    assert.equal(cli(w, ['check']).code, 8 + 64, 'without --skip the fixtures are checked');
    const r = cli(w, ['check', '--skip', 'examples/demo']);
    assert.equal(r.code, 8, r.stdout + r.stderr);
    assert.match(r.stdout, /^skipped examples\/demo \(--skip: not checked\)$/m);
    assert.match(r.stdout, /in packages\/app\/: db /, 'the folders not skipped are still checked');
    assert.doesNotMatch(r.stdout, /\bdemo {2}/);
    const { j } = checkJson(w, ['--skip', 'examples/demo']);
    assert.deepEqual([j.folders, j.skipped], [['packages/app'], ['examples/demo']]);
    for (const [bad, why] of [
      ['examples/demo/demo.js', /not a folder below the checkout's root/],
      ['no/such', /no such folder in /],
      ['.', /not a folder below the checkout's root/],
      ['..', /not a folder below the checkout's root/],
      ['link', /links are not followed/],
    ] as const) {
      const u = cli(w, ['check', '--skip', bad]);
      assert.equal(u.code, 2, `${bad}: ${u.stdout}${u.stderr}`);
      assert.match(u.stderr, why);
      assert.equal(u.stdout, '', 'a usage error gives no verdict');
    }
  });
  it('a folder of the checkout the user cannot list fails the check closed, naming it (as nobody)', () => {
    const w = world({ 'README.md': 'a monorepo\n', 'packages/app/README.md': 'x\n' });
    toNobody(w);
    fs.chmodSync(path.join(w.project, 'packages', 'app'), 0o000);
    const r = cliAsNobody(w, ['check', '--fail-on', 'preapproval']);
    assert.equal(r.code, 64, r.out);
    assert.match(
      r.stdout,
      /could not read: a folder of the checkout cannot be listed \(.*packages\/app: EACCES.*\): what it declares or pre-approves is unknown — make it readable/,
    );
  });
});
