// The load guard's differential fuzzer, at length (issue 43 item 6): `npm run fuzz:closure [-- --cases N --seed S]`
// after `npx tsc -p tsconfig.test.json` (it uses the compiled generator, out/test/unit/guard/fuzz-lib.js, the same
// one test/unit/guard/fuzz.test.ts runs with a fixed seed). Builds dist/guard/node-guard.cjs, then runs N generated
// workspaces (default 300, Node and Python mixed): the plain run is the oracle, the guarded run must match it (no
// false refusal, also after a README edit), and after one loaded module changes (or a new file appears that a
// computed load picks) its code must never run under the guard (no escape) while what loaded before it still runs.
// Prints the cases, escapes, false refusals and a repro of each failure (its folder is kept), and writes the result
// between <!-- fuzz:start --> and <!-- fuzz:end --> in bench/RESULTS.md (nothing else of that file is touched).
// Every third case favours code from strings (fuzz-lib.ts' `strings`: data files read and turned into code, the
// mutation hitting one). Also: --case-seed X [--lang node|python] [--strings] one case, kept, printed; --no-guard the
// control (every mutation escapes; RESULTS.md untouched); --no-results leaves RESULTS.md alone. Exit 1 on any escape, false refusal or wrong prefix.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { buildGuard } from './build-guard.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIB = path.join(ROOT, 'out', 'test', 'unit', 'guard', 'fuzz-lib.js');
const RESULTS = path.join(ROOT, 'bench', 'RESULTS.md');
const START = '<!-- fuzz:start -->';
const END = '<!-- fuzz:end -->';

function arg(name, def) {
  const i = process.argv.indexOf(name);
  if (i < 0) return def;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value`);
  return v;
}
const flag = (name) => process.argv.includes(name);

if (!fs.existsSync(LIB)) {
  console.error(`${LIB} is missing: run \`npx tsc -p tsconfig.test.json\` first`);
  process.exit(2);
}
const L = createRequire(import.meta.url)(LIB);
const cases = Number(arg('--cases', '300'));
const seed = Number(arg('--seed', '43'));
const caseSeedArg = arg('--case-seed', undefined);
const lang = arg('--lang', undefined);
const noGuard = flag('--no-guard');
if (!Number.isInteger(cases) || cases < 1 || !Number.isInteger(seed)) throw new Error('--cases and --seed take integers');
if (lang !== undefined && lang !== 'node' && lang !== 'python') throw new Error('--lang is node or python');

await buildGuard();
const h = L.tempHarness();
const started = Date.now();

if (caseSeedArg !== undefined) {
  const { outcome, c } = L.runCase(Number(caseSeedArg) >>> 0, h, { lang, keep: true, noGuard, strings: flag('--strings') });
  console.log(L.repro(outcome, c));
  console.log(`\nplain trace: ${outcome.plain.join(' ')}\nguarded trace after the mutation: ${outcome.refusedTrace.join(' ')}`);
  console.log(L.failed(outcome) ? 'FAILED' : 'passed');
  process.exit(L.failed(outcome) ? 1 : 0);
}

