// Local servers over stdio: a real MCP server from npm answers through our transport; the environment a server
// gets holds nothing MCP Gate did not pass on purpose; stopping leaves no process of the tree behind.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { minimalEnv, StdioTransport } from '../../../../src/host/sandbox/stdio';
import { descendants } from '../../../../src/host/sandbox/processes';
import { ROOT } from '../../helpers';

const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return pred();
}

describe('stdio transport', function () {
  this.timeout(60_000);

  it('talks to @modelcontextprotocol/server-everything', async () => {
    const t = new StdioTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], cwd: ROOT, env: minimalEnv(process.env) });
    const client = new Client({ name: 'mcp-gate-test', version: '0' });
    await client.connect(t);
    const tools = await client.listTools();
    assert.ok(
      tools.tools.some((x) => x.name === 'echo'),
      tools.tools.map((x) => x.name).join(','),
    );
    const r = await client.callTool({ name: 'echo', arguments: { message: 'hello gate' } });
    assert.match(JSON.stringify(r.content), /hello gate/);
    const pid = t.pid!;
    await client.close();
    assert.ok(await waitFor(() => !alive(pid), 5000), 'server process gone');
  });

  it('passes only PATH, HOME, locale and temp variables, plus what the declaration sets', async () => {
    const parent = { PATH: process.env.PATH, HOME: '/home/x', GITHUB_TOKEN: 'ghp_secret', AWS_SECRET_ACCESS_KEY: 'aws', LANG: 'C.UTF-8' };
    const env = { ...minimalEnv(parent), DECLARED: 'yes' };
    assert.deepEqual(Object.keys(env).sort(), ['DECLARED', 'HOME', 'LANG', 'PATH']);
    const t = new StdioTransport({
      command: process.execPath,
      args: ['-e', 'process.stderr.write(JSON.stringify(process.env))'],
      cwd: ROOT,
      env,
    });
    const closed = new Promise<void>((r) => (t.onclose = () => r()));
    await t.start();
    await closed;
    const seen = JSON.parse(t.stderrText());
    assert.equal(seen.DECLARED, 'yes');
    assert.equal(seen.GITHUB_TOKEN, undefined);
    assert.equal(seen.AWS_SECRET_ACCESS_KEY, undefined);
  });

  it('is spawned without a shell: metacharacters are plain arguments', async () => {
    const t = new StdioTransport({
      command: process.execPath,
      args: ['-e', 'process.stderr.write(JSON.stringify(process.argv.slice(1)))', '$(id)', '; rm -rf /', '`x`'],
      cwd: ROOT,
      env: minimalEnv(process.env),
    });
    const closed = new Promise<void>((r) => (t.onclose = () => r()));
    await t.start();
    await closed;
    assert.deepEqual(JSON.parse(t.stderrText()), ['$(id)', '; rm -rf /', '`x`']);
  });

  it('stop kills the whole tree, including children of sh -c and a child that left the process group', async () => {
    const script = 'sleep 300 & sleep 300 & (setsid sleep 300 &) ; node -e "setInterval(()=>{},1000)" & wait';
    const t = new StdioTransport({ command: 'sh', args: ['-c', script], cwd: ROOT, env: minimalEnv(process.env) });
    await t.start();
    const pid = t.pid!;
    assert.ok(await waitFor(() => descendants(pid).length >= 3, 5000), 'children started');
    const tree = [pid, ...descendants(pid)];
    await t.close();
    assert.ok(await waitFor(() => tree.every((p) => !alive(p)), 5000), `left behind: ${tree.filter(alive).join(' ')}`);
  });

  it('a message over 1 MiB closes the server instead of buffering without end', async () => {
    const t = new StdioTransport({
      command: process.execPath,
      args: ['-e', 'process.stdout.write("x".repeat(2*1024*1024)); setInterval(()=>{},1000)'],
      cwd: ROOT,
      env: minimalEnv(process.env),
    });
    const errors: Error[] = [];
    t.onerror = (e) => errors.push(e);
    const closed = new Promise<void>((r) => (t.onclose = () => r()));
    await t.start();
    await closed;
    assert.match(errors.map((e) => e.message).join(' '), /a message over 1048576 bytes/);
  });

  it('stderr is kept bounded', async () => {
    const t = new StdioTransport({
      command: process.execPath,
      args: ['-e', 'for (let i=0;i<200;i++) process.stderr.write("e".repeat(4096))'],
      cwd: ROOT,
      env: minimalEnv(process.env),
    });
    const closed = new Promise<void>((r) => (t.onclose = () => r()));
    await t.start();
    await closed;
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(t.stderrText().length <= 64 * 1024 + 65536, `kept ${t.stderrText().length}`);
    assert.ok(t.stderrText().length > 0);
  });
});
