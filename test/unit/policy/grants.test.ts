// Grants follow the server, not its name: a repository server named like one of your own (`github`) gets none of
// the rules, secrets and local-development exceptions written for yours; entries with "project" (that folder, by
// real path, or "*") are the only ones a repository server gets; grantsFor lists exactly what would apply.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mayCallTool, mayDiscover, resolve } from '../../../src/policy/decide';
import type { ServerIdentity } from '../../../src/policy/identity';
import { bindSecrets } from '../../../src/policy/secrets';
import { grantsFor, loadUserPolicy, localExceptionFor, type UserPolicy } from '../../../src/policy/user-policy';
import { cleanupTemp, tempDir } from '../helpers';

const FILE = '/home/me/.config/mcp-gate/config.json';
const TOKEN = 'ghp_user_token_0123456789';

/** The user's own github server's grants, bare (no "project"), plus whatever `extra` adds. */
function policy(extra: { rules?: object[]; secrets?: object[]; localExceptions?: object[] } = {}): UserPolicy {
  return loadUserPolicy({
    file: FILE,
    rules: [
      { action: 'mcp.github.tool.*', decision: 'allow' },
      { action: 'mcp.github.host.com.github.*', decision: 'allow' },
      { action: 'secret.use.GITHUB_TOKEN', decision: 'allow' },
      ...(extra.rules ?? []),
    ],
    secrets: [{ name: 'GITHUB_TOKEN', to: 'mcp.github.*', bind: 'env' }, ...(extra.secrets ?? [])],
    localExceptions: [{ server: 'github', allowLoopback: true }, ...(extra.localExceptions ?? [])],
    lineOf: (k) => Number(k[1]) + 3,
  });
}

const source = async (name: string) => (name === 'GITHUB_TOKEN' ? TOKEN : name === 'REPO_TOKEN' ? 'repo_token_abcdef' : undefined);

