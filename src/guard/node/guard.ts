// MCP Gate's Node.js load guard (contract: src/guard/CONTRACT.md). Built to dist/guard/node-guard.cjs by
// scripts/build-guard.mjs and preloaded into an MCP server's Node processes:
//
//   MCP_GATE_GUARD=/abs/manifest.json node --require /abs/dist/guard/node-guard.cjs server.js
//
// It refuses, before any of its code runs, every file about to become code whose bytes differ from what a person
// approved (the manifest's sha256 per workspace file; a copy in a scratch folder must match some approved file).
// Where loads are seen:
//   - Module.prototype._compile       every CommonJS source, hashed as the exact text V8 compiles
//   - Module._extensions['.json']     JSON read once, checked, parsed from the same bytes
//   - process.dlopen                  native addons
//   - module.registerHooks (Node 22.15+; in-thread), else the ESM loader's default loaders wrapped in place (with
//     --expose-internals, which MCP Gate's wrappers pass), else module.register (its loader thread; this same file
//     is the hooks module, preloaded there too): ESM, JSON and WASM modules, hook modules
//   - --loader / --import at preload  files named in execArgv / NODE_OPTIONS
//   - Worker                          entry checked; an explicit execArgv / env gets the guard put back
//   - ChildProcess.prototype.spawn and the spawn_sync binding (every spawn/exec/fork and *Sync form): the exec check
//                                     on the arguments, and MCP_GATE_GUARD + NODE_OPTIONS=--require <this file> put
//                                     into the child's environment even when the caller passed its own env
// Only Node built-ins; nothing else of MCP Gate. With MCP_GATE_GUARD unset it does nothing.
import crypto = require('node:crypto');
import fs = require('node:fs');
import Module = require('node:module');
import path = require('node:path');
import url = require('node:url');
import wt = require('node:worker_threads');
import childProcess = require('node:child_process');

// The fs functions the guard uses, as they were before any code of the server ran: a server that replaces fs's
// functions (an "overlay" serving other text for an approved file, red team 4 case 01) changes what Node's own
// loader reads, never what the guard compares it with.
// (readFileSync itself calls fs.openSync and friends through the module object when it runs: a read of the guard's
// own is made of the captured functions, each of which goes to Node's native code directly — red team 5, case 07.)
const F = {
  accessSync: fs.accessSync,
  appendFileSync: fs.appendFileSync,
  closeSync: fs.closeSync,
  lstatSync: fs.lstatSync,
  openSync: fs.openSync,
  readSync: fs.readSync,
  readdirSync: fs.readdirSync,
  fstatSync: fs.fstatSync,
  readlinkSync: fs.readlinkSync,
  statSync: fs.statSync,
  writeSync: fs.writeSync,
  realpath: fs.realpathSync.native,
  readFileSync(p: string, encoding?: 'utf8'): Buffer & string {
    const fd = F.openSync(p, 'r');
    try {
      const chunks: Buffer[] = [];
      let total = 0;
      for (;;) {
        const b = Buffer.allocUnsafe(Math.max(64 * 1024, Math.min(F.fstatSync(fd).size - total, 64 * 1024 * 1024)));
        const n = F.readSync(fd, b, 0, b.length, null);
        if (n === 0) break;
        chunks.push(n === b.length ? b : b.subarray(0, n));
        total += n;
      }
      const all = Buffer.concat(chunks, total);
      return (encoding ? all.toString('utf8') : all) as Buffer & string;
    } finally {
      F.closeSync(fd);
    }
  },
};

type Bytes = string | Uint8Array;
type LoadResult = { format?: string | null; source?: string | ArrayBuffer | ArrayBufferView | null } & Record<string, unknown>;
type NextLoad = (u: string, context?: unknown) => LoadResult | Promise<LoadResult>;

interface Config {
  root: string; // real path of the workspace, with a trailing separator
  rootDir: string;
  files: Record<string, string>; // rel posix path → sha256
  scratch: string[]; // real paths, each with a trailing separator
  report: string | null;
  closure: Set<string>; // rel paths the approval pins as read (no computed way to code in them)
  approved: string[]; // sha256 of content approved outside the workspace (an npm package's own files)
  links: Record<string, string>; // rel posix path → link text of each symbolic link of the workspace at approval
  large: Record<string, { size?: unknown; mtimeNs?: unknown; ino?: unknown }>; // too-large files: size, mtime, inode at approval
}

const VAR = 'MCP_GATE_GUARD';
const MANIFEST = process.env[VAR] || '';
const ACTIVE = MANIFEST !== '';
const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const real = (p: string): string | null => {
  try {
    return F.realpath(p);
  } catch {
    return null;
  }
};
const withSep = (d: string): string => (d.endsWith(path.sep) ? d : d + path.sep);
const SELF = real(__filename) ?? __filename;
const REQUIRE_FLAG = `--require ${JSON.stringify(SELF)}`;

// ---------------------------------------------------------------------------------------------- the manifest
let config: Config | null | undefined; // undefined: not read yet; null: could not be read (fail closed)
let failure = '';
let failRoot: string | null = null; // when failing closed: root and report salvaged from the text, if any
let failReport: string | null = null;
let approvedHashes: Set<string> | undefined; // every value of files, built at the first scratch check
/** How ES modules are checked here: registerHooks, the loader's own functions wrapped (--expose-internals), or module.register's thread. */
let mode: 'hooks' | 'internals' | 'register' | 'none' = 'none';

