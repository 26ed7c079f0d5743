// MCP Gate's stand-in for the SDK's Node shims (src/host/session/sdk-shims.ts), which the bundles load instead of the
// SDK's: it gives every name the SDK's own Node shims give, its validator checks tool output as a JSON Schema
// validator must, and the built bundles carry no ajv.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as shims from '../../../../src/host/session/sdk-shims';
import { ROOT } from '../../helpers';

describe('the SDK shims the bundles load', () => {
  it("give every name the SDK's Node shims of the client and the server give", () => {
    for (const pkg of ['@modelcontextprotocol/client/_shims', '@modelcontextprotocol/server/_shims']) {
      const sdk = require(pkg) as Record<string, unknown>;
      for (const name of Object.keys(sdk)) assert.ok(name in shims, `${pkg} gives ${name}; src/host/session/sdk-shims.ts does not`);
    }
    assert.equal(shims.CORS_IS_POSSIBLE, false);
    assert.equal(shims.process, process);
  });

  it("validate a tool's output against its schema: 2020-12 (the default), draft-07, a $ref; an unknown dialect is refused", () => {
    const v = new shims.DefaultJsonSchemaValidator();
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 0 }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['n'],
      additionalProperties: false,
    };
    const check = v.getValidator(schema);
    assert.equal(check({ n: 3, tags: ['a'] }).valid, true);
    for (const bad of [{}, { n: -1 }, { n: 1.5 }, { n: 1, tags: [2] }, { n: 1, extra: true }, 'text']) {
      const r = check(bad);
      assert.equal(r.valid, false, JSON.stringify(bad));
      assert.ok(r.errorMessage, 'a refusal says why');
    }
    const draft7 = v.getValidator({
      $schema: 'http://json-schema.org/draft-07/schema#',
      definitions: { id: { type: 'string', pattern: '^[a-z]+$' } },
      type: 'object',
      properties: { id: { $ref: '#/definitions/id' } },
    });
    assert.equal(draft7({ id: 'abc' }).valid, true);
    assert.equal(draft7({ id: 'ABC' }).valid, false);
    assert.throws(() => v.getValidator({ $schema: 'https://example.com/my-dialect', type: 'object' }), /unsupported dialect/);
  });

  it("the built bundles carry the SDK's interpreting validator, not its ajv provider", () => {
    for (const f of ['dist/cli.js', 'dist/extension.js']) {
      const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
      assert.ok(!text.includes('AjvJsonSchemaValidator'), `${f} bundles the SDK's ajv provider`);
      assert.ok(text.includes('CfWorkerJsonSchemaValidator'), `${f} lacks the SDK's cfworker validator`);
    }
  });
});
