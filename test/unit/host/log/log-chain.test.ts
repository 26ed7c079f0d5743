// The log's hash chain as an attacker sees it: every way of changing the file — a line edited, removed, moved,
// repeated, added by hand, the start cut, a torn write — is found by `verify` (`mcp-gate log --verify`) with the file
// and line; two writers (the extension and the CLI) appending to one file, rotation, and a log from before the
// chain verify clean. What a chain cannot show is asserted too: the last line removed with nothing after it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { EventLog, MAX_GENERATION_BYTES } from '../../../../src/host/log/log';
import { lineHash } from '../../../../src/host/log/log-chain';
import { Masker } from '../../../../src/policy/mask';
import { cleanupTemp, tempDir } from '../../helpers';

const call = (tool: string) => ({ kind: 'tool.call' as const, server: 's', tool });

function written(n: number, dir = tempDir()): { dir: string; file: string; log: EventLog } {
  const log = new EventLog(dir, new Masker());
  for (let i = 0; i < n; i++) log.write(call(`t${i}`));
  return { dir, file: path.join(dir, 'log.jsonl'), log };
}

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
const put = (file: string, ls: string[]) => fs.writeFileSync(file, ls.map((l) => `${l}\n`).join(''));
const why = (log: EventLog) => log.verify().breaks.map((b) => `${path.basename(b.file)}:${b.line} ${b.why}`);

