// Bench only: the gateway as it was before the MCP session was kept (a new SDK server and stateless streamable-HTTP
// transport for every request), kept as a reference contender so the gateway group shows, in the same run, what
// the per-request setup cost. Not used by MCP Gate.
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { frontServer } from '../src/host/serve';
import { originAllowed, sameToken, type GatewayTarget } from '../src/host/gateway';
import type { EventLog } from '../src/host/log';

export const MAX_GATEWAY_BODY_BYTES = 1024 * 1024;

export interface GatewayOptions {
  /** Opens (or returns the open) target for a server key, or a refusal saying why. */
  target(key: string): Promise<GatewayTarget | { refused: string }>;
  log: EventLog;
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

    const server = frontServer(target);
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
