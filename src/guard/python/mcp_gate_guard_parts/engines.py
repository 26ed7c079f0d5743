# mcp_gate_guard_parts/engines.py — Template and class engines (jinja2, attrs, dataclasses): a compile they make of
# text built from their own unchanged code and an approved template is not text the process took in.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from importlib import machinery as _M
import re as _re
from . import state, rule, places, pickles


# A template engine's compile (red team 8p, cases 01-03, 08: jinja2 after a program start, its own log or database,
# or an edited config file). jinja2 turns a template's text into Python: that compile is not text the process took
# in when the template's text is approved — the exact text of an approved file, or a string constant of the code
# that handed it over — and what turned it into Python is jinja2's own pipeline as it loaded: every module of jinja2
# and markupsafe the same as when it finished loading (its names, its classes' attributes, its plain data: a table
# or a function replaced by code that read a changed file is not jinja2's), the environment, its code generator and
# extensions jinja2's own classes, and its lexer the one jinja2 builds from the environment's settings.
_ENGINE = ('jinja2', 'markupsafe', 'attr', 'attrs', 'dataclasses', 'typing_inspection', 'pydantic')
_TEMPLATES = ('jinja2', 'markupsafe')
_PLAIN = (str, bytes, int, float, bool, type(None), complex)
_engine_as_loaded = {}


def _engine_module(name):
    return any(name == m or name.startswith(m + '.') for m in _ENGINE)


def _plain_copy(v, depth=0):
    """A copy of plain data (containers of str, int, ...) to compare later; None when it is not plain."""
    if isinstance(v, _PLAIN):
        return ('=', v)
    if depth > 4:
        return None
    if isinstance(v, (list, tuple, set, frozenset)):
        items = [_plain_copy(x, depth + 1) for x in v]
        return None if any(i is None for i in items) else (type(v), tuple(items) if not isinstance(v, (set, frozenset))
                                                           else frozenset(items))
    if isinstance(v, dict):
        items = [(_plain_copy(k, depth + 1), _plain_copy(x, depth + 1)) for k, x in v.items()]
        if any(a is None or b is None for a, b in items):
            return None
        return (dict, frozenset(items))
    return None


def _engine_state(module):
    names = {}
    for k, v in list(vars(module).items()):
        names[k] = (v, _plain_copy(v))
    classes = {}
    for k, (v, _) in names.items():
        if isinstance(v, type) and getattr(v, '__module__', None) == module.__name__:
            classes[k] = (v, dict(vars(v)), {a: _plain_copy(x) for a, x in vars(v).items()})
    return names, classes


def _engine_exec(run, self, module):
    """Runs a module's code; when an engine module's outermost import ends (`import jinja2` loads its pipeline inside
    it, and jinja2 fills its own registries as it goes), records every engine module not recorded yet."""
    name = getattr(module, '__name__', '')
    if not (isinstance(name, str) and _engine_module(name)):
        return run(self, module)
    depth = getattr(state._tls, 'engine_depth', 0)
    state._tls.engine_depth = depth + 1
    try:
        run(self, module)
    finally:
        state._tls.engine_depth = depth
    if depth == 0:
        for n, m in list(sys.modules.items()):
            if isinstance(n, str) and _engine_module(n) and m is not None and n not in _engine_as_loaded:
                try:
                    _engine_as_loaded[n] = _engine_state(m)
                except Exception:
                    _engine_as_loaded[n] = None


_ORIGINAL_EXEC_MODULE = _M.SourceFileLoader.exec_module
_ORIGINAL_EXEC_EXTENSION = _M.ExtensionFileLoader.exec_module


def _exec_module(self, module):
    _engine_exec(_ORIGINAL_EXEC_MODULE, self, module)


def _exec_extension(self, module):
    _engine_exec(_ORIGINAL_EXEC_EXTENSION, self, module)


def _engine_unchanged(roots=_TEMPLATES):
    """True when every loaded module under `roots` is as it was when its import ended."""
    for name, module in list(sys.modules.items()):
        if not isinstance(name, str) or module is None or not any(name == r or name.startswith(r + '.') for r in roots):
            continue
        was = _engine_as_loaded.get(name)
        if was is None:
            if name not in _engine_as_loaded and getattr(state._tls, 'engine_depth', 0) > 0:
                continue                        # its import is running now (attrs making its own classes)
            return False                        # loaded some other way, or not recorded: not known to be the engine's
        names, classes = was
        now = vars(module)
        for k, (v, plain) in names.items():
            if k in ('__builtins__', '__loader__', '__spec__', '__cached__'):
                continue
            if now.get(k, _engine_state) is not v:
                if not (isinstance(v, type(sys)) or k.startswith('__') or _counter(v, now.get(k))):
                    return False
            elif plain is not None and _plain_copy(v) != plain:
                return False
        for k, (cls, attrs, plains) in classes.items():
            cur = vars(cls)
            if len(cur) != len(attrs):
                return False
            for a, x in attrs.items():
                y = cur.get(a, _engine_state)
                if y is not x and not _counter(x, y):
                    return False
                p = plains.get(a)
                if p is not None and _plain_copy(x) != p:
                    return False
    return True


