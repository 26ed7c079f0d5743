// The command ids: one module (src/vscode/command-ids.ts) that the command table registers from, equal to what
// package.json contributes, so a palette entry never points at an unregistered command.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CMD } from '../../../src/vscode/command-ids';
import { ROOT } from '../helpers';

describe('command ids', () => {
  it('package.json contributes exactly the commands of the table', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const contributed = (pkg.contributes.commands as { command: string }[]).map((c) => c.command).sort();
    assert.deepEqual(contributed, Object.values(CMD).sort());
  });
});
