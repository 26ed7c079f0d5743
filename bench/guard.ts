// Benchmark of the load guard (src/guard/, issue 43): what it costs a contained server, through the product's own
// path. Each case is a workspace with a .mcp.json, approved by recordDecision in two worlds of their own: one whose
// gate runs with the load guard (`loadGuard: true`: a guarded closure, every Node or Python process checking each
// file that becomes code against the workspace as approved), one without (`loadGuard: false`: the computed load pins
// the whole workspace, which is copied into the sandbox as before). Both start through Session.start, contained in
// bubblewrap (the default), and are timed from the start to the answered tools/list; close is not timed. Cases: a
// small Node server (one computed require), a module-heavy Node server (300 modules by computed paths), a tool
// call on a running server, and a Python server importing 50 workspace modules by computed names. Beside each
// start, the guard's own cost: the guarded approval started by startPlan with and without the guard (the same copy
// and sandbox), since the product comparison also counts the whole-workspace pin the guard replaces. Interleaved
// rounds; each row gives the median of all samples and the spread (min–max) of the round medians (issue 48).
import { decideStart } from '../src/policy/start';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { recordDecision } from '../src/trust/approval/approvals';
import { evaluateGate } from '../src/trust/gate';
import type { GateInput } from '../src/trust/report';
import { Session } from '../src/host/session';
import { EventLog } from '../src/host/log/log';
import { loadUserPolicy } from '../src/policy/user-policy';
import { Masker } from '../src/policy/mask';
import { inProcess } from '../src/trust/packages/npm-resolve';
import { sandboxAvailable } from '../src/host/sandbox/sandbox';
import { startPlan } from '../src/host/sandbox/contain';
import { serverIdentity } from '../src/host/identity';
import { verifiedPlan } from '../src/host/session/launch';
import { minimalEnv, StdioTransport } from '../src/host/sandbox/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { BenchRow } from './gate';
import { pythonServer } from '../test/unit/mini-server';

const MODULES = 300;
const PY_MODULES = 50;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/** A dependency-free Node stdio MCP server: `prelude` at start; `hello` answers `onCall` and whether the guard is on. */
const nodeServer = (prelude: string, onCall: string) => `${prelude}
const { createInterface } = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === 'initialize') return send({ id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } } });
  if (msg.method === 'tools/list') return send({ id: msg.id, result: { tools: [{ name: 'hello', description: 'says hello', inputSchema: { type: 'object' } }] } });
  if (msg.method === 'tools/call') return send({ id: msg.id, result: { content: [{ type: 'text', text: String(${onCall}) + (process.env.MCP_GATE_GUARD ? ' [guard on]' : ' [guard off]') }] } });
  send({ id: msg.id, error: { code: -32601, message: 'no' } });
});
`;

interface Case {
  files: Record<string, string>;
  server: Record<string, unknown>;
  /** What `hello` answers once it ran (before the guard's mark). */
  answer: RegExp;
}

/** A small Node server: one plugin by a computed path (what makes it guarded), loaded at start. */
const SMALL: Case = {
  server: { command: 'node', args: ['${workspaceFolder}/tools/server.js'] },
  files: {
    'package.json': JSON.stringify({ name: 'app', version: '1.0.0' }),
    'tools/server.js': nodeServer(
      "const path = require('node:path');\nconst word = require(path.join(__dirname, 'plugins', ['gre', 'et'].join('') + '.js'));",
      'word',
    ),
    'tools/plugins/greet.js': "module.exports = 'hello from the plugin';\n",
    'README.md': '# app\n',
  },
  answer: /hello from the plugin/,
};

/** A module-heavy Node server: 300 CommonJS modules (about 1.5 KiB each) required by computed paths at start. */
function heavy(): Case {
  const files: Record<string, string> = { 'package.json': JSON.stringify({ name: 'heavy', version: '1.0.0' }), 'README.md': '# heavy\n' };
  for (let i = 0; i < MODULES; i++) {
    const body = Array.from({ length: 40 }, (_, j) => `exports.f${j} = (x) => x * ${i + 1} + ${j}; // module ${i}, function ${j}`).join(
      '\n',
    );
    files[`lib/m${i}.js`] = `'use strict';\n${body}\nexports.id = ${i};\n`;
  }
  files['srv/server.js'] = nodeServer(
    `const path = require('node:path');\nlet sum = 0;\nfor (let i = 0; i < ${MODULES}; i++) sum += require(path.join(__dirname, '..', 'lib', 'm' + i + '.js')).id;`,
    "'modules ' + sum",
  );
  return {
    server: { command: 'node', args: ['${workspaceFolder}/srv/server.js'] },
    files,
    answer: new RegExp(`modules ${(MODULES * (MODULES - 1)) / 2}`),
  };
}

