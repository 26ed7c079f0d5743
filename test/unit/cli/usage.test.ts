// The CLI's command table: every command id has one help entry and a function, and the help a person reads
// (`mcp-gate --help`, the built CLI) lists every command; an unknown command is a usage error (exit 2).
import assert from 'node:assert/strict';
import { COMMANDS } from '../../../src/cli/commands';
import { COMMAND_HELP, COMMAND_IDS, USAGE } from '../../../src/cli/usage';
import { cleanupTemp, cli, world } from '../helpers';

describe('cli/usage: the command table', () => {
  after(cleanupTemp);

  it('every command id has exactly one help entry and one function, and nothing else has either', () => {
    const helped = COMMAND_HELP.flatMap((e) => e.ids);
    assert.deepEqual([...helped].sort(), [...COMMAND_IDS].sort());
    assert.deepEqual(Object.keys(COMMANDS).sort(), [...COMMAND_IDS].sort());
    for (const id of COMMAND_IDS) assert.equal(typeof COMMANDS[id], 'function', id);
  });

  it('--help prints every command, and an unknown one is refused with the usage text', () => {
    const w = world();
    const help = cli(w, ['--help']);
    assert.equal(help.code, 0);
    assert.equal(help.stdout, `${USAGE}\n`);
    for (const e of COMMAND_HELP) assert.match(help.stdout, new RegExp(`^  ${e.usage.replace(/[|[\]().*+?]/g, '\\$&')} `, 'm'));
    const bad = cli(w, ['frobnicate']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^mcp-gate: unknown command "frobnicate"\n\nusage: mcp-gate <command>/);
  });
});
