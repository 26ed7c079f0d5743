// Full blocks that must hold: each tool's settings judged as that tool reads them (another tool's file cannot
// switch the prefix back on), a source that is a symbolic link that cannot be resolved, and an approval store
// whose real path is inside the project however it is spelled. Checked in-process and with the built CLI.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evaluateGate } from '../../../src/trust/gate';
import { cleanupTemp, cli, world } from '../helpers';

const SERVERS = '"mcpServers": {"p": {"command": "node"}}';

describe('full block: direct tools judged per tool', () => {
  after(cleanupTemp);

  it('.pi/mcp.json exposes unprefixed direct tools; .agentty/mcp.json setting toolPrefix "server" does not clear it', () => {
    const w = world({
      '.pi/mcp.json': `{"settings": {"directTools": true, "toolPrefix": "none"}, ${SERVERS}}`,
      '.agentty/mcp.json': '{"settings": {"toolPrefix": "server"}}',
    });
    const r = evaluateGate(w.input);
    assert.equal(r.fullBlock.length, 1, JSON.stringify(r.fullBlock));
    assert.match(r.fullBlock[0].reason, /toolPrefix "none" \(pi's settings: \.pi\/mcp\.json\)/);
    assert.deepEqual(r.fullBlock[0].files, [path.join(r.project, '.pi/mcp.json')]);
    assert.ok(r.servers.every((s) => s.state === 'blocked'));
  });

  it('the other way round: .agentty/mcp.json unsafe, .pi/mcp.json and MCP Gate\'s config set "server"', () => {
    const w = world(
      {
        '.agentty/mcp.json': '{"settings": {"directTools": ["search"], "toolPrefix": "none"}}',
        '.pi/mcp.json': '{"settings": {"toolPrefix": "server"}}',
      },
      { '.config/mcp-gate/config.json': '{"settings": {"toolPrefix": "server"}}' },
    );
    const r = evaluateGate(w.input);
    const agentty = path.join(r.project, '.agentty/mcp.json');
    assert.ok(
      r.fullBlock.some((b) => b.files.length === 1 && b.files[0] === agentty),
      JSON.stringify(r.fullBlock),
    );
    assert.ok(r.fullBlock.every((b) => b.files.includes(agentty)));
  });

  it('the CLI: list exits 1 and names the file', () => {
    const w = world({
      '.pi/mcp.json': `{"settings": {"directTools": true, "toolPrefix": "none"}, ${SERVERS}}`,
      '.agentty/mcp.json': '{"settings": {"toolPrefix": "server"}}',
    });
    const r = cli(w, ['list']);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /BLOCKED: direct tools are exposed with toolPrefix "none" \(pi's settings: \.pi\/mcp\.json\)[^\n]*\n\s+files: .*\.pi\/mcp\.json/,
    );
  });

  it('a repository tool that sets "server" for its own direct tools is not blocked by MCP Gate\'s own "none"', () => {
    const w = world(
      { '.pi/mcp.json': '{"settings": {"directTools": true, "toolPrefix": "server"}}' },
      { '.config/mcp-gate/config.json': '{"settings": {"toolPrefix": "none"}}' },
    );
    assert.deepEqual(evaluateGate(w.input).fullBlock, []);
  });
});

describe('full block: a source that is a symbolic link that cannot be resolved', () => {
  after(cleanupTemp);

  const cases: [string, string, (project: string) => string, RegExp][] = [
    ['dangling', '.mcp.json', () => 'nowhere.json', /\.mcp\.json: is a symbolic link that cannot be resolved \(.*nowhere\.json: ENOENT\)/],
    [
      'to /proc/self/cwd/x.json',
      '.cursor/mcp.json',
      () => '/proc/self/cwd/x.json',
      /\.cursor\/mcp\.json: is a symbolic link to \/proc\/self\/cwd\/x\.json, which names a different file for every process/,
    ],
    [
      'a loop',
      '.vscode/mcp.json',
      (p) => path.join(p, '.vscode', 'mcp.json'),
      /\.vscode\/mcp\.json: is a symbolic link that cannot be resolved \(a loop\)/,
    ],
  ];
  for (const [what, file, target, message] of cases) {
    it(`${what}: list exits 1 naming ${file}`, () => {
      const w = world({ '.mcp.json.ok': '{}', 'x.json': `{${SERVERS}}` });
      fs.mkdirSync(path.join(w.project, path.dirname(file)), { recursive: true });
      fs.symlinkSync(target(w.project), path.join(w.project, file));
      const r = cli(w, ['list']);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stdout, new RegExp(`BLOCKED: repository source ${file.replace(/[./]/g, '\\$&')} exists but cannot be used`));
      assert.match(r.stdout, message);
      const j = cli(w, ['list', '--json']);
      assert.equal(j.code, 1);
      assert.equal(JSON.parse(j.stdout).blocked, true);
    });
  }

  it('a link to a regular file inside the project is read as that file', () => {
    const w = world({ 'real.json': `{${SERVERS}}` });
    fs.symlinkSync('real.json', path.join(w.project, '.mcp.json'));
    const r = evaluateGate(w.input);
    assert.deepEqual(r.fullBlock, []);
    assert.deepEqual(
      r.servers.map((s) => s.name),
      ['p'],
    );
  });
});

describe('full block: an approval store whose real path is inside the project', () => {
  after(cleanupTemp);

  // The CLI resolves --store and MCP_GATE_STORE lexically (path.resolve) and writes there; the gate judges the
  // real path of what it is given, as the file system resolves it (a `..` after a link is the link target's).
  const spellings: [string, (project: string, base: string) => string, boolean?][] = [
    [
      'a symbolic link outside that points inside',
      (p, base) => {
        fs.mkdirSync(path.join(p, '.approvals'), { recursive: true });
        fs.symlinkSync(path.join(p, '.approvals'), path.join(base, 'store-link'));
        return path.join(base, 'store-link');
      },
    ],
    [
      'a link outside to a folder inside, then ..',
      (p, base) => {
        fs.mkdirSync(path.join(p, 'sub', 'deeper'), { recursive: true });
        fs.symlinkSync(path.join(p, 'sub', 'deeper'), path.join(base, 'deep-link'));
        return `${path.join(base, 'deep-link')}/../not-yet/store`;
      },
      false,
    ],
    ['a .. spelling that only looks outside', (p) => `${p}/sub/../../${path.basename(p)}/.store`],
    [
      'a dangling link that points inside',
      (p, base) => {
        fs.symlinkSync(path.join(p, 'will-exist'), path.join(base, 'dangling-store'));
        return path.join(base, 'dangling-store');
      },
    ],
  ];
  for (const [what, make, viaCli = true] of spellings) {
    it(`${what}: ${viaCli ? '--store and MCP_GATE_STORE are' : 'the store folder given to the gate is'} a full block`, () => {
      const w = world({ '.mcp.json': `{${SERVERS}}` });
      const store = make(w.project, path.dirname(w.project));
      const r = evaluateGate({ ...w.input, storeDir: store });
      assert.equal(r.fullBlock.length, 1);
      assert.match(r.fullBlock[0].reason, /the approval store .* is inside the project/);
      assert.equal(r.servers[0].state, 'blocked');
      if (!viaCli) return;
      const flag = cli(w, ['list', '--store', store]);
      assert.equal(flag.code, 1, flag.stdout);
      assert.match(flag.stdout, /BLOCKED: the approval store .* is inside the project/);
      const env = cli({ ...w, store }, ['list']);
      assert.equal(env.code, 1, env.stdout);
    });
  }

  it('a store outside the project, reached through a link, is fine', () => {
    const w = world({ '.mcp.json': `{${SERVERS}}` });
    const outside = path.join(path.dirname(w.project), 'real-store');
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(path.dirname(w.project), 'store-alias'));
    assert.deepEqual(evaluateGate({ ...w.input, storeDir: path.join(path.dirname(w.project), 'store-alias') }).fullBlock, []);
  });
});