/** A Python server importing 50 workspace modules by computed names at start. */
function python(): Case {
  const files: Record<string, string> = { 'README.md': '# py\n', 'srv/mods/__init__.py': '' };
  for (let i = 0; i < PY_MODULES; i++) {
    files[`srv/mods/m${i}.py`] =
      `ID = ${i}\n${Array.from({ length: 40 }, (_, j) => `def f${j}(x):\n    return x * ${i + 1} + ${j}\n`).join('')}`;
  }
  files['srv/server.py'] = pythonServer(
    "return 'modules %d' % total + (' [guard on]' if os.environ.get('MCP_GATE_GUARD') else ' [guard off]')",
    `total = sum(importlib.import_module('mods.m%d' % i).ID for i in range(${PY_MODULES}))`,
  );
  // Debian's python3 by its path (a version manager's shim is a shell script that cannot run under the guard).
  return {
    server: { command: '/usr/bin/python3', args: ['${workspaceFolder}/srv/server.py'] },
    files,
    answer: new RegExp(`modules ${(PY_MODULES * (PY_MODULES - 1)) / 2}`),
  };
}

interface World {
  input: GateInput;
  store: string;
  full: ReturnType<typeof evaluateGate>;
  log: EventLog;
  guard: boolean;
}

/**
 * The newest Node that `npm run vscode-host` keeps (VS Code's own: it has module.registerHooks, so the guard's ES
 * module hooks run in the loading thread), or undefined when that was not run on this machine.
 */
function newerNode(): { bin: string; version: string } | undefined {
  const dir = process.env.MCP_GATE_VSCODE_DIR || path.join(os.homedir(), '.cache', 'mcp-gate-vscode');
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => /^node-\d+\.\d+\.\d+$/.test(n));
  } catch {
    return undefined;
  }
  const num = (n: string) => n.slice(5).split('.').map(Number);
  names.sort((a, b) => {
    const [x, y] = [num(a), num(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
  const last = names.at(-1);
  if (!last) return undefined;
  const bin = path.join(dir, last, 'bin', 'node');
  return fs.existsSync(bin) ? { bin, version: last.slice(5) } : undefined;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    const f = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, text);
  }
}

/** A workspace of its own with the case's server as `s`, approved with or without the load guard. */
async function worldOf(base: string, name: string, c: Case, guard: boolean): Promise<World> {
  const dir = path.join(base, name);
  const project = path.join(dir, 'project');
  const home = path.join(dir, 'home');
  const store = path.join(dir, 'store');
  write(project, { ...c.files, '.mcp.json': JSON.stringify({ mcpServers: { s: c.server } }, null, 2) });
  write(home, { '.config/mcp-gate/config.json': JSON.stringify({ rules: [{ action: 'mcp.s.tool.hello', decision: 'allow', project }] }) });
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    PATH: process.env.PATH ?? '',
  };
  const input: GateInput = {
    projectDir: project,
    storeDir: store,
    machine: { home, env, platform: 'linux' },
    masker: new Masker(),
    loadGuard: guard,
  };
  await recordDecision(input, 's', undefined, 'approved');
  const full = evaluateGate(input);
  const s = full.servers[0];
  if (s.state !== 'approved') throw new Error(`bench guard: ${name} is ${s.state}: ${s.reason}`);
  if (!!s.pinned?.pinned.guarded !== guard)
    throw new Error(`bench guard: ${name} should ${guard ? '' : 'not '}be guarded: ${JSON.stringify(s.pinned?.pinned.guarded)}`);
  return { input, store, full, log: new EventLog(store, new Masker()), guard };
}

async function open(w: World): Promise<Session> {
  const session = await Session.start({
    report: w.full,
    policy: loadUserPolicy(w.full.userPolicy),
    log: w.log,
    storeDir: w.store,
    secrets: async () => undefined,
    env: process.env,
    npm: inProcess,
    masker: new Masker(),
  });
  if (session.servers().length !== 1) throw new Error(`bench guard: the server did not start: ${session.notes.join('\n')}`);
  return session;
}

/** Milliseconds of Session.start: the re-pin, the sandbox (and the guard's wrappers), spawn, initialize, tools/list. */
async function timedStart(w: World): Promise<number> {
  const t0 = process.hrtime.bigint();
  const session = await open(w);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await session.close();
  return ms;
}

/**
 * The guard's own cost, apart from what the approval pins: the guarded world's server started by startPlan (the
 * closure copied, the sandbox built, and — `guard` — the wrappers and the manifest) and StdioTransport, to the
 * answered tools/list; the same approval without the guard only by leaving `guarded` out of what startPlan is given
 * (the same copy, sandbox and command). The process tree is then stopped as a session stops it and the start cleaned up (not timed).
 */
