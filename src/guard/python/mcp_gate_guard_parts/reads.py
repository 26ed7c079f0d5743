# mcp_gate_guard_parts/reads.py — PEP 578 audit hook, files read: opens of code files, what a process takes in (a read
# of a workspace or scratch file that is not as approved), sqlite/dbm/readlink reads, the finder that wraps dbm's
# readers, and the readers that raise no audit event (readline, ssl, sqlite, os.readlink) and the open wrapper,
# wrapped so what they read is checked or taken in like an open.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from importlib import machinery as _M
import re as _re
from . import state, rule


# ---------------------------------------------------------------------------------------------------------
# PEP 578 audit hook: opens of code files, compile of a non-matching file's text, ctypes, program starts
# ---------------------------------------------------------------------------------------------------------

_TEXT_READERS = ('linecache', 'tokenize', 'traceback', 'inspect')


def _read_for_display():
    """True when the open comes from traceback/source display (linecache): not a load."""
    try:
        f = sys._getframe(3)
        n = 0
        while f is not None and n < 12:
            if f.f_globals.get('__name__') in _TEXT_READERS:
                return True
            f, n = f.f_back, n + 1
    except Exception:
        pass
    return False


def _read_by_site_venv():
    """True when the open comes from the interpreter's own site.venv() (it reads pyvenv.cfg for `home` and
    `include-system-site-packages`; the site-packages it then adds load under the guard like any file)."""
    try:
        f = sys._getframe(3)
        n = 0
        while f is not None and n < 6:
            c = f.f_code
            if c.co_name == 'venv' and (c.co_filename == '<frozen site>' or (
                    c.co_filename.endswith(os.sep + 'site.py') and rule._where(os.path.realpath(c.co_filename))[0] is None)):
                return True
            f, n = f.f_back, n + 1
    except Exception:
        pass
    return False


def _taint(p, v, data):
    state._tainted[v[2]] = (p, v[1], v[0], v[2])
    if b'\r' in data:                           # the same text read in text mode (universal newlines)
        try:
            t = data.replace(b'\r\n', b'\n').replace(b'\r', b'\n')
            state._tainted[rule._sha(t)] = (p, v[1], v[0], v[2])
        except Exception:
            pass


def _note_own(path, mode, flags):
    """A file this process creates or truncates (before it took anything in) holds what it wrote, not a change."""
    if state._took['in'] is not None:
        return
    # os.open: truncated, or created new (O_CREAT with O_EXCL); O_EXCL alone creates nothing (red team 4, case 12);
    # 'a' (O_CREAT alone) creates a file only when the name is not there before the open (red team 16, p15)
    fresh = ('w' in mode or 'x' in mode) if mode is not None else \
        bool(flags & os.O_TRUNC) or (flags & (os.O_CREAT | os.O_EXCL)) == (os.O_CREAT | os.O_EXCL)
    if not fresh and ('a' in mode if mode is not None else bool(flags & os.O_CREAT)):
        try:
            fresh = not os.path.lexists(path)
        except (TypeError, ValueError):
            fresh = False
    if fresh:
        try:
            p = os.path.realpath(os.fsdecode(path))
            state._own.add(p)
            state._gone.discard(p)
        except (TypeError, ValueError):
            pass


def _real_name(path, dir_fd=None):
    """The absolute name `path` (relative to dir_fd or the cwd) with its folder part's links resolved, or None."""
    path = rule._plain(path)
    if not isinstance(path, (str, bytes)):
        return None
    name = os.fsdecode(path)
    if not os.path.isabs(name):
        if dir_fd is not None and dir_fd >= 0:   # (an audit event says -1 for none)
            try:
                name = os.path.join(state._readlink('/proc/self/fd/%d' % dir_fd), name)
            except (OSError, TypeError):
                return None
        else:
            name = os.path.join(os.getcwd(), name)
    d, b = os.path.split(name.rstrip(os.sep) or os.sep)
    return os.path.join(os.path.realpath(d), b) if b not in ('', '.', '..') else os.path.realpath(name)


