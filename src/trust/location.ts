// Where the approval store lives. The extension uses its globalStorageUri; the CLI finds the same folder:
// `--store DIR`, else `MCP_GATE_STORE`, else the first known globalStorage folder of the extension that exists,
// else VS Code's (created on first write). Never inside a repository.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Machine } from './catalogue';

export const EXTENSION_ID = 'mcp-gate.mcp-gate';

export function knownStoreDirs(m: Machine): string[] {
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

export function findStoreDir(m: Machine, flag?: string): { dir: string; how: StoreSource } {
  if (flag) return { dir: path.resolve(flag), how: 'flag' };
  if (m.env.MCP_GATE_STORE) return { dir: path.resolve(m.env.MCP_GATE_STORE), how: 'env' };
  const known = knownStoreDirs(m);
  const found = known.find((d) => fs.existsSync(d));
  return found ? { dir: found, how: 'found' } : { dir: known[0], how: 'default' };
}

/** True when `dir` lies inside `project` (a store there could be written by the repository itself). */
export function isInside(project: string, dir: string): boolean {
  const rel = path.relative(project, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
