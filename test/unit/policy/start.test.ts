// One decision per start (src/policy/start.ts): the policy is asked once for a server's start — sandbox, network,
// the rules naming hosts — and the door's later questions go through that value, by the rules in force then.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decideStart } from '../../../src/policy/start';
import type { ServerIdentity } from '../../../src/policy/identity';
import { loadUserPolicy, type RawUserPolicy } from '../../../src/policy/user-policy';

// a folder that exists: a rule's "project" is compared by its real path
const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-start-')));
const who: ServerIdentity = { name: 's', scope: 'repository', project };
const policy = (raw: Omit<RawUserPolicy, 'file'>) => loadUserPolicy({ file: 'config.json', ...raw });

describe('policy/start: one decision per start', () => {
  after(() => fs.rmSync(project, { recursive: true, force: true }));
  it('says the sandbox, the bare network verdict and the rules naming hosts at once', () => {
    const d = decideStart(
      policy({
        rules: [
          { action: 'mcp.s.network.com.example.api', decision: 'allow', project },
          { action: 'mcp.other.network', decision: 'allow', project },
        ],
      }),
      who,
      '/home/u',
    );
    assert.equal(d.sandbox.kind, 'contained');
    assert.equal(d.network.decision, 'deny', 'no bare rule for this server: no public host');
    assert.equal(d.networkAction, 'mcp.s.network');
    assert.deepEqual(
      d.networkHosts.map((r) => r.action),
      ['mcp.s.network.com.example.api'],
    );
  });

  it("the door's question follows the rules in force at the connection; an ask is answered by the asker, or refused without one", async () => {
    let raw: Omit<RawUserPolicy, 'file'> = { rules: [{ action: 'mcp.s.network', decision: 'allow', project }] };
    const d = decideStart(policy(raw), who, '/home/u', { live: () => policy(raw), asker: async () => 'once' });
    const bare = await d.ask(d.network);
    assert.equal(d.reach('api.example.com', bare).verdict.decision, 'allow');
    raw = { rules: [] };
    const closed = d.reach('api.example.com', bare);
    assert.equal(closed.verdict.decision, 'deny', 'the bare rule removed: public hosts close at once');
    assert.equal(closed.permit, JSON.stringify({ action: 'mcp.s.network.com.example.api', decision: 'allow', project }));
    raw = { rules: [{ action: 'mcp.s.network.com.example.api', decision: 'ask', project }] };
    const asked = d.reach('api.example.com', bare);
    assert.equal(asked.byHostRule, true);
    assert.equal((await d.ask(asked.verdict)).decision, 'allow');
    const noAsker = decideStart(policy(raw), who, '/home/u');
    assert.equal((await noAsker.ask(asked.verdict)).decision, 'deny', 'nobody to ask: refused');
  });

  it('the sandbox and the network door ask the policy only through this value: src/host/sandbox and src/host/net import types from src/policy, and one constant', () => {
    const root = path.resolve(__dirname, '..', '..', '..', '..');
    const asked: string[] = [];
    for (const dir of ['src/host/sandbox', 'src/host/net'])
      for (const f of fs.readdirSync(path.join(root, dir)).filter((n) => n.endsWith('.ts'))) {
        const text = fs.readFileSync(path.join(root, dir, f), 'utf8');
        for (const m of text.matchAll(/^import (?!type )([^;]*?) from '\.\.\/\.\.\/policy\/([\w-]+)';/gms))
          asked.push(`${dir}/${f}: ${m[2]} ${m[1].replace(/\s+/g, ' ')}`);
      }
    assert.deepEqual(asked, ['src/host/sandbox/sandbox-probe.ts: sandbox-profile { DEFAULT_LIMITS }']);
  });

  it('a policy with problems refuses the network (and says the sandbox cannot be used)', () => {
    const d = decideStart(policy({ rules: [{ action: 'mcp.s.network', decision: 'sometimes' as never, project }] }), who, '/home/u');
    assert.equal(d.network.decision, 'deny');
    assert.deepEqual(d.networkHosts, []);
  });
});
