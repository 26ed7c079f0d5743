// The store under real concurrency: four processes approving at once lose nothing, and a process killed with
// SIGKILL in the middle of a write leaves either the old or the new store, never a broken one.
import assert from 'node:assert/strict';
import { fork, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evaluateGate } from '../../../../src/trust/gate';
import { ApprovalStore } from '../../../../src/trust/approval/store';
import { cleanupTemp, ROOT, world } from '../../helpers';

const WORKER = path.join(ROOT, 'out', 'test', 'fixtures', 'workers', 'store-worker.js');

describe('approval store across processes', function () {
  this.timeout(240_000);
  after(cleanupTemp);

  it('4 processes × 100 concurrent approvals: none lost', async () => {
    const servers: Record<string, unknown> = {};
    for (let i = 0; i < 400; i++) servers[`s${i}`] = { command: `server-${i}` };
    const w = world({ '.mcp.json': JSON.stringify({ mcpServers: servers }) });
    const env = { ...process.env, HOME: w.home, XDG_CONFIG_HOME: w.env.XDG_CONFIG_HOME, MCP_GATE_CONFIG: '' };
    const codes = await Promise.all(
      [0, 1, 2, 3].map(
        (k) =>
          new Promise<number>((resolve) => {
            const p = spawn(process.execPath, [WORKER, 'approve', w.project, w.store, String(k * 100), '100'], {
              env,
              stdio: ['ignore', 'ignore', 'inherit'],
            });
            p.on('exit', (code) => resolve(code ?? -1));
          }),
      ),
    );
    assert.deepEqual(codes, [0, 0, 0, 0]);
    const r = evaluateGate(w.input);
    assert.equal(r.servers.filter((s) => s.state === 'approved').length, 400);
    assert.equal(new ApprovalStore(w.store, w.input.masker).read().records.length, 400);
  });

  it('kill -9 during writes leaves the old or the new file, never a broken one', async () => {
    const w = world();
    const store = new ApprovalStore(w.store, w.input.masker);
    let lastCount = 0;
    for (let round = 0; round < 6; round++) {
      const child = fork(WORKER, ['churn', w.store], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      await new Promise((resolve) => child.once('message', resolve));
      await new Promise((resolve) => setTimeout(resolve, 150 + round * 97));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const snap = store.read();
      assert.equal(snap.health.status, 'ok', `round ${round}: ${JSON.stringify(snap.health)}`);
      assert.ok(snap.records.length >= lastCount, 'never older than what a previous round left');
      assert.deepEqual(
        fs.readdirSync(w.store).filter((f) => f.includes('corrupt')),
        [],
        'no write was ever judged corrupt',
      );
      lastCount = snap.records.length;
      // a lock left behind by the killed writer must not wedge the next one for long (stale after 10 s)
      fs.rmSync(path.join(w.store, 'approvals.json.lock'), { recursive: true, force: true });
    }
    assert.ok(lastCount > 0, 'the churn wrote something');
  });
});
