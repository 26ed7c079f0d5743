# mcp_gate_guard_parts/places.py — Where a path is, for the checks above the rule: a place the server can write, a
# library file, the whole workspace compared with what was approved, and the names the server looked at by metadata
# calls (stat, exists, …: wrapped here), recorded and compared with the approval lazily (_settle_looks).
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import _weakref
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
    unlisted, folder = [], []

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
            if state.FOLDERS is not None and not folder:   # a folder the approval does not have, even empty, is a
                known = _approved_children()               # new name (told when no file differs: a file says more)
                for n in dirs:
                    p = os.path.join(d, n)
                    rel = p[len(state.ROOT_PREFIX):].replace(os.sep, '/')
                    if rel not in known and not state._is_own(p) and not os.path.islink(p):
                        folder.append((p, rel, 'new', ''))
                        break
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
    return folder[0] if folder else None


# ---- looks at names: metadata (red team 16) ----
# Whether a name exists, a file's size, kind or times carry bits as well as its text does: approved code can decode a
# payload from which names a pull added, from sizes or from times set with `touch -d`, and exec it. Each name the
# server looks at by a metadata call (os.stat, os.lstat, os.access, os.fstat, os.statvfs and posix's, which
# genericpath, posixpath's realpath and pathlib call; os.chmod/chown/utime/truncate, whose success says the name is
# there; the entries of a folder it scandirs) is only recorded here (no hashing at look time);
# _settle_looks compares them with the approval when text is about to turn into code, and empties the record.
_PATH_CODE = frozenset(('os', 'posixpath', 'genericpath', 'pathlib', 'pathlib._local', 'pathlib._abc', 'stat'))
# the import system's own looks (each import stats its candidates; a file it loads is checked itself) and the
# source display's (as for reads): not the server's
_NOT_LOOKS = frozenset(('importlib._bootstrap', 'importlib._bootstrap_external', 'zipimport') + reads._TEXT_READERS)
_LOOK_MAX = 4096                # distinct names kept before they are compared at once (bounded memory)
_CHILDREN = []


def _approved_children():
    """rel of a folder ('' for root) -> the names the approval has directly in it (files, links, folders)."""
    if not _CHILDREN:
        c = {}
        for k in list(state.FILES) + list(state.LINKS):
            parts = k.split('/')
            for i in range(len(parts)):
                c.setdefault('/'.join(parts[:i]), set()).add(parts[i])
        for k in state.FOLDERS or ():            # the approval's folders holding no file or link
            parts = [x for x in k.split('/') if x]
            for i in range(len(parts)):
                c.setdefault('/'.join(parts[:i]), set()).add(parts[i])
            if parts:
                c.setdefault(k, set())
        _CHILDREN.append(c)
    return _CHILDREN[0]


def _by_site(c):
    """The interpreter's own site looking for its settings and folders (pyvenv.cfg beside the program, site-packages):
    not the server's. Its code objects as the guard took them at start (compiles._real_site), or its site.py outside
    root and scratch."""
    if c.co_filename == '<frozen site>':
        # (before the guard's compiles part is loaded, site runs as the guard starts it: no code of the server has run)
        comp = sys.modules.get(__package__ + '.compiles')
        return comp is None or comp._real_site(c)
    if not c.co_filename.endswith(os.sep + 'site.py'):
        return False
    try:
        return rule._where(os.path.realpath(c.co_filename))[0] is None
    except (TypeError, ValueError):
        return False


def _note_look(path, dir_fd):
    """Records the absolute name a metadata call looks at; returns the path to hand the real call (a path object is
    asked for its name once, here, so what is looked at is what was recorded)."""
    path = rule._plain(path)
    if not isinstance(path, (str, bytes, int)):
        if not hasattr(type(path), '__fspath__'):
            return path                          # the real call raises its own TypeError
        path = rule._plain(os.fspath(path))
        if not isinstance(path, (str, bytes)):
            return path
    f = sys._getframe(2)
    while f is not None and f.f_globals.get('__name__') in _PATH_CODE:
        f = f.f_back
    if f is not None and (f.f_code.co_filename in state.GUARD_FILES or f.f_globals.get('__name__') in _NOT_LOOKS
                          or _by_site(f.f_code)):
        return path
    if isinstance(path, int):
        try:
            name = state._readlink('/proc/self/fd/%d' % path)
        except OSError:
            return path
    else:
        name = os.fsdecode(path)
        if not os.path.isabs(name):
            if dir_fd is not None:
                try:
                    name = os.path.join(state._readlink('/proc/self/fd/%d' % dir_fd), name)
                except (OSError, TypeError):
                    state._took['started'] = True   # where it is cannot be told: the workspace at the next compile
                    return path
            else:
                name = os.path.join(os.getcwd(), name)
    state._looked.add(name)
    if len(state._looked) > _LOOK_MAX:
        _settle_looks()
    return path


