// A server's identity: the workspace folder it belongs to, the source file that declares it (as the gate shows
// it: workspace-relative for repository files) and its name. Every front end names a server this way; its key
// and equality are defined here only.
export interface ServerRef {
  /** The workspace folder's path as the front end opened it (the gate's project is its real path). */
  folder: string;
  source: string;
  name: string;
}

/** The ref of a server of the gate's report, in the given folder. */
export function refOf(folder: string, server: { source: string; name: string }): ServerRef {
  return { folder, source: server.source, name: server.name };
}

/** One string per server, unambiguous for any folder, source or name (no separator can be forged). */
export function refKey(r: ServerRef): string {
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
