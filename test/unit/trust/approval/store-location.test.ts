// Where the CLI finds the approval store (src/trust/approval/store-location.ts): the extension's folder that holds
// approvals wins over one that only exists; with several, the newest, and doctor names the others with the
// variable that picks one. And what a person reads when the approvals are in another folder's name (a moved clone).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findStoreDir, EXTENSION_ID } from '../../../../src/trust/approval/store-location';
import { STORE_FILE } from '../../../../src/trust/approval/store';
import { cleanupTemp, cli, tempDir, world } from '../../helpers';

const MCP = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers }, null, 2);

describe('the approval store the CLI reads', () => {
  after(cleanupTemp);
  const machine = (home: string) => ({ home, env: { HOME: home } as Record<string, string | undefined>, platform: 'linux' as const });
  const vscodeDir = (home: string) => path.join(home, '.config', 'Code', 'User', 'globalStorage', EXTENSION_ID);
  const codeServerDir = (home: string) => path.join(home, '.local', 'share', 'code-server', 'User', 'globalStorage', EXTENSION_ID);
  const withApprovals = (dir: string, mtime: number) => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, STORE_FILE), '{"version":1,"records":[]}');
    fs.utimesSync(path.join(dir, STORE_FILE), mtime, mtime);
  };

  it("none exists: VS Code's folder, to be created on the first decision", () => {
    const home = tempDir();
    assert.deepEqual(findStoreDir(machine(home)), { dir: vscodeDir(home), how: 'default', others: [] });
  });

  it("a folder the CLI only created (VS Code's) does not hide code-server's, which holds the approvals", () => {
    const home = tempDir();
    fs.mkdirSync(vscodeDir(home), { recursive: true });
    withApprovals(codeServerDir(home), 1_700_000_000);
    assert.deepEqual(findStoreDir(machine(home)), { dir: codeServerDir(home), how: 'found', others: [] });
  });

  it('two that hold approvals: the newest is read, the other named; --store and MCP_GATE_STORE decide before either', () => {
    const home = tempDir();
    withApprovals(vscodeDir(home), 1_700_000_000);
    withApprovals(codeServerDir(home), 1_800_000_000);
    assert.deepEqual(findStoreDir(machine(home)), { dir: codeServerDir(home), how: 'found', others: [vscodeDir(home)] });
    const m = machine(home);
    m.env.MCP_GATE_STORE = vscodeDir(home);
    assert.deepEqual(findStoreDir(m), { dir: vscodeDir(home), how: 'env', others: [] });
    assert.deepEqual(findStoreDir(m, '/elsewhere'), { dir: '/elsewhere', how: 'flag', others: [] });
  });

  it('doctor says which store it reads in words, and warns of another holding approvals with the line that picks it', () => {
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['s.js'] } }), 's.js': '1' });
    withApprovals(vscodeDir(w.home), 1_700_000_000);
    withApprovals(codeServerDir(w.home), 1_800_000_000);
    const r = cli(w, ['doctor'], { env: { MCP_GATE_STORE: '' } });
    assert.match(
      r.stdout,
      new RegExp(
        `store\\s+${codeServerDir(w.home).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/approvals\\.json \\(the MCP Gate extension's store; readable\\)`,
      ),
    );
    assert.match(
      r.stdout,
      /WARNING\s+another MCP Gate store holds approvals: \S+\/\.config\/Code\/User\/globalStorage\/mcp-gate\.mcp-gate — those are not seen here; to use it instead: export MCP_GATE_STORE=\S+Code\S+/,
    );
    const fresh = world();
    assert.match(cli(fresh, ['doctor']).stdout, /\(chosen by MCP_GATE_STORE; nothing decided yet\)/);
  });

  it('a clone moved after approval: "never decided in this folder", with where and when it was approved', () => {
    const w = world({ '.mcp.json': MCP({ s: { command: 'node', args: ['s.js'] } }), 's.js': '1' });
    assert.equal(cli(w, ['approve', 's', '--yes']).code, 0);
    const moved = `${w.project}-moved`;
    fs.renameSync(w.project, moved);
    const r = cli({ ...w, project: moved }, ['doctor']);
    assert.match(
      r.stdout,
      /never decided in this folder — it was approved on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC in \S+\/project \(the same definition and files\), which no longer exists \(moved\?\); approvals belong to the folder they were made in, so review it here/,
    );
    fs.cpSync(moved, w.project, { recursive: true });
    assert.match(cli({ ...w, project: moved }, ['list', '--json']).stdout, /another copy of the repository\?/);
  });
});
