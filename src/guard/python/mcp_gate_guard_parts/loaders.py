# mcp_gate_guard_parts/loaders.py — Imports: a path hook whose loaders check the exact bytes before compile /
# unmarshal / dlopen.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
from importlib import machinery as _M
from . import state, rule, native


# ---------------------------------------------------------------------------------------------------------
# Imports: a path hook whose loaders check the exact bytes before compile / unmarshal / dlopen
# ---------------------------------------------------------------------------------------------------------

def _compile(data, path):
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
