# mcp_gate_guard_parts/wrappers.py — Readers that raise no audit event (readline, ssl, sqlite, os.readlink) and the
# open wrapper: wrapped so what they read is checked or taken in like an open.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from . import state, reads


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
        try:
            name = os.fsdecode(v)
        except TypeError:
            continue
        if os.path.isdir(name):                  # a CA folder (capath): OpenSSL reads the files in it by hash
            try:
                for n in sorted(os.listdir(name)):
                    reads._take_in_file(os.path.join(name, n))
            except OSError:
                pass
        else:
            reads._take_in_file(name)


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
        finally:
            state._tls.dir_fd = False
        try:
            where = state._readlink('/proc/self/fd/%d' % fd)
        except OSError:                         # not placed (no /proc): counted as content not as approved
            where = None
            if flags & 3 != os.O_WRONLY:
                reads._took_in(os.fsdecode(path), ('new', None, ''))
        try:
            if where is not None:
                reads._on_open((where, None, flags))
        except state.McpGateGuardRefused:
            os.close(fd)
            raise
        except Exception:
            pass
        return fd
    os.open = open
    try:
        import posix
        posix.open = open
    except ImportError:
        pass


def _on_replace(args):
    """os.rename / os.replace / os.link: a file moved or linked onto one this process made is no longer what it wrote
    (red team 5, case 04: a changed inbox job linked onto its own spool file)."""
    try:
        src, dst = os.path.realpath(os.fsdecode(args[0])), os.path.realpath(os.fsdecode(args[1]))
    except (TypeError, ValueError, IndexError):
        return
    if dst in state._own and src not in state._own:
        state._own.discard(dst)


def _sqlite_authorizer(action, arg1, arg2, db, trigger):
    if action == 24:                            # SQLITE_ATTACH: a database file opened by the library itself
        if arg1:
            reads._on_sqlite((arg1,))
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
                reads._on_readlink(path, k.get('dir_fd'), text)
            except Exception:
                pass
        return text
    os.readlink = readlink
    try:
        import posix
        posix.readlink = readlink               # the same function under its other name (red team 5, case 05)
    except ImportError:
        pass
