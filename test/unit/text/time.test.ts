// Times as people read them (src/text/time.ts, shared by the panel and the extension host).
import assert from 'node:assert/strict';
import { exactTime, relativeTime } from '../../../src/text/time';

describe('relative times', () => {
  const now = Date.parse('2026-12-01T10:00:00Z');
  it('says now, minutes, hours and days ago with proper plural forms; the exact time for a hover', () => {
    assert.equal(relativeTime('2026-12-01T09:59:50Z', now), 'now');
    assert.equal(relativeTime('2026-12-01T09:59:00Z', now), '1 minute ago');
    assert.equal(relativeTime('2026-12-01T09:57:00Z', now), '3 minutes ago');
    assert.equal(relativeTime('2026-12-01T08:00:00Z', now), '2 hours ago');
    assert.equal(relativeTime('2026-11-30T10:00:00Z', now), 'yesterday');
    assert.equal(relativeTime('2026-11-28T10:00:00Z', now), '3 days ago');
    assert.equal(relativeTime('2026-12-01T09:57:00Z', now, 'de'), 'vor 3 Minuten');
    assert.equal(exactTime('2026-12-01T09:57:00.123Z'), '2026-12-01 09:57:00 UTC');
  });
  it('leaves a value that is not a time as it is', () => {
    assert.equal(relativeTime('not a time', now), 'not a time');
    assert.equal(exactTime('not a time'), 'not a time');
  });
});