def _counter(was, now):
    """A number that changed into another number of its type (attrs counts its attributes in a class field): a number
    adds only digits to generated code."""
    return type(was) is type(now) and type(was) in (int, float)


def _engine_class(cls):
    """A class jinja2 defines (and recorded as it loaded)."""
    try:
        mod = cls.__module__
        was = _engine_as_loaded.get(mod)
        return was is not None and any(c is cls for c, _a, _p in was[1].values())
    except Exception:
        return False


def _engine_file(filename, jdirs):
    return isinstance(filename, str) and filename.startswith(jdirs)


def _loaded_template(filename, text):
    """True when `text` is exactly the content of `filename` as approved (a workspace file) or as it is outside the
    workspace and scratch (a package's own template)."""
    if type(filename) is not str:
        return False
    try:
        p = os.path.realpath(filename)
        kind, rel = rule._where(p)
        h = rule._sha(str.encode(text, 'utf-8'))
        if kind == 'root':
            return state.FILES.get(rel) == h
        if kind is None:
            return rule._sha(rule._read(p)) == h
    except (OSError, TypeError, ValueError, UnicodeError):
        pass
    return False


# A template read by the application itself (`Template(open('x.j2').read())`): the exact text of an approved file
# that is a template by its name — a reviewer reads those as templates, not as data.
_TEMPLATE_SUFFIXES = ('.j2', '.jinja', '.jinja2', '.tmpl', '.tpl', '.template')
_template_hashes = {}


def _template_text(text):
    if not _template_hashes:
        _template_hashes.update({h: rel for rel, h in state.FILES.items() if rel.lower().endswith(_TEMPLATE_SUFFIXES)})
        _template_hashes.setdefault('', '')
    try:
        return bool(_template_hashes.get(rule._sha(str.encode(text, 'utf-8'))))
    except (TypeError, UnicodeError):
        return False


def _shadows(obj):
    """True when an instance attribute of obj hides a method or other callable its class defines (attributes the class
    does not define, such as the i18n extension's install_gettext_translations, are not what its methods call)."""
    try:
        d = vars(obj)
    except TypeError:
        return False
    cls = type(obj)
    for k in list(d):
        if type(k) is not str:
            return True
        if k in _PLAIN_CALLABLE_FIELDS:
            continue
        c = getattr(cls, k, _shadows)
        if c is not _shadows and (callable(c) or (callable(d[k]) and not isinstance(d[k], type))):
            return True                         # stands in for what the class defines (a method, a hook)
    return False


# Instance fields of jinja2's own objects that hold callables by design, read as settings (the environment's
# autoescape selector, finalize, its undefined and context classes, the lexer's rules are data): their values are
# called at render time or return a bool, and never add text to the generated code.
_PLAIN_CALLABLE_FIELDS = frozenset(('autoescape', 'finalize', 'undefined', 'context_class', 'template_class',
                                    'code_generator_class', 'concat', 'loader', 'bytecode_cache', 'cache'))

_constants = {}


def _approved_source_facts(filename, cache, collect):
    """collect(tree, text) over an approved module's parsed source, once per version of the file (a frozenset; empty
    when the file is not as approved, is too large or does not parse). `cache` is the caller's own dict."""
    try:
        p = os.path.realpath(filename)
        st = os.stat(p)
    except (OSError, TypeError, ValueError):
        return frozenset()
    key = (p, st.st_ino, st.st_size, st.st_mtime_ns)
    hit = cache.get(p)
    if hit is not None and hit[0] == key:
        return hit[1]
    found = frozenset()
    state._tls.busy = True
    try:
        data = rule._read(p)
        if rule._verdict(p, data) is None and len(data) <= state.TAINT_MAX:
            import ast
            found = frozenset(collect(ast.parse(data, p), data.decode('utf-8', 'replace')))
    except Exception:
        found = frozenset()
    finally:
        state._tls.busy = False
    cache[p] = (key, found)
    return found


