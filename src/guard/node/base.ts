// The load guard's own ground (src/guard/node; contract: src/guard/CONTRACT.md): the fs functions it uses, captured
// before any code of the server ran; the few facts of this process it starts from (MCP_GATE_GUARD, the guard's own
// file and the --require flag that names it); the shapes of a hook's load result; and NODE_OPTIONS read and written
// as Node reads it. Everything else of the guard builds on this file, which imports only Node's built-ins.
import fs = require('node:fs');
import path = require('node:path');

// The fs functions the guard uses, as they were before any code of the server ran: a server that replaces fs's
// functions (an "overlay" serving other text for an approved file, red team 4 case 01) changes what Node's own
// loader reads, never what the guard compares it with.
// (readFileSync itself calls fs.openSync and friends through the module object when it runs: a read of the guard's
// own is made of the captured functions, each of which goes to Node's native code directly — red team 5, case 07.)
export const F = {
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

export type Bytes = string | Uint8Array;
export type LoadResult = { format?: string | null; source?: string | ArrayBuffer | ArrayBufferView | null } & Record<string, unknown>;
export type NextLoad = (u: string, context?: unknown) => LoadResult | Promise<LoadResult>;

export const VAR = 'MCP_GATE_GUARD';
export const MANIFEST = process.env[VAR] || '';
export const ACTIVE = MANIFEST !== '';
export const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
export const real = (p: string): string | null => {
  try {
    return F.realpath(p);
  } catch {
    return null;
  }
};
export const withSep = (d: string): string => (d.endsWith(path.sep) ? d : d + path.sep);
export const SELF = real(__filename) ?? __filename;
const REQUIRE_FLAG = `--require ${JSON.stringify(SELF)}`;

export function tokenize(s: string): string[] {
  // NODE_OPTIONS: space-separated, "double quotes" with \ escapes
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]);
  return out;
}

export const withOurOptions = (nodeOptions: string | undefined): string =>
  nodeOptions && nodeOptions.includes(REQUIRE_FLAG) ? nodeOptions : `${REQUIRE_FLAG} ${nodeOptions ?? ''}`.trim();
