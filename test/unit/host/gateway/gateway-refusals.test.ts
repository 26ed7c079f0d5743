// A server→client request refused through the chat gateway, by both its doors (the relay on the local socket, as VS
// Code starts it, and the HTTP door) and for both protocol revisions of the gated server: a 2025-11-25 server asks
// for sampling, elicitation and roots in the middle of a call and is answered each time with an error (it reports
// what it was answered), and a 2026-07-28 server's InputRequiredResult ends the call with no retry round; either
// way the chat client's call ends at once (well within 2 s), with a result or error that names the refusal.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Gateway, type GatewayTarget } from '../../../../src/host/gateway/gateway';
import { HttpGateway } from '../../../../src/host/gateway/gateway-http';
import { EventLog } from '../../../../src/host/log/log';
import { Session } from '../../../../src/host/session';
import { openSession } from '../gateway-session';
import { recordDecision } from '../../../../src/trust/approval/approvals';
import { evaluateGate } from '../../../../src/trust/gate';
import { writeProjectConfig } from '../../grants';
import { cleanupTemp, ROOT, world } from '../../helpers';

const SERVERS = path.join(ROOT, 'out', 'test', 'fixtures', 'servers');
const LEGACY = path.join(SERVERS, 'stdio-fixture.js');
const MODERN = path.join(SERVERS, 'modern-server.js');

type Text = { type: string; text: string }[];

describe('gateway: a server→client request is refused at once on both doors and both revisions', function () {
  this.timeout(60_000);
  let session: Session;
  let gateway: Gateway;
  let http: HttpGateway;
  let log: EventLog;
  before(async () => {
    const w = world({
      '.mcp.json': JSON.stringify({
        mcpServers: {
          legacy: { command: process.execPath, args: [LEGACY], env: { FIXTURE_HOSTILE: '1' } },
          modern: { command: process.execPath, args: [MODERN], env: { FIXTURE_INPUT: '1' } },
        },
      }),
    });
    writeProjectConfig(w, {
      rules: [
        { action: 'mcp.legacy.tool.*', decision: 'allow' },
        { action: 'mcp.modern.tool.*', decision: 'allow' },
      ],
    });
    const report0 = evaluateGate(w.input);
    for (const s of report0.servers) await recordDecision(w.input, s.name, s.source, 'approved');
    const opened = await openSession(w);
    ({ log, session } = opened);
    const report = opened.report;
    assert.deepEqual(session.notes, []);
    const target = async (key: string): Promise<GatewayTarget | { refused: string }> =>
      session.servers().includes(key)
        ? {
            tools: () => session.tools().filter((t) => t.server === key),
            listed: () => true,
            call: (t, a) => session.call(key, t, a),
          }
        : { refused: `no allowed server "${key}"` };
    gateway = new Gateway({ log, target });
    await gateway.start();
    http = new HttpGateway({ log, target });
    await http.start();
  });
  after(async () => {
    await gateway.close();
    await http.close();
    await session.close();
    cleanupTemp();
  });

  const doors: Array<[string, (key: string) => Promise<Client>]> = [
    [
      'the relay',
      async (key) => {
        const client = new Client({ name: 'vscode-like', version: '0' });
        await client.connect(
          new StdioClientTransport({
            ...gateway.relayCommand(key),
            env: { ...(process.env as Record<string, string>), ...gateway.relayEnv(key) },
            stderr: 'pipe',
          }),
        );
        return client;
      },
    ],
    [
      'the HTTP door',
      async (key) => {
        const client = new Client({ name: 'vscode-like', version: '0' });
        const headers = { Authorization: `Bearer ${http.tokenFor(key)}` };
        await client.connect(new StreamableHTTPClientTransport(new URL(http.urlFor(key)), { requestInit: { headers } }));
        return client;
      },
    ],
  ];

  /** The call, bounded: it must end by itself, and within 2 s. */
  async function timedCall(c: Client, name: string): Promise<{ isError?: unknown; content: Text }> {
    const t0 = Date.now();
    const r = (await c.callTool({ name, arguments: {} })) as { isError?: unknown; content: Text };
    assert.ok(Date.now() - t0 < 2000, `the call took ${Date.now() - t0} ms`);
    return r;
  }

  const refused = () => ({ ...session.counters.refusedRequests });
  const delta = (before: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(refused())
        .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
        .filter(([, n]) => n !== 0),
    );

  for (const [door, connect] of doors) {
    it(`${door}, 2025-11-25: sampling, elicitation and roots each reach the server as an error; the call ends`, async () => {
      const c = await connect('legacy');
      try {
        const before = refused();
        const r = await timedCall(c, 't0');
        const text = r.content.map((p) => p.text).join('\n');
        // the server's own report of what each of its requests was answered: an error, not silence
        for (const m of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
          assert.match(text, new RegExp(`${m}: MCP error -32601: MCP Gate refused ${m}`));
        assert.doesNotMatch(text, /answered/);
        assert.deepEqual(delta(before), { 'sampling/createMessage': 1, 'elicitation/create': 1, 'roots/list': 1 });
      } finally {
        await c.close();
      }
    });

    it(`${door}, 2026-07-28: an InputRequiredResult ends the call with an error naming the refusal, each input request refused once`, async () => {
      const c = await connect('modern');
      try {
        const before = refused();
        const r = await timedCall(c, 'ask');
        assert.equal(r.isError, true);
        assert.match(
          r.content.map((p) => p.text).join('\n'),
          /asked for input \(elicitation\/create, sampling\/createMessage\); MCP Gate refused it/,
        );
        assert.deepEqual(delta(before), { 'elicitation/create': 1, 'sampling/createMessage': 1 });
      } finally {
        await c.close();
      }
    });
  }
});
