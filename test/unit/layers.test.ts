// The layer rules, read from the imports of every source file: `trust` (what is declared and approved) and
// `policy` (what is allowed) import neither each other nor `host`; `host` (the only code that talks to or starts
// servers) imports no front end; `report` (shared renderings) imports no front end; nothing imports `cli`; front
// ends do not import each other; only `src/vscode` and `src/extension.ts` import `vscode`. The panel is split by
// where its code runs: webview/common (pure: protocol, view-model types, log model) imports neither side;
// webview/browser and webview/main.ts (the bundle) import nothing from Node and nothing from webview/node (the
// extension host's side), and the bundle (webview/main.ts and all it imports) reaches no Node module. `src/guard`
// (the load guard, run inside servers' processes as its own bundle) imports only Node's built-ins and the files
// beside it in its own folder (`./x`: src/guard/node is split by concept, bundled into one file; and the tables it
// shares with the Python guard, `../python/mcp_gate_guard_parts/*.json`), and nothing
// imports it. `src/netshim` (the network shim, preloaded into contained servers' processes as its own bundle) keeps
// the same rule as `src/guard`.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { ROOT } from './helpers';

type Layer =
  | 'text'
  | 'trust'
  | 'policy'
  | 'host'
  | 'report'
  | 'cli'
  | 'vscode'
  | 'webview/common'
  | 'webview/browser'
  | 'webview/node'
  | 'guard'
  | 'netshim'
  | 'other';

/** A Node built-in module (`node:fs`, `fs`, `fs/promises`, …): nothing the browser bundle may import. */
const NODE_BUILTIN = new RegExp(`^(node:.*|(${builtinModules.join('|')})(/.*)?)$`);

/** A package name that is not a Node built-in (`undici`, `@scope/x/sub`): code the guard would have to carry. */
/** A relative import that is not a sibling file of the same folder (`./manifest`): the guard's files import only each other. */
const NOT_SIBLING = /^(?!\.\/[\w-]+$)\./;
/** The same for the Node guard, which also reads the tables both guards share (data, in the Python guard's parts). */
const NOT_SIBLING_OR_TABLE = /^(?!\.\/[\w-]+$|\.\.\/python\/mcp_gate_guard_parts\/[\w-]+\.json$)\./;
const NOT_BUILTIN_PACKAGE = new RegExp(`^(?!(node:|(${builtinModules.join('|')})(/|$)))@?[a-z0-9][\\w.-]*(/[\\w.-]+)*$`);

