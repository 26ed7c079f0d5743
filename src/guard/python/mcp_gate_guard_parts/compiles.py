# mcp_gate_guard_parts/compiles.py — compile/exec of text: the code generators of the standard library (collections'
# namedtuple, dataclasses, site's .pth lines) exempted by their frames, a type expression or an annotation of an
# approved module that postpones its annotations, the took-in rule
# (_after_taking_in) and the audit handlers for compile and dlopen.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import re as _re
import sys
from . import state, rule, places, engines, native, loaders


# Code generators of the standard library that build source from identifiers they validate (namedtuple,
# dataclass), ast.parse (a tree is code only when compiled again) and site's `.pth` lines (the file is checked when
# it is opened): their compiles are not text the process took in. Recognised by name, outside root and scratch.
_GENERATORS = tuple(os.sep + f for f in ('collections' + os.sep + '__init__.py', 'ast.py'))


def _site_codes():
    """The ids of the code objects of the interpreter's own site module (its functions and what they nest), taken
    when the guard starts, before any code of the server: a frame merely named `<frozen site>` (code the server
    compiled under that name) is not site's (red team 13, case 23)."""
    out, keep = set(), []
    try:
        import site as _site
    except Exception:
        return out, keep
    todo = [v.__code__ for v in vars(_site).values() if hasattr(v, '__code__') and getattr(v, '__module__', None) == 'site']
    while todo:
        c = todo.pop()
        if id(c) in out:
            continue
        out.add(id(c))
        keep.append(c)                               # kept alive: an id is only unique while its object lives
        todo.extend(k for k in c.co_consts if type(k) is type(c))
    return out, keep


_SITE_CODES, _SITE_KEEP = _site_codes()


def _real_site(c):
    return c.co_filename == '<frozen site>' and id(c) in _SITE_CODES


def _generated(f):
    """f: the frame that called compile. namedtuple (it checks its names itself) and ast.parse; a dataclass or an attrs
    class only while what names its fields is identifiers (./_dataclass_compile, ./_attrs_compile)."""
    name = f.f_code.co_filename
    if name == '<frozen site>':
        return _real_site(f.f_code)
    try:
        p = os.path.realpath(name)
        inside = rule._where(p)[0] is not None
    except (TypeError, ValueError):
        return False
    # The standard library's generators only from outside root and scratch (a workspace file named ast.py or
    # dataclasses.py is the application's code); attrs also from a package folder of a workspace venv, as approved.
    if name.endswith(os.sep + 'typing_inspection' + os.sep + 'typing_objects.py') and places._library_file(p):
        return _identity_check_compile(f)
    if not inside:
        if name.endswith(_GENERATORS):
            return True
        if name.endswith(os.sep + 'dataclasses.py'):
            return engines._dataclass_compile(f)
    if name.endswith(os.sep + 'attr' + os.sep + '_make.py') and places._library_file(p):
        return engines._attrs_compile(f)
    return False


def _identity_check_compile(f):
    """typing_inspection (pydantic's) makes its is_* helpers as it loads: `def <function_name>(obj): return obj is
    typing.<member> ...` (or `isinstance(obj, _obj)`) from its own literals; a compile passes while both are identifiers and the module's import is
    running (red team 10p, cases 31-32: importing pydantic after reading an edited file)."""
    if f.f_code.co_name not in ('_compile_identity_check_function', '_compile_isinstance_check_function') or \
            getattr(state._tls, 'engine_depth', 0) <= 0:
        return False
    return engines._identifiers([f.f_locals.get('member'), f.f_locals.get('function_name')])


def _site_frame(f):
    """True when f is site's addpackage (running a .pth line), in the interpreter's own site."""
    c = f.f_code
    if c.co_name != 'addpackage':
        return False
    if c.co_filename == '<frozen site>':
        return _real_site(c)
    return c.co_filename.endswith(os.sep + 'site.py') and rule._where(os.path.realpath(c.co_filename))[0] is None


