// The CLI as the README tells a new user to use it: `tools` and `call` against @modelcontextprotocol/server-everything
// over stdio (declared by a repository, approved) and over streamable HTTP (a user server on loopback under a
// local-development exception), with the log showing each exchange.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, cli, freePort, ROOT, world } from '../helpers';

const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

describe('CLI tools and call against server-everything', function () {
  this.timeout(120_000);
  let httpServer: ChildProcess | undefined;
  after(() => {
    httpServer?.kill('SIGKILL');
    cleanupTemp();
  });

  it('over stdio: pending refuses, approved lists tools with decisions, call answers, log records it', () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
    });
    // a repository server: its rule names its project
    writeProjectConfig(w, { rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }] });
    const pending = cli(w, ['tools', 'everything']);
    assert.equal(pending.code, 1);
    assert.match(
      pending.stderr,
      /everything \(\.mcp\.json\) is left out: it is waiting for review: .*review it with `mcp-gate get everything --project \S+` and approve it with `mcp-gate approve everything --project \S+`/,
    );
    assert.equal(cli(w, ['approve', 'everything', '--yes']).code, 0);
    const tools = cli(w, ['tools', 'everything']);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /echo\s+\[allow\]\s+Echoes back the input string/);
    assert.match(tools.stdout, /get-env\s+\[deny\]/);
    const call = cli(w, ['call', 'everything', 'echo', '--args', '{"message":"through the gate"}']);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /Echo: through the gate/);
    const denied = cli(w, ['call', 'everything', 'get-env']);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /mcp-gate: refused: .*mcp\.everything\.tool\.get-env/);
    const log = cli(w, ['log', '--server', 'everything', '--json']);
    const events = JSON.parse(log.stdout)
      .filter((e: { kind: string }) => e.kind === 'mcp.request')
      .map((e: { about: string; outcome: string }) => `${e.about}:${e.outcome}`);
    assert.deepEqual(events, ['discover:answered', 'discover:answered', 'echo:answered', 'discover:answered', 'get-env:refused_by_policy']);
    assert.match(cli(w, ['log', '--outcome', 'refused_by_policy']).stdout, /about=get-env outcome=refused_by_policy/);
  });

  it('tools: aligned columns; the allow-rule hint only while some tool lacks an allow rule', () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
    });
    writeProjectConfig(w, { rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }] });
    assert.equal(cli(w, ['approve', 'everything', '--yes']).code, 0);
    const some = cli(w, ['tools', 'everything']);
    assert.equal(some.code, 0, some.stderr);
    const rows = some.stdout.split('\n').filter((l) => /^  \S+\s+\[(allow|ask|deny)\]/.test(l));
    assert.ok(rows.length >= 10, some.stdout);
    // every [decision] starts in the same column, and so does every description
    const at = (re: RegExp) => new Set(rows.map((l) => l.search(re)));
    assert.equal(at(/\[(allow|ask|deny)\]/).size, 1, `decisions not aligned:\n${some.stdout}`);
    const descriptionAt = new Set(
      rows.map((l) => {
        const m = /\[(allow|ask|deny)\] +(?=\S)/.exec(l)!;
        return m.index + m[0].length;
      }),
    );
    assert.equal(descriptionAt.size, 1, `descriptions not aligned:\n${some.stdout}`);
    const denied = rows.filter((l) => /\[deny\]/.test(l)).length;
    assert.match(
      some.stdout,
      new RegExp(
        `^${denied} of ${rows.length} cannot be called without an allow rule; why: mcp-gate explain mcp\\.everything\\.tool\\.\\S+ --scope repository --project \\S+$`,
        'm',
      ),
    );

    writeProjectConfig(w, { rules: [{ action: 'mcp.everything.tool.*', decision: 'allow' }] });
    const all = cli(w, ['tools', 'everything']);
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(all.stdout, /\[deny\]|\[ask\]/);
    assert.doesNotMatch(all.stdout, /allow rule/, 'every tool is allowed: no hint');
  });

  it('over streamable HTTP on loopback, only under the local-development exception', async () => {
    const port = await freePort();
    httpServer = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('server-everything did not start')), 20_000);
      const onData = (d: Buffer) => {
        if (/listening/i.test(d.toString())) {
          clearTimeout(t);
          resolve();
        }
      };
      httpServer!.stdout!.on('data', onData);
      httpServer!.stderr!.on('data', onData);
    });
    const config = (exception: boolean) =>
      JSON.stringify({
        servers: { 'everything-http': { url: `http://localhost:${port}/mcp` } },
        ...(exception ? { localExceptions: [{ server: 'everything-http', allowLoopback: true }] } : {}),
        rules: [
          { action: 'mcp.everything-http.host.localhost', decision: 'allow' },
          { action: 'mcp.everything-http.tool.echo', decision: 'allow' },
        ],
      });
    const without = world({}, { '.config/mcp-gate/config.json': config(false) });
    const refused = cli(without, ['tools', 'everything-http']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /everything-http .* left out: its url is http, and only https is allowed/);
    const w = world({}, { '.config/mcp-gate/config.json': config(true) });
    const tools = cli(w, ['tools', 'everything-http']);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /from everything-http .* at localhost/);
    const call = cli(w, ['call', 'everything-http', 'echo', '--args', '{"message":"over http"}']);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /Echo: over http/);
    const events = JSON.parse(cli(w, ['log', '--json']).stdout).filter((e: { kind: string }) => e.kind === 'mcp.request');
    assert.deepEqual(events.at(-1), {
      ...events.at(-1),
      kind: 'mcp.request',
      server: 'everything-http',
      host: 'localhost',
      about: 'echo',
      status: 200,
      outcome: 'answered',
    });
  });
});