def _looker(real):
    def look(*a, **k):
        if a:
            path, a = a[0], a[1:]
        elif 'path' in k:
            path = k.pop('path')
        else:                                    # listxattr(): the cwd's
            path = '.'
        if state._took['in'] is None and state._state['on'] and not getattr(state._tls, 'busy', False):
            try:
                path = _note_look(path, k.get('dir_fd'))
            except state.McpGateGuardRefused:
                raise
            except Exception:                    # not recorded: the workspace is compared at the next compile
                state._took['started'] = True
        return real(path, *a, **k)
    look.__name__ = getattr(real, '__name__', 'look')
    look.__qualname__ = look.__name__
    look.__doc__ = getattr(real, '__doc__', None)
    return look


def _wrap_looks():
    try:
        import posix
    except ImportError:
        posix = None
    # what a name shows by its metadata, and the calls whose success tells whether it is there (as Node's table)
    for fn in ('stat', 'lstat', 'access', 'fstat', 'statvfs', 'chmod', 'lchmod', 'chown', 'lchown', 'utime', 'truncate',
               'getxattr', 'listxattr'):
        real = getattr(os, fn, None)
        if real is None or getattr(real, '__name__', '') != fn:
            continue
        w = _looker(real)
        for kind in ('supports_dir_fd', 'supports_fd', 'supports_follow_symlinks', 'supports_effective_ids'):
            known = getattr(os, kind, None)      # `os.stat in os.supports_dir_fd` (shutil, os.fwalk) stays true
            if isinstance(known, set) and real in known:
                known.add(w)
        setattr(os, fn, w)
        if posix is not None and getattr(posix, fn, None) is real:
            setattr(posix, fn, w)              # the same function under its other name (importlib calls posix's)


def _listed_name(args):
    """The folder a listing's audit event names (os.listdir, os.scandir: '.' when none), as a str; None when it
    cannot be told — a descriptor that cannot be placed, or a path object that, asked again, need not name what is
    listed: the process then counts as started (the workspace is compared at the next compile)."""
    path = rule._plain(args[0]) if args else None
    if path is None:
        path = '.'
    if isinstance(path, int):
        try:
            return state._readlink('/proc/self/fd/%d' % path)
        except OSError:
            state._took['started'] = True
            return None
    if not isinstance(path, (str, bytes)) and not reads._fixed_name(path):
        state._took['started'] = True
        return None
    try:
        return os.fsdecode(path)
    except TypeError:
        return None


def _note_scan(args):
    """os.scandir: its entries' kind (is_dir, is_file: from the listing itself) and stat() are looks at each name."""
    if state._took['in'] is not None:
        return
    name = _listed_name(args)
    if name is None:
        return
    name = os.path.abspath(name)
    state._scanned.add(name)


def _settle_looks():
    """Compares every name looked at since the last time with the approval (CONTRACT.md, Python, metadata): the
    first that differs is taken in, as a read of a changed file would be. Empties the record."""
    looked, scanned = set(state._looked), set(state._scanned)   # (another thread may add meanwhile: kept for later)
    state._looked.difference_update(looked)
    state._scanned.difference_update(scanned)
    if state._took['in'] is not None or not state._state['on'] or state.BROKEN is not None:
        return
    was = getattr(state._tls, 'busy', False)
    try:
        state._tls.busy = True
        for d in sorted(scanned):
            real = os.path.realpath(d)
            kind, rel = rule._where(real)
            if real == state.ROOT:
                rel = ''
            elif kind is None:
                continue
            try:
                names = set(os.listdir(real))
            except OSError:
                names = set()
            if rel is not None:
                names |= _approved_children().get(rel, set())
            looked.update(os.path.join(real, n) for n in names)
        folders = {}
        for name in sorted(looked):
            state._tls.busy = True
            v = _look_differs(name, folders, 0)
            if v is not None and not state._is_own(v[0]):
                reads._took_in(v[0], v[1])
                if state._took['in'] is not None:
                    return
    finally:
        state._tls.busy = was