def _in_site():
    """True for the compile of a .pth line itself (site's addpackage exec'ing it): a .pth file is checked when it is
    opened. Also the line's own code compiling (`import os; exec("...")`), for a .pth outside the workspace and the
    scratch folders only. Never deeper: a module the line imports runs its whole top level below it, and its
    compiles are its own (red team 8p, case 10)."""
    try:
        f = sys._getframe(3)                     # the Python code that called compile/exec (the builtins have none)
    except ValueError:
        return False
    if _site_frame(f):
        return True
    up = f.f_back
    if f.f_code.co_filename != '<string>' or f.f_code.co_name != '<module>' or up is None or not _site_frame(up):
        return False
    try:
        pth = os.fsdecode(up.f_locals.get('fullname'))
        return rule._where(os.path.realpath(pth))[0] is None
    except (TypeError, ValueError):
        return False


def _after_taking_in(how):
    """Refuses when this process took in content that is not as approved (read it, was started by a process that
    had, or started a program while the workspace differs): `how` is the text, bytes or pickle being turned into code."""
    if state._looked or state._scanned:
        places._settle_looks()
    t = state._took['in']
    if t is None and state._took['started']:
        v = places._workspace_as_approved()
        if v is not None:
            t = state._took['in'] = v
    if t is not None:
        rule._refuse(t[0], t[1], t[2], t[3], how)


# gettext's c2py: a .mo file's plural rule (a C expression) as a Python function, through exec of this template
# (Python 3.7+). Whoever compiles it, text of this shape runs no code of its own: the expression may hold only `n`,
# integers, comparisons, arithmetic (no `**`), parentheses and not/and/or/if/else (red team 13, case 11: an honest
# server's translations after the person edited its data file).
_PLURAL_RULE = _re.compile(
    rb'if True:\n {12}def func\(n\):\n {16}if not isinstance\(n, int\):\n {20}n = _as_int\(n\)\n {16}'
    rb'return int\((?:[ \t\d()%+/<>=!-]|\*(?!\*)|\b(?:not|and|or|if|else|n)\b)*\)\n {12}\Z')


def _plural_rule(src):
    return len(src) < 2000 and _PLURAL_RULE.match(src) is not None


def _type_expression(src):
    """True when src is only a type expression (`Optional['Node']`, `list[int] | None`): names, attributes,
    subscripts, constants, tuples, lists, dicts, sets and `|` — no call, lambda or comprehension, so evaluating it
    runs no code of its own (typing's forward references, annotations evaluated by pydantic or inspect, the
    `args`/`kwargs` logging.config.fileConfig evaluates: `(sys.stderr,)`, `{}`)."""
    import ast
    if state._TYPE_NODES is None:
        state._TYPE_NODES = (ast.Expression, ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Tuple, ast.List,
                       ast.Dict, ast.Set, ast.BinOp, ast.BitOr, ast.Load, ast.Index if hasattr(ast, 'Index') else ast.Load)
    if len(src) > 4096:
        return False
    state._tls.busy = True
    try:
        tree = ast.parse(src, mode='eval')
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    finally:
        state._tls.busy = False
    for node in ast.walk(tree):
        if not isinstance(node, state._TYPE_NODES):
            return False
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.BitOr):
            return False
        if isinstance(node, ast.Attribute) and node.attr.startswith('_'):
            return False
        if isinstance(node, ast.Name) and node.id.startswith('__'):
            return False
    return True


_ANNOTATIONS = {}   # real path -> ((path, inode, size, mtime), frozenset of the annotation texts its approved source holds)


def _annotations_in(tree, text):
    """Each annotation of a parsed source as `from __future__ import annotations` keeps it (unparsed) and as written."""
    import ast
    unparse = getattr(ast, 'unparse', None)      # Python 3.9+
    for node in ast.walk(tree):
        a = node.annotation if isinstance(node, (ast.AnnAssign, ast.arg)) else \
            node.returns if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if a is None:
            continue
        for t in ((unparse(a) if unparse else None), ast.get_source_segment(text, a)):
            if t:
                yield t
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            yield a.value


def _annotation_texts(p):
    """The annotation texts of the file p when it is as approved (or no file of the workspace or scratch)."""
    return engines._approved_source_facts(p, _ANNOTATIONS, _annotations_in)