def _on_mkdir(args):
    """os.mkdir (makedirs): a folder this process makes (the name not there before) is its own, as a file it
    creates is (red team 16: a new folder's name counts as content, one it made does not)."""
    if state._took['in'] is not None or not args:
        return
    try:
        name = _real_name(args[0], args[2] if len(args) > 2 else None)
        if name is not None and not os.path.lexists(name):
            state._own.add(name)
            state._gone.discard(name)
    except (TypeError, ValueError, OSError):     # the call itself fails on such a name
        pass


def _on_remove(args):
    """os.remove/unlink/rmdir and a rename's source: a name this process removes is gone by its own doing (an
    approved name missing from a listing or a look is then no change)."""
    if state._took['in'] is not None or not args:
        return
    try:
        name = _real_name(args[0], args[1] if len(args) > 1 and isinstance(args[1], int) else None)
        if name is not None and os.path.lexists(name):    # (one not there stays gone by another's doing)
            state._own.add(name)
            state._gone.add(name)             # (its absence: what is there later another process put there)
    except (TypeError, ValueError, OSError):     # the call itself fails on such a name
        pass


def _on_rename(args):
    """os.rename / os.replace: the source is gone by this process's doing; the target as _on_replace says."""
    _on_replace(args)
    _on_remove((args[0], args[2] if len(args) > 2 else None) if args else ())


def _took_in(p, v):
    if state._took['in'] is None and not state._is_own(p):
        state._took['in'] = (p, v[1], v[0], v[2])


def _fixed_name(path):
    """True for a path object whose name is fixed: the standard library's own path classes (not a subclass)."""
    pl = sys.modules.get('pathlib')
    return type(path) is os.DirEntry or (pl is not None and type(path) in (pl.PurePosixPath, pl.PosixPath))


def _on_open(args):
    path, mode = rule._plain(args[0]), args[1]
    if isinstance(path, int):
        return
    flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
    if not isinstance(path, (str, bytes)) and not _fixed_name(path):
        # a path object (io.FileIO(obj)) is asked for its name again here, after the opener asked: what it says now
        # need not be what is opened, so a read counts as content not as approved (a write is not noted as own)
        if (flags & 3 != os.O_WRONLY) if mode is None else (not isinstance(mode, str) or 'r' in mode or '+' in mode):
            _took_in('(a path object: %s)' % type(path).__name__, ('new', None, ''))
        return
    if mode is None:                            # os.open(path, flags)
        if flags & 3 != os.O_RDONLY:
            _note_own(path, None, flags)
        if flags & 3 == os.O_WRONLY or flags & os.O_TRUNC:
            return
    elif not isinstance(mode, str):
        return
    else:
        if 'r' not in mode:
            _note_own(path, mode, 0)
        if not ('r' in mode or ('+' in mode and 'w' not in mode)):
            return
    try:
        name = os.fsdecode(path)
    except TypeError:
        return
    if not os.path.isabs(name) and getattr(state._tls, 'dir_fd', False):
        return                                  # os.open(..., dir_fd=): looked at by _wrap_open once it is open
    if state._took['in'] is None and not os.path.lexists(name):
        # a read-open that will fail (ENOENT) tells the name is not there: a look, as os.stat's (red team 16, p06)
        state._looked.add(os.path.abspath(name))
    if not os.path.isabs(name) and not os.path.lexists(name):
        # Read relative to a folder descriptor some other way (posix.open before the guard's wrapper, an opener):
        # where it is cannot be told, so it counts as content that is not as approved (red team 4, case 10).
        _took_in(name, ('new', None, ''))
        return
    p = os.path.realpath(name)
    if rule._where(p)[0] is None:
        # read through a workspace link made or retargeted since approval: content that is not as approved
        lv = rule._link_verdict(name, p)
        if lv is not None and os.path.isfile(p) and os.path.getsize(p) <= state.TAINT_MAX:
            try:
                data = rule._read(p)
            except OSError:
                return
            v = (lv[2], lv[1], rule._sha(data))
            _taint(lv[0], v, data)
            _took_in(lv[0], v)
        return
    try:
        st = rule._stat(p)
    except OSError:
        return
    if st.st_mode & 0o170000 != 0o100000:        # not a regular file
        return
    if p.endswith(state.CODE_SUFFIXES) or name.endswith(state.CODE_SUFFIXES):
        try:
            data = rule._read(p)
        except OSError:
            return
        v = rule._verdict(p, data)
        if v is None:
            return
        if _read_for_display():
            # a traceback showing source is not a load; compile of it, or of any part of it, after that is refused
            # (a line of it handed back by linecache and exec'd: red team 5, case 02)
            _taint(p, v, data)
            _took_in(p, v)
            return
        rule._refuse(p, v[1], v[0], v[2], 'open')
    if os.path.basename(p) == 'pyvenv.cfg' and _read_by_site_venv():
        return                                  # a virtual environment's settings, read by site: no text becomes code
    if st.st_size > state.TAINT_MAX:
        if state._took['in'] is None:
            v = _differs(p, st)
            if v is not None:
                _took_in(p, v)
        return
    try:
        data = rule._read(p)
    except OSError:
        return
    v = rule._verdict(p, data)
    if v is not None and not state._is_own(p):
        _taint(p, v, data)
        _took_in(p, v)


