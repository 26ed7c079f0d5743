// What the extension host accepts from the trust panel's webview: exactly the messages the panel sends, naming a
// server of the current state with an action that server allows now. Everything else is refused with a reason
// (the host drops it and logs the reason). Also the webview document: its CSP and nonce.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../src/trust/gate';
import { buildModel, checkMessage, describeMessage, panelCsp, panelHtml, type BuiltModel } from '../../../webview/node/model';
import { sanitizeUiState, MAX_UI_STATE_JSON } from '../../../webview/common/ui-state';
import { cleanupTemp, world } from '../helpers';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);

describe('trust panel: messages from the webview', () => {
  let built: BuiltModel;
  let pending: string;
  let approved: string;
  let blocked: string;

  before(async () => {
    const w = world({ '.mcp.json': MCP({ fresh: { command: 'a' }, ok: { command: 'b' }, 'bad<name>': { command: 'c' } }) });
    await recordDecision(w.input, 'ok', undefined, 'approved');
    built = buildModel([{ name: 'p', path: w.project, report: evaluateGate(w.input) }], { restricted: false });
    const key = (n: string) => built.model.servers.find((s) => s.name === n)!.key;
    pending = key('fresh');
    approved = key('ok');
    blocked = key('bad<name>');
  });
  after(cleanupTemp);

  const ok = (m: unknown) => {
    const v = checkMessage(m, built);
    assert.ok(v.ok, `${JSON.stringify(m)} refused: ${!v.ok && v.why}`);
    return v;
  };
  const refused = (m: unknown, why: RegExp) => {
    const v = checkMessage(m, built);
    assert.ok(!v.ok, `${describeMessage(m)} was accepted`);
    assert.match(v.why, why);
  };

  it('accepts ready, open, the actions a server allows now, and a UI state', () => {
    ok({ type: 'ready' });
    const open = ok({ type: 'open', key: pending });
    assert.equal(open.ok && open.ref?.name, 'fresh');
    const approve = ok({ type: 'action', action: 'approve', key: pending });
    assert.deepEqual(approve.ok && approve.ref, { folder: built.refs.get(pending)!.folder, source: '.mcp.json', name: 'fresh' });
    ok({ type: 'action', action: 'reject', key: pending });
    ok({ type: 'action', action: 'reject', key: approved });
    ok({ type: 'action', action: 'reset', key: approved });
    const st = ok({
      type: 'state',
      state: { tab: 'log', filter: { server: 'x', outcome: '', kind: '', text: 'q' }, expanded: { [pending]: true }, scroll: {} },
    });
    assert.equal(st.ok && st.message.type === 'state' && st.message.state.tab, 'log');
  });

  it('refuses unknown types, non-objects, missing and extra fields', () => {
    for (const m of [null, undefined, 42, 'ready', true, [], [{ type: 'ready' }], new Date()]) refused(m, /not an object/);
    for (const m of [
      {},
      { type: 'nope' },
      { type: 'READY' },
      { type: 42 },
      { type: 'toString' },
      { type: '__proto__' },
      { type: 'constructor' },
    ])
      refused(m, /unknown type/);
    refused({ type: 'ready', extra: 1 }, /wrong fields/);
    refused({ type: 'action' }, /wrong fields/);
    refused({ type: 'action', action: 'approve' }, /wrong fields/);
    refused({ type: 'action', key: pending }, /wrong fields/);
    refused({ type: 'action', action: 'approve', key: pending, confirmed: true }, /wrong fields/);
    refused(JSON.parse(`{"type":"action","action":"reject","key":"${pending}","__proto__":{"x":1}}`), /wrong fields/);
    refused({ type: 'open', key: pending, action: 'approve' }, /wrong fields/);
    refused({ type: 'state' }, /wrong fields/);
    refused(Object.assign(Object.create({ inherited: 1 }), { type: 'ready' }), /not an object/);
  });

  it('refuses keys that are not a key of a server of the current state', () => {
    refused({ type: 'action', action: 'reject', key: `s${'0'.repeat(32)}` }, /no such server/);
    refused({ type: 'open', key: `s${'f'.repeat(32)}` }, /no such server/);
    for (const key of [
      pending.toUpperCase(),
      `${pending} `,
      pending.slice(0, -1),
      'fresh',
      JSON.stringify(['/p', '.mcp.json', 'fresh']),
      'x'.repeat(100_000),
      42,
      null,
      { name: 'fresh' },
      [pending],
    ]) {
      refused({ type: 'action', action: 'reject', key }, /malformed server key/);
    }
  });

  it('refuses actions the server does not allow now', () => {
    refused({ type: 'action', action: 'delete', key: pending }, /unknown action/);
    refused({ type: 'action', action: ['reject'], key: pending }, /unknown action/);
    refused({ type: 'action', action: 'reset', key: pending }, /not allowed for a server in state pending/);
    refused({ type: 'action', action: 'approve', key: approved }, /not allowed for a server in state approved/);
    for (const action of ['approve', 'reject', 'reset'])
      refused({ type: 'action', action, key: blocked }, /not allowed for a server in state blocked/);
  });

  it('refuses a state that is not an object or too large; sanitises the rest', () => {
    refused({ type: 'state', state: 'log' }, /not an object/);
    refused({ type: 'state', state: [1] }, /not an object/);
    refused({ type: 'state', state: { filter: { text: 'x'.repeat(MAX_UI_STATE_JSON) } } }, /too large/);
    const v = checkMessage(
      {
        type: 'state',
        state: {
          tab: 'admin',
          filter: { text: 7, server: 'a' },
          expanded: { 'not-a-key': true, [pending]: 'yes', [approved]: false },
          selectedLog: -1,
          scroll: { log: 'x', waiting: 40 },
        },
      },
      built,
    );
    assert.ok(v.ok && v.message.type === 'state');
    assert.deepEqual(v.message.state, {
      tab: 'waiting',
      filter: { server: 'a', outcome: '', kind: '', text: '' },
      expanded: { [approved]: false },
      scroll: { waiting: 40 },
    });
  });

  it('property: arbitrary JSON is never taken for an action or an open', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (m) => {
        const v = checkMessage(m, built);
        return !v.ok || v.message.type === 'ready' || v.message.type === 'state';
      }),
      { numRuns: 2000 },
    );
    const keys = fc.constantFrom(pending, approved, blocked, `s${'1'.repeat(32)}`, '');
    const actions = fc.constantFrom('approve', 'reject', 'reset', 'delete', '');
    fc.assert(
      fc.property(
        fc.record({ type: fc.constantFrom('action', 'open', 'ready', 'x'), action: actions, key: keys }, { requiredKeys: [] }),
        (m) => {
          const v = checkMessage(m, built);
          if (!v.ok) return true;
          // Accepted: the exact shape, a current key, and an action that server allows.
          if (v.message.type === 'ready') return Object.keys(m).length === 1;
          const server = built.model.servers.find((s) => s.key === (m as { key: string }).key)!;
          return !!server && (v.message.type === 'open' || server.actions.includes((m as { action: 'approve' }).action));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('describes a dropped message briefly, escaped, whatever it holds', () => {
    const d = describeMessage({ type: 'x\u202Ey', key: 'k'.repeat(10_000) });
    assert.ok(d.length < 260, `${d.length}`);
    assert.ok(d.includes('x\\u202Ey'));
    assert.equal(describeMessage(null), 'null');
    assert.equal(describeMessage([1]), 'array');
  });

  it('sanitizeUiState turns anything into a valid state', () => {
    fc.assert(
      fc.property(fc.anything(), (x) => {
        const s = sanitizeUiState(x);
        return ['waiting', 'decided', 'log'].includes(s.tab) && typeof s.filter.text === 'string' && typeof s.expanded === 'object';
      }),
      { numRuns: 1000 },
    );
  });
});

describe('trust panel: the webview document', () => {
  const nonce = Buffer.alloc(18, 7).toString('base64');
  const html = panelHtml({
    cspSource: 'https://x.vscode-cdn.net',
    nonce,
    script: 'https://x.vscode-cdn.net/dist/webview/panel.js',
    styles: ['https://x.vscode-cdn.net/media/panel.css'],
    codicons: 'https://x.vscode-cdn.net/dist/webview/codicons/codicon.css',
  });

  it('has a CSP with nothing by default and scripts only with the nonce', () => {
    const csp = panelCsp('https://x.vscode-cdn.net', nonce);
    const d = Object.fromEntries(csp.split('; ').map((x) => [x.split(' ')[0], x.split(' ').slice(1).join(' ')]));
    assert.equal(d['default-src'], "'none'");
    assert.equal(d['script-src'], `'nonce-${nonce}'`);
    assert.equal(d['style-src'], `https://x.vscode-cdn.net 'nonce-${nonce}'`);
    assert.equal(d['img-src'], "'none'");
    assert.equal(d['base-uri'], "'none'");
    assert.doesNotMatch(csp, /unsafe-(inline|eval|hashes)|\*/);
    assert.ok(html.includes(`content="${csp.replace(/'/g, "'")}"`));
  });

  it('loads one script, with the nonce and from the extension, and has no inline script or handler', () => {
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0][1], new RegExp(`nonce="${nonce.replace(/[+/]/g, '\\$&')}"`));
    assert.match(scripts[0][1], /src="https:\/\/x\.vscode-cdn\.net\/dist\/webview\/panel\.js"/);
    assert.equal(scripts[0][2], '');
    assert.doesNotMatch(html, /\son[a-z]+=/i);
    assert.doesNotMatch(html, /style=/);
  });

  it('refuses a weak nonce and escapes what it puts in attributes', () => {
    assert.throws(() => panelHtml({ cspSource: 'x', nonce: 'abc', script: '', styles: [], codicons: '' }), /nonce/);
    assert.throws(() => panelHtml({ cspSource: 'x', nonce: `${nonce}" onload="x`, script: '', styles: [], codicons: '' }), /nonce/);
    const h = panelHtml({ cspSource: 'x', nonce, script: 'a"><script>alert(1)</script>', styles: [], codicons: '' });
    assert.ok(h.includes('a&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'));
  });
});
