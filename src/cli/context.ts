// What every CLI command is given: the parsed options and arguments, the machine, the gate input and store, the
// log, and the helpers commands share (argument checks, the user's policy, a session through the gate).
import * as path from 'node:path';
import { currentMachine, gateConfigPath, type Machine } from '../trust/sources/catalogue';
import { GateRefusal } from '../trust/approval/approvals';
import { evaluateGate } from '../trust/gate';
import { findServer, type GateInput, type GateReport, type ServerReport } from '../trust/report';
import { findStoreDir, type StoreChoice } from '../trust/approval/store-location';
import { defaultMasker } from '../policy/mask';
import { loadUserPolicies, type UserPolicy } from '../policy/user-policy';
import { EventLog } from '../host/log/log';
import { startExport, type LogExport } from '../host/log/otel-export';
import { Session } from '../host/session';
import { sandboxAvailable, type SandboxProbe } from '../host/sandbox/sandbox';
import type { GrantsContext } from '../report/render';
import { err, setMask } from './output';
import { closeLastOnSignal, serversMayStart, trackSession } from './signals';
import type { CommandId } from './usage';
import { cliWords, hintFlags, SECRET_ENV_PREFIX } from './words';
import type { FrontEndWords } from '../trust/words';
import { workerOps } from '../host/workers/package-worker';
import { installedTree, type NpmOps } from '../trust/packages/npm-lock';

/**
 * Where the CLI runs the npm libraries: the package worker beside it (dist/lock-worker.js), as VS Code does, so
 * the CLI's own bundle carries none of them. A start whose approved tree is in the cache and verifies needs no npm
 * library: the CLI checks that here and starts no worker (VS Code hashes in the worker too, off its extension host).
 */
const worker = workerOps(path.join(__dirname, 'lock-worker.js'));
export const packageOps: NpmOps = {
  resolve: worker.resolve,
  install: async (lock, cacheRoot, signal) => installedTree(lock, cacheRoot) ?? worker.install(lock, cacheRoot, signal),
};

/** A mistake in how the command was called: exit code 2 with the usage text. */
export class UsageError extends Error {}

/** The options `parseArgs` gives (see main.ts). */
export interface Options {
  project?: string;
  store?: string;
  source?: string;
  json?: boolean;
  yes?: boolean;
  managed?: boolean;
  all?: boolean;
  help?: boolean;
  args?: string;
  server?: string;
  outcome?: string;
  scope?: string;
  verify?: boolean;
  /** `check`: the categories that fail it (./check.ts). */
  'fail-on'?: string;
  /** `approvals export`: the team file, the SSH key that signs, the signer's principal (./team.ts). */
  out?: string;
  key?: string;
  as?: string;
  /** `check`: a team file whose signed approvals count (./team.ts). */
  team?: string;
  /** `approvals import`, `check --team`: the allowed-signers file (default beside the user configuration). */
  'allowed-signers'?: string;
  /** `check`: folders of the checkout not walked for projects of their own (./check.ts). */
  skip?: string[];
}

export interface Ctx {
  command: CommandId;
  o: Options;
  /** The positional arguments after the command. */
  rest: string[];
  machine: Machine;
  input: GateInput;
  store: StoreChoice;
  /** How the store folder was found, in words. */
  storeHow: string;
  log: EventLog;
  /** The CLI's wording of next steps, carrying this command's --project and --store (./words.ts hintFlags). */
  words: FrontEndWords;
  /** Those flags alone, for a hint a command writes itself. */
  flags: string;
  /** The one server name the command takes (a usage error otherwise). */
  needName(verb: string): string;
  /** A usage error when the command was given arguments. */
  noPositionals(verb: string): void;
  policyOf(report: GateReport): UserPolicy;
  /** What a rendering of one server needs to show its grants and sandbox: project, policy, HOME, bubblewrap here. */
  grantsOf(report: GateReport): GrantsContext;
  /** Whether bubblewrap can start a sandbox on this machine (probed when first asked). */
  sandboxProbe(): SandboxProbe;
  /** A secret's value from the CLI's environment (MCP_GATE_SECRET_<NAME>). */
  secrets(name: string): Promise<string | undefined>;
  /** Sends what is left of the log's export (its "logExport"), at most a few seconds; the CLI calls it before exiting. */
  closeExport(): Promise<void>;
  /**
   * Starts the log's export for a command that writes gate events without a session (reject, reset, a team
   * import): the events it writes next reach the collector too. A command that reads the policy has started it.
   */
  exportLog(): void;
  /** A session through the gate with just this server (started if the gate lets it). */
  startSession(name: string): Promise<{ report: GateReport; policy: UserPolicy; session: Session; server: ServerReport }>;
}

