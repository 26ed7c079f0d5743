// When the workspace's notification announces a waiting server again (src/trust/approval/gate-state.ts
// announcementKey): a changed server each time what it runs differs; a server never decided once, so one whose
// files changed with another server's (a file they share) is not announced again as "new".
import assert from 'node:assert/strict';
import { announcementKey } from '../../../../src/trust/approval/gate-state';

describe('announcing a waiting server', () => {
  it('a pending server is announced as new once, whatever its files do; a changed one at each new digest', () => {
    assert.equal(announcementKey('pending', 'k', 'sha256:a'), announcementKey('pending', 'k', 'sha256:b'));
    assert.notEqual(announcementKey('approval-changed', 'k', 'sha256:a'), announcementKey('approval-changed', 'k', 'sha256:b'));
    assert.notEqual(announcementKey('pending', 'k', 'sha256:a'), announcementKey('approval-changed', 'k', 'sha256:a'));
    assert.notEqual(announcementKey('pending', 'k', 'x'), announcementKey('pending', 'other', 'x'));
  });
});
