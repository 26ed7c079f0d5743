// "A file it runs changed" told apart from "its definition changed" (src/trust/approval/diff.ts changedFilesOnly):
// only a change of the execution closure — a file's content, a link, a pinned package folder, the envFile's
// content — with the entry as written the same counts as the former; any field a person wrote is the latter.
import assert from 'node:assert/strict';
import { changedFilesOnly } from '../../../../src/trust/approval/diff';
import type { PinnedDefinition } from '../../../../src/trust/plan/digest';

const base = (): PinnedDefinition => ({
  definition: { type: 'stdio', command: 'node', args: ['server.js'], env: {} } as unknown as PinnedDefinition['definition'],
  extra: {},
  inputs: [],
  files: { 'server.js': { sha256: 'a'.repeat(64), size: 10 } } as PinnedDefinition['files'],
  cwd: '.',
});

describe('what kind of change since approval', () => {
  it("a changed, added or removed file, a link or the envFile's content: the files it runs, by path", () => {
    const now = base();
    now.files = {
      'server.js': { sha256: 'b'.repeat(64), size: 11 },
      'lib.js': { sha256: 'c'.repeat(64), size: 3 },
    } as PinnedDefinition['files'];
    assert.deepEqual(changedFilesOnly(base(), now), ['lib.js', 'server.js']);
    const linked = { ...base(), links: { 'bin/run': '../server.js' } };
    assert.deepEqual(changedFilesOnly(base(), linked), ['bin/run']);
    const envA = { ...base(), envFile: { path: '.env', sha256: '1'.repeat(64) } };
    const envB = { ...base(), envFile: { path: '.env', sha256: '2'.repeat(64) } };
    assert.deepEqual(changedFilesOnly(envA, envB), ['.env']);
  });

  it("an argument, the command, an env value, an input, the envFile's path or the folder: its definition", () => {
    const args = base();
    (args.definition as unknown as { args: string[] }).args = ['server.js', '--upload'];
    assert.equal(changedFilesOnly(base(), args), undefined);
    const env = base();
    (env.definition as unknown as { env: Record<string, string> }).env = { TOKEN: 'x' };
    assert.equal(changedFilesOnly(base(), env), undefined);
    assert.equal(changedFilesOnly(base(), { ...base(), inputs: [{ id: 'k' }] }), undefined);
    assert.equal(changedFilesOnly(base(), { ...base(), extra: { alwaysAllow: ['x'] } }), undefined);
    assert.equal(changedFilesOnly(base(), { ...base(), cwd: 'sub' }), undefined);
    assert.equal(changedFilesOnly({ ...base(), envFile: { path: '.env' } }, { ...base(), envFile: { path: '.env.other' } }), undefined);
    // Both a field and a file: the definition (the bigger news is named).
    const both = base();
    (both.definition as unknown as { args: string[] }).args = ['other.js'];
    both.files = { 'other.js': { sha256: 'd'.repeat(64), size: 1 } } as PinnedDefinition['files'];
    assert.equal(changedFilesOnly(base(), both), undefined);
  });

  it('nothing changed: neither', () => {
    assert.equal(changedFilesOnly(base(), base()), undefined);
  });
});
