// The administrator's layer (issue 27 item 1, first fields) through the real CLI. The file's path is fixed
// (/etc/mcp-gate/policy.json) and nothing points MCP Gate elsewhere, so each CLI run here gets its own
// /etc/mcp-gate: bubblewrap binds a test folder there for that one process (the machine's /etc is not written,
// except for the empty mount point bubblewrap needs, removed after). For each field a user's configuration that
// tries to loosen it: an administrator's deny beats the user's allow (explain names the layer, a call is refused),
// an administrator's allow grants nothing by itself, a blocked server stays blocked after the user approves it
// (by name, and by digest only that definition), the escape hatch switched off, and a file that is not root's,
// is writable by others, or does not parse blocks every repository server with the reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI, cleanupTemp, ROOT, tempDir, world, type World } from '../helpers';
import { fixturePackage, startRegistry } from '../registry';

const ADMIN_DIR = '/etc/mcp-gate';
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const PROBE = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'probe-server.js');

describe("CLI: the administrator's layer (/etc/mcp-gate/policy.json)", function () {
  this.timeout(120_000);
  const madeMountPoint = !fs.existsSync(ADMIN_DIR);
  after(() => {
    if (madeMountPoint) fs.rmSync(ADMIN_DIR, { recursive: true, force: true });
    cleanupTemp();
  });

  /** A folder to stand in for /etc/mcp-gate, holding `policy` (a value, or raw text). */
  function adminDir(policy: unknown): string {
    const d = tempDir();
    fs.chmodSync(d, 0o755);
    fs.writeFileSync(path.join(d, 'policy.json'), typeof policy === 'string' ? policy : JSON.stringify(policy, null, 2), { mode: 0o644 });
    return d;
  }

  /** The CLI with `admin` as its /etc/mcp-gate (or the machine's own when undefined). */
  function cliAdmin(w: World, admin: string | undefined, args: string[], env: Record<string, string> = {}) {
    const e: Record<string, string> = { PATH: process.env.PATH ?? '', MCP_GATE_STORE: w.store };
    for (const [k, v] of Object.entries({ ...w.env, ...env })) if (v !== undefined) e[k] = v;
    const cmd = [process.execPath, CLI, ...args, '--project', w.project];
    const r =
      admin === undefined
        ? spawnSync(cmd[0], cmd.slice(1), { env: e, encoding: 'utf8', timeout: 60_000 })
        : spawnSync('bwrap', ['--dev-bind', '/', '/', '--bind', admin, ADMIN_DIR, '--', ...cmd], {
            env: e,
            encoding: 'utf8',
            timeout: 60_000,
          });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  function userConfig(w: World, config: Record<string, unknown>): void {
    const file = path.join(w.home, '.config', 'mcp-gate', 'config.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(config));
  }

  const everythingUser = (w: World) =>
    userConfig(w, {
      servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      rules: [{ action: 'mcp.everything.tool.*', decision: 'allow' }],
    });

  it("an administrator's deny beats the user's allow: explain names the layer, the call is refused and logged", () => {
    const w = world();
    everythingUser(w);
    const admin = adminDir({ rules: [{ action: 'mcp.everything.tool.get-env', decision: 'deny' }] });
    const ex = cliAdmin(w, admin, ['explain', 'mcp.everything.tool.get-env']);
    assert.equal(ex.code, 1, ex.stdout);
    assert.match(ex.stdout, /^decision: deny$/m);
    assert.match(
      ex.stdout,
      /^rule: \{"action":"mcp\.everything\.tool\.get-env","decision":"deny"\} from \/etc\/mcp-gate\/policy\.json:\d+ \(rules\[0\]\)$/m,
    );
    assert.match(ex.stdout, /^layer: the administrator's \(a user's rule cannot loosen it\)$/m);
    assert.match(ex.stdout, /^also matches: \{"action":"mcp\.everything\.tool\.\*","decision":"allow"\}/m);
    const call = cliAdmin(w, admin, ['call', 'everything', 'get-env']);
    assert.equal(call.code, 1);
    assert.match(
      call.stderr,
      /refused: mcp\.everything\.tool\.get-env is denied by the administrator's rule .*\/etc\/mcp-gate\/policy\.json.*a user's rule cannot loosen it/,
    );
    const echo = cliAdmin(w, admin, ['call', 'everything', 'echo', '--args', '{"message":"hi"}']);
    assert.equal(echo.code, 0, echo.stderr);
    assert.match(echo.stdout, /Echo: hi/);
    // the same user configuration without the administrator's layer: allowed
    assert.equal(cliAdmin(w, undefined, ['explain', 'mcp.everything.tool.get-env']).code, 0);
    const doctor = cliAdmin(w, admin, ['doctor']);
    assert.match(
      doctor.stdout,
      /^admin +\/etc\/mcp-gate\/policy\.json in force: 1 rule that your rules cannot loosen, 0 blocked servers, escape hatch allowed$/m,
    );
  });

  it("an administrator's allow grants nothing by itself; a more specific user allow does not loosen an administrator's wildcard deny", () => {
    const w = world();
    userConfig(w, { servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } });
    const grant = adminDir({ rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }] });
    assert.match(cliAdmin(w, grant, ['explain', 'mcp.everything.tool.echo']).stdout, /^decision: deny$/m);
    userConfig(w, {
      servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      rules: [{ action: 'mcp.everything.tool.echo', decision: 'allow' }],
    });
    const wide = adminDir({ rules: [{ action: 'mcp.everything.*', decision: 'deny' }] });
    const r = cliAdmin(w, wide, ['explain', 'mcp.everything.tool.echo']);
    assert.match(r.stdout, /^decision: deny$/m);
    assert.match(r.stdout, /^layer: the administrator's/m);
    const ask = adminDir({ rules: [{ action: 'mcp.everything.tool.echo', decision: 'ask' }] });
    assert.match(cliAdmin(w, ask, ['explain', 'mcp.everything.tool.echo']).stdout, /^decision: ask$/m);
  });

  it('blockedServers: by name every server of it stays blocked, also after the user approves it; by digest only that definition', () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { probe: { command: 'node', args: ['srv/probe-server.js'] } } }),
      'srv/probe-server.js': fs.readFileSync(PROBE, 'utf8'),
    });
    assert.equal(cliAdmin(w, undefined, ['approve', 'probe', '--yes']).code, 0);
    const byName = adminDir({ blockedServers: [{ server: 'probe', why: 'not on our list' }] });
    const list = cliAdmin(w, byName, ['list']);
    assert.match(list.stdout, /^blocked\s+repository\s+\.mcp\.json\s+probe/m);
    const get = cliAdmin(w, byName, ['get', 'probe']);
    assert.match(
      get.stdout,
      /blocked by the administrator's policy \/etc\/mcp-gate\/policy\.json, which blocks every server named "probe": not on our list/,
    );
    const approve = cliAdmin(w, byName, ['approve', 'probe', '--yes']);
    assert.equal(approve.code, 1);
    assert.match(approve.stderr, /"probe" is blocked: blocked by the administrator's policy/);
    assert.equal(cliAdmin(w, byName, ['check']).code, 32);
    const digest =
      /at (sha256:[0-9a-f]{64})/.exec(
        cliAdmin(w, undefined, ['approve', 'probe', '--yes']).stdout + cliAdmin(w, undefined, ['get', 'probe']).stdout,
      )?.[1] ?? /(sha256:[0-9a-f]{64})/.exec(cliAdmin(w, undefined, ['get', 'probe']).stdout)![1];
    const byDigest = adminDir({ blockedServers: [{ server: 'probe', digest }] });
    assert.match(cliAdmin(w, byDigest, ['list']).stdout, /^blocked\s+repository/m);
    fs.appendFileSync(path.join(w.project, 'srv', 'probe-server.js'), '\n// another definition\n');
    assert.match(cliAdmin(w, byDigest, ['list']).stdout, /^changed since approval\s+repository/m, 'another digest is not that block');
    const user = world();
    everythingUser(user);
    assert.match(cliAdmin(user, byName, ['list']).stdout, /^trusted/m, 'a block names a server: "everything" is not "probe"');
    const userBlocked = adminDir({ blockedServers: [{ server: 'everything' }] });
    assert.match(cliAdmin(user, userBlocked, ['list']).stdout, /^blocked\s+user/m, 'a user-scope server of a blocked name is blocked too');
  });

  it('"logExport": the administrator\'s target is used, not the user\'s; doctor names the layer and never a header value', () => {
    const w = world({ 'README.md': 'x\n' });
    userConfig(w, { logExport: { endpoint: 'http://127.0.0.1:9/user/v1/logs', headers: { 'x-user': 'user-secret' } } });
    const mine = cliAdmin(w, undefined, ['doctor']);
    assert.match(
      mine.stdout,
      /^log export {3}http:\/\/127\.0\.0\.1:9\/user\/v1\/logs, headers x-user \(your configuration \S+config\.json\)$/m,
    );
    const admin = adminDir({
      logExport: { endpoint: 'https://collector.example:4318/v1/logs?token=abc', headers: { authorization: 'admin-secret' } },
    });
    const r = cliAdmin(w, admin, ['doctor']);
    assert.match(
      r.stdout,
      /^log export {3}https:\/\/collector\.example:4318\/v1\/logs, headers authorization \(the administrator's policy \/etc\/mcp-gate\/policy\.json decides; a user's "logExport" is not used\)$/m,
    );
    for (const secret of ['admin-secret', 'user-secret', 'token=abc']) assert.ok(!r.stdout.includes(secret), `${secret} shown`);
    // a header read from the environment that is not set here: doctor says the log is not exported from here, and why
    const envHeader = adminDir({
      logExport: { endpoint: 'https://collector.example/v1/logs', headers: { authorization: '${env:OTEL_TOKEN}' } },
    });
    assert.match(
      cliAdmin(w, envHeader, ['doctor']).stdout,
      /^ +not exported from here: \/etc\/mcp-gate\/policy\.json: "logExport"\."headers"\."authorization" reads \$\{env:OTEL_TOKEN\}, which is not set here$/m,
    );
    assert.doesNotMatch(cliAdmin(w, envHeader, ['doctor'], { OTEL_TOKEN: 'set' }).stdout, /not exported from here/);
    const j = JSON.parse(cliAdmin(w, admin, ['doctor', '--json']).stdout) as { logExport?: { layer: string; endpoint: string } };
    assert.equal(j.logExport?.layer, 'admin', 'the JSON names the layer too');
  });

  it('"escapeHatch": false: MCP_GATE_ALLOW_PROJECT=1 trusts nothing, and doctor says why', () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { probe: { command: 'node', args: ['srv/probe-server.js'] } } }),
      'srv/probe-server.js': fs.readFileSync(PROBE, 'utf8'),
    });
    assert.match(
      cliAdmin(w, undefined, ['list'], { MCP_GATE_ALLOW_PROJECT: '1' }).stdout,
      /^approved by MCP_GATE_ALLOW_PROJECT\s+repository/m,
      'the escape hatch works without the layer',
    );
    const off = adminDir({ escapeHatch: false });
    assert.match(cliAdmin(w, off, ['list'], { MCP_GATE_ALLOW_PROJECT: '1' }).stdout, /^waiting for review\s+repository/m);
    const doctor = cliAdmin(w, off, ['doctor'], { MCP_GATE_ALLOW_PROJECT: '1' });
    assert.match(
      doctor.stdout,
      /^note +MCP_GATE_ALLOW_PROJECT=1 is ignored: the administrator's policy \/etc\/mcp-gate\/policy\.json turns the escape hatch off$/m,
    );
    assert.doesNotMatch(doctor.stdout, /every repository server is trusted without review/);
  });

  it("a file that is not root's, is writable by others, is a link, or does not parse: every repository server blocked, with the reason", () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { probe: { command: 'node', args: ['srv/probe-server.js'] } } }),
      'srv/probe-server.js': fs.readFileSync(PROBE, 'utf8'),
    });
    assert.equal(cliAdmin(w, undefined, ['approve', 'probe', '--yes']).code, 0);
    const notRoot = adminDir({});
    fs.chownSync(path.join(notRoot, 'policy.json'), 65534, 65534);
    const writable = adminDir({});
    fs.chmodSync(path.join(writable, 'policy.json'), 0o666);
    const folderWritable = adminDir({});
    fs.chmodSync(folderWritable, 0o777);
    const broken = adminDir('{ "rules": [ ');
    const unknown = adminDir({ rules: [], network: { off: true } });
    const badRegistry = adminDir({ packages: { registries: ['ftp://mirror.example/npm/'] } });
    const badSandbox = adminDir({ sandbox: { required: 'yes' } });
    const badRule = adminDir({ rules: [{ action: 'mcp.x.tool.y', decision: 'maybe' }] });
    const link = tempDir();
    fs.chmodSync(link, 0o755);
    fs.symlinkSync(path.join(adminDir({}), 'policy.json'), path.join(link, 'policy.json'));
    const cases: [string, string, RegExp][] = [
      ['owned by nobody', notRoot, /policy\.json is owned by uid 65534, not root/],
      ['writable by everyone', writable, /policy\.json is writable by everyone \(mode 666\)/],
      ['its folder writable', folderWritable, /its folder \/etc\/mcp-gate is writable by everyone/],
      ['not JSON', broken, /\/etc\/mcp-gate\/policy\.json:1:\d+: /],
      ['an unknown key', unknown, /unknown key "network"/],
      ['a registry that is not http(s)', badRegistry, /"ftp:\/\/mirror\.example\/npm\/" is not an http\(s\) registry URL/],
      ['sandbox.required not a boolean', badSandbox, /"sandbox" must be \{ "required": true \| false \}/],
      ['a symbolic link', link, /is a symbolic link/],
    ];
    for (const [what, dir, re] of cases) {
      const r = cliAdmin(w, dir, ['list']);
      assert.match(r.stdout + r.stderr, /the administrator's policy \/etc\/mcp-gate\/policy\.json cannot be used/, what);
      assert.match(r.stdout + r.stderr, re, what);
      assert.doesNotMatch(r.stdout, /^approved\s/m, `${what}: nothing runs`);
    }
    // an invalid rule in the layer denies every action, naming it (as an invalid user rule does)
    const ex = cliAdmin(w, badRule, ['explain', 'mcp.x.tool.y']);
    assert.equal(ex.code, 1);
    assert.match(ex.stdout, /policy\.json.*"decision" must be "allow", "ask" or "deny", not "maybe"/);
  });

  it('"sandbox": { "required": true }: the user\'s own servers run contained, and an opt-out does not apply (get says so)', () => {
    const w = world();
    userConfig(w, {
      servers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      rules: [{ action: 'mcp.everything.tool.*', decision: 'allow' }],
      sandbox: {
        servers: [
          { server: 'everything', off: true },
          { server: 'everything', read: [path.join(ROOT, 'node_modules')] },
        ],
      },
    });
    assert.match(cliAdmin(w, undefined, ['get', 'everything']).stdout, /^ {2}sandbox +not contained/m, 'without the layer: uncontained');
    const required = adminDir({ sandbox: { required: true } });
    const get = cliAdmin(w, required, ['get', 'everything']);
    assert.match(get.stdout, /^ {2}sandbox +contained/m, get.stdout);
    assert.match(
      get.stdout,
      /your opt-out in .*config\.json.* does not apply: the administrator's policy \/etc\/mcp-gate\/policy\.json requires the sandbox/,
    );
    assert.match(
      cliAdmin(w, required, ['doctor']).stdout,
      /^admin +\/etc\/mcp-gate\/policy\.json in force: .*, sandbox required for every local server$/m,
    );
    const call = cliAdmin(w, required, ['call', 'everything', 'echo', '--args', '{"message":"inside"}']);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /Echo: inside/);
  });

  it('"packages": an approval resolves only from a listed registry, and the minimum release age is the larger one', () => {
    const w = world(
      { '.mcp.json': JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server'] } } }) },
      {},
      { PATH: process.env.PATH!, npm_config_registry: 'http://127.0.0.1:9/npm' },
    );
    userConfig(w, { packages: { minReleaseAgeDays: 2 } });
    const listed = adminDir({ packages: { registries: ['https://npm.internal.example/'] } });
    const refused = cliAdmin(w, listed, ['approve', 'fix', '--yes']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /"fix" \(\.mcp\.json\) cannot be approved: MCP Gate resolves npm packages from http:\/\/127\.0\.0\.1:9\/npm\/, and the administrator's policy \(\/etc\/mcp-gate\/policy\.json\) allows only https:\/\/npm\.internal\.example\//,
    );
    assert.equal(fs.existsSync(path.join(w.store, 'approvals.json')), false, 'nothing was approved');
    // the same registry written another way is listed: the approval goes on to the registry (which does not answer here)
    const same = adminDir({ packages: { registries: ['HTTP://127.0.0.1:9/npm'], minReleaseAgeDays: 30 } });
    const asked = cliAdmin(w, same, ['approve', 'fix', '--yes']);
    assert.equal(asked.code, 1);
    assert.match(
      asked.stderr,
      /published at least 30 days ago \(the minimum release age\) cannot be resolved at http:\/\/127\.0\.0\.1:9\/npm\/.*\(the minimum release age of 30 days is set in \/etc\/mcp-gate\/policy\.json\)/,
    );
    assert.match(
      cliAdmin(w, same, ['doctor']).stdout,
      /in force: .*, npm versions at least 30 days old, npm only from http:\/\/127\.0\.0\.1:9\/npm\/$/m,
    );
    const lower = adminDir({ packages: { minReleaseAgeDays: 1 } });
    assert.match(
      cliAdmin(w, lower, ['approve', 'fix', '--yes']).stderr,
      /of 2 days is set in .*config\.json/,
      "the administrator's lower age does not lower the user's",
    );
  });
  it('"packages": an approval whose lock came from a registry the administrator no longer lists waits for approval again, and does not start', async () => {
    const reg = await startRegistry();
    try {
      reg.publish(fixturePackage('1.0.0'));
      const w = world(
        { '.mcp.json': JSON.stringify({ mcpServers: { fix: { command: 'npx', args: ['-y', 'fixture-server'] } } }) },
        {},
        { PATH: process.env.PATH!, npm_config_registry: reg.url },
      );
      userConfig(w, { rules: [{ action: 'mcp.fix.tool.*', decision: 'allow', project: fs.realpathSync(w.project) }] });
      const approved = cliAdmin(w, undefined, ['approve', 'fix', '--yes']);
      assert.equal(approved.code, 0, approved.stdout + approved.stderr);
      assert.equal(cliAdmin(w, undefined, ['call', 'fix', 'version']).stdout.trim(), 'fixture-server 1.0.0');
      const other = adminDir({ packages: { registries: ['https://npm.internal.example/'] } });
      const get = cliAdmin(w, other, ['get', 'fix']);
      assert.match(
        get.stdout,
        /state\s+changed since approval: its package lock was resolved from http:\/\/127\.0\.0\.1:\d+\/\S*, and the administrator's policy \/etc\/mcp-gate\/policy\.json allows packages only from https:\/\/npm\.internal\.example\/: approve it again/,
      );
      const call = cliAdmin(w, other, ['call', 'fix', 'version']);
      assert.notEqual(call.code, 0, 'the server does not start');
      assert.doesNotMatch(call.stdout, /fixture-server 1\.0\.0/);
      // listed (written another way), the same approval holds
      const listed = adminDir({ packages: { registries: [reg.url.toUpperCase().replace(/\/$/, '').replace('HTTP://', 'http://')] } });
      assert.match(cliAdmin(w, listed, ['get', 'fix']).stdout, /state\s+approved/);
      assert.equal(cliAdmin(w, listed, ['call', 'fix', 'version']).stdout.trim(), 'fixture-server 1.0.0');
    } finally {
      await reg.stop();
    }
  });
});
