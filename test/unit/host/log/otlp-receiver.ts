// A real OTLP/HTTP logs receiver for tests: a plain HTTP server on 127.0.0.1 that decodes every request body with
// the official protobuf schema (opentelemetry-proto, as compiled by protobufjs into the generated module that
// @opentelemetry/otlp-transformer 0.214.0 ships, installed as the dev dependency `otlp-proto-decoder`: the last
// version that has the logs messages with `event_name` and their decoders), keeps the raw bytes too (to look for
// what must never be sent), and answers 200 with an empty ExportLogsServiceResponse — or, `hang`, never answers.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

interface Message<T = unknown> {
  decode(body: Uint8Array): T;
  encode(m: object): { finish(): Uint8Array };
  create(m: object): object;
  toObject(m: T, o: { longs: typeof String; defaults: boolean }): unknown;
}

function schema(): { request: Message; response: Message } {
  const root = require('otlp-proto-decoder/build/src/generated/root') as {
    opentelemetry: { proto: { collector: { logs: { v1: Record<string, Message> } } } };
  };
  const v1 = root.opentelemetry.proto.collector.logs.v1;
  return { request: v1.ExportLogsServiceRequest, response: v1.ExportLogsServiceResponse };
}

/** One decoded log record, as a test looks at it. */
export interface ReceivedRecord {
  body: string;
  severityText: string;
  severityNumber: number;
  eventName: string;
  timeUnixNano: string;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue | undefined): string | number | boolean =>
  v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : (v?.boolValue ?? v?.doubleValue ?? ''));
const attrs = (list: { key: string; value?: AnyValue }[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

export class OtlpReceiver {
  readonly records: ReceivedRecord[] = [];
  /** Every request body as it came (protobuf bytes). */
  readonly raw: Buffer[] = [];
  readonly requests: { path: string; contentType: string; headers: http.IncomingHttpHeaders }[] = [];
  private readonly types = schema();
  private server: http.Server | undefined;
  private hanging: http.ServerResponse[] = [];

  constructor(private readonly mode: 'answer' | 'hang' = 'answer') {}

  /** Listens on `port` (0: any free one); resolves to the logs URL. */
  async start(port = 0): Promise<string> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        this.raw.push(body);
        this.requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), headers: req.headers });
        this.decode(body);
        if (this.mode === 'hang') return void this.hanging.push(res);
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end(Buffer.from(this.types.response.encode(this.types.response.create({})).finish()));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/logs`;
  }

  private decode(body: Buffer): void {
    const msg = this.types.request.toObject(this.types.request.decode(body), { longs: String, defaults: false }) as {
      resourceLogs?: {
        resource?: { attributes?: { key: string; value?: AnyValue }[] };
        scopeLogs?: {
          logRecords?: {
            body?: AnyValue;
            severityText?: string;
            severityNumber?: number;
            eventName?: string;
            timeUnixNano?: string;
            attributes?: { key: string; value?: AnyValue }[];
          }[];
        }[];
      }[];
    };
    for (const rl of msg.resourceLogs ?? [])
      for (const sl of rl.scopeLogs ?? [])
        for (const r of sl.logRecords ?? [])
          this.records.push({
            body: String(valueOf(r.body)),
            severityText: r.severityText ?? '',
            severityNumber: r.severityNumber ?? 0,
            eventName: r.eventName ?? '',
            timeUnixNano: r.timeUnixNano ?? '0',
            attributes: attrs(r.attributes),
            resource: attrs(rl.resource?.attributes),
          });
  }

  async stop(): Promise<void> {
    for (const r of this.hanging.splice(0)) r.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
