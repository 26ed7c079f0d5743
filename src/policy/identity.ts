// Who a grant is for. The policy sees a server as its name plus its scope (user or repository) and, for a
// repository server, the real path of its project; every rule, secrets entry and local-development exception says
// which of them it is for through its optional "project" field (absent: your user-scope servers only; a folder:
// the repository servers of that project only; "*": any repository's server of that name). A repository server
// that takes the name of one of your own servers therefore gets none of that server's grants.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { jsonExcerpt } from './names';

/** A server as the policy sees it. A repository server carries the real path of its project folder. */
export type ServerIdentity =
  { readonly name: string; readonly scope: 'user' } | { readonly name: string; readonly scope: 'repository'; readonly project: string };

/** `"project": "*"` — every repository's server of the name the entry names. */
export const ANY_PROJECT = '*';

/**
 * The "project" part of a rule, secrets entry or exception. `project` is as written; `projectPath` is what it
 * was resolved to by {@link resolveProjects} (the folder's real path), `null` when it names no existing folder.
 * An entry whose project was never resolved applies to nothing.
 */
export interface ProjectQualified {
  readonly project?: string;
  readonly projectPath?: string | null;
}

/** Why `value` cannot be a "project" field, or undefined when it can: an absolute folder path, `~/…`, or `*`. */
export function projectProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return '"project" must be a string: an absolute folder path, "~/…", or "*"';
  if (value === ANY_PROJECT) return undefined;
  if (value === '' || value.trim() !== value) return `"project" must be an absolute folder path, "~/…", or "*", not ${jsonExcerpt(value)}`;
  if (/[\0\r\n]/.test(value)) return `"project" may not hold a NUL or line break (${jsonExcerpt(value)})`;
  if (value === '~' || value.startsWith('~/')) return undefined;
  if (value.startsWith('~')) return `"project" ${jsonExcerpt(value)}: only "~/" (your own home folder) is expanded`;
  if (!path.isAbsolute(value))
    return `"project" must be an absolute folder path, "~/…", or "*", not the relative path ${jsonExcerpt(value)}`;
  return undefined;
}

/** How {@link resolveProjects} finds real paths; injectable for tests. */
export interface ProjectResolver {
  readonly home: () => string;
  /** The real path of an existing folder; throws (or returns undefined) when there is none. */
  readonly realFolder: (p: string) => string | undefined;
}

export const systemResolver: ProjectResolver = {
  home: () => os.homedir(),
  realFolder: (p) => {
    const real = fs.realpathSync.native(p);
    return fs.statSync(real).isDirectory() ? real : undefined;
  },
};

/** `~` and `~/x` expanded; the real path of the folder, or null when it does not exist (or is not a folder). */
function resolveProject(written: string, resolver: ProjectResolver = systemResolver): string | null {
  const expanded = written === '~' ? resolver.home() : written.startsWith('~/') ? path.join(resolver.home(), written.slice(2)) : written;
  try {
    return resolver.realFolder(expanded) ?? null;
  } catch {
    return null;
  }
}

/** The entries with `projectPath` filled in (`*` and absent stay as they are). */
export function resolveProjects<T extends ProjectQualified>(items: readonly T[], resolver: ProjectResolver = systemResolver): T[] {
  const cache = new Map<string, string | null>();
  return items.map((item) => {
    if (item.project === undefined || item.project === ANY_PROJECT) return item;
    let real = cache.get(item.project);
    if (real === undefined) {
      real = resolveProject(item.project, resolver);
      cache.set(item.project, real);
    }
    return { ...item, projectPath: real };
  });
}

/**
 * Does an entry apply to this server? No "project": user-scope servers only. `*`: every repository server.
 * A folder: repository servers whose project's real path is that folder's real path.
 */
export function appliesTo(entry: ProjectQualified, who: ServerIdentity): boolean {
  if (entry.project === undefined) return who.scope === 'user';
  if (who.scope !== 'repository') return false;
  if (entry.project === ANY_PROJECT) return true;
  return typeof entry.projectPath === 'string' && entry.projectPath === who.project;
}

/** "your user-scope servers" / "repository servers of /real/path" — for messages. */
export function describeIdentity(who: ServerIdentity): string {
  if (who.name === '*') return who.scope === 'user' ? 'your user-scope servers' : `the repository servers of ${who.project}`;
  return who.scope === 'user'
    ? `your user-scope server ${jsonExcerpt(who.name)}`
    : `the repository server ${jsonExcerpt(who.name)} of ${who.project}`;
}

/** Why an entry that matched an action does not apply to `who`, in words. */
export function describeQualifier(entry: ProjectQualified, who: ServerIdentity): string {
  if (entry.project === undefined) return 'having no "project", it applies only to your user-scope servers';
  if (who.scope === 'user') return `its "project" ${jsonExcerpt(entry.project)} makes it apply only to repository servers`;
  if (entry.projectPath === null) return `its "project" ${jsonExcerpt(entry.project)} names no existing folder, so it applies to nothing`;
  if (entry.projectPath === undefined)
    return `its "project" ${jsonExcerpt(entry.project)} was not resolved to a folder, so it applies to nothing`;
  return `its "project" ${jsonExcerpt(entry.project)} is another folder (${entry.projectPath})`;
}
