// A server's private copy of its own package folder (src/host/sandbox/package-state.ts): made from the approved tree, kept
// between starts with what the server wrote, and brought back to the approved files before each start — a changed
// file written again, a link the server planted in place of a file or folder removed without being followed.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { holdStateFolder, syncPackageState } from '../../../../src/host/sandbox/package-state';
import { cleanupTemp, tempDir, writeFiles } from '../../helpers';

describe("a server's private copy of its package folder", () => {
  after(cleanupTemp);

  it('keeps its data, restores its approved files, and never follows a link it planted', () => {
    const pristine = writeFiles(tempDir(), {
      'package.json': '{"name":"m"}',
      'dist/index.js': 'approved()\n',
      'dist/lib/util.js': 'util()\n',
    });
    const copy = path.join(tempDir(), 'state', 'copy');
    syncPackageState(pristine, copy);
    assert.equal(fs.readFileSync(path.join(copy, 'dist/index.js'), 'utf8'), 'approved()\n');
    // The server writes its data, changes its own code, and plants links in place of a file and of a folder.
    const outside = writeFiles(tempDir(), { 'victim.txt': 'mine\n' });
    fs.writeFileSync(path.join(copy, 'dist/memory.jsonl'), '{"entity":1}\n');
    fs.writeFileSync(path.join(copy, 'dist/index.js'), 'changed()\n');
    fs.rmSync(path.join(copy, 'package.json'));
    fs.symlinkSync(path.join(outside, 'victim.txt'), path.join(copy, 'package.json'));
    fs.rmSync(path.join(copy, 'dist/lib'), { recursive: true });
    fs.symlinkSync(outside, path.join(copy, 'dist/lib'));
    syncPackageState(pristine, copy);
    assert.equal(fs.readFileSync(path.join(copy, 'dist/memory.jsonl'), 'utf8'), '{"entity":1}\n', 'its data is kept');
    assert.equal(fs.readFileSync(path.join(copy, 'dist/index.js'), 'utf8'), 'approved()\n', 'its approved code is written again');
    assert.equal(fs.lstatSync(path.join(copy, 'package.json')).isSymbolicLink(), false);
    assert.equal(fs.readFileSync(path.join(copy, 'package.json'), 'utf8'), '{"name":"m"}');
    assert.equal(fs.lstatSync(path.join(copy, 'dist/lib')).isDirectory(), true);
    assert.equal(fs.readFileSync(path.join(copy, 'dist/lib/util.js'), 'utf8'), 'util()\n');
    assert.equal(fs.readFileSync(path.join(outside, 'victim.txt'), 'utf8'), 'mine\n', 'nothing was written through a link');
    assert.deepEqual(fs.readdirSync(outside), ['victim.txt']);
  });
  it('one start at a time holds a copy: a second start while it runs gets none; a holder that ended leaves it free', () => {
    const copy = path.join(tempDir(), 'state', 'copy');
    const release = holdStateFolder(copy);
    assert.ok(release, 'the first start holds it');
    assert.equal(holdStateFolder(copy), undefined, 'a second start of the same server while the first runs');
    release!();
    const again = holdStateFolder(copy);
    assert.ok(again, 'free once released');
    again!();
    fs.writeFileSync(`${copy}.lock`, '999999999');
    const afterCrash = holdStateFolder(copy);
    assert.ok(afterCrash, 'a holder that ended without releasing it (no such process) leaves it free');
    afterCrash!();
  });
});