describe('policy: grants follow the server, not its name', () => {
  let project: string;
  let other: string;
  let link: string;
  const user: ServerIdentity = { name: 'github', scope: 'user' };
  let repo: ServerIdentity;
  before(() => {
    const base = fs.realpathSync(tempDir());
    project = path.join(base, 'clone');
    other = path.join(base, 'other');
    fs.mkdirSync(project);
    fs.mkdirSync(other);
    link = path.join(base, 'link-to-clone');
    fs.symlinkSync(project, link);
    repo = { name: 'github', scope: 'repository', project };
  });
  after(cleanupTemp);

  it('bare entries: your user server gets its rules, secret and exception; the repository server of the same name gets none', async () => {
    const p = policy();
    assert.deepEqual(p.problems, []);
    assert.equal(mayCallTool(user, undefined, 'create_issue', p.rules).decision, 'allow');
    const g = grantsFor(user, p);
    assert.deepEqual(
      g.rules.map((r) => r.action),
      ['mcp.github.tool.*', 'mcp.github.host.com.github.*', 'secret.use.GITHUB_TOKEN'],
    );
    assert.deepEqual(
      g.secrets.map((e) => e.name),
      ['GITHUB_TOKEN'],
    );
    assert.equal(g.exception?.allowLoopback, true);
    const bound = await bindSecrets(user, p.secrets, { source, rules: p.rules });
    assert.equal(bound.drop, false);
    assert.deepEqual(bound.drop === false && bound.env, { GITHUB_TOKEN: TOKEN });

    const call = mayCallTool(repo, undefined, 'create_issue', p.rules);
    assert.equal(call.decision, 'deny');
    assert.deepEqual(call.permittedBy, { action: 'mcp.github.tool.create_issue', decision: 'allow', project });
    assert.ok(
      call.reason.includes(
        `the rule {"action":"mcp.github.tool.create_issue","decision":"allow","project":${JSON.stringify(project)}} would permit it`,
      ),
      call.reason,
    );
    assert.match(
      call.reason,
      /rule \{"action":"mcp\.github\.tool\.\*","decision":"allow"\} \(rules\[0\] in .*config\.json:3\) matches it, but having no "project", it applies only to your user-scope servers/,
    );
    assert.equal(mayDiscover(repo, 'api.github.com', p.rules).decision, 'deny');
    const none = grantsFor(repo, p);
    assert.deepEqual([none.rules, none.secrets, none.exception], [[], [], undefined]);
    assert.deepEqual(
      none.notApplying.map((n) => n.what),
      ['rule mcp.github.tool.*', 'rule mcp.github.host.com.github.*', 'secret GITHUB_TOKEN', 'local exception for github'],
    );
    const unbound = await bindSecrets(repo, p.secrets, { source, rules: p.rules });
    assert.deepEqual(
      unbound.drop === false && [unbound.env, unbound.used],
      [{}, []],
      "the user's secret never reaches the repository server",
    );
    assert.equal(localExceptionFor(p, repo), undefined);
  });

  it('entries with "project": <that folder> apply to that repository server only, exactly those', async () => {
    const p = policy({
      rules: [
        { action: 'mcp.github.tool.list_issues', decision: 'allow', project },
        { action: 'secret.use.REPO_TOKEN', decision: 'allow', project },
      ],
      secrets: [{ name: 'REPO_TOKEN', to: 'mcp.github.*', bind: 'env', project }],
      localExceptions: [{ server: 'github', allowPrivate: true, project }],
    });
    assert.deepEqual(p.problems, []);
    assert.equal(mayCallTool(repo, undefined, 'list_issues', p.rules).decision, 'allow');
    assert.equal(mayCallTool(repo, undefined, 'create_issue', p.rules).decision, 'deny');
    const g = grantsFor(repo, p);
    assert.deepEqual(
      g.rules.map((r) => r.action),
      ['mcp.github.tool.list_issues', 'secret.use.REPO_TOKEN'],
    );
    assert.deepEqual(
      g.secrets.map((e) => e.name),
      ['REPO_TOKEN'],
    );
    assert.deepEqual([g.exception?.allowLoopback, g.exception?.allowPrivate], [false, true]);
    const bound = await bindSecrets(repo, p.secrets, { source, rules: p.rules });
    assert.deepEqual(bound.drop === false && bound.env, { REPO_TOKEN: 'repo_token_abcdef' });
    // and your own server is not given the repository's grants
    assert.deepEqual(
      grantsFor(user, p).secrets.map((e) => e.name),
      ['GITHUB_TOKEN'],
    );
    assert.equal(mayCallTool(user, undefined, 'list_issues', p.rules).decision, 'allow', 'by its own bare mcp.github.tool.*');
    assert.equal(localExceptionFor(p, user)?.allowLoopback, true);
  });

  it('a qualified secret still needs a secret.use rule for that project: a bare one is for your servers', async () => {
    const p = policy({
      secrets: [{ name: 'REPO_TOKEN', to: 'mcp.github.*', bind: 'env', project }],
      rules: [{ action: 'secret.use.REPO_TOKEN', decision: 'allow' }],
    });
    const b = await bindSecrets(repo, p.secrets, { source, rules: p.rules });
    assert.equal(b.drop, true);
    assert.ok(
      b.drop && b.reason.includes(`secret REPO_TOKEN is refused`) && b.reason.includes(`"project":${JSON.stringify(project)}`),
      b.drop ? b.reason : '',
    );
  });

  it('a rule, secret or exception for another folder does not apply', async () => {
    const p = policy({
      rules: [{ action: 'mcp.github.tool.*', decision: 'allow', project: other }],
      secrets: [{ name: 'REPO_TOKEN', to: 'mcp.github.*', bind: 'env', project: other }],
      localExceptions: [{ server: 'github', allowLoopback: true, project: other }],
    });
    const v = mayCallTool(repo, undefined, 'create_issue', p.rules);
    assert.equal(v.decision, 'deny');
    assert.ok(v.reason.includes(`is another folder (${other})`), v.reason);
    const g = grantsFor(repo, p);
    assert.deepEqual([g.rules, g.secrets, g.exception], [[], [], undefined]);
    assert.equal(localExceptionFor(p, repo), undefined);
  });

  it('a symlinked spelling of the folder, and "~/", match by real path', () => {
    const viaLink = policy({ rules: [{ action: 'mcp.github.tool.*', decision: 'allow', project: link }] });
    assert.equal(viaLink.rules[3].projectPath, project);
    assert.equal(mayCallTool(repo, undefined, 'create_issue', viaLink.rules).decision, 'allow');
    const home = path.dirname(project);
    const viaHome = loadUserPolicy(
      { file: FILE, rules: [{ action: 'mcp.github.tool.*', decision: 'allow', project: '~/link-to-clone' }] },
      { home: () => home, realFolder: (p) => fs.realpathSync(p) },
    );
    assert.equal(mayCallTool(repo, undefined, 'create_issue', viaHome.rules).decision, 'allow');
  });

  it('"project": "*" is any repository\'s server of that name, never your own', () => {
    const p = loadUserPolicy({ file: FILE, rules: [{ action: 'mcp.github.tool.*', decision: 'allow', project: '*' }] });
    assert.equal(mayCallTool(repo, undefined, 'x', p.rules).decision, 'allow');
    assert.equal(mayCallTool({ name: 'github', scope: 'repository', project: other }, undefined, 'x', p.rules).decision, 'allow');
    assert.equal(mayCallTool(user, undefined, 'x', p.rules).decision, 'deny');
    assert.equal(mayCallTool({ name: 'gitlab', scope: 'repository', project }, undefined, 'x', p.rules).decision, 'deny');
  });

  it('a folder that does not exist matches nothing and is reported; a relative path or "~user" is invalid', () => {
    const gone = path.join(path.dirname(project), 'deleted');
    const p = policy({ rules: [{ action: 'mcp.github.tool.*', decision: 'allow', project: gone }] });
    assert.deepEqual(p.problems, []);
    assert.equal(mayCallTool({ name: 'github', scope: 'repository', project: gone }, undefined, 'x', p.rules).decision, 'deny');
    assert.deepEqual(p.notes, [
      `${FILE}:6: rules[3] names the project ${JSON.stringify(gone)}, which is not an existing folder, so it applies to no server; fix the path or remove the entry`,
    ]);
    for (const bad of ['clone', './clone', '~other/x', '', 5]) {
      const q = loadUserPolicy({ file: FILE, rules: [{ action: 'mcp.github.tool.*', decision: 'allow', project: bad }] });
      assert.equal(q.problems.length, 1, `project ${JSON.stringify(bad)}`);
      assert.match(q.problems[0], /config\.json: rules\[0\] .*"project"/);
    }
  });

  it('the "Always" answer for a repository server writes a rule that carries its project', async () => {
    const p = loadUserPolicy({ file: FILE, rules: [{ action: 'mcp.github.tool.*', decision: 'ask', project }] });
    const r = await resolve(mayCallTool(repo, undefined, 'create_issue', p.rules), async () => 'always');
    assert.equal(r.decision, 'allow');
    assert.deepEqual(r.remember, [{ action: 'mcp.github.tool.create_issue', decision: 'allow', project }]);
  });

  it('an exception for its own project beats "project": "*"; two for the same server and project are an error', () => {
    const p = loadUserPolicy({
      file: FILE,
      localExceptions: [
        { server: 'github', allowLoopback: true, project: '*' },
        { server: 'github', allowPrivate: true, project },
      ],
    });
    assert.deepEqual(p.problems, []);
    assert.equal(localExceptionFor(p, repo)?.allowPrivate, true);
    assert.equal(localExceptionFor(p, { name: 'github', scope: 'repository', project: other })?.allowLoopback, true);
    const dup = loadUserPolicy({
      file: FILE,
      localExceptions: [
        { server: 'github', allowLoopback: true },
        { server: 'github', allowPrivate: true },
      ],
    });
    assert.match(dup.problems.join('\n'), /localExceptions\[1\]: a second exception for "github"/);
  });
});