/**
 * The log's export (src/host/log/otel-export.ts), started from the first report a command reads the policy from (a
 * session, `serve`, approve) or when it writes a gate event (exportLog): the administrator's "logExport" or the
 * user's. A stop by a signal sends what is left too (./signals.ts closeLastOnSignal).
 */
function exportOnce(
  log: EventLog,
  machine: Machine,
): { from(report: GateReport): void; fromGate(input: GateInput): void; close(): Promise<void> } {
  let exporting: LogExport | undefined;
  let checked = false;
  const close = async () => {
    log.flush();
    await exporting?.shutdown();
  };
  return {
    fromGate(input) {
      try {
        this.from(evaluateGate(input));
      } catch {
        // what the gate cannot read the command reports itself; a decision is never held up by its export
      }
    },
    from(report) {
      if (checked || !report.logExport) return;
      checked = true;
      const got = startExport(report.logExport, machine.env, defaultMasker);
      if ('problem' in got) err(`warning: the exchange log is not exported: ${got.problem}`);
      else {
        (exporting = got.export).attach(log);
        closeLastOnSignal({ close });
      }
    },
    close,
  };
}

export function createCtx(command: CommandId, o: Options, rest: string[]): Ctx {
  const machine = currentMachine();
  // Every value that could be sent is masked in everything the CLI writes, before anything is written.
  for (const [k, v] of Object.entries(machine.env)) if (k.startsWith(SECRET_ENV_PREFIX) && v) defaultMasker.add(v);
  setMask((t) => defaultMasker.mask(t));
  const store = findStoreDir(machine, o.store);
  const flags = hintFlags(o, (p) => path.resolve(p));
  const words = cliWords(flags);
  const input: GateInput = {
    projectDir: path.resolve(o.project ?? process.cwd()),
    storeDir: store.dir,
    machine,
    masker: defaultMasker,
    words,
    loadGuard: true,
  };
  const storeHow = {
    flag: 'chosen by --store',
    env: 'chosen by MCP_GATE_STORE',
    found: "the MCP Gate extension's store",
    default: 'where the VS Code extension keeps it',
  }[store.how];
  const log = new EventLog(store.dir, defaultMasker);
  log.onFailure((f) =>
    err(
      `warning: the exchange log ${f.file} cannot be written (${f.error.message}); calls go on without a record unless "requireLog": true is set in ${gateConfigPath(machine)}`,
    ),
  );
  const secretSource = async (name: string) => machine.env[SECRET_ENV_PREFIX + name] || undefined;
  const exporting = exportOnce(log, machine);
  const policyOf = (report: GateReport): UserPolicy => {
    exporting.from(report);
    return loadUserPolicies(report.userPolicyLayers);
  };
  const sandboxProbe = () => sandboxAvailable();
  const grantsOf = (report: GateReport): GrantsContext => ({
    project: report.project,
    policy: policyOf(report),
    words,
    home: machine.home,
    sandbox: sandboxProbe(),
    storeDir: input.storeDir,
  });
  return {
    command,
    o,
    rest,
    machine,
    input,
    store,
    storeHow,
    log,
    words,
    flags,
    policyOf,
    exportLog: () => exporting.fromGate(input),
    grantsOf,
    sandboxProbe,
    secrets: secretSource,
    closeExport: exporting.close,
    needName(verb) {
      if (rest.length !== 1) throw new UsageError(`mcp-gate ${verb} takes exactly one server name`);
      return rest[0];
    },
    noPositionals(verb) {
      if (rest.length) throw new UsageError(`mcp-gate ${verb} takes no arguments (got ${rest.join(' ')})`);
    },
    async startSession(name) {
      const report = evaluateGate(input);
      const policy = policyOf(report);
      if (report.escapeHatch)
        log.write({
          kind: 'gate.escape-hatch',
          project: report.project,
          detail: 'MCP_GATE_ALLOW_PROJECT=1 trusts every repository server',
        });
      const found = findServer(report, name, o.source, words);
      if (!found.ok) throw new GateRefusal(found.message);
      serversMayStart();
      const started = await Session.start(
        {
          report,
          policy,
          log,
          storeDir: store.dir,
          secrets: secretSource,
          env: machine.env,
          npm: packageOps,
          clientName: 'mcp-gate-cli',
          words,
        },
        [found.server],
      );
      // A signal closes the session; closing it normally unregisters it.
      const untrack = trackSession(started);
      const session = Object.assign(started, { close: () => Session.prototype.close.call(started).finally(untrack) });
      for (const n of session.notes) err(n);
      return { report, policy, session, server: found.server };
    },
  };
}
