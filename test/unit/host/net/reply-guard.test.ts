// Reply guards on in-memory streams: the SSE scanner, early end, byte bound, closing once answered.

import assert from 'node:assert/strict';
import { ReplyTooLargeError, StreamEndedEarlyError } from '../../../../src/host/errors';
import {
  GATE_RPC_ERROR_CODE,
  SseScanner,
  boundedStream,
  checkJsonReply,
  guardSseReply,
  responseId,
  rpcCallsOf,
  type StreamEnd,
} from '../../../../src/host/net/reply-guard';

const enc = new TextEncoder();

function source(chunks: string[], opts: { hang?: boolean } = {}): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let i = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (i < chunks.length) ctl.enqueue(enc.encode(chunks[i++]!));
      else if (!opts.hang) ctl.close();
      else return new Promise<void>(() => undefined);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<{ text: string; error?: unknown }> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) return { text };
      text += dec.decode(r.value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

const opts = (ends: StreamEnd[], maxBytes = 1024) => ({
  host: 'h.test',
  maxBytes,
  mapError: (e: unknown) => e as Error,
  onEnd: (e: StreamEnd) => ends.push(e),
});
const resp = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result: {} });

describe('host/reply-guard: SseScanner', () => {
  it('parses LF, CRLF and CR line ends split anywhere, multi-line data, comments and event types', () => {
    const text = ': hi\r\n\r\nevent: message\r\ndata: a\r\ndata:b\r\n\r\nevent: other\rdata: c\r\rdata: d\n\n';
    for (const size of [1, 2, 3, 5, 7, text.length]) {
      const s = new SseScanner();
      let forward = '';
      const events = [];
      for (let i = 0; i < text.length; i += size) {
        const r = s.push(text.slice(i, i + size));
        forward += r.forward;
        events.push(...r.events);
      }
      assert.deepEqual(
        events,
        [
          { type: 'message', data: 'a\nb' },
          { type: 'other', data: 'c' },
          { type: '', data: 'd' },
        ],
        `chunk ${size}`,
      );
      assert.equal(forward, text, `chunk ${size}`);
    }
  });
  it('forwards only complete events', () => {
    const s = new SseScanner();
    assert.equal(s.push('data: x\n\ndata: {"half"').forward, 'data: x\n\n');
    assert.equal(s.push(':true}\n').forward, '');
    assert.equal(s.push('\n').forward, 'data: {"half":true}\n\n');
  });
});