const FORBIDDEN: Record<Layer, { layers: Layer[]; modules: RegExp[] }> = {
  text: {
    layers: [
      'guard',
      'netshim',
      'trust',
      'policy',
      'host',
      'report',
      'cli',
      'vscode',
      'webview/common',
      'webview/browser',
      'webview/node',
      'other',
    ],
    modules: [/^vscode$/],
  },
  trust: {
    layers: ['guard', 'netshim', 'policy', 'host', 'report', 'cli', 'vscode', 'webview/common', 'webview/browser', 'webview/node'],
    modules: [/^vscode$/],
  },
  policy: {
    layers: ['guard', 'netshim', 'trust', 'host', 'report', 'cli', 'vscode', 'webview/common', 'webview/browser', 'webview/node'],
    modules: [/^vscode$/],
  },
  host: {
    layers: ['guard', 'netshim', 'report', 'cli', 'vscode', 'webview/common', 'webview/browser', 'webview/node'],
    modules: [/^vscode$/],
  },
  report: { layers: ['guard', 'netshim', 'cli', 'vscode', 'webview/common', 'webview/browser', 'webview/node'], modules: [/^vscode$/] },
  cli: { layers: ['guard', 'netshim', 'vscode', 'webview/common', 'webview/browser', 'webview/node'], modules: [/^vscode$/] },
  vscode: { layers: ['guard', 'netshim', 'cli'], modules: [] },
  'webview/common': {
    layers: ['guard', 'netshim', 'cli', 'vscode', 'webview/browser', 'webview/node'],
    modules: [/^vscode$/, NODE_BUILTIN],
  },
  'webview/browser': { layers: ['guard', 'netshim', 'cli', 'vscode', 'webview/node'], modules: [/^vscode$/, NODE_BUILTIN] },
  'webview/node': { layers: ['guard', 'netshim', 'cli', 'vscode', 'webview/browser'], modules: [/^vscode$/] },
  other: { layers: ['guard', 'netshim', 'cli'], modules: [] },
  // The load guard runs inside servers' own processes, its own bundle: Node's built-ins and its own files beside it
  // (and the tables it shares with the Python guard, command_lines.json).
  guard: {
    layers: [
      'netshim',
      'text',
      'trust',
      'policy',
      'host',
      'report',
      'cli',
      'vscode',
      'webview/common',
      'webview/browser',
      'webview/node',
      'other',
    ],
    modules: [NOT_SIBLING_OR_TABLE, NOT_BUILTIN_PACKAGE],
  },
  // The network shim runs inside servers' own processes too, its own bundle: the same rule.
  netshim: {
    layers: [
      'guard',
      'text',
      'trust',
      'policy',
      'host',
      'report',
      'cli',
      'vscode',
      'webview/common',
      'webview/browser',
      'webview/node',
      'other',
    ],
    modules: [/^\.{1,2}\//, NOT_BUILTIN_PACKAGE],
  },
};

function layerOf(file: string): Layer {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  const m = /^src\/(text|trust|policy|host|report|cli|vscode|guard|netshim)\//.exec(rel);
  if (m) return m[1] as Layer;
  if (rel === 'src/extension.ts') return 'vscode';
  const w = /^webview\/(common|browser|node)\//.exec(rel);
  if (w) return `webview/${w[1]}` as Layer;
  if (rel === 'webview/main.ts') return 'webview/browser';
  return 'other';
}

const SPECIFIER =
  /(?:^|[^\w.])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[^\w.])import\s*['"]([^'"]+)['"]|\brequire\(\s*['"]([^'"]+)['"]\s*\)|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) out.push(m[1] ?? m[2] ?? m[3] ?? m[4]);
  return out;
}

