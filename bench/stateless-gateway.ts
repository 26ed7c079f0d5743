// Bench only: the gateway as it was before the MCP session was kept (a new SDK server and stateless streamable-HTTP
// transport for every request), kept as a reference contender so the gateway group shows, in the same run, what
// the per-request setup cost. Not used by MCP Gate.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { EventLog } from '../src/host/log';
import type { SessionTool } from '../src/host/session';

export const MAX_GATEWAY_BODY_BYTES = 1024 * 1024;

/** What the gateway needs from one upstream server: its frozen tools, the policy's view of each, and calls. */
export interface GatewayTarget {
  tools(): SessionTool[];
  /** False when the policy denies the tool outright (it is then not listed at all). */
  listed(tool: string): boolean;
  call(tool: string, args: Record<string, unknown>): Promise<{ ok: boolean; result?: CallToolResult; error?: string }>;
  instructions?: string;
}

export interface GatewayOptions {
  /** Opens (or returns the open) target for a server key, or a refusal saying why. */
  target(key: string): Promise<GatewayTarget | { refused: string }>;
  log: EventLog;
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Origins a legitimate caller can have: none (Node), VS Code's own, or a loopback page (a local workbench). */
export function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  if (/^vscode-(file|webview):\/\//.test(origin)) return true;
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && (u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]');
  } catch {
    return false;
  }
}

export class StatelessGateway {
  readonly token = randomBytes(24).toString('base64url');
  private server?: http.Server;
  private port = 0;

  constructor(private readonly o: GatewayOptions) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The endpoint of one server; the key is opaque (no secret in it: VS Code caches provided definitions). */
  urlFor(key: string): string {
    return `http://127.0.0.1:${this.port}/mcp/${encodeURIComponent(key)}`;
  }

  private refuse(res: http.ServerResponse, status: number, why: string, key?: string): void {
    this.o.log.write({ kind: 'gate.refuse', server: key, detail: `gateway: ${why}` });
    res.writeHead(status, { 'content-type': 'text/plain' }).end(why);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const m = /^\/mcp\/([^/]+)$/.exec(url.pathname);
    const key = m ? decodeURIComponent(m[1]) : undefined;
    if (req.headers.host !== `127.0.0.1:${this.port}` && req.headers.host !== `localhost:${this.port}`) return this.refuse(res, 403, `Host ${JSON.stringify(req.headers.host)} is not this endpoint`, key);
    if (!originAllowed(req.headers.origin)) return this.refuse(res, 403, `Origin ${JSON.stringify(req.headers.origin)} may not call the gateway`, key);
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !sameToken(auth.slice(7), this.token)) return this.refuse(res, 401, 'missing or wrong gateway token', key);
    if (!key) return this.refuse(res, 404, 'no such server');
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_GATEWAY_BODY_BYTES) return this.refuse(res, 413, 'request body over 1 MiB', key);
      chunks.push(c as Buffer);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return this.refuse(res, 400, 'the body is not JSON', key);
    }
    const target = await this.o.target(key);
    if ('refused' in target) return this.refuse(res, 403, target.refused, key);

    const server = new Server({ name: 'mcp-gate', version: '0.1.0' }, { capabilities: { tools: {} }, instructions: target.instructions });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: target.tools().filter((t) => target.listed(t.name)).map((t) => ({
        name: t.name,
        ...(t.title !== undefined ? { title: t.title } : {}),
        description: t.description,
        inputSchema: t.inputSchema,
        ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
        ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      const out = await target.call(r.params.name, (r.params.arguments ?? {}) as Record<string, unknown>);
      if (out.result) return out.result;
      return { isError: true, content: [{ type: 'text', text: `MCP Gate: ${out.error ?? 'the call failed'}` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise((r) => this.server!.close(r));
  }
}
