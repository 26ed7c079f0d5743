// Chat integration: approved servers reach VS Code chat only through MCP Gate. An MCP server definition provider
// offers each allowed server as a stdio definition that starts MCP Gate's relay (src/host/gateway/relay.ts), which carries
// the messages to the gateway's local endpoint in this extension host (src/host/gateway/gateway.ts); where
// `chat.mcp.allowedServers` is set (policy or user settings), as an HTTP definition of the gateway's door on
// 127.0.0.1 instead (src/host/gateway/gateway-http.ts), because VS Code matches an extension's stdio definition there by
// name only, which a repository can copy, and an HTTP one by URL. Neither provided definition carries the endpoint
// or a token (VS Code caches those). resolveMcpServerDefinition re-checks approval, digest, Workspace Trust, host
// rule and secrets at every start, opens the server's session, and only then adds the relay's environment (or the
// bearer token). A refusal returns undefined — which VS Code does silently — so MCP Gate says why itself. A session
// whose server a change on disk stopped (src/host/session/watch.ts) has the gate checked again at once, so the
// window shows it changed and VS Code is no longer offered it; a call to an ended session is told why it ended.
// (The relay was chosen by measurement: bench group `gateway`.)
import * as vscode from 'vscode';
import { stateWords } from '../trust/approval/gate-state';
import { Gateway, RELAY_SCRIPT, type GatewayTarget } from '../host/gateway/gateway';
import { HttpGateway } from '../host/gateway/gateway-http';
import type { RelayLaunch } from '../host/gateway/gateway-client';
import { MAX_SERVERS, Session } from '../host/session';
import type { ServerReport } from '../trust/report';
import type { NpmOps } from '../trust/packages/npm-lock';
import { refOf, serverKey } from '../trust/approval/server-ref';
import { mayRun } from '../trust/approval/states';
import { allowingRules } from '../policy/decide';
import { ALLOWED_KEY } from '../trust/sources/vscode-own';
import { VSCODE_WORDS } from './words';
import { prompts } from './prompts';
import type { FolderState, GateService } from './service';

export const PROVIDER_ID = 'mcpGate';

/** True where VS Code groups same-labelled servers and may switch all but one off (the setting exists from 1.139). */
export function collisionGrouping(): boolean {
  return vscode.workspace.getConfiguration().inspect('chat.mcp.collisionBehavior')?.defaultValue !== undefined;
}

/**
 * The label of a gated server's definition (VS Code's id for it is `mcp-gate.mcp-gate/<label>`): its name, with its
 * source when two servers of the window share the name. VS Code 1.139 groups servers of the same label across
 * sources and, under chat.mcp.collisionBehavior "disable" (its default), keeps only the first registered enabled;
 * VS Code's own `.vscode/mcp.json` and `.mcp.json` copies register before any provider, so a gated server labelled
 * like them would be the one switched off. Where that grouping exists the label says it is gated, and so never
 * equals a server VS Code reads by itself; its tools are still named after the server (the gateway answers
 * initialize with the server's name: host/gateway/front.ts serverInfoName).
 */
export function gatedLabel(name: string, sameNamed?: string): string {
  return (sameNamed !== undefined ? `${name} (${sameNamed})` : name) + (collisionGrouping() ? ' · MCP Gate' : '');
}

/**
 * True where `chat.mcp.allowedServers` is set in the user's settings or by policy (an application setting: a
 * repository's value is not applied, and one is not read here): VS Code then lets through only what an entry
 * matches, and MCP Gate's servers are offered on the HTTP door its URL entry names.
 */
export function matchedByUrl(): boolean {
  const c = vscode.workspace.getConfiguration();
  const i = c.inspect(ALLOWED_KEY);
  if (Array.isArray(i?.globalValue)) return true;
  // a policy's value shows only in get(); without a repository value, get() is the policy's (or the default)
  return i?.workspaceValue === undefined && i?.workspaceFolderValue === undefined && Array.isArray(c.get(ALLOWED_KEY));
}

type Entry = { folder: FolderState; server: ServerReport };

function keyOf(x: Entry): string {
  return Buffer.from(serverKey(refOf(x.folder.folder.uri.fsPath, x.server))).toString('base64url');
}

