# mcp_gate_guard_parts/pickles.py — Pickle: the allow-list of globals a pickle may name once this process took in
# content that is not as approved (plain data, the standard library's classes and rebuilders, the application's own
# classes).
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from . import state, rule, compiles, places


# What a pickle may name after its process took in content that is not as approved. A pickle calls what it names,
# so after taking in only what cannot turn its arguments into code or a program start passes: an allow-list. Red team
# 8p, case 06 (a multiprocessing pool's own tasks after a README edit) needs the pools' own functions; red team 9p
# showed a deny-list let generators (dataclasses._create_fn), `type` (a str subclass whose == lies) and dotted names
# (`shlex` → `os.getuid`) through. Passes:
#   - the names below (plain data types, containers, the pools' own task and result functions, copyreg's and
#     numpy's reconstructors; each only builds data or calls what the pickle named, which is checked the same way);
#   - an exception class of the standard library or of an approved module of the application;
#   - a class or function defined in an approved module of the application (a file of the workspace, not under
#     site-packages: what it does with the pickle's arguments is the approved code's behaviour, as with any data).
# Everything else is refused: other names of the standard library and of packages, any name with a `_` part of a
# module that is not listed, dotted names outside the application's modules.
_PICKLE_DATA = frozenset(('bool', 'int', 'float', 'complex', 'str', 'bytes', 'bytearray', 'list', 'tuple', 'dict',
                          'set', 'frozenset', 'range', 'slice', 'object', 'NoneType', 'Ellipsis', 'NotImplemented'))
_PICKLE_ALLOWED = frozenset((
    'copyreg._reconstructor', 'copy_reg._reconstructor', 'copyreg.__newobj__', 'copyreg.__newobj_ex__', '_codecs.encode',
    'collections.OrderedDict', 'collections.defaultdict', 'collections.deque', 'collections.Counter',
    'datetime.date', 'datetime.time', 'datetime.datetime', 'datetime.timedelta', 'datetime.timezone',
    'decimal.Decimal', 'fractions.Fraction', 'uuid.UUID', 'uuid.SafeUUID', 'ipaddress.IPv4Address',
    'ipaddress.IPv6Address', 'ipaddress.IPv4Network', 'ipaddress.IPv6Network', 'enum.Enum',
    'pathlib.PurePath', 'pathlib.PurePosixPath', 'pathlib.PosixPath', 'pathlib.Path', 'zoneinfo.ZoneInfo',
    'functools.partial', 're._compile', 'array.array', 'array._array_reconstructor',
    'os.stat_result', 'time.struct_time', 'types.SimpleNamespace', 'argparse.Namespace', 'subprocess.CompletedProcess',
    'urllib.parse.ParseResult', 'urllib.parse.SplitResult', 'urllib.parse.DefragResult', 'posix.stat_result',
    'multiprocessing.pool.mapstar', 'multiprocessing.pool.starmapstar', 'multiprocessing.pool.RemoteTraceback',
    'multiprocessing.pool.ExceptionWithTraceback', 'multiprocessing.pool.rebuild_exc',
    'multiprocessing.pool.MaybeEncodingError', 'multiprocessing.pool._helper_reraises_exception',
    'multiprocessing.pool.worker', 'concurrent.futures.process._process_worker',
    'concurrent.futures.process._CallItem', 'concurrent.futures.process._ResultItem',
    'concurrent.futures.process._ExceptionWithTraceback', 'concurrent.futures.process._rebuild_exc',
    'concurrent.futures.process._RemoteTraceback', 'concurrent.futures.process._process_chunk',
    'numpy.core.multiarray._reconstruct', 'numpy._core.multiarray._reconstruct', 'numpy.core.multiarray.scalar',
    'numpy._core.multiarray.scalar', 'numpy.ndarray', 'numpy.dtype', 'numpy.core.numeric._frombuffer',
    'numpy._core.numeric._frombuffer'))


def _stdlib_class_or_rebuild(module, name):
    m = sys.modules.get(module)
    if m is None:
        # not imported yet (pickle imports it next): the standard library's own module, from outside root and scratch
        try:
            import importlib.util
            spec = importlib.util.find_spec(module)
            if spec is None or not spec.has_location or rule._where(os.path.realpath(spec.origin))[0] is not None:
                return False
            m = importlib.import_module(module)
        except Exception:
            return False
    if rule._where(os.path.realpath(getattr(m, '__file__', '') or '/'))[0] is not None:
        return False
    v = getattr(m, name, None)
    # defined there (not a name it imported: multiprocessing.reduction.ABCMeta, a threading or queue class)
    if not str(getattr(v, '__module__', '') or '').startswith(('multiprocessing', 'concurrent.futures')):
        return False
    return isinstance(v, type) or (callable(v) and name.lstrip('_').startswith('rebuild'))


