// Chat integration: approved servers reach VS Code chat only through MCP Gate. An MCP server definition provider
// offers each allowed server as an HTTP endpoint of the in-extension-host gateway (no token in the provided
// definition: VS Code caches those); resolveMcpServerDefinition re-checks approval, digest, Workspace Trust, host
// rule and secrets at every start, opens the server's session, and only then adds the bearer token. A refusal
// returns undefined — which VS Code does silently — so MCP Gate says why itself. A session whose server a change
// on disk stopped (src/host/session/watch.ts) has the gate checked again at once, so the window shows it changed
// and VS Code is no longer offered it; a call to an ended session is told why it ended.
import * as vscode from 'vscode';
import { stateWords } from '../trust/approval/gate-state';
import { Gateway, type GatewayTarget } from '../host/gateway';
import { MAX_SERVERS, Session } from '../host/session';
import type { ServerReport } from '../trust/report';
import type { NpmOps } from '../trust/packages/npm-lock';
import { refOf, serverKey } from '../trust/approval/server-ref';
import { mayRun } from '../trust/approval/states';
import { allowingRules } from '../policy/decide';
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
 * initialize with the server's name: host/front.ts serverInfoName).
 */
export function gatedLabel(name: string, sameNamed?: string): string {
  return (sameNamed !== undefined ? `${name} (${sameNamed})` : name) + (collisionGrouping() ? ' · MCP Gate' : '');
}

type Entry = { folder: FolderState; server: ServerReport };

function keyOf(x: Entry): string {
  return Buffer.from(serverKey(refOf(x.folder.folder.uri.fsPath, x.server))).toString('base64url');
}

export class GatewayProvider implements vscode.McpServerDefinitionProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeMcpServerDefinitions = this.changed.event;
  private gateway?: Gateway;
  private readonly sessions = new Map<string, Session>();
  /** Why the session of a key was ended while VS Code may still call it (what its next call is told). */
  private readonly ended = new Map<string, string>();

  /** `npm`: where a pinned package's tree is installed again when it must be (the package worker, ./resolving.ts). */
  constructor(private readonly service: GateService, private readonly npm: NpmOps) {}

  /** Called after any decision: VS Code asks for the definitions again; sessions of servers no longer allowed end. */
  decisionsChanged(): void {
    const allowed = new Set(this.offered().map(keyOf));
    for (const [key, s] of this.sessions) {
      if (!allowed.has(key)) {
        const now = this.service.servers().find((e) => keyOf(e) === key)?.server;
        const name = s.servers()[0];
        const why = (name !== undefined ? s.changedOnDisk(name) : undefined)
          ?? (now ? `it is ${now.state}: ${now.reason}` : 'it is no longer declared');
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
      this.gateway = new Gateway({ log: this.service.log, target: (key) => this.target(key) });
      await this.gateway.start();
    }
    return this.gateway;
  }

  async provideMcpServerDefinitions(): Promise<vscode.McpServerDefinition[]> {
    const offered = this.offered();
    if (!offered.length) return [];
    const gateway = await this.ensureGateway();
    const names = new Map<string, number>();
    for (const x of offered) names.set(x.server.name, (names.get(x.server.name) ?? 0) + 1);
    return offered.map((x) => {
      const labelText = gatedLabel(x.server.name, (names.get(x.server.name) ?? 0) > 1 ? x.server.source : undefined);
      return new vscode.McpHttpServerDefinition(labelText, vscode.Uri.parse(gateway.urlFor(keyOf(x))), {}, x.server.pinned?.digest.slice(7, 19) ?? 'user');
    });
  }

  async resolveMcpServerDefinition(def: vscode.McpServerDefinition): Promise<vscode.McpServerDefinition | undefined> {
    const refuse = (why: string) => {
      void vscode.window.showWarningMessage(vscode.l10n.t('MCP Gate did not start "{0}": {1}', def.label, why));
      return undefined;
    };
    if (!(def instanceof vscode.McpHttpServerDefinition)) return refuse(this.refused(`VS Code asked to start ${def.label}`, 'it is not one of MCP Gate\'s definitions'));
    const key = decodeURIComponent(def.uri.path.replace(/^\/mcp\//, ''));
    const ready = await this.ready(key, `VS Code asked to start ${def.label}`);
    if (typeof ready === 'string') return refuse(ready);
    def.headers = { ...def.headers, Authorization: `Bearer ${ready.token}` };
    return def;
  }

  /** The servers VS Code is offered now (what "Try a Tool…" offers too). */
  offeredServers(): Entry[] {
    return this.offered();
  }

  /**
   * The gateway endpoint of an offered server, started as VS Code's start does (the same checks, the same session),
   * for a client that then asks as chat does (src/host/gateway-client.ts); or why it was not started. `hidden`: the
   * tools the policy hides from chat, each with the rule that would allow it.
   */
  async endpoint(x: Entry, who: string): Promise<{ url: string; token: string; hidden(): Array<{ name: string; allow: string[]; reason: string }> } | string> {
    const key = keyOf(x);
    const ready = await this.ready(key, who);
    if (typeof ready === 'string') return ready;
    const session = this.sessions.get(key);
    // a decision made meanwhile may have ended the session it opened: nothing is called then
    if (!session) return this.refused(who, this.ended.get(key) ?? 'its session ended before the call');
    const name = session.servers()[0];
    return {
      url: ready.gateway.urlFor(key),
      token: ready.token,
      hidden: () => session.tools().filter((t) => session.decisionFor(name, t.name) === 'deny').map((t) => {
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
  private async ready(key: string, who: string): Promise<{ gateway: Gateway; token: string } | string> {
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
      return refuse(`at most ${MAX_SERVERS} servers run through MCP Gate at once (running: ${[...this.sessions.values()].flatMap((s) => s.servers()).join(', ')}); stop one first`);
    }
    // A session whose server a change on disk stopped starts again, on what the gate approves now.
    if (!session || !session.servers().length || session.changedOnDisk(session.servers()[0]) !== undefined) {
      await session?.close();
      session = await Session.start({
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
      }, [x.server]);
      if (!session.servers().length) {
        const why = session.notes.join('; ') || 'it could not be started';
        await session.close();
        this.service.refresh(true);
        return refuse(why);
      }
      this.sessions.set(key, session);
      this.ended.delete(key);
    }
    const gateway = await this.ensureGateway();
    return { gateway, token: gateway.token };
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
    this.changed.dispose();
  }
}