async function timedPlanStart(w: World, guard: boolean): Promise<number> {
  const server0 = w.full.servers[0];
  const server = guard
    ? server0
    : { ...server0, pinned: { ...server0.pinned!, pinned: { ...server0.pinned!.pinned, guarded: undefined } } };
  const project = w.input.projectDir;
  const plan = verifiedPlan(server0, project, process.env.PATH);
  const t0 = process.hrtime.bigint();
  const start = await startPlan({
    server,
    who: serverIdentity(server, project),
    project,
    plan: { ...plan, executable: plan.executable! },
    env: { ...minimalEnv(process.env), ...plan.env },
    decision: decideStart(loadUserPolicy(w.full.userPolicy), serverIdentity(server, project), process.env.HOME ?? os.homedir()),
    home: process.env.HOME ?? os.homedir(),
    hostEnv: process.env,
    npm: inProcess,
    storeDir: w.store,
  });
  if (!!start.guardReport !== guard) throw new Error(`bench guard: startPlan ${guard ? 'without' : 'with'} the guard`);
  const transport = new StdioTransport(start.launch);
  try {
    const client = new Client({ name: 'bench-guard', version: '0' });
    await client.connect(transport);
    const tools = await client.listTools();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (tools.tools.length !== 1) throw new Error(`bench guard: unexpected tools ${JSON.stringify(tools.tools)}`);
    return ms;
  } finally {
    await transport.close();
    start.cleanup();
  }
}

/** Starts once, calls, checks the answer and that the guard is on exactly where it should be. */
async function check(w: World, c: Case, name: string): Promise<void> {
  const session = await open(w);
  try {
    const said = JSON.stringify(await session.call('s', 'hello'));
    if (!c.answer.test(said) || !said.includes(w.guard ? '[guard on]' : '[guard off]'))
      throw new Error(`bench guard: ${name} answered ${said}`);
  } finally {
    await session.close();
  }
}

/** Samples and per-round medians of each contender: warm-up once each, then `rounds` interleaved rounds of `perRound`. */
async function interleaved(
  rounds: number,
  perRound: number,
  warmUp: number,
  contenders: Record<string, () => Promise<number>>,
): Promise<Record<string, { all: number[]; rounds: number[] }>> {
  const out: Record<string, { all: number[]; rounds: number[] }> = {};
  for (const [name, f] of Object.entries(contenders)) {
    for (let i = 0; i < warmUp; i++) await f();
    out[name] = { all: [], rounds: [] };
  }
  for (let r = 0; r < rounds; r++) {
    for (const [name, f] of Object.entries(contenders)) {
      const xs: number[] = [];
      for (let i = 0; i < perRound; i++) xs.push(await f());
      out[name].all.push(...xs);
      out[name].rounds.push(median(xs));
    }
  }
  return out;
}

const num = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(4));
const spread = (xs: number[], unit: string) => `round medians ${num(Math.min(...xs))}–${num(Math.max(...xs))} ${unit}`;
const ratioSpread = (a: number[], b: number[]) => {
  const r = a.map((x, i) => x / b[i]);
  return `ratio per round ${Math.min(...r).toFixed(3)}–${Math.max(...r).toFixed(3)}`;
};

const delta = (d: number) => `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(Math.abs(d) < 1 ? 3 : 1)} ms`;

