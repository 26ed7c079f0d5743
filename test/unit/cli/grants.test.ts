// The built CLI when a cloned repository declares a server with the name of your own (`github`): your server keeps
// its rules, its secret and its local-development exception; the repository's gets none of them (tools refuses,
// naming the project-qualified rule that would permit it), and `get` previews exactly which grants would apply.
// Entries with "project": <that folder> (any spelling of it) grant the repository server, and only it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, ROOT, world, type World } from '../helpers';

const FIXTURE = path.join(ROOT, 'out', 'test', 'fixtures', 'servers', 'stdio-fixture.js');
const VALUE = 'ghp_users_own_token_5e1f0a';
const fixture = { command: process.execPath, args: [FIXTURE], env: { FIXTURE_ECHO_ENV: 'GITHUB_TOKEN' } };

/** A project whose `.mcp.json` declares `github` (`repoServer`), and your config with your own `github` and its grants. */
function setup(repoServer: Record<string, unknown>, grants: (project: string) => Record<string, unknown[]>): World {
  const w = world({ '.mcp.json': JSON.stringify({ mcpServers: { github: repoServer } }) }, {}, { MCP_GATE_SECRET_GITHUB_TOKEN: VALUE });
  const real = fs.realpathSync(w.project);
  // The repository's github runs contained: let it read the checkout, where the fixture and its packages live.
  const config = {
    servers: { github: fixture },
    sandbox: { servers: [{ server: 'github', project: real, read: [ROOT] }] },
    ...grants(real),
  };
  const file = configFile(w);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  return w;
}
const configFile = (w: World) => path.join(w.home, '.config', 'mcp-gate', 'config.json');

/** Your own github server's grants, all without "project". */
const bare = () => ({
  rules: [
    { action: 'mcp.github.tool.*', decision: 'allow' },
    { action: 'mcp.github.host.test.github.mcp', decision: 'allow' },
    { action: 'secret.use.GITHUB_TOKEN', decision: 'allow' },
  ],
  secrets: [{ name: 'GITHUB_TOKEN', to: 'mcp.github.*', bind: 'env' }],
  localExceptions: [{ server: 'github', allowLoopback: true }],
});