function resolveTs(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, `${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  return undefined;
}

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/**
 * The rooms of `src/trust`, in pipeline order: a room imports only rooms before it (sources → plan → packages →
 * approval). The front door (gate.ts) and the report's shapes (report.ts) and words (words.ts) sit at its root:
 * any room may take the report's shapes and the words; only `approval` calls the gate (a decision re-reads the
 * project under the store's lock); the root takes from every room.
 */
const TRUST_ROOMS = ['sources', 'plan', 'packages', 'approval'] as const;
type TrustRoom = (typeof TRUST_ROOMS)[number] | 'root';

function trustRoomOf(rel: string): TrustRoom | undefined {
  const m = /^src\/trust\/(?:(sources|plan|packages|approval)\/)?[^/]+$/.exec(rel);
  if (!m) return undefined;
  return (m[1] as TrustRoom | undefined) ?? 'root';
}

function trustRoomViolation(fromRel: string, toRel: string): string | undefined {
  const from = trustRoomOf(fromRel);
  const to = trustRoomOf(toRel);
  if (!from || !to || from === to || from === 'root') return undefined;
  if (toRel === 'src/trust/report.ts' || toRel === 'src/trust/words.ts') return undefined;
  if (from === 'approval' && toRel === 'src/trust/gate.ts') return undefined;
  if (to !== 'root' && TRUST_ROOMS.indexOf(to) < TRUST_ROOMS.indexOf(from)) return undefined;
  return `${fromRel} (trust/${from}) imports ${toRel} (trust/${to}), a later room of the pipeline`;
}

/** Every violation of the layer rules in `files` (path → text). */
export function violations(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const from = layerOf(file);
    for (const spec of importsOf(text)) {
      const rule = FORBIDDEN[from];
      const rel = path.relative(ROOT, file);
      if (rule.modules.some((re) => re.test(spec))) out.push(`${rel} (${from}) imports "${spec}"`);
      if (!spec.startsWith('.')) continue;
      const target = resolveTs(file, spec);
      if (!target) continue;
      const to = layerOf(target);
      if (to !== from && rule.layers.includes(to)) out.push(`${rel} (${from}) imports ${path.relative(ROOT, target)} (${to})`);
      const room = trustRoomViolation(rel.split(path.sep).join('/'), path.relative(ROOT, target).split(path.sep).join('/'));
      if (room) out.push(room);
    }
  }
  return out;
}

/** Every circle of imports among `files` (type-only imports count: they tie the files as much), as file lists. */
export function circles(
  files: ReadonlyMap<string, string>,
  resolve: (from: string, spec: string) => string | undefined = resolveTs,
): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of files) {
    edges.set(
      file,
      importsOf(text)
        .filter((s) => s.startsWith('.'))
        .map((s) => resolve(file, s))
        .filter((t): t is string => !!t && files.has(t)),
    );
  }
  const out: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of edges.get(f) ?? []) {
      if (state.get(t) === 'open') out.push(stack.slice(stack.indexOf(t)).map((x) => path.relative(ROOT, x)));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of [...files.keys()].sort()) if (!state.has(f)) visit(f);
  return out;
}

/** Files of the browser bundle (webview/main.ts and all it imports) that import a Node module or are host-side. */
export function browserViolations(entry: string, read: (f: string) => string = (f) => fs.readFileSync(f, 'utf8')): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    if (layerOf(f) === 'webview/node') out.push(`${path.relative(ROOT, f)} (extension host side) is in the browser bundle`);
    for (const spec of importsOf(read(f))) {
      if (NODE_BUILTIN.test(spec)) out.push(`${path.relative(ROOT, f)} (browser bundle) imports "${spec}"`);
      if (spec.startsWith('.')) {
        const t = resolveTs(f, spec);
        if (t) queue.push(t);
      }
    }
  }
  return out;
}

describe('layers', () => {
  const files = new Map(
    [...sources(path.join(ROOT, 'src')), ...sources(path.join(ROOT, 'webview'))].map((f) => [f, fs.readFileSync(f, 'utf8')]),
  );

  it('the checker finds a violation when there is one (it can fail)', () => {
    const fake = new Map([
      [path.join(ROOT, 'src', 'trust', 'x.ts'), "import * as vscode from 'vscode';\nimport { decide } from '../policy/decide';\n"],
      [path.join(ROOT, 'src', 'host', 'y.ts'), "import { main } from '../cli/main';\n"],
    ]);
    assert.deepEqual(violations(fake), [
      'src/trust/x.ts (trust) imports "vscode"',
      'src/trust/x.ts (trust) imports src/policy/decide.ts (policy)',
      'src/host/y.ts (host) imports src/cli/main.ts (cli)',
    ]);
    const entry = path.join(ROOT, 'webview', 'main.ts');
    assert.deepEqual(
      browserViolations(entry, (f) => (f === entry ? "import * as fs from 'node:fs';\n" : '')),
      ['webview/main.ts (browser bundle) imports "node:fs"'],
    );
  });

  it('the checker finds a browser or common file reaching Node or the host side (it can fail)', () => {
    const fake = new Map([
      [
        path.join(ROOT, 'webview', 'browser', 'x.ts'),
        "import { createHash } from 'crypto';\nimport { buildModel } from '../node/model';\n",
      ],
      [path.join(ROOT, 'webview', 'common', 'y.ts'), "import { readFileSync } from 'fs/promises';\nimport { h } from '../browser/dom';\n"],
      [path.join(ROOT, 'webview', 'main.ts'), "import { LogTail } from './node/log-tail';\n"],
      [path.join(ROOT, 'webview', 'node', 'z.ts'), "import * as fs from 'node:fs';\nimport { LOG_KINDS } from '../common/log-model';\n"],
    ]);
    assert.deepEqual(violations(fake), [
      'webview/browser/x.ts (webview/browser) imports "crypto"',
      'webview/browser/x.ts (webview/browser) imports webview/node/model.ts (webview/node)',
      'webview/common/y.ts (webview/common) imports "fs/promises"',
      'webview/common/y.ts (webview/common) imports webview/browser/dom.ts (webview/browser)',
      'webview/main.ts (webview/browser) imports webview/node/log-tail.ts (webview/node)',
    ]);
    const entry = path.join(ROOT, 'webview', 'main.ts');
    const texts = new Map([
      [entry, "import { x } from './common/log-model';\n"],
      [path.join(ROOT, 'webview', 'common', 'log-model.ts'), "import { y } from '../node/model';\n"],
    ]);
    assert.deepEqual(
      browserViolations(entry, (f) => texts.get(f) ?? "import * as os from 'node:os';\n"),
      ['webview/node/model.ts (extension host side) is in the browser bundle', 'webview/node/model.ts (browser bundle) imports "node:os"'],
    );
  });

  it('the checker finds a later room of src/trust and a circle (it can fail)', () => {
    const t = (f: string) => path.join(ROOT, 'src', 'trust', f);
    const fake = new Map([
      [t('sources/a.ts'), "import { planLaunch } from '../plan/launch-plan';\nimport type { ServerReport } from '../report';\n"],
      [t('plan/b.ts'), "import { evaluateGate } from '../gate';\nimport { parseJsonc } from '../sources/parse';\n"],
      [t('approval/c.ts'), "import { evaluateGate } from '../gate';\nimport { pin } from '../plan/digest';\n"],
    ]);
    assert.deepEqual(violations(fake), [
      'src/trust/sources/a.ts (trust/sources) imports src/trust/plan/launch-plan.ts (trust/plan), a later room of the pipeline',
      'src/trust/plan/b.ts (trust/plan) imports src/trust/gate.ts (trust/root), a later room of the pipeline',
    ]);
    const ring = new Map([
      [t('x.ts'), "import type { Y } from './y';\n"],
      [t('y.ts'), "import { z } from './z';\n"],
      [t('z.ts'), "import { x } from './x';\n"],
      [t('w.ts'), "import { x } from './x';\n"],
    ]);
    const inRing = (from: string, spec: string) => {
      const f = path.resolve(path.dirname(from), `${spec}.ts`);
      return ring.has(f) ? f : undefined;
    };
    assert.deepEqual(circles(ring, inRing), [['src/trust/x.ts', 'src/trust/y.ts', 'src/trust/z.ts']]);
  });

  it('the checker finds the network shim importing a package or our code, and our code importing it (it can fail)', () => {
    const fake = new Map([
      [
        path.join(ROOT, 'src', 'netshim', 'x.ts'),
        "import net = require('node:net');\nimport { Agent } from 'undici';\nimport { DOOR_PORT } from '../host/net/egress';\n",
      ],
      [path.join(ROOT, 'src', 'host', 'y.ts'), "import { parseDoor } from '../netshim/net-shim';\n"],
    ]);
    assert.deepEqual(violations(fake), [
      'src/netshim/x.ts (netshim) imports "undici"',
      'src/netshim/x.ts (netshim) imports "../host/net/egress"',
      'src/netshim/x.ts (netshim) imports src/host/net/egress.ts (host)',
      'src/host/y.ts (host) imports src/netshim/net-shim.ts (netshim)',
    ]);
  });

  it('the checker finds the load guard importing a package or our code, and lets its files import each other (it can fail)', () => {
    const fake = new Map([
      [
        path.join(ROOT, 'src', 'guard', 'node', 'x.ts'),
        "import fs = require('node:fs');\nimport { getConfig } from './manifest';\nimport { Agent } from 'undici';\nimport { escape } from '../../text/escape';\nimport { y } from './../node/y';\n",
      ],
    ]);
    assert.deepEqual(violations(fake), [
      'src/guard/node/x.ts (guard) imports "undici"',
      'src/guard/node/x.ts (guard) imports "../../text/escape"',
      'src/guard/node/x.ts (guard) imports src/text/escape.ts (text)',
      'src/guard/node/x.ts (guard) imports "./../node/y"',
    ]);
  });

  it('no circle of imports anywhere in src or webview', () => {
    assert.deepEqual(circles(files), []);
  });

  it('every source file keeps to the layer rules', () => {
    assert.ok(files.size > 50, `read ${files.size} files`);
    assert.deepEqual(violations(files), []);
  });

  it("the panel's browser bundle imports nothing from Node", () => {
    assert.deepEqual(browserViolations(path.join(ROOT, 'webview', 'main.ts')), []);
  });
});
