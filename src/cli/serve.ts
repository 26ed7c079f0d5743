// `mcp-gate serve [<server>]`: runs MCP Gate as a stdio MCP server (src/host/gateway/serve.ts) for the agent that launched
// it. stdout carries MCP only; every line for a person goes to stderr (and the log).
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { SecretSource } from '../policy/secrets';
import type { UserPolicy } from '../policy/user-policy';
import type { EventLog } from '../host/log/log';
import { serve } from '../host/gateway/serve';
import type { GateInput, GateReport } from '../trust/report';
import { err } from './output';
import { cliWords, shellArg } from './words';
import { packageOps } from './context';
import { serversMayStart, trackSession } from './signals';

export interface ServeCommand {
  input: GateInput;
  rest: string[];
  source?: string;
  log: EventLog;
  policyOf(report: GateReport): UserPolicy;
  secrets: SecretSource;
  env: Readonly<Record<string, string | undefined>>;
  /** The hint flags of the command (--project/--store as given); the project is always named, for an agent elsewhere. */
  flags: string;
}

export async function serveCommand(c: ServeCommand): Promise<number> {
  if (c.rest.length > 1) {
    err('mcp-gate serve takes at most one server name');
    return 2;
  }
  serversMayStart();
  const transport = new StdioServerTransport();
  // The client closing our stdin ends the session (the SDK's stdio transport does not watch for it).
  process.stdin.once('end', () => void transport.close());
  await serve({
    input: c.input,
    server: c.rest[0],
    source: c.source,
    log: c.log,
    policyOf: c.policyOf,
    secrets: c.secrets,
    env: c.env,
    npm: packageOps,
    transport,
    diag: (line) => err(line),
    track: (s) => trackSession(s),
    words: cliWords(
      c.flags.includes('--project ') ? c.flags : [`--project ${shellArg(c.input.projectDir)}`, c.flags].filter(Boolean).join(' '),
    ),
  });
  return 0;
}
