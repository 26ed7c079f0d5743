// `npm ci` prints no EBADENGINE warning on the Node this repository supports (package.json engines.node, 20 here):
// every package of the root lock accepts that Node, and the tools that need Node 22 live in test/tools (their own
// lock, installed by scripts/test-tools.mjs with the Node 22 of `npm run vscode-host`), where every package accepts
// that Node 22. A devDependency that drops Node 20 fails here, naming the package and who pulls it in.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from './helpers';

// semver comes with npm-package-arg (a dependency); the two functions used here.
const semver = require('semver') as {
  satisfies(v: string, range: string, o?: { includePrerelease: boolean }): boolean;
  minVersion(r: string): { version: string } | null;
};

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  dev?: boolean;
  optional?: boolean;
}

/** Every package of a lock whose engines.node does not accept `node`, as "<path>@<version> needs <range>". */
function refusing(lockFile: string, node: string): string[] {
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { packages: Record<string, LockEntry> };
  const bad: string[] = [];
  for (const [where, p] of Object.entries(lock.packages)) {
    if (!where) continue;
    const range = p.engines && !Array.isArray(p.engines) ? p.engines.node : undefined;
    if (range && !semver.satisfies(node, range, { includePrerelease: true })) bad.push(`${where}@${p.version} needs node ${range}`);
  }
  return bad;
}

describe('npm ci prints no EBADENGINE warning', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it(`every package of the root lock accepts the oldest supported Node (${oldest}) and this one (${process.version})`, () => {
    assert.deepEqual(refusing(path.join(ROOT, 'package-lock.json'), oldest), [], 'move a Node-22-only tool to test/tools/package.json');
    assert.deepEqual(refusing(path.join(ROOT, 'package-lock.json'), process.version), []);
  });

  it('the Node-22-only tools are in test/tools, installed with the Node 22 of the VS Code hosts, where every package accepts it', () => {
    const hosts = (JSON.parse(fs.readFileSync(path.join(ROOT, 'test/vscode/hosts.json'), 'utf8')) as { hosts: { node: string }[] }).hosts;
    const node22 = hosts.find((h) => h.node.startsWith('22.'));
    assert.ok(node22, 'test/vscode/hosts.json names the Node 22 that scripts/test-tools.mjs installs test/tools with');
    const tools = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/tools/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.deepEqual(Object.keys(tools.dependencies).sort(), ['@anthropic-ai/claude-code', '@modelcontextprotocol/conformance']);
    assert.deepEqual(refusing(path.join(ROOT, 'test/tools/package-lock.json'), node22.node), []);
    // ... and the root does not install them a second time (on Node 20, with the warning)
    const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    for (const name of Object.keys(tools.dependencies))
      assert.equal(root.devDependencies[name], undefined, `${name} is in both package.json files`);
  });

  it('the check itself: a package that needs Node 22 is named, with where it sits and its range', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-engines-'));
    try {
      const lock = path.join(dir, 'package-lock.json');
      fs.writeFileSync(
        lock,
        JSON.stringify({
          packages: {
            '': {},
            'node_modules/a/node_modules/content-type': { version: '3.1.1', engines: { node: '>=22' } },
            'node_modules/b': { version: '1.0.0', engines: { node: '>= 0.6' } },
          },
        }),
      );
      assert.deepEqual(refusing(lock, '20.18.1'), ['node_modules/a/node_modules/content-type@3.1.1 needs node >=22']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
