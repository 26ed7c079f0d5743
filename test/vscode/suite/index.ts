// Mocha inside the real VS Code extension host. VS Code loads this file because test/vscode/run.mjs passes it as
// extensionTestsPath, calls run(), and reports the outcome to the page (codeAutomationExit): resolved = 0,
// rejected = 1. Every *.test.js beside this file runs. The results also go, as JSON, to the file named by
// MCP_GATE_VSCODE_RESULTS, from which run.mjs prints one line per test and the closing "N passed, N failed".
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

interface TestResult {
  title: string;
  state: 'passed' | 'failed';
  ms?: number;
  error?: string;
}

interface Results {
  passed: number;
  failed: number;
  pending: number;
  tests: TestResult[];
}

function writeResults(results: Results): void {
  const file = process.env.MCP_GATE_VSCODE_RESULTS;
  if (!file) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(results, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    reporter: 'spec',
    timeout: 60_000,
    grep: process.env.MCP_GATE_VSCODE_GREP || undefined,
  });
  for (const name of fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .sort()) {
    mocha.addFile(path.join(__dirname, name));
  }

  const tests: TestResult[] = [];
  return new Promise<void>((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => {
        const results: Results = {
          passed: tests.filter((t) => t.state === 'passed').length,
          failed: failures,
          pending: runner.stats?.pending ?? 0,
          tests,
        };
        writeResults(results);
        if (failures > 0) reject(new Error(`${failures} test(s) failed`));
        else resolve();
      });
      runner.on('pass', (t) => tests.push({ title: t.fullTitle(), state: 'passed', ms: t.duration }));
      runner.on('fail', (t, err: unknown) =>
        tests.push({ title: t.fullTitle(), state: 'failed', error: String((err as Error)?.stack ?? err) }),
      );
    } catch (err) {
      // A test file that does not load: count it as one failure so the run cannot look green.
      tests.push({ title: 'loading the test files', state: 'failed', error: String((err as Error)?.stack ?? err) });
      writeResults({ passed: 0, failed: 1, pending: 0, tests });
      reject(err);
    }
  });
}