def _approved_annotation(src):
    """True when src is exactly an annotation written in the approved source of a module that postpones its
    annotations (`from __future__ import annotations`: each is kept as text, and pydantic or typing.get_type_hints
    compiles it later, `Annotated[X | None, Field(alias='_meta')]` with its call): approved code, whatever read what
    before (red team 10p, case 31: the MCP SDK's types imported in a pool's worker after an edited config was read)."""
    try:
        text = bytes(src).decode('utf-8')
    except UnicodeError:
        return False
    feature = getattr(sys.modules.get('__future__'), 'annotations', None)
    if len(text) > 4096 or feature is None:
        return False
    for m in list(sys.modules.values()):
        d = getattr(m, '__dict__', None)
        f = d.get('__file__') if isinstance(d, dict) and d.get('annotations') is feature else None
        if isinstance(f, str) and f.endswith('.py'):
            try:
                if text in _annotation_texts(os.path.realpath(f)):
                    return True
            except (TypeError, ValueError):
                continue
    return False


def _foreign_codec(src, f, after):
    """Bytes whose coding declaration names a codec registered at run time (loaders._foreign_codec): the text
    Python compiles is what that codec makes of them, so an approved file's exact bytes, or a member of an archive
    of the workspace zipimport compiles, is refused always; other bytes after taking in."""
    n = loaders._foreign_codec(src)
    if n is None:
        return
    h = rule._sha(bytes(src))
    how = 'exec (coding: %s)' % n[:100]
    if h in state.APPROVED:
        rel = next((r for r, v in state.FILES.items() if v == h), None)
        rule._refuse(os.path.join(state.ROOT, rel) if rel else '(the text of an approved file)', rel, 'codec', h, how)
    if loaders._zipimport_archive(f, '_compile_source') is not None:
        p = loaders._zipimport_archive(f.f_back, '_get_module_code')
        kind, rel = rule._where(p) if p is not None else ('scratch', None)
        if kind is not None:
            rule._refuse(p or '(an archive zipimport reads)', rel, 'codec', h, how)
    if after:
        _after_taking_in('exec (text turned into code after this process took in a file that is not as approved; '
                         'its coding declaration names a codec registered at run time)')


def _on_compile(args):
    if state._looked or state._scanned:          # names looked at by metadata calls: compared now (lazily)
        places._settle_looks()
    after = state._took['in'] is not None or state._took['started']
    src = args[0]
    if isinstance(src, (bytes, bytearray, memoryview)):
        src = bytes(src)
        _foreign_codec(src, sys._getframe(2), after)
    if not state._tainted and not after:            # the usual case: nothing taken in, nothing to compare (no hashing)
        return
    if isinstance(src, str):
        try:
            src = src.encode('utf-8')
        except UnicodeError:
            src = None
    h = rule._sha(src) if isinstance(src, (bytes, bytearray)) else None
    if h is not None and state._tainted:              # the exact text of a file that is not as approved: named as such
        t = state._tainted.get(h)
        if t is not None:
            rule._refuse(t[0], t[1], t[2], t[3], 'exec')
    if h is not None and h in state.APPROVED:         # the exact text of an approved file: approved code
        return
    if after:
        # frame 2 is the Python code that called compile/eval/exec (the builtins have no frame of their own)
        # (a member of an archive as approved, zipimport compiling it: its text is approved code)
        if not _generated(sys._getframe(2)) and not _in_site() and \
                not loaders._zipimport_member(sys._getframe(2), '_compile_source', src) and \
                not (isinstance(src, (bytes, bytearray)) and
                     (_type_expression(src) or _approved_annotation(src) or _plural_rule(src))) and \
                not engines._template_compile():
            _after_taking_in('exec (text turned into code after this process took in a file that is not as approved)')


def _on_dlopen(args):
    name = args[0] if args else None
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if isinstance(name, str) and '/' in name:    # a bare name is looked up in the system's library path
        rule.check(name, None, 'dlopen')
    if isinstance(name, str) and name:
        native._check_native_if_writable(name, 'dlopen')
