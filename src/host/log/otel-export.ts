// The exchange log exported as OpenTelemetry log records over OTLP/HTTP (protobuf), with the official OpenTelemetry
// packages (issue 47 item 3), to where the user's or the administrator's "logExport" says
// (src/trust/sources/log-export.ts). Every event the log appends (mcp.request, tool, gate, server, sandbox and
// network events) becomes one record, taken from the log's own listener after masking: its body is the event's line
// exactly as the local file gets it (before the chain mark), and its attributes are the same masked fields.
//
// Nothing here stands on a call's path: the log tells its listeners once a call's lines are appended (after the
// reply is on its way: ./log.ts `hold`), and `emit` only puts the record in the batch processor's queue. The batch
// processor hands records to a keeping exporter (below) that answers it at once and sends from its own queue, one
// request at a time, in the background: a receiver that is down, refuses or never answers costs a call nothing, and
// what it did not take is kept (up to MAX_KEPT records, the oldest dropped first and counted) and sent again with a
// growing wait until it is taken. `shutdown` sends what is left, bounded by a deadline.
import * as http from 'node:http';
import * as https from 'node:https';
import { SeverityNumber, type Logger } from '@opentelemetry/api-logs';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { Masker } from '../../policy/mask';
import { resolveHeaders, type LogExportTarget } from '../../trust/sources/log-export';
import type { EventLog, LoggedEvent } from './log';

/** Records kept for a receiver that does not take them; past this the oldest are dropped (and counted). */
export const MAX_KEPT = 20_000;
/** Records in one request. */
const BATCH = 512;
/** The first wait before sending again after a failure, and the longest. */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** How long one request may take before it counts as failed (the OTLP exporter's own retries happen within it): also
 * how long a receiver that never answers can keep a finished CLI process alive. */
const REQUEST_TIMEOUT_MS = 5000;

export interface ExportOptions {
  endpoint: string;
  headers: Record<string, string>;
  /** The version of MCP Gate (service.version). */
  version?: string;
  /** For tests: the exporter that sends (the OTLP/HTTP protobuf exporter by default), the retry waits. */
  exporter?: LogRecordExporter;
  firstRetryMs?: number;
  maxRetryMs?: number;
  /** How long the batch processor gathers records before handing them on. */
  delayMs?: number;
}

/** What the export has done so far (doctor, tests). */
export interface ExportStatus {
  endpoint: string;
  sent: number;
  /** Records waiting for the receiver. */
  kept: number;
  dropped: number;
  /** The last failure to send, while it lasts (cleared by a send that succeeds). */
  failing?: string;
}

/**
 * A LogRecordExporter that answers the batch processor at once and sends from its own bounded queue in the
 * background, keeping what the receiver did not take and sending it again later.
 */
export class KeepingExporter implements LogRecordExporter {
  private queue: ReadableLogRecord[] = [];
  private sending = false;
  private timer: NodeJS.Timeout | undefined;
  private wait: number;
  private idle: (() => void)[] = [];
  private stopped = false;
  sent = 0;
  dropped = 0;
  failing: string | undefined;

  constructor(
    private readonly inner: LogRecordExporter,
    private readonly firstRetryMs = FIRST_RETRY_MS,
    private readonly maxRetryMs = MAX_RETRY_MS,
  ) {
    this.wait = firstRetryMs;
  }

  get kept(): number {
    return this.queue.length;
  }

  export(logs: ReadableLogRecord[], resultCallback: (result: ExportResult) => void): void {
    if (!this.stopped) {
      this.queue.push(...logs);
      const over = this.queue.length - MAX_KEPT;
      if (over > 0) {
        this.queue.splice(0, over);
        this.dropped += over;
      }
      this.pump();
    }
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  /** Sends the next batch unless one is on its way or a retry is waiting. */
  private pump(): void {
    if (this.sending || this.timer || !this.queue.length) {
      if (!this.sending && !this.queue.length) this.settle();
      return;
    }
    this.sending = true;
    const batch = this.queue.slice(0, BATCH);
    let answered = false;
    const done = (r: ExportResult) => {
      if (answered) return;
      answered = true;
      this.sending = false;
      if (r.code === ExportResultCode.SUCCESS) {
        // Only what is still at the front (a drop of the oldest may have taken some of it meanwhile).
        const left = batch.filter((b) => this.queue.includes(b)).length;
        this.queue.splice(0, left);
        this.sent += batch.length;
        this.failing = undefined;
        this.wait = this.firstRetryMs;
        this.pump();
      } else {
        this.failing = r.error?.message ?? 'the receiver did not take the records';
        if (this.stopped) return this.settle();
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, this.wait);
        this.timer.unref();
        this.wait = Math.min(this.wait * 2, this.maxRetryMs);
      }
    };
    try {
      this.inner.export(batch, done);
    } catch (e) {
      done({ code: ExportResultCode.FAILED, error: e instanceof Error ? e : new Error(String(e)) });
    }
  }

  private settle(): void {
    for (const f of this.idle.splice(0)) f();
  }

  /** Resolves once the queue is empty, or the send on its way failed and no retry is to follow (after `stop`). */
  private drained(): Promise<void> {
    if (!this.queue.length && !this.sending) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /** Sends what is kept now (a waiting retry is brought forward) and waits for it, at most `deadlineMs`. */
  async flushWithin(deadlineMs: number): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.stopped = true; // one more try each, no retries after a failure
    this.pump();
    let t: NodeJS.Timeout | undefined;
    await Promise.race([this.drained(), new Promise<void>((r) => (t = setTimeout(r, deadlineMs)))]);
    clearTimeout(t);
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inner.shutdown();
  }
}

/** Events that say something was refused, blocked or dropped: WARN; the rest: INFO. */
function severityOf(e: LoggedEvent): SeverityNumber {
  const f = e as unknown as Record<string, unknown>;
  const refused = typeof f.outcome === 'string' && f.outcome !== 'answered';
  const warn = ['gate.refuse', 'gate.reject', 'guard.refused', 'server.dropped', 'network.blocked', 'network.failed', 'sandbox.off'];
  return refused || warn.includes(e.kind) || f.ok === false ? SeverityNumber.WARN : SeverityNumber.INFO;
}

/** The masked event's fields as attributes (`mcp_gate.<field>`), with `event.name` its kind. */
function attributesOf(e: LoggedEvent): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = { 'event.name': e.kind };
  for (const [k, v] of Object.entries(e)) {
    if (k === 'at') continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[`mcp_gate.${k}`] = v;
  }
  return out;
}

