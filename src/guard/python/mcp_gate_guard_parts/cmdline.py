# mcp_gate_guard_parts/cmdline.py — Python's command line: parsing its grammar, applying its options, and running the
# target like Python would (script, -m module, -c code) after site.main() under the guard.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from importlib import machinery as _M
from . import state, rule, loaders, compiles, installing


# ---------------------------------------------------------------------------------------------------------
# Python's command line
# ---------------------------------------------------------------------------------------------------------

class _Usage(Exception):
    pass


_SIMPLE = 'bBdEhiIOPqsSuvVx?'


def parse_args(args):
    """Python's command-line grammar -> dict (flags, W, X, command | module | script, rest)."""
    o = {'flags': {}, 'W': [], 'X': [], 'command': None, 'module': None, 'script': None, 'rest': [],
         'help': None, 'check_hash_based_pycs': None}
    flags = o['flags']
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == '--':
            i += 1
            break
        if a == '-' or not a.startswith('-'):
            break
        if a.startswith('--'):
            if a in ('--help', '--help-env', '--help-xoptions', '--help-all', '--version'):
                o['help'] = o['help'] or a
                i += 1
                continue
            if a == '--check-hash-based-pycs' or a.startswith('--check-hash-based-pycs='):
                if '=' in a:
                    val = a.split('=', 1)[1]
                else:
                    if i + 1 >= n:
                        raise _Usage('Argument expected for the --check-hash-based-pycs option')
                    i += 1
                    val = args[i]
                if val not in ('always', 'default', 'never'):
                    raise _Usage('--check-hash-based-pycs must be one of \'default\', \'always\', or \'never\'')
                o['check_hash_based_pycs'] = val
                i += 1
                continue
            raise _Usage('unknown option %s' % a)
        j = 1
        while j < len(a):
            c = a[j]
            if c in 'cmWX':
                val = a[j + 1:]
                if not val:
                    if i + 1 >= n:
                        raise _Usage('Argument expected for the -%s option' % c)
                    i += 1
                    val = args[i]
                if c == 'c':
                    o['command'], o['rest'] = val, args[i + 1:]
                    return o
                if c == 'm':
                    o['module'], o['rest'] = val, args[i + 1:]
                    return o
                o[c].append(val)
                break
            if c not in _SIMPLE:
                raise _Usage('Unknown option: -%s' % c)
            if c in 'hV?':
                o['help'] = o['help'] or ('-h' if c in 'h?' else '-V')
                if c == 'V':
                    flags['V'] = flags.get('V', 0) + 1
            else:
                flags[c] = flags.get(c, 0) + 1
            j += 1
        i += 1
    if i < n:
        o['script'], o['rest'] = args[i], args[i + 1:]
    return o


def _flags_object(values):
    """A stand-in for sys.flags carrying the ORIGINAL command line's flags (children inherit them through
    subprocess._args_from_interpreter_flags, e.g. multiprocessing), not the guard's own -S."""
    fields = tuple(values)
    ns = {'__slots__': (), '__match_args__': fields, 'n_fields': len(fields),
          'n_sequence_fields': len(fields), 'n_unnamed_fields': 0,
          '__repr__': lambda s: 'sys.flags(%s)' % ', '.join('%s=%r' % fv for fv in zip(fields, s)),
          '__reduce__': lambda s: (tuple, (tuple(s),))}
    for k, name in enumerate(fields):
        ns[name] = property(lambda s, k=k: tuple.__getitem__(s, k))
    return type('flags', (tuple,), ns)(values.values())


def _real_flag_names():
    names = getattr(type(sys.flags), '__match_args__', None)
    if names:
        return names
    return tuple(n for n in ('debug', 'inspect', 'interactive', 'optimize', 'dont_write_bytecode', 'no_user_site',
                             'no_site', 'ignore_environment', 'verbose', 'bytes_warning', 'quiet',
                             'hash_randomization', 'isolated', 'dev_mode', 'utf8_mode', 'warn_default_encoding',
                             'safe_path', 'int_max_str_digits') if hasattr(sys.flags, n))


