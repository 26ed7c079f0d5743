// Tests for the secrets block: entry validation with exact messages, which entries apply to
// a server, each bind and `as`, refusals and missing values dropping the server, values a
// header cannot carry, and each value read exactly once and never shown.

import * as assert from 'node:assert/strict';
import { AskAnswer, AskQuestion } from '../../../src/policy/decide';
import { Masker } from '../../../src/policy/mask';
import { Decision, parseRules, Rule } from '../../../src/policy/rules';
import {
  bindSecrets,
  BindOptions,
  headerValueProblem,
  parseSecrets,
  SecretBinding,
  SecretEntry,
  secretApplies,
  type ServerRef,
} from '../../../src/policy/secrets';

const ORIGIN = { file: '/home/me/.config/mcp-gate/config.json', line: 40 };
const NOTION = { name: 'notion', scope: 'user' as const, host: 'mcp.notion.com' };
const TIME = { name: 'time', scope: 'user' as const };
const TOKEN = 'ntn_4f9c2b7e1d8a6035';

function entries(...raw: unknown[]): SecretEntry[] {
  const { entries: out, errors } = parseSecrets(raw, ORIGIN);
  assert.deepEqual(
    errors.map((e) => e.message),
    [],
  );
  return out;
}

function rules(...pairs: [string, Decision][]): Rule[] {
  const { rules: out, errors } = parseRules(
    pairs.map(([action, decision]) => ({ action, decision })),
    { file: 'user.json' },
  );
  assert.deepEqual(errors, []);
  return out;
}

/** A secret source that counts reads per name. */
function source(values: Record<string, string | undefined>) {
  const reads: string[] = [];
  const fn = async (name: string) => {
    reads.push(name);
    return values[name];
  };
  return { fn, reads };
}

function bound(b: SecretBinding) {
  if (b.drop) return assert.fail(`dropped: ${b.reason}`);
  return b;
}

function dropped(b: SecretBinding): string {
  if (!b.drop) return assert.fail('expected the server to be dropped');
  return b.reason;
}

const allowAll = rules(['secret.use.*', 'allow']);

function opts(src: ReturnType<typeof source>, extra: Partial<BindOptions> = {}): BindOptions {
  return { source: src.fn, rules: allowAll, masker: new Masker(), ...extra };
}

