// `mcp-gate serve` as an agent launches it: an SDK client speaks MCP to the built CLI over stdio. A pending server
// is never started (its marker file never appears), the client gets an empty tool list and a message naming the
// server, its state and the approve command; after `mcp-gate approve` the tool answers through the gate and the
// exchange is in the log; a server changed while served is refused at the next call; stdout carries only MCP.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, cli, CLI, ROOT, world, type World } from '../helpers';

const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

async function connect(w: World, args: string[]): Promise<{ client: Client; stderr: () => string }> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
  for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', ...args],
    cwd: w.project,
    env,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'serve-test', version: '1' });
  await client.connect(transport); // any non-MCP byte on stdout would fail the JSON-RPC parse here or later
  return { client, stderr: () => err };
}

describe('mcp-gate serve (stdio MCP server for any agent)', function () {
  this.timeout(120_000);
  after(() => cleanupTemp());

  it('a pending server is not started: empty tool list, and the client is told which server, its state and how to approve', async () => {
    const w = world({});
    const marker = path.join(w.project, 'marker'); // the project folder is writable for a server that runs
    fs.writeFileSync(
      path.join(w.project, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          sneaky: { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`] },
        },
      }),
    );
    const { client, stderr } = await connect(w, []);
    try {
      assert.deepEqual((await client.listTools()).tools, []);
      assert.match(
        client.getInstructions() ?? '',
        /"sneaky" \(\.mcp\.json\) is not served: it is waiting for review: .*mcp-gate approve sneaky --project/,
      );
      const r = await client.callTool({ name: 'sneaky__anything', arguments: {} });
      assert.equal(r.isError, true);
      assert.match((r.content as { text: string }[])[0].text, /"sneaky" \(\.mcp\.json\) is not served: it is waiting for review/);
      assert.match(stderr(), /mcp-gate serve: "sneaky" \(\.mcp\.json\) is not served: it is waiting for review/);
    } finally {
      await client.close();
    }
    assert.equal(fs.existsSync(marker), false, "the pending server's command ran");
    const refused = cli(w, ['log', '--json']);
    assert.ok(JSON.parse(refused.stdout).some((e: { kind: string; server?: string }) => e.kind === 'gate.refuse' && e.server === 'sneaky'));
  });

  it('after approve: the tool answers through the gate, denied tools are not listed, the exchange is logged; a change is refused at the next call', async () => {
    const mcpJson = (extra: string[]) =>
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio', ...extra] } } });
    const w = world({ '.mcp.json': mcpJson([]) });
    writeProjectConfig(w, { rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }] });
    assert.equal(cli(w, ['approve', 'everything', '--yes']).code, 0);

    const all = await connect(w, []);
    try {
      assert.deepEqual(
        (await all.client.listTools()).tools.map((t) => t.name),
        ['everything__echo'],
      );
      const r = await all.client.callTool({ name: 'everything__echo', arguments: { message: 'via serve' } });
      assert.deepEqual(r.content, [{ type: 'text', text: 'Echo: via serve' }]);
      // the repository changes the server while it is served: the gate, checked again at the call, refuses
      fs.writeFileSync(path.join(w.project, '.mcp.json'), mcpJson(['--changed']));
      const again = await all.client.callTool({ name: 'everything__echo', arguments: { message: 'again' } });
      assert.equal(again.isError, true);
      assert.match(
        (again.content as { text: string }[])[0].text,
        /"everything" \(\.mcp\.json\) is not served: it is changed since approval: .*mcp-gate approve everything/,
      );
    } finally {
      await all.client.close();
    }
    const events = JSON.parse(cli(w, ['log', '--server', 'everything', '--json']).stdout) as {
      kind: string;
      about?: string;
      tool?: string;
      outcome?: string;
    }[];
    assert.ok(events.some((e) => e.kind === 'tool.call' && e.tool === 'echo'));
    assert.ok(events.some((e) => e.kind === 'mcp.request' && e.about === 'echo' && e.outcome === 'answered'));

    fs.writeFileSync(path.join(w.project, '.mcp.json'), mcpJson([]));
    const one = await connect(w, ['everything']);
    try {
      assert.deepEqual(
        (await one.client.listTools()).tools.map((t) => t.name),
        ['echo'],
        'one named server: tools keep their own names',
      );
      const denied = await one.client.callTool({ name: 'get-env', arguments: {} });
      assert.equal(denied.isError, true);
    } finally {
      await one.client.close();
    }
  });

  it('a server→client request is refused at once on both revisions: the server is answered with an error, the call ends within 2 s', async () => {
    const servers = path.join(ROOT, 'out', 'test', 'fixtures', 'servers');
    const w = world({
      '.mcp.json': JSON.stringify({
        mcpServers: {
          legacy: { command: process.execPath, args: [path.join(servers, 'stdio-fixture.js')], env: { FIXTURE_HOSTILE: '1' } },
          modern: { command: process.execPath, args: [path.join(servers, 'modern-server.js')], env: { FIXTURE_INPUT: '1' } },
        },
      }),
    });
    writeProjectConfig(w, { rules: ['legacy', 'modern'].map((n) => ({ action: `mcp.${n}.tool.*`, decision: 'allow' })) });
    for (const n of ['legacy', 'modern']) assert.equal(cli(w, ['approve', n, '--yes']).code, 0);
    const { client } = await connect(w, []);
    const timed = async (name: string) => {
      const t0 = Date.now();
      const r = await client.callTool({ name, arguments: {} });
      assert.ok(Date.now() - t0 < 2000, `the call took ${Date.now() - t0} ms`);
      return { isError: r.isError, text: (r.content as { text: string }[]).map((p) => p.text).join('\n') };
    };
    try {
      // 2025-11-25: the server asks in the middle of the call and reports what it was answered: an error each time
      const legacy = await timed('legacy__t0');
      for (const m of ['sampling/createMessage', 'elicitation/create', 'roots/list'])
        assert.match(legacy.text, new RegExp(`${m}: MCP error -32601: MCP Gate refused ${m}`));
      assert.doesNotMatch(legacy.text, /answered/);
      // 2026-07-28: an InputRequiredResult ends the call with an error naming the refusal
      const modern = await timed('modern__ask');
      assert.equal(modern.isError, true);
      assert.match(modern.text, /asked for input \(elicitation\/create, sampling\/createMessage\); MCP Gate refused it/);
    } finally {
      await client.close();
    }
    const refusals = (JSON.parse(cli(w, ['log', '--json']).stdout) as { kind: string; server?: string }[]).filter(
      (e) => e.kind === 'gate.refuse',
    );
    assert.deepEqual(
      refusals.map((e) => e.server),
      ['legacy', 'legacy', 'legacy', 'modern', 'modern'],
    );
  });

  it("does not serve its own agent entry when MCP Gate imports that agent's file (no gate inside the gate)", async () => {
    const w = world(
      {},
      {
        '.config/mcp-gate/config.json': JSON.stringify({ imports: ['claude'] }),
        '.claude.json': JSON.stringify({ mcpServers: { 'mcp-gate': { type: 'stdio', command: process.execPath, args: [CLI, 'serve'] } } }),
      },
    );
    const { client, stderr } = await connect(w, []);
    try {
      assert.deepEqual((await client.listTools()).tools, []);
      assert.match(stderr(), /"mcp-gate" \(.*\) is MCP Gate's own agent entry .* not served/);
    } finally {
      await client.close();
    }
  });
});
