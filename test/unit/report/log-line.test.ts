// One line of text per log event, the same wherever a person reads it: `mcp-gate log` (the built CLI), the
// extension's output channel (the listener's event through logLine, as src/vscode/service.ts mirrors it) and
// the panel's row tooltip (rowSummary). An event carrying hidden and control characters — a bidi override,
// a zero-width space, a bell, an ANSI escape, a newline, a backslash — is shown escaped in all of them.
import assert from 'node:assert/strict';
import { EventLog, type LoggedEvent } from '../../../src/host/log/log';
import { logLine } from '../../../src/report/log-line';
import { rowSummary, toRow } from '../../../webview/common/log-model';
import { cleanupTemp, cli, world } from '../helpers';

describe('report/log-line: one log line everywhere', () => {
  after(cleanupTemp);

  const hostile = {
    kind: 'mcp.request' as const,
    server: 'evil\u202Egnp.exe',
    host: 'mcp.test',
    about: 'read\u200Bfile',
    status: 200,
    outcome: 'no_answer' as const,
    detail: 'line1\nline2\u0007\u001b[31mred\\',
  };
  const shown =
    'mcp.request server=evil\\u202Egnp.exe host=mcp.test about=read\\u200Bfile status=200 outcome=no_answer — line1\\nline2\\u0007\\u001B[31mred\\\\';

  it('escapes every hidden and control character of an event, and the CLI, the output channel and the panel show that same line', () => {
    const w = world();
    const log = new EventLog(w.store);
    const mirrored: string[] = [];
    log.onEvent((e) => mirrored.push(logLine(e)));
    const written: LoggedEvent = log.write(hostile);
    const expected = `${written.at} ${shown}`;

    assert.equal(logLine(written), expected);
    assert.doesNotMatch(expected, /[\u0000-\u001f\u007f\u200b\u202e]/);
    assert.deepEqual(mirrored, [expected]);

    const r = cli(w, ['log']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trimEnd(), expected);

    assert.equal(rowSummary(toRow({ id: 1, event: written as unknown as Record<string, unknown> })), expected);
  });

  it('a value that is not text is shown as escaped JSON, and a kind or time from a forged line is escaped too', () => {
    const line = logLine({ at: '2026-01-01T00:00:00Z\u0085', kind: 'x\u2028y', server: { name: 'a\u202Eb' }, ok: false, bytes: 12 });
    assert.equal(line, '2026-01-01T00:00:00Z\\u0085 x\\u2028y server={"name":"a\\u202Eb"} ok=false bytes=12');
  });
});