def _differs(p, st):
    """The verdict for a large file read as data, hashed once per (inode, size, mtime)."""
    kind, rel = rule._where(p)
    if kind is None:
        return None
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = state._known.get(p)
    if hit is None or hit[0] != key:
        v = rule._verdict(p)
        state._known[p] = (key, v)
        return v
    return hit[1]


_PERCENT = _re.compile(rb'%([0-9A-Fa-f]{2})')


def _sqlite_uri_path(name):
    """The file a `file:` URI names, decoded as SQLite does (sqlite3ParseUri): an authority of '' or 'localhost'
    after `//`, the path up to `?` or `#`, %XX decoded. None when SQLite would not open a file it names."""
    rest = name[5:]
    if rest.startswith('//'):
        end = rest.find('/', 2)
        if end < 0:
            end = len(rest)
        if rest[2:end] not in ('', 'localhost'):
            return None
        rest = rest[end:]
    for c in '?#':
        rest = rest.split(c, 1)[0]
    raw = _PERCENT.sub(lambda m: bytes((int(m.group(1), 16),)), os.fsencode(rest))
    if b'\0' in raw:
        raw = raw.split(b'\0', 1)[0]
    return os.fsdecode(raw)


def _on_sqlite(args):                           # sqlite3.connect: (database,) — read by the library itself
    if args and not isinstance(args[0], (str, bytes)) and not _fixed_name(args[0]):
        # the event gets the object itself and the connection asks it for its name again: what it says to the
        # guard need not be what SQLite opens, so it counts as content not as approved
        _took_in('(a path object: %s)' % type(args[0]).__name__, ('new', None, ''))
        return
    try:
        name = os.fsdecode(args[0])
    except (TypeError, IndexError):
        return
    if name == ':memory:' or not name:
        return
    names = [name]                               # uri=False: the name as written (the event does not say which)
    if name.startswith('file:'):
        try:
            decoded = _sqlite_uri_path(name)
        except (ValueError, TypeError, UnicodeError):
            decoded = None
        if decoded is None:                      # cannot be placed: the workspace is checked at the next compile
            state._took['started'] = True
            return
        if decoded:
            names.append(decoded)
    for n in names:
        if _take_in_file(n) is None:             # there, but cannot be looked at: fail closed
            state._took['started'] = True


def _take_in_file(name):
    """A file a library reads itself (sqlite, dbm): counted as taken in when it is not as approved; True then (None
    when it is there but cannot be looked at)."""
    p = os.path.realpath(name)
    try:
        st = rule._stat(p)
    except OSError:
        return None if os.path.lexists(name) else False   # there but not statable (a loop, no access): None
    if st.st_mode & 0o170000 != 0o100000:
        return False
    v = _differs(p, st)
    if v is not None:
        _took_in(p, v)
    return v is not None