describe('policy/secrets parseSecrets', () => {
  it('accepts a full entry and normalises "to"', () => {
    const [e] = entries({ name: 'KEY', to: 'mcp.probe.host.COM.Example.*', bind: 'header', as: 'X-Api-Key' });
    assert.deepEqual(e, { name: 'KEY', to: 'mcp.probe.host.com.example.*', bind: 'header', as: 'X-Api-Key', origin: ORIGIN, index: 0 });
  });

  const where = '/home/me/.config/mcp-gate/config.json:40';
  const bad: [unknown, string][] = [
    ['NOTION_TOKEN', `${where}: secrets[0] "NOTION_TOKEN": a secrets entry is an object {"name", "to", "bind", "as"?}`],
    [
      { name: 'T', to: 'mcp.*', bind: 'header', value: 'x' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"header","value":"x"}: unknown key "value"; an entry has only "name", "to", "bind", "as" and "project"`,
    ],
    [
      { name: 'notion_token', to: 'mcp.*', bind: 'header' },
      `${where}: secrets[0] {"name":"notion_token","to":"mcp.*","bind":"header"}: "name" must be upper-case letters, digits and "_", not starting with a digit, not "notion_token"`,
    ],
    [
      { name: '1T', to: 'mcp.*', bind: 'header' },
      `${where}: secrets[0] {"name":"1T","to":"mcp.*","bind":"header"}: "name" must be upper-case letters, digits and "_", not starting with a digit, not "1T"`,
    ],
    [{ to: 'mcp.*', bind: 'header' }, `${where}: secrets[0] {"to":"mcp.*","bind":"header"}: "name" is missing`],
    [{ name: 'T', bind: 'header' }, `${where}: secrets[0] {"name":"T","bind":"header"}: "to" is missing`],
    [
      { name: 'T', to: '*', bind: 'header' },
      `${where}: secrets[0] {"name":"T","to":"*","bind":"header"}: "to" must start with "mcp.", not "*"`,
    ],
    [
      { name: 'T', to: 'secret.use.T', bind: 'header' },
      `${where}: secrets[0] {"name":"T","to":"secret.use.T","bind":"header"}: "to" must start with "mcp.", not "secret.use.T"`,
    ],
    [
      { name: 'T', to: 'mcp.*.host.x', bind: 'header' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*.host.x","bind":"header"}: invalid "to": "*" may only be the last segment`,
    ],
    [
      { name: 'T', to: 'mcp.notion.tool.search', bind: 'header' },
      `${where}: secrets[0] {"name":"T","to":"mcp.notion.tool.search","bind":"header"}: "to" names a tool, but a secret goes to a whole server (mcp.<server>.*) or its host (mcp.<server>.host.…)`,
    ],
    [
      { name: 'T', to: 'mcp.time.network', bind: 'env' },
      `${where}: secrets[0] {"name":"T","to":"mcp.time.network","bind":"env"}: "to" names a network, but a secret goes to a whole server (mcp.<server>.*) or its host (mcp.<server>.host.…)`,
    ],
    [{ name: 'T', to: 'mcp.*' }, `${where}: secrets[0] {"name":"T","to":"mcp.*"}: "bind" is missing`],
    [
      { name: 'T', to: 'mcp.*', bind: 'query' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"query"}: "bind" must be "header" or "env", not "query"`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'header', as: 'X Api' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"header","as":"X Api"}: "as" must be an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~), not "X Api"`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'header', as: 'X-Key\r\nEvil: 1' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"header","as":"X-Key\\r\\nEvil: 1"}: "as" must be an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~), not "X-Key\\r\\nEvil: 1"`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'header', as: 'Host' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"header","as":"Host"}: "as" may not be "Host": that header belongs to the transport`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'header', as: 'Mcp-Session-Id' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"header","as":"Mcp-Session-Id"}: "as" may not be "Mcp-Session-Id": that header belongs to the transport`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'header', as: 'Proxy-Authorization' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"header","as":"Proxy-Authorization"}: "as" may not be "Proxy-Authorization": that header belongs to the transport`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'env', as: '1VAR' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"env","as":"1VAR"}: "as" must be an environment variable name (letters, digits and "_", not starting with a digit), not "1VAR"`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'env', as: 'A=B' },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"env","as":"A=B"}: "as" must be an environment variable name (letters, digits and "_", not starting with a digit), not "A=B"`,
    ],
    [
      { name: 'T', to: 'mcp.*', bind: 'env', as: 5 },
      `${where}: secrets[0] {"name":"T","to":"mcp.*","bind":"env","as":5}: "as" must be a string`,
    ],
    [
      { name: 'T', to: 'mcp.notion.host.com.notion.*', bind: 'env' },
      `${where}: secrets[0] {"name":"T","to":"mcp.notion.host.com.notion.*","bind":"env"}: "bind": "env" is for local servers, but "to" names a host, which only a remote server has`,
    ],
  ];
  for (const [raw, message] of bad) {
    it(`rejects ${JSON.stringify(raw)}`, () => {
      const { entries: out, errors } = parseSecrets([raw], ORIGIN);
      assert.equal(out.length, 0);
      assert.deepEqual(
        errors.map((e) => e.message),
        [message],
      );
    });
  }

  it('a block that is not a list is one error', () => {
    const { errors } = parseSecrets({ name: 'T' }, { file: 'mcpGate.secrets' });
    assert.deepEqual(
      errors.map((e) => e.message),
      ['mcpGate.secrets: secrets must be a list, not object'],
    );
  });

  it('never drops an entry: every item is an entry or an error', () => {
    const { entries: out, errors } = parseSecrets(
      [{ name: 'A', to: 'mcp.*', bind: 'header' }, 3, { name: 'B', to: 'mcp.time.*', bind: 'env' }],
      ORIGIN,
    );
    assert.deepEqual(
      out.map((e) => e.index),
      [0, 2],
    );
    assert.deepEqual(
      errors.map((e) => e.index),
      [1],
    );
  });
});

describe('policy/secrets secretApplies', () => {
  const table: [string, 'header' | 'env', ServerRef, boolean][] = [
    ['mcp.notion.*', 'header', NOTION, true],
    ['mcp.*', 'header', NOTION, true],
    ['mcp.notion.host.*', 'header', NOTION, true],
    ['mcp.notion.host.com.notion.*', 'header', NOTION, true],
    ['mcp.notion.host.com.notion.mcp', 'header', NOTION, true],
    ['mcp.notion.host.com.notion.*', 'header', { name: 'notion', scope: 'user' as const, host: 'notion.com' }, false],
    ['mcp.notion.host.com.notion.*', 'header', { name: 'notion', scope: 'user' as const, host: 'mcp.notion.com.evil.io' }, false],
    ['mcp.notion.*', 'header', { name: 'github', scope: 'user' as const, host: 'mcp.notion.com' }, false],
    ['mcp.notion.*', 'header', { name: 'notion', scope: 'user' as const }, false],
    ['mcp.time.*', 'env', TIME, true],
    ['mcp.*', 'env', TIME, true],
    ['mcp.time.*', 'env', { name: 'time', scope: 'user' as const, host: 'time.example.com' }, false],
    ['mcp.other.*', 'env', TIME, false],
  ];
  for (const [to, bind, server, want] of table) {
    it(`${bind} ${to} ${want ? 'applies' : 'does not apply'} to ${JSON.stringify(server)}`, () => {
      const [e] = entries({ name: 'T', to, bind });
      assert.equal(secretApplies(e, server), want);
    });
  }
});

