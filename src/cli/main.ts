// `mcp-gate`: the command-line face of the same core the extension uses — same catalogue, same store, same
// states. Parses the arguments and runs the command from the table (./commands.ts; ids and usage in ./usage.ts).
// Exit codes: 0 ok, 1 full block or refusal, 2 usage; `check` exits with its categories' bits (./check.ts).
import { parseArgs } from 'node:util';
import { EditRefusal } from '../trust/sources/edit';
import { GateRefusal } from '../trust/approval/approvals';
import { ProjectError } from '../trust/gate';
import { StoreLockError } from '../trust/approval/store';
import { COMMANDS } from './commands';
import { createCtx, UsageError } from './context';
import { err, out } from './output';
import { installSignalHandlers } from './signals';
import { isCommandId, USAGE } from './usage';

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        project: { type: 'string' },
        store: { type: 'string' },
        source: { type: 'string' },
        json: { type: 'boolean' },
        yes: { type: 'boolean' },
        managed: { type: 'boolean' },
        all: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        args: { type: 'string' },
        server: { type: 'string' },
        outcome: { type: 'string' },
        scope: { type: 'string' },
        verify: { type: 'boolean' },
        'fail-on': { type: 'string' },
        out: { type: 'string' },
        key: { type: 'string' },
        as: { type: 'string' },
        team: { type: 'string' },
        'allowed-signers': { type: 'string' },
        skip: { type: 'string', multiple: true },
      },
    });
  } catch (e) {
    err(`mcp-gate: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values: o, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (o.help || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (!command) {
    err(USAGE);
    return 2;
  }
  try {
    if (!isCommandId(command)) throw new UsageError(`unknown command "${command}"`);
    const ctx = createCtx(command, o, rest);
    try {
      return await COMMANDS[command](ctx);
    } finally {
      await ctx.closeExport();
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`mcp-gate: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof ProjectError) {
      err(`mcp-gate: ${e.message}`);
      return 2;
    }
    if (e instanceof GateRefusal || e instanceof StoreLockError || e instanceof EditRefusal) {
      err(`mcp-gate: ${e.message}`);
      return 1;
    }
    err(`mcp-gate: unexpected error: ${(e as Error).stack ?? e}`);
    return 1;
  }
}

if (require.main === module) {
  installSignalHandlers();
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