def _on_readlink(path, dir_fd, text):
    """os.readlink: a link's text is content the approval records (its `links`); the text of a workspace link made
    or retargeted since counts as taken in (red team 4, case 13: eval of a link's text)."""
    if state._took['in'] is not None or state.BROKEN is not None:
        return
    try:
        name = os.fsdecode(path)
    except TypeError:
        return
    if dir_fd is not None and not os.path.isabs(name):
        try:
            name = os.path.join(state._readlink('/proc/self/fd/%d' % dir_fd), name)
        except (OSError, TypeError):
            _took_in(name, ('new', None, ''))
            return
    lex = os.path.abspath(name)
    folder = os.path.realpath(os.path.dirname(lex))
    full = os.path.join(folder, os.path.basename(lex))
    if not full.startswith(state.ROOT_PREFIX):
        return                                  # a link in a scratch folder: no record of it (the process's own)
    rel = full[len(state.ROOT_PREFIX):].replace(os.sep, '/')
    try:
        t = os.fsdecode(text)
    except TypeError:
        return
    if state.LINKS.get(rel) != t:
        _took_in(full, ('changed' if rel in state.LINKS or rel in state.FILES else 'new', rel, rule._sha(t.encode('utf-8', 'surrogateescape'))))


def _on_dbm(filename):
    """dbm.ndbm / dbm.gnu open their files in C (no `open` event, unlike shelve's format probe): each file of the
    database that is not as approved counts as taken in (red team 4, case 14: a pickle in a pulled state.db)."""
    try:
        name = os.fsdecode(filename)
    except TypeError:
        return
    for f in (name, name + '.db', name + '.dir', name + '.pag'):
        if _take_in_file(f):
            return


