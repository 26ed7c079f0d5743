// The folders MCP Gate keeps for one server on the host: its private cache folder (named by the server's one key,
// src/trust/approval/server-ref.ts; its caches, its own home, its package state live there), the move of a folder
// named the old way to the new name, and the check that a private folder is really this user's alone. It decides
// where those folders are and refuses a start whose folder another user could reach; what goes in them and how the
// sandbox mounts them is contain.ts's and sandbox.ts's.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServerIdentity } from '../../policy/identity';
import { refOf, serverKey } from '../../trust/approval/server-ref';
import { ContainRefused } from './contain-options';

/**
 * The private cache folder of one server (created on first start, mode 0700), named by the server's one key
 * (src/trust/approval/server-ref.ts). A user-scope server is the same server in every project, so its folder is
 * the empty one: it keeps one cache wherever it runs; a repository server's is its project's real path.
 */
export function serverCacheDir(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  who: ServerIdentity,
  source: string,
): string {
  const ref = refOf(who.scope === 'repository' ? who.project : '', { source, name: who.name });
  return path.join(cacheBase(home, env), `${who.name}-${createHash('sha256').update(serverKey(ref)).digest('hex').slice(0, 20)}`);
}

function cacheBase(home: string, env: Readonly<Record<string, string | undefined>>): string {
  return path.join(
    env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(home, '.cache'),
    'mcp-gate',
    'sandbox',
  );
}

/**
 * A folder MCP Gate gives a server for its own state: made (with its parents) mode 0700 when missing, and used
 * only when it is a real folder (not a link) owned by this user that no one else may write to or read; anything
 * else refuses the start with the fix. Returns the folder.
 */
export function privateDir(dir: string, server: string): string {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new ContainRefused(`"${server}" is not started: its private folder ${dir} cannot be made (${(e as Error).message})`);
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const st = fs.lstatSync(dir);
  const fix = `remove it (MCP Gate makes it again, yours, mode 0700) and look into who made it`;
  if (!st.isDirectory())
    throw new ContainRefused(`"${server}" is not started: its private folder ${dir} is not a folder (a link or a file); ${fix}`);
  if (uid !== undefined && st.uid !== uid)
    throw new ContainRefused(
      `"${server}" is not started: its private folder ${dir} belongs to uid ${st.uid}, not to you (uid ${uid}), so another user could put code in it; ${fix}`,
    );
  if ((st.mode & 0o077) !== 0)
    throw new ContainRefused(
      `"${server}" is not started: its private folder ${dir} has mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, which lets other users in; ${fix}`,
    );
  return dir;
}

/**
 * Releases before the one key named the folder by a digest of `scope NUL project NUL source NUL name`; an existing
 * folder of that name is moved to the new one at the server's next start, so its packages are kept.
 */
export function moveOldCacheDir(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  who: ServerIdentity,
  source: string,
  to: string,
): void {
  const old = path.join(
    cacheBase(home, env),
    `${who.name}-${createHash('sha256')
      .update(`${who.scope}\0${who.scope === 'repository' ? who.project : ''}\0${source}\0${who.name}`)
      .digest('hex')
      .slice(0, 20)}`,
  );
  try {
    if (!fs.existsSync(to) && fs.lstatSync(old).isDirectory()) fs.renameSync(old, to);
  } catch {
    // no old folder (or it cannot be moved): the server starts with an empty cache
  }
}
