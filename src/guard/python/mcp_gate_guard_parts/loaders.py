# mcp_gate_guard_parts/loaders.py — Imports: a path hook whose loaders check the exact bytes before compile /
# unmarshal / dlopen; a source's coding declaration (a codec registered at run time is refused); the members of an
# approved archive zipimport compiles or unmarshals.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import re as _re
from importlib import machinery as _M
from . import state, rule, native


# ---------------------------------------------------------------------------------------------------------
# Imports: a path hook whose loaders check the exact bytes before compile / unmarshal / dlopen
# ---------------------------------------------------------------------------------------------------------

def _compile(data, path):
    try:
        p = os.path.realpath(path)
        ours = rule._where(p)[0] is not None or rule._inside_root(path)
    except (TypeError, ValueError):
        p, ours = path, True
    if ours:
        _own_codec_or_refuse(data, p)
    state._tls.busy = True
    try:
        return compile(data, path, 'exec', dont_inherit=True, optimize=state.OPTIMIZE)
    finally:
        state._tls.busy = False


def _source_get_code(self, fullname):
    """SourceFileLoader.get_code for every source loader (also the ones importlib.util.spec_from_file_location hands
    out): a file inside root or scratch is read once, checked and compiled, never from a __pycache__ .pyc."""
    p = os.path.realpath(self.path)
    if rule._where(p)[0] is None:
        rule._links_as_approved(self.path, p, 'python-import')
        if not rule._inside_root(self.path):
            return _ORIGINAL_GET_CODE(self, fullname)
    state._tls.busy = True
    try:
        data = self.get_data(self.path)
    finally:
        state._tls.busy = False
    rule.check(p, data, 'python-import')
    return _compile(data, self.path)


_ORIGINAL_GET_CODE = _M.SourceFileLoader.get_code


class _Source(_M.SourceFileLoader):
    # never the repository's __pycache__ (a planted or stale .pyc there is ignored); no cache is written
    get_code = _source_get_code

    def source_to_code(self, data, path, *, _optimize=-1):
        return compile(data, path, 'exec', dont_inherit=True, optimize=state.OPTIMIZE)


class _Sourceless(_M.SourcelessFileLoader):
    def get_data(self, path):
        state._tls.busy = True
        try:
            data = super().get_data(path)
        finally:
            state._tls.busy = False
        if path == self.path:
            rule.check(path, data, 'python-import')
        return data


class _Extension(_M.ExtensionFileLoader):
    def create_module(self, spec):
        rule.check(self.path, None, 'dlopen')             # before dlopen runs the library's constructors
        native._check_native_if_writable(self.path, 'dlopen')
        return super().create_module(spec)


class _RefusedEntry(object):
    """Path entry finder for a refused archive on sys.path: keeps zipimport from loading it."""

    def __init__(self, path, verdict):
        self.path, self.verdict = path, verdict

    def find_spec(self, fullname, target=None):
        v = self.verdict
        rule._refuse(self.path, v[1], v[0], v[2], 'zipimport')

    def invalidate_caches(self):
        pass


def _path_hook(entry):
    try:
        return state._file_finder_hook(entry)
    except ImportError:
        pass
    # not a folder: an archive (zipimport) whose name may not end in .zip/.egg/.whl — check it here
    try:
        p = os.path.realpath(os.fspath(entry) or '.')
        if rule._where(p)[0] is not None and os.path.isfile(p) and not p.endswith(state.CODE_SUFFIXES):
            data = rule._read(p)
            if b'PK\x05\x06' in data[-65557:]:
                v = rule._verdict(p, data)
                if v is not None:
                    return _RefusedEntry(p, v)
    except (OSError, TypeError, ValueError):
        pass
    raise ImportError('not a folder', path=entry)


# ---------------------------------------------------------------------------------------------------------
# A source's coding declaration (PEP 263): Python decodes the bytes the guard checked with the codec it names
# ---------------------------------------------------------------------------------------------------------

_LINES = _re.compile(br'([^\r\n]*)(?:\r\n|\r|\n)?([^\r\n]*)')
_COOKIE = _re.compile(br'coding[:=][ \t]*([-\w.]+)')


def _foreign_codec(data):
    """The name a coding declaration in the first two lines of data gives when it is no codec of Python's own (its
    tokenizer's utf-8 and latin-1, or one the standard library's `encodings` finds): a codec registered at run time
    (codecs.register) decodes the approved bytes into whatever text it makes (red team 12, case 01: a table read from
    a data file turned a string literal into code). Else None. Read more widely than the tokenizer does (any
    comment of either line), never running a search function of the server's."""
    m = _LINES.match(data if isinstance(data, bytes) else bytes(data))
    for line in (m.group(1), m.group(2)) if m else ():
        if b'#' not in line:
            continue
        for name in _COOKIE.findall(line[line.index(b'#'):]):
            n = name.decode('ascii').lower()
            if not _own_codec(n):
                return n
    return None


