// A tool call as text: the arguments a person starts from (from the input schema) and the result as lines, with
// every control or escape character a server put in a text made visible (it goes to a terminal or an editor).
import assert from 'node:assert/strict';
import { argumentSkeleton, resultLines } from '../../../src/report/tool-text';

describe('tool text', () => {
  it('starts the arguments from the required properties: a default when given, else an empty value of the type', () => {
    assert.deepEqual(
      argumentSkeleton({
        type: 'object',
        properties: {
          message: { type: 'string' },
          n: { type: 'integer' },
          on: { type: 'boolean' },
          tags: { type: 'array' },
          mode: { type: 'string', default: 'fast' },
          extra: { type: 'string' },
        },
        required: ['message', 'n', 'on', 'tags', 'mode'],
      }),
      { message: '', n: 0, on: false, tags: [], mode: 'fast' },
    );
    assert.deepEqual(argumentSkeleton(undefined), {});
    assert.deepEqual(argumentSkeleton({ required: 'message' }), {}, 'a malformed schema gives no arguments, not an error');
  });

  it('shows text parts line by line, other parts by type, structured content as JSON; escapes stay visible, backslashes stay as given (JSON a script reads)', () => {
    assert.deepEqual(
      resultLines({
        content: [
          { type: 'text', text: 'line one\nred \u001b[31malert {"v":"a\\nb"}' },
          { type: 'image', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///x' } },
        ],
        structuredContent: { ok: true },
      }),
      ['line one\nred \\u001B[31malert {"v":"a\\nb"}', '[image image/png]', '[resource file:///x]', '{\n  "ok": true\n}'],
    );
  });
});
