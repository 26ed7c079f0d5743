// The macOS Seatbelt profile generated from a sandbox description (src/host/sandbox/seatbelt.ts): deny by default; the
// workspace and caches read-write; read-only paths and verified copies readable and never writable, denied after the
// read-write rule that would cover them (SBPL's last matching rule wins); no network without the rule; paths quoted.
import assert from 'node:assert/strict';
import { sbplString, seatbeltProfile } from '../../../../src/host/sandbox/seatbelt';

describe('host/seatbelt: the macOS profile from the same sandbox decision', () => {
  const d = {
    network: false,
    readWrite: ['/Users/me/src/repo', '/Users/me/.cache/mcp-gate/sandbox/s/npm'],
    readOnly: ['/Users/me/src/repo/.git', '/Users/me/src/repo/.vscode'],
    overlays: ['/Users/me/src/repo/tools/server.js'],
  };

  it('denies by default, allows the same paths, and keeps the read-only ones unwritable after the read-write rule', () => {
    const p = seatbeltProfile(d);
    const lines = p.trim().split('\n');
    assert.equal(lines[0], '(version 1)');
    assert.equal(lines[1], '(deny default)');
    const rw = lines.findIndex((l) => l.startsWith('(allow file-read* file-write*'));
    const ro = lines.findIndex((l) => l.startsWith('(deny file-write*'));
    assert.ok(rw > 0 && ro > rw, p);
    assert.match(lines[rw], /\(subpath "\/Users\/me\/src\/repo"\) \(subpath "\/Users\/me\/\.cache\/mcp-gate\/sandbox\/s\/npm"\)/);
    for (const x of [...d.readOnly, ...d.overlays]) assert.ok(lines[ro].includes(`(subpath "${x}")`), `${x} unwritable`);
    assert.doesNotMatch(p, /\/Users\/me"\)|\(subpath "\/Users\/me"\)/, 'HOME itself is not allowed');
    assert.doesNotMatch(p, /network/, 'no network rule: denied by default');
  });

  it('the network rule allows the network; nothing else changes', () => {
    const a = seatbeltProfile(d).trim().split('\n');
    const b = seatbeltProfile({ ...d, network: true })
      .trim()
      .split('\n');
    assert.deepEqual(b.slice(0, a.length), a);
    assert.deepEqual(b.slice(a.length), ['(allow network*)']);
  });

  it('quotes a path with a quote or backslash, and refuses relative paths and control characters', () => {
    assert.equal(sbplString('/a "b"\\c'), '"/a \\"b\\"\\\\c"');
    assert.throws(() => sbplString('relative'), /must be absolute/);
    assert.throws(() => sbplString('/a\nb'), /control characters/);
    // A folder named to close the string and open a rule stays one quoted path.
    const hostile = seatbeltProfile({ ...d, readWrite: ['/x")(allow default'] });
    assert.ok(hostile.includes('(subpath "/x\\")(allow default")'), hostile);
    assert.equal(hostile.split('\n').filter((l) => l.includes('(allow default')).length, 1);
    assert.ok(!hostile.split('\n').some((l) => l.startsWith('(allow default')));
  });
});