export class GatewayProvider implements vscode.McpServerDefinitionProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeMcpServerDefinitions = this.changed.event;
  private gateway?: Gateway;
  private http?: HttpGateway;
  private readonly configListener: vscode.Disposable;
  private readonly sessions = new Map<string, Session>();
  /** Why the session of a key was ended while VS Code may still call it (what its next call is told). */
  private readonly ended = new Map<string, string>();

  /** `npm`: where a pinned package's tree is installed again when it must be (the package worker, ./resolving.ts). */
  constructor(
    private readonly service: GateService,
    private readonly npm: NpmOps,
  ) {
    // a switch of chat.mcp.allowedServers switches the door VS Code is offered
    this.configListener = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(ALLOWED_KEY)) this.changed.fire();
    });
  }

  /** Called after any decision: VS Code asks for the definitions again; sessions of servers no longer allowed end. */
  decisionsChanged(): void {
    const allowed = new Set(this.offered().map(keyOf));
    for (const [key, s] of this.sessions) {
      if (!allowed.has(key)) {
        const now = this.service.servers().find((e) => keyOf(e) === key)?.server;
        const name = s.servers()[0];
        const why =
          (name !== undefined ? s.changedOnDisk(name) : undefined) ??
          (now ? `it is ${now.state}: ${now.reason}` : 'it is no longer declared');
        this.ended.set(key, why);
        this.sessions.delete(key);
        void s.close();
      }
    }
    this.changed.fire();
  }

  private offered(): Entry[] {
    return this.service.servers().filter((x) => mayRun(x.server, vscode.workspace.isTrusted));
  }

  private async ensureGateway(): Promise<Gateway> {
    if (!this.gateway) {
      const gateway = new Gateway({ log: this.service.log, target: (key) => this.target(key) });
      await gateway.start();
      this.gateway = gateway;
    }
    return this.gateway;
  }

  private async ensureHttp(): Promise<HttpGateway> {
    if (!this.http) {
      const http = new HttpGateway({ log: this.service.log, target: (key) => this.target(key) });
      await http.start();
      this.http = http;
    }
    return this.http;
  }

  async provideMcpServerDefinitions(): Promise<vscode.McpServerDefinition[]> {
    const offered = this.offered();
    if (!offered.length) return [];
    const byUrl = matchedByUrl();
    const gateway = byUrl ? undefined : await this.ensureGateway();
    const http = byUrl ? await this.ensureHttp() : undefined;
    const names = new Map<string, number>();
    for (const x of offered) names.set(x.server.name, (names.get(x.server.name) ?? 0) + 1);
    return offered.map((x) => {
      const labelText = gatedLabel(x.server.name, (names.get(x.server.name) ?? 0) > 1 ? x.server.source : undefined);
      const version = x.server.pinned?.digest.slice(7, 19) ?? 'user';
      if (http) return new vscode.McpHttpServerDefinition(labelText, vscode.Uri.parse(http.urlFor(keyOf(x))), {}, version);
      const relay = gateway!.relayCommand(keyOf(x));
      return new vscode.McpStdioServerDefinition(labelText, relay.command, relay.args, relay.env, version);
    });
  }

  async resolveMcpServerDefinition(def: vscode.McpServerDefinition): Promise<vscode.McpServerDefinition | undefined> {
    const refuse = (why: string) => {
      void vscode.window.showWarningMessage(vscode.l10n.t('MCP Gate did not start "{0}": {1}', def.label, why));
      return undefined;
    };
    const who = `VS Code asked to start ${def.label}`;
    if (def instanceof vscode.McpHttpServerDefinition) {
      const key = decodeURIComponent(def.uri.path.replace(/^\/mcp\//, ''));
      const ready = await this.ready(key, who);
      if (typeof ready === 'string') return refuse(ready);
      const http = await this.ensureHttp();
      def.headers = { ...def.headers, Authorization: `Bearer ${http.tokenFor(key)}` };
      return def;
    }
    if (!(def instanceof vscode.McpStdioServerDefinition) || def.args[0] !== RELAY_SCRIPT || def.args.length !== 2) {
      return refuse(this.refused(who, "it is not one of MCP Gate's definitions"));
    }
    const ready = await this.ready(def.args[1], who);
    if (typeof ready === 'string') return refuse(ready);
    def.env = { ...def.env, ...ready.gateway.relayEnv(def.args[1]) };
    return def;
  }

  /** The servers VS Code is offered now (what "Try a Tool…" offers too). */
  offeredServers(): Entry[] {
    return this.offered();
  }

  /**
   * How to reach an offered server as VS Code's start does (the same checks, the same session, the relay and its
   * environment), for a client that then asks as chat does (src/host/gateway/gateway-client.ts); or why it was not started. `hidden`: the
   * tools the policy hides from chat, each with the rule that would allow it.
   */
  async endpoint(
    x: Entry,
    who: string,
  ): Promise<{ launch: RelayLaunch; hidden(): Array<{ name: string; allow: string[]; reason: string }> } | string> {
    const key = keyOf(x);
    const ready = await this.ready(key, who);
    if (typeof ready === 'string') return ready;
    const session = this.sessions.get(key);
    // a decision made meanwhile may have ended the session it opened: nothing is called then
    if (!session) return this.refused(who, this.ended.get(key) ?? 'its session ended before the call');
    const name = session.servers()[0];
    return {
      launch: { ...ready.gateway.relayCommand(key), env: ready.gateway.relayEnv(key) },
      hidden: () =>
        session
          .tools()
          .filter((t) => session.decisionFor(name, t.name) === 'deny')
          .map((t) => {
            const v = session.verdictFor(name, t.name);
            return { name: t.name, allow: allowingRules(v), reason: v.reason };
          }),
    };
  }

  /** Logs a refusal to start and returns its reason. */
  private refused(who: string, why: string): string {
    this.service.log.write({ kind: 'gate.refuse', detail: `${who}: ${why}` });
    return why;
  }

  /**
   * Every start goes through here: the gate is checked again (approval, digest, Workspace Trust, host rule,
   * secrets), the server's session opened (or the open one kept), and the gateway started. A refusal is logged and
   * its reason returned.
   */
  private async ready(key: string, who: string): Promise<{ gateway: Gateway } | string> {
    const refuse = (why: string) => this.refused(who, why);
    this.service.refresh(true);
    const x = this.offered().find((e) => keyOf(e) === key);
    if (!x) {
      const any = this.service.servers().find((e) => keyOf(e) === key);
      if (!any) return refuse('the server is no longer declared');
      if (mayRun(any.server, true)) return refuse('the workspace is in Restricted Mode');
      return refuse(`it is ${vscode.l10n.t(stateWords(any.server))}: ${any.server.reason}`);
    }
    let session = this.sessions.get(key);
    if (!session && this.sessions.size >= MAX_SERVERS) {
      return refuse(
        `at most ${MAX_SERVERS} servers run through MCP Gate at once (running: ${[...this.sessions.values()].flatMap((s) => s.servers()).join(', ')}); stop one first`,
      );
    }
    // A session whose server a change on disk stopped starts again, on what the gate approves now.
    if (!session || !session.servers().length || session.changedOnDisk(session.servers()[0]) !== undefined) {
      await session?.close();
      session = await Session.start(
        {
          report: x.folder.report!,
          policy: () => {
            const now = this.service.folders().find((f) => f.folder.uri.fsPath === x.folder.folder.uri.fsPath);
            return this.service.policy(now ?? x.folder);
          },
          log: this.service.log,
          storeDir: this.service.storeDir,
          secrets: this.service.secrets,
          asker: (q) => prompts.ask(q),
          env: process.env,
          reservedToolNames: vscode.lm.tools.map((t) => t.name),
          clientName: 'mcp-gate-vscode',
          workspaceTrusted: vscode.workspace.isTrusted,
          words: VSCODE_WORDS,
          npm: this.npm,
          // A file of its closure changed on disk while it ran (src/host/session/watch.ts): the session stopped it;
          // the gate is checked again now, not at the next tick, so the status bar, the panel and VS Code's list
          // (through onDidChange: decisionsChanged) show it as changed at once.
          onClosureChanged: () => this.service.refresh(true),
        },
        [x.server],
      );
      if (!session.servers().length) {
        const why = session.notes.join('; ') || 'it could not be started';
        await session.close();
        this.service.refresh(true);
        return refuse(why);
      }
      this.sessions.set(key, session);
      this.ended.delete(key);
    }
    return { gateway: await this.ensureGateway() };
  }

  private async target(key: string): Promise<GatewayTarget | { refused: string }> {
    const session = this.sessions.get(key);
    if (!session) return { refused: this.ended.get(key) ?? 'this server was not started through MCP Gate (start it again)' };
    const name = session.servers()[0];
    return {
      tools: () => session.tools(),
      listed: (tool) => session.decisionFor(name, tool) !== 'deny',
      call: (tool, args) => session.call(name, tool, args),
      instructions: session.instructionsOf(name),
      serverName: name,
    };
  }

  dispose(): void {
    for (const s of this.sessions.values()) void s.close();
    this.sessions.clear();
    void this.gateway?.close();
    void this.http?.close();
    this.configListener.dispose();
    this.changed.dispose();
  }
}
