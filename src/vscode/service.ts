// The extension's one view of the gate: a report per workspace folder from the shared core (same catalogue,
// store and states as the CLI), kept fresh by a re-check every second that stats only what folder watches saw
// change (the whole stat walk at least every 30 s; a start always re-checks exactly) and by file and setting
// changes, with an event when anything a person would see changed. Also owns the log (mirrored to the output
// channel) and the secret source (SecretStorage). The first check runs right after activation, so that activate()
// only registers; whatever reads the gate before then (a provider VS Code asks at once) runs it there and then:
// nothing is ever read from an unchecked gate. The first check always fires onDidChange.
import * as vscode from 'vscode';
import { EventLog, type LoggedEvent } from '../host/log/log';
import { sameTarget, startExport, type LogExport } from '../host/log/otel-export';
import type { LogExportTarget } from '../trust/sources/log-export';
import { defaultMasker } from '../policy/mask';
import * as os from 'node:os';
import { serverIdentity } from '../host/identity';
import { sandboxFor } from '../policy/sandbox-profile';
import { optOutWhere } from '../host/sandbox/decision';
import { sandboxAvailable, type SandboxProbe } from '../host/sandbox/sandbox';
import { logLine } from '../report/log-line';
import { loadUserPolicies, type UserPolicy } from '../policy/user-policy';
import { currentMachine } from '../trust/sources/catalogue';
import { GateCache } from '../trust/gate';
import { FolderWatcher } from '../trust/sources/fswatch';
import { type GateInput, type GateReport, type ServerReport } from '../trust/report';
import { isWaiting } from '../trust/approval/states';
import { VSCODE_WORDS } from './words';
import { readUserSettings } from './settings';

export const SECRET_KEY_PREFIX = 'mcpGate.secret.';

export interface FolderState {
  folder: vscode.WorkspaceFolder;
  input: GateInput;
  report?: GateReport;
  error?: string;
}

export class GateService implements vscode.Disposable {
  readonly log: EventLog;
  /** Folder watches: the 1-second re-check stats only what changed (a start re-checks exactly: refresh(true)). */
  private readonly watcher = new FolderWatcher();
  private readonly cache = new GateCache(this.watcher);
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private states: FolderState[] = [];
  private checked = false;
  /** How long the first check took, in milliseconds (for the benchmark beside the activation time). */
  firstCheckMs?: number;
  private readonly firstCheck: NodeJS.Immediate;
  private timer?: NodeJS.Timeout;
  private disposables: vscode.Disposable[] = [];

