// What an approval keeps of the workspace (src/trust/approval/workspace-manifest.ts): every file's digest, its
// links and execute bits, and — when asked — each file's content once beside the store; a record that does not hash
// to its reference is refused; what no approval refers to any more is removed once it is old, never on a failed
// read and never what an approval in progress just wrote.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import {
  blobPath,
  loadManifest,
  PRUNE_AFTER_MS,
  pruneKept,
  saveManifest,
  takeManifest,
} from '../../../../src/trust/approval/workspace-manifest';
import { cleanupTemp, tempDir, writeFiles } from '../../helpers';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const age = (file: string, ms: number) => {
  const t = new Date(Date.now() - ms);
  fs.utimesSync(file, t, t);
};

describe('the record of the workspace an approval keeps', () => {
  after(cleanupTemp);

  it('records every file (not .git), links as their text and execute bits; keeps each content once, read-only', async () => {
    const ws = writeFiles(tempDir(), {
      'a.js': 'same\n',
      'b/c.js': 'same\n',
      'run.sh': 'echo hi\n',
      '.git/config': '[core]\n',
      'big.bin': 'x'.repeat(2000),
    });
    fs.chmodSync(path.join(ws, 'run.sh'), 0o755);
    fs.symlinkSync('a.js', path.join(ws, 'b', 'link.js'));
    const store = tempDir();
    const m = await takeManifest(ws, undefined, { storeDir: store, maxBytes: 1000 });
    assert.deepEqual(Object.keys(m.files), ['a.js', 'b/c.js', 'big.bin', 'run.sh']);
    assert.equal(m.files['a.js'], sha('same\n'));
    assert.deepEqual(m.links, { 'b/link.js': 'a.js' });
    assert.deepEqual(m.exec, ['run.sh']);
    assert.equal(fs.readFileSync(blobPath(store, sha('same\n')), 'utf8'), 'same\n');
    assert.equal(fs.statSync(blobPath(store, sha('same\n'))).mode & 0o777, 0o400);
    assert.equal(fs.existsSync(blobPath(store, m.files['big.bin'])), false, 'over maxBytes: hashed, not kept');
    assert.equal(fs.readdirSync(path.join(store, 'blobs')).filter((n) => n.startsWith('.tmp-')).length, 0, 'no temporary file left');
  });

  it('records the folders that hold no file (their names are content to the guards) and when the measure began', async () => {
    const ws = tempDir('mcp-gate-manifest-folders-');
    writeFiles(ws, { 'src/a.js': 'a', 'src/deep/b.js': 'b' });
    fs.mkdirSync(path.join(ws, 'cache', 'empty'), { recursive: true });
    fs.mkdirSync(path.join(ws, 'src', 'none'));
    fs.mkdirSync(path.join(ws, '.git', 'objects'), { recursive: true });
    const before = Date.now();
    const m = await takeManifest(ws);
    assert.deepEqual(m.folders, ['cache', 'cache/empty', 'src/none']);
    assert.ok(Date.parse(m.takenAt) >= before - 1 && Date.parse(m.takenAt) <= Date.now());
  });

  it('a record changed after it was saved is refused, naming the file', async () => {
    const ws = writeFiles(tempDir(), { 'a.js': '1\n' });
    const store = tempDir();
    const ref = await saveManifest(store, await takeManifest(ws));
    const file = path.join(store, 'manifests', `${ref.sha256}.json`);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(sha('1\n'), sha('2\n')));
    assert.throws(
      () => loadManifest(store, ref),
      new RegExp(
        `the record of the workspace as approved \\(${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\) does not match its approval`,
      ),
    );
  });

  it('pruning removes old records and contents no approval names; keeps what one names, and what is young', async () => {
    const store = tempDir();
    const kept = await saveManifest(
      store,
      await takeManifest(writeFiles(tempDir(), { 'keep.js': 'keep\n' }), undefined, { storeDir: store, maxBytes: 1 << 20 }),
    );
    const gone = await saveManifest(
      store,
      await takeManifest(writeFiles(tempDir(), { 'gone.js': 'gone\n' }), undefined, { storeDir: store, maxBytes: 1 << 20 }),
    );
    const young = await saveManifest(
      store,
      await takeManifest(writeFiles(tempDir(), { 'young.js': 'young\n' }), undefined, { storeDir: store, maxBytes: 1 << 20 }),
    );
    for (const f of [
      blobPath(store, sha('keep\n')),
      blobPath(store, sha('gone\n')),
      path.join(store, 'manifests', `${kept.sha256}.json`),
      path.join(store, 'manifests', `${gone.sha256}.json`),
    ])
      age(f, PRUNE_AFTER_MS * 2);
    const removed = await pruneKept(store, [kept]);
    assert.deepEqual(removed, { manifests: 1, blobs: 1 });
    assert.ok(fs.existsSync(blobPath(store, sha('keep\n'))));
    assert.ok(!fs.existsSync(blobPath(store, sha('gone\n'))));
    assert.ok(fs.existsSync(blobPath(store, sha('young\n'))), 'an approval in progress wrote it a moment ago');
    assert.ok(fs.existsSync(path.join(store, 'manifests', `${young.sha256}.json`)));
    assert.equal(loadManifest(store, kept).files['keep.js'], sha('keep\n'));
  });

  it('pruning removes nothing when a record an approval names cannot be read', async () => {
    const store = tempDir();
    const ref = await saveManifest(
      store,
      await takeManifest(writeFiles(tempDir(), { 'a.js': 'a\n' }), undefined, { storeDir: store, maxBytes: 1 << 20 }),
    );
    age(blobPath(store, sha('a\n')), PRUNE_AFTER_MS * 2);
    fs.writeFileSync(path.join(store, 'manifests', `${ref.sha256}.json`), 'torn');
    assert.deepEqual(await pruneKept(store, [ref]), { manifests: 0, blobs: 0 });
    assert.ok(fs.existsSync(blobPath(store, sha('a\n'))));
  });
});