def _app_module(module):
    """True for a module loaded from an approved file of the workspace that is not a package under site-packages."""
    m = sys.modules.get(module)
    f = getattr(m, '__file__', None) if m is not None else None
    if m is None:
        # not imported yet (pickle imports it after this event): where it would load from, as import finds it
        try:
            import importlib.util
            spec = importlib.util.find_spec(module)
            f = spec.origin if spec is not None and spec.has_location else None
        except Exception:
            return False
    if not isinstance(f, str):
        return False
    try:
        p = os.path.realpath(f)
    except (TypeError, ValueError):
        return False
    parts = p.split(os.sep)
    if 'site-packages' in parts or 'dist-packages' in parts:
        return False
    return rule._inside_root(p) and rule._verdict(p) is None


try:
    import _compat_pickle
    _PY2_NAMES = dict(_compat_pickle.NAME_MAPPING)
    _PY2_MODULES = dict(_compat_pickle.IMPORT_MAPPING)
except ImportError:
    _PY2_NAMES, _PY2_MODULES = {}, {}


def _defined_in(module, name):
    """True when `name` (a qualified name: `f`, `Outer.Inner`) is a function or class the module itself defines, each
    step a class attribute read statically: never something it imported (`app.os.system`, `app.sys.modules`)."""
    m = sys.modules.get(module)
    parts = name.split('.')
    if m is None:
        # not imported yet: import it now (approved code; pickle would import it next) and look at what it defines
        # — a name it merely imported (`from operator import attrgetter`) is not its own (red team 11p, case 01)
        try:
            import importlib
            m = importlib.import_module(module)
        except Exception:
            return False
    obj = m
    for i, part in enumerate(parts):
        d = vars(obj) if i == 0 else getattr(obj, '__dict__', {})
        if part not in d:
            return False
        obj = d[part]
        if i < len(parts) - 1 and not isinstance(obj, type):
            return False
    # defined there: its module is this very module (a spawned worker's __main__ is also __mp_main__)
    return callable(obj) and sys.modules.get(getattr(obj, '__module__', None) or '') is m


def _pickle_allowed(module, name):
    if type(module) is not str or type(name) is not str or '<' in name:
        return False
    if ((module, name) in _PY2_NAMES or module in _PY2_MODULES) and module not in ('builtins', 'copyreg'):
        # protocols 0-2 write Python 2 names (exceptions, range, ...); a protocol 3+ pickle takes the name as it is,
        # so the Python 3 name counts only while no module of the Python 2 name can be imported (red team 11p)
        try:
            import importlib.util
            if module in sys.modules or importlib.util.find_spec(module.split('.')[0]) is not None:
                return False
        except Exception:
            return False
        if (module, name) in _PY2_NAMES:
            module, name = _PY2_NAMES[(module, name)]
        else:
            module = _PY2_MODULES[module]
    if module.startswith(('multiprocessing.', 'concurrent.futures.')) and '.' not in name and \
            not name.startswith('__') and _stdlib_class_or_rebuild(module, name):
        return True                             # the pools' and queues' own objects (AuthenticationString, Lock, ...)
    if module in ('builtins', '__builtin__') and '.' not in name:
        import builtins
        v = getattr(builtins, name, None)
        return name in _PICKLE_DATA or (isinstance(v, type) and issubclass(v, BaseException))
    if '%s.%s' % (module, name) in _PICKLE_ALLOWED:
        return True
    if any(p.startswith('__') for p in name.split('.')):
        return False
    if _app_module(module):
        return _defined_in(module, name)        # what the application defines (a worker function, its own classes)
    if '.' in name:
        return False
    m = sys.modules.get(module)
    v = getattr(m, name, None) if m is not None else None
    top = module.split('.')[0]
    std = top in getattr(sys, 'stdlib_module_names', ()) and not rule._inside_root(getattr(m, '__file__', '') or '')
    if not std:
        return False
    if isinstance(v, type) and issubclass(v, BaseException):
        return True
    # an Enum class the standard library module defines (http.HTTPStatus, signal.Signals: called with a value it
    # looks a member up), or a member of one named as a global (re.IGNORECASE: a global enum's own reduce)
    c = v if isinstance(v, type) else type(v)
    return _enum_class(c) and getattr(c, '__module__', None) == module


