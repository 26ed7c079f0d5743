// Where the approval store lives. The extension uses its globalStorageUri; the CLI finds the same folder:
// `--store DIR`, else `MCP_GATE_STORE`, else the known globalStorage folder of the extension (VS Code, Insiders,
// VSCodium, Cursor, code-server) that holds approvals — the most recently written when several do, the others
// named so that doctor can say approvals made there are not seen —, else one that exists, else VS Code's
// (created on first write). A folder that only exists (the CLI made it) never wins over one holding approvals. Never inside a repository: the check uses the store's real path
// (symbolic links and `..` followed as the file system does), also for a folder that does not exist yet.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Machine } from '../sources/catalogue';
import { STORE_FILE } from './store';

export const EXTENSION_ID = 'mcp-gate.mcp-gate';

function knownStoreDirs(m: Machine): string[] {
  const config = m.env.XDG_CONFIG_HOME || path.join(m.home, '.config');
  const data = m.env.XDG_DATA_HOME || path.join(m.home, '.local', 'share');
  const products = ['Code', 'Code - Insiders', 'VSCodium', 'Cursor'];
  const userDirs =
    m.platform === 'darwin'
      ? products.map((p) => path.join(m.home, 'Library', 'Application Support', p, 'User'))
      : m.platform === 'win32'
        ? products.map((p) => path.join(m.env.APPDATA || path.join(m.home, 'AppData', 'Roaming'), p, 'User'))
        : products.map((p) => path.join(config, p, 'User'));
  userDirs.push(path.join(data, 'code-server', 'User'));
  return userDirs.map((d) => path.join(d, 'globalStorage', EXTENSION_ID));
}

export type StoreSource = 'flag' | 'env' | 'found' | 'default';

export interface StoreChoice {
  dir: string;
  how: StoreSource;
  /** Other known store folders that hold approvals (not read: the person is told, with the variable to pick one). */
  others: string[];
}

export function findStoreDir(m: Machine, flag?: string): StoreChoice {
  if (flag) return { dir: path.resolve(flag), how: 'flag', others: [] };
  if (m.env.MCP_GATE_STORE) return { dir: path.resolve(m.env.MCP_GATE_STORE), how: 'env', others: [] };
  const known = knownStoreDirs(m);
  const written = known
    .map((dir) => {
      try {
        return { dir, mtime: fs.statSync(path.join(dir, STORE_FILE)).mtimeMs };
      } catch {
        return undefined;
      }
    })
    .filter((x): x is { dir: string; mtime: number } => x !== undefined)
    .sort((a, b) => b.mtime - a.mtime);
  if (written.length) return { dir: written[0].dir, how: 'found', others: written.slice(1).map((w) => w.dir) };
  const found = known.find((d) => fs.existsSync(d));
  return found ? { dir: found, how: 'found', others: [] } : { dir: known[0], how: 'default', others: [] };
}

/** True when `dir` lies inside `project` (a store there could be written by the repository itself). */
function isInside(project: string, dir: string): boolean {
  const rel = path.relative(project, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The real path of `dir` as the file system will resolve it when the store is written: every existing component
 * through realpath (so a link from outside into the project counts as inside, and `link/..` is the link
 * target's parent), the components that do not exist yet appended as written.
 */
function realPathOf(dir: string, cwd = process.cwd()): string {
  const parts = (path.isAbsolute(dir) ? dir : `${cwd}${path.sep}${dir}`).split(/[\\/]+/).filter(Boolean);
  let cur = path.parse(path.isAbsolute(dir) ? dir : cwd).root || path.sep;
  let exists = true;
  for (const part of parts) {
    if (part === '.') continue;
    if (part === '..') {
      cur = path.dirname(cur);
      continue;
    }
    cur = path.join(cur, part);
    if (!exists) continue;
    try {
      cur = fs.realpathSync(cur);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
      exists = false; // a dangling link is judged by where it points: lstat says it is there
      try {
        if (fs.lstatSync(cur).isSymbolicLink()) cur = path.resolve(path.dirname(cur), fs.readlinkSync(cur));
      } catch {
        // truly absent
      }
    }
  }
  return cur;
}

/** True when the store folder's real path lies inside the project (whose identity is already a real path). */
export function storeInsideProject(project: string, storeDir: string): boolean {
  let real: string;
  try {
    real = realPathOf(storeDir);
  } catch {
    return true; // cannot tell where it is (a loop, no permission): fail closed
  }
  return isInside(project, real) || isInside(project, path.resolve(storeDir));
}
