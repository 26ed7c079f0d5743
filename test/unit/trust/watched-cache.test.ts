// The gate cache with folder watches (the extension's 1-second re-check): an unchanged whole-workspace project
// is re-checked without statting its files; every way a file changes is seen once its event arrives; a change no
// watch reports (a write through a hard link elsewhere) is seen by the exact re-check a start makes and by the
// stat walk the cache runs at least every FULL_CHECK_MS. Also: a workspace of thousands of files is pinned whole
// (the fallback of a computed load) rather than blocked.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { FULL_CHECK_MS, GateCache } from '../../../src/trust/gate';
import { FolderWatcher } from '../../../src/trust/sources/fswatch';
import { ioCounters } from '../../../src/trust/sources/fsread';
import { recordDecision } from '../../../src/trust/approval/approvals';
import type { GateReport } from '../../../src/trust/report';
import { MAX_LISTED_FILE_CHANGES, serverText } from '../../../src/report/render';
import { cleanupTemp, tempDir, world, writeFiles, type World } from '../helpers';

/** A repository whose server loads a computed path (so the whole workspace is pinned), with `n` more files. */
function wholeWorkspace(n: number): World {
  const files: Record<string, string> = {
    '.mcp.json': JSON.stringify({ mcpServers: { app: { command: 'node', args: ['srv/server.js'] } } }),
    'srv/server.js': "require(process.env.PLUGIN || './default');\n",
  };
  for (let i = 0; i < n; i++) files[`src/m${i % 50}/f${i}.js`] = `exports.v = ${i};\n`;
  return world(files);
}

/** Re-checks every 10 ms until `done` holds of the report, or fails after `ms`. */
async function within(ms: number, cache: GateCache, w: World, done: (r: GateReport) => boolean): Promise<GateReport> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = cache.get(w.input);
    if (done(r)) return r;
    if (Date.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
}

const stateOf = (r: GateReport) => r.servers[0].state;