def _enum_class(c):
    enum = sys.modules.get('enum')
    return enum is not None and isinstance(c, type) and isinstance(c, enum.EnumMeta)


# An Enum member pickles as `getattr(EnumClass, 'NAME')` on Python 3.11 (red team 10p, case 30: a pool's job holding
# the application's own Enum): `builtins.getattr` is named, and getattr reaches anything (`getattr(os, 'system')`,
# a function's `__globals__`). So the Unpickler `pickle` hands out (pickle.Unpickler, load, loads: _PickleFinder)
# answers `builtins.getattr`, once this process took in, with _enum_getattr: the member of that name from an Enum
# class's own member table (a dict read: no code of the class runs), else refused as any other name is. The audit
# event for it passes only while that Unpickler asks (_tls.pickle_getattr); the C unpickler of `_pickle`, the pure
# Python one and an Unpickler that looks names up itself still name `builtins.getattr`, refused.
_GETATTR = getattr
_GETATTR_NAMES = (('builtins', 'getattr'), ('__builtin__', 'getattr'))


def _enum_member(cls, name):
    if type(name) is not str or not _enum_class(cls):
        return None
    try:
        members = type.__dict__['__dict__'].__get__(cls).get('_member_map_')
    except Exception:
        return None
    m = members.get(name) if type(members) is dict else None
    return m if type(m) is cls else None


def _enum_getattr(obj, name, *default):
    m = _enum_member(obj, name)
    if m is not None:
        return m
    compiles._after_taking_in('pickle builtins.getattr (of %s: only an Enum class\'s member passes; loaded after this '
                              'process took in a file that is not as approved)' % (getattr(type(obj), '__name__', '?'),))
    return _GETATTR(obj, name, *default)


def _checked_unpickler(base):
    class Unpickler(base):
        def find_class(self, module, name):
            if state._looked or state._scanned:
                places._settle_looks()
            if name == 'getattr' and module in ('builtins', '__builtin__') and \
                    (state._took['in'] is not None or state._took['started']):
                state._tls.pickle_getattr = True
                try:
                    base.find_class(self, module, name)      # its audit event, and the same errors
                finally:
                    state._tls.pickle_getattr = False
                return _enum_getattr
            return base.find_class(self, module, name)
    Unpickler.__module__, Unpickler.__qualname__ = base.__module__, base.__qualname__
    Unpickler.__doc__ = base.__doc__
    return Unpickler


def _load(unpickler, file, *, fix_imports=True, encoding='ASCII', errors='strict', buffers=None):
    return unpickler(file, fix_imports=fix_imports, encoding=encoding, errors=errors, buffers=buffers).load()


def _loads(unpickler, data, *, fix_imports=True, encoding='ASCII', errors='strict', buffers=None):
    if isinstance(data, str):
        raise TypeError("Can't load pickle from unicode string")
    import io
    return _load(unpickler, io.BytesIO(data), fix_imports=fix_imports, encoding=encoding, errors=errors,
                 buffers=buffers)


def _patch_pickle(module):
    base = getattr(module, 'Unpickler', None)
    if not isinstance(base, type) or getattr(base, '_mcp_gate', False):
        return
    import functools
    u = _checked_unpickler(base)
    u._mcp_gate = True
    module.Unpickler = u
    # partial objects do not bind as methods (multiprocessing's ForkingPickler.loads = pickle.loads), as the C ones
    module.load = functools.partial(_load, u)
    module.loads = functools.partial(_loads, u)


class _PickleFinder(object):
    """Puts _checked_unpickler's Unpickler, load and loads in `pickle` as it is imported."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != 'pickle':
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch_pickle(module)
        spec.loader.exec_module = exec_module
        return spec


def _on_find_class(args):
    if state._looked or state._scanned:
        places._settle_looks()
    if (state._took['in'] is not None or state._took['started']) and not _pickle_allowed(args[0], args[1]) and \
            not (getattr(state._tls, 'pickle_getattr', False) and tuple(args[:2]) in _GETATTR_NAMES):
        compiles._after_taking_in('pickle %s.%s (a pickle names what it calls; loaded after this process took in a file that '
                         'is not as approved)' % (args[0], args[1]))


def _on_fork(args):       # os.fork / os.forkpty: the child can read what it likes and hand it back (red team 6p, case 02)
    state._took['started'] = True


def _on_ctypes_call(args):
    """A foreign function looked up or called (libc's open through ctypes raises no `open` event: red team 6p, case
    03): what it read is not known, so the workspace is checked at the next compile, as after a program start."""
    state._took['started'] = True
