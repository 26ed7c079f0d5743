// The hand-written JSON-RPC envelope check takes exactly what the SDK's zod union takes (generated messages of every
// kind, near misses included), and the stdio line reader ends the connection on a JSON line that is no message,
// skips lines that are not JSON, and bounds what it buffers.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { isRpcKind, LineReader, NotJsonRpc, rpcKind } from '../../../src/host/jsonrpc';

const scalar = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null),
  fc.boolean(),
  fc.constant(2 ** 53),
);
const id = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(1.5), fc.constant(2 ** 53), fc.constant(null), fc.constant(-3));
const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({ progressToken: id }, { requiredKeys: [] }),
  fc.record({ 'io.modelcontextprotocol/related-task': fc.oneof(fc.record({ taskId: scalar }), scalar) }),
  scalar,
  fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 }),
);
const objectWithMeta = meta.map((m) => (m === undefined ? {} : { _meta: m }));
const objectLike = fc.oneof(objectWithMeta, fc.constant([]), scalar, fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 }));
const error = fc.oneof(
  fc.record({ code: id, message: scalar, data: scalar }, { requiredKeys: ['code', 'message'] }),
  fc.record({ code: fc.integer(), message: fc.string(), other: scalar }),
  scalar,
);
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('2.0'), fc.constant('1.0'), scalar),
    id,
    method: fc.oneof(fc.string({ maxLength: 6 }), scalar),
    params: objectLike,
    result: objectLike,
    error,
    extra: scalar,
  },
  { requiredKeys: [] },
);

describe('JSON-RPC envelope (src/host/jsonrpc.ts)', () => {
  it("takes a message exactly when the SDK's schema takes it", () => {
    fc.assert(
      fc.property(message, (m) => {
        const ours = isRpcKind(rpcKind(m, true));
        const sdk = JSONRPCMessageSchema.safeParse(m).success;
        assert.equal(ours, sdk, JSON.stringify(m));
      }),
      { numRuns: 20_000 },
    );
  });

  it('names each kind, and says why a message is refused', () => {
    assert.equal(rpcKind({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }, true), 'request');
    assert.equal(rpcKind({ jsonrpc: '2.0', method: 'notifications/progress' }, true), 'notification');
    assert.equal(rpcKind({ jsonrpc: '2.0', id: 'a', result: { content: [] } }, true), 'response');
    assert.equal(rpcKind({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'no' } }, true), 'error');
    assert.equal(rpcKind({ jsonrpc: '2.0', id: 1.5, result: {} }, true), 'a response id that is not a string or a whole number');
    assert.equal(
      rpcKind({ jsonrpc: '2.0', id: 1, result: {}, sneaky: true }, true),
      'a response with a key JSON-RPC does not have ("sneaky")',
    );
    // The gateway reads VS Code's messages without the key check.
    assert.equal(rpcKind({ jsonrpc: '2.0', id: 1, result: {}, sneaky: true }, false), 'response');
  });
});

describe('stdio line reader', () => {
  it('skips lines that are not JSON, reads CRLF lines and messages split across chunks', () => {
    const r = new LineReader(1024);
    r.append(Buffer.from('starting server...\n{"jsonrpc":"2.0","id":1,"res'));
    assert.equal(r.next(), null);
    r.append(Buffer.from('ult":{}}\r\n{"jsonrpc":"2.0","method":"x"}\n'));
    assert.deepEqual(r.next(), { jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(r.next(), { jsonrpc: '2.0', method: 'x' });
    assert.equal(r.next(), null);
  });

  it('a JSON line that is no message throws, naming why', () => {
    const r = new LineReader(1024);
    r.append(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[]}\n'));
    assert.throws(
      () => r.next(),
      (e: Error) => e instanceof NotJsonRpc && /the server sent a result that is not an object/.test(e.message),
    );
  });

  it('refuses to buffer more than its bound', () => {
    const r = new LineReader(16);
    assert.throws(() => r.append(Buffer.alloc(17, 120)), /a message over 16 bytes/);
  });
});
