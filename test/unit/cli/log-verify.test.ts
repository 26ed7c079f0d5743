// `mcp-gate log --verify` through the built CLI: a log written by several CLI processes (each its own run of the
// chain) holds; a line changed in the store's log.jsonl is named with its file and line and the command exits 1;
// --json gives the same report; --verify with a filter is a usage error.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, world } from '../helpers';

describe('cli: log --verify', function () {
  this.timeout(120_000);
  after(cleanupTemp);

  it('holds for a log written by several CLI runs; a changed line is named and exits 1', () => {
    const w = world({
      '.mcp.json': JSON.stringify({ mcpServers: { a: { command: 'node', args: ['a.js'] }, b: { command: 'node', args: ['b.js'] } } }),
      'a.js': '',
      'b.js': '',
    });
    for (const args of [
      ['approve', 'a', '--yes'],
      ['reject', 'b'],
      ['reset', 'a'],
      ['approve', 'a', '--yes'],
    ])
      assert.equal(cli(w, args).code, 0, args.join(' '));
    const ok = cli(w, ['log', '--verify']);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^the log's chain holds: \d+ lines in 1 file \(log\.jsonl\), 4 writer runs$/m);
    assert.match(ok.stdout, /a chain cannot show the last lines of a run removed/);

    const file = path.join(w.store, 'log.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const i = lines.findIndex((l) => l.includes('"gate.reject"'));
    assert.ok(i >= 0 && i < lines.length - 2, 'the reject line has lines after it');
    lines[i] = lines[i].replace('"gate.reject"', '"gate.approve"');
    fs.writeFileSync(file, lines.join('\n'));
    const bad = cli(w, ['log', '--verify']);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /^the log's chain is broken: /m);
    assert.ok(bad.stdout.includes(`${file}:${i + 2}  `), bad.stdout);
    const asJson = JSON.parse(cli(w, ['log', '--verify', '--json']).stdout);
    assert.equal(asJson.breaks.length, 1);
    assert.equal(asJson.breaks[0].line, i + 2);
  });

  it('--verify takes no filter', () => {
    const w = world();
    const r = cli(w, ['log', '--verify', '--server', 'x']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /log --verify checks the whole log: it takes no --server or --outcome/);
  });
});
