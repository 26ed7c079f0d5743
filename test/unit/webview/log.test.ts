// The log view's model (events → rows, newest first, filters, search, details) and the host's follower of the
// log file (first read with rotated generations, then only appended lines; rotation starts over; torn lines skipped).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../../src/host/log/log';
import { Masker } from '../../../src/policy/mask';
import { syntheticLog } from '../../../bench/panel';
import { detailsText, filterRows, indexById, parseEvent, serversIn, toRow, toRows, unbatch } from '../../../webview/common/log-model';
import { LogTail, toBatch } from '../../../webview/node/log-tail';
import type { LogEntry } from '../../../webview/common/protocol';
import { cleanupTemp, tempDir } from '../helpers';

const NONE = { server: '', outcome: '', kind: '', text: '' };
const entry = (id: number, event: Record<string, unknown>): LogEntry => ({
  id,
  event: { at: `2026-11-30T10:00:${String(id).padStart(2, '0')}.000Z`, ...event },
});

describe('trust panel: log rows', () => {
  after(cleanupTemp);

  it('one row per event: mcp.request, tool.call, tool.result, gate and server events', () => {
    const rows = toRows([
      entry(1, { kind: 'mcp.request', server: 'notion', host: 'mcp.notion.com', about: 'search', status: 200, outcome: 'answered' }),
      entry(2, { kind: 'tool.call', server: 'notion', tool: 'search' }),
      entry(3, { kind: 'tool.result', server: 'notion', tool: 'search', ok: false, bytes: 12 }),
      entry(4, { kind: 'gate.approve', server: 'db', source: '.mcp.json', project: '/p' }),
      entry(5, { kind: 'server.dropped', server: 'x', detail: 'its tools changed' }),
      entry(6, { kind: 'mcp.request', server: 'n', host: 'h', about: 'discover', outcome: 'refused_by_address', detail: 'loopback' }),
    ]);
    assert.deepEqual(
      rows.map((r) => [r.time, r.kind, r.group, r.server, r.about, r.outcome, r.status, r.detail]),
      [
        ['10:00:01.000', 'mcp.request', 'mcp.request', 'notion', 'search', 'answered', '200', ''],
        ['10:00:02.000', 'tool.call', 'tool', 'notion', 'search', '', '', ''],
        ['10:00:03.000', 'tool.result', 'tool', 'notion', 'search', 'error', '', '12 bytes'],
        ['10:00:04.000', 'gate.approve', 'gate', 'db', '', '', '', '.mcp.json'],
        ['10:00:05.000', 'server.dropped', 'server', 'x', '', '', '', 'its tools changed'],
        ['10:00:06.000', 'mcp.request', 'mcp.request', 'n', 'discover', 'refused_by_address', '', 'loopback'],
      ],
    );
  });

  it('network events of a contained server: their own group, the host as what they are about, a refusal "blocked" with the rule that would allow it', () => {
    const rule = '{"action":"mcp.fetch.network.com.example.evil","decision":"allow"}';
    const rows = toRows([
      entry(1, {
        kind: 'network.connect',
        server: 'fetch',
        host: 'api.example.com:443',
        address: '198.51.100.7',
        detail: 'mcp.fetch.network.com.example.api is allowed by rule …',
      }),
      entry(2, {
        kind: 'network.blocked',
        server: 'fetch',
        host: 'evil.example.com:443',
        detail: `mcp.fetch.network.com.example.evil is refused: no rule names this host; the rule ${rule} would allow it`,
        rule,
      }),
      entry(3, {
        kind: 'network.blocked',
        server: 'fetch',
        host: '127.0.0.1:5432',
        detail: '127.0.0.1 is an address no rule opens to a contained server',
      }),
    ]);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.group, r.about, r.outcome]),
      [
        ['network.connect', 'network', 'api.example.com:443', ''],
        ['network.blocked', 'network', 'evil.example.com:443', 'blocked'],
        ['network.blocked', 'network', '127.0.0.1:5432', 'blocked'],
      ],
    );
    assert.match(rows[1].detail, /would allow it$/);
    assert.match(rows[1].line, / rule=\{"action":"mcp\.fetch\.network\.com\.example\.evil","decision":"allow"\}/);
    assert.deepEqual(
      filterRows(rows, { ...NONE, kind: 'network', outcome: 'blocked' }).map((r) => r.id),
      [3, 2],
    );
  });

  it('every field from the log is display text: hidden characters escaped, odd types stringified, nothing executes', () => {
    const r = toRow(
      entry(1, {
        kind: 'mcp.request\u202E',
        server: '<img src=x onerror=alert(1)>',
        about: { toString: 1 },
        status: ['x'],
        detail: 'a\u200Bb\nc',
        outcome: 'answered',
      }),
    );
    assert.equal(r.kind, 'mcp.request\\u202E');
    assert.equal(r.group, 'other');
    assert.equal(r.server, '<img src=x onerror=alert(1)>');
    assert.equal(r.about, '{"toString":1}');
    assert.equal(r.status, '["x"]');
    assert.equal(r.detail, 'a\\u200Bb\\nc');
    const weird = toRow({ id: 2, event: null as unknown as Record<string, unknown> });
    assert.equal(weird.kind, '(no kind)');
  });

  it('newest first; filters by server, outcome and kind; a case-insensitive text search', () => {
    const rows = toRows(syntheticLog(2000));
    const all = filterRows(rows, NONE);
    assert.equal(all.length, 2000);
    assert.ok(
      all.every((r, i) => i === 0 || r.id < all[i - 1].id),
      'newest first',
    );
    const notion = filterRows(rows, { ...NONE, server: 'notion' });
    assert.ok(notion.length > 0 && notion.every((r) => r.server === 'notion'));
    const refused = filterRows(rows, { ...NONE, outcome: 'refused_by_policy' });
    assert.ok(refused.length > 0 && refused.every((r) => r.outcome === 'refused_by_policy'));
    const tools = filterRows(rows, { ...NONE, kind: 'tool' });
    assert.ok(tools.length > 0 && tools.every((r) => r.kind === 'tool.call' || r.kind === 'tool.result'));
    const gate = filterRows(rows, { ...NONE, kind: 'gate' });
    assert.ok(gate.length > 0 && gate.every((r) => r.kind.startsWith('gate.')));
    const search = filterRows(rows, { ...NONE, text: '  EXCHANGE 1999 ' });
    assert.deepEqual(
      search.map((r) => r.id),
      [1999],
    );
    const both = filterRows(rows, { server: 'github', outcome: 'answered', kind: 'mcp.request', text: 'tool_3' });
    assert.ok(both.every((r) => r.server === 'github' && r.outcome === 'answered' && r.about === 'tool_3'));
    assert.deepEqual(serversIn(syntheticLog(2000).map((e) => e.event)).length, 12);
    assert.deepEqual(serversIn([{ server: 'a\u202E' }, { server: 'a\u202E' }, {}, { server: null }]), ['a\\u202E']);
  });

  // How fast rows are built and filtered is measured by the bench (`node bench/run.mjs panel`), not asserted here.
  it('10,000 events all become rows, and a search finds exactly the events that carry its text', () => {
    const entries = syntheticLog(10_000);
    const rows = toRows(entries);
    assert.equal(rows.length, 10_000);
    const byId = new Map(entries.map((e) => [e.id, JSON.stringify(e.event)]));
    for (let i = 0; i < 7; i++) {
      const hits = filterRows(rows, { ...NONE, text: `tool_${i}` });
      const carrying = entries.filter((e) => JSON.stringify(e.event).includes(`tool_${i}`)).length;
      assert.ok(hits.length > 0, `tool_${i} is found`);
      assert.ok(hits.length <= carrying && hits.every((r) => byId.get(r.id)!.includes(`tool_${i}`)), `every hit for tool_${i} carries it`);
    }
  });

  it('the details of an event show every field, escaped, nothing cut', () => {
    const long = 'y'.repeat(5000);
    const d = detailsText(entry(1, { kind: 'mcp.request', server: 's', detail: `${long}\u202E` }));
    assert.ok(d.includes(`"detail": "${long}\\u202E"`));
    assert.ok(d.startsWith('{\n  "at": "2026-11-30T10:00:01.000Z",\n  "kind": "mcp.request"'));
  });
});