def _apply_options(o):
    """Honours the original flags as far as a running interpreter can. Returns the emulated sys.flags values."""
    f = o['flags']
    isolated = bool(f.get('I'))
    use_env = not (isolated or f.get('E'))       # the real interpreter read the environment (no -E given to it)
    real = sys.flags
    xopts = {}
    for x in o['X']:
        k, eq, v = x.partition('=')
        xopts[k] = v if eq else True

    def env(name, cli):
        r = getattr(real, name, 0)
        return max(int(cli), int(r)) if use_env else int(cli)

    values = {}
    for name in _real_flag_names():
        values[name] = getattr(real, name)
    values.update(
        debug=env('debug', f.get('d', 0)),
        inspect=env('inspect', f.get('i', 0)),
        interactive=int(f.get('i', 0)),
        optimize=env('optimize', f.get('O', 0)),
        dont_write_bytecode=env('dont_write_bytecode', bool(f.get('B'))),
        no_user_site=env('no_user_site', bool(f.get('s')) or isolated),
        no_site=int(bool(f.get('S'))),
        ignore_environment=int(bool(f.get('E')) or isolated),
        verbose=env('verbose', f.get('v', 0)),
        bytes_warning=int(f.get('b', 0)),
        quiet=int(bool(f.get('q'))),
        isolated=int(isolated),
    )
    if 'dev_mode' in values:
        values['dev_mode'] = bool('dev' in xopts) or (use_env and bool(real.dev_mode))
    if 'safe_path' in values:
        values['safe_path'] = bool(f.get('P')) or isolated or (use_env and bool(real.safe_path))
    if 'warn_default_encoding' in values:
        values['warn_default_encoding'] = int('warn_default_encoding' in xopts) or (
            int(real.warn_default_encoding) if use_env else 0)
    if 'int_max_str_digits' in values and 'int_max_str_digits' in xopts:
        try:
            values['int_max_str_digits'] = int(xopts['int_max_str_digits'])
            sys.set_int_max_str_digits(values['int_max_str_digits'])
        except (ValueError, AttributeError):
            pass
    for name in values:
        if isinstance(getattr(real, name), bool):
            values[name] = bool(values[name])
    state.OPTIMIZE = values['optimize']
    sys.dont_write_bytecode = bool(values['dont_write_bytecode'])
    if not use_env:
        # -E / -I: drop what the environment put on sys.path and in the warning options
        pp = os.environ.get('PYTHONPATH')
        if pp:
            drop = set()
            for e in pp.split(os.pathsep):
                if e:
                    drop.add(e)
                    drop.add(os.path.abspath(e))
            sys.path[:] = [e for e in sys.path if e not in drop]
        if 'warnings' not in sys.modules:
            del sys.warnoptions[:]
    if o['W']:
        sys.warnoptions.extend(o['W'])
        if 'warnings' in sys.modules:
            sys.modules['warnings']._processoptions(o['W'])
    if values.get('dev_mode') and 'warnings' not in sys.modules and not o['W']:
        sys.warnoptions.insert(0, 'default')
    sys._xoptions.update(xopts)
    if 'pycache_prefix' in xopts and isinstance(xopts['pycache_prefix'], str):
        pre = os.path.abspath(xopts['pycache_prefix'])
        if rule._where(os.path.realpath(pre))[0] is None:
            sys.pycache_prefix = pre
    if 'faulthandler' in xopts or values.get('dev_mode'):
        import faulthandler
        faulthandler.enable()
    if 'tracemalloc' in xopts:
        import tracemalloc
        v = xopts['tracemalloc']
        tracemalloc.start(int(v) if v is not True else 1)
    if o['check_hash_based_pycs']:
        try:
            import _imp
            _imp.check_hash_based_pycs = o['check_hash_based_pycs']
        except (ImportError, AttributeError):
            pass
    if f.get('u'):
        _unbuffered()
    sys.flags = _flags_object(values)
    return values


