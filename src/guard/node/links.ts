// Symbolic links of the workspace that a load goes through: a load named inside the workspace (a path, or the
// node_modules folder a bare name finds) that resolves to a file outside it must have gone through a link the
// approval recorded with the same text; else it is refused as a changed or new file of the workspace.
import fs = require('node:fs');
import Module = require('node:module');
import path = require('node:path');
import { F, hasOwn } from './base';
import { getConfig } from './manifest';
import { refuse } from './verdict';

/**
 * A load named inside the workspace that resolved to a file outside it went through a symbolic link of the
 * workspace: that link must be one the approval recorded, with the same text (a plugin made a link to another
 * clone's file would otherwise load code no record describes). `lex` is the path as named, before links are
 * followed; each existing component of it is looked at, and the first link decides.
 */
export function linksAsApproved(lex: string, how: string): void {
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
export function lexicalOf(request: string, parentFile: string | undefined): string | null {
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
export function checkLinks(request: string, parentFile: string | undefined, resolved: string, how: string): void {
  const cfg = getConfig();
  if (!cfg || resolved.startsWith(cfg.root)) return;
  const lex = lexicalOf(request, parentFile);
  if (lex) linksAsApproved(lex, how);
}