describe('trust panel: following the log file', () => {
  after(cleanupTemp);

  it('reads the rotated generations and the current file, then only what is appended, including a line written in two parts', () => {
    const dir = tempDir();
    const log = new EventLog(dir, new Masker(), 1100);
    for (let i = 0; i < 12; i++) log.write({ kind: 'tool.call', server: `s${i}`, tool: 't' });
    assert.ok(fs.existsSync(path.join(dir, 'log.jsonl.1')), 'rotated at least once');
    const tail = new LogTail(log.file);
    const first = tail.poll();
    assert.equal(first.reset, true);
    assert.deepEqual(
      tail.entries.map((e) => JSON.parse(e.line).server),
      Array.from({ length: 12 }, (_, i) => `s${i}`),
    );
    assert.deepEqual(tail.poll(), { reset: false, added: [] });
    // Another process appends: first half a line, then the rest with one more.
    const line = JSON.stringify({ at: 'now', kind: 'gate.reject', server: 'cli' });
    fs.appendFileSync(log.file!, line.slice(0, 10));
    assert.deepEqual(tail.poll().added, []);
    fs.appendFileSync(log.file!, `${line.slice(10)}\nnot json\n[1,2]\n${JSON.stringify({ kind: 'gate.reset', server: 'cli' })}\n`);
    const more = tail.poll();
    assert.equal(more.reset, false);
    assert.deepEqual(
      more.added.map((e) => JSON.parse(e.line).kind),
      ['gate.reject', 'gate.reset'],
    );
    assert.ok(more.added[0].id > tail.entries[0].id);
  });

  it('starts over after a rotation or truncation, and keeps at most its bound', () => {
    const dir = tempDir();
    const file = path.join(dir, 'log.jsonl');
    const tail = new LogTail(file, 5);
    assert.deepEqual(tail.poll(), { reset: true, added: [] }, 'no log yet');
    fs.writeFileSync(file, Array.from({ length: 8 }, (_, i) => JSON.stringify({ kind: 'k', n: i })).join('\n') + '\n');
    const r = tail.poll();
    assert.equal(r.reset, true);
    assert.deepEqual(
      tail.entries.map((e) => JSON.parse(e.line).n),
      [3, 4, 5, 6, 7],
    );
    assert.equal(tail.dropped, 3);
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, `${JSON.stringify({ kind: 'k', n: 8 })}\n`);
    const again = tail.poll();
    assert.equal(again.reset, true);
    assert.deepEqual(
      tail.entries.map((e) => JSON.parse(e.line).n),
      [4, 5, 6, 7, 8],
    );
    fs.writeFileSync(file, '');
    assert.equal(tail.poll().reset, true, 'truncated');
  });

  it('the lines travel as one batch and come back with their ids; a line that is not an object says so', () => {
    const dir = tempDir();
    const file = path.join(dir, 'log.jsonl');
    fs.writeFileSync(file, ['{"kind":"a"}', '{"kind":"b","detail":"x\\ny"}', '{"kind":"c"}\r'].join('\n') + '\n');
    const tail = new LogTail(file);
    tail.poll();
    const batch = toBatch(tail.entries);
    assert.equal(batch.count, 3);
    const { ids, lines } = unbatch(batch);
    assert.deepEqual(ids, [batch.firstId, batch.firstId + 1, batch.firstId + 2]);
    assert.deepEqual(
      lines.map((l) => parseEvent(l).kind),
      ['a', 'b', 'c'],
    );
    assert.equal(parseEvent(lines[1]).detail, 'x\ny');
    assert.deepEqual(unbatch({ firstId: 5, count: 0, lines: '' }), { ids: [], lines: [] });
    assert.equal(parseEvent('[1]').kind, '(unreadable line)');
    assert.equal(parseEvent('{"a":').kind, '(unreadable line)');
    assert.equal(indexById([3, 4, 7, 9], 7), 2);
    assert.equal(indexById([3, 4, 7, 9], 8), -1);
    assert.throws(
      () =>
        toBatch([
          { id: 1, line: '{}' },
          { id: 3, line: '{}' },
        ]),
      /consecutive/,
    );
  });
});