def _own_codec(n):
    e = n[:12].replace('_', '-')
    if e == 'utf-8' or e.startswith('utf-8-') or e in ('latin-1', 'iso-8859-1', 'iso-latin-1') or \
            e.startswith(('latin-1-', 'iso-8859-1-', 'iso-latin-1-')):
        return True                              # the tokenizer's own names (its get_normal_name)
    import sys
    enc = sys.modules.get('encodings')
    try:                                         # the standard library's, and where it finds its codecs
        if enc is None or any(rule._where(os.path.realpath(d))[0] is not None for d in [enc.__file__] + list(enc.__path__)):
            return False
    except (AttributeError, TypeError, ValueError):
        return False
    was = getattr(state._tls, 'busy', False)
    state._tls.busy = True
    try:
        # the first search function of the registry (encodings registers it as the interpreter starts): a name it
        # finds never reaches one the server registered
        info = enc.search_function(n)
    except Exception:
        info = None
    finally:
        state._tls.busy = was
    return info is not None


def _own_codec_or_refuse(data, p, rel=None):
    """Refuses the source data of the file p (inside root or scratch) when its coding declaration names a codec
    registered at run time: always, whatever the process took in (no server needs one for its own code)."""
    n = _foreign_codec(data)
    if n is not None:
        if rel is None and isinstance(p, str) and p.startswith(state.ROOT_PREFIX or '\0'):
            rel = p[len(state.ROOT_PREFIX):].replace(os.sep, '/')
        rule._refuse(p, rel, 'codec', rule._sha(bytes(data)), 'python-import (coding: %s)' % n[:100])


# ---------------------------------------------------------------------------------------------------------
# zipimport: the members of an approved archive it compiles (source) or unmarshals (.pyc) are approved code
# ---------------------------------------------------------------------------------------------------------

_ARCHIVES = {}          # real path -> ((inode, size, mtime, ctime), frozenset of sha256 of its members' code)
_MEMBERS_MAX = 256 << 20


def _zipimport_archive(f, name):
    """The real path of the archive a frame f of the standard library's zipimport (frozen, or its zipimport.py
    outside root and scratch) running `name` reads, from its zipimporter (`self.archive`); else None."""
    c = f.f_code if f is not None else None
    if c is None or c.co_name != name:
        return None
    fn = c.co_filename
    try:
        if fn != '<frozen zipimport>' and not (fn.endswith(os.sep + 'zipimport.py') and
                                               rule._where(os.path.realpath(fn))[0] is None):
            return None
        if name == '_compile_source':
            return ''
        archive = vars(f.f_locals.get('self')).get('archive')
        return os.path.realpath(archive) if isinstance(archive, str) else None
    except (TypeError, ValueError):
        return None


def _archive_code(p):
    """sha256 of the code of each member of the archive p as read once here, when those bytes are approved (the
    rule's verdict None): a source (.py, its line endings as zipimport makes them) and a .pyc's code (after its
    16-byte header). Parsed from the very bytes hashed, never read again; once per version of the file."""
    texts = set()
    was = getattr(state._tls, 'busy', False)
    state._tls.busy = True
    try:
        fd = rule._open_real(p)
        with open(fd, 'rb') as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            hit = _ARCHIVES.get(p)
            if hit is not None and hit[0] == key:
                return hit[1]
            data = fh.read()
        if rule._verdict(p, data) is None:
            import io
            import zipfile
            total = 0
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for i in z.infolist():
                    total += i.file_size
                    if total > _MEMBERS_MAX:
                        break
                    if i.filename.endswith('.py'):
                        b = z.read(i)
                        texts.add(rule._sha(b))
                        texts.add(rule._sha(b.replace(b'\r\n', b'\n').replace(b'\r', b'\n')))
                    elif i.filename.endswith(('.pyc', '.pyo')):
                        texts.add(rule._sha(z.read(i)[16:]))
    except Exception:                            # unreadable, no archive, a member that does not decompress: no code
        return frozenset(texts)
    finally:
        state._tls.busy = was
    _ARCHIVES[p] = (key, frozenset(texts))
    return _ARCHIVES[p][1]


def _zipimport_member(f, name, code):
    """True when the frame f is zipimport's `name` (_compile_source, _unmarshal_code) turning `code` (the source or
    a .pyc's code bytes) into code, and code is a member of the archive it reads as approved (red team 12, case 30b:
    importing from an unchanged lib/plugins.zip after reading an edited config). A changed archive is refused
    when it is opened."""
    p = _zipimport_archive(f, name)
    if name == '_compile_source':                # the zipimporter is its caller's (_get_module_code) self
        p = _zipimport_archive(f.f_back, '_get_module_code') if p is not None else None
    if p is None or not isinstance(code, (bytes, bytearray)):
        return False
    return rule._sha(bytes(code)) in _archive_code(p)