def _source_constants(filename):
    """The string constants of an approved module's source (empty when its file is not as approved)."""
    import ast
    return _approved_source_facts(filename, _constants, lambda tree, _text: (
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is str))


def _identifiers(names):
    import keyword
    try:
        return all(type(n) is str and n.isidentifier() and not keyword.iskeyword(n) for n in names)
    except Exception:
        return False


def _qualname_ok(cls):
    q = getattr(cls, '__qualname__', None)
    return type(q) is str and all(p == '<locals>' or _identifiers([p]) for p in q.split('.'))


def _frames_in(start, files, limit=12):
    """The frames from `start` upward while their code is in one of `files` (a tuple of folder prefixes or names)."""
    f, n = start, 0
    while f is not None and n < limit and f.f_code.co_filename.endswith(files):
        yield f
        f, n = f.f_back, n + 1


def _dataclass_compile(f):
    """A dataclass being made by @dataclass (dataclasses._process_class on the stack, in the standard library's own
    dataclasses as it loaded), with field and class names that are identifiers: the code it generates is its own
    template and those names. Not _create_fn called by anything else (a pickle: red team 9p, 01)."""
    for g in _frames_in(f, (os.sep + 'dataclasses.py',)):
        if g.f_code.co_name == '_process_class':
            cls = g.f_locals.get('cls')
            fields = g.f_locals.get('fields')
            anns = getattr(cls, '__dict__', {}).get('__annotations__', {}) if cls is not None else None
            return (isinstance(fields, dict) and isinstance(anns, dict) and _identifiers(list(fields))
                    and _identifiers(list(anns)) and _qualname_ok(cls) and _engine_unchanged(('dataclasses',)))
    return False


def _attrs_compile(f):
    """A class being built by attrs' _ClassBuilder (attr/_make.py as it loaded) whose attribute names, class dict keys,
    class name and repr namespace are identifiers: attrs writes its own template around those names."""
    d = os.sep + 'attr' + os.sep
    for g in _frames_in(f, (d + '_make.py',), 3):
        if g.f_code.co_name == '_make_attr_tuple_class':   # a tuple class named after the class, fields by name
            return _identifiers([g.f_locals.get('cls_name')]) and _identifiers(list(g.f_locals.get('attr_names') or ())) \
                and _engine_unchanged(('attr', 'attrs'))
    builder = None
    for g in _frames_in(f, tuple(d + n for n in ('_make.py', '_next_gen.py', '__init__.py', '_funcs.py'))):
        ns = g.f_locals.get('ns')
        if ns is not None and not (type(ns) is str and all(_identifiers([p]) for p in ns.split('.'))):
            return False
        me = g.f_locals.get('self')
        if builder is None and type(me).__name__ == '_ClassBuilder' and type(me).__module__ == 'attr._make':
            builder = me
    try:
        if builder is not None:
            # the names and their `alias`es (the __init__ parameter names) as attrs writes them
            names = list(builder._attr_names) + [a.alias for a in builder._attrs if getattr(a, 'alias', None)]
            keys = list(builder._cls_dict)
            cls = builder._cls
        else:
            # attrs' own helpers (_add_repr, _add_eq, ... for its own classes as attr/_make.py loads): the class and
            # the attributes they are given
            g = next((g for g in _frames_in(f, (os.sep + 'attr' + os.sep + '_make.py',))
                      if g.f_code.co_name.startswith('_add_') and 'cls' in g.f_locals), None)
            if g is None:
                return False
            cls = g.f_locals['cls']
            attrs = g.f_locals.get('attrs') or getattr(cls, '__attrs_attrs__', None)
            names = [a.name for a in attrs] + [a.alias for a in attrs if getattr(a, 'alias', None)]
            keys = list(vars(cls))
    except Exception:
        return False
    return _identifiers(names) and all(type(k) is str and k.isidentifier() for k in keys) and _qualname_ok(cls) \
        and _engine_unchanged(('attr', 'attrs'))


