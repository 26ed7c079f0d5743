// The exec check for the load guard (src/guard/CONTRACT.md, "Children"): when the server starts a program, every
// argument that names a file the program will run (its own file, a script handed to an interpreter or a shell, sed's
// and awk's program files, native code it may load) is checked by the rule; a program that reads files its arguments
// do not name (a shell, make, npm, an interpreter the guard is not in) starts only while every file of the workspace
// is as approved. `sh -c '<line>'` is read as its command line.
import fs = require('node:fs');
import path = require('node:path');
import { F, hasOwn, real, realOrWhy } from './base';
import { failRoot, getConfig, writable } from './manifest';
import { approvedFolder, tookIn } from './taken';
import { hashFile, UNREADABLE } from './hash';
import { check, refuse } from './verdict';
import { checkNative, START_LIBRARY_PATH } from './native';

/** The exec check: every argument naming an existing regular file inside root or scratch must pass the rule. */
/**
 * Programs that run what their arguments name (shells, interpreters, wrappers): every workspace file among their
 * arguments is checked. Any other program's arguments are its data (`wc -l README.md`): only an executable file
 * among them is checked (a program handed to it to run).
 */
const RUNS_ITS_ARGUMENTS =
  /^(sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox|env|nice|nohup|timeout|time|xargs|sudo|doas|perl[\d.]*|ruby[\d.]*|php[\d.]*|node|nodejs|python[\d.]*|pypy[\d.]*|lua[\d.]*|tclsh[\d.]*|awk|gawk|mawk|nawk|make|gmake|git|npx|npm|pnpm|yarn|deno|bun|tsx|ts-node|Rscript|pwsh|source)$/;

/**
 * Programs that read and run files their arguments do not name (a shell sources, make reads its Makefile, npm its
 * package.json scripts, an interpreter the guard is not in imports): started only while every file of the
 * workspace is what was approved, since no guard sees what they read. `node` and `python` are not here: the
 * sandbox's wrappers put the guard in them.
 */
const READS_ITS_OWN =
  /^(sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox|env|nice|nohup|timeout|time|xargs|sudo|doas|perl[\d.]*|ruby[\d.]*|php[\d.]*|lua[\d.]*|tclsh[\d.]*|awk|gawk|mawk|nawk|make|gmake|npx|npm|pnpm|yarn|deno|bun|tsx|ts-node|Rscript|pwsh|source|java|go|cargo|just|task|rake|bundle|gradle|mvn|ant|ninja|cmake|meson|bats|bazel|bazelisk|buck2?|scons|expect|m4|tox|nox|invoke|wish[\d.]*)$/;
const known = new Map<string, { key: string; sum: string }>(); // rel → stat key and digest, for the check below

/**
 * Refuses (naming the first file that is not) unless every file of the workspace is what was approved; `how` is what
 * needs it (a program that reads files no guard sees, text turned into code by a process that was fed by one).
 */
