// The size rule for the Python under src/ (the load guard src/guard/python/, the network shim src/netshim/), as
// ESLint's max-lines and max-lines-per-function hold it for TypeScript: no file over 600 lines and no function over
// 100, blank and comment-only lines not counted. Read with python3's own `ast` in a child process. And the Python
// guard's parts (src/guard/python/mcp_gate_guard_parts/) import only the standard library and each other: it runs
// inside a server's processes, loaded by its entry mcp_gate_guard.py, and nothing of MCP Gate is there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './helpers';

/** Standard modules of a newer Python than the one the test may run (`_sha2`: 3.12's sha256, the guard's fallback). */
const NEWER_STDLIB = new Set(['_sha2']);

const PY = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

const MEASURE = `
import ast, json, os, sys
root = sys.argv[1]
out = {'files': {}, 'functions': [], 'imports': []}
def counted(lines):
    return sum(1 for l in lines if l.strip() and not l.strip().startswith('#'))
for base, dirs, names in os.walk(os.path.join(root, 'src')):
    dirs[:] = [d for d in dirs if d != '__pycache__']
    for name in names:
        if not name.endswith('.py'):
            continue
        p = os.path.join(base, name)
        rel = os.path.relpath(p, root).replace(os.sep, '/')
        with open(p, encoding='utf-8') as f:
            text = f.read()
        lines = text.split('\\n')
        out['files'][rel] = counted(lines)
        tree = ast.parse(text, p)
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out['functions'].append([rel, n.name, n.lineno, counted(lines[n.lineno - 1:n.end_lineno])])
            elif rel.startswith('src/guard/python/') and isinstance(n, ast.Import):
                out['imports'].extend([rel, a.name, 0] for a in n.names)
            elif rel.startswith('src/guard/python/') and isinstance(n, ast.ImportFrom):
                out['imports'].append([rel, n.module or '', n.level])
out['stdlib'] = sorted(getattr(sys, 'stdlib_module_names', ()))
print(json.dumps(out))
`;

interface Measured {
  files: Record<string, number>;
  functions: [string, string, number, number][];
  imports: [string, string, number][];
  stdlib: string[];
}

describe('the size of the Python under src/ (files ≤ 600 lines, functions ≤ 100)', function () {
  this.timeout(60_000);
  let m: Measured;
  before(() => {
    const r = spawnSync(PY, ['-c', MEASURE, ROOT], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    m = JSON.parse(r.stdout) as Measured;
  });

  it('finds the guard and the network shim', () => {
    assert.ok(m.files['src/guard/python/mcp_gate_guard.py'] !== undefined);
    assert.ok(m.files['src/guard/python/mcp_gate_guard_parts/state.py'] !== undefined);
    assert.ok(m.files['src/netshim/mcp_gate_netshim.py'] !== undefined);
  });

  it('no Python file is over 600 lines', () => {
    const over = Object.entries(m.files).filter(([, n]) => n > 600);
    assert.deepEqual(over, [], over.map(([f, n]) => `${f}: ${n} lines`).join('\n'));
  });

  it('no Python function is over 100 lines', () => {
    const over = m.functions.filter(([, , , n]) => n > 100);
    assert.deepEqual(over, [], over.map(([f, name, line, n]) => `${f}:${line} ${name}: ${n} lines`).join('\n'));
  });

  it('the Python guard imports only the standard library and its own parts (each one its entry loads)', () => {
    const entry = fs.readFileSync(path.join(ROOT, 'src/guard/python/mcp_gate_guard.py'), 'utf8');
    const parts = /PARTS = \(([^)]*)\)/
      .exec(entry)![1]
      .match(/'(\w+)'/g)!
      .map((q) => q.slice(1, -1));
    const files = fs.readdirSync(path.join(ROOT, 'src/guard/python/mcp_gate_guard_parts')).filter((f) => f.endsWith('.py'));
    assert.deepEqual(files.sort(), parts.map((p) => `${p}.py`).sort(), 'every part is in PARTS and every PARTS entry is a file');
    const stdlib = new Set(m.stdlib);
    for (const [file, name, level] of m.imports) {
      if (level > 0) {
        assert.ok(
          file.includes('/mcp_gate_guard_parts/') && level === 1 && name === '',
          `${file}: from ${'.'.repeat(level)}${name} import …`,
        );
        continue;
      }
      if (stdlib.size)
        assert.ok(
          stdlib.has(name.split('.')[0]) || NEWER_STDLIB.has(name),
          `${file} imports ${name}, which is not in the standard library`,
        );
    }
  });
});