describe('host/reply-guard: helpers', () => {
  it('rpcCallsOf finds requests and notifications in single and batch bodies', () => {
    assert.deepEqual(rpcCallsOf(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' })), [{ method: 'tools/list', id: 3 }]);
    assert.deepEqual(
      rpcCallsOf(
        JSON.stringify([
          { jsonrpc: '2.0', method: 'n' },
          { jsonrpc: '2.0', id: 'a', method: 'm' },
        ]),
      ),
      [{ method: 'n' }, { method: 'm', id: 'a' }],
    );
    assert.deepEqual(rpcCallsOf('not json'), []);
    assert.deepEqual(rpcCallsOf(undefined), []);
  });
  it('responseId accepts only well-formed responses', () => {
    assert.equal(responseId({ jsonrpc: '2.0', id: 1, result: {} }), 1);
    assert.equal(responseId({ jsonrpc: '2.0', id: 'x', error: { code: -1, message: 'm' } }), 'x');
    assert.equal(responseId({ jsonrpc: '2.0', id: 1, result: 'str' }), undefined);
    assert.equal(responseId({ jsonrpc: '2.0', id: 1, error: { message: 'no code' } }), undefined);
    assert.equal(responseId({ jsonrpc: '1.0', id: 1, result: {} }), undefined);
    assert.equal(responseId({ jsonrpc: '2.0', id: 1, method: 'x' }), undefined);
  });
  it('checkJsonReply tells 1 from "1" and wants every id', () => {
    checkJsonReply(enc.encode(resp(1)), 'h', [1]);
    assert.throws(() => checkJsonReply(enc.encode(resp('1')), 'h', [1]), /no JSON-RPC response for id 1/);
    assert.throws(() => checkJsonReply(enc.encode(`[${resp(1)}]`), 'h', [1, 2]), /id 2/);
    assert.throws(() => checkJsonReply(enc.encode('<html>'), 'h', [1]), /not JSON/);
  });
});

describe('host/reply-guard: guardSseReply', () => {
  it('closes as soon as every id has its response and cancels the upstream', async () => {
    const ends: StreamEnd[] = [];
    const src = source([`data: ${resp(1)}\n\n`], { hang: true });
    const out = await drain(guardSseReply(src.stream, [1], opts(ends)));
    assert.equal(out.error, undefined);
    assert.match(out.text, /"id":1/);
    assert.deepEqual(ends, [{ answered: true }]);
    assert.equal(src.cancelled(), true);
  });
  it('an upstream that ends with its response is not cancelled (nothing to cancel); one that goes on sending is', async () => {
    const ends: StreamEnd[] = [];
    const done = source([`data: ${resp(1)}\n\n`]);
    const out = await drain(guardSseReply(done.stream, [1], opts(ends)));
    assert.match(out.text, /"id":1/);
    assert.equal(done.cancelled(), false);
    const more = source([`data: ${resp(1)}\n\n`, 'data: {"jsonrpc":"2.0","method":"notifications/message"}\n\n'], { hang: true });
    const out2 = await drain(guardSseReply(more.stream, [1], opts([])));
    assert.doesNotMatch(out2.text, /notifications\/message/);
    assert.equal(more.cancelled(), true);
    assert.deepEqual(ends, [{ answered: true }]);
  });
  it('an event type other than message does not answer', async () => {
    const ends: StreamEnd[] = [];
    const out = await drain(guardSseReply(source([`event: other\ndata: ${resp(1)}\n\n`]).stream, [1], opts(ends)));
    assert.ok(out.error instanceof StreamEndedEarlyError);
  });
  it('ends early: synthetic JSON-RPC error for the pending id, then StreamEndedEarlyError', async () => {
    const ends: StreamEnd[] = [];
    const out = await drain(guardSseReply(source([': ping\n\n', `data: ${resp(1)}\ndata: tail`]).stream, [1, 'b'], opts(ends)));
    assert.ok(out.error instanceof StreamEndedEarlyError);
    assert.doesNotMatch(out.text, /tail/);
    const synth = out.text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    assert.deepEqual(
      synth.map((m) => m.id),
      [1, 'b'],
    );
    assert.equal(synth[0].error.code, GATE_RPC_ERROR_CODE);
    assert.equal(synth[0].error.data.mcpGate, 'STREAM_ENDED_EARLY');
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.answered, false);
  });
  it('fails past the byte bound without handing on more than the bound', async () => {
    const ends: StreamEnd[] = [];
    const chunk = `data: ${'x'.repeat(200)}\n\n`;
    const out = await drain(guardSseReply(source(Array(20).fill(chunk)).stream, [7], opts(ends, 1000)));
    assert.ok(out.error instanceof ReplyTooLargeError);
    const before = out.text.slice(0, out.text.lastIndexOf('\nevent: message'));
    assert.ok(before.length <= 1000);
    assert.match(out.text, /REPLY_TOO_LARGE/);
  });
  it('boundedStream errors with ReplyTooLargeError as soon as the bound is passed', async () => {
    const ends: StreamEnd[] = [];
    const out = await drain(boundedStream(source(['a'.repeat(600), 'b'.repeat(600), 'c']).stream, opts(ends, 1000)));
    assert.ok(out.error instanceof ReplyTooLargeError);
    assert.equal(out.text, 'a'.repeat(600));
    assert.equal(ends[0]!.answered, false);
  });
});
