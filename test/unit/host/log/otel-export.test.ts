// The exchange log exported as OpenTelemetry log records over OTLP/HTTP (src/host/log/otel-export.ts), checked by a
// real receiver that decodes the official protobuf schema (./otlp-receiver.ts): every event of a session arrives,
// masked exactly like the local log; a receiver that never answers does not hold a call up; what was kept while the
// receiver was down arrives once it is back; a bad "logExport" is refused naming the setting.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../../../src/host/log/log';
import { LogExport } from '../../../../src/host/log/otel-export';
import { Masker } from '../../../../src/policy/mask';
import { CLI, cleanupTemp, cli, freePort, tempDir, until, world, type CliResult, type World } from '../../helpers';
import { miniServer } from '../../mini-server';
import { OtlpReceiver } from './otlp-receiver';

/** A secret that is also the tool's name, so it is in the events' fields (tool, about) until masked. */
const SECRET = 'sk0live0otel0secret0value42';

/** The built CLI, run without blocking this process (the receiver answers from it). */
function cliAsync(w: World, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const e: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
  for (const [k, v] of Object.entries({ ...w.env, ...env })) if (v !== undefined) e[k] = v;
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args, '--project', w.project], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A home with one user-scope server (`fx`, whose one tool is named SECRET), calls allowed, and `logExport`. */
function exportingWorld(logExport: unknown): World {
  const w = world();
  const server = path.join(w.home, 'fx.js');
  fs.writeFileSync(server, miniServer('', "'said hello'", SECRET));
  const config = path.join(w.home, '.config', 'mcp-gate', 'config.json');
  fs.mkdirSync(path.dirname(config), { recursive: true });
  fs.writeFileSync(
    config,
    JSON.stringify({
      servers: { fx: { command: process.execPath, args: [server] } },
      rules: [{ action: 'mcp.fx.tool.*', decision: 'allow' }],
      logExport,
    }),
  );
  return w;
}

/** The local log's lines without their chain marks: what the export's bodies must equal. */
function localLines(w: World): string[] {
  return fs
    .readFileSync(path.join(w.store, 'log.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const { chain: _chain, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(rest);
    });
}

