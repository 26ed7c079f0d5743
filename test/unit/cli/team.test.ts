// Team approvals (issue 27 item 2) through the CLI with real SSH keys (ssh-keygen): a person on machine A approves a
// repository server and exports it, signed; machine B (its own HOME, store and clone at another path) imports the
// team file and the server is approved, with who signed shown by `get` and logged; a change on B re-gates it and a
// new import is refused with both digests; a foreign key, a forged signer, a removed signature, an edited entry, an
// allowed-signers file inside the repository, a broken team file and a local rejection are each refused with the
// reason; `check --team` passes a matching clone without writing any store, and fails a changed one.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, ROOT, tempDir, world, writeFiles, type World } from '../helpers';
import { miniServer } from '../mini-server';
import { sign } from '../../../src/trust/approval/signatures';
import { entryPayload } from '../../../src/trust/approval/team';

const PROBE = path.join(ROOT, 'test', 'fixtures', 'sandbox', 'probe-server.js');

function keygen(dir: string, name: string): string {
  const f = path.join(dir, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', f]);
  assert.equal(r.status, 0, String(r.stderr));
  return f;
}

function repoFiles(): Record<string, string> {
  return {
    '.mcp.json': JSON.stringify({ mcpServers: { probe: { command: 'node', args: ['srv/probe-server.js'] } } }),
    'srv/probe-server.js': fs.readFileSync(PROBE, 'utf8'),
  };
}

describe('CLI: team approvals signed with SSH keys', function () {
  this.timeout(120_000);
  let keys: string;
  let alice: string;
  let mallory: string;
  let teamFile: string;
  let a: World;
  after(cleanupTemp);

  /** Machine B: a fresh HOME and store, the same repository cloned at another path, alice in its allowed signers. */
  function machineB(): World {
    const b = world(repoFiles());
    const signers = path.join(b.home, '.config', 'mcp-gate', 'allowed_signers');
    fs.mkdirSync(path.dirname(signers), { recursive: true });
    fs.writeFileSync(signers, `alice@example.com ${fs.readFileSync(`${alice}.pub`, 'utf8')}`);
    return b;
  }
  const copyTeam = (edit?: (t: { entries: Record<string, unknown>[] }) => void) => {
    const t = JSON.parse(fs.readFileSync(teamFile, 'utf8'));
    edit?.(t);
    const f = path.join(tempDir(), 'team.json');
    fs.writeFileSync(f, JSON.stringify(t));
    return f;
  };

  before(() => {
    keys = tempDir();
    alice = keygen(keys, 'alice');
    mallory = keygen(keys, 'mallory');
    a = world(repoFiles());
    assert.equal(cli(a, ['approve', 'probe', '--yes']).code, 0);
    teamFile = path.join(tempDir(), 'team', 'shop.json');
    const r = cli(a, ['approvals', 'export', '--out', teamFile, '--key', alice, '--as', 'alice@example.com']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /exported probe \(\.mcp\.json\), signed as alice@example\.com/);
  });

  it('export writes the digest, what runs and a signature per approved server; nothing approved: exit 1', () => {
    const t = JSON.parse(fs.readFileSync(teamFile, 'utf8'));
    assert.equal(t.format, 'mcp-gate team approvals 1');
    assert.equal(t.entries.length, 1);
    assert.match(t.entries[0].digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(t.entries[0].runs, 'node srv/probe-server.js');
    assert.match(t.entries[0].signature, /^-----BEGIN SSH SIGNATURE-----/);
    const none = world(repoFiles());
    const out = path.join(tempDir(), 't.json');
    const r = cli(none, ['approvals', 'export', '--out', out, '--key', alice, '--as', 'alice@example.com']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /not exported: probe \(\.mcp\.json\): declared by the repository; never decided/);
    assert.equal(fs.existsSync(out), false, 'nothing written');
    assert.match(cli(none, ['approvals', 'export', '--out', 'x.json']).stderr, /needs --out FILE .* --key FILE .* --as PRINCIPAL/);
  });

  it("a guarded server: the import keeps the workspace alice approved, so a plugin changed in B's clone is refused when it loads (never this clone as it is)", () => {
    // Its plugin is loaded by a computed path: not in the pinned files, checked when it loads.
    const files = {
      '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node', args: ['srv/server.js'] } } }),
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'srv/server.js': miniServer(
        "const path = require('node:path');",
        "require(path.join(__dirname, 'plugins', ['gre', 'et'].join('') + '.js'))",
      ),
      'srv/plugins/greet.js': "module.exports = 'approved plugin';\n",
    };
    const rules = (w: World) =>
      writeFiles(w.home, {
        '.config/mcp-gate/config.json': JSON.stringify({ rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }] }),
      });
    const ga = world(files, {}, { PATH: process.env.PATH! });
    assert.equal(cli(ga, ['approve', 's', '--yes']).code, 0);
    const team = path.join(tempDir(), 'guarded.json');
    const ex = cli(ga, ['approvals', 'export', '--out', team, '--key', alice, '--as', 'alice@example.com']);
    assert.equal(ex.code, 0, ex.stdout + ex.stderr);
    assert.equal(JSON.parse(fs.readFileSync(team, 'utf8')).entries[0].workspace['srv/plugins/greet.js'].length, 64);
    // B's clone: the same definition and pinned files, and a plugin the attacker changed.
    const gb = world(files, {}, { PATH: process.env.PATH! });
    rules(gb);
    const signers = path.join(gb.home, '.config', 'mcp-gate', 'allowed_signers');
    fs.writeFileSync(signers, `alice@example.com ${fs.readFileSync(`${alice}.pub`, 'utf8')}`);
    const marker = path.join(gb.project, 'changed-code-ran');
    writeFiles(gb.project, {
      'srv/plugins/greet.js': `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran');\nmodule.exports = 'CHANGED-CODE';\n`,
    });
    const imp = cli(gb, ['approvals', 'import', team]);
    assert.equal(imp.code, 0, imp.stdout + imp.stderr);
    const call = cli(gb, ['call', 's', 'hello']);
    assert.doesNotMatch(call.stdout, /CHANGED-CODE/);
    assert.equal(fs.existsSync(marker), false, "the changed plugin ran under alice's approval");
    assert.match(cli(gb, ['get', 's']).stdout, /srv\/plugins\/greet\.js changed since it was approved/);
    // An entry without the record (an earlier export) is refused for a guarded server, saying why.
    const old = path.join(tempDir(), 'old.json');
    const t = JSON.parse(fs.readFileSync(team, 'utf8'));
    delete t.entries[0].workspace;
    const { signature: _s, ...unsigned } = t.entries[0];
    t.entries[0].signature = sign(alice, entryPayload(unsigned));
    fs.writeFileSync(old, JSON.stringify(t));
    const gc = world(files, {}, { PATH: process.env.PATH! });
    fs.mkdirSync(path.join(gc.home, '.config', 'mcp-gate'), { recursive: true });
    fs.writeFileSync(
      path.join(gc.home, '.config', 'mcp-gate', 'allowed_signers'),
      `alice@example.com ${fs.readFileSync(`${alice}.pub`, 'utf8')}`,
    );
    const refused = cli(gc, ['approvals', 'import', old]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stdout,
      /refused\s+s \(\.mcp\.json\): its loads are checked against the workspace its signer approved, and the entry carries no record of it/,
    );
  });

  it("a server on the approved snapshot: B's clone is shown only its files that are what alice approved; a plugin changed there is left out, and said", () => {
    // It starts a child process that runs a plugin: not checked file by file, so it runs on the workspace as approved.
    const files = {
      '.mcp.json': JSON.stringify({ mcpServers: { s: { command: 'node', args: ['srv/server.js'] } } }),
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
      'srv/server.js': miniServer(
        "const cp = require('node:child_process'); const path = require('node:path');",
        "cp.execFileSync(process.execPath, [path.join(__dirname, 'plugins', 'greet.js')]).toString().trim()",
      ),
      'srv/plugins/greet.js': "console.log('approved plugin');\n",
    };
    const rules = (w: World) =>
      writeFiles(w.home, {
        '.config/mcp-gate/config.json': JSON.stringify({ rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project: w.project }] }),
      });
    const sa = world(files, {}, { PATH: process.env.PATH! });
    assert.equal(cli(sa, ['approve', 's', '--yes']).code, 0);
    const team = path.join(tempDir(), 'snapshot.json');
    const ex = cli(sa, ['approvals', 'export', '--out', team, '--key', alice, '--as', 'alice@example.com']);
    assert.equal(ex.code, 0, ex.stdout + ex.stderr);
    const sb = world(files, {}, { PATH: process.env.PATH! });
    rules(sb);
    fs.writeFileSync(
      path.join(sb.home, '.config', 'mcp-gate', 'allowed_signers'),
      `alice@example.com ${fs.readFileSync(`${alice}.pub`, 'utf8')}`,
    );
    writeFiles(sb.project, { 'srv/plugins/greet.js': "console.log('CHANGED-CODE');\n" });
    const imp = cli(sb, ['approvals', 'import', team]);
    assert.equal(imp.code, 0, imp.stdout + imp.stderr);
    assert.match(
      imp.stdout,
      /approved\s+s \(\.mcp\.json\): signed by alice@example\.com .*; it runs on the files of this clone that are what alice@example\.com approved: 1 file differs or is new here and is left out of what it is shown \(srv\/plugins\/greet\.js\)/,
    );
    const call = cli(sb, ['call', 's', 'hello']);
    assert.doesNotMatch(call.stdout, /CHANGED-CODE/, call.stdout);
    assert.match(call.stdout, /Cannot find module .*greet\.js/, call.stdout + call.stderr);
  });

  it('machine B: import approves the server while its digest matches; get and the log say who signed; a change re-gates and a new import is refused', () => {
    const b = machineB();
    assert.match(cli(b, ['list']).stdout, /waiting for review\s+repository\s+\.mcp\.json\s+probe/);
    const r = cli(b, ['approvals', 'import', teamFile]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /approved\s+probe \(\.mcp\.json\): signed by alice@example\.com \(SHA256:[A-Za-z0-9+/]+\)/);
    const get = cli(b, ['get', 'probe']);
    assert.match(get.stdout, /approved by alice@example\.com \(key SHA256:[A-Za-z0-9+/]+, team file .*shop\.json\)/);
    const log = JSON.parse(cli(b, ['log', '--json']).stdout) as Record<string, string>[];
    assert.ok(
      log.some((e) => e.kind === 'gate.approve' && e.server === 'probe' && /team approval signed by alice@example\.com/.test(e.detail)),
      JSON.stringify(log),
    );
    assert.match(cli(b, ['approvals', 'import', teamFile]).stdout, /unchanged\s+probe .*already approved with this digest/);

    fs.appendFileSync(path.join(b.project, 'srv', 'probe-server.js'), '\n// changed on B\n');
    assert.match(cli(b, ['list']).stdout, /changed since approval\s+repository\s+\.mcp\.json\s+probe/);
    const again = cli(b, ['approvals', 'import', teamFile]);
    assert.equal(again.code, 1);
    assert.match(
      again.stdout,
      /refused\s+probe \(\.mcp\.json\): what would run here differs from what alice@example\.com approved \(approved sha256:[0-9a-f]{64}, here sha256:[0-9a-f]{64}\)/,
    );
    assert.match(cli(b, ['list']).stdout, /changed since approval/);
  });

  it('refused with the reason: a foreign key, a forged signer, no signature, an edited entry', () => {
    const cases: [string, (t: { entries: Record<string, unknown>[] }) => void, RegExp][] = [
      [
        'signed by mallory claiming to be alice',
        (t) => {
          const e = t.entries[0];
          const { signature: _s, ...rest } = e;
          const f = path.join(tempDir(), 'p');
          fs.writeFileSync(f, canonical({ format: 'mcp-gate team approvals 1', ...rest }));
          spawnSync('ssh-keygen', ['-Y', 'sign', '-q', '-f', mallory, '-n', 'mcp-gate-approval@mcp-gate.dev', f]);
          e.signature = fs.readFileSync(`${f}.sig`, 'utf8');
        },
        /signature does not verify for alice@example\.com/,
      ],
      [
        'signed by mallory as mallory',
        (t) => {
          t.entries[0].approvedBy = 'mallory@example.com';
        },
        /does not verify for mallory@example\.com/,
      ],
      [
        'no signature',
        (t) => {
          t.entries[0].signature = '';
        },
        /carries no SSH signature/,
      ],
      [
        'an edited "runs"',
        (t) => {
          t.entries[0].runs = 'node srv/other.js';
        },
        /does not verify/,
      ],
      [
        'an edited approvedAt',
        (t) => {
          t.entries[0].approvedAt = '2020-01-01T00:00:00.000Z';
        },
        /does not verify/,
      ],
    ];
    for (const [what, edit, re] of cases) {
      const b = machineB();
      const r = cli(b, ['approvals', 'import', copyTeam(edit)]);
      assert.equal(r.code, 1, `${what}: ${r.stdout}`);
      assert.match(r.stdout, new RegExp(`refused\\s+probe \\(\\.mcp\\.json\\): .*${re.source}`), what);
      assert.match(cli(b, ['list']).stdout, /waiting for review/, `${what}: still pending`);
    }
  });

  it("a signature made for another purpose (git's namespace) does not verify here", () => {
    const b = machineB();
    const f = copyTeam((t) => {
      const e = t.entries[0];
      const { signature: _s, ...rest } = e;
      const p = path.join(tempDir(), 'p');
      fs.writeFileSync(p, canonical({ format: 'mcp-gate team approvals 1', ...rest }));
      spawnSync('ssh-keygen', ['-Y', 'sign', '-q', '-f', alice, '-n', 'git', p]);
      e.signature = fs.readFileSync(`${p}.sig`, 'utf8');
    });
    const r = cli(b, ['approvals', 'import', f]);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /refused\s+probe .*does not verify/);
  });

  it("the allowed-signers file must be the user's: missing, or inside the repository, refuses the import", () => {
    const b = machineB();
    const inRepo = path.join(b.project, 'allowed_signers');
    fs.writeFileSync(inRepo, `alice@example.com ${fs.readFileSync(`${alice}.pub`, 'utf8')}`);
    const r = cli(b, ['approvals', 'import', teamFile, '--allowed-signers', inRepo]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /lies inside the project: a repository cannot say whose approvals you accept/);
    const missing = cli(b, ['approvals', 'import', teamFile, '--allowed-signers', path.join(b.home, 'nope')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /allowed-signers file .*nope does not exist: it lists the keys whose approvals you accept/);
    assert.match(cli(b, ['list']).stdout, /waiting for review/);
  });

  it('a broken team file is refused whole, naming it; a local rejection is not overturned', () => {
    const b = machineB();
    const broken = path.join(tempDir(), 'broken.json');
    fs.writeFileSync(broken, JSON.stringify({ format: 'mcp-gate team approvals 1', entries: [{ server: 'probe' }] }));
    const r = cli(b, ['approvals', 'import', broken]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `the team file ${broken.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not valid: entry 0: "source" is not a string; nothing was imported`,
      ),
    );
    assert.equal(cli(b, ['reject', 'probe']).code, 0);
    const rej = cli(b, ['approvals', 'import', teamFile]);
    assert.equal(rej.code, 1);
    assert.match(rej.stdout, /refused\s+probe .*you rejected "probe" on this machine; a team file does not overturn that/);
    assert.match(cli(b, ['list']).stdout, /^rejected\s/m);
  });

  it('check --team: a matching clone passes and no store is written; a changed clone fails as pending', () => {
    const b = machineB();
    const r = cli(b, ['check', '--team', teamFile]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /approved\s+probe \(\.mcp\.json\): signed by alice@example\.com/);
    assert.match(r.stdout, /check: 0 pending, 0 changed, 0 blocked, 0 preapproval/);
    assert.equal(fs.existsSync(path.join(b.store, 'approvals.json')), false, 'the store was not written');
    const json = JSON.parse(cli(b, ['check', '--team', teamFile, '--json']).stdout);
    assert.equal(json.ok, true);
    assert.equal(json.team.entries[0].outcome, 'approved');
    assert.equal(json.store.file, path.join(b.store, 'approvals.json'));
    fs.appendFileSync(path.join(b.project, 'srv', 'probe-server.js'), '\n// changed\n');
    const changed = cli(b, ['check', '--team', teamFile]);
    assert.equal(changed.code, 8, changed.stdout);
    assert.match(changed.stdout, /refused\s+probe .*differs from what alice@example\.com approved/);
  });
});

/** The canonical JSON the signature covers (sorted keys at every level), written here independently of the product. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
