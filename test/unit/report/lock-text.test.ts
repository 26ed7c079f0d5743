// The words for a package lock that the CLI and VS Code share (src/report/lock-text.ts): the user's minimum
// release age as a verdict on the version shown, the lock as one side of VS Code's package diff (exact version,
// full integrity, every dependency), and the approve preview carrying the verdict when a minimum is set.
import assert from 'node:assert/strict';
import { lockDocument, minAgeVerdict } from '../../../src/report/lock-text';
import { serverText } from '../../../src/report/render';
import { evaluateGate } from '../../../src/trust/gate';
import { findServer } from '../../../src/trust/report';
import { lockDigest, type NpmLock } from '../../../src/trust/packages/npm-lock';
import { cleanupTemp, world } from '../helpers';
import { offlineLock } from '../locks';

const NOW = Date.parse('2026-12-01T12:00:00Z');

function lock(extra: Partial<NpmLock> = {}): NpmLock {
  const l = { ...offlineLock('fixture-server'), version: '1.0.1', publishedAt: '2026-11-28T12:00:00Z', ...extra } as NpmLock;
  return { ...l, digest: lockDigest(l) };
}

describe('package lock words', () => {
  after(cleanupTemp);

  it('the minimum release age: old enough, not old enough, no date, not set', () => {
    const file = '/home/u/.config/mcp-gate/config.json';
    assert.equal(
      minAgeVerdict(lock(), { days: 2, file }, NOW),
      `your minimum release age is 2 days (${file}): 1.0.1 was published 3 days ago, old enough`,
    );
    assert.equal(
      minAgeVerdict(lock(), { days: 7, file }, NOW),
      `your minimum release age is 7 days (${file}): 1.0.1 was published 3 days ago, NOT old enough`,
    );
    assert.equal(
      minAgeVerdict(lock({ publishedAt: undefined }), { days: 1, file }, NOW),
      `your minimum release age is 1 day (${file}): the registry gives no publication date for 1.0.1`,
    );
    assert.equal(minAgeVerdict(lock(), undefined, NOW), undefined);
  });

  it('the lock document: exact version, full integrity, publication, every dependency, tree and lock digests', () => {
    const l = lock({
      packages: {
        '': {},
        'node_modules/fixture-server': { version: '1.0.1' },
        'node_modules/dep': { version: '2.0.0', integrity: 'sha512-dep' },
      },
    });
    const doc = lockDocument(l, { days: 2, file: 'config.json' }, NOW);
    assert.equal(
      doc,
      [
        'package      fixture-server',
        'version      1.0.1',
        'integrity    sha512-offline-test-lock',
        'published    2026-11-28T12:00:00Z (published 3 days ago)',
        'release age  your minimum release age is 2 days (config.json): 1.0.1 was published 3 days ago, old enough',
        `spec         "fixture-server" (npx) from http://127.0.0.1:9/`,
        'runs         fixture-server (node_modules/fixture-server/index.js)',
        'dependencies 1',
        '  dep 2.0.0 sha512-dep',
        'tree         sha256:none',
        `lock         ${l.digest}`,
        '',
      ].join('\n'),
    );
  });

  it('the approve preview shows the lock being approved and, when a minimum is set, its verdict', () => {
    const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server'] } } }) });
    const found = findServer(evaluateGate(w.input), 'fix');
    assert.ok(found.ok);
    const text = serverText(found.server, undefined, { lock: lock(), minAge: { days: 2, file: 'config.json' } });
    assert.match(text, /\n {2}package {5}fixture-server 1\.0\.1, sha512-offline-test-lo…, 0 dependencies, published \d+ days? ago\n/);
    assert.match(text, /\n {14}integrity sha512-offline-test-lock\n/);
    assert.match(text, /\n {14}your minimum release age is 2 days \(config\.json\): 1\.0\.1 was published \d+ days? ago, old enough\n/);
    assert.doesNotMatch(serverText(found.server, undefined, { lock: lock() }), /minimum release age/);
  });
});
