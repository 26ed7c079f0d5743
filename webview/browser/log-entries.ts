// The Log tab's entries: the exchange log kept as the JSON lines the host sends (at most 50,000, oldest dropped,
// with how many were dropped or never sent), and the events and grid rows made from them on demand (each parsed
// once, only when a row in view or a filter needs it). log-view.ts shows them.
import { indexById, parseEvent, toRow, unbatch, type LogRow } from '../common/log-model';
import type { HostMessage } from '../common/protocol';

export const MAX_ENTRIES = 50_000;

export class LogEntries {
  lines: string[] = [];
  ids: number[] = [];
  /** The oldest events not kept (dropped here, or left out by the host). */
  truncated = 0;
  private events: (Record<string, unknown> | undefined)[] = [];
  private rowCache: (LogRow | undefined)[] = [];

  eventAt(i: number): Record<string, unknown> {
    return (this.events[i] ??= parseEvent(this.lines[i]));
  }

  rowAt(i: number): LogRow {
    return (this.rowCache[i] ??= toRow({ id: this.ids[i], event: this.eventAt(i) }));
  }

  allRows(): LogRow[] {
    for (let i = 0; i < this.lines.length; i++) this.rowAt(i);
    return this.rowCache as LogRow[];
  }

  *allEvents(): Generator<Record<string, unknown>> {
    for (let i = 0; i < this.lines.length; i++) yield this.eventAt(i);
  }

  /** The index of the entry with this id, or -1. */
  indexOf(id: number): number {
    return indexById(this.ids, id);
  }

  /** Takes in a batch from the host: the whole log (`reset`) or lines added; the oldest beyond MAX_ENTRIES go. */
  add(m: Extract<HostMessage, { type: 'log' }>): void {
    const b = unbatch(m.batch);
    if (m.reset) {
      this.lines = b.lines;
      this.ids = b.ids;
      this.events = new Array<Record<string, unknown> | undefined>(this.lines.length);
      this.rowCache = new Array<LogRow | undefined>(this.lines.length);
    } else {
      this.lines.push(...b.lines);
      this.ids.push(...b.ids);
      this.events.length = this.lines.length;
      this.rowCache.length = this.lines.length;
    }
    this.truncated = m.truncated ?? this.truncated;
    if (this.lines.length > MAX_ENTRIES) {
      const drop = this.lines.length - MAX_ENTRIES;
      this.lines.splice(0, drop);
      this.ids.splice(0, drop);
      this.events.splice(0, drop);
      this.rowCache.splice(0, drop);
      this.truncated += drop;
    }
  }
}
