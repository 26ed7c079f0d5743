// The two READMEs agree, and every link of the documentation leads somewhere. README.md (the repository's, with
// docs/*.md as its reference) and README.extension.md (the extension page's) are written for different readers, so
// they are not one text; what both state is checked here against one source: the tested VS Code versions
// (test/vscode/hosts.json, engines.vscode), the commands and settings (package.json, package.nls.json), the
// configuration files MCP Gate reads (the `mcpGate.imports` list), and the sentences both must carry word for word
// (what is pinned, what happens without a sandbox). Each relative link and #anchor of README.md,
// README.extension.md and docs/*.md must name a file in the repository and a heading in it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from './helpers';

const read = (rel: string, root = ROOT) => fs.readFileSync(path.join(root, rel), 'utf8');
const flat = (t: string) => t.replace(/\s+/g, ' ');
const DOCS = fs
  .readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
/** What the repository's README says, with the reference it links to. */
const dev = () => flat([read('README.md'), ...DOCS.map((d) => read(d))].join('\n'));
const ext = () => flat(read('README.extension.md'));

/** Sentences both READMEs carry as written (whitespace aside): the facts the two must never state differently. */
export const SHARED = [
  'On macOS and Windows there is no sandbox: repository servers do not start unless you opt them out one by one (`mcpGate.sandbox`, `"off": true`).',
  '`docker run image:tag` to its image digest',
  'CVE-2025-54136',
];
/** Phrases that contradict a shared fact; neither README may carry one. */
export const CONTRADICTIONS = [
  /`docker run image:tag` download at run time/,
  /macOS and Windows[^.]*(start only once|nothing contains a server yet)/,
  /VS Code 1\.1\d\d or later/, // checked against engines.vscode below; any other minimum contradicts it
];

/** The facts two texts disagree on: shared sentences missing from one, contradicting phrases present in either. */
export function disagreements(a: string, b: string, minVscode: string): string[] {
  const out: string[] = [];
  for (const s of SHARED)
    for (const [name, t] of [
      ['README.md', a],
      ['README.extension.md', b],
    ] as const)
      if (!t.includes(flat(s))) out.push(`${name} lacks: ${s}`);
  for (const re of CONTRADICTIONS)
    for (const [name, t] of [
      ['README.md', a],
      ['README.extension.md', b],
    ] as const) {
      for (const m of t.matchAll(new RegExp(re.source, 'g')))
        if (m[0] !== `VS Code ${minVscode} or later`) out.push(`${name} says: ${m[0]}`);
    }
  return out;
}

/** GitHub's anchor of a heading. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function headings(file: string, root: string): Set<string> {
  const s = new Set<string>();
  let fence = false;
  for (const l of read(file, root).split('\n')) {
    if (l.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.+)$/.exec(l);
    if (m) s.add(slug(m[1]));
  }
  return s;
}

/** Every relative link (markdown or <img src>) of a file that does not lead to a file, or to a heading in it. */
export function brokenLinks(file: string, root = ROOT): string[] {
  const text = read(file, root)
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)|<img [^>]*src="([^"]+)"/g)].map((m) => m[1] ?? m[2]);
  const bad: string[] = [];
  for (const t of targets) {
    if (/^[a-z]+:/i.test(t)) continue; // https:, mailto:
    const [p, anchor] = t.split('#');
    const target = p ? path.normalize(path.join(path.dirname(file), decodeURIComponent(p))) : file;
    if (target.startsWith('..') || !fs.existsSync(path.join(root, target))) {
      bad.push(`${file}: ${t} (no file ${target})`);
      continue;
    }
    if (anchor && target.endsWith('.md') && !headings(target, root).has(anchor))
      bad.push(`${file}: ${t} (no heading #${anchor} in ${target})`);
  }
  return bad;
}

