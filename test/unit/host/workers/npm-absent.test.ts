// The stand-ins dist/lock-worker.js carries for iconv-lite, sigstore and @npmcli/query (src/host/workers/npm-absent.ts):
// minipass-fetch still loads and fetches with one in place of iconv-lite, each stand-in throws naming itself when
// called, and the built worker carries none of the three.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as absent from '../../../../src/host/workers/npm-absent';
import { ROOT } from '../../helpers';

describe("the npm libraries' absent parts (package worker)", () => {
  it('each stand-in throws, naming the library and the file', () => {
    assert.throws(() => absent.decode(), /iconv-lite is not bundled .*npm-absent\.ts/);
    assert.throws(() => absent.verify(), /sigstore is not bundled/);
    assert.throws(() => absent.parser(), /@npmcli\/query is not bundled/);
    assert.equal(typeof absent.arrayDelimiter, 'symbol');
  });

  it('nothing the worker runs calls them: minipass-fetch reads a body as text and JSON without iconv-lite', async () => {
    const { Response } = require('minipass-fetch') as {
      Response: new (body: string) => { text(): Promise<string>; json(): Promise<unknown> };
    };
    assert.equal(await new Response('{"a":1}').text(), '{"a":1}');
    assert.deepEqual(await new Response('{"a":1}').json(), { a: 1 });
  });

  it('the built worker carries none of the three', () => {
    const text = fs.readFileSync(path.join(ROOT, 'dist', 'lock-worker.js'), 'utf8');
    assert.ok(text.includes('is not bundled in MCP Gate'), 'the stand-ins are in the worker');
    for (const mark of ['DBCSCodec', 'TUFClient', 'postcss-selector-parser'])
      assert.ok(!text.includes(mark), `dist/lock-worker.js carries ${mark}`);
  });
});