  constructor(
    readonly storeDir: string,
    private readonly secretStorage: vscode.SecretStorage,
    readonly channel: vscode.LogOutputChannel,
  ) {
    this.log = new EventLog(storeDir, defaultMasker);
    this.log.onEvent((e) => this.mirror(e));
    this.log.onFailure((f) => {
      const why = vscode.l10n.t(
        'The exchange log {0} cannot be written ({1}). Tool calls go on without a record unless the user setting mcpGate.requireLog is on.',
        f.file,
        defaultMasker.mask(f.error.message),
      );
      this.channel.warn(why);
      void vscode.window.showWarningMessage(why);
    });
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.refresh()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.refresh(true)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('mcpGate')) this.refresh(true);
        // VS Code's own MCP settings change what VS Code starts outside the gate (src/vscode/routing.ts).
        else if (e.affectsConfiguration('chat.mcp')) this.changed.fire();
      }),
      vscode.workspace.onDidSaveTextDocument(() => this.refresh()),
    );
    this.firstCheck = setImmediate(() => this.checked || this.refresh());
    this.timer = setInterval(() => {
      this.refresh();
      if (this.lastProbe && !this.lastProbe.probe.ok) this.probeSandbox(); // bubblewrap installed meanwhile: say so
    }, 1000);
  }

  private mirror(e: LoggedEvent): void {
    const f = e as unknown as Record<string, unknown>;
    // The log output channel stamps each line with its own time: the event's is left out (one timestamp a line).
    const line = logLine(e, { time: false });
    if (f.outcome === 'refused_by_address' || f.outcome === 'redirected' || f.kind === 'gate.refuse' || f.kind === 'server.dropped')
      this.channel.warn(line);
    else this.channel.info(line);
  }

  /** Re-checks every folder; fires onDidChange when any report differs. `force` drops the cache first. */
  refresh(force = false): void {
    if (force) this.cache.clear();
    const first = !this.checked;
    const started = first ? performance.now() : 0;
    this.checked = true;
    const folders = vscode.workspace.workspaceFolders ?? [];
    const userSettings = readUserSettings();
    const machine = currentMachine();
    let differs = first || folders.length !== this.states.length;
    const next: FolderState[] = folders.map((folder, i) => {
      const input: GateInput = {
        projectDir: folder.uri.fsPath,
        storeDir: this.storeDir,
        machine,
        userSettings,
        masker: defaultMasker,
        words: VSCODE_WORDS,
        loadGuard: true,
      };
      const prev = this.states[i];
      try {
        const report = this.cache.get(input);
        if (!prev || prev.report !== report || prev.folder !== folder) differs = true;
        return { folder, input, report };
      } catch (e) {
        differs = true;
        return { folder, input, error: (e as Error).message };
      }
    });
    this.states = next;
    this.exportTo(next.find((s) => s.report)?.report?.logExport, machine.env);
    if (first) this.firstCheckMs = performance.now() - started;
    if (differs) this.changed.fire();
  }

  folders(): readonly FolderState[] {
    if (!this.checked) this.refresh();
    return this.states;
  }

  /** Whether the first check has run (before it, front ends show "checking" rather than run it early). */
  get ready(): boolean {
    return this.checked;
  }

  /** Runs `f` once the first check has run: now, if it has. */
  whenReady(f: () => void): vscode.Disposable {
    if (this.checked) {
      f();
      return new vscode.Disposable(() => undefined);
    }
    const sub = this.onDidChange(() => {
      sub.dispose();
      f();
    });
    return sub;
  }

  /** Every server of every folder, with its folder. */
  servers(): { folder: FolderState; server: ServerReport }[] {
    return this.folders().flatMap((f) => (f.report?.servers ?? []).map((server) => ({ folder: f, server })));
  }

  /** Servers a person must look at: pending or changed, from repository scope. */
  waiting(): { folder: FolderState; server: ServerReport }[] {
    return this.servers().filter((s) => isWaiting(s.server));
  }

  /** Local servers that would be contained but that the user opted out (`sandbox.servers[].off`), with where. */
  uncontained(): { folder: FolderState; server: ServerReport; where: string }[] {
    const out: { folder: FolderState; server: ServerReport; where: string }[] = [];
    for (const s of this.servers()) {
      if (s.server.definition?.type !== 'stdio' || s.server.state === 'blocked' || s.server.state === 'rejected') continue;
      const d = sandboxFor(this.policy(s.folder).sandbox, serverIdentity(s.server, s.folder.report!.project), os.homedir());
      if (d.kind === 'uncontained' && d.optOut) out.push({ ...s, where: optOutWhere(d.optOut) });
    }
    return out;
  }

  /**
   * When the sandbox cannot start here: why, the fix, and the servers of this window it keeps from starting (local
   * servers that must run contained and are not blocked or rejected). Undefined when it works or nothing needs it.
   */
  cannotStartHere():
    { reason: string; fix: string; install?: string; servers: { folder: FolderState; server: ServerReport }[] } | undefined {
    const probe = this.probeSandbox;
    const need = this.servers().filter(
      (s) =>
        s.server.definition?.type === 'stdio' &&
        s.server.state !== 'blocked' &&
        s.server.state !== 'rejected' &&
        sandboxFor(this.policy(s.folder).sandbox, serverIdentity(s.server, s.folder.report!.project), os.homedir()).kind !== 'uncontained',
    );
    if (!need.length) return undefined;
    const p = probe();
    return p.ok ? undefined : { reason: p.reason, fix: p.fix, install: p.install, servers: need };
  }

  /**
   * Whether bubblewrap can start a sandbox here (the VS Code tests put another machine's answer here). Cached; while
   * bwrap is missing from PATH (a cheap check: no process is started) it is looked for again every 5 s, so that
   * installing it ("MCP Gate: Install the Sandbox…") is seen without a reload.
   */
  probeSandbox: () => SandboxProbe = () => {
    const last = this.lastProbe;
    if (last && (last.probe.ok || last.probe.install === undefined || Date.now() - last.at < 5000)) return last.probe;
    const probe = sandboxAvailable({ refresh: last !== undefined });
    this.lastProbe = { at: Date.now(), probe };
    if (last && !last.probe.ok && probe.ok) this.changed.fire();
    return probe;
  };
  private lastProbe?: { at: number; probe: SandboxProbe };

  /**
   * The policy in force for a folder: loaded from its report's configuration layers, once per report (the re-check
   * keeps the report while nothing changed, and makes a new one when a configuration file changes). One rule list
   * per report lets a running server keep its call verdicts until the policy changes (src/host/session/call.ts).
   */
  policy(folder: FolderState): UserPolicy {
    const layers = folder.report?.userPolicyLayers;
    if (!layers) return loadUserPolicies([]);
    let p = this.policies.get(layers);
    if (!p) {
      p = loadUserPolicies(layers);
      this.policies.set(layers, p);
    }
    return p;
  }
  private readonly policies = new WeakMap<object, UserPolicy>();

  /** Secret values live in SecretStorage; every value read is registered for masking before use. */
  readonly secrets = async (name: string): Promise<string | undefined> => {
    const v = await this.secretStorage.get(SECRET_KEY_PREFIX + name);
    if (v) defaultMasker.add(v);
    return v || undefined;
  };

  async setSecret(name: string, value: string): Promise<void> {
    defaultMasker.add(value);
    await this.secretStorage.store(SECRET_KEY_PREFIX + name, value);
  }

  async clearSecret(name: string): Promise<void> {
    await this.secretStorage.delete(SECRET_KEY_PREFIX + name);
  }

  /** The log's export (src/host/log/otel-export.ts) and the target it sends to. */
  private exporting: { target: LogExportTarget; export?: LogExport } | undefined;

  /**
   * Exports the log to `target` (the administrator's "logExport", else the user's: the same for every folder), or
   * stops exporting; the export in force is restarted only when the target changed.
   */
  private exportTo(target: LogExportTarget | undefined, env: Readonly<Record<string, string | undefined>>): void {
    if (sameTarget(this.exporting?.target, target)) return;
    void this.exporting?.export?.shutdown();
    this.exporting = undefined;
    if (!target) return;
    const got = startExport(target, env, defaultMasker);
    if ('problem' in got) this.channel.warn(vscode.l10n.t('The exchange log is not exported: {0}', got.problem));
    else {
      got.export.attach(this.log);
      this.channel.info(vscode.l10n.t('The exchange log is exported to {0} (set in {1}).', target.endpoint, target.from));
    }
    this.exporting = { target, ...('export' in got ? { export: got.export } : {}) };
  }

  /** Sends what is left of the export, at most a few seconds (deactivation waits for it). */
  async closeExport(): Promise<void> {
    this.log.flush();
    await this.exporting?.export?.shutdown();
  }

  dispose(): void {
    void this.closeExport();
    clearImmediate(this.firstCheck);
    if (this.timer) clearInterval(this.timer);
    this.watcher.close();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}
