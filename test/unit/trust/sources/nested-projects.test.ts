// The folders of a checkout that are projects of their own (src/trust/sources/nested-projects.ts), as `mcp-gate
// check` walks them: found at any depth by the files the gate itself reads, node_modules and .git not walked, and a
// folder that cannot be listed said (test/unit/cli/check.test.ts: as nobody, the check fails closed), not skipped.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nestedProjects, projectMarkers } from '../../../../src/trust/sources/nested-projects';

describe('nested projects of a checkout', () => {
  const made: string[] = [];
  after(() => {
    for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  });
  const tree = (files: Record<string, string>) => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-nested-')));
    made.push(root);
    fs.chmodSync(root, 0o755);
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true, mode: 0o755 });
      fs.writeFileSync(path.join(root, rel), text);
    }
    return root;
  };

  it("the markers are the gate's own: every repository source and the pre-approval files", () => {
    const m = projectMarkers();
    for (const rel of ['.mcp.json', '.vscode/mcp.json', '.cursor/mcp.json', '.claude/settings.json']) assert.ok(m.includes(rel), rel);
  });

  it('finds declaring and pre-approving folders at any depth, not the root, not in node_modules or .git', () => {
    const root = tree({
      '.mcp.json': '{}',
      'packages/app/.mcp.json': '{}',
      'packages/lib/deep/er/.claude/settings.json': '{}',
      'packages/plain/README.md': 'x',
      'node_modules/dep/.mcp.json': '{}',
      '.git/x/.mcp.json': '{}',
    });
    const r = nestedProjects(root);
    assert.deepEqual(
      r.folders.map((f) => path.relative(root, f)),
      ['packages/app', 'packages/lib/deep/er'],
    );
    assert.deepEqual([r.truncated, r.unreadable], [false, []]);
    assert.equal(nestedProjects(root, 3).truncated, true, 'a walk past its bound says so');
    const skipped = nestedProjects(root, undefined, new Set([path.join(root, 'packages', 'lib')]));
    assert.deepEqual(
      [skipped.folders.map((f) => path.relative(root, f)), skipped.skipped.map((f) => path.relative(root, f))],
      [['packages/app'], ['packages/lib']],
      'a skipped folder and all below it are not entered, and it is said',
    );
  });
});