class _DbmFinder(object):
    """Puts _on_dbm in front of the C dbm modules' open when they are imported (dbm.ndbm and dbm.gnu copy it), and
    _wrap_sqlite around _sqlite3's connect (sqlite3 copies it)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in ('_dbm', '_gdbm', '_sqlite3', 'readline', '_ssl', 'ssl'):
            return None
        spec = _M.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if name == '_sqlite3':
                _wrap_sqlite(module)
                return
            if name in ('readline', '_ssl', 'ssl'):
                _wrap_readers(module)
                return
            opener = getattr(module, 'open', None)
            if callable(opener):
                def open(filename, *a, **k):
                    _on_dbm(filename)
                    return opener(filename, *a, **k)
                module.open = open
        spec.loader.exec_module = exec_module
        return spec


# ---- readers that raise no audit event (once py) ----
# C libraries that open files themselves, with no `open` audit event (red team 7p, cases 04 and 12): GNU readline's
# history and init files, OpenSSL's certificate, key and DH parameter files. What they read is text the process
# takes in: a file they are given that is not as approved counts as taken in, as a read would.
_READERS = {
    'readline': ('read_history_file', 'read_init_file', 'append_history_file'),
    '_ssl': ('_test_decode_cert',),
}
_SSL_METHODS = ('load_verify_locations', 'load_cert_chain', 'load_dh_params')


def _take_in_names(values):
    for v in values:
        if v is None or isinstance(v, int):
            continue
        if not isinstance(v, (str, bytes)) and not _fixed_name(v):
            # a path object: the library asks it for its name again, and what it says then need not be what the
            # guard was told (as for io.FileIO and sqlite3.connect)
            _took_in('(a path object: %s)' % type(v).__name__, ('new', None, ''))
            continue
        name = os.fsdecode(v)
        if os.path.isdir(name):                  # a CA folder (capath): OpenSSL reads the files in it by hash
            try:
                for n in sorted(os.listdir(name)):
                    _take_in_file(os.path.join(name, n))
            except OSError:
                pass
        else:
            _take_in_file(name)


def _reader(real, names):
    def wrapped(*a, **k):
        _take_in_names([x for x in a[:2] if isinstance(x, (str, bytes)) or hasattr(x, '__fspath__')] +
                       [k[n] for n in names if n in k])
        return real(*a, **k)
    wrapped.__name__ = getattr(real, '__name__', 'wrapped')
    wrapped.__doc__ = getattr(real, '__doc__', None)
    return wrapped


def _wrap_readers(module):
    name = module.__name__
    if name == 'readline' and not hasattr(module, 'read_history_file') and name in _READERS:
        return
    for fn in _READERS.get(name, ()):
        real = getattr(module, fn, None)
        if callable(real):
            setattr(module, fn, _reader(real, ('filename',)))
    if name == 'readline':
        # read_history_file() / read_init_file() with no name read ~/.history / $INPUTRC (~/.inputrc)
        for fn in ('read_history_file', 'read_init_file', 'append_history_file'):
            w = getattr(module, fn, None)
            if w is None:
                continue

            def default(*a, _w=w, _fn=fn, **k):
                if not a and 'filename' not in k and _fn != 'append_history_file':
                    home = os.path.expanduser('~')
                    _take_in_names([os.path.join(home, '.history')] if _fn == 'read_history_file' else
                                   [os.environ.get('INPUTRC') or os.path.join(home, '.inputrc'), '/etc/inputrc'])
                return _w(*a, **k)
            setattr(module, fn, default)
    if name == 'ssl':
        ctx = getattr(module, 'SSLContext', None)
        for fn in _SSL_METHODS:
            real = getattr(ctx, fn, None) if ctx is not None else None
            if callable(real):
                def method(self, *a, _real=real, **k):
                    _take_in_names([x for x in a if isinstance(x, (str, bytes)) or hasattr(x, '__fspath__')] +
                                   [k[n] for n in ('cafile', 'capath', 'certfile', 'keyfile', 'path') if n in k])
                    return _real(self, *a, **k)
                method.__name__ = fn
                setattr(ctx, fn, method)
        # set_default_verify_paths (called by load_default_certs and create_default_context) has OpenSSL read the
        # files SSL_CERT_FILE and SSL_CERT_DIR (a ':'-separated list of folders) name in the process's own
        # environment (red team 8p, case 15)
        real = getattr(ctx, 'set_default_verify_paths', None) if ctx is not None else None
        if callable(real):
            def set_default_verify_paths(self, *a, _real=real, **k):
                _take_in_names(_default_verify_names())
                return _real(self, *a, **k)
            set_default_verify_paths.__name__ = 'set_default_verify_paths'
            set_default_verify_paths.__doc__ = getattr(real, '__doc__', None)
            ctx.set_default_verify_paths = set_default_verify_paths


def _default_verify_names():
    """The files and folders OpenSSL's default verify paths take from the environment (SSL_CERT_FILE, SSL_CERT_DIR)."""
    names = []
    try:
        f = os.environ.get('SSL_CERT_FILE')
        if f:
            names.append(f)
        d = os.environ.get('SSL_CERT_DIR')
        if d:
            names.extend(x for x in d.split(os.pathsep) if x)
    except Exception:
        pass
    return names


def _wrap_open():
    """os.open(..., dir_fd=) names a file relative to a folder descriptor the `open` audit event does not carry: the
    file opened is looked at by its descriptor's real path instead (red team 5, cases 01 and 06)."""
    real = os.open

    def open(path, flags, mode=0o777, *, dir_fd=None):
        if dir_fd is None:
            return real(path, flags, mode)
        state._tls.dir_fd = True
        try:
            fd = real(path, flags, mode, dir_fd=dir_fd)
        except OSError:
            # a failed read-open tells whether the name is there: a look (red team 16, p13)
            if flags & 3 != os.O_WRONLY and state._took['in'] is None and state._state['on']:
                name = _real_name(path, dir_fd)
                if name is None:
                    state._took['started'] = True
                else:
                    state._looked.add(name)
            raise
        finally:
            state._tls.dir_fd = False
        try:
            where = state._readlink('/proc/self/fd/%d' % fd)
        except OSError:                         # not placed (no /proc): counted as content not as approved
            where = None
            if flags & 3 != os.O_WRONLY:
                _took_in(os.fsdecode(path), ('new', None, ''))
        try:
            if where is not None:
                _on_open((where, None, flags))
        except state.McpGateGuardRefused:
            os.close(fd)
            raise
        except Exception as e:                  # the check itself failed (its frames overflow): not handed out
            os.close(fd)
            rule._refuse_unchecked('open', (where,), e)
        return fd
    os.open = open
    try:
        import posix
        posix.open = open
    except ImportError:
        pass


