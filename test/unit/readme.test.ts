// The README's benchmark prose quotes no measurement the generated table (bench/run.mjs writes it between the
// bench markers) does not show: every number with a unit or a ratio sign in the section's prose must appear in
// the table as written.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './helpers';

/** Numbers with a unit (ms, s, KiB, MiB, KB, MB, %) or a ratio (1.3×, ×1.3) in a text. */
export function measurements(text: string): string[] {
  return [...text.matchAll(/(?:×\s*)?\d[\d,.]*\s*(?:–\s*\d[\d,.]*\s*)?(?:ms|s|KiB|MiB|GiB|KB|MB|%|×)(?![\w])/g)].map((m) => m[0].replace(/\s+/g, ' ').trim());
}

describe('README: benchmark numbers', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Benchmarks'), readme.indexOf('\n## ', readme.indexOf('## Benchmarks') + 3));
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
    assert.deepEqual(measurements('activates in about 28 ms, about 1.3× plain, 23 MiB, 260–290 ms'), ['28 ms', '1.3×', '23 MiB', '260–290 ms']);
  });
});

describe('README.md and README.extension.md agree on what is pinned', () => {
  const dev = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const ext = fs.readFileSync(path.join(ROOT, 'README.extension.md'), 'utf8').replace(/\s+/g, ' ');

  it('both say a docker run by tag is pinned to its image digest, and neither calls it unpinned', () => {
    for (const [name, text] of [['README.md', dev], ['README.extension.md', ext]] as const) {
      assert.match(text, /`docker run image:tag` to its image digest/, `${name} says docker run image:tag is pinned`);
      assert.doesNotMatch(text, /`docker run image:tag` download at run time/, `${name} does not call it unpinned`);
      assert.match(text, /uvx`?,? (or )?`?pipx run/, `${name} names what is not pinned`);
    }
  });
});