export function workspaceAsApproved(how: string, own?: (p: string) => boolean, metadata = false): void {
  const cfg = getConfig();
  // (with metadata, the compare is for text turned into code after a program start: the report says so)
  const no: (r: Parameters<typeof refuse>[0]) => never = (r) => refuse(metadata ? { ...r, took: true } : r);
  // What was approved is not known: fail closed (the program could read any workspace file).
  if (!cfg)
    no({
      p: failRoot ?? '(workspace)',
      rel: null,
      why: 'manifest',
      sum: '',
      how,
    });
  const gone = (e: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '');
  const cannotCheck: (p: string, e: unknown) => never = (p, e) =>
    no({
      p,
      rel: p.slice(cfg.root.length).split(path.sep).join('/'),
      why: 'changed',
      sum: '',
      how,
      tail: UNREADABLE((e as NodeJS.ErrnoException).code ?? (e as Error).message),
    });
  const walk = (dir: string): void => {
    let list: fs.Dirent[];
    try {
      list = F.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      // gone meanwhile holds nothing; a folder that cannot be listed (deeper than PATH_MAX, no permission) may hold
      // a file the program reaches by a relative name: fail closed
      if (gone(e)) return;
      const code = (e as NodeJS.ErrnoException).code;
      const rel = dir === cfg.rootDir ? null : dir.slice(cfg.root.length).split(path.sep).join('/');
      const tail = `a folder of the workspace that cannot be listed (${code ?? String(e)}), so what it holds cannot be compared with the approval: make it readable, or move it out of the workspace (approving again does not change this)`;
      no({ p: dir, rel, why: 'sink', sum: '', how, tail, rule: tail });
    }
    list.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const d of list) {
      const abs = path.join(dir, d.name);
      if (d.isDirectory()) {
        if (dir === cfg.rootDir && d.name === '.git') continue;
        // with metadata, a new folder is a change even when empty (an approval that recorded its empty folders)
        if (metadata && cfg.folders !== null && !own?.(abs) && !approvedFolder(abs.slice(cfg.root.length).split(path.sep).join('/')))
          no({ p: abs, rel: abs.slice(cfg.root.length).split(path.sep).join('/'), why: 'new', sum: '', how });
        walk(abs);
        continue;
      }
      if (!d.isFile()) continue;
      if (own?.(abs)) continue; // a file the process made itself holds what it wrote
      const rel = abs.slice(cfg.root.length).split(path.sep).join('/');
      const want = hasOwn(cfg.files, rel) ? cfg.files[rel] : undefined;
      if (want === undefined) no({ p: abs, rel, why: 'new', sum: '', how });
      if (want === 'too-large') {
        // not hashed: its size, modification time and inode must be what the approval recorded (none recorded: changed)
        let big: fs.BigIntStats;
        try {
          big = F.lstatSync(abs, { bigint: true }) as fs.BigIntStats;
        } catch (e) {
          if (gone(e)) continue;
          cannotCheck(abs, e);
        }
        const rec = hasOwn(cfg.large, rel) ? cfg.large[rel] : undefined;
        if (
          !rec ||
          rec.size !== Number(big.size) ||
          String(rec.mtimeNs) !== String(big.mtimeNs) ||
          (rec.ino !== undefined && String(rec.ino) !== String(big.ino))
        )
          no({ p: abs, rel, why: 'changed', sum: '', how });
        if (metadata) metadataAsApproved(abs, rel, Number(big.ctimeNs / 1000000n));
        continue;
      }
      let st: fs.Stats;
      try {
        st = F.lstatSync(abs, { bigint: false });
      } catch (e) {
        if (gone(e)) continue;
        cannotCheck(abs, e);
      }
      const key = `${st.ino}:${st.size}:${st.mtimeMs}`;
      let hit = known.get(rel);
      if (!hit || hit.key !== key) {
        const h = hashFile(abs);
        if (h === null) continue;
        if (typeof h !== 'string') no({ p: abs, rel, why: 'changed', sum: '', how, tail: UNREADABLE(h.error) }); // fail closed
        hit = { key, sum: h };
        known.set(rel, hit);
      }
      if (hit.sum !== want) no({ p: abs, rel, why: 'changed', sum: hit.sum, how });
      if (metadata) metadataAsApproved(abs, rel, st.ctimeMs);
    }
  };
  const seen = new Set<string>();
  const metadataAsApproved = (abs: string, rel: string, ctimeMs: number): void => {
    seen.add(rel);
    timesAsApproved(abs, rel, ctimeMs, how);
  };
  walk(cfg.rootDir);
  if (metadata) noneGone(seen, how, own);
}

// With `metadata`: a program started can hand over what it sees of names and times too (ls -l), so a file whose
// metadata changed after approval (its ctime: no program can set it), and an approved file that is gone, differ too.
const tookRefuse = (p: string, rel: string, how: string, tail: string): never =>
  refuse({ p, rel, why: 'changed', sum: '', how, tail, took: true });

function timesAsApproved(abs: string, rel: string, ctimeMs: number, how: string): void {
  const since = getConfig()?.since ?? null;
  // (since is a whole millisecond)
  if (since !== null && Math.floor(ctimeMs) > since)
    tookRefuse(abs, rel, how, 'its metadata (times, mode or owner) changed after approval, though not its content; approve it again');
}

function noneGone(seen: Set<string>, how: string, own?: (p: string) => boolean): void {
  const cfg = getConfig();
  if (cfg === null) return;
  for (const rel of Object.keys(cfg.files)) {
    if (seen.has(rel)) continue;
    const abs = cfg.root + rel.split('/').join(path.sep);
    if (!own?.(abs)) tookRefuse(abs, rel, how, 'it was approved and is gone; approve the change, or put it back');
  }
}

