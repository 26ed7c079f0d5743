// What the SDK's `@modelcontextprotocol/client/_shims` and `@modelcontextprotocol/server/_shims` give on Node, but
// with the JSON Schema validator the SDK ships for its other runtimes (@cfworker/json-schema: it interprets a
// schema, generating no code) in place of its bundled ajv (159 KiB minified in each package). The bundles alias
// both `_shims` here (scripts/build-options.mjs), so ajv is not in them; MCP Gate's own clients and server are
// given this validator explicitly (session/client.ts, serve.ts), so the unit tests, which load the SDK unbundled,
// validate tool output schemas as the bundles do.
export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator } from '@modelcontextprotocol/client/validators/cf-worker';
export { default as process } from 'node:process';
/** In Node, a `fetch` TypeError is a network error, never CORS (as the SDK's Node shim says). */
export const CORS_IS_POSSIBLE = false;
