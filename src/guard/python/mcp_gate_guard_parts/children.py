# mcp_gate_guard_parts/children.py — Starts of programs (subprocess, os.exec*/spawn*/system, posix_spawn, fork_exec):
# the whole-workspace check before a program that reads its own files, the child's marks, and marshal/code objects
# built from bytes.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from . import state, rule, places, compiles, programs, native, loaders, gitfiles


def _check_start(items, cwd, env, words=None):
    """Everything a start is given besides its arguments' files: its environment, a start after taking in (words: the
    program then argv[1:] when items holds argv[0] too), the program found along its PATH and the native libraries
    the dynamic loader maps for it."""
    try:
        base = os.fsdecode(cwd) if cwd is not None else os.getcwd()
    except (TypeError, OSError):
        base = '.'
    e = programs._env_dict(env)
    programs._check_env(env, base, items)
    programs._check_after_taking_in(items if words is None else words, env, base)
    if not items or state.BROKEN is not None:
        return
    try:
        first = os.fsdecode(items[0] if items[0] is not None else (items[1] if len(items) > 1 else ''))
    except TypeError:
        return
    prog = native._which(first, e, base) if first else None
    if prog is None:
        return
    lp = native._library_path((e or {}).get('LD_LIBRARY_PATH', ''), base)
    p = os.path.realpath(prog)
    if '/' not in first and rule._where(p)[0] is not None:
        rule.check(prog, None, 'spawn')               # found along a PATH that names a writable place
    if rule._where(p)[0] is not None or any(places._writable_place(os.path.realpath(d)) for d in lp):
        native._check_native(prog, 'spawn', lp, base, program=True)


def _seq(x):
    if x is None:
        return []
    if isinstance(x, (str, bytes)) or hasattr(x, '__fspath__'):
        return [x]
    try:
        return list(x)
    except TypeError:
        return [x]


def _started(env):
    """After a program start passed the checks: remember it, and hand what this process took in to the child (its
    guard then refuses text turned into code as this one does)."""
    if state._looked or state._scanned:          # what it looked at is handed on as what it took in
        places._settle_looks()
    state._took['started'] = True
    target = os.environ if env is None else env
    t = state._took['in']
    try:
        # A child can be fed text through its pipes at any later time (a worker started while nothing was taken
        # in): it checks the workspace itself when it turns text into code, as a process that started one does.
        target[state.CHILD_VAR] = '1'
        if t is not None:
            import json
            target[state.TOOK_IN_VAR] = json.dumps([t[0], t[1], t[2], t[3]])
            gitfiles.neutral(target, programs._GIT)  # (git then opens no editor, runs no hook: red team 21)
    except (TypeError, AttributeError):
        # Unmarked, the child could later be fed a changed file's text and not know it: refused (pass a dict).
        if t is not None:
            rule._refuse(t[0], t[1], t[2], t[3], 'spawn with an environment the guard cannot mark, after this process '
                    'took in a file that is not as approved')
        rule._refuse(state.ROOT or '(workspace)', None, 'sink', '', 'spawn with an environment the guard cannot mark (a '
                'read-only mapping: pass a dict)')


def _on_popen(args):      # subprocess.Popen: (executable, args, cwd, env)
    programs._check_program([args[0]] + _seq(args[1]), args[2])
    argv = _seq(args[1])
    _check_start([args[0]] + argv if args[0] is not None else argv, args[2], args[3] if len(args) > 3 else None,
                 [args[0]] + argv[1:] if args[0] is not None else None)
    _started(args[3] if len(args) > 3 else None)
    state._tls.popen = True                           # its _posixsubprocess.fork_exec is this start


def _wrap_fork_exec():
    """_posixsubprocess.fork_exec raises no audit event: multiprocessing's spawn and forkserver start their
    interpreters with it. Such a start is checked like any program, and this process counts as having started one
    (a worker can read a changed file and hand its text back: red team 6p, case 02). The worker gets what this
    process took in, not the mark of a child that can be fed later: it unpickles its parent's messages by design."""
    try:
        import _posixsubprocess
    except ImportError:
        return
    real = _posixsubprocess.fork_exec

    def fork_exec(*a, **k):
        if getattr(state._tls, 'popen', False):
            state._tls.popen = False
            return real(*a, **k)
        if not getattr(state._tls, 'busy', False):
            argv = _seq(a[0]) if a else []
            exe = _seq(a[1])[:1] if len(a) > 1 else []
            programs._check_program(exe + argv[1:] if exe else argv, a[4] if len(a) > 4 else None)
            _check_start(exe + argv[1:] if exe else argv, a[4] if len(a) > 4 else None, a[5] if len(a) > 5 else None)
            if state._looked or state._scanned:
                places._settle_looks()
            state._took['started'] = True
            t = state._took['in']
            if t is not None:
                import json
                mark = json.dumps([t[0], t[1], t[2], t[3]])
                env = a[5] if len(a) > 5 else None
                if env is None:
                    os.environ[state.TOOK_IN_VAR] = mark
                else:
                    a = list(a)
                    a[5] = [e for e in env if not os.fsencode(e).startswith(state.TOOK_IN_VAR.encode() + b'=')] + \
                        [os.fsencode('%s=%s' % (state.TOOK_IN_VAR, mark))]
        return real(*a, **k)
    _posixsubprocess.fork_exec = fork_exec


