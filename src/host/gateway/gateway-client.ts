// A client of MCP Gate's own chat gateway (./gateway.ts) that asks as VS Code chat does: it starts the relay as
// VS Code starts a gated server's stdio definition (./relay.ts, with the endpoint and token a start is given), then
// sends the methods chat sends (initialize, notifications/initialized, tools/list, tools/call) as newline-delimited
// JSON-RPC. "MCP Gate: Try a Tool…" uses it, so the call a person tries takes the whole path a chat call takes: the
// relay, the gateway's checks, the listing under the policy, the session's call-time check and its log lines. Each
// exchange is bounded in time and size; close ends the relay.
import { spawn, type ChildProcess } from 'node:child_process';
import { LATEST_PROTOCOL_VERSION, type CallToolResult } from '@modelcontextprotocol/client';

/** A tool as the gateway lists it (what chat would be shown). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/** How the relay is started: what VS Code runs for a gated server's stdio definition, its start's environment added. */
export interface RelayLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export const GATEWAY_CLIENT_TIMEOUT_MS = 60_000;
const MAX_REPLY_BYTES = 16 * 1024 * 1024;

type Pending = { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout };

export class GatewayClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffered = '';
  private ended?: string;
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly timeoutMs: number,
  ) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => this.data(text));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (t: string) => {
      if (this.stderr.length < 4096) this.stderr += t;
    });
    child.on('error', (e) => this.end(`the relay could not be started: ${e.message}`));
    child.on('exit', () => this.end(`the relay ended${this.stderr.trim() ? `: ${this.stderr.trim().slice(0, 500)}` : ''}`));
  }

  /** Starts the relay and opens an MCP session through it (initialize, then notifications/initialized). */
  static async connect(launch: RelayLaunch, clientName: string, timeoutMs = GATEWAY_CLIENT_TIMEOUT_MS): Promise<GatewayClient> {
    const child = spawn(launch.command, launch.args, { env: { ...process.env, ...launch.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const c = new GatewayClient(child, timeoutMs);
    try {
      resultOf(
        await c.request('initialize', {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: clientName, version: '0.1.0' },
        }),
      );
      c.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    } catch (e) {
      await c.close();
      throw e;
    }
    return c;
  }

  /** The tools the gateway lists: the ones the policy does not deny, as chat is shown them. */
  async listTools(): Promise<ListedTool[]> {
    const r = resultOf(await this.request('tools/list', {})) as { tools?: unknown };
    return Array.isArray(r.tools) ? (r.tools as ListedTool[]) : [];
  }

  /** One tool call, answered by the server or refused by MCP Gate (a refusal is a tool error, as chat shows it). */
  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return resultOf(await this.request('tools/call', { name, arguments: args })) as CallToolResult;
  }

  /** Ends the MCP session: the relay's stdin closes, as when VS Code stops a server; killed if it lingers. */
  async close(): Promise<void> {
    this.end('the client closed');
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => this.child.kill('SIGKILL'), 2000);
      this.child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      this.child.stdin?.end();
    });
  }

  private send(m: unknown): void {
    if (this.child.stdin?.writable) this.child.stdin.write(`${JSON.stringify(m)}\n`);
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (this.ended) return Promise.reject(new Error(this.ended));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the gateway did not answer ${method} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  private data(text: string): void {
    this.buffered += text;
    if (this.buffered.length > MAX_REPLY_BYTES) return this.end(`the gateway's reply is over ${MAX_REPLY_BYTES} bytes`);
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) !== -1) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      if (!line.trim()) continue;
      let m: { id?: unknown; error?: { message?: unknown } };
      try {
        m = JSON.parse(line) as typeof m;
      } catch {
        return this.end('the gateway sent a line that is not JSON');
      }
      const p = typeof m.id === 'number' ? this.pending.get(m.id) : undefined;
      if (p) {
        this.pending.delete(m.id as number);
        clearTimeout(p.timer);
        p.resolve(m);
      } else if (m.id === null && m.error) this.end(`the gateway refused: ${String(m.error.message ?? 'unknown')}`);
    }
  }

  private end(why: string): void {
    this.ended ??= why;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(this.ended));
    }
    this.pending.clear();
  }
}

function resultOf(body: unknown): unknown {
  const b = body as { result?: unknown; error?: { message?: unknown } } | undefined;
  if (b?.error) throw new Error(`the gateway answered with an error: ${String(b.error.message ?? 'unknown')}`);
  if (!b || typeof b.result !== 'object' || b.result === null) throw new Error('the gateway gave no result');
  return b.result;
}
