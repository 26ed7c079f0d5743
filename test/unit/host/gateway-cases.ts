// What both doors of the gateway (the relay's socket, ./gateway/gateway.test.ts; the HTTP door, ./gateway/gateway-http.test.ts)
// must do alike for the fixture server `fx` (t0 allowed, t1 ask, t2 denied): list only what the policy does not
// deny, answer an allowed call, refuse an ask without a person and a denied tool with the reason, and log each.
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { EventLog } from '../../../src/host/log/log';

export function policyThroughDoor(connect: (key: string) => Promise<Client>, log: () => EventLog): void {
  it('lists only the tools the policy does not deny', async () => {
    const c = await connect('fx');
    assert.deepEqual(
      (await c.listTools()).tools.map((t) => t.name),
      ['t0', 't1'],
    );
    await c.close();
  });

  it('an allowed call answers; an ask without a person and a denied tool are refused with the reason', async () => {
    const c = await connect('fx');
    const ok = await c.callTool({ name: 't0', arguments: { text: 'via gateway' } });
    assert.match(JSON.stringify(ok.content), /t0: via gateway/);
    const asked = await c.callTool({ name: 't1', arguments: {} });
    assert.equal(asked.isError, true);
    assert.match(JSON.stringify(asked.content), /nobody can answer here/);
    const denied = await c.callTool({ name: 't2', arguments: {} });
    assert.equal(denied.isError, true);
    assert.match(JSON.stringify(denied.content), /mcp\.fx\.tool\.t2 is denied/);
    await c.close();
    const outcomes = log()
      .read()
      .filter((e) => e.kind === 'mcp.request')
      .map((e) => `${(e as { about: string }).about}:${(e as { outcome: string }).outcome}`);
    assert.deepEqual(outcomes.slice(-3), ['t0:answered', 't1:refused_by_policy', 't2:refused_by_policy']);
  });
}