describe('gate cache with folder watches', function () {
  this.timeout(60_000);
  const watchers: FolderWatcher[] = [];
  const watched = (clock?: () => number) => {
    const fw = new FolderWatcher();
    watchers.push(fw);
    return new GateCache(fw, clock);
  };
  after(() => {
    for (const fw of watchers) fw.close();
    cleanupTemp();
  });

  it('pins a workspace of 5,000 files whole, and re-checks it without statting them', async () => {
    const w = wholeWorkspace(5000);
    await recordDecision(w.input, 'app', undefined, 'approved');
    const cache = watched();
    const first = cache.get(w.input);
    assert.equal(stateOf(first), 'approved', first.servers[0].reason);
    assert.ok(Object.keys(first.servers[0].pinned!.pinned.files).length > 5000, 'every file is pinned');
    assert.equal(cache.get(w.input), first, 'the verifying re-check');
    const before = ioCounters.stats;
    for (let i = 0; i < 10; i++) assert.equal(cache.get(w.input), first);
    const per = (ioCounters.stats - before) / 10;
    assert.ok(per < 100, `a quiet re-check stats ${per} paths, not the 5,000 files`);
    // The same project without watches stats every path on every re-check.
    const plain = new GateCache();
    plain.get(w.input);
    const b2 = ioCounters.stats;
    plain.get(w.input);
    assert.ok(ioCounters.stats - b2 > 5000, `the stat walk stats ${ioCounters.stats - b2}`);
  });

  for (const [name, change] of [
    ['a write in place', (p: string) => fs.writeFileSync(path.join(p, 'src/m3/f3.js'), 'exports.v = "changed";\n')],
    [
      'a file renamed over (as git and editors write)',
      (p: string) => {
        fs.writeFileSync(path.join(p, 'src/m4/.f4.tmp'), 'exports.v = "changed";\n');
        fs.renameSync(path.join(p, 'src/m4/.f4.tmp'), path.join(p, 'src/m4/f4.js'));
      },
    ],
    ['a file removed', (p: string) => fs.unlinkSync(path.join(p, 'src/m5/f5.js'))],
    ['a new file in a new folder', (p: string) => writeFiles(p, { 'src/new/plugin.js': 'require("child_process")' })],
    ['a folder renamed away', (p: string) => fs.renameSync(path.join(p, 'src/m6'), path.join(p, 'm6-moved'))],
  ] as const) {
    it(`${name} is seen within a second`, async () => {
      const w = wholeWorkspace(200);
      await recordDecision(w.input, 'app', undefined, 'approved');
      const cache = watched();
      cache.get(w.input);
      assert.equal(stateOf(cache.get(w.input)), 'approved');
      change(w.project);
      const r = await within(1000, cache, w, (x) => stateOf(x) !== 'approved');
      assert.equal(stateOf(r), 'approval-changed', `after ${name}`);
    });
  }

  it('an approval another process writes is seen', async () => {
    const w = wholeWorkspace(20);
    const cache = watched();
    cache.get(w.input);
    assert.equal(stateOf(cache.get(w.input)), 'pending');
    await recordDecision(w.input, 'app', undefined, 'approved');
    assert.equal(stateOf(await within(1000, cache, w, (x) => stateOf(x) === 'approved')), 'approved');
  });

  it('a change no watch reports (through a hard link elsewhere) re-gates before a start and within FULL_CHECK_MS', async () => {
    const w = wholeWorkspace(20);
    await recordDecision(w.input, 'app', undefined, 'approved');
    let now = 1_000_000;
    const cache = watched(() => now);
    cache.get(w.input);
    assert.equal(stateOf(cache.get(w.input)), 'approved');
    const elsewhere = tempDir();
    const link = path.join(elsewhere, 'alias.js');
    fs.linkSync(path.join(w.project, 'src/m1/f1.js'), link);
    // Through the other name: the kernel reports it to a watch on that folder, not on the workspace's.
    fs.appendFileSync(link, 'require("child_process").execSync("id");\n');
    await new Promise((res) => setTimeout(res, 100));
    assert.equal(stateOf(cache.get(w.input, { exact: true })), 'approval-changed', 'the exact re-check a start makes');
    const w2 = wholeWorkspace(20);
    await recordDecision(w2.input, 'app', undefined, 'approved');
    const c2 = watched(() => now);
    c2.get(w2.input);
    c2.get(w2.input);
    const link2 = path.join(elsewhere, 'alias2.js');
    fs.linkSync(path.join(w2.project, 'src/m1/f1.js'), link2);
    fs.appendFileSync(link2, '// changed\n');
    now += FULL_CHECK_MS;
    assert.equal(stateOf(c2.get(w2.input)), 'approval-changed', 'the stat walk every FULL_CHECK_MS');
  });

  it('a git checkout of a commit that changes a file is seen', async () => {
    const w = wholeWorkspace(30);
    const git = (...a: string[]) =>
      execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: w.project, stdio: 'pipe' });
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(w.project, 'src/m2/f2.js'), 'module.exports = "two";\n');
    git('commit', '-qam', 'two');
    await recordDecision(w.input, 'app', undefined, 'approved');
    const cache = watched();
    cache.get(w.input);
    assert.equal(stateOf(cache.get(w.input)), 'approved');
    git('checkout', '-q', 'HEAD~1');
    assert.equal(stateOf(await within(1000, cache, w, (x) => stateOf(x) !== 'approved')), 'approval-changed');
  });

  it('a change of many files says how many were added, removed and changed, and lists a bounded number', async () => {
    const w = wholeWorkspace(MAX_LISTED_FILE_CHANGES + 100);
    await recordDecision(w.input, 'app', undefined, 'approved');
    for (let i = 0; i < MAX_LISTED_FILE_CHANGES + 98; i++)
      fs.appendFileSync(path.join(w.project, `src/m${i % 50}/f${i}.js`), '// pulled\n');
    fs.unlinkSync(path.join(w.project, `src/m${(MAX_LISTED_FILE_CHANGES + 99) % 50}/f${MAX_LISTED_FILE_CHANGES + 99}.js`));
    writeFiles(w.project, { 'src/added.js': '1' });
    const s = new GateCache().get(w.input).servers[0];
    assert.equal(s.state, 'approval-changed');
    const text = serverText(s);
    assert.match(
      text,
      new RegExp(
        `${MAX_LISTED_FILE_CHANGES + 100} files: 1 added, 1 removed, ${MAX_LISTED_FILE_CHANGES + 98} changed \\(the first ${MAX_LISTED_FILE_CHANGES} listed\\)`,
      ),
    );
    assert.match(text, /… and 100 more files \(src\/m\d+\/f\d+\.js, /);
    const listed = text.split('\n').filter((l) => /^ {2}file \S+: (added|removed|changed)/.test(l)).length;
    assert.equal(listed, MAX_LISTED_FILE_CHANGES);
  });
});
