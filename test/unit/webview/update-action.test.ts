// The trust panel's Update action: offered only for a repository server approved with a package lock (an npm
// launch MCP Gate pins), never for a pending one, an unpinned one or a plain command; the host accepts an
// `update` message only for such a server (the host then runs the palette's Update Pinned Package… for it).
import assert from 'node:assert/strict';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { buildModel, checkMessage } from '../../../webview/node/model';
import { cleanupTemp, world } from '../helpers';
import { approveOffline } from '../locks';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);

describe('trust panel: the Update action of a pinned package', () => {
  after(cleanupTemp);

  it('is offered only for a server approved with a package lock, and only its update message is accepted', async () => {
    const w = world({
      '.mcp.json': MCP({
        pinned: { command: 'npx', args: ['-y', 'fixture-server'] },
        waiting: { command: 'npx', args: ['-y', 'other-server'] },
        plain: { command: 'node', args: ['server.js'] },
        unpinned: { command: 'uvx', args: ['some-python-server'] },
      }),
      'server.js': 'serve()\n',
    });
    await approveOffline(w.input, 'pinned');
    await recordDecision(w.input, 'plain', undefined, 'approved');
    await recordDecision(w.input, 'unpinned', undefined, 'approved');
    const built = buildModel([{ name: 'p', path: w.project, report: evaluateGate(w.input) }], { restricted: false });
    const view = (n: string) => built.model.servers.find((s) => s.name === n)!;
    assert.deepEqual(view('pinned').actions, ['reject', 'reset', 'update']);
    assert.deepEqual(view('waiting').actions, ['approve', 'reject']);
    assert.deepEqual(view('plain').actions, ['reject', 'reset']);
    assert.deepEqual(view('unpinned').actions, ['reject', 'reset']);
    const v = checkMessage({ type: 'action', action: 'update', key: view('pinned').key }, built);
    assert.ok(v.ok, !v.ok ? v.why : '');
    assert.deepEqual(v.ref, { folder: w.project, source: '.mcp.json', name: 'pinned' });
    for (const n of ['waiting', 'plain', 'unpinned']) {
      const r = checkMessage({ type: 'action', action: 'update', key: view(n).key }, built);
      assert.ok(!r.ok && /"update" is not allowed for a server in state (pending|approved)/.test(r.why), `${n}: ${JSON.stringify(r)}`);
    }
  });
});
