// The "MCP Gate" language mode of the extension's read-only documents (syntaxes/mcp-gate.tmLanguage.json),
// tokenised by VS Code's own TextMate engine (vscode-textmate on vscode-oniguruma): every pattern compiles, and
// what a person looks for is coloured — headings, digests, states, quoted values, and a refused exchange apart
// from an answered one — in lines the real renderers write.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as oniguruma from 'vscode-oniguruma';
import * as textmate from 'vscode-textmate';
import { logLine } from '../../../src/report/log-line';
import { ROOT } from '../helpers';

const GRAMMAR = path.join(ROOT, 'syntaxes', 'mcp-gate.tmLanguage.json');

async function grammar(): Promise<textmate.IGrammar> {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => (scope === 'text.mcp-gate' ? textmate.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR) : null),
  });
  return (await registry.loadGrammar('text.mcp-gate'))!;
}

/** The scopes of the token that covers `part` in `line`. */
function scopesOf(g: textmate.IGrammar, line: string, part: string): string[] {
  const at = line.indexOf(part);
  assert.ok(at >= 0, `${part} in ${line}`);
  const { tokens } = g.tokenizeLine(line, textmate.INITIAL);
  return tokens.find((t) => t.startIndex <= at && at < t.endIndex)!.scopes;
}

describe('the MCP Gate language mode', () => {
  let g: textmate.IGrammar;
  before(async () => {
    g = await grammar();
  });

  it('package.json contributes it for the documents the extension opens', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.deepEqual(
      pkg.contributes.languages.map((l: { id: string }) => l.id),
      ['mcp-gate'],
    );
    assert.equal(pkg.contributes.grammars[0].scopeName, 'text.mcp-gate');
    assert.ok(fs.existsSync(path.join(ROOT, pkg.contributes.grammars[0].path)));
  });

  it('colours headings, digests, states and quoted values', () => {
    assert.ok(scopesOf(g, 'MCP Gate: Try a Tool — "echo" of "notes"', 'Try').includes('markup.heading.mcp-gate'));
    assert.ok(scopesOf(g, 'Result:', 'Result').includes('markup.heading.mcp-gate'));
    assert.ok(scopesOf(g, 'declared in .vscode/mcp.json:5 · sha256:c74ff5c89f65…', 'c74ff').includes('constant.numeric.digest.mcp-gate'));
    assert.ok(scopesOf(g, '  weather  [changed since approval]  repository scope', 'changed').includes('support.constant.state.mcp-gate'));
    assert.ok(scopesOf(g, '  runs        "node" "server.js"', 'server.js').includes('string.quoted.double.mcp-gate'));
  });

  it('tells a refused exchange from an answered one in the log lines the renderer writes', () => {
    const at = '2026-12-02T07:38:30.265Z';
    const refused = logLine({
      at,
      kind: 'mcp.request',
      server: 'web',
      host: 'mcp.example.com',
      about: 'discover',
      outcome: 'refused_by_address',
      detail: 'private address',
    });
    const answered = logLine({ at, kind: 'mcp.request', server: 'notes', host: 'stdio', about: 'list_notes', outcome: 'answered' });
    assert.ok(scopesOf(g, refused, 'refused_by_address').includes('invalid.illegal.refused.mcp-gate'));
    assert.ok(scopesOf(g, answered, 'answered').includes('string.unquoted.answered.mcp-gate'));
    assert.ok(scopesOf(g, answered, 'mcp.request').includes('keyword.other.event.mcp-gate'));
    assert.ok(scopesOf(g, answered, at).includes('comment.time.mcp-gate'));
  });
});