/** For bench/run.mjs. */
export async function benchGuard(): Promise<BenchRow[]> {
  const probe = sandboxAvailable();
  if (!probe.ok)
    return [{ name: 'guard: contained start under the load guard', median: NaN, unit: 'ms', note: `not measured: ${probe.reason}` }];
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-bench-guard-')));
  try {
    const newer = newerNode();
    const cases: Record<string, Case> = { small: SMALL, heavy: heavy(), python: python() };
    if (newer) cases.newer = { ...SMALL, server: { ...SMALL.server, command: newer.bin } };
    const worlds: Record<string, World> = {};
    for (const [name, c] of Object.entries(cases)) {
      for (const guard of [false, true]) {
        const key = `${name}-${guard ? 'guard' : 'plain'}`;
        worlds[key] = await worldOf(base, key, c, guard);
        await check(worlds[key], c, key);
      }
    }
    const [rounds, perRound] = [7, 3];
    const starts = await interleaved(
      rounds,
      perRound,
      1,
      Object.fromEntries(Object.keys(worlds).map((k) => [k, () => timedStart(worlds[k])])),
    );
    const guardedKeys = Object.keys(cases).map((k) => `${k}-guard`);
    const planStarts = await interleaved(
      rounds,
      perRound,
      1,
      Object.fromEntries(
        guardedKeys.flatMap((k) => [
          [`${k}-off`, () => timedPlanStart(worlds[k], false)],
          [`${k}-on`, () => timedPlanStart(worlds[k], true)],
        ]),
      ),
    );

    // A tool call on a running server (the small one), each contender's session open for the whole measurement.
    const running = { plain: await open(worlds['small-plain']), guard: await open(worlds['small-guard']) };
    let calls;
    try {
      const call = (s: Session) => async () => {
        const t0 = process.hrtime.bigint();
        await s.call('s', 'hello');
        return Number(process.hrtime.bigint() - t0) / 1e6;
      };
      calls = await interleaved(10, 50, 100, { plain: call(running.plain), guard: call(running.guard) });
    } finally {
      await running.plain.close();
      await running.guard.close();
    }

    const n = rounds * perRound;
    const startRows = (key: string, what: string, about: string): BenchRow[] => {
      const p = starts[`${key}-plain`];
      const g = starts[`${key}-guard`];
      const off = planStarts[`${key}-guard-off`];
      const on = planStarts[`${key}-guard-on`];
      return [
        {
          name: `guard: contained start of ${what}, without the load guard`,
          median: median(p.all),
          unit: 'ms',
          note: `${n} starts (${rounds} interleaved rounds of ${perRound}), ${spread(p.rounds, 'ms')}; approved with loadGuard off: the computed load pins the whole workspace, copied into the sandbox; ${about}`,
        },
        {
          name: `guard: contained start of ${what}, under the load guard`,
          median: median(g.all),
          unit: 'ms',
          baseline: 'without the load guard',
          ratio: median(g.all) / median(p.all),
          note: `${n} starts, ${spread(g.rounds, 'ms')}; ${ratioSpread(g.rounds, p.rounds)}; wrappers over node and python bound into the sandbox, the manifest written, each file checked when it loads`,
        },
        {
          name: `guard: the guard's own cost, ${what.replace(/ \(Session.*\)/, '')}: startPlan without the guard, same approval (for comparison only)`,
          median: median(off.all),
          unit: 'ms',
          note: `${n} starts, ${spread(off.rounds, 'ms')}; the guarded approval's closure copy and sandbox, started without the guard's wrappers (startPlan + StdioTransport to tools/list); no real start runs like this`,
        },
        {
          name: `guard: the guard's own cost, ${what.replace(/ \(Session.*\)/, '')}: startPlan under the guard`,
          median: median(on.all),
          unit: 'ms',
          baseline: 'same approval, no guard',
          ratio: median(on.all) / median(off.all),
          note: `${n} starts, ${spread(on.rounds, 'ms')}; ${ratioSpread(on.rounds, off.rounds)}; the guard alone: ${delta(median(on.all) - median(off.all))}`,
        },
      ];
    };
    return [
      ...startRows(
        'small',
        'a small Node server (Session.start: spawn, initialize, tools/list)',
        'one plugin by a computed require; Session.start (re-pin, sandbox, spawn, initialize, tools/list), close not timed',
      ),
      ...startRows(
        'heavy',
        `a module-heavy Node server (${MODULES} modules by computed paths)`,
        `${MODULES} CommonJS modules of 1.5 KiB required at start`,
      ),
      ...startRows(
        'python',
        `a Python server (${PY_MODULES} workspace modules by computed names)`,
        `/usr/bin/python3, ${PY_MODULES} modules imported at start with importlib (no bytecode kept between starts)`,
      ),
      ...(newer
        ? startRows(
            'newer',
            `the small Node server on Node ${newer.version}`,
            `VS Code's Node (kept by npm run vscode-host), which has module.registerHooks: the guard's ES module hooks run in the loading thread, no loader thread is started`,
          )
        : [
            {
              name: 'guard: contained start of the small Node server on a Node with module.registerHooks',
              median: NaN,
              unit: 'ms',
              note: "not measured: no Node 22 or newer in ~/.cache/mcp-gate-vscode (npm run vscode-host keeps VS Code's)",
            } as BenchRow,
          ]),
      {
        name: 'guard: tools/call on a running contained server, without the load guard',
        median: median(calls.plain.all),
        unit: 'ms',
        note: `${calls.plain.all.length} calls (10 interleaved rounds of 50, after 100 each), ${spread(calls.plain.rounds, 'ms')}; the small Node server through its session, log written`,
      },
      {
        name: 'guard: tools/call on a running contained server, under the load guard',
        median: median(calls.guard.all),
        unit: 'ms',
        baseline: 'without the load guard',
        ratio: median(calls.guard.all) / median(calls.plain.all),
        note: `${calls.guard.all.length} calls, ${spread(calls.guard.rounds, 'ms')}; ${ratioSpread(calls.guard.rounds, calls.plain.rounds)}; ${delta(median(calls.guard.all) - median(calls.plain.all))} a call: nothing new loads on a call; the session reads the guard's report file once per answer (session/call.ts guardCheck)`,
      },
    ];
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}
