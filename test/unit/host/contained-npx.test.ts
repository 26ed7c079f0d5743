// The real servers the project uses, launched as repositories declare them (`npx -y <package>`), still work
// inside the sandbox: approval pins each package (resolved on the public registry), and the locked tree runs from
// MCP Gate's package cache with the user's network rule and without it. The memory server keeps what it stored
// (next to its own code) from one start to the next.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, world } from '../helpers';

const SERVERS: Record<string, { pkg: string; args: string[]; tool: string }> = {
  everything: { pkg: '@modelcontextprotocol/server-everything', args: ['stdio'], tool: 'echo' },
  memory: { pkg: '@modelcontextprotocol/server-memory', args: [], tool: 'read_graph' },
  files: { pkg: '@modelcontextprotocol/server-filesystem', args: ['.'], tool: 'list_directory' },
};

describe('contained execution: real npx servers', function () {
  this.timeout(600_000);
  after(cleanupTemp);

  it('server-everything, server-memory and server-filesystem start contained from their approved locks, with and without network', async () => {
    const mcpServers = Object.fromEntries(Object.entries(SERVERS).map(([n, s]) => [n, { command: 'npx', args: ['-y', s.pkg, ...s.args] }]));
    // The registry as this machine reaches it (its proxy's CA included): the approving CLI resolves there.
    const reach = Object.fromEntries(
      ['NODE_EXTRA_CA_CERTS', 'npm_config_registry'].filter((k) => process.env[k]).map((k) => [k, process.env[k]!]),
    );
    const w = world({ '.mcp.json': JSON.stringify({ mcpServers }), 'notes.txt': 'hello\n' }, {}, { PATH: process.env.PATH!, ...reach });
    fs.mkdirSync(path.join(w.home, '.npm'));
    const config = (network: boolean) => {
      const rules = Object.keys(SERVERS).flatMap((n) => [
        { action: `mcp.${n}.tool.*`, decision: 'allow', project: w.project },
        ...(network ? [{ action: `mcp.${n}.network`, decision: 'allow', project: w.project }] : []),
      ]);
      const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify({ rules }));
    };
    // Approval resolves each package against the registry and installs its locked tree into MCP Gate's package
    // cache (src/trust/packages/npm-resolve.ts, in the package worker); every start then runs that tree, with or without the
    // network rule.
    for (const n of Object.keys(SERVERS)) {
      const r = cli(w, ['approve', n, '--yes']);
      assert.equal(r.code, 0, `approve ${n}: ${r.stdout}${r.stderr}`);
    }
    for (const network of [true, false]) {
      config(network);
      for (const [n, s] of Object.entries(SERVERS)) {
        const r = cli(w, ['tools', n]);
        assert.match(r.stdout, new RegExp(`\\b${s.tool}\\s+\\[allow\\]`), `${n} (network ${network}): ${r.stdout}${r.stderr}`);
      }
    }
    const listed = cli(w, ['call', 'files', 'list_directory', '--args', JSON.stringify({ path: '.' })]);
    assert.match(listed.stdout, /notes\.txt/, listed.stdout + listed.stderr);
    // The workspace is its data: writable (an npm launch pins nothing of the project), in a repository with
    // node_modules too, and the write re-gates nothing.
    fs.mkdirSync(path.join(w.project, 'node_modules', 'dep'), { recursive: true });
    fs.writeFileSync(path.join(w.project, 'node_modules', 'dep', 'index.js'), "require(require('path').join(__dirname, 'x'));\n");
    const wrote = cli(w, ['call', 'files', 'write_file', '--args', JSON.stringify({ path: 'written.txt', content: 'from the server\n' })]);
    assert.equal(wrote.code, 0, wrote.stdout + wrote.stderr);
    assert.equal(fs.readFileSync(path.join(w.project, 'written.txt'), 'utf8'), 'from the server\n');
    assert.match(cli(w, ['list']).stdout, /approved\s+repository\s+\.mcp\.json\s+files/);
    // A dependency added to the project's package.json is not what it runs either.
    fs.writeFileSync(path.join(w.project, 'package.json'), JSON.stringify({ name: 'app', dependencies: { dep: '*' } }));
    assert.match(cli(w, ['list']).stdout, /approved\s+repository\s+\.mcp\.json\s+files/);
    // The memory server writes next to its own code (dist/memory.jsonl): its private copy of its package folder keeps
    // what it stored for its next start, with no grant written by hand.
    const stored = cli(w, [
      'call',
      'memory',
      'create_entities',
      '--args',
      JSON.stringify({ entities: [{ name: 'gate-test-entity', entityType: 'note', observations: ['kept between starts'] }] }),
    ]);
    assert.equal(stored.code, 0, stored.stdout + stored.stderr);
    const read = cli(w, ['call', 'memory', 'read_graph']);
    assert.match(read.stdout, /gate-test-entity/, read.stdout + read.stderr);
    assert.match(read.stdout, /kept between starts/);
    // Pointed at a workspace file by its env (MEMORY_FILE_PATH), that file is its data: written, no re-gate, no EBUSY.
    const mcp = JSON.parse(fs.readFileSync(path.join(w.project, '.mcp.json'), 'utf8'));
    mcp.mcpServers.memory.env = { MEMORY_FILE_PATH: '${workspaceFolder}/memory.jsonl' };
    fs.writeFileSync(path.join(w.project, '.mcp.json'), JSON.stringify(mcp));
    assert.equal(cli(w, ['approve', 'memory', '--yes']).code, 0);
    const inWorkspace = cli(w, [
      'call',
      'memory',
      'create_entities',
      '--args',
      JSON.stringify({ entities: [{ name: 'in-workspace', entityType: 'note', observations: ['data'] }] }),
    ]);
    assert.equal(inWorkspace.code, 0, inWorkspace.stdout + inWorkspace.stderr);
    assert.match(fs.readFileSync(path.join(w.project, 'memory.jsonl'), 'utf8'), /in-workspace/);
    assert.match(cli(w, ['list']).stdout, /approved\s+repository\s+\.mcp\.json\s+memory/);
    assert.match(cli(w, ['call', 'memory', 'read_graph']).stdout, /in-workspace/);
    const log = fs.readFileSync(path.join(w.store, 'log.jsonl'), 'utf8');
    assert.match(log, /"kind":"server.start","server":"memory".*contained: /);
    assert.deepEqual(fs.readdirSync(path.join(w.home, '.npm')), [], "the user's own ~/.npm is never written by a contained server");
  });
});
