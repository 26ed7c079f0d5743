// package.json's menus and walkthrough, read as VS Code reads them: every command a menu names is contributed,
// every context key a `when` clause or completion event reads is one src/vscode/menus.ts sets, the context menu of
// MCP configuration files matches exactly the repository files of the catalogue (the tool adapters' list) and no
// other file, and every walkthrough step's media is packaged.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CATALOGUE } from '../../../src/trust/sources/catalogue';
import { CMD, CONTEXT_KEYS } from '../../../src/vscode/command-ids';
import { ROOT } from '../helpers';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const menus = pkg.contributes.menus as Record<string, { command: string; when?: string }[]>;

/** The regex of a `resourcePath =~ /…/` clause, as VS Code's when-clause parser builds it. */
function resourceRegex(when: string): RegExp {
  const m = /resourcePath =~ \/(.*)\/$/.exec(when);
  assert.ok(m, `a resourcePath clause: ${when}`);
  return new RegExp(m[1]!);
}

describe('package.json menus and walkthrough', () => {
  it('every menu entry names a contributed command; the commands that apply only sometimes have a when clause', () => {
    const ids = new Set<string>(Object.values(CMD));
    for (const [where, entries] of Object.entries(menus)) for (const e of entries) assert.ok(ids.has(e.command), `${where}: ${e.command}`);
    const palette = new Map(menus.commandPalette.map((e) => [e.command, e.when]));
    for (const c of [
      CMD.approve,
      CMD.reject,
      CMD.reset,
      CMD.updatePackage,
      CMD.reopenThroughGate,
      CMD.routeVsCodeServers,
      CMD.installSandbox,
    ])
      assert.ok(palette.get(c), `${c} has a when clause`);
    assert.equal(palette.get(CMD.serverActions), 'false', 'the lens menu needs a server: never in the palette');
  });

  it('every context key read is one MCP Gate sets', () => {
    const known = new Set<string>(Object.values(CONTEXT_KEYS));
    const whens = [
      ...Object.values(menus)
        .flat()
        .map((e) => e.when ?? ''),
      ...pkg.contributes.walkthroughs.flatMap((w: { when?: string; steps: { completionEvents?: string[] }[] }) => [
        w.when ?? '',
        ...w.steps.flatMap((s) => s.completionEvents ?? []),
      ]),
    ];
    const read = new Set(
      whens
        .flatMap((w) => [...w.matchAll(/mcpGate\.[A-Za-z]+/g)].map((m) => m[0]!))
        .filter((k) => !(Object.values(CMD) as string[]).includes(k) || /^onContext/.test(k)),
    );
    for (const w of whens) for (const m of w.matchAll(/onContext:!?(mcpGate\.[A-Za-z]+)/g)) read.add(m[1]!);
    for (const k of read) if (!(Object.values(CMD) as string[]).includes(k)) assert.ok(known.has(k), `${k} is set by src/vscode/menus.ts`);
    assert.ok(read.size >= 8, [...read].join(', '));
  });

  it("the configuration files' context menu matches each repository file of the catalogue, in a folder or nested, and nothing else", () => {
    const entries = [...menus['explorer/context']!, ...menus['editor/context']!].filter((e) => e.command === CMD.reviewFile);
    assert.equal(entries.length, 2);
    for (const e of entries) {
      assert.match(e.when!, /^resourceScheme == file && /);
      const re = resourceRegex(e.when!);
      for (const l of CATALOGUE.filter((x) => x.scope === 'repository' && x.relPath)) {
        assert.ok(re.test(`/home/me/app/${l.relPath}`), l.relPath);
        assert.ok(re.test(`C:\\src\\app\\${l.relPath!.replace(/\//g, '\\')}`), `${l.relPath} (Windows)`);
      }
      for (const not of [
        '/home/me/app/mcp.json',
        '/home/me/app/x.mcp.json',
        '/home/me/app/.vscode/settings.json',
        '/home/me/app/.mcp.json.bak',
        '/home/me/app/.cursorx/mcp.json',
      ])
        assert.ok(!re.test(not), not);
    }
  });

  it('the walkthrough routes, checks the sandbox, approves and tries a tool, each step with packaged media and a command', () => {
    const [w] = pkg.contributes.walkthroughs;
    assert.deepEqual(
      w.steps.map((s: { id: string }) => s.id),
      ['route', 'sandbox', 'approve', 'try'],
    );
    const nls = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.nls.json'), 'utf8'));
    const ignore = fs.readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8');
    for (const s of w.steps) {
      assert.ok(fs.existsSync(path.join(ROOT, s.media.markdown)), s.media.markdown);
      assert.match(ignore, /^!media\/walkthrough\/\*\*$/m, 'packaged');
      const text = nls[s.description.replace(/%/g, '')];
      assert.match(text, /\(command:mcpGate\.\w+\)/, `${s.id} has a command link`);
    }
    // Ticked when done, not when its command is merely run: routed, a server approved, a tool called.
    const events = Object.fromEntries(w.steps.map((s: { id: string; completionEvents: string[] }) => [s.id, s.completionEvents]));
    assert.deepEqual(events.route, ['onContext:mcpGate.routed']);
    assert.deepEqual(events.approve, ['onContext:mcpGate.hasApproved']);
    assert.deepEqual(events.try, ['onContext:mcpGate.triedTool']);
    // It names exactly the setting the routing writes for a new user (src/trust/sources/vscode-own.ts routingOf).
    const route = fs.readFileSync(path.join(ROOT, 'media/walkthrough/route.md'), 'utf8');
    assert.match(route, /`"chat\.mcp\.access": "registry"`/);
    assert.match(nls['walkthrough.route.description'], /"chat\.mcp\.access": "registry"/);
  });
});
