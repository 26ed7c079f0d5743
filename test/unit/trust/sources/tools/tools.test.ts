// The adapters are the one place that knows a foreign tool: the catalogue, the import kinds, pre-approval, the
// gate's cache key and the sandbox's protected workspace entries are all built from the list in
// src/trust/sources/tools/index.ts, so adding a source (or a tool) protects its file without another edit. Every
// adapter file says its job in a header, and the folder imports nothing from the later rooms of src/trust.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_FILES, CATALOGUE, CATALOGUE_ENV, IMPORT_KINDS } from '../../../../../src/trust/sources/catalogue';
import { AGENTS, MANAGED_AGENTS, toolEnv, TOOLS, workspaceProtection } from '../../../../../src/trust/sources/tools';
import { repoFile, topLevel, userFile, type Tool } from '../../../../../src/trust/sources/tools/tool';
import { HOST_PROTECTED_IN_WORKSPACE, PROTECTED_IN_WORKSPACE, protectedInWorkspace } from '../../../../../src/host/sandbox/decision';
import { GateCache } from '../../../../../src/trust/gate';
import { cleanupTemp, ROOT, world, writeFiles } from '../../../helpers';

const TOOLS_DIR = path.join(ROOT, 'src', 'trust', 'sources', 'tools');

describe('tool adapters (src/trust/sources/tools/)', () => {
  after(() => cleanupTemp());

  it("every repository row of the catalogue has its top-level workspace entry in the sandbox's protected list", () => {
    const repositoryRows = CATALOGUE.filter((l) => l.scope === 'repository');
    assert.equal(repositoryRows.length, TOOLS.length, 'one repository row per tool');
    for (const l of repositoryRows)
      assert.ok(PROTECTED_IN_WORKSPACE.includes(topLevel(l.relPath!)), `${l.relPath} (${l.kind}) is protected`);
    for (const keep of ['.git', '.vscode', '.envrc', '.idea', '.devcontainer', '.claude', '.mcp.json'])
      assert.ok(PROTECTED_IN_WORKSPACE.includes(keep), keep);
    assert.deepEqual(
      HOST_PROTECTED_IN_WORKSPACE.filter((n) => !PROTECTED_IN_WORKSPACE.includes(n)),
      [],
    );
  });

  it('the protected list is computed from the adapters: a new source or tool adds its entry', () => {
    const fake: Tool<'fake'> = {
      kind: 'fake',
      name: 'Fake Agent',
      sources: [repoFile('.fake/conf/mcp.json', 'mcpServers'), userFile((m) => path.join(m.home, '.fake.json'), 'mcpServers')],
      env: ['FAKE_HOME'],
      protect: ['.fake-hooks'],
    };
    assert.deepEqual(workspaceProtection([fake]), ['.fake', '.fake-hooks']);
    const withFake = protectedInWorkspace([...TOOLS, fake]);
    assert.ok(withFake.includes('.fake') && withFake.includes('.fake-hooks'), withFake.join(', '));
    assert.deepEqual(protectedInWorkspace([...TOOLS]), PROTECTED_IN_WORKSPACE);
    assert.equal(protectedInWorkspace([]).includes('.gemini'), false, 'no tool, no tool folder');
    // A second repository source of an existing tool protects its entry too.
    const more = { ...TOOLS[1], sources: [...TOOLS[1].sources, repoFile('.claude-extra.json', 'mcpServers')] };
    assert.ok(protectedInWorkspace([more]).includes('.claude-extra.json'));
    assert.deepEqual(toolEnv([fake, fake]), ['FAKE_HOME']);
  });

  it("the catalogue, import kinds and steering files are the adapters' rows, in the list's order", () => {
    assert.deepEqual(
      [...IMPORT_KINDS],
      TOOLS.map((t) => t.kind),
    );
    assert.deepEqual(
      CATALOGUE.slice(1).map((l) => `${l.kind}:${l.scope}:${l.relPath ?? ''}`),
      [
        ...TOOLS.flatMap((t) => t.sources.filter((s) => s.scope === 'repository').map((s) => `${t.kind}:repository:${s.relPath}`)),
        ...TOOLS.flatMap((t) => t.sources.filter((s) => s.scope === 'user').map(() => `${t.kind}:user:`)),
      ],
    );
    assert.deepEqual(
      AGENT_FILES.map((a) => a.relPath),
      ['AGENTS.md', '.github/copilot-instructions.md', '.github/chatmodes', '.github/prompts', '.github/instructions', '.agentty/agents'],
    );
    assert.deepEqual([...AGENTS].sort(), ['claude', 'codex', 'cursor', 'gemini']);
    assert.deepEqual([...MANAGED_AGENTS], ['claude', 'gemini', 'codex']);
    for (const v of ['MCP_GATE_CONFIG', 'XDG_CONFIG_HOME', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'GEMINI_CLI_HOME', 'AGENTTY_MCP_CONFIG'])
      assert.ok(CATALOGUE_ENV.includes(v), v);
  });

  it("the gate's cache key follows every variable an adapter's paths read (CLAUDE_CONFIG_DIR here)", () => {
    const w = world({}, { '.config/mcp-gate/config.json': JSON.stringify({ imports: ['claude'] }) });
    const a = path.join(w.home, 'a');
    const b = path.join(w.home, 'b');
    writeFiles(a, { '.claude.json': JSON.stringify({ mcpServers: { fromA: { command: 'a' } } }) });
    writeFiles(b, { '.claude.json': JSON.stringify({ mcpServers: { fromB: { command: 'b' } } }) });
    const cache = new GateCache();
    const at = (dir: string) => ({ ...w.input, machine: { ...w.machine, env: { ...w.machine.env, CLAUDE_CONFIG_DIR: dir } } });
    assert.deepEqual(
      cache.get(at(a)).servers.map((s) => s.name),
      ['fromA'],
    );
    assert.deepEqual(
      cache.get(at(b)).servers.map((s) => s.name),
      ['fromB'],
    );
  });

  it('every file of the folder starts with a header comment and imports nothing from the later rooms of src/trust', () => {
    const files = fs.readdirSync(TOOLS_DIR).filter((f) => f.endsWith('.ts'));
    for (const t of ['claude', 'codex', 'gemini', 'cursor', 'vscode', 'pi', 'agentty', 'roo', 'kiro', 'amazonq', 'tool', 'index'])
      assert.ok(files.includes(`${t}.ts`), `${t}.ts`);
    const sources = path.join(ROOT, 'src', 'trust', 'sources');
    for (const f of files) {
      const text = fs.readFileSync(path.join(TOOLS_DIR, f), 'utf8');
      assert.match(text, /^\/\/ \S/, `${f} starts with a header comment`);
      for (const m of text.matchAll(/from '(\.[^']+)'/g)) {
        const target = path.resolve(TOOLS_DIR, m[1]);
        const inSources = !path.relative(sources, target).startsWith('..');
        const allowed = inSources || target === path.join(ROOT, 'src', 'text', 'escape');
        assert.ok(allowed, `${f} imports ${m[1]}, outside src/trust/sources`);
      }
    }
  });

  it("outside the adapters no source file names a foreign tool's configuration path", () => {
    const literal =
      /['"`](?:[^'"`\n]*\/)?(?:\.claude(?:\.json)?|\.gemini|\.codex|\.cursor|\.mcp\.json|\.pi|\.agentty|\.roo|\.kiro|\.amazonq|\.aws)(?:\/[^'"`\n]*)?['"`]/;
    const walk = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
    const offenders: string[] = [];
    for (const f of walk(path.join(ROOT, 'src'))) {
      if (f.startsWith(TOOLS_DIR + path.sep)) continue;
      fs.readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/^\s*(\/\/|\*|\/\*)/.test(line)) return; // comments may name files
          if (literal.test(line)) offenders.push(`${path.relative(ROOT, f)}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(offenders, []);
  });
});
