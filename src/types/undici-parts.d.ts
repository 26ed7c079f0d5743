// The parts of undici MCP Gate imports by their own files (its agent, connector, fetch and Response), typed as
// undici's public API declares them: importing `undici` whole would bundle its mock, cache, proxy, WebSocket and
// EventSource code too (bench/RESULTS.md, bundle rows).
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export = Agent;
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici';
  export = buildConnector;
}
declare module 'undici/lib/web/fetch/index.js' {
  export { fetch } from 'undici';
}
declare module 'undici/lib/web/fetch/response.js' {
  export { Response } from 'undici';
}
