// The parts of undici MCP Gate uses (its agent, connector, fetch and Response), in one module that the rest of the
// host loads when it first needs one (`undici()` below), never at start: the bundles carry this module as a file
// of its own (dist/undici.js, scripts/build-options.mjs), so the extension does not load an HTTP client until a
// remote server is reached. Imported by its own files, typed as undici's public API declares them
// (src/types/undici-parts.d.ts): importing `undici` whole would bundle its mock, cache, proxy and WebSocket code.
import Agent from 'undici/lib/dispatcher/agent.js';
import buildConnector from 'undici/lib/core/connect.js';
import { fetch } from 'undici/lib/web/fetch/index.js';
import { Response } from 'undici/lib/web/fetch/response.js';

export { Agent, buildConnector, fetch, Response };