def _ctime_after(st):
    return state.SINCE is not None and st.st_ctime_ns // 1000000 > state.SINCE


def _links_on_the_way(folder):
    """The first symbolic link of the workspace on the folder part `folder` (absolute, as named) whose text is not
    the recorded one: (p, (why, rel, sha)); None when there is none or the first is as recorded."""
    if not folder.startswith(state.ROOT_PREFIX) and folder != state.ROOT:
        return None
    cur, rel = state.ROOT, ''
    for part in folder[len(state.ROOT_PREFIX):].split(os.sep) if folder != state.ROOT else ():
        if not part:
            continue
        cur = os.path.join(cur, part)
        rel = rel + '/' + part if rel else part
        try:
            if not os.path.islink(cur):
                continue
            text = state._readlink(cur)
        except OSError:
            return None
        if state.LINKS.get(rel) != text:
            why = 'changed' if rel in state.LINKS or rel in state.FILES else 'new'
            return cur, (why, rel, rule._sha(text.encode('utf-8', 'surrogateescape')))
        return None                              # past an approved link: what it leads to is judged by its real path
    return None


def _holds_others(folder, depth):
    """True when a folder not in the approval holds anything but this process's own files and empty folders."""
    try:
        names = os.listdir(folder)
    except OSError:
        return True
    for n in names:
        p = os.path.join(folder, n)
        if state._is_own(p):
            continue
        if os.path.isdir(p) and not os.path.islink(p) and depth < 8:
            if _holds_others(p, depth + 1):
                return True
            continue
        return True
    return False


def _new_folder(full):
    """A folder the approval does not have is a new name: with the manifest's "folders", unless this process made
    it; in an older approval (no "folders"), only when it holds more than this process's own files and empty
    folders."""
    if state.FOLDERS is not None:
        return not state._is_own(full)
    return _holds_others(full, 0)


def _look_differs(lex, folders, depth):
    """(p, (why, rel, sha)) when what the absolute name `lex` shows (whether it is there, its kind, size, times, link
    text) differs from the approval; else None."""
    base = os.path.basename(lex)
    if base in ('', '.', '..'):
        full = os.path.realpath(lex)
    else:
        d = os.path.dirname(lex)
        hit = folders.get(d)
        if hit is None:
            hit = folders[d] = (_links_on_the_way(d), os.path.realpath(d))
        if hit[0] is not None:
            return hit[0]
        full = os.path.join(hit[1], base)
    if state._is_own(full) or full == state.ROOT:
        return None
    kind, rel = rule._where(full)
    if kind is None or kind == 'broken':
        return None
    try:
        st = os.lstat(full)
    except OSError:
        st = None
    S = 0o170000
    if kind == 'scratch':                        # as for a read there: a file must hold approved content
        if st is None:
            return None
        if st.st_mode & S == 0o120000 and depth < 8:
            t = os.path.realpath(full)
            return None if t == full else _look_differs(t, folders, depth + 1)
        if st.st_mode & S != 0o100000:
            return None
        v = reads._differs(full, st)
        return (full, v) if v is not None else None
    if rel == '.git' or rel.startswith('.git/'):
        return None                              # not measured by the approval (as for the listing)
    children = _approved_children()
    is_file, is_link, is_folder = rel in state.FILES, rel in state.LINKS, rel in children
    if st is None:                               # gone: an approved file, link or folder no longer there
        return (full, ('changed', rel, '')) if is_file or is_link or is_folder else None
    mode = st.st_mode & S
    if mode == 0o120000:
        try:
            text = state._readlink(full)
        except OSError:
            text = None
        if not is_link or state.LINKS.get(rel) != text:
            sha = rule._sha(text.encode('utf-8', 'surrogateescape')) if text is not None else ''
            return full, ('changed' if is_link or is_file else 'new', rel, sha)
    elif mode == 0o040000:
        if is_file or is_link:
            return full, ('changed', rel, '')
        if not is_folder and _new_folder(full):
            return full, ('new', rel, '')
    else:
        want = state.FILES.get(rel)
        if want is None:
            h = ''
            if mode == 0o100000 and st.st_size <= state.TAINT_MAX:
                v = reads._differs(full, st)
                h = v[2] if v is not None else ''
            return full, ('changed' if is_link else 'new', rel, h)
        if want == 'too-large':                  # not hashed: its size, modification time and inode as recorded
            rec = state.LARGE.get(rel)
            if not isinstance(rec, dict) or rec.get('size') != st.st_size or \
                    str(rec.get('mtimeNs')) != str(st.st_mtime_ns) or \
                    (rec.get('ino') is not None and str(rec.get('ino')) != str(st.st_ino)):
                return full, ('changed', rel, '')
        else:
            v = reads._differs(full, st)
            if v is not None:
                return full, v
    if (is_file or is_link or is_folder) and _ctime_after(st) and not \
            (mode == 0o040000 and any(os.path.dirname(o) == full for o in state._own)):
        # an approved name's times, mode or owner changed after the measure began (touch -d), even to the same
        # content (a new name is judged as one above; a folder this process made a file in changed by its doing)
        return full, ('changed', rel, state.FILES.get(rel, '') if is_file and state.FILES.get(rel) != 'too-large' else '')
    if mode == 0o120000 and depth < 8:           # an approved link: what it leads to is looked at too
        t = os.path.realpath(full)
        if t != full:
            return _look_differs(t, folders, depth + 1)
    return None