function salvage(text: string, key: string): string | null {
  const m = new RegExp(`"${key}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text);
  try {
    return m ? (JSON.parse(m[1]) as string) : null;
  } catch {
    return null;
  }
}

function getConfig(): Config | null {
  if (config !== undefined) return config;
  let text = '';
  try {
    text = F.readFileSync(MANIFEST, 'utf8');
    const m = JSON.parse(text) as Record<string, unknown>;
    if (!m || typeof m !== 'object') throw new Error('not a JSON object');
    if (m.version !== 1) throw new Error(`unknown version ${JSON.stringify(m.version)}`);
    if (typeof m.root !== 'string' || !path.isAbsolute(m.root)) throw new Error('"root" is not an absolute path');
    const files = m.files;
    if (!files || typeof files !== 'object' || Array.isArray(files)) throw new Error('"files" is not an object');
    for (const v of Object.values(files)) if (typeof v !== 'string') throw new Error('"files" has a value that is not a string');
    const scratch = m.scratch === undefined ? [] : m.scratch;
    if (!Array.isArray(scratch) || scratch.some((s) => typeof s !== 'string')) throw new Error('"scratch" is not a list of paths');
    const rootDir = real(m.root) ?? path.resolve(m.root);
    config = {
      root: withSep(rootDir),
      rootDir,
      files: files as Record<string, string>,
      scratch: [
        ...new Set(
          (scratch as string[])
            .map((s) => real(s))
            .filter((s): s is string => s !== null)
            .map(withSep),
        ),
      ],
      report: typeof m.report === 'string' ? m.report : null,
      closure: new Set(Array.isArray(m.closure) ? (m.closure as unknown[]).filter((x): x is string => typeof x === 'string') : []),
      approved: Array.isArray(m.approved) ? (m.approved as unknown[]).filter((x): x is string => typeof x === 'string') : [],
      links: m.links && typeof m.links === 'object' && !Array.isArray(m.links) ? (m.links as Record<string, string>) : {},
      large: m.large && typeof m.large === 'object' && !Array.isArray(m.large) ? (m.large as Config['large']) : {},
    };
  } catch (err) {
    failure = `${MANIFEST}: ${(err as Error).message}`;
    const r = text ? salvage(text, 'root') : null;
    failRoot = r && path.isAbsolute(r) ? withSep(real(r) ?? r) : null;
    failReport = text ? salvage(text, 'report') : null;
    config = null;
  }
  return config;
}

// When failing closed, only the runtime's own installation (and this guard) may load: everything else is refused.
const RUNTIME_PREFIX = ((): string | null => {
  const prefix = path.dirname(path.dirname(real(process.execPath) ?? process.execPath));
  return prefix === path.parse(prefix).root ? null : withSep(prefix);
})();

// ---------------------------------------------------------------------------------------------- the rule
const sha256 = (data: Bytes): string => {
  const h = (crypto as unknown as { hash?: (alg: string, d: Bytes, enc: string) => string }).hash;
  return h ? h('sha256', data, 'hex') : crypto.createHash('sha256').update(data).digest('hex');
};
const createHash = crypto.createHash;
const HASH_CHUNK = 1 << 20;

/**
 * The sha256 of a file's bytes, read in chunks through a descriptor (so any size: Node's readFileSync stops at
 * 2 GiB, where dlopen, execve and a shell do not — red team 8n, cases 01–02); null when it is no file to load (gone,
 * a folder); `{ error }` when it exists but cannot be read, or is no regular file (opened without blocking: a FIFO).
 */
function hashFile(p: string): string | null | { error: string } {
  const code = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  let fd: number;
  try {
    fd = F.openSync(p, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (e) {
    return ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(code(e)) ? null : { error: code(e) };
  }
  try {
    const st = F.fstatSync(fd);
    if (st.isDirectory()) return null;
    if (!st.isFile()) return { error: 'not a regular file' }; // (a FIFO, a device: its bytes are no file's content)
    const h = createHash('sha256');
    const b = Buffer.allocUnsafe(HASH_CHUNK);
    for (;;) {
      const n = F.readSync(fd, b, 0, b.length, null);
      if (n === 0) break;
      h.update(n === b.length ? b : b.subarray(0, n));
    }
    return h.digest('hex');
  } catch (e) {
    return { error: code(e) };
  } finally {
    try {
      F.closeSync(fd);
    } catch {
      /* closed */
    }
  }
}
const UNREADABLE = (error: string): string =>
  `it exists but cannot be read to be checked (${error}), and a file the guard cannot check is refused`;

const stripBOM = (s: string): string => (s.charCodeAt(0) === 0xfeff ? s.slice(1) : s);
const allowed = new Set<string>(); // `${realpath}\0${sha256}` already allowed

interface Refusal {
  p: string;
  rel: string | null;
  why: string;
  sum: string;
  how: string;
  tail?: string;
  /** Said instead of "refused to load <file>" when the file is refused by a rule, not as a load (a library beside one). */
  head?: string;
  /** The rule that refused it, for the report (what MCP Gate shows the person): set with head. */
  rule?: string;
}

function refuse(r: Refusal): never {
  const tail =
    r.tail ??
    (r.why === 'changed'
      ? 'it changed since approval'
      : r.why === 'new'
        ? 'it is not in what was approved'
        : r.why === 'sink'
          ? `it asked for ${r.how}, which runs code it is given, by a name computed at run time`
          : r.why === 'scratch'
            ? 'a file written outside the workspace that was not approved'
            : `the approval manifest could not be read (${failure})`);
  const named = `${r.p}${r.rel !== null ? ` (${r.rel})` : ''}`;
  const msg = r.head ? `mcp-gate-guard: ${r.head}, and ${named}: ${tail}` : `mcp-gate-guard: refused to load ${named}: ${tail}`;
  const report = config ? config.report : failReport;
  if (report) {
    const line = {
      file: r.p,
      rel: r.rel,
      why: r.why,
      sha256: r.sum,
      runtime: 'node',
      how: r.how,
      ...(r.rule ? { rule: r.rule } : {}),
      pid: process.pid,
      time: new Date().toISOString(),
    };
    try {
      F.appendFileSync(report, JSON.stringify(line) + '\n');
    } catch {
      /* missing or unwritable: ignored */
    }
  }
  try {
    F.writeSync(2, msg + '\n');
  } catch {
    /* no stderr */
  }
  throw Object.assign(new Error(msg), { code: 'ERR_MCP_GATE_GUARD' });
}

/**
 * Throws the guard error unless `file` may become code with `content` (the exact string or bytes about to be
 * compiled / loaded; read from the file when not given). A name that is not an existing file is not a file load.
 */
export function check(file: string, how: string, content?: Bytes, own = false, head?: Pick<Refusal, 'head' | 'rule'>): void {
  if (!ACTIVE) return;
  const p = real(file) ?? (content !== undefined ? virtualPath(file) : null);
  if (p === null || p === SELF) return;
  const cfg = getConfig();
  let rel: string | null = null;
  let zone: 'root' | 'scratch' | 'failed';
  if (cfg === null) {
    if (failRoot && p.startsWith(failRoot)) rel = p.slice(failRoot.length).split(path.sep).join('/');
    else if (RUNTIME_PREFIX && p.startsWith(RUNTIME_PREFIX)) return;
    zone = 'failed';
  } else if (p.startsWith(cfg.root)) {
    zone = 'root';
    rel = p.slice(cfg.root.length);
    if (path.sep !== '/') rel = rel.split(path.sep).join('/');
  } else if (cfg.scratch.some((d) => p.startsWith(d)) && !readOnlyMount(p)) {
    // A JSON module in a place the server writes is data it keeps (chrome-devtools-mcp's ~/.cache/…/latest.json):
    // JSON runs no code, and what the server does with it is what approved code does with any data it reads.
    if (how === 'json') return;
    zone = 'scratch';
  } else return;

  const ok = (sum: string): boolean => {
    if (zone === 'root') return hasOwn(cfg!.files, rel!) && cfg!.files[rel!] === sum;
    if (zone === 'scratch') return (approvedHashes ??= new Set([...Object.values(cfg!.files), ...cfg!.approved])).has(sum);
    return false;
  };
  const why = (): Refusal['why'] =>
    zone === 'failed' ? 'manifest' : zone === 'scratch' ? 'scratch' : hasOwn(cfg!.files, rel!) ? 'changed' : 'new';
  const bytes = content;
  let sum: string;
  if (bytes === undefined) {
    const h = hashFile(p);
    if (h === null) return; // gone, or a folder: no file load
    if (typeof h !== 'string') refuse({ p, rel, why: why(), sum: '', how, tail: UNREADABLE(h.error), ...head }); // fail closed
    sum = h;
  } else sum = sha256(bytes);
  if (allowed.has(p + '\0' + sum)) return;
  if (!ok(sum) && typeof bytes === 'string' && own) {
    // Node's own loader read this text (no transpiler in between): it must be the file's text as on disk — a BOM
    // or invalid UTF-8 aside —, else what read it for Node was not the disk (a replaced fs function: red team 4,
    // case 01, an "overlay" serving a changed text under an approved file's name).
    let disk: Buffer | null = null;
    try {
      disk = F.readFileSync(p);
    } catch {
      /* keep the text's hash */
    }
    const text = disk?.toString('utf8');
    if (disk && text !== undefined && (bytes === text || bytes === stripBOM(text)) && ok(sha256(disk))) sum = sha256(disk);
  } else if (!ok(sum) && typeof bytes === 'string') {
    // The compiled text may differ from the file's bytes: a BOM stripped, invalid UTF-8 replaced, or a transpiler
    // that approved code loaded (tsx, ts-node, babel's require hook) compiling the file first. Accepted when the
    // file's bytes on disk are the approved ones: what turned them into this text is itself code the guard checked.
    // (Approved code that compiles other data under an approved file's name is code built from data: see
    // docs/concepts.md, "Sinks that name no file".)
    let disk: Buffer | null = null;
    try {
      disk = F.readFileSync(p);
    } catch {
      /* keep the text's hash */
    }
    if (disk && ok(sha256(disk))) sum = sha256(disk);
  }
  if (ok(sum)) {
    allowed.add(p + '\0' + sum);
    return;
  }
  refuse({ p, rel, why: why(), sum, how, ...head });
}

/**
 * Text compiled under an absolute name that is not a file (a virtual file system: Yarn's PnP serves the members of
 * .yarn/cache archives under such names): the name with its deepest existing folder's real path, so that one in the
 * workspace or a scratch folder is checked as a file that was not there at approval (refused unless a scratch
 * copy's text is approved). Any other name (`[eval]`, a relative one): null, not a file load.
 */
function virtualPath(file: string): string | null {
  if (!path.isAbsolute(file)) return null;
  const rest: string[] = [];
  for (let dir = path.resolve(file); ; dir = path.dirname(dir)) {
    const r = real(dir);
    if (r !== null) return rest.length ? path.join(r, ...rest.reverse()) : null;
    if (path.dirname(dir) === dir) return null;
    rest.push(path.basename(dir));
  }
}

/**
 * A load named inside the workspace that resolved to a file outside it went through a symbolic link of the
 * workspace: that link must be one the approval recorded, with the same text (a plugin made a link to another
 * clone's file would otherwise load code no record describes). `lex` is the path as named, before links are
 * followed; each existing component of it is looked at, and the first link decides.
 */
function linksAsApproved(lex: string, how: string): void {
  const cfg = getConfig();
  if (!cfg || !lex.startsWith(cfg.root)) return;
  const tries = [lex, ...Object.keys((Module as unknown as { _extensions: object })._extensions).map((e) => lex + e)];
  for (const cand of tries) {
    let cur = cfg.rootDir;
    let rel = '';
    for (const part of cand.slice(cfg.root.length).split(path.sep)) {
      if (part === '') continue;
      cur = path.join(cur, part);
      rel = rel ? `${rel}/${part}` : part;
      let st: fs.Stats;
      try {
        st = F.lstatSync(cur);
      } catch {
        break;
      }
      if (st.isSymbolicLink()) {
        let text = '';
        try {
          text = F.readlinkSync(cur);
        } catch {
          /* unreadable: not the approved text */
        }
        if (!hasOwn(cfg.links, rel) || cfg.links[rel] !== text)
          refuse({
            p: cur,
            rel,
            why: hasOwn(cfg.links, rel) || hasOwn(cfg.files, rel) ? 'changed' : 'new',
            sum: '',
            how: `${how} through a symbolic link`,
          });
        return;
      }
      if (!st.isDirectory()) return;
    }
  }
}

/** The path a load names before links are followed (a path request, or the package folder a bare name finds). */
function lexicalOf(request: string, parentFile: string | undefined): string | null {
  const cfg = getConfig();
  if (!cfg) return null;
  const base = parentFile ? path.dirname(parentFile) : process.cwd();
  const inRoot = (p: string): string | null => (p.startsWith(cfg.root) ? p : null);
  if (path.isAbsolute(request)) return inRoot(path.resolve(request));
  if (/^\.\.?([\\/]|$)/.test(request)) return inRoot(path.resolve(base, request));
  if (/^[a-z][a-z0-9+.-]*:/i.test(request)) return null;
  const segs = request.split('/');
  const pkg = request.startsWith('@') ? segs.slice(0, 2).join('/') : segs[0];
  for (let dir = base; dir.startsWith(cfg.root) || dir === cfg.rootDir; dir = path.dirname(dir)) {
    const cand = path.join(dir, 'node_modules', pkg);
    try {
      F.lstatSync(cand);
      return cand;
    } catch {
      /* not here */
    }
    if (dir === cfg.rootDir) break;
  }
  return null;
}

/** Checks the workspace links a load went through when it resolved outside the workspace. */
function checkLinks(request: string, parentFile: string | undefined, resolved: string, how: string): void {
  const cfg = getConfig();
  if (!cfg || resolved.startsWith(cfg.root)) return;
  const lex = lexicalOf(request, parentFile);
  if (lex) linksAsApproved(lex, how);
}

/**
 * A file on a read-only mount (a file MCP Gate's sandbox binds read-only into a scratch folder, such as a server's
 * own script outside the workspace): the server cannot have written it, so it is no scratch file.
 */
function readOnlyMount(p: string): boolean {
  try {
    F.accessSync(p, fs.constants.W_OK);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EROFS';
  }
}

// ------------------------------------------------------------------------------------------- native libraries
// A native library runs code as it loads (ELF constructors), and the dynamic loader loads what it needs by itself:
// the libraries named in its DT_NEEDED entries, found along its DT_RPATH / DT_RUNPATH ($ORIGIN: its own folder),
// LD_LIBRARY_PATH and the system's folders. None of those loads reaches process.dlopen. So every library about to
// be loaded — an addon (process.dlopen), an SQLite extension (node:sqlite's loadExtension), an OpenSSL engine
// (crypto.setEngine) — is checked like an addon, and its dynamic section is read: each library it needs that is
// found in a writable place (the workspace, a scratch folder) is checked too, and read in turn (red team 6n, 01–03).
// One in a writable place that cannot be read as an ELF shared library, or needs what cannot be resolved, is refused.

/** LD_LIBRARY_PATH as the dynamic loader read it when this process started (a later change does not reach it). */
const START_LIBRARY_PATH =
  (process.env.LD_LIBRARY_PATH ?? '') === '' ? [] : process.env.LD_LIBRARY_PATH!.split(/[:;]/).map((d) => path.resolve(d));
const ELF_DEPTH = 8; // libraries needed by libraries needed by … an addon
const ELF_MAX = 512; // libraries looked at for one load

/** Where the server or the repository can write: the workspace, or a scratch folder not mounted read-only. */
function writable(p: string): boolean {
  const cfg = getConfig();
  if (cfg === null) return !(RUNTIME_PREFIX && p.startsWith(RUNTIME_PREFIX));
  return p.startsWith(cfg.root) || (cfg.scratch.some((d) => p.startsWith(d)) && !readOnlyMount(p));
}

interface ElfDynamic {
  needed: string[];
  rpath: string[];
  runpath: string[];
  interp?: string;
}

/** An ELF file with no dynamic section (a static program: it loads no library). */
const NO_DYNAMIC = 'it has no dynamic section (not a shared library)';

/**
 * The dynamic section of an ELF file (32 or 64 bits, little-endian): DT_NEEDED, DT_RPATH and DT_RUNPATH, or a
 * string saying why it cannot be read. Every offset is bounded by the file's size.
 */
export function readElfDynamic(file: string): ElfDynamic | string {
  let fd: number;
  try {
    fd = F.openSync(file, 'r');
  } catch (e) {
    return `cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  try {
    const size = F.fstatSync(fd).size;
    const at = (off: number, len: number): Buffer | null => {
      if (!Number.isSafeInteger(off) || off < 0 || len < 0 || off + len > size) return null;
      const b = Buffer.alloc(len);
      return F.readSync(fd, b, 0, len, off) === len ? b : null;
    };
    const magic = at(0, 4);
    if (!magic || magic.readUInt32BE(0) !== 0x7f454c46) return 'it is not an ELF file';
    const h = at(0, 52);
    if (!h) return 'its ELF header is truncated';
    const is64 = h[4] === 2;
    if (h[4] !== 1 && h[4] !== 2) return `unknown ELF class ${h[4]}`;
    if (h[5] !== 1) return h[5] === 2 ? 'a big-endian ELF file, which the guard does not read' : `unknown ELF data encoding ${h[5]}`;
    const eh = is64 ? at(0, 64) : h;
    if (!eh) return 'its ELF header is truncated';
    const num = (b: Buffer, o: number, wide: boolean): number => (wide ? Number(b.readBigUInt64LE(o)) : b.readUInt32LE(o));
    const phoff = num(eh, is64 ? 32 : 28, is64);
    const phentsize = eh.readUInt16LE(is64 ? 54 : 42);
    const phnum = eh.readUInt16LE(is64 ? 56 : 44);
    if (phnum === 0) return 'it has no program headers';
    if (phentsize < (is64 ? 56 : 32) || phnum > 4096) return 'its program headers are malformed';
    const ph = at(phoff, phentsize * phnum);
    if (!ph) return 'its program headers lie outside the file';
    const loads: Array<{ vaddr: number; off: number; filesz: number }> = [];
    let dyn: { off: number; filesz: number } | null = null;
    let interp: string | undefined;
    for (let i = 0; i < phnum; i++) {
      const o = i * phentsize;
      const type = ph.readUInt32LE(o);
      const off = num(ph, o + (is64 ? 8 : 4), is64);
      const vaddr = num(ph, o + (is64 ? 16 : 8), is64);
      const filesz = num(ph, o + (is64 ? 32 : 16), is64);
      if (type === 1) loads.push({ vaddr, off, filesz });
      else if (type === 2) dyn = { off, filesz };
      else if (type === 3) {
        // PT_INTERP: the dynamic loader a program names (a program, not a library, has one)
        const b = filesz > 0 && filesz <= 4096 ? at(off, filesz) : null;
        if (!b) return 'its program interpreter (PT_INTERP) lies outside the file';
        interp = b.toString('utf8', 0, b.indexOf(0) < 0 ? b.length : b.indexOf(0));
      }
    }
    if (!dyn) return NO_DYNAMIC;
    const withInterp = (r: ElfDynamic): ElfDynamic => (interp !== undefined ? { ...r, interp } : r);
    const entsize = is64 ? 16 : 8;
    if (dyn.filesz > 1 << 20) return 'its dynamic section is too large';
    const d = at(dyn.off, dyn.filesz - (dyn.filesz % entsize));
    if (!d) return 'its dynamic section lies outside the file';
    const needed: number[] = [],
      rpath: number[] = [],
      runpath: number[] = [];
    let strtab = -1,
      strsz = -1,
      ended = false;
    for (let o = 0; o + entsize <= d.length; o += entsize) {
      const tag = num(d, o, is64);
      const val = num(d, o + entsize / 2, is64);
      if (tag === 0) {
        ended = true;
        break;
      }
      // DT_NEEDED, and DT_AUXILIARY / DT_FILTER: glibc's ld.so loads a filter's object along the same search path
      // (red team 7n, case 05)
      if (tag === 1 || tag === 0x7ffffffd || tag === 0x7fffffff) needed.push(val);
      else if (tag === 5) strtab = val;
      else if (tag === 10) strsz = val;
      else if (tag === 15) rpath.push(val);
      else if (tag === 29) runpath.push(val);
    }
    if (!ended) return 'its dynamic section has no end (DT_NULL)';
    if (needed.length + rpath.length + runpath.length === 0) return withInterp({ needed: [], rpath: [], runpath: [] });
    if (strtab < 0 || strsz <= 0) return 'its dynamic section has no string table';
    // DT_STRTAB is an address: the file offset is found through the segment that holds it.
    const seg = loads.find((l) => strtab >= l.vaddr && strtab < l.vaddr + l.filesz);
    if (!seg) return 'its string table lies outside every loaded segment';
    const tab = at(seg.off + (strtab - seg.vaddr), Math.min(strsz, seg.vaddr + seg.filesz - strtab));
    if (!tab) return 'its string table lies outside the file';
    const str = (i: number): string | null => {
      if (i >= tab.length) return null;
      const end = tab.indexOf(0, i);
      return end < 0 ? null : tab.toString('utf8', i, end);
    };
    const strs = (list: number[]): string[] | null => {
      const out: string[] = [];
      for (const i of list) {
        const s = str(i);
        if (s === null) return null;
        out.push(s);
      }
      return out;
    };
    const n = strs(needed),
      rp = strs(rpath),
      rn = strs(runpath);
    if (!n || !rp || !rn) return 'a name in its dynamic section lies outside its string table';
    const split = (l: string[]): string[] => l.flatMap((s) => s.split(':'));
    return withInterp({ needed: n, rpath: split(rp), runpath: split(rn) });
  } catch (e) {
    return `it cannot be read (${(e as Error).message})`;
  } finally {
    F.closeSync(fd);
  }
}

function nativeRefusal(p: string, how: string, tail: string): never {
  const cfg = getConfig();
  const rel = cfg && p.startsWith(cfg.root) ? p.slice(cfg.root.length).split(path.sep).join('/') : null;
  refuse({ p, rel, why: cfg && rel !== null && hasOwn(cfg.files, rel) ? 'changed' : 'new', sum: '', how, tail });
}

/** A search folder of DT_RPATH / DT_RUNPATH with $ORIGIN expanded (each origin), or null when it names another token. */
function expandSearch(entry: string, origins: string[]): string[] | null {
  if (!entry.includes('$')) return [path.resolve(entry)]; // relative: to the working folder, as ld.so does
  const out: string[] = [];
  for (const o of origins) {
    const e = entry.replace(/\$\{ORIGIN\}|\$ORIGIN(?![A-Za-z0-9_])/g, o);
    if (e.includes('$')) return null;
    out.push(path.resolve(e));
  }
  return out;
}

/** Every file a needed name may be found as in one search folder (glibc's hwcaps subfolders included). */
function inFolder(dir: string, name: string): string[] {
  const out = [path.join(dir, name)];
  const sub = (d: string, depth: number): void => {
    let list: fs.Dirent[];
    try {
      list = F.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of list) {
      if (!e.isDirectory() && !e.isSymbolicLink()) continue;
      const inHwcaps = path.basename(d) === 'glibc-hwcaps';
      if (
        !inHwcaps &&
        !/^(glibc-hwcaps|tls|x86_64|i[3-6]86|haswell|xeon_phi|avx512_1|sse2|aarch64|v[5-8]l?|power\d+|ppc64(le)?|s390x?|z\d+)$/.test(e.name)
      )
        continue;
      out.push(path.join(d, e.name, name));
      if (depth < 3) sub(path.join(d, e.name), depth + 1);
    }
  };
  if (writable(real(dir) ?? dir)) sub(dir, 1);
  return out;
}

/**
 * Checks a native library about to be loaded (by the name given to dlopen) and, on Linux, every library it needs
 * that lies in a writable place, recursively. `name` without a `/` is looked for as the dynamic loader does
 * (LD_LIBRARY_PATH; the system's folders are no writable place). `libPath`: the LD_LIBRARY_PATH the loading process
 * has (a child's, for a program it starts); `program`: `name` is a program about to be started (a static one has no
 * dynamic section; its PT_INTERP loader is checked like a library). When one of the files is in a writable place,
 * every native library of the workspace and the scratch folders must be as approved too (nativeLibsAsApproved).
 */
export function checkNative(name: string, how: string, libPath: string[] = START_LIBRARY_PATH, program = false): void {
  if (!ACTIVE || typeof name !== 'string' || name === '') return;
  const seen = new Set<string>();
  let anyWritable = false;
  const visit = (lexical: string, inherited: string[], depth: number): void => {
    const p = real(lexical);
    if (p === null || seen.has(p)) return; // missing: the load itself fails
    const mine = writable(p);
    if (seen.size >= ELF_MAX || depth > ELF_DEPTH) {
      if (mine)
        nativeRefusal(p, how, `it is needed through more than ${ELF_DEPTH} levels or ${ELF_MAX} libraries, more than the guard follows`);
      return;
    }
    seen.add(p);
    if (mine) anyWritable = true;
    check(p, how);
    if (process.platform !== 'linux') return;
    const dyn = readElfDynamic(p);
    if (typeof dyn === 'string') {
      if (program && depth === 0 && (dyn === NO_DYNAMIC || dyn === 'it is not an ELF file')) return; // static, or a script
      if (mine) nativeRefusal(p, how, `it is loaded as native code but the guard cannot read it as an ELF shared library: ${dyn}`);
      return;
    }
    if (program && depth === 0 && dyn.interp) {
      const ri = real(dyn.interp);
      if (ri !== null && writable(ri)) visit(dyn.interp, [], depth + 1);
    }
    const origins = [...new Set([path.dirname(path.resolve(lexical)), path.dirname(p)])];
    const expand = (list: string[]): string[] =>
      list.flatMap((e) => {
        const r = expandSearch(e, origins);
        if (r === null) {
          if (mine || writable(path.resolve(e.slice(0, e.indexOf('$')) || '/')))
            nativeRefusal(p, how, `its library search path ${JSON.stringify(e)} names a token the guard does not resolve`);
          return [];
        }
        return r;
      });
    // DT_RPATH (this object's, and its loaders', unless it has DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH.
    const rpath = dyn.runpath.length ? [] : [...expand(dyn.rpath), ...inherited];
    const dirs = [...rpath, ...libPath, ...expand(dyn.runpath)];
    for (const need of dyn.needed) {
      const cands = need.includes('/') ? [path.resolve(need)] : dirs.flatMap((d) => inFolder(d, need));
      for (const c of cands) {
        const rc = real(c);
        if (rc !== null && writable(rc)) visit(c, rpath, depth + 1);
      }
    }
  };
  const p = name.includes('/') ? path.resolve(name) : null;
  if (p !== null) visit(p, [], 0);
  else for (const d of libPath) for (const c of inFolder(d, name)) visit(c, [], 0);
  if (anyWritable) nativeLibsAsApproved(how);
}

/** Names the dynamic loader's users give native libraries: `*.so`, `*.so.<version>`, `*.node`. */
const NATIVE_NAME = /\.(so(\.[0-9A-Za-z_.-]*)?|node)$/;
/** Entries (files, folders, links) one walk looks through in each tree: the workspace, and each scratch folder. */
export const NATIVE_WALK_MAX = 2_000_000;
/** A walk that passed stands for this long in this process: a later native load re-checks only what it found. */
export const NATIVE_REWALK_MS = 60_000;
let nativeWalk: { roots: string; at: number; found: string[] } | null = null; // the last walk that passed
let nativeWalked = ''; // the stat keys of the files it found when they last passed

/** A file recorded unhashed (over 256 MiB): its size, modification time and inode as the approval recorded them. */
function largeAsApproved(abs: string, rel: string): boolean | null {
  const cfg = getConfig()!;
  let big: fs.BigIntStats;
  try {
    big = F.lstatSync(abs, { bigint: true }) as fs.BigIntStats;
  } catch {
    return null; // gone
  }
  const rec = hasOwn(cfg.large, rel) ? cfg.large[rel] : undefined;
  return (
    !!rec &&
    rec.size === Number(big.size) &&
    String(rec.mtimeNs) === String(big.mtimeNs) &&
    (rec.ino === undefined || String(rec.ino) === String(big.ino))
  );
}

/**
 * Native code from a writable place is about to run, and it may dlopen() any library by itself (a plugin named at
 * run time, red team 7n case 04), which no hook sees: every file of the workspace and the scratch folders with a
 * native library's name must be as approved — a workspace one recorded with the same digest (one over 256 MiB with
 * the same size, time and inode), a scratch one a copy of approved content — and no such name may be a link made
 * or retargeted since approval. A library with another name that native code loads is not seen (docs/concepts.md).
 * The folders are walked at most once every NATIVE_REWALK_MS per process, NATIVE_WALK_MAX entries per tree.
 */
function nativeLibsAsApproved(how: string): void {
  const cfg = getConfig();
  const why = `${how}: native code from a writable place may load any library beside it`;
  if (!cfg) refuse({ p: failRoot ?? '(workspace)', rel: null, why: 'manifest', sum: '', how: why });
  const rule = `native code from a writable place was loaded (${how}), and it may dlopen() any library of the workspace, /tmp or the HOME by itself where no hook sees it, so every file named like a native library there (*.so, *.so.*, *.node) must be as approved`;
  const head = { head: `refused ${how}: ${rule}`, rule };
  const tops = [cfg.rootDir, ...cfg.scratch.filter((s) => !readOnlyMount(s)).map((s) => s.slice(0, -1) || '/')];
  const roots = tops.join('\0');
  let found: string[];
  if (nativeWalk && nativeWalk.roots === roots && Date.now() - nativeWalk.at < NATIVE_REWALK_MS) found = nativeWalk.found;
  else {
    const seen = new Set<string>();
    const walk = (dir: string, depth: number, top: string, count: { n: number }): void => {
      let list: fs.Dirent[];
      try {
        list = F.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const d of list) {
        if (++count.n > NATIVE_WALK_MAX || depth > 64) {
          const bound =
            depth > 64
              ? `${top} has folders nested more than 64 deep, more than the guard's walk for native libraries goes (a size bound)`
              : `${top} holds more than ${NATIVE_WALK_MAX.toLocaleString('en-US')} entries (files, folders, links), the size bound of the guard's walk for native libraries`;
          const tail = `${rule}; ${bound}, so they cannot all be checked`;
          refuse({ p: top, rel: null, why: 'sink', sum: '', how: why, tail, rule: tail });
        }
        const abs = path.join(dir, d.name);
        if (d.isDirectory()) {
          // (.git is no library's home; the workspace is walked once, also when it lies in a scratch folder)
          if (!(dir === cfg.rootDir && d.name === '.git') && (top === cfg.rootDir || abs !== cfg.rootDir)) walk(abs, depth + 1, top, count);
          continue;
        }
        if (!NATIVE_NAME.test(d.name)) continue;
        if (d.isSymbolicLink()) {
          if (!abs.startsWith(cfg.root)) continue; // a scratch link: its target, if named so, is walked where it is
          const rel = abs.slice(cfg.root.length).split(path.sep).join('/');
          let text = '';
          try {
            text = F.readlinkSync(abs);
          } catch {
            /* unreadable */
          }
          if (!hasOwn(cfg.links, rel) || cfg.links[rel] !== text)
            refuse({
              p: abs,
              rel,
              why: hasOwn(cfg.links, rel) || hasOwn(cfg.files, rel) ? 'changed' : 'new',
              sum: '',
              how: `${why} (a symbolic link)`,
              ...head,
            });
          continue;
        }
        if (d.isFile()) seen.add(abs);
      }
    };
    for (const top of tops) walk(top, 0, top, { n: 0 });
    // Recorded ones that the walk could not list (an unreadable folder) are looked at by name.
    for (const rel of Object.keys(cfg.files)) if (NATIVE_NAME.test(rel)) seen.add(path.join(cfg.rootDir, ...rel.split('/')));
    found = [...seen];
    nativeWalk = null;
  }
  const keys: string[] = [];
  for (const f of found) {
    try {
      const st = F.lstatSync(f);
      keys.push(`${f}:${st.ino}:${st.size}:${st.mtimeMs}`);
    } catch {
      keys.push(f);
    }
  }
  const key = keys.join('\n');
  if (key !== nativeWalked) {
    for (const f of found) {
      const rel = f.startsWith(cfg.root) ? f.slice(cfg.root.length).split(path.sep).join('/') : null;
      if (rel !== null && hasOwn(cfg.files, rel) && cfg.files[rel] === 'too-large') {
        // not hashed at approval: as approved while its size, time and inode are the recorded ones (none: changed)
        if (largeAsApproved(f, rel) === false)
          refuse({ p: f, rel, why: 'changed', sum: '', how: why, tail: 'it changed since approval (its size, time or inode)', ...head });
        continue;
      }
      check(f, why, undefined, false, head); // (one gone since is no load)
    }
    nativeWalked = key;
  }
  if (!nativeWalk || nativeWalk.roots !== roots) nativeWalk = { roots, at: Date.now(), found };
}

/** SQLite's loadExtension: the path as given, then with `.so` appended (sqlite3_load_extension tries both). */
const GUARDED = Symbol('mcp-gate-guard');
function guardSqlite(mod: unknown): void {
  if (!mod || typeof mod !== 'object') return;
  for (const v of Object.values(mod as Record<string, unknown>)) {
    const proto = typeof v === 'function' ? (v as { prototype?: Record<string | symbol, unknown> }).prototype : undefined;
    const original = proto?.loadExtension;
    if (!proto || typeof original !== 'function' || (original as unknown as Record<symbol, unknown>)[GUARDED]) continue;
    const wrapped = function (this: unknown, file: unknown, ...rest: unknown[]): unknown {
      if (typeof file === 'string') {
        checkNative(file, 'sqlite loadExtension');
        checkNative(file + '.so', 'sqlite loadExtension');
      }
      return (original as (...a: unknown[]) => unknown).call(this, file, ...rest);
    };
    Object.defineProperty(wrapped, GUARDED, { value: true });
    Object.defineProperty(wrapped, 'name', { value: 'loadExtension' });
    proto.loadExtension = wrapped;
  }
}

/** node:sqlite guarded as it is first asked for (loading it emits an experimental warning: never loaded ahead). */
const getBuiltin = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
let sqliteDone = false;
function sqliteNow(quiet = false): void {
  if (sqliteDone || typeof getBuiltin !== 'function') return;
  sqliteDone = true;
  const emit = process.emitWarning;
  if (quiet) process.emitWarning = (() => undefined) as typeof process.emitWarning;
  try {
    guardSqlite(getBuiltin.call(process, 'node:sqlite'));
  } catch {
    /* no node:sqlite here (Node 20; 22 before 22.13 without its flag) */
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * Modules that run code they are given or start programs. A file the approval pins as read (`closure`) uses none of
 * them literally (MCP Gate's check of it would have pinned the server otherwise): one asked for from such a file
 * came by a name computed at run time, and is refused.
 */
const SINKS = new Set(['vm', 'repl', 'inspector', 'cluster', 'test', 'v8', 'wasi', 'child_process']);

export function checkSink(request: string, parentFile: string | undefined): void {
  if (!ACTIVE || !parentFile) return;
  const name = request.startsWith('node:') ? request.slice(5) : request;
  if (!SINKS.has(name) || !(Module as unknown as { isBuiltin?: (s: string) => boolean }).isBuiltin?.(request)) return;
  const cfg = getConfig();
  if (!cfg) return;
  const p = real(parentFile);
  if (p === null || !p.startsWith(cfg.root)) return;
  const rel = p.slice(cfg.root.length).split(path.sep).join('/');
  if (cfg.closure.has(rel)) refuse({ p, rel, why: 'sink', sum: '', how: `node:${name}` });
}

// ------------------------------------------------------------------------------------- the ESM load hook (exported)
const toBytes = (s: string | ArrayBuffer | ArrayBufferView): Bytes =>
  typeof s === 'string'
    ? s
    : s instanceof Uint8Array
      ? s
      : ArrayBuffer.isView(s)
        ? new Uint8Array(s.buffer, s.byteOffset, s.byteLength)
        : new Uint8Array(s);

function checkLoaded(u: string, r: LoadResult): void {
  if (!ACTIVE || typeof u !== 'string' || !u.startsWith('file:') || !r || r.source == null) return;
  // (source null: a CommonJS module that the CommonJS loader reads and compiles: seen by _compile)
  const how =
    r.format === 'wasm' ? 'wasm' : r.format === 'json' ? 'json' : r.format === 'commonjs' || r.format == null ? 'require' : 'import';
  check(url.fileURLToPath(u), how, toBytes(r.source));
}

/**
 * require() of an ES module in the workspace or a scratch folder where only module.register's hooks check ES
 * modules: what it imports is loaded around them (Node's defaultLoadSync), so it is refused (why "sink").
 */
function requireOfEsm(filename: string): void {
  const cfg = getConfig();
  const p = real(filename);
  if (!cfg || p === null || !(p.startsWith(cfg.root) || cfg.scratch.some((d) => p.startsWith(d)))) return;
  const rel = p.startsWith(cfg.root) ? p.slice(cfg.root.length).split(path.sep).join('/') : null;
  refuse({
    p,
    rel,
    why: 'sink',
    sum: '',
    how: 'require() of an ES module',
    tail: "require() of an ES module: on this Node the guard cannot check what it imports unless node is started with --expose-internals (MCP Gate's sandbox does that); import() it instead",
  });
}

/** After a resolve: a sink module asked for by a file the approval pins as read (checkSink), links left the workspace. */
function afterResolve(specifier: string, context: { parentURL?: string } | undefined, r: { url?: string } | undefined): void {
  if (!ACTIVE || !r || typeof r.url !== 'string') return;
  const parent = context?.parentURL?.startsWith('file:') ? url.fileURLToPath(context.parentURL) : undefined;
  if (r.url === 'node:sqlite') sqliteNow();
  if (r.url.startsWith('node:') && parent) checkSink(r.url, parent);
  if (r.url.startsWith('file:')) {
    const request = specifier.startsWith('file:') ? url.fileURLToPath(specifier) : specifier;
    checkLinks(request, parent, url.fileURLToPath(r.url), 'import');
  }
}

/** module.register resolve hook (Node without module.registerHooks). */
export async function resolve(
  specifier: string,
  context: { parentURL?: string },
  nextResolve: (s: string, c?: unknown) => unknown,
): Promise<unknown> {
  const r = (await nextResolve(specifier, context)) as { url?: string };
  afterResolve(specifier, context, r);
  return r;
}

/** module.register load hook: asks the next loader for the source and checks it for every file: URL. */
export async function load(u: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  const r = await nextLoad(u, context);
  checkLoaded(u, r);
  return r;
}

/**
 * The same hooks for module.registerHooks (Node 22.15 and later): synchronous, in the thread that loads, so no
 * loader thread is started (module.register's costs about 30 ms a start). A CommonJS file's text is checked where
 * it is compiled (Module.prototype._compile), as with module.register.
 */
const syncHooks = {
  resolve(specifier: string, context: { parentURL?: string }, nextResolve: (s: string, c?: unknown) => { url?: string }): unknown {
    const r = nextResolve(specifier, context);
    afterResolve(specifier, context, r);
    return r;
  },
  load(u: string, context: unknown, nextLoad: (u: string, c?: unknown) => LoadResult): LoadResult {
    const r = nextLoad(u, context);
    // A CommonJS file's text is checked where it is compiled; hooks a server adds are checked by guardHooks.
    if (r && r.format != null && r.format !== 'commonjs') checkLoaded(u, r);
    return r;
  },
};

/**
 * Hooks a server registers itself (module.registerHooks) run before the guard's and may return any text for a
 * file: what one returns is checked as that file's code (accepted, as for a transpiler, while the file on disk is
 * the approved one).
 */
function guardHooks(h: { resolve?: unknown; load?: unknown } | undefined): unknown {
  if (!h || typeof h !== 'object' || typeof h.load !== 'function') return h;
  const theirs = h.load as (u: string, c: unknown, n: unknown) => LoadResult;
  return {
    ...h,
    load(u: string, context: unknown, nextLoad: unknown): LoadResult {
      const r = theirs(u, context, nextLoad);
      checkLoaded(u, r);
      return r;
    },
  };
}

/**
 * Node without module.registerHooks (20, 22 before 22.15), started with --expose-internals (MCP Gate's wrappers pass
 * it): the ESM loader's own default loaders, wrapped in place, in the thread that loads — no loader thread (which
 * costs a start about 25 ms on Node 20), and the loads module.register hooks never see are seen too: require() of an
 * ES module (Node 20.19 and later) loads its imports through defaultLoadSync, around any registered hooks. Only where
 * every use of these loaders in Node's own sources is the late lookup (`x ??= require(...).x`, the loader thread's
 * chain aside) that a replaced export reaches; else false, and module.register is used as before.
 */
function inThreadInternals(): boolean {
  let load: Record<string, unknown>;
  let resolve: Record<string, unknown>;
  let sources: Record<string, unknown>;
  try {
    // resolve before load, as Node itself loads them: resolve and get_format require each other, and get_format
    // loaded first (load requires it) would leave resolve without defaultGetFormatWithoutErrors.
    const internalRequire = Module.createRequire(SELF);
    resolve = internalRequire('internal/modules/esm/resolve') as Record<string, unknown>;
    load = internalRequire('internal/modules/esm/load') as Record<string, unknown>;
    sources = (process as unknown as { binding: (n: string) => Record<string, unknown> }).binding('natives');
  } catch {
    return false;
  }
  const names = ['defaultLoad', 'defaultLoadSync', 'getSourceSync'];
  if (!names.every((n) => typeof load[n] === 'function') || typeof resolve.defaultResolve !== 'function') return false;
  // Every use of them in Node's module loading sources (internal/modules, main, process, vm) must look them up when
  // called (`x ??= require(...).x`), never keep the function from before they were replaced (a destructuring, a
  // property taken at load): else not used. (Not these: the loader thread's hook chain and node:test's module
  // mocks, both hooks run in module.register's thread, and `node --check`, which runs nothing.)
  const elsewhere = new Set(['internal/modules/esm/hooks', 'internal/test_runner/mock/loader', 'internal/main/check_syntax']);
  const wrapped = /^(defaultLoad|defaultLoadSync|getSourceSync|defaultResolve)\b/;
  const named = /\b(defaultLoad|defaultLoadSync|getSourceSync|defaultResolve)\b/;
  for (const [id, text] of Object.entries(sources)) {
    if (typeof text !== 'string' || elsewhere.has(id) || !/^internal\/(modules|main|process|vm)\b/.test(id)) continue;
    for (const mod of ['load', 'resolve'].map((m) => `require('internal/modules/esm/${m}')`)) {
      for (let i = text.indexOf(mod); i >= 0; i = text.indexOf(mod, i + 1)) {
        const before = text.slice(Math.max(0, i - 300), i);
        const destructured = /\{([^{}]*)\}\s*=\s*$/.exec(before);
        if (destructured && named.test(destructured[1])) return false;
        const taken = /^\.(\w+)/.exec(text.slice(i + mod.length, i + mod.length + 40));
        if (taken && wrapped.test(taken[1]) && !/\?\?=\s*$/.test(before)) return false;
      }
    }
  }
  const defaultResolve = resolve.defaultResolve as (s: string, c?: { parentURL?: string }) => { url?: string };
  const defaultLoad = load.defaultLoad as (u: unknown, c?: unknown) => Promise<LoadResult>;
  const defaultLoadSync = load.defaultLoadSync as (u: unknown, c?: unknown) => LoadResult;
  const getSourceSync = load.getSourceSync as (u: unknown, c?: unknown) => LoadResult;
  resolve.defaultResolve = function (this: unknown, specifier: string, context?: { parentURL?: string }): { url?: string } {
    const r = defaultResolve.call(this, specifier, context);
    afterResolve(specifier, context, r);
    return r;
  };
  load.defaultLoad = async function (this: unknown, u: unknown, c?: unknown): Promise<LoadResult> {
    const r = await defaultLoad.call(this, u, c);
    checkLoaded(String(u), r);
    return r;
  };
  load.defaultLoadSync = function (this: unknown, u: unknown, c?: unknown): LoadResult {
    const r = defaultLoadSync.call(this, u, c);
    checkLoaded(String(u), r);
    return r;
  };
  load.getSourceSync = function (this: unknown, u: unknown, c?: unknown): LoadResult {
    const r = getSourceSync.call(this, u, c);
    checkLoaded(String(u), { format: 'module', ...r });
    return r;
  };
  return true;
}

// ---------------------------------------------------------------------------------------------- installation
function tokenize(s: string): string[] {
  // NODE_OPTIONS: space-separated, "double quotes" with \ escapes
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]);
  return out;
}

const withOurOptions = (nodeOptions: string | undefined): string =>
  nodeOptions && nodeOptions.includes(REQUIRE_FLAG) ? nodeOptions : `${REQUIRE_FLAG} ${nodeOptions ?? ''}`.trim();

/** --loader / --experimental-loader / --import files: the loader thread imports loaders before any hook exists. */
function checkPreloadFlags(): void {
  const args = [...process.execArgv, ...tokenize(process.env.NODE_OPTIONS ?? '')];
  for (let i = 0; i < args.length; i++) {
    const m = /^--(experimental-loader|loader|import)(?:=(.*))?$/.exec(args[i]);
    if (!m) continue;
    const spec = m[2] ?? args[++i];
    if (!spec) continue;
    let file: string | null = null;
    try {
      if (spec.startsWith('file:')) file = url.fileURLToPath(spec);
      else if (path.isAbsolute(spec) || /^\.\.?[\\/]/.test(spec)) file = path.resolve(spec);
      else if (!/^[a-z][a-z0-9+.-]*:/i.test(spec)) file = Module.createRequire(path.join(process.cwd(), 'noop.js')).resolve(spec);
    } catch {
      /* a bare name that does not resolve here: the ESM hook still sees it when --import loads it */
    }
    if (file) check(file, m[1] === 'import' ? 'import' : 'loader');
  }
}

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

/** Refuses (naming the first file that is not) unless every file of the workspace is what was approved. */
function workspaceAsApproved(program: string): void {
  const cfg = getConfig();
  // What was approved is not known: fail closed (the program could read any workspace file).
  if (!cfg)
    refuse({
      p: failRoot ?? '(workspace)',
      rel: null,
      why: 'manifest',
      sum: '',
      how: `spawn ${program} (it reads workspace files no guard sees)`,
    });
  const walk = (dir: string): void => {
    let list: fs.Dirent[];
    try {
      list = F.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    list.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const d of list) {
      const abs = path.join(dir, d.name);
      if (d.isDirectory()) {
        if (!(dir === cfg.rootDir && d.name === '.git')) walk(abs);
        continue;
      }
      if (!d.isFile()) continue;
      const rel = abs.slice(cfg.root.length).split(path.sep).join('/');
      const want = hasOwn(cfg.files, rel) ? cfg.files[rel] : undefined;
      const how = `spawn ${program} (it reads workspace files no guard sees)`;
      if (want === undefined) refuse({ p: abs, rel, why: 'new', sum: '', how });
      if (want === 'too-large') {
        // not hashed: its size, modification time and inode must be what the approval recorded (none recorded: changed)
        let big: fs.BigIntStats;
        try {
          big = F.lstatSync(abs, { bigint: true }) as fs.BigIntStats;
        } catch {
          continue;
        }
        const rec = hasOwn(cfg.large, rel) ? cfg.large[rel] : undefined;
        if (
          !rec ||
          rec.size !== Number(big.size) ||
          String(rec.mtimeNs) !== String(big.mtimeNs) ||
          (rec.ino !== undefined && String(rec.ino) !== String(big.ino))
        )
          refuse({ p: abs, rel, why: 'changed', sum: '', how });
        continue;
      }
      let st: fs.Stats;
      try {
        st = F.lstatSync(abs, { bigint: false });
      } catch {
        continue;
      }
      const key = `${st.ino}:${st.size}:${st.mtimeMs}`;
      let hit = known.get(rel);
      if (!hit || hit.key !== key) {
        const h = hashFile(abs);
        if (h === null) continue;
        if (typeof h !== 'string') refuse({ p: abs, rel, why: 'changed', sum: '', how, tail: UNREADABLE(h.error) }); // fail closed
        hit = { key, sum: h };
        known.set(rel, hit);
      }
      if (hit.sum !== want) refuse({ p: abs, rel, why: 'changed', sum: hit.sum, how });
    }
  };
  walk(cfg.rootDir);
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

/**
 * The program (the file or argv[0], by its name or the interpreter its `#!` line names) that reads files no guard
 * sees, or undefined. `sh -c 'cmd'` (also `-lc`, `-ec`) is read as its command line: a sourced file, eval, a
 * substitution, or any word of the line naming such a program makes it one; else it is not.
 */
function readsItsOwn(file: unknown, list: unknown[], cwd: string): string | undefined {
  const names: string[] = [];
  for (const p of [file, list[0]]) {
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
      const rest = list.slice(1).filter((x): x is string => typeof x === 'string');
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

function execCheck(file: unknown, args: unknown, cwd: unknown): void {
  const base = typeof cwd === 'string' && cwd ? path.resolve(cwd) : process.cwd();
  const list: unknown[] = Array.isArray(args) ? (args as unknown[]) : [];
  const dataFrom = interpreterDataFrom([file, ...list]);
  const runs = [file, list[0]].some((p) => typeof p === 'string' && RUNS_ITS_ARGUMENTS.test(path.basename(p)));
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
    words.set(a, words.get(a) || i <= 1);
    if (/\s/.test(a)) for (const w of a.split(/\s+/)) if (w) words.set(w.replace(/^['"]+|['"]+$/g, ''), words.get(w) ?? false);
  }
  for (const [w, program] of words) {
    if (!w) continue;
    const abs = path.resolve(base, w);
    let st: fs.Stats | undefined;
    try {
      st = F.statSync(abs, { throwIfNoEntry: false });
    } catch {
      continue;
    }
    if (st && st.isFile() && (program || runs || (st.mode & 0o111) !== 0 || scripts.has(w))) check(abs, 'exec');
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
  // After the files it is given: what it may read besides them must be as approved too.
  if (reads) workspaceAsApproved(reads);
}

// ------------------------------------------------------------------------------ the real interpreter, a child's loader
/** Where MCP Gate's sandbox shows the real node and python binaries (started there, no guard is in them). */
const REAL_DIR = '/run/mcp-gate/real/';
/** This process's own binary, as it was started (before execPath names the wrapper). */
const OWN_REAL = real('/proc/self/exe') ?? real(process.execPath);
/** The wrapper that starts this binary with the guard (MCP Gate's sandbox names it in MCP_GATE_GUARD_EXEC). */
const WRAPPER = ((w) => (w && path.isAbsolute(w) ? w : null))(process.env.MCP_GATE_GUARD_EXEC);
/** A /proc/<pid>/exe link (or a task's), in any text: the binary of a running process, by a name no check resolves. */
const PROC_EXE = /\/proc\/[^/\s'"]+\/(task\/[^/\s'"]+\/)?exe(?![\w.-])/;
/** OpenSSL's configuration: the provider and engine modules it names are loaded when node starts, before the guard. */
const OPENSSL_VARS = /^(OPENSSL_CONF|OPENSSL_MODULES|OPENSSL_ENGINES)=/;
const OPENSSL_FLAG = /^--openssl(-shared)?-config(=|$)/;

/** The file is an interpreter's real binary, which runs without the guard: under REAL_DIR, or this binary behind its wrapper. */
function unguardedInterpreter(p: string): boolean {
  const r = real(p);
  if (r === null) return false;
  if (r.startsWith(REAL_DIR)) return true;
  return WRAPPER !== null && r === OWN_REAL && real(WRAPPER) !== OWN_REAL;
}

/** The file a program name runs: with a `/`, to the working folder; else the first executable file along PATH. */
function programPath(file: string, cwd: string, pathVar: string | undefined): string | null {
  if (file.includes('/')) return path.resolve(cwd, file);
  for (const d of (pathVar ?? '').split(':')) {
    const c = path.resolve(cwd, d || '.', file);
    try {
      F.accessSync(c, fs.constants.X_OK);
      if (F.statSync(c).isFile()) return c;
    } catch {
      /* not here */
    }
  }
  return null;
}

/**
 * The real binary of an interpreter, reached without its wrapper (process.argv[0] as Node set it, /proc/self/exe,
 * setpriv --reset-env or env -i in front of it, a shell line naming it: red team 7n, cases 01–02): as the program,
 * this binary's own is started through its wrapper instead; named anywhere else, the start is refused.
 */
function realInterpreter(opts: { file?: unknown; args?: unknown }, base: string, pathVar: string | undefined): void {
  const args = Array.isArray(opts.args) ? (opts.args as unknown[]) : [];
  const refuseIt = (p: string, what: string): never =>
    refuse({
      p,
      rel: null,
      why: 'sink',
      sum: '',
      how: 'spawn',
      tail: `${what} names an interpreter's real binary (${p}), which would run without the load guard; start it by its usual name (process.execPath)`,
    });
  if (typeof opts.file === 'string') {
    const prog = programPath(opts.file, base, pathVar);
    if (prog && (unguardedInterpreter(prog) || PROC_EXE.test(opts.file))) {
      if (WRAPPER && real(prog) === OWN_REAL) {
        if (typeof args[0] === 'string' && (args[0] === opts.file || unguardedInterpreter(path.resolve(base, args[0])))) args[0] = WRAPPER;
        opts.file = WRAPPER;
      } else if (unguardedInterpreter(prog) || (real(prog) ?? '').startsWith(REAL_DIR)) refuseIt(opts.file, 'the program started');
    }
  }
  for (const [i, a] of args.entries()) {
    if (typeof a !== 'string' || (i === 0 && a === opts.file)) continue;
    if (a.includes(REAL_DIR) || PROC_EXE.test(a)) refuseIt(a, 'an argument of the program started');
    if (a.length > 65536) continue;
    for (const w of a.split(/[\s;&|()<>`'"=:,]+/))
      if (w && (w.includes('/') || i <= 1) && unguardedInterpreter(path.resolve(base, w)))
        refuseIt(w, 'an argument of the program started');
  }
}

/**
 * The native libraries a child's dynamic loader loads from a writable place (red team 7n, case 03): a program in
 * one (an ELF the repository ships) is walked like an addon (its DT_NEEDED along RPATH/RUNPATH and the child's
 * LD_LIBRARY_PATH); LD_PRELOAD / LD_AUDIT libraries are checked; a writable folder in LD_LIBRARY_PATH makes every
 * native library of the workspace and the scratch folders have to be as approved.
 */
function childLoader(file: unknown, base: string, env: Map<string, string>): void {
  const lib = env.get('LD_LIBRARY_PATH');
  const libPath = lib
    ? lib
        .split(/[:;]/)
        .filter((d) => d !== '')
        .map((d) => path.resolve(base, d))
    : [];
  if (typeof file === 'string') {
    const prog = programPath(file, base, env.get('PATH'));
    const rp = prog ? real(prog) : null;
    if (prog && rp !== null && (writable(rp) || libPath.some((d) => writable(real(d) ?? d)))) checkNative(prog, 'exec', libPath, true);
  }
  for (const v of ['LD_PRELOAD', 'LD_AUDIT']) {
    for (const l of (env.get(v) ?? '').split(v === 'LD_PRELOAD' ? /[:\s]+/ : /:/))
      if (l) checkNative(l.includes('/') ? path.resolve(base, l) : l, `exec with ${v}`, libPath);
  }
  if (libPath.some((d) => writable(real(d) ?? d))) nativeLibsAsApproved('exec with LD_LIBRARY_PATH into a writable place');
}

/** Spawn options as ChildProcess.prototype.spawn, the spawn_sync binding and process.execve get them (file, args, cwd, envPairs). */
function prepareSpawn(o: unknown): void {
  if (!o || typeof o !== 'object') return;
  const opts = o as { file?: unknown; args?: unknown; cwd?: unknown; envPairs?: unknown };
  const base = typeof opts.cwd === 'string' && opts.cwd ? path.resolve(opts.cwd) : process.cwd();
  const env = new Map<string, string>();
  for (const kv of Array.isArray(opts.envPairs) ? (opts.envPairs as unknown[]) : Object.entries(process.env).map(([k, v]) => `${k}=${v}`)) {
    if (typeof kv === 'string' && kv.indexOf('=') > 0) env.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
  }
  realInterpreter(opts, base, env.get('PATH'));
  execCheck(opts.file, opts.args, opts.cwd);
  for (const a of Array.isArray(opts.args) ? (opts.args as unknown[]) : []) {
    if (typeof a === 'string' && OPENSSL_FLAG.test(a))
      refuse({
        p: a,
        rel: null,
        why: 'sink',
        sum: '',
        how: 'spawn',
        tail: `${a}: OpenSSL loads the modules a configuration names when node starts, before the load guard`,
      });
  }
  if (process.platform === 'linux') childLoader(opts.file, base, env);
  if (!Array.isArray(opts.envPairs)) return;
  const pairs = (opts.envPairs as unknown[]).filter((kv) => !(typeof kv === 'string' && kv.startsWith(VAR + '=')));
  const i = pairs.findIndex((kv) => typeof kv === 'string' && kv.startsWith('NODE_OPTIONS='));
  const theirs = i < 0 ? undefined : (pairs.splice(i, 1)[0] as string).slice('NODE_OPTIONS='.length);
  for (const t of tokenize(theirs ?? '')) {
    if (OPENSSL_FLAG.test(t))
      refuse({
        p: t,
        rel: null,
        why: 'sink',
        sum: '',
        how: 'spawn',
        tail: `NODE_OPTIONS has ${t}: OpenSSL loads the modules a configuration names when node starts, before the load guard`,
      });
  }
  // (no compile cache in a child either: NODE_COMPILE_CACHE would turn it on before its guard runs; no OpenSSL
  // configuration from the environment: its modules load before the child's guard, red team 7n, cases 06 and 08)
  const rest = pairs.filter(
    (kv) => !(typeof kv === 'string' && (/^NODE_(COMPILE_CACHE|DISABLE_COMPILE_CACHE)=/.test(kv) || OPENSSL_VARS.test(kv))),
  );
  opts.envPairs = [...rest, `${VAR}=${MANIFEST}`, `NODE_OPTIONS=${withOurOptions(theirs)}`, 'NODE_DISABLE_COMPILE_CACHE=1'];
}

function workerEntry(filename: unknown): string | null {
  try {
    if (filename instanceof URL) return filename.protocol === 'file:' ? url.fileURLToPath(filename) : null;
    if (typeof filename !== 'string') return null;
    if (filename.startsWith('file:')) return url.fileURLToPath(filename);
    if (/^[a-z][a-z0-9+.-]*:/i.test(filename) && !path.isAbsolute(filename)) return null; // data:, node:
    return path.resolve(filename);
  } catch {
    return null;
  }
}

function install(): void {
  const internal = (wt as { isInternalThread?: boolean }).isInternalThread ?? (!wt.isMainThread && wt.parentPort === null);

  // CommonJS: the exact text compiled.
  const proto = (Module as unknown as { prototype: { _compile: (...a: unknown[]) => unknown } }).prototype;
  const compile = proto._compile;
  // Node's own handlers for JavaScript files: while one of them loads a file, the text it hands to _compile is what
  // it read (a transpiler that changes the text replaces the handler, or the module's own _compile, as pirates does).
  const exts = (Module as unknown as { _extensions: Record<string, (m: { exports: unknown }, f: string) => void> })._extensions;
  let nodeReads: string | null = null;
  for (const ext of ['.js', '.cjs', '.mjs']) {
    const handler = exts[ext];
    if (typeof handler !== 'function') continue;
    exts[ext] = function (this: unknown, module: { exports: unknown }, filename: string) {
      const before = nodeReads;
      nodeReads = filename;
      try {
        return handler.call(this, module, filename);
      } finally {
        nodeReads = before;
      }
    };
  }
  proto._compile = function (this: unknown, content: unknown, filename: unknown, ...rest: unknown[]) {
    const own = nodeReads === filename && !hasOwn(this as object, '_compile');
    if (typeof filename === 'string' && (typeof content === 'string' || content instanceof Uint8Array))
      check(filename, 'require', content, own);
    // require() of an ES module (Node 20.19+, 22.12+) loads what it imports around module.register's hooks: with
    // only those, one in the workspace or a scratch folder is refused (its imports would go unchecked).
    if (mode === 'register' && rest[0] === 'module' && typeof filename === 'string') requireOfEsm(filename);
    return compile.call(this, content, filename, ...rest);
  };

  // Built-in modules that run code, asked for by a file the approval pins as read.
  const M = Module as unknown as { _load: (request: unknown, parent: { filename?: string } | undefined, isMain: boolean) => unknown };
  const load = M._load;
  M._load = function (this: unknown, request: unknown, parent: { filename?: string } | undefined, isMain: boolean) {
    if (typeof request === 'string') {
      checkSink(request, parent?.filename);
      const lex = (Module as unknown as { isBuiltin?: (s: string) => boolean }).isBuiltin?.(request)
        ? null
        : lexicalOf(request, parent?.filename);
      if (lex) {
        let resolved: string | undefined;
        try {
          resolved = (Module as unknown as { _resolveFilename: (r: string, p: unknown, m: boolean) => string })._resolveFilename(
            request,
            parent,
            isMain,
          );
        } catch {
          /* the load reports it */
        }
        if (resolved && path.isAbsolute(resolved) && !resolved.startsWith(getConfig()!.root)) linksAsApproved(lex, 'require');
      }
    }
    const m = load.call(this, request, parent, isMain);
    if (request === 'node:sqlite') guardSqlite(m);
    return m;
  };

  // JSON: read once, check, parse the same bytes.
  exts['.json'] = function (module, filename) {
    const buf = F.readFileSync(filename);
    check(filename, 'json', buf);
    try {
      module.exports = JSON.parse(stripBOM(buf.toString('utf8')));
    } catch (err) {
      (err as Error).message = `${filename}: ${(err as Error).message}`;
      throw err;
    }
  };

  // Native addons.
  const dlopen = process.dlopen;
  process.dlopen = function (this: unknown, module: object, filename: string, ...rest: unknown[]) {
    if (typeof filename === 'string') checkNative(filename, 'dlopen');
    return (dlopen as (...a: unknown[]) => void).call(this, module, filename, ...rest);
  } as typeof process.dlopen;

  // OpenSSL engines: a path, else a name OpenSSL's dynamic engine looks for (OPENSSL_ENGINES, as set when called;
  // the dynamic loader's LD_LIBRARY_PATH).
  const C = crypto as unknown as { setEngine?: (engine: unknown, flags?: unknown) => void };
  const setEngine = C.setEngine;
  if (typeof setEngine === 'function') {
    C.setEngine = function (this: unknown, engine: unknown, ...rest: unknown[]) {
      if (typeof engine === 'string' && engine !== '') {
        if (engine.includes('/')) checkNative(engine, 'crypto.setEngine');
        else {
          const dir = process.env.OPENSSL_ENGINES;
          for (const f of [engine, `${engine}.so`, `lib${engine}.so`]) {
            if (dir) checkNative(path.resolve(dir, f), 'crypto.setEngine');
            checkNative(f, 'crypto.setEngine');
          }
        }
      }
      return (setEngine as (...a: unknown[]) => void).call(this, engine, ...rest);
    };
  }

  // node:sqlite (22.5+): guarded when first asked for (require, import, process.getBuiltinModule).
  if (typeof getBuiltin === 'function') {
    (process as unknown as { getBuiltinModule: (id: string) => unknown }).getBuiltinModule = function getBuiltinModule(
      this: unknown,
      id: string,
    ) {
      const m = getBuiltin.call(this, id);
      if (id === 'node:sqlite') guardSqlite(m);
      return m;
    };
  }

  // V8's compile cache (module.enableCompileCache, Node 22.1+): its entries are bytecode Node takes for a file's
  // text after checking only a checksum in the entry itself, so a planted entry runs other code under an approved
  // file's name (red team 6n, case 05). It is off: the call reports Node's DISABLED status, as it does under
  // NODE_DISABLE_COMPILE_CACHE (which MCP Gate's wrappers set, and children get); the cache is a start-up speed-up
  // only (tsc and other tools turn it on when they can and carry on when they cannot).
  const MC = Module as unknown as {
    enableCompileCache?: (...a: unknown[]) => unknown;
    getCompileCacheDir?: () => string | undefined;
    constants?: { compileCacheStatus?: { DISABLED?: number } };
  };
  if (typeof MC.enableCompileCache === 'function') {
    const on = MC.getCompileCacheDir?.();
    if (on && writable(real(on) ?? path.resolve(on)))
      refuse({
        p: on,
        rel: null,
        why: 'sink',
        sum: '',
        how: 'compile cache',
        tail: "Node's compile cache is on (NODE_COMPILE_CACHE): it runs bytecode read from that folder in place of the files the guard checks",
      });
    const DISABLED = MC.constants?.compileCacheStatus?.DISABLED ?? 3;
    MC.enableCompileCache = function enableCompileCache() {
      return { status: DISABLED, message: "Disabled by MCP Gate's load guard (compiled code kept in a folder is not checked)" };
    };
  }
  process.env.NODE_DISABLE_COMPILE_CACHE = '1';

  checkPreloadFlags();
  if (internal) return; // Node's loader thread: it only runs the hook (registered by the thread that uses it)

  // In MCP Gate's sandbox node is a wrapper that starts the real binary (at a hidden path) with this guard: the
  // wrapper names itself in MCP_GATE_GUARD_EXEC, so a child started by process.execPath goes through it too.
  // process.argv[0] too: Node set it to the real binary, and "start myself again" with it would skip the wrapper.
  if (WRAPPER) {
    process.execPath = WRAPPER;
    process.argv[0] = WRAPPER;
  }

  // Children and workers carry the guard.
  process.env.NODE_OPTIONS = withOurOptions(process.env.NODE_OPTIONS);
  process.env[VAR] = MANIFEST;

  const CP = childProcess.ChildProcess.prototype as unknown as { spawn: (o: unknown) => unknown };
  const spawnAsync = CP.spawn;
  CP.spawn = function (this: unknown, o: unknown) {
    prepareSpawn(o);
    return spawnAsync.call(this, o);
  };
  try {
    const binding = (process as unknown as { binding: (n: string) => { spawn: (o: unknown) => unknown } }).binding('spawn_sync');
    const spawnSync = binding.spawn;
    binding.spawn = function (this: unknown, o: unknown) {
      prepareSpawn(o);
      return spawnSync.call(this, o);
    };
  } catch {
    /* no spawn_sync binding on this Node: the *Sync forms are guarded by NODE_OPTIONS only */
  }
  // process.execve (Node 22.15+, 24): the process replaced by another program, with the environment it is given.
  const P = process as unknown as { execve?: (file: unknown, args?: unknown, env?: unknown) => never };
  const execve = P.execve;
  if (typeof execve === 'function') {
    P.execve = function execve2(this: unknown, file: unknown, args?: unknown, env?: unknown): never {
      const src = env && typeof env === 'object' ? (env as Record<string, unknown>) : process.env;
      const o = {
        file,
        args: Array.isArray(args) ? [...(args as unknown[])] : args,
        cwd: process.cwd(),
        envPairs: Object.entries(src)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${String(v)}`),
      };
      prepareSpawn(o);
      const out: Record<string, string> = {};
      for (const kv of o.envPairs as string[]) out[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
      return execve.call(this, o.file, o.args, out);
    };
    Object.defineProperty(P.execve, 'name', { value: 'execve' });
  }

  const Original = wt.Worker;
  class Worker extends Original {
    constructor(filename: string | URL, options?: wt.WorkerOptions) {
      let o = options;
      if (o && typeof o === 'object') {
        o = { ...o };
        if (Array.isArray(o.execArgv) && !o.execArgv.some((a, i) => a === SELF && o!.execArgv![i - 1] === '--require')) {
          o.execArgv = ['--require', SELF, ...o.execArgv];
        }
        if (o.env && typeof o.env === 'object') {
          const env = o.env as Record<string, string | undefined>;
          o.env = { ...env, [VAR]: MANIFEST, NODE_OPTIONS: withOurOptions(env.NODE_OPTIONS), NODE_DISABLE_COMPILE_CACHE: '1' };
        }
      }
      if (!(o && o.eval)) {
        const entry = workerEntry(filename);
        if (entry) check(entry, 'worker');
      }
      super(filename, o);
    }
  }
  (wt as { Worker: typeof Original }).Worker = Worker;
  Module.syncBuiltinESMExports(); // so `import { Worker } from 'node:worker_threads'` gets the patched class

  // ESM: in-thread hooks where Node has them; else this same file is the hooks module (its `resolve` and `load`
  // exports), run in Node's loader thread. Registered in the main thread and in each worker.
  // A loader thread (--loader, or module.register called by the server) loads its hook modules there, where
  // in-thread hooks do not reach: then this file is registered into it first, as without registerHooks.
  const M2 = Module as unknown as { registerHooks?: (h: typeof syncHooks) => void; register?: (...a: unknown[]) => unknown };
  const original = M2.register;
  const self = url.pathToFileURL(SELF).href;
  const loaderFlag = [...process.execArgv, ...tokenize(process.env.NODE_OPTIONS ?? '')].some((a) =>
    /^--(experimental-loader|loader)(=|$)/.test(a),
  );
  const registerHooks = M2.registerHooks;
  if (typeof registerHooks === 'function') {
    M2.registerHooks = function (this: unknown, h: typeof syncHooks) {
      return registerHooks.call(this, guardHooks(h) as typeof syncHooks);
    };
  }
  if (typeof registerHooks === 'function' && !loaderFlag) {
    mode = 'hooks';
    registerHooks.call(Module, syncHooks);
    if (typeof original === 'function') {
      let ours = false;
      M2.register = function (this: unknown, ...args: unknown[]) {
        if (!ours) {
          ours = true;
          original.call(this, self);
        }
        return original.apply(this, args);
      };
    }
  } else if (!loaderFlag && inThreadInternals()) {
    mode = 'internals';
    if (typeof original === 'function') {
      // A server's own module.register starts Node's loader thread, whose loads these wrappers do not see: this
      // file is registered into it first, as below.
      let ours = false;
      M2.register = function (this: unknown, ...args: unknown[]) {
        if (!ours) {
          ours = true;
          original.call(this, self);
        }
        return original.apply(this, args);
      };
    }
  } else if (typeof original === 'function') {
    mode = 'register';
    original.call(Module, self);
    sqliteNow(true); // an import of node:sqlite resolves in the loader thread, unseen here: guarded now
  }
  Module.syncBuiltinESMExports(); // so `import { registerHooks, register } from 'node:module'` gets these
}

if (ACTIVE) install();
