// The conformance suite's client under test: MCP Gate's host. Run by @modelcontextprotocol/conformance as
// `node out/test/conformance/client.js <server-url>` (scenario in MCP_CONFORMANCE_SCENARIO). It declares the
// scenario's server as a user server on loopback (local-development exception, every tool allowed), starts a
// Session, which negotiates the revision, reads the tool list through every bound, and calls each tool once
// with arguments built from its input schema, printing how long each call took. Exit code 0 when the session started, 1 otherwise.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EventLog } from '../../src/host/log/log';
import { Session } from '../../src/host/session';
import { Masker } from '../../src/policy/mask';
import { loadUserPolicy } from '../../src/policy/user-policy';
import { evaluateGate } from '../../src/trust/gate';
import { inProcess } from '../../src/trust/packages/npm-resolve';

/** String values that need the header encoding (http-custom-headers names its properties after them). */
const UNSAFE: Array<[RegExp, string]> = [
  [/non_ascii/, 'Région'],
  [/^whitespace/, ' padded '],
  [/leading_space/, ' leading'],
  [/trailing_space/, 'trailing '],
  [/internal_space/, 'in side'],
  [/control_char/, 'a\u0001b'],
  [/crlf/, 'a\r\nb'],
  [/^tab/, '\tx'],
];

/** A value for a schema property: its default, else the first enum member, else one of its type. */
function valueFor(schema: Record<string, unknown> | undefined, name = ''): unknown {
  if (!schema) return 'x';
  const unsafe = UNSAFE.find(([re]) => re.test(name));
  if (unsafe && schema.type === 'string') return unsafe[1];
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  switch (schema.type) {
    case 'integer':
      return 3;
    case 'number':
      return 2.5;
    case 'boolean':
      return true;
    case 'object':
      return argsFor(schema);
    case 'array':
      return [];
    default:
      return 'us-west1';
  }
}

/** Arguments for every required property and every property mirrored into a header. */
function argsFor(schema: unknown): Record<string, unknown> {
  const s = schema as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    if (s.required?.includes(k) || (p && 'x-mcp-header' in p && typeof p['x-mcp-header'] === 'string' && p.type !== 'boolean'))
      out[k] = valueFor(p, k);
  }
  return out;
}

async function main(): Promise<void> {
  const url = process.argv[2];
  if (!url) throw new Error('usage: client.js <server-url>');
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-conformance-'));
  try {
    const home = path.join(base, 'home');
    const project = path.join(base, 'project');
    fs.mkdirSync(path.join(home, '.config', 'mcp-gate'), { recursive: true });
    fs.mkdirSync(project, { recursive: true });
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    fs.writeFileSync(
      path.join(home, '.config', 'mcp-gate', 'config.json'),
      JSON.stringify({
        servers: { scenario: { url } },
        localExceptions: [{ server: 'scenario', allowLoopback: true }],
        rules: [
          { action: `mcp.scenario.host.${host}`, decision: 'allow' },
          { action: 'mcp.scenario.tool.*', decision: 'allow' },
        ],
      }),
    );
    const env = { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share') };
    const store = path.join(base, 'store');
    const masker = new Masker();
    const report = evaluateGate({ projectDir: project, storeDir: store, machine: { home, env, platform: 'linux' }, masker });
    const log = new EventLog(store, masker);
    const session = await Session.start({
      report,
      policy: loadUserPolicy(report.userPolicy),
      log,
      storeDir: store,
      secrets: async () => undefined,
      env: process.env,
      npm: inProcess,
      masker,
      discoverTimeoutMs: 10_000,
      callTimeoutMs: 10_000,
    });
    try {
      for (const n of session.notes) console.error(n);
      if (!session.servers().length) process.exitCode = 1;
      const tools = session.tools();
      for (const t of tools) {
        // json-schema-2020-12-preservation: the echo tool takes another tool's input schema, as the client read it
        const echo = t.name === 'json_schema_echo' ? tools.find((o) => o.name !== t.name) : undefined;
        const t0 = Date.now();
        const r = await session.call(t.server, t.name, echo ? { schema: echo.inputSchema } : argsFor(t.inputSchema));
        // test/conformance/run.mjs reads the duration: every call ends within its bound (a refusal at once)
        console.log(`${t.name}: ${r.ok ? 'ok' : `failed: ${r.error ?? JSON.stringify(r.result)}`} (call ${Date.now() - t0} ms)`);
      }
      console.log(`refused server→client requests: ${JSON.stringify(session.counters.refusedRequests)}`);
    } finally {
      await session.close();
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