describe('log export over OTLP/HTTP', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('a gate decision made without a session (approve, reject, reset of a repository server) reaches the receiver too', async () => {
    const receiver = new OtlpReceiver();
    const url = await receiver.start();
    try {
      const w = exportingWorld({ endpoint: url });
      fs.writeFileSync(path.join(w.project, '.mcp.json'), JSON.stringify({ mcpServers: { repo: { command: 'node', args: ['x.js'] } } }));
      fs.writeFileSync(path.join(w.project, 'x.js'), 'serve()\n');
      for (const args of [
        ['approve', 'repo', '--yes'],
        ['reset', 'repo'],
        ['reject', 'repo'],
      ]) {
        const r = await cliAsync(w, args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      }
      assert.deepEqual(
        receiver.records.map((x) => x.eventName),
        ['gate.approve', 'gate.reset', 'gate.reject'],
      );
      assert.deepEqual(
        receiver.records.map((x) => x.body),
        localLines(w),
        'the same lines as the local log',
      );
    } finally {
      await receiver.stop();
    }
  });

  it('serve stopped by Ctrl-C (SIGINT) sends what it had not sent yet before it exits', async () => {
    const receiver = new OtlpReceiver();
    const url = await receiver.start();
    try {
      const w = exportingWorld({ endpoint: url });
      const e: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
      for (const [k, v] of Object.entries(w.env)) if (v !== undefined) e[k] = v;
      const p = spawn(process.execPath, [CLI, 'serve', '--project', w.project], { env: e, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const send = (m: unknown) => p.stdin.write(JSON.stringify(m) + '\n');
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      });
      assert.ok(await until(() => stdout.includes('"id":1'), 30_000), stdout);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: `fx__${SECRET}`, arguments: {} } });
      assert.ok(await until(() => stdout.includes('"id":2'), 30_000), stdout);
      const exited = new Promise<number | null>((r) => p.on('close', (code) => r(code)));
      p.kill('SIGINT');
      assert.equal(await exited, 130);
      const kinds = receiver.records.map((x) => x.eventName);
      assert.ok(kinds.includes('tool.call') && kinds.includes('tool.result'), kinds.join(', '));
      assert.deepEqual(
        receiver.records.map((x) => x.body),
        localLines(w),
        'everything the local log has, sent before the exit',
      );
    } finally {
      await receiver.stop();
    }
  });

  it('the receiver gets every event of a session, masked exactly like the local log', async () => {
    const receiver = new OtlpReceiver();
    const url = await receiver.start();
    try {
      const w = exportingWorld({ endpoint: url, headers: { 'x-team': 'sec' } });
      const r = await cliAsync(w, ['call', 'fx', SECRET], { MCP_GATE_SECRET_TOKEN: SECRET });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /said hello/);
      // The CLI sends what is left before it exits: nothing to wait for.
      const local = localLines(w);
      assert.ok(local.length >= 4, local.join('\n'));
      assert.deepEqual(
        receiver.records.map((x) => x.body),
        local,
        'one record per line of the session, in order, its body the line exactly as the local log has it',
      );
      const kinds = receiver.records.map((x) => x.eventName);
      for (const k of ['server.start', 'tool.call', 'tool.result', 'mcp.request', 'server.stop'])
        assert.ok(kinds.includes(k), `${k} in ${kinds.join(', ')}`);
      const call = receiver.records.find((x) => x.eventName === 'mcp.request' && x.attributes['mcp_gate.about'] !== 'discover')!;
      assert.equal(call.attributes['mcp_gate.server'], 'fx');
      assert.equal(call.attributes['mcp_gate.outcome'], 'answered');
      assert.equal(call.attributes['event.name'], 'mcp.request');
      assert.equal(call.severityText, 'INFO');
      assert.equal(call.resource['service.name'], 'mcp-gate');
      assert.equal(new Date(Number(BigInt(call.timeUnixNano) / 1_000_000n)).toISOString(), JSON.parse(call.body).at);
      assert.equal(call.attributes['mcp_gate.about'], '***', 'the tool name (the secret) is masked');
      // The secret is in no byte that was sent, and nowhere in the local log.
      for (const body of receiver.raw) assert.equal(body.includes(SECRET), false);
      assert.equal(fs.readFileSync(path.join(w.store, 'log.jsonl'), 'utf8').includes(SECRET), false);
      assert.ok(receiver.requests.every((q) => q.path === '/v1/logs' && q.contentType === 'application/x-protobuf'));
      assert.equal(receiver.requests[0]!.headers['x-team'], 'sec', 'the configured headers are sent');
    } finally {
      await receiver.stop();
    }
  });

  it('a receiver that never answers does not hold a call up', async () => {
    const receiver = new OtlpReceiver('hang');
    const url = await receiver.start();
    try {
      const w = exportingWorld({ endpoint: url });
      const r = await cliAsync(w, ['call', 'fx', SECRET]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /said hello/, 'the call returned its answer while the receiver held the export open');
      assert.ok(receiver.raw.length >= 1, 'the export reached the receiver, which never answered');
    } finally {
      await receiver.stop();
    }
  });

  it('records kept while the receiver was down arrive once it is back', async () => {
    const port = await freePort();
    const dir = tempDir();
    const log = new EventLog(dir, new Masker());
    const exp = new LogExport({
      endpoint: `http://127.0.0.1:${port}/v1/logs`,
      headers: {},
      firstRetryMs: 100,
      maxRetryMs: 200,
      delayMs: 20,
    });
    exp.attach(log);
    for (let i = 0; i < 5; i++) log.write({ kind: 'tool.call', server: 's', tool: `t${i}` });
    assert.ok(await until(() => exp.status().failing !== undefined, 30_000), 'the first send fails: nothing listens');
    assert.equal(exp.status().kept, 5);
    const receiver = new OtlpReceiver();
    await receiver.start(port);
    try {
      log.write({ kind: 'tool.call', server: 's', tool: 'after' });
      assert.ok(await until(() => receiver.records.length >= 6, 30_000), `got ${receiver.records.length}`);
      assert.deepEqual(
        receiver.records.map((r) => JSON.parse(r.body).tool),
        ['t0', 't1', 't2', 't3', 't4', 'after'],
      );
      assert.ok(await until(() => exp.status().kept === 0, 30_000), 'the receiver took them: none is kept');
      assert.equal(exp.status().failing, undefined);
      assert.equal(exp.status().dropped, 0);
    } finally {
      await exp.shutdown();
      await receiver.stop();
    }
  });

  it('a bad "logExport" is refused, naming the setting: not http(s), credentials in the URL', () => {
    const ftp = exportingWorld({ endpoint: 'ftp://collector.example/v1/logs' });
    const a = cli(ftp, ['doctor']);
    assert.match(
      a.stdout + a.stderr,
      /config\.json:\d+:\d+: "logExport": "endpoint" must be an http:\/\/ or https:\/\/ OTLP\/HTTP logs URL, not ftp:/,
    );
    const creds = exportingWorld({ endpoint: 'https://ops:hunter2pass@collector.example/v1/logs' });
    const b = cli(creds, ['doctor']);
    assert.match(b.stdout + b.stderr, /"logExport": "endpoint" carries credentials in the URL/);
    assert.doesNotMatch(b.stdout + b.stderr, /hunter2pass/);
    const unset = exportingWorld({ endpoint: 'http://127.0.0.1:9/v1/logs', headers: { authorization: '${env:OTLP_TOKEN}' } });
    const c = cli(unset, ['call', 'fx', SECRET]);
    assert.match(
      c.stderr,
      /the exchange log is not exported: .*"logExport"\."headers"\."authorization" reads \$\{env:OTLP_TOKEN\}, which is not set here/,
    );
  });
});
