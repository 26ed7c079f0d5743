// Line diffs of changed server files are bounded: a small change in a long file is shown line by line, a change
// of every line of a 16,000-line file is shown as "changed, too large to show line by line" (with both digests),
// and `mcp-gate get` says so instead of working for minutes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffDefinitions, MAX_DIFF_EDITS } from '../../../../src/trust/approval/diff';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { cleanupTemp, cli, world } from '../../helpers';

const lines = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => (i + offset).toString(36).padStart(3, '0') + '\n').join('');

async function changed(before: string, after: string) {
  const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { big: { command: 'node', args: ['big.js'] } } }), 'big.js': before });
  await recordDecision(w.input, 'big', undefined, 'approved');
  fs.writeFileSync(path.join(w.project, 'big.js'), after);
  const s = evaluateGate(w.input).servers[0];
  assert.equal(s.state, 'approval-changed');
  return { w, s };
}

describe('diff: bounded line diffs', function () {
  this.timeout(60_000);
  after(cleanupTemp);

  it('one changed line in a 16,000-line file is shown line by line', async () => {
    const before = lines(16_000);
    const after = before.replace('\n00a\n', '\nEVIL\n');
    const { s } = await changed(before, after);
    const d = diffDefinitions(s.record!, s.pinned!);
    assert.equal(d.files.length, 1);
    assert.equal(d.files[0].tooLarge, undefined);
    assert.deepEqual(
      d.files[0].hunks!.flatMap((h) => h.lines.filter((l) => /^[-+]/.test(l))),
      ['-00a', '+EVIL'],
    );
  });

  it('every line of a 16,000-line file changed: reported as changed, too large to show line by line', async () => {
    const { w, s } = await changed(lines(16_000), lines(16_000, 20_000));
    const d = diffDefinitions(s.record!, s.pinned!);
    assert.equal(d.files[0].change, 'changed');
    assert.equal(d.files[0].tooLarge, true);
    assert.equal(d.files[0].hunks, undefined);
    assert.ok(d.files[0].before && d.files[0].after && d.files[0].before !== d.files[0].after);

    const r = cli(w, ['get', 'big']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /file big\.js: changed \(was sha256 [0-9a-f]{12}\) \(now sha256 [0-9a-f]{12}\)\n\s+\(changed, too large to show line by line/,
    );
    assert.ok(r.stdout.split('\n').length < 200, 'the listing is not line by line');
  });

  it(`up to ${MAX_DIFF_EDITS} changed lines are still shown; one more is too large`, async () => {
    const before = lines(4_000);
    const edit = (k: number) =>
      before
        .split('\n')
        .map((l, i) => (i < k ? `${l}x` : l))
        .join('\n');
    const within = await changed(before, edit(MAX_DIFF_EDITS / 2)); // each changed line is one removal and one addition
    assert.ok(diffDefinitions(within.s.record!, within.s.pinned!).files[0].hunks);
    const over = await changed(before, edit(MAX_DIFF_EDITS / 2 + 1));
    assert.equal(diffDefinitions(over.s.record!, over.s.pinned!).files[0].tooLarge, true);
  });
});