def _unbuffered():
    import io
    for name, fd in (('stdout', 1), ('stderr', 2)):
        old = getattr(sys, name)
        if old is None:
            continue
        try:
            old.flush()
            new = io.TextIOWrapper(io.FileIO(fd, 'w', closefd=False), encoding=old.encoding, errors=old.errors,
                                   write_through=True, line_buffering=False)
        except (AttributeError, OSError, ValueError):
            continue
        setattr(sys, name, new)
        setattr(sys, '__%s__' % name, new)


def _fresh_main(**extra):
    import builtins
    m = type(sys)('__main__')
    m.__dict__.update(__builtins__=builtins, __loader__=_M.BuiltinImporter, __spec__=None, __package__=None,
                      __annotations__={})
    m.__dict__.update(extra)
    sys.modules['__main__'] = m
    return m


def _is_zip(data):
    return b'PK\x05\x06' in data[-65557:]


def _multiprocessing_line(texts):
    """True for the command line multiprocessing's spawn and forkserver start their interpreters with: a call of
    their own entry point with constant arguments (no code of its own)."""
    if not texts:
        return False
    text = texts[0]
    if len(text) > 65536 or not text.startswith('from multiprocessing.'):
        return False
    import ast
    state._tls.busy = True
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    finally:
        state._tls.busy = False
    if len(tree.body) != 2:
        return False
    imp, call = tree.body
    if not (isinstance(imp, ast.ImportFrom) and imp.module in ('multiprocessing.spawn', 'multiprocessing.forkserver',
                                                                 'multiprocessing.resource_tracker') and
            len(imp.names) == 1 and imp.names[0].asname is None and imp.names[0].name in ('spawn_main', 'main')):
        return False
    c = call.value if isinstance(call, ast.Expr) else None
    if not (isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == imp.names[0].name):
        return False
    try:
        for a in c.args:
            ast.literal_eval(a)
        for k in c.keywords:
            ast.literal_eval(k.value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


def _run(o, values):
    safe = bool(values.get('safe_path'))
    if o['command'] is not None:
        sys.argv = ['-c'] + o['rest']
        if not safe:
            sys.path.insert(0, '')
        g = _fresh_main().__dict__
        # the interpreter's own command line, not text the process took in (red team 6p, case 06) — unless its parent
        # had taken in content that is not as approved: the text may be that content (red team 7p, case 01), so it
        # falls under the took-in rule like any text turned into code (multiprocessing's own line excepted)
        exempt = state._took['in'] is None or _multiprocessing_line([o['command']])
        state._tls.busy = exempt
        try:
            if not exempt:
                compiles._after_taking_in('-c (the command line of a child whose parent took in a file that is not as '
                                 'approved: text turned into code after this process took in a file that is not as '
                                 'approved)')
            code = compile(o['command'], '<string>', 'exec', dont_inherit=True, optimize=state.OPTIMIZE)
        except state.McpGateGuardRefused:
            sys.exit(1)
        finally:
            state._tls.busy = False
        exec(code, g)
        return
    import runpy
    if o['module'] is not None:
        sys.argv = ['-m'] + o['rest']
        if not safe:
            sys.path.insert(0, os.getcwd())
        _fresh_main()
        runpy._run_module_as_main(o['module'], True)
        return
    script = o['script']
    sys.argv = [script] + o['rest']
    full = os.path.abspath(script)
    if os.path.isdir(full):
        sys.path.insert(0, script)
        _fresh_main()
        runpy._run_module_as_main('__main__', False)
        return
    try:
        data = rule._read(full)                         # read once, checked here whatever its name, then compiled
    except OSError as e:
        sys.stderr.write("%s: can't open file %r: [Errno %s] %s\n" % (
            (getattr(sys, 'orig_argv', None) or [sys.executable])[0], full, e.errno, e.strerror))
        sys.exit(2)
    try:
        rule.check(full, data, 'script')
    except state.McpGateGuardRefused:
        sys.exit(1)
    if _is_zip(data):
        sys.path.insert(0, script)
        _fresh_main()
        runpy._run_module_as_main('__main__', False)
        return
    if not safe:
        sys.path.insert(0, os.path.dirname(os.path.realpath(full)))
    if values.get('x_skip'):
        nl = data.find(b'\n')
        data = data[nl:] if nl >= 0 else b''
    g = _fresh_main(__file__=full, __cached__=None, __loader__=_M.SourceFileLoader('__main__', full)).__dict__
    code = loaders._compile(data, full)
    del data
    exec(code, g)


def _trim(tb):
    skip = set(state.GUARD_FILES)
    rp = sys.modules.get('runpy')
    if rp is not None and getattr(rp, '__file__', None):
        skip.add(rp.__file__)
    while tb is not None and (tb.tb_frame.f_code.co_filename in skip or
                              tb.tb_frame.f_code.co_filename.endswith('runpy>')):
        tb = tb.tb_next
    return tb


def _take_argv0():
    """The name this interpreter was started by (MCP_GATE_GUARD_ARGV0: from the wrapper, or MCP Gate for the server's
    own start). Python runs under its real path, so its standard library is always the installation's; the name, when
    it leads to the same binary, becomes sys.executable before site runs, so a virtual environment's pyvenv.cfg beside
    it is found as Python would find it (its site-packages load under the guard like any file)."""
    a0 = os.environ.pop('MCP_GATE_GUARD_ARGV0', None)
    if not a0:
        return
    try:
        exe = os.path.abspath(a0)
        if exe != sys.executable and os.path.realpath(exe) == os.path.realpath(sys.executable):
            sys.executable = exe
    except (TypeError, ValueError, OSError):
        pass


def main(argv):
    prog = (getattr(sys, 'orig_argv', None) or [sys.executable])[0]
    try:
        o = parse_args(argv)
    except _Usage as e:
        sys.stderr.write('%s\nusage: %s [option] ... [-c cmd | -m mod | file | -] [arg] ...\n'
                         'Try `python -h\' for more information.\n' % (e, prog))
        sys.exit(2)
    if o['help']:
        # prints help or the version and exits without running anything: the real binary may do it
        flag = o['help']
        if flag == '-V':
            flag = '-' + 'V' * min(2, o['flags'].get('V', 1))
        real = '/proc/self/exe' if os.path.exists('/proc/self/exe') else sys.executable
        sys.stdout.flush()
        os.execv(real, [prog, flag])
    if o['command'] is None and o['module'] is None and o['script'] in (None, '-'):
        sys.stderr.write('mcp-gate-guard: refused to run a program read from standard input (or an interactive '
                         'session): MCP Gate\'s load guard only runs a script, -m module or -c code\n')
        sys.exit(2)
    installing.install()
    # the guard's own folder is not the program's sys.path[0]
    if not getattr(sys.flags, 'safe_path', False) and sys.path and \
            os.path.realpath(sys.path[0] or '.') == os.path.dirname(os.path.realpath(state.GUARD_FILE)):
        del sys.path[0]
    me = sys.modules.get('__main__')
    if me is not None:
        sys.modules['mcp_gate_guard'] = me
    values = _apply_options(o)
    values['x_skip'] = bool(o['flags'].get('x'))
    if hasattr(sys, 'orig_argv'):
        sys.orig_argv = [prog] + list(argv)
    _take_argv0()
    if not o['flags'].get('S'):
        import site
        try:
            site.main()                              # .pth files are opened under the audit hook now
        except state.McpGateGuardRefused:
            sys.exit(1)
    inspect = bool(values.get('inspect'))
    try:
        _run(o, values)
    except SystemExit:
        if inspect:
            os.environ['PYTHONINSPECT'] = '1'
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as e:
        tb = _trim(e.__traceback__)
        e.__traceback__ = tb                     # the program's frames, not the guard's (as python shows it)
        if sys.excepthook is sys.__excepthook__:
            state._tls.busy = True                     # Python's own display parses the lines it shows: not a load
        try:
            sys.excepthook(type(e), e, tb)
        finally:
            state._tls.busy = False
        if inspect:
            os.environ['PYTHONINSPECT'] = '1'
            return
        sys.exit(1)
    if inspect:
        os.environ['PYTHONINSPECT'] = '1'
