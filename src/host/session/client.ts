// The MCP client a session opens for each server, over whichever transport (a local process's stdio, a remote
// server's guarded HTTP). It negotiates the revision per server: `server/discover` first (2026-07-28,
// session-less, `_meta` on every request), `initialize` when the server answers as a 2025 server. Every
// server→client request is refused with a JSON-RPC error at once (the server's call then ends promptly) and
// counted; notifications are counted and ignored. An InputRequiredResult is handed back to the call, which refuses
// it the same way (src/host/session/call.ts). A tool's output schema is checked by the SDK's interpreting
// validator (./sdk-shims.ts), the one the bundles carry.
import { Client, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { DefaultJsonSchemaValidator } from './sdk-shims';
import { MAX_TOOL_PAGES, type SessionContext } from './context';

/** A client for one server, answering nothing the server asks. */
export function newClient(ctx: SessionContext, server: string, timeoutMs: number): Client {
  const client = new Client(
    { name: ctx.o.clientName ?? 'mcp-gate', version: '0.1.0' },
    {
      capabilities: {},
      versionNegotiation: { mode: 'auto', probe: { timeoutMs } },
      inputRequired: { autoFulfill: false },
      listMaxPages: MAX_TOOL_PAGES,
      jsonSchemaValidator: new DefaultJsonSchemaValidator(),
    },
  );
  client.fallbackRequestHandler = async (req) => {
    ctx.refuseRequest(server, req.method, 'a server→client request');
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `MCP Gate refused ${req.method}: it answers no sampling, elicitation or roots request`,
    );
  };
  client.fallbackNotificationHandler = async (n) => {
    ctx.counters.ignoredNotifications[n.method] = (ctx.counters.ignoredNotifications[n.method] ?? 0) + 1;
  };
  client.onerror = () => undefined;
  return client;
}
