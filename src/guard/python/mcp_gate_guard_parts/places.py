# mcp_gate_guard_parts/places.py — Where a path is, for the checks above the rule: a place the server can write, a
# library file, and the whole workspace compared with what was approved.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import errno
import os
import sys
from . import state, rule, reads


def _writable_place(p):
    """True for a real path in the workspace, a scratch folder or this process's home (or one of those itself)."""
    if not state._state['on']:
        return False
    if state.BROKEN is not None:
        return rule._where(p)[0] is not None
    if p == state.ROOT or rule._in_home(p) or rule._where(p)[0] is not None:
        return True
    return any(p == d.rstrip(os.sep) for d in state.SCRATCH)


def _library_file(p):
    """A file outside root and scratch, or an approved one of the site-packages of the virtual environment this
    interpreter runs in, when that is in the workspace (a folder merely named site-packages is the application's
    code). A package there is taken for the library it says it is: a forged one in a committed venv is not told apart
    (docs/concepts.md says so)."""
    kind = rule._where(p)[0]
    if kind is None:
        return True
    if kind != 'root' or sys.prefix == sys.base_prefix:
        return False
    prefix = rule._prefix(os.path.realpath(sys.prefix))
    if not p.startswith(prefix):
        return False
    parts = p[len(prefix):].split(os.sep)
    if 'site-packages' not in parts and 'dist-packages' not in parts:
        return False
    try:
        return reads._differs(p, os.stat(p)) is None
    except OSError:
        return False


def _workspace_as_approved():
    """None when every file of the workspace is what was approved; else (p, rel, why, sha) of the first that is not."""
    if not state._state['on']:
        return None
    if state.BROKEN is not None or not state.ROOT:
        return state.ROOT or '(workspace)', None, 'manifest', ''   # what is approved is not known: fail closed
    state._tls.busy = True
    unlisted = []

    def cannot_list(e):                          # gone meanwhile holds nothing; anything else may hold a new file
        if e.errno != errno.ENOENT:
            unlisted.append(e.filename if isinstance(e.filename, str) else state.ROOT)
    try:
        for d, dirs, names in os.walk(state.ROOT, onerror=cannot_list):
            if unlisted:
                break
            if d == state.ROOT and '.git' in dirs:
                dirs.remove('.git')
            dirs.sort()
            for n in sorted(names):
                p = os.path.join(d, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if st.st_mode & 0o170000 != 0o100000:
                    continue
                rel = p[len(state.ROOT_PREFIX):].replace(os.sep, '/')
                want = state.FILES.get(rel)
                if want is None:
                    try:
                        with open(p, 'rb') as f:
                            return p, rel, 'new', rule._sha(f.read())
                    except OSError:
                        return p, rel, 'new', ''
                if want == 'too-large':
                    # not hashed (over 256 MiB): its size, modification time and inode must be what was recorded
                    # (red team 7p, case 05); with no record it cannot be told unchanged
                    rec = state.LARGE.get(rel)
                    if not isinstance(rec, dict) or rec.get('size') != st.st_size or \
                            str(rec.get('mtimeNs')) != str(st.st_mtime_ns) or \
                            (rec.get('ino') is not None and str(rec.get('ino')) != str(st.st_ino)):
                        return p, rel, 'changed', ''
                    continue
                key = (st.st_ino, st.st_size, st.st_mtime_ns)
                hit = state._known.get(rel)
                if hit is not None and hit[0] == key:
                    h = hit[1]
                else:
                    try:
                        with open(p, 'rb') as f:
                            h = rule._sha(f.read())
                    except OSError:
                        continue
                    state._known[rel] = (key, h)
                if h != want:
                    return p, rel, 'changed', h
    finally:
        state._tls.busy = False
    if unlisted:                                 # what it holds cannot be compared with the approval: fail closed
        p = unlisted[0]
        rel = p[len(state.ROOT_PREFIX):].replace(os.sep, '/') if p.startswith(state.ROOT_PREFIX) else None
        return p, rel, 'unlistable', ''
    return None