describe('policy/secrets bindSecrets', () => {
  it('header bind: Authorization: Bearer <value> by default', async () => {
    const src = source({ NOTION_TOKEN: TOKEN });
    const b = bound(await bindSecrets(NOTION, entries({ name: 'NOTION_TOKEN', to: 'mcp.notion.*', bind: 'header' }), opts(src)));
    assert.deepEqual(b.headers, { Authorization: `Bearer ${TOKEN}` });
    assert.deepEqual(b.env, {});
    assert.deepEqual(b.notes, []);
    assert.deepEqual(b.used, ['NOTION_TOKEN']);
  });

  it('header bind with "as": that header carries the raw value', async () => {
    const src = source({ KEY: 'k-123456' });
    const b = bound(
      await bindSecrets(
        { name: 'probe', scope: 'user' as const, host: 'probe.example.com' },
        entries({ name: 'KEY', to: 'mcp.probe.*', bind: 'header', as: 'X-Api-Key' }),
        opts(src),
      ),
    );
    assert.deepEqual(b.headers, { 'X-Api-Key': 'k-123456' });
  });

  it('header bind "as: Authorization" carries the raw value without Bearer', async () => {
    const src = source({ KEY: 'Basic dXNlcjpwYXNz' });
    const b = bound(
      await bindSecrets(NOTION, entries({ name: 'KEY', to: 'mcp.notion.*', bind: 'header', as: 'Authorization' }), opts(src)),
    );
    assert.deepEqual(b.headers, { Authorization: 'Basic dXNlcjpwYXNz' });
  });

  it('env bind: the variable is the secret name by default', async () => {
    const src = source({ TIME_KEY: 'tk-998877' });
    const b = bound(await bindSecrets(TIME, entries({ name: 'TIME_KEY', to: 'mcp.time.*', bind: 'env' }), opts(src)));
    assert.deepEqual(b.env, { TIME_KEY: 'tk-998877' });
    assert.deepEqual(b.headers, {});
  });

  it('env bind with "as" names the variable', async () => {
    const src = source({ TIME_KEY: 'tk-998877' });
    const b = bound(await bindSecrets(TIME, entries({ name: 'TIME_KEY', to: 'mcp.time.*', bind: 'env', as: 'API_KEY' }), opts(src)));
    assert.deepEqual(b.env, { API_KEY: 'tk-998877' });
  });

  it('an env entry is not used for a remote server, a header entry not for a local one', async () => {
    const es = entries({ name: 'A', to: 'mcp.*', bind: 'env' }, { name: 'B', to: 'mcp.*', bind: 'header' });
    const src = source({ A: 'aaaa-1', B: 'bbbb-2' });
    const remote = bound(await bindSecrets(NOTION, es, opts(src)));
    assert.deepEqual(remote.headers, { Authorization: 'Bearer bbbb-2' });
    assert.deepEqual(remote.env, {});
    const local = bound(await bindSecrets(TIME, es, opts(src)));
    assert.deepEqual(local.env, { A: 'aaaa-1' });
    assert.deepEqual(local.headers, {});
    assert.deepEqual(src.reads, ['B', 'A']);
  });

  it('a secret for another host is neither read nor sent', async () => {
    const src = source({ T: TOKEN });
    const b = bound(await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.notion.host.io.evil.*', bind: 'header' }), opts(src)));
    assert.deepEqual(b.headers, {});
    assert.deepEqual(src.reads, []);
  });

  it('a missing value drops the server with a line saying why', async () => {
    const src = source({});
    const reason = dropped(
      await bindSecrets(
        NOTION,
        entries({ name: 'NOTION_TOKEN', to: 'mcp.notion.*', bind: 'header' }),
        opts(src, {
          missingHint: (n) => `Set MCP_GATE_SECRET_${n}.`,
        }),
      ),
    );
    assert.equal(reason, 'server "notion" is left out: secret NOTION_TOKEN has no value. Set MCP_GATE_SECRET_NOTION_TOKEN.');
    assert.deepEqual(src.reads, ['NOTION_TOKEN']);
  });

  it('an empty value drops the server', async () => {
    const reason = dropped(await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.*', bind: 'header' }), opts(source({ T: '' }))));
    assert.equal(reason, 'server "notion" is left out: secret T has no value.');
  });

  it('a refused secret drops the server and is never read', async () => {
    const src = source({ T: TOKEN });
    const reason = dropped(
      await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.*', bind: 'header' }), opts(src, { rules: rules(['secret.use.T', 'deny']) })),
    );
    assert.match(
      reason,
      /^server "notion" is left out: secret T is refused: secret\.use\.T is denied by rule \{"action":"secret\.use\.T","decision":"deny"\} \(rules\[0\] in user\.json\)/,
    );
    assert.deepEqual(src.reads, []);
  });

  it('no secret.use rule drops the server (no rule is deny)', async () => {
    const src = source({ T: TOKEN });
    const reason = dropped(
      await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.*', bind: 'header' }), opts(src, { rules: rules(['mcp.*', 'allow']) })),
    );
    assert.match(reason, /secret T is refused: secret\.use\.T is denied: no rule matches it/);
    assert.deepEqual(src.reads, []);
  });

  it('ask without an asker drops the server, naming the rule that would permit it', async () => {
    const src = source({ T: TOKEN });
    const reason = dropped(
      await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.*', bind: 'header' }), opts(src, { rules: rules(['secret.use.*', 'ask']) })),
    );
    assert.match(reason, /nobody can answer here; the rule \{"action":"secret\.use\.T","decision":"allow"\} would permit it\.$/);
    assert.deepEqual(src.reads, []);
  });

  it('ask with an asker answering always sends the secret and returns the rule to write', async () => {
    const seen: AskQuestion[] = [];
    const asker = async (q: AskQuestion): Promise<AskAnswer> => {
      seen.push(q);
      return 'always';
    };
    const src = source({ T: TOKEN });
    const b = bound(
      await bindSecrets(
        NOTION,
        entries({ name: 'T', to: 'mcp.*', bind: 'header' }),
        opts(src, { rules: rules(['secret.use.*', 'ask']), asker }),
      ),
    );
    assert.deepEqual(b.headers, { Authorization: `Bearer ${TOKEN}` });
    assert.deepEqual(b.remember, [{ action: 'secret.use.T', decision: 'allow' }]);
    assert.deepEqual(
      seen.map((q) => q.action),
      ['secret.use.T'],
    );
  });

  it('ask answered deny drops the server', async () => {
    const src = source({ T: TOKEN });
    const reason = dropped(
      await bindSecrets(
        NOTION,
        entries({ name: 'T', to: 'mcp.*', bind: 'header' }),
        opts(src, { rules: rules(['secret.use.*', 'ask']), asker: async () => 'deny' }),
      ),
    );
    assert.match(reason, /refused by the person asked/);
  });

  const unsendable: [string, string, string][] = [
    ['CR', `${TOKEN}\r`, 'a line break (CR or LF)'],
    ['LF', `${TOKEN}\nX-Evil: 1`, 'a line break (CR or LF)'],
    ['NUL', `${TOKEN}\0`, 'a NUL character'],
    ['a control character', `${TOKEN}\x1b[31m`, 'a control character'],
    ['a non-ASCII character', `${TOKEN}é`, 'a character outside printable ASCII'],
    ['trailing whitespace', `${TOKEN} `, 'leading or trailing whitespace, which would be stripped in transit'],
  ];
  for (const [what, value, problem] of unsendable) {
    it(`a value with ${what} is not sent as a header, and the note does not hold it`, async () => {
      const masker = new Masker();
      const src = source({ NOTION_TOKEN: value });
      const b = bound(
        await bindSecrets(NOTION, entries({ name: 'NOTION_TOKEN', to: 'mcp.notion.*', bind: 'header' }), opts(src, { masker })),
      );
      assert.deepEqual(b.headers, {});
      assert.deepEqual(b.used, []);
      assert.deepEqual(b.notes, [
        `secret NOTION_TOKEN was not sent to server "notion": its value holds ${problem}, which a header cannot carry; the server starts without header Authorization.`,
      ]);
      assert.ok(!b.notes.join('\n').includes(TOKEN));
      // it was still registered for masking
      assert.equal(masker.mask(`echo ${value}`).includes(TOKEN), false);
    });
  }

  it('a value with NUL is not set as an environment variable', async () => {
    const src = source({ T: 'abc\0def' });
    const b = bound(await bindSecrets(TIME, entries({ name: 'T', to: 'mcp.time.*', bind: 'env' }), opts(src)));
    assert.deepEqual(b.env, {});
    assert.deepEqual(b.notes, [
      'secret T was not sent to server "time": its value holds a NUL character, which an environment variable cannot carry; the server starts without T.',
    ]);
  });

  it('a value with LF may go to an environment variable', async () => {
    const src = source({ T: 'line1\nline2' });
    const b = bound(await bindSecrets(TIME, entries({ name: 'T', to: 'mcp.time.*', bind: 'env' }), opts(src)));
    assert.deepEqual(b.env, { T: 'line1\nline2' });
  });

  it('each value is read exactly once, however many entries use it', async () => {
    const src = source({ T: TOKEN });
    const es = entries(
      { name: 'T', to: 'mcp.notion.*', bind: 'header' },
      { name: 'T', to: 'mcp.notion.host.*', bind: 'header', as: 'X-Token' },
      { name: 'T', to: 'mcp.*', bind: 'header' },
    );
    const b = bound(await bindSecrets(NOTION, es, opts(src)));
    assert.deepEqual(src.reads, ['T']);
    assert.deepEqual(b.headers, { Authorization: `Bearer ${TOKEN}`, 'X-Token': TOKEN });
  });

  it('two secrets bound to the same header drop the server, naming both', async () => {
    const src = source({ A: 'aaaa-1', B: 'bbbb-2' });
    const es = entries(
      { name: 'A', to: 'mcp.*', bind: 'header', as: 'X-Key' },
      { name: 'B', to: 'mcp.notion.*', bind: 'header', as: 'x-key' },
    );
    const reason = dropped(await bindSecrets(NOTION, es, opts(src)));
    assert.equal(
      reason,
      'server "notion" is left out: secrets A (secrets[0] in /home/me/.config/mcp-gate/config.json:40) and B ' +
        '(secrets[1] in /home/me/.config/mcp-gate/config.json:40) both bind header x-key.',
    );
    assert.deepEqual(src.reads, []);
  });

  it('a source that fails drops the server, with the error masked', async () => {
    const masker = new Masker();
    masker.add('hunter2-old');
    const reason = dropped(
      await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.*', bind: 'header' }), {
        source: async () => {
          throw new Error('keychain locked (last value hunter2-old)');
        },
        rules: allowAll,
        masker,
      }),
    );
    assert.equal(reason, 'server "notion" is left out: secret T could not be read: keychain locked (last value ***)');
  });

  it('every value read is added to the masker', async () => {
    const masker = new Masker();
    const src = source({ T: TOKEN });
    await bindSecrets(NOTION, entries({ name: 'T', to: 'mcp.*', bind: 'header' }), opts(src, { masker }));
    assert.equal(masker.mask(`Authorization: Bearer ${TOKEN}`), 'Authorization: Bearer ***');
  });

  it('a value too short to mask is sent with a note saying it cannot be masked', async () => {
    const b = bound(await bindSecrets(TIME, entries({ name: 'PIN', to: 'mcp.time.*', bind: 'env' }), opts(source({ PIN: '123' }))));
    assert.deepEqual(b.env, { PIN: '123' });
    assert.deepEqual(b.notes, ['secret PIN is shorter than 4 characters, so it cannot be masked in output.']);
  });

  it('a server whose name a rule cannot name is left out', async () => {
    const reason = dropped(await bindSecrets({ name: 'a.b', scope: 'user' }, [], opts(source({}))));
    assert.match(reason, /^server "a\.b" is left out: it cannot be matched against secrets: server name "a\.b" cannot be named by a rule/);
  });

  it('a header named __proto__ would not touch the prototype', async () => {
    const { errors } = parseSecrets([{ name: 'T', to: 'mcp.*', bind: 'header', as: '__proto__' }], ORIGIN);
    assert.equal(errors.length, 1);
    assert.match(errors[0].message, /"as" may not be "__proto__"/);
  });
});

describe('policy/secrets headerValueProblem', () => {
  it('accepts visible ASCII with inner spaces and tabs', () => {
    assert.equal(headerValueProblem('Bearer abc.DEF-123_~+/='), undefined);
    assert.equal(headerValueProblem('a\tb c'), undefined);
  });
  it('refuses DEL and leading whitespace', () => {
    assert.equal(headerValueProblem('abc\x7f'), 'a control character');
    assert.equal(headerValueProblem(' abc'), 'leading or trailing whitespace, which would be stripped in transit');
  });
});