describe('mcp-gate: a repository server named like your own gets none of its grants', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it("your github keeps its rule, secret and exception; the repository's github gets none (get shows it, tools and call refuse)", () => {
    const w = setup(fixture, bare);
    const real = fs.realpathSync(w.project);

    const mine = cli(w, ['get', 'github', '--source', configFile(w)]);
    assert.equal(mine.code, 0, mine.stderr);
    assert.match(mine.stdout, /grants that would apply \(to your user-scope server "github", from your user policy .*config\.json\):\n/);
    assert.match(mine.stdout, /rule +\{"action":"mcp\.github\.tool\.\*","decision":"allow"\} +.*config\.json:\d+ \(rules\[0\]\)/);
    assert.match(
      mine.stdout,
      /secret +GITHUB_TOKEN → env GITHUB_TOKEN, needs secret\.use\.GITHUB_TOKEN +.*config\.json:\d+ \(secrets\[0\]\)/,
    );
    assert.match(mine.stdout, /exception local development: allowLoopback +.*config\.json:\d+ \(localExceptions\[0\]\)/);

    const theirs = cli(w, ['get', 'github', '--source', '.mcp.json']);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.match(
      theirs.stdout,
      new RegExp(
        `grants that would apply \\(to a repository server of ${real.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, from your user policy .*\\): none`,
      ),
    );
    assert.doesNotMatch(theirs.stdout, /secret +GITHUB_TOKEN →/);
    assert.match(
      theirs.stdout,
      /not applying: secret GITHUB_TOKEN +.*config\.json:\d+: it has no "project", so it is for your user-scope servers only/,
    );
    assert.match(theirs.stdout, /not applying: local exception for github/);
    for (const r of [mine, theirs]) assert.ok(!r.stdout.includes(VALUE) && !r.stderr.includes(VALUE), 'never the value');

    assert.equal(cli(w, ['approve', 'github', '--source', '.mcp.json', '--yes']).code, 0);
    // your server: the secret reaches it (masked in what the CLI prints), the call is allowed
    const own = cli(w, ['call', 'github', 't0', '--source', configFile(w), '--args', '{"text":"hi"}']);
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /t0: hi env=\*\*\*/);
    // the repository's: started without the secret, its tool list all [deny], a call refused naming the rule to write
    const tools = cli(w, ['tools', 'github', '--source', '.mcp.json']);
    assert.equal(tools.code, 0, tools.stderr);
    assert.match(tools.stdout, /t0 +\[deny\]/);
    const call = cli(w, ['call', 'github', 't0', '--source', '.mcp.json']);
    assert.equal(call.code, 1);
    assert.ok(
      call.stderr.includes(`the rule {"action":"mcp.github.tool.t0","decision":"allow","project":${JSON.stringify(real)}} would permit it`),
      call.stderr,
    );
    assert.match(
      call.stderr,
      /rules\[0\] in .*config\.json:\d+\) matches it, but having no "project", it applies only to your user-scope servers/,
    );
  });

  it('a remote repository github: tools refuses before any connection, naming the project-qualified host rule', () => {
    const w = setup({ url: 'https://mcp.github.test/mcp' }, bare);
    const real = fs.realpathSync(w.project);
    assert.equal(cli(w, ['approve', 'github', '--source', '.mcp.json', '--yes']).code, 0);
    const r = cli(w, ['tools', 'github', '--source', '.mcp.json']);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(`mcp.github.host.test.github.mcp is denied for the repository server "github" of ${real}`), r.stderr);
    assert.ok(
      r.stderr.includes(
        `the rule {"action":"mcp.github.host.test.github.mcp","decision":"allow","project":${JSON.stringify(real)}} would permit it`,
      ),
      r.stderr,
    );
    assert.match(r.stderr, /having no "project", it applies only to your user-scope servers/);
  });

  it('entries with "project": <that folder, by a symlinked spelling> grant exactly the repository server; another folder grants nothing', () => {
    const w = setup(fixture, () => ({}));
    const real = fs.realpathSync(w.project);
    const link = path.join(path.dirname(w.project), 'clone-link');
    fs.symlinkSync(w.project, link);
    const elsewhere = path.join(path.dirname(w.project), 'elsewhere');
    fs.mkdirSync(elsewhere);
    const write = (project: string) => {
      const config = {
        servers: { github: fixture },
        sandbox: { servers: [{ server: 'github', project: real, read: [ROOT] }] },
        ...bare(),
        rules: [
          ...bare().rules,
          { action: 'mcp.github.tool.t0', decision: 'allow', project },
          { action: 'secret.use.GITHUB_TOKEN', decision: 'allow', project },
        ],
        secrets: [...bare().secrets, { name: 'GITHUB_TOKEN', to: 'mcp.github.*', bind: 'env', project }],
      };
      fs.writeFileSync(configFile(w), JSON.stringify(config, null, 2));
    };
    write(link);
    assert.equal(cli(w, ['approve', 'github', '--source', '.mcp.json', '--yes']).code, 0);
    const shown = cli(w, ['get', 'github', '--source', '.mcp.json']);
    const grants = shown.stdout.slice(shown.stdout.indexOf('grants that would apply'));
    const lines = grants.split('\n').filter((l) => /^ {4}(rule|secret|exception) /.test(l));
    assert.equal(lines.length, 3, grants);
    assert.match(lines[0], /rule +\{"action":"mcp\.github\.tool\.t0","decision":"allow","project":".*clone-link"\}/);
    assert.match(lines[1], /rule +\{"action":"secret\.use\.GITHUB_TOKEN","decision":"allow","project":".*clone-link"\}/);
    assert.match(lines[2], /secret +GITHUB_TOKEN → env GITHUB_TOKEN/);
    const call = cli(w, ['call', 'github', 't0', '--source', '.mcp.json', '--args', '{"text":"x"}']);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /t0: x env=\*\*\*/);
    assert.equal(cli(w, ['explain', 'mcp.github.tool.t0', '--scope', 'repository']).code, 0);
    assert.equal(cli(w, ['explain', 'mcp.github.tool.t1', '--scope', 'repository']).code, 1);

    write(elsewhere);
    const other = cli(w, ['get', 'github', '--source', '.mcp.json']);
    assert.match(other.stdout, /grants that would apply \(.*\): none/);
    assert.match(other.stdout, /not applying: rule mcp\.github\.tool\.t0 .*: its "project" ".*elsewhere" is not this server's/);
    const refused = cli(w, ['call', 'github', 't0', '--source', '.mcp.json']);
    assert.equal(refused.code, 1);
    assert.ok(refused.stderr.includes(`"project":${JSON.stringify(real)}} would permit it`), refused.stderr);
  });

  it('explain takes the identity: --scope user (default) or repository; a project folder that does not exist is reported', () => {
    const w = setup(fixture, (real) => ({
      rules: [
        { action: 'mcp.github.tool.*', decision: 'allow' },
        { action: 'mcp.github.tool.*', decision: 'deny', project: real },
        { action: 'mcp.gone.tool.*', decision: 'allow', project: '/no/such/folder' },
      ],
    }));
    const user = cli(w, ['explain', 'mcp.github.tool.x']);
    assert.equal(user.code, 0, user.stdout);
    assert.match(user.stdout, /as seen by: your user-scope servers/);
    assert.match(user.stdout, /not applying: .*"decision":"deny","project":.*makes it apply only to repository servers/);
    const repo = cli(w, ['explain', 'mcp.github.tool.x', '--scope', 'repository']);
    assert.equal(repo.code, 1);
    assert.match(repo.stdout, /decision: deny/);
    assert.match(repo.stdout, /as seen by: the repository servers of /);
    assert.match(
      repo.stdout,
      /note: .*config\.json:\d+: rules\[2\] names the project "\/no\/such\/folder", which is not an existing folder, so it applies to no server/,
    );
    assert.equal(cli(w, ['explain', 'mcp.github.tool.x', '--scope', 'everyone']).code, 2);
    const doctor = cli(w, ['doctor']);
    assert.match(doctor.stdout, /NOTE +.*rules\[2\] names the project "\/no\/such\/folder"/);
  });
});
