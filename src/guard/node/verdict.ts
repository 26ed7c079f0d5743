// The rule and the refusal (src/guard/CONTRACT.md, "The rule"): `check` decides whether a file may become code with
// the exact text or bytes about to be compiled — inside the workspace its digest must be the approved one, in a
// scratch folder some approved content, elsewhere it is not the guard's — and `refuse` says no: one line appended to
// the report, one line on stderr, and the guard's error (code ERR_MCP_GATE_GUARD) thrown before any of its code runs.
// A name that is not a file (a virtual file system's member) is checked under its deepest existing folder.
import { $, ACTIVE, F, hasOwn, isAnon, real, realOrAnon, SELF } from './base';
import type { Bytes } from './base';
import { config, failReport, failRoot, failure, getConfig, inScratch, readOnlyMount, RUNTIME_PREFIX } from './manifest';
import { hashFile, sha256, stripBOM, UNREADABLE } from './hash';

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
  /** Text turned into code after the process took the file in (not a load of it). */
  took?: boolean;
}

export function refuse(r: Refusal): never {
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
      ...(r.took ? { took: true } : {}),
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
  const rp = realOrAnon(file);
  if (rp !== null && typeof rp !== 'string') unresolvable(file, how, rp.error); // fail closed
  const p = rp ?? (content !== undefined ? virtualPath(file) : null);
  if (p === null || p === SELF) return;
  const cfg = getConfig();
  let rel: string | null = null;
  let zone: 'root' | 'scratch' | 'failed';
  if (cfg === null) {
    if (failRoot && $.startsWith(p, failRoot)) rel = toPosix($.slice(p, failRoot.length));
    else if (RUNTIME_PREFIX && $.startsWith(p, RUNTIME_PREFIX)) return;
    zone = 'failed';
  } else if (isAnon(p)) {
    // A memfd or an unlinked file reached through /proc/self/fd/N: written by the server, as a scratch file is, and
    // read through the name given (its real path opens nothing) — red team 13, cases 02-04.
    zone = 'scratch';
  } else if ($.startsWith(p, cfg.root)) {
    zone = 'root';
    rel = toPosix($.slice(p, cfg.root.length));
  } else if (inScratch(cfg, p) && !readOnlyMount(p)) {
    // A JSON module in a place the server writes is data it keeps (chrome-devtools-mcp's ~/.cache/…/latest.json):
    // JSON runs no code, and what the server does with it is what approved code does with any data it reads.
    if (how === 'json') return;
    zone = 'scratch';
  } else return;

  const ok = (sum: string): boolean => {
    if (zone === 'root') return hasOwn(cfg!.files, rel!) && cfg!.files[rel!] === sum;
    if (zone === 'scratch') return $.setHas(cfg!.anyApproved, sum);
    return false;
  };
  const why = (): Refusal['why'] =>
    zone === 'failed' ? 'manifest' : zone === 'scratch' ? 'scratch' : hasOwn(cfg!.files, rel!) ? 'changed' : 'new';
  const bytes = content;
  let sum: string;
  const src = isAnon(p) ? file : p; // where the bytes are read from
  if (bytes === undefined) {
    const h = hashFile(src);
    if (h === null) return; // gone, or a folder: no file load
    if (typeof h !== 'string') refuse({ p, rel, why: why(), sum: '', how, tail: UNREADABLE(h.error), ...head }); // fail closed
    sum = h;
  } else sum = sha256(bytes);
  if ($.setHas(allowed, p + '\0' + sum)) return;
  if (!ok(sum) && typeof bytes === 'string' && own) {
    // Node's own loader read this text (no transpiler in between): it must be the file's text as on disk — a BOM
    // or invalid UTF-8 aside —, else what read it for Node was not the disk (a replaced fs function: red team 4,
    // case 01, an "overlay" serving a changed text under an approved file's name).
    let disk: [Buffer, number] | null = null;
    try {
      disk = F.readBytes(src);
    } catch {
      /* keep the text's hash */
    }
    const text = disk ? $.utf8Slice(disk[0], 0, disk[1]) : undefined;
    if (disk && text !== undefined && (bytes === text || bytes === stripBOM(text)) && ok(sha256(disk[0]))) sum = sha256(disk[0]);
  } else if (!ok(sum) && typeof bytes === 'string') {
    // The compiled text may differ from the file's bytes: a BOM stripped, invalid UTF-8 replaced, or a transpiler
    // that approved code loaded (tsx, ts-node, babel's require hook) compiling the file first. Accepted when the
    // file's bytes on disk are the approved ones: what turned them into this text is itself code the guard checked.
    // (Approved code that compiles other data under an approved file's name is code built from data: see
    // docs/concepts.md, "Sinks that name no file".)
    let disk: [Buffer, number] | null = null;
    try {
      disk = F.readBytes(src);
    } catch {
      /* keep the text's hash */
    }
    if (disk && ok(sha256(disk[0]))) sum = sha256(disk[0]);
  }
  if (ok(sum)) {
    $.setAdd(allowed, p + '\0' + sum);
    return;
  }
  refuse({ p, rel, why: why(), sum, how, ...head });
}

/** A file whose real path cannot be found (realOrWhy's error): refused, named as given (made absolute). */
function unresolvable(file: string, how: string, error: string): never {
  const lex = $.isAbsolute(file) ? file : $.resolve(file);
  const cfg = getConfig();
  const rel = cfg && $.startsWith(lex, cfg.root) ? toPosix($.slice(lex, cfg.root.length)) : null;
  refuse({
    p: lex,
    rel,
    why: cfg === null ? 'manifest' : rel !== null && hasOwn(cfg.files, rel) ? 'changed' : 'new',
    sum: '',
    how,
    tail: `its real path cannot be found to be checked (${error}), and a file the guard cannot check is refused`,
  });
}

/**
 * Text compiled under an absolute name that is not a file (a virtual file system: Yarn's PnP serves the members of
 * .yarn/cache archives under such names): the name with its deepest existing folder's real path, so that one in the
 * workspace or a scratch folder is checked as a file that was not there at approval (refused unless a scratch
 * copy's text is approved). Any other name (`[eval]`, a relative one): null, not a file load.
 */
function virtualPath(file: string): string | null {
  if (!$.isAbsolute(file)) return null;
  let rest = '';
  for (let dir = $.resolve(file); ; dir = $.dirname(dir)) {
    const r = real(dir);
    if (r !== null) return rest ? ($.endsWith(r, $.sep) ? r : r + $.sep) + rest : null;
    if ($.dirname(dir) === dir) return null;
    rest = rest ? $.basename(dir) + $.sep + rest : $.basename(dir);
  }
}

/** A relative path with posix separators (what the manifest's keys are). */
const toPosix = (rel: string): string => ($.sep === '/' ? rel : rel.split($.sep).join('/'));
