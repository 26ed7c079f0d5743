// Node's option table (src/trust/plan/node-options.ts) against the running Node's own `--help`: every option it
// lists is known, with the arity Node gives it; and the launch plan reads a node command line with it — an option
// that takes a value takes the next argument, and an option Node does not list pins the whole workspace.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { nodeOptionKind } from '../../../../src/trust/plan/node-options';
import { evaluateGate } from '../../../../src/trust/gate';
import { cleanupTemp, world } from '../../helpers';

const ROOT = path.resolve(__dirname, '../../../../..');
const MCP = (args: string[], command = 'node') => JSON.stringify({ mcpServers: { s: { command, args } } });

describe("node options: Node's own table", () => {
  after(cleanupTemp);

  it('knows every option the running Node lists, with its arity', async () => {
    const { optionsOf } = await import(path.join(ROOT, 'scripts', 'node-options.mjs'));
    const o = optionsOf(execFileSync(process.execPath, ['--help'], { encoding: 'utf8' })) as { value: Set<string>; switches: Set<string> };
    assert.ok(o.value.size > 40 && o.switches.size > 60, `parsed ${o.value.size} value options, ${o.switches.size} switches`);
    for (const v of o.value) assert.equal(nodeOptionKind(v), 'value', `${v} takes a value`);
    for (const s of o.switches) assert.equal(nodeOptionKind(s), 'switch', `${s} is a switch`);
    assert.equal(nodeOptionKind('--made-up-option'), 'unknown');
    assert.equal(nodeOptionKind('--experimental_loader'), 'value');
  });

  it('a value option written without = takes the next argument: the script after it is the entry', () => {
    const w = world({
      '.mcp.json': MCP(['--report-filename', 'logs/report.json', 'tools/server.js']),
      'logs/report.json': '{}',
      'tools/server.js': "require('dep')",
      'tools/node_modules/dep/index.js': '1',
    });
    const s = evaluateGate(w.input).servers[0];
    const files = Object.keys(s.pinned!.pinned.files);
    assert.ok(files.includes('tools/node_modules/dep/index.js'), `the entry's folder is pinned: ${files.join(', ')}`);
  });

  it('an option Node does not list, a V8 value flag without =, or --preserve-symlinks(-main) pins the whole workspace, saying why', () => {
    for (const [args, why] of [
      [['--made-up', 'x', 'tools/server.js'], /--made-up is an option MCP Gate does not model/],
      [['--stack-trace-limit', '50', 'tools/server.js'], /--stack-trace-limit is an option MCP Gate does not model .*without =/],
      [['--preserve-symlinks', '--preserve-symlinks-main', 'tools/server.js'], /--preserve-symlinks changes which files Node resolves/],
    ] as const) {
      const w = world({ '.mcp.json': MCP([...args]), 'tools/server.js': '1' });
      const s = evaluateGate(w.input).servers[0];
      const roots = s.pinned!.plan!.closure.roots;
      assert.ok(
        roots.some((r) => r.path === '.' && why.test(r.why)),
        `${args.join(' ')}: ${JSON.stringify(roots)}`,
      );
    }
    const ok = world({ '.mcp.json': MCP(['--max-old-space-size=512', '--no-warnings', '--', 'tools/server.js']), 'tools/server.js': '1' });
    const roots = evaluateGate(ok.input).servers[0].pinned!.plan!.closure.roots;
    assert.deepEqual(
      roots.map((r) => r.path),
      ['tools'],
    );
  });

  it('a program MCP Gate does not model (setarch, ld.so, fakeroot, perl5.36.0) pins the whole workspace', () => {
    let checked = 0;
    for (const [command, args] of [
      ['setarch', ['x86_64', 'node', 'tools/server.js']],
      ['/lib64/ld-linux-x86-64.so.2', ['/usr/bin/node', 'tools/server.js']],
      ['fakeroot', ['node', 'tools/server.js']],
      ['perl5.36.0', ['tools/srv.pl']],
    ] as const) {
      const w = world(
        { '.mcp.json': MCP([...args], command), 'tools/server.js': '1', 'tools/srv.pl': '1' },
        {},
        { PATH: process.env.PATH ?? '' },
      );
      const s = evaluateGate(w.input).servers[0];
      if (!s.pinned?.plan?.executable) continue; // not installed on this machine
      assert.ok(
        s.pinned.plan.closure.roots.some((r) => r.path === '.' && /does not model/.test(r.why)),
        `${command}: ${JSON.stringify(s.pinned.plan.closure.roots)}`,
      );
      checked++;
    }
    assert.ok(checked >= 2, `only ${checked} of the programs are installed here`);
  });
});