/** An existing regular file in a writable place whose first four bytes are the ELF magic. */
function elfInWritable(p: string): boolean {
  const r = real(p);
  if (r === null || !writable(r)) return false;
  let fd: number;
  try {
    fd = F.openSync(r, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    return false;
  }
  try {
    if (!F.fstatSync(fd).isFile()) return false;
    const b = Buffer.alloc(4);
    return F.readSync(fd, b, 0, 4, 0) === 4 && b.readUInt32BE(0) === 0x7f454c46;
  } catch {
    return false;
  } finally {
    F.closeSync(fd);
  }
}

const SHELLS = /^(sh|bash|dash|zsh|ksh|mksh|ash|busybox)$/;
const SHELL_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time', '!', 'nohup', 'nice', 'env']);
const SHELL_TRICKS = /`|\$\(|\$\{|\$[A-Za-z_]|<\(|>\(|(^|[\s;&|(){}])(\.|source|eval|exec|command|builtin|xargs|alias)(\s|$)/;

/** The interpreter a script's `#!` line names (`/usr/bin/env bash` is bash), or undefined. */
function shebang(p: string): string | undefined {
  let head = '';
  try {
    const fd = F.openSync(p, 'r');
    try {
      const buf = Buffer.alloc(256);
      head = buf.subarray(0, F.readSync(fd, buf, 0, 256, 0)).toString('utf8');
    } finally {
      F.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!')) return undefined;
  let words = head.slice(2).split('\n')[0].trim().split(/\s+/);
  if (path.basename(words[0] ?? '') === 'env') words = words.slice(1).filter((w) => !w.startsWith('-') && !w.includes('='));
  return words[0] ? path.basename(words[0]) : undefined;
}

/** Programs that run the command their arguments name (`env X=1 sh`, `timeout 5 make`, `xargs sh`). */
const WRAPPERS =
  /^(env|nice|nohup|timeout|time|stdbuf|setsid|sudo|doas|flock|chrt|ionice|taskset|xargs|busybox|exec|command|builtin|unbuffer|firejail|chroot|unshare|nsenter|runuser|su|watch|strace|ltrace|valgrind|gdb|catchsegv|setarch|linux32|linux64|prlimit|cpulimit|systemd-run)$/;
const FIND_RUNS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const WRAPPER_VALUE = /^([-+].*|[A-Za-z_][A-Za-z0-9_]*=.*|[\d.]+[smhd]?)$/;

/**
 * Where in argv (argv[0] first) a program that runs stands: argv[0], after a wrapper its first word that is no
 * option, assignment or number and the word after it (an option's value is taken for a program too: a wrong guess
 * only checks more), and the word after find's -exec/-execdir/-ok/-okdir (red team 12, 05c).
 */
export function runPositions(list: unknown[]): number[] {
  const words = list.map((x) => (typeof x === 'string' ? x : ''));
  const at = new Set<number>([0]);
  words.forEach((w, i) => {
    if (FIND_RUNS.has(w) && i + 1 < words.length) at.add(i + 1);
    if (!at.has(i) || !WRAPPERS.test(path.basename(w))) return;
    let j = i + 1;
    for (; j < words.length && WRAPPER_VALUE.test(words[j]); j++) if (/^[-+]/.test(words[j]) && !words[j].includes('=')) at.add(j + 1);
    at.add(j);
    at.add(j + 1);
  });
  return [...at].filter((x) => x < words.length).sort((a, b) => a - b);
}

/**
 * The program (the file or argv[0], by its name or the interpreter its `#!` line names) that reads files no guard
 * sees, or undefined. `sh -c 'cmd'` (also `-lc`, `-ec`) is read as its command line: a sourced file, eval, a
 * substitution, or any word of the line naming such a program makes it one; else it is not.
 */
function readsItsOwn(file: unknown, list: unknown[], cwd: string): string | undefined {
  if (nodeRun([file, ...list])) return 'node --run';
  const names: string[] = [];
  for (const p of [file, ...runPositions(list).map((i) => list[i])]) {
    if (typeof p !== 'string') continue;
    names.push(path.basename(p));
    // (node and python are not read by their `#!`: in the sandbox they are the guard's own wrapper scripts)
    if (p.includes('/') && !/^(node|nodejs|python[\d.]*|pypy[\d.]*)$/.test(path.basename(p))) {
      const interp = shebang(path.resolve(cwd, p));
      if (interp) names.push(interp);
    }
  }
  for (const n of names) {
    if (!READS_ITS_OWN.test(n)) continue;
    if (SHELLS.test(n)) {
      const first = runPositions(list).find((i) => typeof list[i] === 'string' && path.basename(list[i] as string) === n) ?? 0;
      const rest = list.slice(first + 1).filter((x): x is string => typeof x === 'string');
      const c = rest.findIndex((a, i) => i < rest.length - 1 && /^-[A-Za-z]*c[A-Za-z]*$/.test(a));
      if (c >= 0) {
        const cmd = rest[c + 1];
        if (SHELL_TRICKS.test(cmd)) return n;
        // Each word in a command's place (first, after ; & | ( ) { } or a keyword such as `then`, after variable
        // assignments) is read; arguments (`echo bash`) are not.
        let expect = true;
        for (const tok of cmd.match(/[;&|(){}\n]+|[^\s;&|(){}]+/g) ?? []) {
          if (/^[;&|(){}\n]+$/.test(tok)) {
            expect = true;
            continue;
          }
          if (!expect) continue;
          const w = tok.replace(/^['"\\]+|['"\\]+$/g, '');
          if (!w || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w) || SHELL_KEYWORDS.has(w)) continue;
          expect = false;
          if (READS_ITS_OWN.test(path.basename(w))) return path.basename(w);
        }
        return undefined;
      }
    }
    return n;
  }
  return undefined;
}

/**
 * `node --run <script>` (Node 22+): Node runs a package.json script through /bin/sh itself, before any preload, so
 * no guard is in what it starts (red team 13, case 09): a reader of files no guard sees, like npm.
 */
function nodeRun(all: readonly unknown[]): boolean {
  for (let i = 0; i < Math.min(all.length, 3); i++) {
    if (typeof all[i] !== 'string' || !/^(node|nodejs)$/.test(path.basename(all[i] as string))) continue;
    for (let j = i + 1; j < all.length; j++) {
      const a = all[j];
      if (typeof a !== 'string' || a === '--' || !a.startsWith('-')) break;
      if (a === '--run' || a.startsWith('--run=')) return true;
      if (NODE_VALUE_OPTIONS.test(a)) j++;
    }
  }
  return false;
}

const INTERPRETER = /^(node|nodejs|python[\d.]*|pypy[\d.]*)$/;
const NODE_VALUE_OPTIONS =
  /^(-r|--require|--import|--loader|--experimental-loader|-C|--conditions|--env-file|--input-type|--title|--experimental-default-type|--inspect-port|--disable-warning|--watch-path)$/;

/**
 * For `node`/`python` (guarded themselves: the child checks what it loads), the index in `all` after which the
 * arguments are the script's own data (`node check.js ~/.cache/x/latest.json`), or Infinity: the first argument
 * that is no option, or the value of -e/-p/-c/-m, ends what the interpreter itself reads.
 */
function interpreterDataFrom(all: readonly unknown[]): number {
  let at = -1;
  for (let i = 0; i < Math.min(all.length, 3); i++)
    if (typeof all[i] === 'string' && INTERPRETER.test(path.basename(all[i] as string))) at = i;
  if (at < 0) return Infinity;
  const python = /^py/.test(path.basename(all[at] as string));
  for (let i = at + 1; i < all.length; i++) {
    const a = all[i];
    if (typeof a !== 'string') return Infinity;
    if (a === '--') return i + 1;
    if (!a.startsWith('-') || a === '-') return i;
    if (python) {
      if (/^-[A-Za-z]*[cm]$/.test(a)) return i + 1; // -c code / -m module: what follows is its argv
      if (/^-[A-Za-z]*[cm]./.test(a) && !a.startsWith('--')) return i;
      if (/^-[WX]$|^--check-hash-based-pycs$/.test(a)) i++;
    } else {
      if (/^(-e|--eval|-p|--print|-pe)$/.test(a)) return i + 1;
      if (/^--(eval|print)=/.test(a)) return i;
      if (NODE_VALUE_OPTIONS.test(a)) i++;
    }
  }
  return Infinity;
}

export function execCheck(file: unknown, args: unknown, cwd: unknown): void {
  const base = typeof cwd === 'string' && cwd ? path.resolve(cwd) : process.cwd();
  const list: unknown[] = Array.isArray(args) ? (args as unknown[]) : [];
  const dataFrom = interpreterDataFrom([file, ...list]);
  const programs = runPositions(list);
  const runs = [file, ...programs.map((i) => list[i])].some((p) => typeof p === 'string' && RUNS_ITS_ARGUMENTS.test(path.basename(p)));
  const reads = readsItsOwn(file, list, base);
  // sed's and awk's program files (`-f script`): code they run, whatever the file's mode (GNU sed's `e` runs a shell).
  const scripts = new Set<string>();
  if ([file, list[0]].some((p) => typeof p === 'string' && /^(g?sed|[gmn]?awk)$/.test(path.basename(p)))) {
    const strs = list.filter((x): x is string => typeof x === 'string');
    strs.forEach((a, j) => {
      if ((a === '-f' || a === '--file') && j + 1 < strs.length) scripts.add(strs[j + 1]);
      else if (a.startsWith('--file=')) scripts.add(a.slice(7));
      else if (a.startsWith('-f') && a.length > 2 && !a.startsWith('--')) scripts.add(a.slice(2));
    });
  }
  const words = new Map<string, boolean>(); // word → it is the program itself
  for (const [i, a] of [file, ...list].entries()) {
    if (i > dataFrom) break;
    if (typeof a !== 'string' || a === '' || a.length > 4096 || a.includes('\0')) continue;
    words.set(a, words.get(a) || i === 0 || programs.includes(i - 1));
    if (/\s/.test(a)) for (const w of a.split(/\s+/)) if (w) words.set(w.replace(/^['"]+|['"]+$/g, ''), words.get(w) ?? false);
  }
  for (const [w, program] of words) {
    if (!w) continue;
    const abs = path.resolve(base, w);
    let st: fs.Stats | undefined;
    try {
      st = F.statSync(abs, { throwIfNoEntry: false });
    } catch {
      // A program, or a file handed to one that runs its arguments, that cannot be looked at by its name made
      // absolute (longer than PATH_MAX: the child reaches it by the shorter relative name) is checked by its real
      // path, found component by component; when that cannot be found either, it cannot be checked: refused.
      if (!(program || runs || scripts.has(w))) continue;
      const rp = realOrWhy(abs);
      if (typeof rp === 'string') check(rp, 'exec');
      else if (rp !== null)
        refuse({
          p: abs,
          rel: null,
          why: 'new',
          sum: '',
          how: 'exec',
          tail: `its real path cannot be found to be checked (${rp.error}), and a file the guard cannot check is refused`,
        });
      continue;
    }
    if (st && st.isFile() && (program || runs || (st.mode & 0o111) !== 0 || scripts.has(w))) check(abs, 'exec');
    // Data it is handed (a file of the workspace or a scratch folder that is not as approved): what the program may
    // run (`gdb -x`, `sqlite3 -init`, `m4`…) or pass back, so it is taken in, and this start too is then held to the
    // starts rule (as the Python guard does: "guards differ", issue 43)
    else if (st && st.isFile()) tookIn(abs);
  }
  // Native code an argument names (a word of it; a value after `=`; with `.so` appended, as SQLite's loader does):
  // a program may load it by its own loader (`sqlite3 -cmd '.load ext/greet'`, red team 8n case 03), which no guard
  // sees, so an ELF file in a writable place named so is checked like a native library, with what it needs.
  for (const w of words.keys()) {
    for (const v of new Set([w, w.slice(w.indexOf('=') + 1)])) {
      if (!v) continue;
      for (const c of [path.resolve(base, v), path.resolve(base, v) + '.so'])
        if (elfInWritable(c)) checkNative(c, 'exec (native code an argument names)', START_LIBRARY_PATH, true);
    }
  }
  // A V8 startup snapshot node starts from (`--snapshot-blob f` or `--snapshot-blob=f`, also in a shell line): its
  // code runs as the program, deserialised, never compiled where a guard sees it (red team 20, r17): checked as code.
  const all = [...words.keys()];
  for (const [i, a] of all.entries()) {
    const blob = a === '--snapshot-blob' ? all[i + 1] : a.startsWith('--snapshot-blob=') ? a.slice('--snapshot-blob='.length) : undefined;
    const rp = blob ? realOrWhy(path.resolve(base, blob)) : null;
    if (typeof rp === 'string') check(rp, 'exec');
  }
  // After the files it is given: what it may read besides them must be as approved too.
  if (reads) workspaceAsApproved(`spawn ${reads} (it reads workspace files no guard sees)`);
}