def _on_exec(args):       # os.exec: (path, args, env); os.posix_spawn: (path, argv, env)
    programs._check_program([args[0]] + _seq(args[1]), None)
    _check_start([args[0]] + _seq(args[1])[1:], None, args[2] if len(args) > 2 else None)
    _started(args[2] if len(args) > 2 else None)


def _on_spawn(args):      # os.spawn: (mode, path, args, env)
    programs._check_program([args[1]] + _seq(args[2]), None)
    _check_start([args[1]] + _seq(args[2])[1:], None, args[3] if len(args) > 3 else None)
    _started(args[3] if len(args) > 3 else None)


def _on_system(args):     # os.system: (command,) — run by /bin/sh -c
    programs._check_program(['sh', '-c', args[0]], None)
    _check_start(['/bin/sh', '-c', args[0]], None, None)
    _started(None)


def _on_marshal_load(args):
    """marshal.load(file): bytes read from a file object turned into code (jinja2's bytecode cache: red team 10p,
    case 04). importlib never uses it; after taking in, refused like marshal.loads."""
    if state._looked or state._scanned:
        places._settle_looks()
    if state._took['in'] is not None or state._took['started']:
        compiles._after_taking_in('marshal.load (bytes turned into code after this process took in a file that is not as '
                         'approved)')


def _on_marshal(args):
    # importlib's own bytecode reader (_compile_bytecode: SourcelessFileLoader, whatever the file's name or however
    # the loader was made, and SourceLoader's caches) names the file the bytes came from: a file inside root or
    # scratch is checked as code whenever it loads; one outside them is the interpreter's own cache. Bytes handed to
    # it with no file, or not the file's, are bytes turned into code like any marshal.loads (red team 6p, case 01).
    try:
        f = sys._getframe(2)
    except ValueError:
        f = None
    if f is not None and f.f_code.co_name == '_compile_bytecode' and \
            f.f_code.co_filename.startswith('<frozen importlib'):
        bp = f.f_locals.get('bytecode_path')
        if isinstance(bp, (str, bytes)) or hasattr(bp, '__fspath__'):
            name = os.fsdecode(bp)
            p = os.path.realpath(name)
            src = rule._source(name, p)
            if rule._where(p, src != p)[0] is None and not rule._inside_root(name):
                rule._links_as_approved(name, p, 'python-import')
                return
            try:
                data = rule._read(src)
            except OSError:
                data = None
            if data is not None:
                rule.check(name, data, 'python-import')
                try:
                    same = bytes(data[16:]) == bytes(args[0])
                except Exception:
                    same = False
                if same:
                    return
    if state._looked or state._scanned:
        places._settle_looks()
    if state._took['in'] is not None or state._took['started']:
        if loaders._zipimport_member(f, '_unmarshal_code', args[0] if args else None):
            return                               # a .pyc of an archive as approved (zipimport's own reader)
        compiles._after_taking_in('marshal (bytes turned into code after this process took in a file that is not as approved)')


def _flag_only_replace(f, args):
    """types.coroutine (the standard library's, outside root and scratch) marking a generator function as a
    coroutine: `co.replace(co_flags=...)` of the function's own code, the same bytecode (asyncio imported after
    taking in: red team 10p, case 31)."""
    c = f.f_code
    if c.co_name != 'coroutine' or not c.co_filename.endswith(os.sep + 'types.py'):
        return False
    try:
        if rule._where(os.path.realpath(c.co_filename))[0] is not None:
            return False
        co = f.f_locals.get('co')
        return type(co) is type(c) and bytes(args[0]) == co.co_code
    except Exception:
        return False


def _on_code_new(args):
    if state._looked or state._scanned:
        places._settle_looks()
    if state._took['in'] is not None or state._took['started']:
        # frame 2 is the Python code that built it (code.replace and CodeType have no frame of their own)
        if _flag_only_replace(sys._getframe(2), args):
            return
        compiles._after_taking_in('code object built after this process took in a file that is not as approved')
