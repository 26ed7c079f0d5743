// Which package a launcher command line downloads, and whether MCP Gate pins it (src/trust/packages.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { evaluateGate } from '../../../src/trust/gate';
import { NOT_PINNED, packageLaunchOf } from '../../../src/trust/packages';
import { ApprovalStore } from '../../../src/trust/store';
import { cleanupTemp, world } from '../helpers';

describe('package launchers', () => {
  it('reads the npm spec, command and arguments of npx, npm exec, pnpm dlx, yarn dlx and bunx', () => {
    assert.deepEqual(packageLaunchOf('npx', ['-y', '@scope/srv@^1', '--port', '1']), { kind: 'npm', launcher: 'npx', spec: '@scope/srv@^1', name: '@scope/srv', command: undefined, rest: ['--port', '1'] });
    assert.deepEqual(packageLaunchOf('/usr/bin/npm', ['exec', '--yes', '--package=pkg@2', '--', 'tool', 'a']), { kind: 'npm', launcher: 'npm exec', spec: 'pkg@2', name: 'pkg', command: 'tool', rest: ['a'] });
    assert.equal((packageLaunchOf('pnpm', ['dlx', 'srv']) as { spec: string }).spec, 'srv');
    assert.equal((packageLaunchOf('yarn', ['dlx', '-p', 'srv', 'cmd']) as { command: string }).command, 'cmd');
    assert.equal((packageLaunchOf('bunx', ['srv@latest']) as { spec: string }).spec, 'srv@latest');
    assert.equal(packageLaunchOf('node', ['server.js']), undefined);
    assert.equal(packageLaunchOf('npm', ['run', 'start']), undefined);
  });

  it('says "not pinned" and why for what it cannot pin — never silently', () => {
    const cases: [string, string[], RegExp][] = [
      ['npx', ['-y', 'github:someone/srv'], /git spec, not a package from the registry/],
      ['npx', ['--registry', 'https://evil.example', 'srv'], /the option --registry is not one MCP Gate models/],
      ['npx', ['-y', './local'], /directory spec/],
      ['uvx', ['mcp-server-fetch'], /PyPI package run by uv/],
      ['uv', ['tool', 'run', 'mcp-server-git'], /PyPI/],
      ['pipx', ['run', 'srv'], /pipx/],
      ['docker', ['run', '-i', '--rm', 'mcp/fetch:latest'], /an image tag can be moved/],
      ['env', ['FOO=1', 'npx', '-y', 'srv'], /not one started through env/],
    ];
    for (const [cmd, args, why] of cases) {
      const p = packageLaunchOf(cmd, args);
      assert.equal(p?.kind, 'unpinned', `${cmd} ${args.join(' ')}`);
      assert.ok(p!.kind === 'unpinned' && p.why.startsWith(NOT_PINNED) && why.test(p.why), `${cmd} ${args.join(' ')}: ${p && 'why' in p ? p.why : ''}`);
    }
    assert.equal(packageLaunchOf('docker', ['run', '-i', `mcp/fetch@sha256:${'a'.repeat(64)}`]), undefined, 'an image by digest is pinned by the definition itself');
  });
});

describe('approvals of npm launches without a lock', () => {
  after(cleanupTemp);
  it('an approval recorded before packages were pinned shows as changed, asking to approve again', async () => {
    const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { srv: { command: 'npx', args: ['-y', 'some-server@^1'] } } }) }, {}, { PATH: process.env.PATH! });
    const s = evaluateGate(w.input).servers[0];
    await new ApprovalStore(w.store, w.input.masker).update((records) => ({
      records: [...records, { project: fs.realpathSync(w.project), source: '.mcp.json', server: 'srv', decision: 'approved', digest: s.pinned!.digest, pinned: s.pinned!.pinned, texts: {}, decidedAt: '2026-01-01T00:00:00.000Z' }],
      result: undefined,
    }));
    const after = evaluateGate(w.input).servers[0];
    assert.equal(after.state, 'approval-changed');
    assert.match(after.reason, /before MCP Gate pinned the packages a server downloads: approve it again to pin some-server@\^1 to an exact version/);
  });
});