# ---- importlib's own listings (red team 16, p04) ----
# FileFinder lists each folder on sys.path it searches (_fill_cache), not compared as a listing: an import checks
# what it loads. Its listing stays on the finder (`_path_cache`, reachable from sys.path_importer_cache or a
# FileFinder the server makes and fills itself), so whoever fills it, a workspace folder's cache holds only what the
# approval and this process say is there: its approved names (gone or not) and the process's own; a name the pull
# added is kept aside, and only a find_spec for that very name that finds nothing else looks with it (a probe, as
# importlib.util.find_spec's: not seen; what it finds is checked as it loads).
_ASIDE = {}                     # id(finder) -> (finder's weak reference, the names kept aside)


def _cache_as_approved(finder):
    try:
        p = os.path.realpath(finder.path or os.getcwd())
    except (OSError, TypeError, ValueError):
        return
    if p != state.ROOT and not p.startswith(state.ROOT_PREFIX):
        return
    rel = '' if p == state.ROOT else p[len(state.ROOT_PREFIX):].replace(os.sep, '/')
    listed = set(finder._path_cache)
    approved = _approved_children().get(rel, set())
    shown = {n for n in listed if n in approved or state._is_own(os.path.join(p, n)) or (n == '.git' and not rel)}
    shown |= approved
    finder._path_cache = shown
    if getattr(finder, '_relaxed_path_cache', None):
        finder._relaxed_path_cache = {n.lower() for n in shown}
    aside = listed - shown
    for k in [k for k, v in _ASIDE.items() if v[0]() is None]:
        del _ASIDE[k]
    if aside:
        _ASIDE[id(finder)] = (_weakref.ref(finder), aside)
    else:
        _ASIDE.pop(id(finder), None)


def _wrap_file_finder(FileFinder):
    real_fill, real_find = FileFinder._fill_cache, FileFinder.find_spec

    def _fill_cache(self):
        real_fill(self)
        if state._state['on'] and state.BROKEN is None:
            try:
                _cache_as_approved(self)
            except Exception:                    # not told apart: nothing of the listing is shown
                self._path_cache = set()

    def find_spec(self, fullname, target=None):
        spec = real_find(self, fullname, target)
        hit = _ASIDE.get(id(self)) if spec is None else None
        if hit is None or hit[0]() is not self:
            return spec
        tail = fullname.rpartition('.')[2]
        if not any(n == tail or n.startswith(tail + '.') for n in hit[1]):
            return spec
        shown = self._path_cache
        self._path_cache = shown | hit[1]        # the import finds what is there (and the loader checks it)
        try:
            return real_find(self, fullname, target)
        finally:
            self._path_cache = shown
    _fill_cache.__doc__, find_spec.__doc__ = real_fill.__doc__, real_find.__doc__
    FileFinder._fill_cache, FileFinder.find_spec = _fill_cache, find_spec
