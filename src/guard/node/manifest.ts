// The approval manifest as the load guard reads it (MCP_GATE_GUARD names a JSON file: src/guard/CONTRACT.md): read
// once, checked for its shape, with the workspace root and scratch folders made real paths; when it cannot be read
// the guard fails closed, keeping what it can salvage of the text (root, report) for its messages. Also where the
// server can write (the workspace, a scratch folder not mounted read-only) and, when failing closed, the runtime's
// own installation, the only place that may still load.
import fs = require('node:fs');
import path = require('node:path');
import { $, F, isAnon, MANIFEST, real, withSep } from './base';

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
  anyApproved: Set<string>; // every value of files and approved: what a scratch file's digest must be one of
  since: number | null; // when the approval's measure began (ms): a later ctime is a change of metadata
  folders: Set<string> | null; // folders holding no file or link at approval (null: not recorded, an older approval)
}

// ---------------------------------------------------------------------------------------------- the manifest
export let config: Config | null | undefined; // undefined: not read yet; null: could not be read (fail closed)
export let failure = '';
export let failRoot: string | null = null; // when failing closed: root and report salvaged from the text, if any
export let failReport: string | null = null;

function salvage(text: string, key: string): string | null {
  const m = new RegExp(`"${key}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text);
  try {
    return m ? (JSON.parse(m[1]) as string) : null;
  } catch {
    return null;
  }
}

export function getConfig(): Config | null {
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
      anyApproved: new Set<string>(),
      since: typeof m.since === 'number' && Number.isFinite(m.since) ? m.since : null,
      folders: Array.isArray(m.folders) ? new Set((m.folders as unknown[]).filter((x): x is string => typeof x === 'string')) : null,
    };
    for (const v of Object.values(files as Record<string, string>)) config.anyApproved.add(v);
    for (const v of config.approved) config.anyApproved.add(v);
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
export const RUNTIME_PREFIX = ((): string | null => {
  const prefix = path.dirname(path.dirname(real(process.execPath) ?? process.execPath));
  return prefix === path.parse(prefix).root ? null : withSep(prefix);
})();

/**
 * A file on a read-only mount (a file MCP Gate's sandbox binds read-only into a scratch folder, such as a server's
 * own script outside the workspace): the server cannot have written it, so it is no scratch file.
 */
export function readOnlyMount(p: string): boolean {
  try {
    F.accessSync(p, fs.constants.W_OK);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EROFS';
  }
}

/** Where the server or the repository can write: the workspace, or a scratch folder not mounted read-only. */
export function writable(p: string): boolean {
  if (isAnon(p)) return true; // a memfd, an unlinked file: only the server made it
  const cfg = getConfig();
  if (cfg === null) return !(RUNTIME_PREFIX && $.startsWith(p, RUNTIME_PREFIX));
  return $.startsWith(p, cfg.root) || (inScratch(cfg, p) && !readOnlyMount(p));
}

/** p is in one of the scratch folders (by the functions captured at start: red team 9n). */
export function inScratch(cfg: Config, p: string): boolean {
  for (let i = 0; i < cfg.scratch.length; i++) if ($.startsWith(p, cfg.scratch[i])) return true;
  return false;
}