/** One export: a provider with a batch processor over a keeping OTLP/HTTP exporter, fed by an EventLog. */
export class LogExport {
  private readonly provider: LoggerProvider;
  private readonly keeping: KeepingExporter;
  private readonly logger: Logger;
  private detach: (() => void)[] = [];
  private closed: Promise<void> | undefined;
  /** The connections' agents: destroyed at the end of `shutdown`, so a receiver that never answers keeps no process alive. */
  private readonly agents: http.Agent[] = [];

  constructor(readonly options: ExportOptions) {
    const agentFactory = (protocol: string) => {
      const agent = protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ keepAlive: true });
      this.agents.push(agent);
      return agent;
    };
    const inner =
      options.exporter ??
      new OTLPLogExporter({
        url: options.endpoint,
        headers: options.headers,
        timeoutMillis: REQUEST_TIMEOUT_MS,
        httpAgentOptions: agentFactory,
      });
    this.keeping = new KeepingExporter(inner, options.firstRetryMs, options.maxRetryMs);
    this.provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'mcp-gate', ...(options.version ? { 'service.version': options.version } : {}) }),
      processors: [
        new BatchLogRecordProcessor({
          exporter: this.keeping,
          scheduledDelayMillis: options.delayMs ?? 1000,
          maxQueueSize: 4096,
          maxExportBatchSize: BATCH,
        }),
      ],
    });
    this.logger = this.provider.getLogger('mcp-gate', options.version);
  }

  /** Sends every event `log` appends from now on (until `shutdown`); returns a function that stops it. */
  attach(log: EventLog): () => void {
    const off = log.onEvent((e, line) => this.emit(e, line));
    this.detach.push(off);
    return off;
  }

  /** Puts one masked event in the queue (never throws, never waits). */
  emit(e: LoggedEvent, line: string): void {
    if (this.closed) return;
    try {
      const severity = severityOf(e);
      this.logger.emit({
        timestamp: new Date(e.at),
        observedTimestamp: new Date(),
        severityNumber: severity,
        severityText: severity === SeverityNumber.WARN ? 'WARN' : 'INFO',
        eventName: e.kind,
        body: line,
        attributes: attributesOf(e),
      });
    } catch {
      // the export's failure is its own: the local log has the line
    }
  }

  status(): ExportStatus {
    return {
      endpoint: this.options.endpoint,
      sent: this.keeping.sent,
      kept: this.keeping.kept,
      dropped: this.keeping.dropped,
      ...(this.keeping.failing ? { failing: this.keeping.failing } : {}),
    };
  }

  /** Stops taking events and sends what is queued and kept, waiting at most `deadlineMs` (the rest is lost). */
  shutdown(deadlineMs = 3000): Promise<void> {
    this.closed ??= (async () => {
      for (const off of this.detach.splice(0)) off();
      const until = Date.now() + deadlineMs;
      let t: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((r) => (t = setTimeout(r, deadlineMs)));
      try {
        await Promise.race([
          (async () => {
            await this.provider.forceFlush();
            await this.keeping.flushWithin(Math.max(0, until - Date.now()));
          })(),
          deadline,
        ]);
        await Promise.race([this.provider.shutdown(), deadline]);
      } catch {
        // nothing more can be sent
      } finally {
        clearTimeout(t);
        // Connections end, and the exporter's own retries (within its timeout) fail at once rather than reach out again.
        for (const a of this.agents) {
          a.destroy();
          (a as unknown as { createConnection: () => never }).createConnection = () => {
            throw new Error('the log export has shut down');
          };
        }
      }
    })();
    return this.closed;
  }
}

/**
 * Starts the export `target` names (the gate report's `logExport`), reading `${env:NAME}` header values from `env`;
 * every header value is added to `masker` first, so no header reaches MCP Gate's own output. A problem (a variable
 * that is not set) is returned instead, naming the setting.
 */
export function startExport(
  target: LogExportTarget,
  env: Readonly<Record<string, string | undefined>>,
  masker: Pick<Masker, 'add'>,
  options: Partial<ExportOptions> = {},
): { export: LogExport } | { problem: string } {
  const got = resolveHeaders(target, env);
  if ('problem' in got) return got;
  for (const v of Object.values(got.headers)) if (v) masker.add(v);
  return { export: new LogExport({ ...options, endpoint: target.endpoint, headers: got.headers }) };
}

/** Whether two targets are the same export (the front ends restart an export only when it changed). */
export function sameTarget(a: LogExportTarget | undefined, b: LogExportTarget | undefined): boolean {
  return JSON.stringify(a && [a.endpoint, a.headers]) === JSON.stringify(b && [b.endpoint, b.headers]);
}
