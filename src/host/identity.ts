// The identity the policy sees for a server of a gate report: a server MCP Gate does not gate (user scope, trusted)
// is a user-scope server; every gated one — from the repository, or a user file only a repository imported — is a
// repository server of the report's project (its real path). Rules, secrets, exceptions and the sandbox settings
// are matched by it. It is the policy's view of a server; the server's identity and key (which declaration, for
// the store, the front ends and the cache folders) is src/trust/approval/server-ref.ts.
import type { ServerIdentity } from '../policy/identity';
import type { ServerReport } from '../trust/report';

export function serverIdentity(server: Pick<ServerReport, 'name' | 'gated'>, project: string): ServerIdentity {
  return server.gated ? { name: server.name, scope: 'repository', project } : { name: server.name, scope: 'user' };
}
