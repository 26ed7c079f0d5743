// A contained server's private cache folder is named by the server's one key (src/trust/approval/server-ref.ts):
// one per repository server and project, one per user server wherever it runs; a folder named by the key of
// earlier releases is moved to the new name at the next start, so its packages are kept.
import { decideStart } from '../../../../src/policy/start';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startPlan } from '../../../../src/host/sandbox/contain';
import { serverCacheDir } from '../../../../src/host/sandbox/server-folders';
import { loadUserPolicy } from '../../../../src/policy/user-policy';
import { serverKey } from '../../../../src/trust/approval/server-ref';
import { evaluateGate } from '../../../../src/trust/gate';
import type { NpmOps } from '../../../../src/trust/packages/npm-lock';
import { cleanupTemp, tempDir, world } from '../../helpers';

const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 20);

describe('sandbox cache folders: named by the one key', () => {
  after(cleanupTemp);

  it('derive from serverKey: per project for a repository server, one for a user server', () => {
    const env = { XDG_CACHE_HOME: '/c' };
    assert.equal(
      serverCacheDir('/h', env, { name: 's', scope: 'repository', project: '/p' }, '.mcp.json'),
      `/c/mcp-gate/sandbox/s-${sha(serverKey({ folder: '/p', source: '.mcp.json', name: 's' }))}`,
    );
    assert.notEqual(
      serverCacheDir('/h', env, { name: 's', scope: 'repository', project: '/p' }, '.mcp.json'),
      serverCacheDir('/h', env, { name: 's', scope: 'repository', project: '/q' }, '.mcp.json'),
    );
    assert.equal(
      serverCacheDir('/h', {}, { name: 's', scope: 'user' }, '~/.claude.json'),
      `/h/.cache/mcp-gate/sandbox/s-${sha(serverKey({ folder: '', source: '~/.claude.json', name: 's' }))}`,
    );
  });

  it('a folder of the earlier name is moved at the next start, with what it holds', async () => {
    const w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node', args: ['s.js'] } } }), 's.js': '1' },
      {},
      { PATH: process.env.PATH! },
    );
    const report = evaluateGate(w.input);
    const server = report.servers[0];
    const who = { name: 's', scope: 'repository' as const, project: report.project };
    const hostEnv = { XDG_CACHE_HOME: tempDir('mcp-gate-cache-') };
    const old = path.join(hostEnv.XDG_CACHE_HOME, 'mcp-gate', 'sandbox', `s-${sha(`repository\0${report.project}\0.mcp.json\0s`)}`);
    fs.mkdirSync(path.join(old, 'npm'), { recursive: true });
    fs.writeFileSync(path.join(old, 'npm', 'kept'), 'package');
    const plan = await startPlan({
      server,
      who,
      project: report.project,
      plan: { ...server.pinned!.plan!, executable: server.pinned!.plan!.executable! },
      env: {},
      decision: decideStart(loadUserPolicy({ file: 'config.json' }), who, w.home),
      home: w.home,
      hostEnv,
      npm: {} as NpmOps,
      probe: () => ({ ok: true, bwrap: '/usr/bin/bwrap', version: '0.8.0', userns: false, prlimit: '/usr/bin/prlimit' }),
    });
    plan.cleanup();
    const now = serverCacheDir(w.home, hostEnv, who, '.mcp.json');
    assert.equal(fs.readFileSync(path.join(now, 'npm', 'kept'), 'utf8'), 'package');
    assert.ok(!fs.existsSync(old));
  });
});