const t = {
  node: 0,
  python: 0,
  modules: 0,
  ran: 0,
  change: 0,
  new: 0,
  vacuous: 0,
  escapes: 0,
  falseRefusals: 0,
  wrongPrefix: 0,
  generator: 0,
  strings: 0,
  stringMutations: 0,
  startedRule: 0,
};
const edgesSeen = new Map(); // how a mutated module was loaded → cases
const sinksSeen = new Map(); // code from strings: `<lang> <sink>` → data files generated
const readsSeen = new Map(); // code from strings: `<lang> <read>` → data files generated
const bump = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
const tally = (m) =>
  [...m]
    .sort()
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
const failures = [];
for (let i = 0; i < cases; i++) {
  const s = L.caseSeed(seed, i);
  // every third case favours code from strings (a data file read and turned into code, the mutation hitting it)
  const { outcome: o, c } = L.runCase(s, h, { lang, noGuard, strings: i % 3 === 2 });
  t[o.lang]++;
  t.modules += o.modules;
  t.ran += o.plain.length;
  if (o.mutation) t[o.mutation.kind]++;
  if (o.vacuous) t.vacuous++;
  if (o.escapes.length) t.escapes++;
  if (o.falseRefusals.length) t.falseRefusals++;
  if (o.wrongPrefix.length) t.wrongPrefix++;
  if (o.generatorErrors.length) t.generator++;
  t.strings += o.strings.length;
  t.startedRule += o.startedRule;
  for (const x of o.strings) {
    const [sink, read] = x.split(' ');
    bump(sinksSeen, `${o.lang} ${sink.replace(/^str-/, '')}`);
    bump(readsSeen, `${o.lang} ${read}`);
  }
  if (o.mutation) {
    const m = c.mods.find((x) => x.id === o.mutation.target);
    if (m && m.fmt === 'str') t.stringMutations++;
    const key = `${o.lang} ${o.mutation.kind === 'new' ? 'new file for ' : ''}${m ? m.edge : '?'}`;
    edgesSeen.set(key, (edgesSeen.get(key) ?? 0) + 1);
  }
  if (L.failed(o)) {
    failures.push({ i, o, text: L.repro(o, c) });
    console.log(`case ${i} (seed ${s}, ${o.lang}): FAILED — kept in ${o.dir}`);
  } else if ((i + 1) % 25 === 0) console.log(`${i + 1}/${cases} cases…`);
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
if (!failures.length) fs.rmSync(h.dir, { recursive: true, force: true }); // a failure keeps every case folder

for (const f of failures) console.log(`\n================ case ${f.i}\n${f.text}`);
const summary = [
  `cases tried: ${cases} (seed ${seed}; ${t.node} Node, ${t.python} Python; ${t.modules} modules generated, ${t.ran} run in the plain runs) in ${secs} s${noGuard ? ' — CONTROL RUN WITHOUT THE GUARD' : ''}`,
  `mutations: ${t.change} changed module(s), ${t.new} new file(s) a computed load picks; ${t.vacuous} did not run even without the guard`,
  `escapes (changed/new code ran under the guard, or no refusal): ${t.escapes}`,
  `false refusals (approved workspace or README edit not run as without the guard): ${t.falseRefusals}`,
  `wrong prefix (what loaded before the refused module did not run as without the guard): ${t.wrongPrefix}`,
  `generator errors (the plain run itself failed): ${t.generator}`,
  `code from strings: ${t.strings} data file(s) turned into code (by sink: ${tally(sinksSeen)}; read by: ${tally(readsSeen)}); ${t.stringMutations} mutation(s) of such a file; ${t.startedRule} guarded run(s) where such a compile came after a worker start (the whole workspace compared)`,
];
console.log('\n' + summary.join('\n'));
console.log(
  'mutated module, by how it was loaded: ' +
    [...edgesSeen]
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', '),
);

if (!noGuard && !flag('--no-results')) {
  const when = new Date().toISOString().slice(0, 10);
  const section = [
    START,
    `## Load guard: differential fuzzer (\`npm run fuzz:closure -- --cases ${cases} --seed ${seed}\`, ${when})`,
    '',
    'Generated Node and Python workspaces (scripts/fuzz-closure.mjs, test/unit/guard/fuzz-lib.ts): the plain run is the oracle; the guarded run of the approved workspace must trace the same modules (also after a README edit), and after one loaded module changes, or a new file appears that a computed load picks, that code must never run under the guard while what loaded before it still runs. Modules also read data files and turn their text into code (Node: eval, indirect eval, new Function, vm, an eval worker, a data: import; Python: exec, eval, compile); every third case favours them and its mutation hits such a data file.',
    '',
    ...summary.map((l) => `- ${l}`),
    `- mutated module, by how it was loaded: ${[...edgesSeen]
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    ...failures.map(
      (f) =>
        `- FAILED case ${f.i} (seed ${f.o.seed}, ${f.o.lang}): reproduce with \`node scripts/fuzz-closure.mjs --case-seed ${f.o.seed} --lang ${f.o.lang}${f.o.stringsFocus ? ' --strings' : ''}\` — ${[
          ...f.o.escapes,
          ...f.o.falseRefusals,
          ...f.o.wrongPrefix,
          ...f.o.generatorErrors,
        ]
          .map((e) => e.split('\n')[0])
          .join('; ')
          .replace(/\|/g, '\\|')
          .slice(0, 600)}`,
    ),
    END,
  ].join('\n');
  const text = fs.existsSync(RESULTS) ? fs.readFileSync(RESULTS, 'utf8') : '';
  const a = text.indexOf(START);
  const b = a < 0 ? -1 : text.indexOf(END, a);
  const next =
    a >= 0 && b >= 0
      ? text.slice(0, a) + section + text.slice(b + END.length)
      : text + (text.endsWith('\n') || !text ? '' : '\n') + '\n' + section + '\n';
  fs.writeFileSync(RESULTS, next);
  console.log(`\nwrote the fuzz section of ${path.relative(ROOT, RESULTS)}`);
}
process.exit(t.escapes + t.falseRefusals + t.wrongPrefix + t.generator > 0 ? 1 : 0);