describe('event log: hash chain', () => {
  after(cleanupTemp);

  it('a log MCP Gate wrote verifies clean: held lines, several appends, two writers on one file, rotation', () => {
    const dir = tempDir();
    const a = new EventLog(dir, new Masker(), 3000);
    const b = new EventLog(dir, new Masker(), 3000);
    for (let i = 0; i < 40; i++) {
      a.hold(call(`held${i}`));
      (i % 3 ? a : b).writeAll([call(`a${i}`), call(`b${i}`)]);
    }
    a.flush();
    assert.ok(fs.existsSync(path.join(dir, 'log.jsonl.1')), 'the log rotated');
    const r = a.verify();
    assert.deepEqual(r.breaks, []);
    assert.equal(r.runs, 2);
    // Every line of every generation: the events read back, and the records of the rotations.
    const kept = ['log.jsonl.3', 'log.jsonl.2', 'log.jsonl.1', 'log.jsonl'].filter((g) => fs.existsSync(path.join(dir, g)));
    const records = kept.flatMap((g) => lines(path.join(dir, g))).filter((l) => l.includes('"kind":"log.rotated"')).length;
    assert.ok(records > 0, 'each rotation is recorded');
    assert.equal(r.lines, a.read().length + records);
  });

  it("each line links to the line before it in its run; the first to the log's last line when the run began", () => {
    const { dir, file } = written(2);
    const later = new EventLog(dir, new Masker());
    later.write(call('later'));
    const ls = lines(file);
    const marks = ls.map((l) => JSON.parse(l).chain);
    assert.equal(marks[1].prev, lineHash(ls[0]));
    assert.notEqual(marks[2].run, marks[0].run);
    assert.equal(marks[2].n, 0);
    assert.equal(marks[2].prev, lineHash(ls[1]));
  });

  it("a CLI command's only line, written while the extension writes: the extension's next line links to it (after), so removing or changing it is found", () => {
    const dir = tempDir();
    const extension = new EventLog(dir, new Masker());
    extension.write(call('e0'));
    const cliRun = new EventLog(dir, new Masker());
    cliRun.write({ kind: 'gate.approve', server: 'b' });
    extension.write(call('e1'));
    const file = path.join(dir, 'log.jsonl');
    const ls = lines(file);
    assert.equal(JSON.parse(ls[2]).chain.after, lineHash(ls[1]));
    assert.deepEqual(extension.verify().breaks, []);
    put(file, [ls[0], ls[2]]);
    assert.match(
      why(extension).join('\n'),
      /log\.jsonl:2 the line another writer had written last when this one was written is not in the log/,
    );
    put(file, [ls[0], ls[1].replace('gate.approve', 'gate.reject'), ls[2]]);
    assert.match(why(extension).join('\n'), /log\.jsonl:3 the line another writer had written last/);
  });

  it('a line edited (a tool name changed) is found at the line after it', () => {
    const { file, log } = written(4);
    const ls = lines(file);
    ls[1] = ls[1].replace('"t1"', '"harmless"');
    put(file, ls);
    assert.deepEqual(why(log), [
      'log.jsonl:3 it does not link to the line before it in writer run ' + JSON.parse(ls[0]).chain.run + ': that line was changed',
    ]);
  });

  it('a line removed, two lines swapped, a line repeated: each is found', () => {
    const removed = written(4);
    put(
      removed.file,
      lines(removed.file).filter((_, i) => i !== 1),
    );
    assert.match(why(removed.log).join('\n'), /log\.jsonl:2 line 2 of writer run \w+ follows its line 0: lines are missing/);
    const swapped = written(4);
    const s = lines(swapped.file);
    [s[1], s[2]] = [s[2], s[1]];
    put(swapped.file, s);
    assert.match(why(swapped.log).join('\n'), /log\.jsonl:2 line 2 of writer run \w+ follows its line 0/);
    const repeated = written(3);
    const r = lines(repeated.file);
    put(repeated.file, [...r.slice(0, 2), r[1], r[2]]);
    assert.match(why(repeated.log).join('\n'), /log\.jsonl:3 line 1 of writer run \w+ follows its line 1: lines were moved or repeated/);
  });

  it('a line added by hand (no chain, or a forged mark that does not link) is found', () => {
    const plain = written(3);
    const ls = lines(plain.file);
    put(plain.file, [
      ls[0],
      JSON.stringify({ at: new Date().toISOString(), kind: 'tool.call', server: 's', tool: 'forged' }),
      ls[1],
      ls[2],
    ]);
    assert.match(why(plain.log).join('\n'), /log\.jsonl:2 a line without a chain among chained lines/);
    const forged = written(3);
    const f = lines(forged.file);
    const mark = JSON.parse(f[1]).chain;
    const fake = JSON.stringify({ at: new Date().toISOString(), kind: 'tool.call', server: 's', tool: 'forged', chain: { ...mark, n: 1 } });
    put(forged.file, [f[0], fake, f[2]]);
    assert.match(why(forged.log).join('\n'), /log\.jsonl:3 it does not link to the line before it/);
  });

  it('the start of the log cut off (no generation was rotated away) is found; lines rotated away are only said', () => {
    const cut = written(4);
    put(cut.file, lines(cut.file).slice(2));
    assert.match(
      why(cut.log).join('\n'),
      /log\.jsonl:1 the first line of writer run \w+ in the log is its line 2: the 2 lines before it are missing/,
    );
    const dir = tempDir();
    const big = new EventLog(dir, new Masker(), 1500);
    for (let i = 0; i < 120; i++) big.write(call(`t${i}`));
    assert.ok(fs.existsSync(path.join(dir, 'log.jsonl.3')), 'three generations kept, older ones gone');
    const r = big.verify();
    assert.deepEqual(r.breaks, []);
    assert.match(r.notes.join('\n'), /1 writer run in the oldest generation begins after lines rotated away/);
  });

  it('a generation removed (or a file renamed to pass for the oldest one) is found: rotation never leaves a gap', () => {
    const dir = tempDir();
    const log = new EventLog(dir, new Masker(), 1500);
    for (let i = 0; i < 40; i++) log.write(call(`t${i}`));
    assert.ok(fs.existsSync(path.join(dir, 'log.jsonl.2')));
    fs.rmSync(path.join(dir, 'log.jsonl.1'));
    assert.match(why(log).join('\n'), /log\.jsonl\.1:0 this generation is missing while log\.jsonl\.2 exists/);
    // The current file's first lines removed and the rest renamed to the oldest generation's name, to pass as cut by rotation.
    const other = written(4);
    put(path.join(other.dir, 'log.jsonl.3'), lines(other.file).slice(2));
    fs.rmSync(other.file);
    assert.match(why(other.log).join('\n'), /log\.jsonl\.1:0 this generation is missing while log\.jsonl\.3 exists/);
  });

  it('each rotation is recorded in the chain: a generation renamed over the oldest beside empty newer ones, or two swapped, is named (issue 47)', () => {
    const rotated = () => {
      const dir = tempDir();
      const log = new EventLog(dir, new Masker(), 1500);
      for (let i = 0; i < 120; i++) log.write(call(`t${i}`));
      for (const g of ['log.jsonl.1', 'log.jsonl.2', 'log.jsonl.3']) assert.ok(fs.existsSync(path.join(dir, g)), g);
      return { dir, log, f: (g: string) => path.join(dir, g) };
    };
    const clean = rotated();
    assert.deepEqual(clean.log.verify().breaks, []);
    // Each file a rotation began holds its record: which rotation, and the last line of the generation before.
    const recorded = lines(clean.f('log.jsonl'))
      .map((l) => JSON.parse(l) as { kind: string; rotation?: number })
      .filter((e) => e.kind === 'log.rotated');
    assert.equal(recorded.length, 1);
    assert.ok(recorded[0].rotation! >= 4, `rotation ${recorded[0].rotation}`);
    // The attack: log.jsonl.1 (the newest rotated run) renamed over log.jsonl.3, log.jsonl.1 and .2 emptied — the two
    // generations between cut from the middle, and the rest would pass as "rotated away".
    const cut = rotated();
    fs.renameSync(cut.f('log.jsonl.1'), cut.f('log.jsonl.3'));
    fs.writeFileSync(cut.f('log.jsonl.1'), '');
    fs.writeFileSync(cut.f('log.jsonl.2'), '');
    assert.match(why(cut.log).join('\n'), /log\.jsonl:\d+ its rotation record names a last line that log\.jsonl\.1 does not hold/);
    // Two generations swapped.
    const swapped = rotated();
    fs.renameSync(swapped.f('log.jsonl.1'), swapped.f('x'));
    fs.renameSync(swapped.f('log.jsonl.2'), swapped.f('log.jsonl.1'));
    fs.renameSync(swapped.f('x'), swapped.f('log.jsonl.2'));
    assert.match(why(swapped.log).join('\n'), /log\.jsonl:\d+ its rotation record names a last line that log\.jsonl\.1 does not hold/);
  });

  it('a generation that cannot be read is a break naming it, not an error', () => {
    const dir = tempDir();
    const log = new EventLog(dir, new Masker(), 1500);
    for (let i = 0; i < 20; i++) log.write(call(`t${i}`));
    fs.rmSync(path.join(dir, 'log.jsonl.1'));
    fs.mkdirSync(path.join(dir, 'log.jsonl.1'));
    assert.match(why(log)[0], /^log\.jsonl\.1:0 this generation cannot be read \(not a regular file\)/);
  });

  it('hostile files in the store: a FIFO, a symlink to /dev/zero, a folder, a file over the bound are breaks naming them; nothing hangs or floods', () => {
    const dir = tempDir();
    const log = new EventLog(dir, new Masker(), 1500);
    for (let i = 0; i < 30; i++) log.write(call(`t${i}`));
    const g = (n: number) => path.join(dir, `log.jsonl.${n}`);
    fs.rmSync(g(1));
    execFileSync('mkfifo', [g(1)]);
    fs.rmSync(g(2));
    fs.symlinkSync('/dev/zero', g(2));
    const big = path.join(dir, 'big');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, MAX_GENERATION_BYTES + 1);
    fs.renameSync(big, g(3));
    const found = why(log).join('\n');
    assert.match(found, /log\.jsonl\.1:0 this generation cannot be read \(not a regular file\)/);
    assert.match(found, /log\.jsonl\.2:0 this generation cannot be read \(a symbolic link, not the file MCP Gate writes\)/);
    assert.match(found, /log\.jsonl\.3:0 this generation cannot be read \(\d+ bytes, over the \d+-byte bound of a generation\)/);
    assert.deepEqual(log.read().length > 0, true, 'read() skips them and reads the rest');
    // A FIFO at the log's own path: the writer refuses it at once instead of waiting for a reader.
    const other = tempDir();
    execFileSync('mkfifo', [path.join(other, 'log.jsonl')]);
    const blocked = new EventLog(other, new Masker());
    blocked.write(call('x'));
    assert.match(String(blocked.failure?.error.message), /not a regular file|ENXIO/);
  });

  it('a writer whose view of the file is old does not rotate a file another writer just rotated: no generation pushed out, every line kept', () => {
    const dir = tempDir();
    const a = new EventLog(dir, new Masker(), 3000);
    const b = new EventLog(dir, new Masker(), 3000);
    let lines = 0;
    for (let round = 0; round < 2; round++) {
      const size = () => (fs.existsSync(path.join(dir, 'log.jsonl')) ? fs.statSync(path.join(dir, 'log.jsonl')).size : 0);
      if (round === 0) for (let i = 0; i < 2; i++) a.write(call(`a${String(lines++).padStart(4, '0')}`));
      const text = fs.readFileSync(path.join(dir, 'log.jsonl'), 'utf8').split('\n');
      const line = text[text.length - 2].length + 1; // one chained line; b writes when one more line of a overflows
      while (size() <= 3000 - 2 * line) a.write(call(`a${String(lines++).padStart(4, '0')}`));
      b.write(call(`b${String(lines++).padStart(4, '0')}`)); // b opens the full file and learns its size
      a.write(call(`a${String(lines++).padStart(4, '0')}`)); // a rotates it
      b.hold(call(`h${String(lines++).padStart(4, '0')}`)); // b's held lines do not check the path (250 ms): its size is the old file's
      b.flush();
    }
    assert.ok(!fs.existsSync(path.join(dir, 'log.jsonl.3')), 'two rotations, not four');
    assert.equal(a.read().length, lines, 'every line of both writers is kept');
    assert.deepEqual(a.verify().breaks, []);
  });

  it('a torn write: the next line starts a line of its own, the torn one is named, the chain goes on', () => {
    const { dir, file } = written(2);
    fs.appendFileSync(file, '{"at":"2026-12-04T00:00:00.000Z","kind":"tool.ca');
    const next = new EventLog(dir, new Masker());
    next.write(call('after'));
    assert.deepEqual(
      next.read().map((e) => (e as { tool: string }).tool),
      ['t0', 't1', 'after'],
    );
    assert.deepEqual(why(next), ['log.jsonl:3 not a JSON line (torn by a write that did not complete, or edited)']);
  });

  it('a log from before the chain: its lines are said, not breaks; a line without a chain after chained ones is a break', () => {
    const dir = tempDir();
    const file = path.join(dir, 'log.jsonl');
    put(file, [JSON.stringify({ at: '2026-01-01T00:00:00.000Z', kind: 'tool.call', server: 's', tool: 'old' })]);
    const log = new EventLog(dir, new Masker());
    log.write(call('new'));
    const r = log.verify();
    assert.deepEqual(r.breaks, []);
    assert.match(r.notes.join('\n'), /1 line at the start of the log carry no chain/);
  });

  it('what a chain cannot show: the last line removed with nothing after it verifies clean (a copy kept elsewhere is needed)', () => {
    const { file, log } = written(3);
    put(file, lines(file).slice(0, 2));
    assert.deepEqual(log.verify().breaks, []);
  });
});
