// The benchmark prose (docs/benchmarks.md) quotes no measurement the generated table (bench/run.mjs writes it between
// the bench markers) does not show: every number with a unit or a ratio sign in the prose must appear in the table
// as written. And "What an approval pins" (docs/concepts.md) states the closure's own bounds, manifests and parser.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './helpers';
import * as closure from '../../src/trust/plan/closure';
import * as closureFiles from '../../src/trust/plan/closure-files';
import * as manifest from '../../src/trust/approval/workspace-manifest';
import { GUARDED_PROGRAM } from '../../src/trust/plan/launch-plan';
import { GUARD_MOUNT } from '../../src/host/sandbox/load-guard';

/** Numbers with a unit (ms, s, KiB, MiB, KB, MB, %) or a ratio (1.3×, ×1.3) in a text. */
export function measurements(text: string): string[] {
  return [...text.matchAll(/(?:×\s*)?\d[\d,.]*\s*(?:–\s*\d[\d,.]*\s*)?(?:ms|s|KiB|MiB|GiB|KB|MB|%|×)(?![\w])/g)].map((m) =>
    m[0].replace(/\s+/g, ' ').trim(),
  );
}

describe('docs/benchmarks.md: benchmark numbers', () => {
  const section = fs.readFileSync(path.join(ROOT, 'docs', 'benchmarks.md'), 'utf8');
  const prose = section.slice(0, section.indexOf('<!-- bench:start -->'));
  const table = section.slice(section.indexOf('<!-- bench:start -->'), section.indexOf('<!-- bench:end -->'));

  it('finds the section and its generated table', () => {
    assert.ok(prose.length > 100 && table.includes('| benchmark'), 'the Benchmarks section or its bench markers moved');
  });

  it('the prose quotes only numbers the table shows', () => {
    const quoted = measurements(prose).filter((m) => !table.includes(m));
    assert.deepEqual(quoted, [], `quoted in the prose but not in the table: ${quoted.join(', ')}`);
  });

  it('the check sees a quoted number', () => {
    assert.deepEqual(measurements('activates in about 28 ms, about 1.3× plain, 23 MiB, 260–290 ms'), [
      '28 ms',
      '1.3×',
      '23 MiB',
      '260–290 ms',
    ]);
  });
});

describe('docs/concepts.md: "What an approval pins" states the code\'s own rule', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'docs', 'concepts.md'), 'utf8');
  const start = readme.indexOf('**What an approval pins.**');
  const section = readme.slice(start, readme.indexOf('## Pinned packages', start)).replace(/\s+/g, ' ');
  const n = (x: number) => x.toLocaleString('en-US');
  const mib = (x: number) => `${x / 1024 / 1024} MiB`;

  it('finds the section', () => {
    assert.ok(start > 0 && section.length > 1000);
  });

  it('every bound the closure enforces, as the code sets it', () => {
    for (const said of [
      `a file of at most ${mib(closureFiles.MAX_CLOSURE_FILE_BYTES)}`,
      `at most ${n(closureFiles.MAX_CLOSURE_FILES)} files and ${mib(closureFiles.MAX_CLOSURE_BYTES)} per server`,
      `${n(closureFiles.MAX_WALK_ENTRIES)} entries`,
      `${n(closureFiles.MAX_EVALUATION_FILES)} files, ${mib(closureFiles.MAX_EVALUATION_BYTES)} and ${n(closureFiles.MAX_EVALUATION_ENTRIES)} entries per check`,
      `Text files up to ${closureFiles.MAX_KEPT_TEXT_BYTES / 1024} KiB (${closureFiles.MAX_KEPT_TEXT_TOTAL / 1024} KiB per server)`,
    ])
      assert.ok(section.includes(said), `docs/concepts.md says: ${said}`);
  });

  it('every manifest that makes a package folder, and the parser the closure reads code with', () => {
    for (const m of closure.MANIFESTS) assert.ok(section.includes(`\`${m}\``), `manifest ${m} is listed`);
    assert.ok(section.includes('`@babel/parser`'));
    assert.ok(section.includes('src/trust/plan/loads.ts'));
  });

  it('what the load guard enforces: the programs, the record of the workspace and its bounds', () => {
    for (const prog of ['node', 'nodejs', 'python3', 'python3.11']) {
      assert.ok(GUARDED_PROGRAM.test(prog), `${prog} is guarded`);
      assert.ok(section.includes(`\`${prog}\``), `docs/concepts.md names ${prog}`);
    }
    assert.equal(GUARDED_PROGRAM.test('bun'), false);
    assert.ok(section.includes(`a file over ${manifest.MAX_HASHED_BYTES / 1024 / 1024} MiB is recorded unhashed`));
    assert.ok(section.includes(`at most ${n(manifest.MAX_MANIFEST_ENTRIES)} entries`));
    assert.ok(section.includes(`\`${manifest.MANIFEST_DIR}/<sha256>.json\``));
    assert.ok(section.includes(`${GUARD_MOUNT}/real/`));
  });

  it('what runs on the approved snapshot, and what the approval keeps of the workspace', () => {
    assert.ok(section.includes('**approved snapshot**'));
    assert.ok(section.includes(`\`${manifest.BLOB_DIR}/<aa>/<sha256>\``));
    assert.ok(section.includes(`the files up to ${manifest.DIFF_BLOB_BYTES / 1024 / 1024} MiB are kept too`));
    assert.ok(section.includes(`A file over ${manifest.MAX_HASHED_BYTES / 1024 / 1024} MiB is left out of the snapshot`));
  });

  it('the check can fail: a bound the README does not state is seen', () => {
    assert.equal(section.includes(`at most ${n(closureFiles.MAX_CLOSURE_FILES + 1)} files`), false);
  });
});
