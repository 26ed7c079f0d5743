# mcp_gate_guard_parts/audit.py — The audit hook itself: listdir of approved folders, the table of audit events and
# their handlers.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import errno
import os
import sys
from . import state, rule, reads, places, compiles, children, pickles


_DIRS = []


def _approved_dirs():
    if not _DIRS:
        _DIRS.append(set(k for k in places._approved_children() if k))    # (with the manifest's "folders")
    return _DIRS[0]


def _on_listdir(args):
    """os.listdir / os.scandir (os.walk, glob, pathlib) of a workspace folder: a name that was not there at approval
    is content the pull brought (a file named by code: red team 6p, case 04), taken in like a changed file's text; so
    is an approved name missing from it (red team 16, p02), unless this process removed it."""
    if state._took['in'] is not None or state.BROKEN is not None or not state._state['on']:
        return
    try:
        f = sys._getframe(2)                     # importlib's FileFinder lists a folder on sys.path: each file an
        if f.f_code.co_name == '_fill_cache' and f.f_code.co_filename.startswith('<frozen importlib'):
            return                               # import loads is checked itself, and the names reach no code
    except ValueError:
        pass
    name = places._listed_name(args)
    if name is None:
        return
    p = os.path.realpath(name)
    if p != state.ROOT and not p.startswith(state.ROOT_PREFIX):
        return
    rel = '' if p == state.ROOT else p[len(state.ROOT_PREFIX):].replace(os.sep, '/')
    state._tls.busy = True
    try:
        try:
            names = os.listdir(p)
        except OSError as e:
            if e.errno != errno.ENAMETOOLONG:
                return
            fd = rule._open_real(p, os.O_RDONLY | os.O_DIRECTORY)     # a folder deeper than a call may name
            try:
                names = os.listdir(fd)
            finally:
                os.close(fd)
        dirs = _approved_dirs()
        for n in sorted(names):
            r = rel + '/' + n if rel else n
            if r == '.git' or r in state.FILES or r in state.LINKS or r in dirs:
                continue
            full = os.path.join(p, n)
            if state._is_own(full):
                continue
            h = ''
            try:
                if os.path.isdir(full) and not os.path.islink(full):
                    if state.FOLDERS is None and not os.listdir(full):
                        continue                 # an empty folder, in an older approval (no "folders"): not counted
                elif os.path.isfile(full) and os.path.getsize(full) <= state.TAINT_MAX:
                    with open(full, 'rb') as f:
                        h = rule._sha(f.read())
            except OSError:
                pass
            reads._took_in(full, ('new', r, h))
            return
        there = set(names)
        for n in sorted(places._approved_children().get(rel, ())):
            r = rel + '/' + n if rel else n
            full = os.path.join(p, n)
            if n in there or r == '.git' or state._is_own(full):
                continue
            reads._took_in(full, ('changed', r, ''))    # an approved name gone: its absence is what was listed
            return
    finally:
        state._tls.busy = False


def _on_scandir(args):
    """os.scandir: a listing (above), and each entry's kind and stat() a look at that name (places._note_scan)."""
    places._note_scan(args)
    _on_listdir(args)


_EVENTS = {
    'os.fork': pickles._on_fork,
    'os.forkpty': pickles._on_fork,
    'ctypes.dlsym': pickles._on_ctypes_call,
    'ctypes.dlsym/handle': pickles._on_ctypes_call,
    'ctypes.call_function': pickles._on_ctypes_call,
    'os.listdir': _on_listdir,
    'os.scandir': _on_scandir,
    'open': reads._on_open,
    'compile': compiles._on_compile,
    'marshal.loads': children._on_marshal,
    'marshal.load': children._on_marshal_load,
    'code.__new__': children._on_code_new,
    'pickle.find_class': pickles._on_find_class,
    'sqlite3.connect': reads._on_sqlite,
    'sqlite3.connect/handle': reads._on_sqlite_handle,
    'os.rename': reads._on_rename,
    'os.mkdir': reads._on_mkdir,
    'os.remove': reads._on_remove,
    'os.rmdir': reads._on_remove,
    'os.link': reads._on_replace,
    'ctypes.dlopen': compiles._on_dlopen,
    'subprocess.Popen': children._on_popen,
    'os.exec': children._on_exec,
    'os.posix_spawn': children._on_exec,
    'os.spawn': children._on_spawn,
    'os.system': children._on_system,
}


def _audit(event, args):
    handler = _EVENTS.get(event)
    if handler is None or getattr(state._tls, 'busy', False):
        return
    try:
        handler(args)
    except state.McpGateGuardRefused:
        raise
    except Exception as e:
        # The guard could not decide (its own error on arguments it did not foresee): what it was asked to check
        # does not happen. Failing open here would let any input that makes a check throw pass every check.
        rule._refuse_unchecked(event, args, e)
