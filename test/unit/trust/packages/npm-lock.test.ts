// Pinned npm launches against a real registry on this machine (verdaccio): an approved `npx -y fixture-server`
// runs the exact tree approved, whatever the registry publishes later; `mcp-gate update` shows the new version
// and its file diff and switches only when approved; a tampered install or tarball is refused or repaired from
// verified bytes; a changed spec re-gates; with the registry stopped, an approved, cached package still starts.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, ROOT, tempDir, world, type World } from '../../helpers';
import { fixturePackage, startRegistry, type Registry } from '../../registry';

const MARKER = 'marker-1.0.1';

function walk(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

describe('pinned npm launches (verdaccio)', function () {
  this.timeout(300_000);
  let reg: Registry;
  let w: World;
  const packages = () => path.join(w.home, '.cache', 'mcp-gate', 'packages');
  const version = () => cli(w, ['call', 'fix', 'version']);

  before(async () => {
    reg = await startRegistry();
    reg.publish(fixturePackage('1.0.0'));
    w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server'] } } }) },
      {},
      { PATH: process.env.PATH!, npm_config_registry: reg.url },
    );
    const config = path.join(w.home, '.config', 'mcp-gate', 'config.json');
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.writeFileSync(
      config,
      JSON.stringify({ rules: [{ action: 'mcp.fix.tool.*', decision: 'allow', project: fs.realpathSync(w.project) }] }),
    );
  });
  after(async () => {
    await reg?.stop();
    cleanupTemp();
  });

  it('approval shows and records the exact version, integrity and tree; that version runs', () => {
    const before = cli(w, ['get', 'fix']);
    assert.match(before.stdout, /package\s+"fixture-server" \(npx\): pinned at approval to an exact version/);
    const a = cli(w, ['approve', 'fix', '--yes']);
    assert.equal(a.code, 0, a.stdout + a.stderr);
    assert.match(a.stdout, /package\s+fixture-server 1\.0\.0, sha512-\S+…, 0 dependencies, published less than an hour ago/);
    assert.match(
      a.stdout,
      new RegExp(
        `from ${reg.url.replace(/[.]/g, '\\.')}; runs fixture-server \\(node_modules/fixture-server/server\\.js\\) from MCP Gate's package cache`,
      ),
    );
    const record = JSON.parse(fs.readFileSync(path.join(w.store, 'approvals.json'), 'utf8')).records[0];
    assert.equal(record.lock.version, '1.0.0');
    assert.match(record.lock.integrity, /^sha512-/);
    assert.ok(record.lock.packages['node_modules/fixture-server'], 'the resolved tree is recorded');
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.0');
    const tools = cli(w, ['tools', 'fix']);
    assert.match(tools.stdout, /version\s+\[allow\]/, tools.stdout + tools.stderr);
  });

  it('a version published later under the same spec does not run, and does not re-gate', () => {
    reg.publish(fixturePackage('1.0.1', `require('fs').writeFileSync(require('path').join(process.cwd(), '${MARKER}'), 'ran');`));
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.0');
    assert.equal(fs.existsSync(path.join(w.project, MARKER)), false, '1.0.1 never ran');
    assert.match(cli(w, ['get', 'fix']).stdout, /state\s+approved/);
  });

  it('update shows 1.0.0 → 1.0.1 with the file diff; nothing changes until it is approved, then 1.0.1 runs', () => {
    const declined = cli(w, ['update', 'fix'], { input: 'no\n' });
    assert.equal(declined.code, 1, declined.stdout + declined.stderr);
    assert.match(declined.stdout, /version\s+fixture-server 1\.0\.0 → 1\.0\.1/);
    assert.match(declined.stdout, /~ package\.json/);
    assert.match(declined.stdout, /~ server\.js\n(.*\n)*\s+\+require\('fs'\)\.writeFileSync\(.*marker-1\.0\.1/);
    assert.match(declined.stdout, /keeps running fixture-server 1\.0\.0/);
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.0');
    const yes = cli(w, ['update', 'fix', '--yes']);
    assert.equal(yes.code, 0, yes.stdout + yes.stderr);
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.1');
    assert.equal(fs.existsSync(path.join(w.project, MARKER)), true, 'the approved 1.0.1 ran');
    assert.match(cli(w, ['update', 'fix']).stdout, /is up to date/);
  });

  it('an edited file in the installed tree is not run: the tree is installed again from verified tarballs', () => {
    const server = walk(path.join(packages(), 'trees')).find(
      (f) => f.endsWith('node_modules/fixture-server/server.js') && fs.readFileSync(f, 'utf8').includes(MARKER),
    )!;
    assert.ok(server, 'the 1.0.1 tree is in the package cache');
    fs.writeFileSync(server, fs.readFileSync(server, 'utf8').replace('`fixture-server ${version}`', "'tampered'"));
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.1');
    assert.doesNotMatch(fs.readFileSync(server, 'utf8'), /tampered/);
  });

  it('a tarball that fails its integrity check does not start, naming the server and the package', () => {
    const stored = path.join(reg.storage, 'fixture-server', 'fixture-server-1.0.1.tgz');
    const good = fs.readFileSync(stored);
    fs.copyFileSync(path.join(reg.storage, 'fixture-server', 'fixture-server-1.0.0.tgz'), stored); // the registry now serves other bytes
    for (const f of walk(path.join(packages(), '_cacache', 'content-v2'))) fs.writeFileSync(f, 'tampered'); // and the cached tarballs are damaged
    fs.rmSync(path.join(packages(), 'trees'), { recursive: true });
    const r = version();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /"fix" is not started: its approved package fixture-server@1\.0\.1 cannot be used: .*integrity/, r.stderr);
    assert.equal(
      fs.existsSync(path.join(packages(), 'trees')) && walk(path.join(packages(), 'trees')).some((f) => f.endsWith('server.js')),
      false,
      'nothing was installed',
    );
    fs.writeFileSync(stored, good);
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.1', 'with the right bytes back, it starts');
  });

  it('offline (registry stopped), the approved package still starts from the cache', async () => {
    await reg.stop();
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.1', 'from the installed tree');
    fs.rmSync(path.join(packages(), 'trees'), { recursive: true });
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.1', 'installed again from the cached, verified tarball');
    const update = cli(w, ['update', 'fix']);
    assert.equal(update.code, 1);
    assert.match(
      update.stderr,
      /"fix" \(\.mcp\.json\) cannot be approved: the package fixture-server cannot be resolved at http:\/\/127\.0\.0\.1:\d+\//,
    );
    await reg.restart();
  });

  it('a lock edited in the approval store, or a spec changed in the repository, re-gates', () => {
    const file = path.join(w.store, 'approvals.json');
    const saved = fs.readFileSync(file, 'utf8');
    const doc = JSON.parse(saved);
    doc.records[0].lock.version = '9.9.9';
    fs.writeFileSync(file, JSON.stringify(doc));
    assert.match(
      cli(w, ['get', 'fix']).stdout,
      /state\s+changed since approval: the package lock recorded with its approval does not match/,
    );
    assert.equal(version().code, 1);
    fs.writeFileSync(file, saved);
    fs.writeFileSync(
      path.join(w.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server@1.0.0'] } } }),
    );
    assert.match(cli(w, ['get', 'fix']).stdout, /state\s+changed since approval: its definition changed/);
    const r = version();
    assert.equal(r.code, 1);
    const again = cli(w, ['approve', 'fix', '--yes']);
    assert.match(again.stdout, /package\s+fixture-server 1\.0\.0, sha512-/, again.stderr);
    assert.equal(version().stdout.trim(), 'fixture-server 1.0.0');
  });

  it('update on a server changed since its approval shows the change first, and approving the update approves it', () => {
    fs.writeFileSync(
      path.join(w.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server@1.0.0'], env: { FIX_MODE: 'on' } } } }),
    );
    assert.match(cli(w, ['get', 'fix']).stdout, /state\s+changed since approval: its definition changed/);
    const declined = cli(w, ['update', 'fix'], { input: 'no\n' });
    assert.equal(declined.code, 1, declined.stdout + declined.stderr);
    assert.match(declined.stdout, /changed since approval:[\s\S]*FIX_MODE[\s\S]*\n {2}approved {2}fixture-server 1\.0\.0, sha512-\S+…/);
    assert.match(declined.stdout, /not approved; "fix" keeps running fixture-server 1\.0\.0/);
    assert.match(cli(w, ['get', 'fix']).stdout, /state\s+changed since approval/);
    const yes = cli(w, ['update', 'fix', '--yes']);
    assert.equal(yes.code, 0, yes.stdout + yes.stderr);
    assert.match(cli(w, ['get', 'fix']).stdout, /state\s+approved/);
  });

  it('a minimum release age in user scope refuses versions younger than it; an invalid one refuses every npm approval', () => {
    const w2 = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server'] } } }) },
      {},
      { PATH: process.env.PATH!, npm_config_registry: reg.url },
    );
    const config = path.join(w2.home, '.config', 'mcp-gate', 'config.json');
    fs.mkdirSync(path.dirname(config), { recursive: true });
    fs.writeFileSync(config, JSON.stringify({ packages: { minReleaseAgeDays: 2 } }));
    const young = cli(w2, ['approve', 'fix', '--yes']);
    assert.equal(young.code, 1);
    assert.match(
      young.stderr,
      /"fix" \(\.mcp\.json\) cannot be approved: the package fixture-server published at least 2 days ago \(the minimum release age\) cannot be resolved at .*\(the minimum release age of 2 days is set in .*config\.json\)/,
    );
    fs.writeFileSync(config, JSON.stringify({ packages: { minReleaseAgeDays: 'soon' } }));
    const bad = cli(w2, ['approve', 'fix', '--yes']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /"packages" in .*config\.json must be \{ "minReleaseAgeDays"/);
    assert.equal(fs.existsSync(path.join(w2.store, 'approvals.json')), false, 'nothing was approved');
  });
});
