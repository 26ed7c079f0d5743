// The gate cache: an unchanged project is re-checked with stats only (no file reads); any change to a file the
// gate read, or the appearance of a path it looked for and found missing, recomputes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GateCache } from '../../../src/trust/gate';
import { ioCounters } from '../../../src/trust/sources/fsread';
import { recordDecision } from '../../../src/trust/approval/approvals';
import { cleanupTemp, world, writeFiles } from '../helpers';

function reads<T>(f: () => T): { value: T; reads: number } {
  const before = ioCounters.reads;
  const value = f();
  return { value, reads: ioCounters.reads - before };
}

describe('gate cache', () => {
  after(cleanupTemp);

  it('a warm re-check of an unchanged project reads no file', () => {
    const w = world({
      '.mcp.json': '{"mcpServers": {"a": {"command": "node", "args": ["s.js"]}}}',
      's.js': 'x',
      '.codex/config.toml': '[mcp_servers.t]\ncommand = "t"\n',
    });
    const cache = new GateCache();
    const cold = reads(() => cache.get(w.input));
    assert.ok(cold.reads >= 3, `cold read ${cold.reads}`);
    const warm = reads(() => cache.get(w.input));
    assert.equal(warm.reads, 0);
    assert.equal(warm.value, cold.value, 'same report object');
  });

  it('editing a referenced file recomputes', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"a": {"command": "node", "args": ["s.js"]}}}', 's.js': 'x' });
    const cache = new GateCache();
    const first = cache.get(w.input);
    writeFiles(w.project, { 's.js': 'y' });
    const second = cache.get(w.input);
    assert.notEqual(second, first);
    assert.notEqual(second.servers[0].pinned!.digest, first.servers[0].pinned!.digest);
  });

  it('creating a file that was missing recomputes (a new source appears)', () => {
    const w = world({});
    const cache = new GateCache();
    assert.equal(cache.get(w.input).servers.length, 0);
    writeFiles(w.project, { '.cursor/mcp.json': '{"mcpServers": {"new": {"command": "n"}}}' });
    assert.deepEqual(
      cache.get(w.input).servers.map((s) => s.name),
      ['new'],
    );
  });

  it('a user config created later is seen at once', () => {
    const w = world({});
    const cache = new GateCache();
    cache.get(w.input);
    writeFiles(w.home, { '.config/mcp-gate/config.json': '{"servers": {"u": {"command": "u"}}}' });
    assert.deepEqual(
      cache.get(w.input).servers.map((s) => s.state),
      ['trusted'],
    );
  });

  it('an approval written by another process is seen at once', async () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"a": {"command": "a"}}}' });
    const cache = new GateCache();
    assert.equal(cache.get(w.input).servers[0].state, 'pending');
    await recordDecision(w.input, 'a', undefined, 'approved');
    assert.equal(cache.get(w.input).servers[0].state, 'approved');
  });

  it('a file replaced with the same size and mtime but a new inode recomputes', () => {
    const w = world({ '.mcp.json': '{"mcpServers": {"a": {"command": "aaaa"}}}' });
    const cache = new GateCache();
    const first = cache.get(w.input);
    const file = path.join(w.project, '.mcp.json');
    const st = fs.statSync(file);
    const tmp = file + '.tmp';
    fs.writeFileSync(tmp, '{"mcpServers": {"a": {"command": "bbbb"}}}');
    fs.utimesSync(tmp, st.atime, st.mtime);
    fs.renameSync(tmp, file);
    assert.equal(cache.get(w.input).servers[0].definition!.command, 'bbbb');
    assert.notEqual(cache.get(w.input), first);
  });
});