def _on_replace(args):
    """os.rename / os.replace / os.link: a file moved or linked onto one this process made is no longer what it wrote
    (red team 5, case 04: a changed inbox job linked onto its own spool file) — and every name below it, a folder
    moved onto one holding its own files (red team 20, r10); each name as the call resolves it, relative to its
    folder descriptor (r09: os.link(src_dir_fd=, dst_dir_fd=))."""
    try:
        src = _real_name(args[0], args[2] if len(args) > 2 else None)
        dst = _real_name(args[1], args[3] if len(args) > 3 else None)
        src, dst = os.path.realpath(src), os.path.realpath(dst)
    except (TypeError, ValueError, IndexError, OSError):
        return
    if state._is_own(src) and os.path.isfile(src):
        return                                   # (its own file moved onto its own name: still what it wrote)
    state._own.discard(dst)
    state._gone.discard(dst)
    if not (os.path.isdir(src) or os.path.isdir(dst)):
        return                                   # (a file renamed into place: no walk of every own name each time)
    below = dst.rstrip(os.sep) + os.sep
    for o in [o for o in state._own if o.startswith(below)]:
        state._own.discard(o)
        state._gone.discard(o)


def _sqlite_authorizer(action, arg1, arg2, db, trigger):
    if action == 24:                            # SQLITE_ATTACH: a database file opened by the library itself
        if arg1:
            _on_sqlite((arg1,))
        else:                                   # a bound name: not told; the workspace is checked at the next compile
            state._took['started'] = True
    return 0                                    # SQLITE_OK


def _on_sqlite_handle(args):
    """sqlite3.connect/handle: a connection made without sqlite3.connect (the class called itself), whose ATTACH the
    guard does not see: the workspace is checked at the next compile, as after a program start."""
    if not getattr(state._tls, 'sqlite_connect', False):
        state._took['started'] = True


def _wrap_sqlite(module):
    """sqlite3.connect: what a connection ATTACHes is read by the library itself (red team 5, case 03), so each
    connection gets an authorizer that looks at the file an ATTACH names (set once __init__ is done: the audit
    event comes before)."""
    real = getattr(module, 'connect', None)
    if not callable(real):
        return

    def connect(*a, **k):
        state._tls.sqlite_connect = True
        try:
            conn = real(*a, **k)
        finally:
            state._tls.sqlite_connect = False
        try:
            conn.set_authorizer(_sqlite_authorizer)
        except Exception:                       # what it ATTACHes unseen: the workspace is checked at the next compile
            state._took['started'] = True
        return conn
    module.connect = connect


def _wrap_readlink():
    real = state._readlink

    def readlink(path, *a, **k):
        text = real(path, *a, **k)
        # The guard's own os.path.realpath calls follow links to decide; the server's read the text too (a
        # dangling link's text comes back as the last part of the path: red team 5, case 10).
        f = sys._getframe(1)
        while f is not None and (f.f_code.co_filename == '<frozen posixpath>' or f.f_code.co_filename.endswith(os.sep + 'posixpath.py')):
            f = f.f_back
        if not getattr(state._tls, 'busy', False) and (f is None or f.f_code.co_filename not in state.GUARD_FILES):
            try:
                _on_readlink(path, k.get('dir_fd'), text)
            except Exception as e:              # the text could not be looked at: not handed out (fail closed)
                rule._refuse_unchecked('os.readlink', (path,), e)
        return text
    os.readlink = readlink
    try:
        import posix
        posix.readlink = readlink               # the same function under its other name (red team 5, case 05)
    except ImportError:
        pass