describe('README.md and README.extension.md agree', () => {
  const pkg = JSON.parse(read('package.json')) as {
    engines: { vscode: string };
    contributes: { commands: { title: string }[]; configuration: { properties: Record<string, { items?: { enum?: string[] } }> } };
  };
  const nls = JSON.parse(read('package.nls.json')) as Record<string, string>;
  const min = /(\d+\.\d+)/.exec(pkg.engines.vscode)![1];
  const tested = (JSON.parse(read('test/vscode/hosts.json')) as { hosts: { codeServer: string }[] }).hosts.map(
    (h) => `1.${h.codeServer.split('.')[1]}`,
  );

  it('the sentences both carry, and no phrase that contradicts them', () => {
    assert.deepEqual(disagreements(dev(), ext(), min), []);
  });

  it(`the VS Code versions: the oldest is engines.vscode (${min}), the tested ones are test/vscode/hosts.json's (${tested.join(', ')})`, () => {
    assert.equal(tested[0], min, 'engines.vscode names the oldest tested VS Code');
    const said = `tested on VS Code ${tested.join(' and ')}`;
    assert.ok(ext().includes(`VS Code ${min} or later (${said})`), `README.extension.md says: VS Code ${min} or later (${said})`);
    assert.ok(flat(read('README.md')).includes(said), `README.md says: ${said}`);
  });

  it('every command, by its title, is named in both', () => {
    const titles = pkg.contributes.commands.map((c) => nls[c.title.replace(/^%|%$/g, '')] ?? c.title);
    assert.ok(titles.length >= 10);
    for (const t of titles) {
      assert.ok(ext().includes(t), `README.extension.md names the command "${t}"`);
      assert.ok(dev().includes(t), `README.md or docs/ name the command "${t}"`);
    }
  });

  it("every setting is in the extension page's table and in the repository's documentation", () => {
    for (const key of Object.keys(pkg.contributes.configuration.properties)) {
      assert.ok(ext().includes(`| \`${key}\` |`), `README.extension.md's Settings table has ${key}`);
      assert.ok(dev().includes(key), `README.md or docs/ describe ${key}`);
    }
  });

  it('the configuration files MCP Gate reads: as many kinds as `mcpGate.imports` lists, the same first four in both', () => {
    const kinds = pkg.contributes.configuration.properties['mcpGate.imports'].items!.enum!;
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
    assert.ok(
      ext().includes(`Servers from ${words[kinds.length]} kinds of MCP configuration files`),
      `README.extension.md counts ${kinds.length} kinds`,
    );
    const four = '`.vscode/mcp.json`, `.mcp.json`, `.cursor/mcp.json`, `.codex/config.toml` and more';
    assert.ok(ext().includes(four) && flat(read('README.md')).includes(four));
  });

  it('the check can fail: a README that calls a tagged image unpinned, or names another minimum, is seen', () => {
    const good = SHARED.join(' ');
    assert.deepEqual(disagreements(good, good, min), []);
    assert.deepEqual(disagreements(good, `${good} VS Code 1.101 or later. what \`docker run image:tag\` download at run time`, min), [
      'README.extension.md says: `docker run image:tag` download at run time',
      'README.extension.md says: VS Code 1.101 or later',
    ]);
    assert.deepEqual(disagreements(good.replace('CVE-2025-54136', ''), good, min), ['README.md lacks: CVE-2025-54136']);
  });
});

describe('documentation links', () => {
  for (const file of ['README.md', 'README.extension.md', ...DOCS]) {
    it(`${file}: every relative link names a file, and every #anchor a heading`, () => {
      assert.deepEqual(brokenLinks(file), []);
    });
  }

  it('the check can fail: a missing file and a missing heading are named', () => {
    assert.equal(slug('Other agents: Claude Code, Codex CLI, Gemini CLI, Cursor'), 'other-agents-claude-code-codex-cli-gemini-cli-cursor');
    assert.equal(slug('The host: how servers are run'), 'the-host-how-servers-are-run');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-links-'));
    try {
      const rel = 'docs/x.md';
      fs.mkdirSync(path.join(dir, 'docs'));
      fs.writeFileSync(path.join(dir, rel), '# Here\n[a](nope.md) [b](#here) [c](#there) [d](x.md#here) ![e](y.png) [f](../../out.md)\n');
      assert.deepEqual(
        brokenLinks(rel, dir).map((l) => l.replace(/ \(.*$/, '')),
        [`${rel}: nope.md`, `${rel}: #there`, `${rel}: y.png`, `${rel}: ../../out.md`],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
