// A server's identity, in one shape with one key: the workspace folder it belongs to, the source file that
// declares it (as the gate shows it: workspace-relative for repository files) and its name. The approval store
// keys its records by it (`folder` is then the project's real path; a record spells it project/source/server on
// disk), every front end names a server by it (`folder` is the folder as the front end opened it: the command
// argument `{ folder, source, name }`), and the sandbox names each server's private cache folder by it. Its key
// and equality are defined here only; the key is the store's (JSON of [folder, source, name]), byte for byte.
//
// The policy does not use this shape, by choice: a grant is for a server's name and scope (and, for a repository
// server, its project), never for the file that declares it, and src/policy may not import src/trust. It keeps
// its own structural view, ServerIdentity (src/policy/identity.ts), made from a report's server by
// src/host/identity.ts.
export interface ServerRef {
  /** The workspace folder: its real path in the store and the gate; the path as opened in a front end's reference. */
  readonly folder: string;
  readonly source: string;
  readonly name: string;
}

/** The ref of a server of the gate's report, in the given folder. */
export function refOf(folder: string, server: { source: string; name: string }): ServerRef {
  return { folder, source: server.source, name: server.name };
}

/** The ref of an approval record (its project, source and server). */
export function recordRef(r: { project: string; source: string; server: string }): ServerRef {
  return { folder: r.project, source: r.source, name: r.server };
}

/**
 * The one key of a server: one string per server, unambiguous for any folder, source or name (no separator can be
 * forged). The store's records, the panel's keys, the gateway's ids and the sandbox's cache folders derive from it.
 */
export function serverKey(r: ServerRef): string {
  return JSON.stringify([r.folder, r.source, r.name]);
}

export function sameRef(a: ServerRef, b: ServerRef): boolean {
  return a.folder === b.folder && a.source === b.source && a.name === b.name;
}

/** A ref from an untrusted value (a command argument, a message): exactly three strings, or undefined. */
export function asRef(v: unknown): ServerRef | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.folder !== 'string' || typeof o.source !== 'string' || typeof o.name !== 'string') return undefined;
  return { folder: o.folder, source: o.source, name: o.name };
}
