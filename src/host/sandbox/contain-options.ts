// The shape of one server's start: what startPlan (./contain.ts) is given (ContainOptions: the server, its plan,
// the policy's StartDecision, the injectable probes), what it returns (StartPlan: the launch, what the sandbox shows,
// the words for a failure, the cleanup) and the refusal it throws (ContainRefused, whose message is the log line).
// Only types and the error: nothing here decides how a server starts.
import type { ServerIdentity } from '../../policy/identity';
import type { StartDecision } from '../../policy/start';
import type { ServerReport } from '../../trust/report';
import type { FrontEndWords } from '../../trust/words';
import type { LaunchPlan } from '../../trust/plan/launch-plan';
import type { NpmOps } from '../../trust/packages/npm-lock';
import type { EgressEvent } from '../net/egress';
import type { LibcCarrier } from '../net/libc-carrier';
import type { Resolver } from '../net/resolve';
import type { CarrierOff, TransparentCarrier } from '../net/transparent-carrier';
import type { LimitMechanism, LimitReached, ServerLimits } from './limits';
import type { SandboxDescription, SandboxProbe } from './sandbox';
import type { StdioLaunch } from './stdio';

export class ContainRefused extends Error {}

export interface StartPlan {
  launch: StdioLaunch;
  /** Present when contained: what the server sees. */
  sandbox?: SandboxDescription;
  /** Contained without network: the rule that would give it the network (for a failure message). */
  networkRule?: string;
  /**
   * Contained with Unix sockets refused: what allows them, for a failure message — always said when a path the user
   * showed it is a socket (`shown`), otherwise when its error reads like a refused socket (refusedSocketError).
   */
  unixSocketsRefused?: { hint: string; shown: boolean };
  /** Present when the user's opt-out made this server run uncontained: where it is written. */
  optOut?: string;
  /**
   * Uncontained: how a stop reaches everything it started — its own PID namespace (bubblewrap), or, without
   * bubblewrap, its process group and descendants only (the line says so; a daemon that left both may survive).
   */
  processes?: { pidNamespace: true } | { pidNamespace: false; why: string };
  /** Contained: its limits (./limits.ts) — watch them once it runs, explain its exit — and the words for one reached. */
  limits?: { held: ServerLimits; reached(r: LimitReached): string };
  /** Under the load guard (./load-guard.ts): the report file its refusals are appended to (watch it once it runs). */
  guardReport?: string;
  /** Removes the verified copy and the server's cgroup (after the server stopped). */
  cleanup(): void;
}

export interface ContainOptions {
  server: ServerReport;
  who: ServerIdentity;
  project: string;
  plan: LaunchPlan & { executable: string };
  /** The environment the server gets (minimal + declared + env-bound secrets). */
  env: Record<string, string>;
  /** What the policy said at this start (src/policy/start.ts): the one road back to the policy. */
  decision: StartDecision;
  home: string;
  /** MCP Gate's own environment (for XDG_CACHE_HOME); this process's by default. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Injectable probe (tests); the real one otherwise. */
  probe?: () => SandboxProbe;
  /** Injectable limit mechanism (tests: the rlimits alone where this machine has a cgroup); the real one otherwise. */
  limits?: () => LimitMechanism;
  /** The front end's wording for the next step (src/trust/words.ts). */
  words?: FrontEndWords;
  /** Where the npm libraries run to install a locked tree again (the package worker, for the CLI and VS Code). */
  npm: NpmOps;
  /** Each connection through a contained server's network door (for the log). */
  onNetwork?: (e: EgressEvent) => void;
  /** The resolver the network door uses (tests); the system's otherwise. */
  resolver?: Resolver;
  /** The approval store's folder: the workspace manifest of a guarded server's approval is read from there. */
  storeDir?: string;
  /** MCP Gate's load guard files (dist/guard/); found beside the running bundle by default. */
  guardDir?: string;
  /** MCP Gate's network shim (dist/netshim/net-shim.cjs, ../net/net-shim.ts); found beside the running bundle by default, '' for none. */
  netShim?: string;
  /** The libc carrier (../net/libc-carrier.ts); found on this machine by default, '' for none. */
  libcCarrier?: LibcCarrier | '';
  /** The transparent carrier (../net/transparent-carrier.ts): on when this machine allows it by default, '' for none. */
  transparentCarrier?: TransparentCarrier | CarrierOff | '';
}
