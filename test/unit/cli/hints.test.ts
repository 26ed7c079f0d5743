// Every hint the CLI prints is a command that, run as written, does what it says for that server: each one is
// taken from the output as printed and run by a real shell, from a folder that is not the project (so a hint
// that forgot --project would act on the wrong folder and fail here), with `mcp-gate` on PATH as the built CLI.
// Covered: the approve and get hints of a waiting server, the reset hint of a rejected one, the explain hint of
// `tools` (repository scope and project included) and the allow rule it and `serve` name for a hidden tool.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeProjectConfig } from '../grants';
import { cleanupTemp, cli, CLI, tempDir, world, type World } from '../helpers';
import { miniServer } from '../mini-server';

/** The environment the CLI runs in: the world's, its store, and a PATH whose `mcp-gate` is the built CLI. */
function shellEnv(w: World): Record<string, string> {
  const bin = tempDir();
  fs.writeFileSync(path.join(bin, 'mcp-gate'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`, {
    mode: 0o755,
  });
  const env: Record<string, string> = { PATH: `${bin}:${process.env.PATH ?? ''}`, MCP_GATE_STORE: w.store };
  for (const [k, v] of Object.entries(w.env)) if (v !== undefined) env[k] = v;
  return env;
}

/** Runs one hint as printed, in a shell, from the world's home (not the project). */
function run(w: World, hint: string, input = ''): { code: number; stdout: string; stderr: string } {
  assert.match(hint, /^mcp-gate /, `a hint is a command: ${hint}`);
  const r = spawnSync('/bin/sh', ['-c', hint], { cwd: w.home, env: shellEnv(w), input, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The commands a line names between backticks. */
const backticked = (text: string) => [...text.matchAll(/`(mcp-gate [^`]+)`/g)].map((m) => m[1]);

function serverWorld(): World {
  return world({
    '.mcp.json': JSON.stringify({ mcpServers: { srv: { command: process.execPath, args: ['server.js'] } } }),
    'server.js': miniServer('', '', 'hello'),
  });
}

describe('CLI hints, run as printed', function () {
  this.timeout(180_000);
  after(() => cleanupTemp());

  it("a waiting server: the get and approve hints act on this project's server; a rejected one: the reset hint returns it to pending", () => {
    const w = serverWorld();
    writeProjectConfig(w, { rules: [] });
    const waiting = cli(w, ['tools', 'srv']);
    assert.equal(waiting.code, 1);
    const [get, approve] = backticked(waiting.stderr);
    assert.ok(get && approve, `two hints: ${waiting.stderr}`);
    const shown = run(w, get);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /state\s+waiting for review/);
    assert.match(shown.stdout, /server\.js/);
    const approved = run(w, approve, 'yes\n');
    assert.equal(approved.code, 0, approved.stdout + approved.stderr);
    assert.match(cli(w, ['list']).stdout, /approved\s+repository\s+\.mcp\.json\s+srv/);

    assert.equal(cli(w, ['reject', 'srv']).code, 0);
    const rejected = cli(w, ['tools', 'srv']);
    const [reset] = backticked(rejected.stderr);
    assert.ok(reset, `a reset hint: ${rejected.stderr}`);
    assert.equal(run(w, reset).code, 0);
    assert.match(cli(w, ['list']).stdout, /waiting for review\s+repository\s+\.mcp\.json\s+srv/);
  });

  it('tools: the explain hint explains this repository server; the rule it names, once added, allows the tool', () => {
    const w = serverWorld();
    writeProjectConfig(w, { rules: [] });
    assert.equal(cli(w, ['approve', 'srv', '--yes']).code, 0);
    const before = cli(w, ['tools', 'srv']);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /hello\s+\[deny\]/);
    const why = /why: (mcp-gate explain .+)$/m.exec(before.stdout)?.[1];
    assert.ok(why, before.stdout);
    const explained = run(w, why);
    assert.equal(explained.code, 1, 'it says deny, as tools did');
    assert.match(explained.stdout, /^action: mcp\.srv\.tool\.hello$/m);
    assert.match(explained.stdout, /^decision: deny$/m);
    assert.match(explained.stdout, new RegExp(`as seen by: the repository servers of ${w.project.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const rule = /^to allow hello, add to "rules" in (\S+): (\{.*\})$/m.exec(before.stdout);
    assert.ok(rule, before.stdout);
    assert.equal(rule[1], path.join(w.home, '.config', 'mcp-gate', 'config.json'));
    assert.deepEqual(JSON.parse(rule[2]), { action: 'mcp.srv.tool.hello', decision: 'allow', project: w.project });
    assert.match(explained.stdout, new RegExp(`^would permit: ${rule[2].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));

    writeProjectConfig(w, { rules: [JSON.parse(rule[2])] });
    const after = cli(w, ['tools', 'srv']);
    assert.match(after.stdout, /hello\s+\[allow\]/);
    assert.doesNotMatch(after.stdout, /why:/, 'nothing left to explain');
    const allowed = run(w, why);
    assert.equal(allowed.code, 0);
    assert.match(allowed.stdout, /^decision: allow$/m);
  });

  it('serve: the agent and the person are told how many tools the policy hides and the rule that allows each; adding it serves the tool', async () => {
    const w = serverWorld();
    writeProjectConfig(w, { rules: [] });
    assert.equal(cli(w, ['approve', 'srv', '--yes']).code, 0);
    const connect = async () => {
      let err = '';
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'serve', 'srv'],
        cwd: w.project,
        env: shellEnv(w),
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const client = new Client({ name: 'hints-test', version: '1' });
      await client.connect(transport);
      return { client, stderr: () => err };
    };
    const first = await connect();
    let rule: string;
    try {
      assert.deepEqual((await first.client.listTools()).tools, [], 'the denied tool is not listed');
      assert.match(first.stderr(), /serving srv \(0 tools; 1 hidden by your policy\)/);
      const line = /hidden by policy: hello of "srv": allowed by adding (\{.*?\}) to "rules" in (\S+)$/m.exec(first.stderr());
      assert.ok(line, first.stderr());
      rule = line[1];
      assert.equal(line[2], path.join(w.home, '.config', 'mcp-gate', 'config.json'));
      assert.ok(
        (first.client.getInstructions() ?? '').includes(`hello of "srv": allowed by adding ${rule} to "rules"`),
        first.client.getInstructions(),
      );
    } finally {
      await first.client.close();
    }
    writeProjectConfig(w, { rules: [JSON.parse(rule)] });
    const second = await connect();
    try {
      assert.deepEqual(
        (await second.client.listTools()).tools.map((t) => t.name),
        ['hello'],
      );
      assert.match(second.stderr(), /serving srv \(1 tool\)/);
      assert.doesNotMatch(second.stderr(), /hidden by policy/);
      assert.equal(second.client.getInstructions(), undefined);
    } finally {
      await second.client.close();
    }
  });
});
