# mcp_gate_guard_parts/pickles.py — Pickle: the allow-list of globals a pickle may name once this process took in
# content that is not as approved (plain data, the standard library's classes and rebuilders, the application's own
# classes).
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from . import state, rule, compiles


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
    return isinstance(v, type) and issubclass(v, BaseException) and std


def _on_find_class(args):
    if (state._took['in'] is not None or state._took['started']) and not _pickle_allowed(args[0], args[1]):
        compiles._after_taking_in('pickle %s.%s (a pickle names what it calls; loaded after this process took in a file that '
                         'is not as approved)' % (args[0], args[1]))


def _on_fork(args):       # os.fork / os.forkpty: the child can read what it likes and hand it back (red team 6p, case 02)
    state._took['started'] = True


def _on_ctypes_call(args):
    """A foreign function looked up or called (libc's open through ctypes raises no `open` event: red team 6p, case
    03): what it read is not known, so the workspace is checked at the next compile, as after a program start."""
    state._took['started'] = True