def _template_compile():
    """True for jinja2's compile of a template whose text is approved, through jinja2's own pipeline as loaded."""
    j = sys.modules.get('jinja2')
    if j is None or not getattr(j, '__file__', None):
        return False
    try:
        jdirs = tuple(os.path.dirname(getattr(sys.modules[m], '__file__', '') or '/nonexistent') + os.sep
                      for m in _TEMPLATES if m in sys.modules)
        # jinja2 itself a library (a workspace folder named jinja2 is the application's code)
        if not all(places._library_file(os.path.realpath(getattr(sys.modules[m], '__file__', '') or '/nonexistent'))
                   for m in _TEMPLATES if m in sys.modules):
            return False
        f = sys._getframe(3)                    # the Python code that called compile (the builtins have no frame)
        n = 0
        top = None
        while f is not None and n < 16:
            c = f.f_code
            if not _engine_file(c.co_filename, jdirs):
                return False                    # something other than jinja2 between its compile and Python's
            if c.co_name == 'compile' and f.f_globals.get('__name__') == 'jinja2.environment':
                top = f
                break
            f, n = f.f_back, n + 1
        if top is None:
            return False
        env = top.f_locals.get('self')
        text = top.f_locals.get('source_hint')
        if type(text) is not str or env is None:  # exactly str: a subclass can say it equals anything (red team 9p, 02)
            return False
        # whose text: the exact text of the approved file jinja2's loader read it from (not any approved file's text:
        # red team 11p, case 02), or a string constant of the module outside jinja2 that handed it over (read from
        # its approved source: a module-level template is a global, not the function's constant)
        approved = _loaded_template(top.f_locals.get('filename'), text) or _template_text(text)
        if not approved:
            g, m = top.f_back, 0
            while g is not None and m < 16 and _engine_file(g.f_code.co_filename, jdirs):
                g, m = g.f_back, m + 1
            approved = g is not None and (any(type(k) is str and str.__eq__(k, text) is True for k in g.f_code.co_consts)
                                          or text in _source_constants(g.f_code.co_filename))
        if not approved:
            return False
        if not _engine_unchanged():
            return False
        # an instance attribute that stands in for a method (env.preprocess = lambda …: red team 9p, 03)
        if _shadows(env) or _shadows(env.lexer) or any(_shadows(x) for x in dict(env.extensions or {}).values()):
            return False
        if not all(_engine_class(k) for k in type(env).__mro__ if k is not object):
            return False
        if not all(_engine_class(k) for k in env.code_generator_class.__mro__ if k is not object):
            return False
        for ext in dict(getattr(env, 'extensions', {}) or {}).values():
            if not all(_engine_class(k) or _app_class(k) for k in type(ext).__mro__ if k is not object):
                return False
        lexer = env.lexer
        if not _engine_class(type(lexer)):
            return False
        return _same_shape(vars(type(lexer)(env)), vars(lexer))
    except Exception:
        return False


def _app_class(cls):
    """A class the application defines (red team 9p 07, 10p 20: its own jinja2 Extension): found under its qualified
    name in its module, that module loaded from an approved file of the workspace that is unchanged and not under
    site-packages (as for a pickle), each function of its body compiled from that file, and no preprocess or
    filter_stream of its own — not a class made elsewhere at run time, from a changed or a package's module, or one
    whose methods were replaced by other callables. What its parse makes of the approved text is its code's behaviour."""
    try:
        mod, q = cls.__module__, cls.__qualname__
        if type(mod) is not str or type(q) is not str or '<' in q or not pickles._app_module(mod):
            return False
        obj = sys.modules.get(mod)
        f = os.path.realpath(obj.__file__)
        for part in q.split('.'):
            obj = (type.__dict__['__dict__'].__get__(obj) if isinstance(obj, type) else vars(obj)).get(part)
        if obj is not cls:
            return False
        d = type.__dict__['__dict__'].__get__(cls)
        if 'preprocess' in d or 'filter_stream' in d:
            return False                        # rewrites the approved text or its tokens (red team 9p, 03)
        for v in d.values():
            v = getattr(v, '__func__', getattr(v, 'fget', v)) if isinstance(v, (staticmethod, classmethod, property)) else v
            if isinstance(v, type) or (callable(v) and not (type(v) is type(_app_class) and
                                                             os.path.realpath(v.__code__.co_filename) == f)):
                return False
        return True
    except Exception:
        return False


def _same_shape(a, b, depth=0):
    """Structural equality of a lexer's state: containers by their items, patterns by text and flags, plain objects
    (jinja2's Failure) by class and attributes."""
    if depth > 8 or type(a) is not type(b):
        return False
    if isinstance(a, _PLAIN):
        return a == b
    if isinstance(a, _re.Pattern):
        return a.pattern == b.pattern and a.flags == b.flags
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_shape(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_shape(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (set, frozenset)):
        return a == b
    if isinstance(a, type) or not _engine_class(type(a)):
        return a is b
    d1, d2 = getattr(a, '__dict__', None), getattr(b, '__dict__', None)
    return d1 is not None and d2 is not None and _same_shape(d1, d2, depth + 1)
