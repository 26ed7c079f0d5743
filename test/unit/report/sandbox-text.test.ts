// Doctor on a machine without bubblewrap, through the built CLI as a user runs it: it says once that repository
// servers cannot start here, with the one command that installs bubblewrap (found from the package manager on
// PATH), and each server line only points at that line instead of repeating the reason and the fix.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupTemp, cli, tempDir, world } from '../helpers';

describe('doctor without bubblewrap', () => {
  after(cleanupTemp);

  it('states the fix once, as the install command for this machine, and names each server that waits for it', () => {
    const w = world({
      '.mcp.json': JSON.stringify({
        mcpServers: {
          a: { command: 'node', args: ['a.js'] },
          b: { command: 'node', args: ['b.js'] },
          c: { command: 'node', args: ['c.js'] },
        },
      }),
      'a.js': '',
      'b.js': '',
      'c.js': '',
    });
    const bin = tempDir('mcp-gate-nobwrap-');
    fs.writeFileSync(path.join(bin, 'apt-get'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const r = cli(w, ['doctor'], { env: { PATH: bin } });
    const install = `${process.getuid?.() === 0 ? '' : 'sudo '}apt-get install -y bubblewrap`;
    assert.match(
      r.stdout,
      /bubblewrap UNAVAILABLE: bubblewrap \(bwrap\) not found on PATH; fix: `[^`]+` — repository servers do not start until it is fixed/,
      r.stdout + r.stderr,
    );
    assert.equal(r.stdout.split(install).length - 1, 1, `the install command once:\n${r.stdout}`);
    for (const name of ['a', 'b', 'c']) {
      assert.match(
        r.stdout,
        new RegExp(`\\n  ${name} \\(\\.mcp\\.json\\): cannot start here: it must run contained \\(see the bubblewrap line above\\)`),
        r.stdout,
      );
    }
    assert.doesNotMatch(r.stdout, /apt-get install bubblewrap/, 'the long fix is not repeated per server');
  });
});
