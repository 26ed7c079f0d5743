// Public surface of the remote (streamable HTTP) network half of src/host, SPEC §5: address policy, checked
// resolution, the pinned undici agent, the guarded fetch for the MCP SDK, and their typed errors.

export {
  checkAddress,
  classifyAddress,
  describe as describeAddress,
  parseIpLiteral,
  type AddressInfo,
  type AddressPolicy,
  type AddressRange,
  type AddressVerdict,
  type LocalDevException,
} from './address';
export { MAX_ADDRESSES, resolveChecked, systemResolver, type CheckedHost, type ResolveOptions, type Resolver } from './resolve';
export { createPinnedAgent, type PinnedAgentOptions, type PinnedConnection } from './pinned-agent';
export {
  createGuardedFetch,
  DEFAULT_TIMEOUT_MS,
  MAX_REPLY_BYTES,
  validateHeaders,
  type GuardedFetch,
  type GuardedFetchOptions,
  type Observation,
} from './guarded-fetch';
export { GATE_RPC_ERROR_CODE, type RpcCall } from './reply-guard';
export * from './errors';
