# mcp_gate_guard_parts/programs.py — Programs a guarded process starts: the program itself, the files its arguments
# name, a shell's own reads, its environment and code given on its command line.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import re as _re
from . import state, rule, reads, places, native, gitfiles


def _words(arg):
    try:
        a = os.fsdecode(arg)
    except TypeError:
        return ()
    out = [a]
    if any(c.isspace() for c in a):
        for w in a.split():
            w = w.strip('\'"();&|<>`')
            if w:
                out.append(w)
    more = []
    for w in out:
        if w.startswith('-') and '=' in w:
            more.append(w.split('=', 1)[1])
    return out + more


_INTERPRETER = _re.compile(r'^(node|nodejs|python[\d.]*|pypy[\d.]*)$')
_NODE_VALUE_OPTIONS = _re.compile(r'^(-r|--require|--import|--loader|--experimental-loader|-C|--conditions|--env-file|'
                                  r'--input-type|--title|--experimental-default-type|--inspect-port|--disable-warning|'
                                  r'--watch-path)$')


def _interpreter_data_from(items):
    """For node/python (guarded themselves: the child checks what it loads), the index after which the arguments
    are the script's own data, else None: the first argument that is no option, or the value of -e/-p/-c/-m."""
    at = None
    for i, item in enumerate(items[:3]):
        try:
            if _INTERPRETER.match(os.path.basename(os.fsdecode(item))):
                at = i
        except TypeError:
            pass
    if at is None:
        return None
    python = os.path.basename(os.fsdecode(items[at])).startswith('py')
    i = at + 1
    while i < len(items):
        try:
            a = os.fsdecode(items[i])
        except TypeError:
            return None
        if a == '--':
            return i + 1
        if not a.startswith('-') or a == '-':
            return i
        if python:
            if _re.match(r'^-[A-Za-z]*[cm]$', a):
                return i + 1
            if _re.match(r'^-[A-Za-z]*[cm].', a) and not a.startswith('--'):
                return i
            if _re.match(r'^-[WX]$|^--check-hash-based-pycs$', a):
                i += 1
        else:
            if _re.match(r'^(-e|--eval|-p|--print|-pe)$', a):
                return i + 1
            if _re.match(r'^--(eval|print)=', a):
                return i
            if _NODE_VALUE_OPTIONS.match(a):
                i += 1
        i += 1
    return None


REAL_DIR = '/run/mcp-gate/real/'     # the sandbox's real interpreters, each started by its wrapper with the guard first


def _unguarded(items, base):
    """The real path of an interpreter among items[:2] that would start with no guard: the sandbox's real binary
    under REAL_DIR, reached by its own path or through /proc/<pid>/exe or a descriptor (red team 6p, case 07)."""
    for item in items[:2]:
        try:
            w = os.fsdecode(item)
        except TypeError:
            continue
        if '/' not in w:
            continue
        try:
            r = os.path.realpath(w if os.path.isabs(w) else os.path.join(base, w))
        except (TypeError, ValueError):
            continue
        if r.startswith(REAL_DIR) or w.startswith(REAL_DIR):
            return r
    return None


def _check_program(items, cwd):
    try:
        base = os.fsdecode(cwd) if cwd is not None else os.getcwd()
    except (TypeError, OSError):
        base = '.'
    unguarded = _unguarded(items, base)
    seen = set()
    names = [os.path.basename(_word(items[i])) for i in _run_positions(items)]   # through wrappers and find -exec
    runs = unguarded is not None or any(state._RUNS_ITS_ARGUMENTS.match(n) for n in names)
    # sed's and awk's program files (`-f script`): code they run, whatever the file's mode (GNU sed's `e` runs a shell).
    scripts = set()
    if any(_re.match(r'^g?sed$|^[gmn]?awk$', n) for n in names):
        strs = [os.fsdecode(x) for x in items if isinstance(x, (str, bytes))]
        for j, a in enumerate(strs):
            if a in ('-f', '--file') and j + 1 < len(strs):
                scripts.add(strs[j + 1])
            elif a.startswith('--file='):
                scripts.add(a[7:])
            elif a.startswith('-f') and len(a) > 2 and not a.startswith('--'):
                scripts.add(a[2:])
    data_from = None if unguarded is not None else _interpreter_data_from(items)
    for i, item in enumerate(items):
        if data_from is not None and i > data_from:
            break
        if item is None:
            continue
        for w in _words(item):
            if not w or w in seen or '\0' in w:
                continue
            seen.add(w)
            f = w if os.path.isabs(w) else os.path.join(base, w)
            p = os.path.realpath(f)
            if rule._where(p)[0] is None:
                continue
            try:
                st = rule._stat(p)
            except (OSError, ValueError):
                continue
            if st.st_mode & 0o170000 != 0o100000:
                continue
            if not (i <= 1 or runs or st.st_mode & 0o111 or w in scripts):
                if state._took['in'] is None:              # data it is handed: what the program may pass back
                    v = reads._differs(p, st)
                    if v is not None:
                        reads._took_in(p, v)
                continue
            v = rule._verdict(p)
            if v is not None:
                rule._refuse(p, v[1], v[0], v[2], 'spawn')
    # After the files it is given: what it may read besides them must be as approved too.
    reader = _reads_its_own(items, cwd)
    if reader is None and unguarded is not None:
        reader = '%s with no guard' % unguarded
    if reader is not None:
        v = places._workspace_as_approved()
        if v is not None:
            rule._refuse(v[0], v[1], v[2], v[3], 'spawn %s (it reads workspace files no guard sees)' % reader)


_SHELLS = _re.compile(r'^(sh|bash|dash|zsh|ksh|mksh|ash|busybox)$')
_SHELL_TRICKS = _re.compile(r'`|\$\(|\$\{|\$[A-Za-z_]|<\(|>\(|(^|[\s;&|(){}])(\.|source|eval|exec|command|builtin|xargs|alias)(\s|$)')


def _shebang(p):
    """The interpreter a script's `#!` line names (`/usr/bin/env bash` is bash), or None."""
    try:
        with open(p, 'rb') as f:
            head = f.read(256)
    except (OSError, ValueError, TypeError):
        return None
    if not head.startswith(b'#!'):
        return None
    words = head[2:].split(b'\n')[0].decode('utf-8', 'replace').split()
    if words and os.path.basename(words[0]) == 'env':
        words = [w for w in words[1:] if not w.startswith('-') and '=' not in w]
    return os.path.basename(words[0]) if words else None


# Programs that run the command their arguments name (`env X=1 sh`, `timeout 5 make`, `nice -n 5 perl`, `sudo -u x
# sh`, `xargs sh`), and find's actions that run one (`find . -exec sh -c … ;`).
_WRAPPERS = _re.compile(r'^(env|nice|nohup|timeout|time|stdbuf|setsid|sudo|doas|flock|chrt|ionice|taskset|xargs|'
                        r'busybox|exec|command|builtin|unbuffer|firejail|chroot|unshare|nsenter|runuser|su|watch|'
                        r'strace|ltrace|valgrind|gdb|catchsegv|setarch|linux32|linux64|prlimit|cpulimit|systemd-run)$')
_FIND_RUNS = frozenset(('-exec', '-execdir', '-ok', '-okdir'))
_WRAPPER_VALUE = _re.compile(r'^([-+].*|[A-Za-z_][A-Za-z0-9_]*=.*|[\d.]+[smhd]?)$')


def _word(x):
    try:
        return os.fsdecode(x)
    except TypeError:
        return ''


def _run_positions(items):
    """Where in a start's argv a program that runs stands: the first two words (a program and a script or an
    interpreter), after a wrapper its first word that is no option, assignment or number (a wrapper's option value is
    taken for a program too: a wrong guess only checks more), and after find's -exec/-execdir/-ok/-okdir."""
    words = [_word(x) for x in items]
    at = {i for i in range(min(2, len(words)))}
    for i, w in enumerate(words):
        if w in _FIND_RUNS and i + 1 < len(words):
            at.add(i + 1)
        if (i in at or i == 0) and _WRAPPERS.match(os.path.basename(w)):
            j = i + 1
            while j < len(words) and _WRAPPER_VALUE.match(words[j]):
                if not words[j].startswith(('-', '+')) or '=' in words[j]:
                    j += 1
                    continue
                at.add(j + 1)                            # an option's value may be the next word: looked at too
                j += 1
            if j < len(words):
                at.add(j)
                if j + 1 < len(words):
                    at.add(j + 1)                        # what that program runs (`env sh script`)
    return sorted(x for x in at if x < len(words))


def _reads_its_own(items, cwd=None):
    """The name of the program among items[:2] that reads files no guard sees, else None: by its name, or by the
    interpreter its `#!` line names. `sh -c 'cmd'` (also `-lc`, `-ec`) is read as its command line: a sourced file,
    eval, a substitution, or any word of the line naming such a program makes it one; else it is not. `node --run`
    (Node 22+) runs a package.json script through /bin/sh before any preload: a reader too (red team 13, case 09)."""
    if _node_run(items):
        return 'node --run'
    names = []
    for at in _run_positions(items):
        try:
            w = os.fsdecode(items[at])
        except TypeError:
            continue
        names.append(os.path.basename(w))
        p = w if os.path.isabs(w) else os.path.join(os.fsdecode(cwd) if cwd is not None else os.getcwd(), w)
        # (node and python are not read by their `#!`: in the sandbox they are the guard's own wrapper scripts)
        if '/' in w and not _re.match(r'^(node|nodejs|python[\d.]*|pypy[\d.]*)$', os.path.basename(w)) and os.path.isfile(p):
            interp = _shebang(p)
            if interp:
                names.append(interp)
    for n in names:
        if not state._READS_ITS_OWN.match(n):
            continue
        if _SHELLS.match(n):
            first = next((i for i in _run_positions(items) if os.path.basename(_word(items[i])) == n), 0)
            rest = [os.fsdecode(x) for x in items[first + 1:] if isinstance(x, (str, bytes))]
            flag = next((i for i, a in enumerate(rest[:-1]) if _re.match(r'^-[A-Za-z]*c[A-Za-z]*$', a)), None)
            if flag is not None:
                return _shell_line_reads(rest[flag + 1], n)
        return n
    return None


def _node_run(items):
    for i in range(min(len(items), 3)):
        try:
            w = os.fsdecode(items[i])
        except TypeError:
            continue
        if not _re.match(r'^(node|nodejs)$', os.path.basename(w)):
            continue
        j = i + 1
        while j < len(items):
            try:
                a = os.fsdecode(items[j])
            except TypeError:
                break
            if a == '--' or not a.startswith('-'):
                break
            if a == '--run' or a.startswith('--run='):
                return True
            if _re.match(r'^(-r|--require|--import|--loader|--experimental-loader|-C|--conditions|--env-file|'
                         r'--input-type|--title|--experimental-default-type|--inspect-port|--disable-warning|'
                         r'--watch-path)$', a):
                j += 1
            j += 1
    return False


_KEYWORDS = frozenset(('if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time', '!', 'nohup', 'nice', 'env'))


def _shell_line_reads(cmd, shell):
    """The program a `sh -c` line runs that reads files no guard sees (or the shell itself for a sourced file, eval,
    a substitution), else None: each word in a command's place — first, after ; & | ( ) { } or a keyword such as
    `then`, after variable assignments — is read; arguments (`echo bash`) are not."""
    if _SHELL_TRICKS.search(cmd):
        return shell
    expect = True
    for tok in _re.findall(r'[;&|(){}\n]+|[^\s;&|(){}]+', cmd):
        if _re.match(r'^[;&|(){}\n]+$', tok):
            expect = True
            continue
        if not expect:
            continue
        w = tok.strip('\'"\\')
        if not w or _re.match(r'^[A-Za-z_][A-Za-z0-9_]*=', w) or w in _KEYWORDS:
            continue
        expect = False
        if state._READS_ITS_OWN.match(os.path.basename(w)):
            return os.path.basename(w)
    return None


# ---------------------------------------------------------------------------------------------------------
# What a start is given besides its command line: its environment, and code on its command line
# ---------------------------------------------------------------------------------------------------------

# The variables MCP Gate refuses a repository to set for a server (src/trust/plan/loader-variables.ts, LOADER_EXACT and
# LOADER_PREFIXES; a test keeps the two lists equal): they decide which code a program loads. A child started with
# one set otherwise than this process was started with (the value MCP Gate or a checked parent set) is checked.
LOADER_EXACT = frozenset((
    'PATH', 'HOME', 'USERPROFILE', 'BASH_ENV', 'ENV', 'ZDOTDIR', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND', 'IFS', 'CDPATH',
    'GLOBIGNORE', 'CLASSPATH', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'GCONV_PATH', 'GLIBC_TUNABLES', 'LOCPATH', 'NLSPATH',
    'HOSTALIASES', 'TMPDIR', 'TEMP', 'TMP', 'ELECTRON_RUN_AS_NODE', 'EDITOR', 'VISUAL', 'PAGER', 'BROWSER', 'SHELL',
    'MANPAGER', 'LESSOPEN', 'PERLIO', 'TCLLIBPATH', 'LUA_PATH', 'LUA_CPATH', 'R_PROFILE_USER', 'R_LIBS_USER', 'JULIA_LOAD_PATH', 'JULIA_DEPOT_PATH',
    'SSH_ASKPASS', 'SUDO_ASKPASS', 'GIT_ASKPASS', 'TERMINFO', 'TERMINFO_DIRS', 'INPUTRC', 'MAVEN_OPTS', 'GRADLE_OPTS', 'SBT_OPTS', 'ANT_OPTS',
    'CC', 'CXX', 'CPP', 'LD', 'AR', 'CFLAGS', 'CXXFLAGS', 'LDFLAGS', 'CPPFLAGS', 'MAKEFLAGS', 'MFLAGS', 'LIBRARY_PATH', 'CPATH', 'PKG_CONFIG_PATH',
    'QT_PLUGIN_PATH', 'QT_QPA_PLATFORM_PLUGIN_PATH', 'GTK_PATH', 'GTK_MODULES', 'GIO_MODULE_DIR', 'GST_PLUGIN_PATH', 'GDK_PIXBUF_MODULE_FILE',
    'KRB5_CONFIG', 'MAGIC', 'WGETRC', 'CURL_HOME', 'SSLKEYLOGFILE', 'ZSH', 'FPATH', 'MAIL', 'MAILPATH', 'HISTFILE', 'LESSKEY', 'SCREENRC', 'VIMINIT', 'EXINIT', 'MYVIMRC',
))
LOADER_PREFIXES = (
    'LD_', 'DYLD_', 'NODE_', 'NPM_CONFIG_', 'PYTHON', 'PIP_', 'UV_', 'PERL', 'RUBY', 'GEM_', 'BUNDLE_', 'JAVA_', 'DENO_', 'BUN_', 'TS_NODE_',
    'TSX_', 'YARN_', 'PNPM_', 'COREPACK_', 'XDG_', 'GIT_', 'MALLOC_', 'LUA_', 'PHP', 'CARGO_', 'RUSTC', 'RUSTUP_', 'GOPATH', 'GOROOT', 'GOFLAGS', 'GOENV', 'GOBIN', 'GOTOOLCHAIN', 'GOPROXY', 'GOEXPERIMENT', 'GODEBUG', 'CONDA', 'VIRTUAL_ENV', 'POETRY_', 'PIPX_', 'PDM_', 'HATCH_',
    'OPENSSL_', 'SSL_', 'PYENV', 'RBENV', 'NODENV', 'NVM_', 'VOLTA_', 'ASDF_', 'MISE_', 'RTX_', 'FNM_', 'JENV', 'SDKMAN', 'BASH_FUNC_', 'DOTNET_', 'CORECLR_',
    'COMPLUS_', 'MONO_', 'ERL_', 'ELIXIR_', 'MIX_', 'HEX_', 'R_PROFILE', 'R_ENVIRON', 'R_LIBS', 'JULIA_', 'TK_', 'GEMRC', 'BUNDLER_', 'RAILS_', 'NPM_', 'GCONV_',
    'GLIBC_', 'GTK_', 'QT_', 'GST_', 'GIO_', 'DBUS_', 'GPG', 'GNUPG', 'SSH_', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE', 'GOOGLE_APPLICATION_CREDENTIALS',
    'KUBECONFIG', 'DOCKER_', 'CONTAINER_', 'PROMPT_', 'PS1', 'PS2', 'PS3', 'VIMINIT', 'VIMRUNTIME', 'MANPATH', 'INFOPATH', 'TEXINPUTS', 'DENO', 'BUN',
)
# Of those, the ones that make a program run code they name or hold whatever their value: refused outright when set
# otherwise than at this process's start (a shell's startup file, exported shell functions, Perl's and Ruby's
# options and library folders, the dynamic loader's preloads and auditors).
_CODE_VARS = _re.compile(r'^(BASH_ENV|BASH_FUNC_.*|PERL5OPT|PERL5LIB|PERLLIB|PERL5DB|RUBYOPT|RUBYLIB|LD_PRELOAD|LD_AUDIT|'
                         r'PYTHONSTARTUP|PYTHONHOME|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|GLIBC_TUNABLES|GCONV_PATH)$')
_PATH_LISTS = _re.compile(r'^(LD_LIBRARY_PATH|PYTHONPATH|NODE_PATH|PERL5LIB|PERLLIB|RUBYLIB|CLASSPATH|LUA_PATH|LUA_CPATH)$')
_NOT_LOADERS = frozenset(('TMPDIR', 'TEMP', 'TMP', 'PATH'))   # scratch of its own; PATH: the program it finds is checked


def _loader_variable(name):
    u = name.upper()
    return u in LOADER_EXACT or u.startswith(LOADER_PREFIXES) or '%' in name or '(' in name


def _env_dict(env):
    """A start's environment as a dict of str (None: this process's own)."""
    if env is None:
        return dict(os.environ)
    out = {}
    try:
        if isinstance(env, dict) or hasattr(env, 'items'):
            for k, v in env.items():
                out[os.fsdecode(k)] = os.fsdecode(v)
        else:
            for e in env:
                k, eq, v = os.fsdecode(e).partition('=')
                if eq:
                    out[k] = v
    except (TypeError, ValueError):
        return None
    return out


def _names_writable(name, value, base):
    """The first writable place a variable's value names (a path in it, or an empty entry of a search path: the
    working folder), else None."""
    words = _re.split(r'[:;,\s=]+', value)
    if _PATH_LISTS.match(name) and ('' in value.split(':') or '.' in value.split(':')):
        words.append(base)
    for w in words:
        if not w or w.startswith('-') and '/' not in w:
            continue
        w = w.strip('\'"')
        if not (os.path.isabs(w) or '/' in w or os.path.exists(os.path.join(base, w))):
            continue
        try:
            p = os.path.realpath(w if os.path.isabs(w) else os.path.join(base, w))
        except (TypeError, ValueError):
            continue
        if places._writable_place(p):
            return p
    return None


def _check_env(env, base, items=()):
    """A child's environment: a variable that makes a program load code no guard sees (red team 7p, case 03), set
    otherwise than this process was started with, is refused — one of _CODE_VARS whatever its value, any other of
    the loader list when its value names a writable place."""
    if not state._state['on']:
        return
    e = _env_dict(env)
    if e is None:
        rule._refuse(state.ROOT or '(workspace)', None, 'sink', '', 'spawn with an environment the guard cannot read')
    start = state._START['env']
    # a Python child is guarded itself: what PYTHONPATH puts on its sys.path is checked as it is imported
    python = any(_re.match(r'^(python[\d.]*|pypy[\d.]*)$', os.path.basename(os.fsdecode(x))) for x in items[:2]
                 if isinstance(x, (str, bytes)))
    for k in sorted(e):
        v = e[k]
        if start.get(k) == v or k in (state.TOOK_IN_VAR, state.CHILD_VAR, 'MCP_GATE_GUARD') or not _loader_variable(k):
            continue
        if k == 'ENV' and not _re.search(r'[/$`]', v) and not os.path.exists(os.path.join(base, v)):
            continue                             # ENV=production: a word, no file (sh sources $ENV, expanded)
        bad = None
        if _CODE_VARS.match(k) or k.startswith('BASH_FUNC_') or '%' in k or '(' in k:
            bad = 'it makes the program run code it names'
        elif k not in _NOT_LOADERS and not (python and k in ('PYTHONPATH', 'PYTHONSAFEPATH', 'PYTHONUSERBASE')):
            w = _names_writable(k, v, base)
            if w is not None and (w == state.ROOT or w.startswith(state.ROOT_PREFIX)):
                # a workspace folder (a bundled helper's LD_LIBRARY_PATH=lib): what the program loads from it is
                # approved only while every file of the workspace is what was approved, as for a program that reads
                # its own files
                ws = places._workspace_as_approved()
                if ws is not None:
                    rule._refuse(ws[0], ws[1], ws[2], ws[3], 'spawn with %s=%s in its environment (it names the workspace, '
                            'and no guard sees what the program loads from there)' % (k, v[:200]))
            elif w is not None:
                bad = 'it names %s, a place the server can write' % w
        if bad is not None:
            p = _names_writable(k, v, base) or state.ROOT or '(workspace)'
            how = 'spawn with %s=%s in its environment (%s; no guard sees what it loads)' % (k, v[:200], bad)
            kind, rel = rule._where(p)
            if kind == 'root':
                vv = rule._verdict(p)
                if vv is not None:
                    rule._refuse(p, vv[1], vv[0], vv[2], how)
            rule._refuse(p, rel if kind == 'root' else None, 'sink', '', how)


# Starts after taking in (src/guard/CONTRACT.md, "Starts after taking in (both guards)"). A list of programs given
# code is never complete (gdb -ex, zip -TT, sqlite3 .shell, ed on its stdin: red teams 17 and 18), so after this
# process took in content that is not as approved a start is allowed only when it is a guarded interpreter, a program
# of the shared table's `safe` list given none of its `code` options (and no `env` variable changed), or a shell `-c`
# simple line that is one of those; any other start only while the whole workspace is as approved. The table,
# command_lines.json beside this module, is read once here; when it cannot be read no start after taking in is
# allowed by it (fail closed).
_TABLE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'command_lines.json')


def _load_table(path):
    """((names regex, frozenset of code options) per safe program, the env variables); raises ValueError (or
    OSError) when the table is not as described in its `about`."""
    with open(path, 'rb') as f:
        t = state._parse_json(f.read().decode('utf-8-sig'))
    if not isinstance(t, dict) or not isinstance(t.get('safe'), list) or not isinstance(t.get('env'), list):
        raise ValueError('no "safe" and "env" lists')
    safe = []
    for p in t['safe']:
        if not isinstance(p, dict) or not isinstance(p.get('names'), str):
            raise ValueError('a safe program without "names"')
        code = p.get('code', [])
        if not isinstance(code, list) or not all(isinstance(c, str) and c for c in code):
            raise ValueError('"code" of %s is not a list of words' % p['names'])
        safe.append((_re.compile(p['names']), frozenset(code), p.get('git') is True))
    if not all(isinstance(v, str) and v for v in t['env']):
        raise ValueError('"env" is not a list of names')
    prefixes = t.get('env_prefixes', [])
    if not isinstance(prefixes, list) or not all(isinstance(v, str) and v for v in prefixes):
        raise ValueError('"env_prefixes" is not a list of words')
    return tuple(safe), tuple(t['env']), tuple(prefixes), gitfiles.load(t)


try:
    _TABLE, _TABLE_ENV, _TABLE_ENV_PREFIXES, _GIT = _load_table(_TABLE_FILE)
    _TABLE_ERROR = None
except (OSError, ValueError, TypeError, _re.error, RecursionError, MemoryError) as _e:
    _TABLE, _TABLE_ENV, _TABLE_ENV_PREFIXES, _GIT = None, (), (), None
    _TABLE_ERROR = '%s could not be read (%s): no start after taking in is allowed by it' % (_TABLE_FILE, _e)


def _code_option(w, code):
    """The code option of `code` a word is, else None: the option itself (or a subcommand named so), `--long=value`,
    a long option's abbreviation (`--to-com`; `--` and one letter or more, as getopt_long takes), or a cluster of short options
    holding a one-letter one (`-vo` holds `-o`; the rest of the cluster may be its value)."""
    if w in code:
        return w
    if w.startswith('--'):
        name = w.split('=', 1)[0]
        if name in code:
            return name
        if len(name) >= 3:
            for c in code:
                if c.startswith('--') and c.startswith(name):
                    return c
        return None
    if len(w) > 2 and w[0] == '-':
        for c in code:
            if len(c) == 2 and c[0] == '-' and c[1] in w[1:]:
                return c
    return None


# (zsh reads ~/.zshenv and fish its config on every start, a login or interactive shell its startup files: only these
# shells, given -c with -e or -u, read no file of their own — BASH_ENV is in the table's env; red team 19, a18)
_SHELL_NAMES = _re.compile(r'^(sh|bash|dash|ash|rbash)$')
_NOT_SIMPLE = _re.compile(r'[;&|<>()$`\\*?\[\]{}~!\n\r]')


def _shell_line(words):
    """A shell's words after its name: the `-c` line when they are `-e`/`-u` options and a cluster of them with `c`
    followed by the line, else None."""
    for i, a in enumerate(words):
        if _re.match(r'^-[eu]*c[eu]*$', a):
            if i + 1 >= len(words) or i + 2 != len(words):
                return None
            return words[i + 1]
        if not _re.match(r'^-[eu]+$', a):
            return None
    return None


# Besides the table's `env` and `env_prefixes`, what a start after taking in must be given as this process started
# with (red team 19): PATH (git runs `git-<alias>` and a shell its words from it), the folders git and a shell read
# their configuration from, and git's own variables and exported shell functions. (PS4, SHELLOPTS, BASHOPTS,
# GCONV_PATH and BASH_FUNC_… are refused before that whatever was taken in: _CODE_VARS.)
_START_ENV = ('PATH', 'HOME', 'XDG_CONFIG_HOME', 'GIT_COMMON_DIR')
_START_ENV_PREFIXES = ('GIT_', 'BASH_FUNC_')


def _env_changed(e):
    """The first of those variables (the table's `env`, a name starting with one of its `env_prefixes`, _START_ENV,
    _START_ENV_PREFIXES) the child's environment gives another value than this process had when its guard started
    (a missing one does not count), else None."""
    start = state._START['env']
    e = e or {}
    prefixes = tuple(_TABLE_ENV_PREFIXES) + _START_ENV_PREFIXES
    ours = _GIT['neutral'] if _GIT is not None else {}   # (what the guard put there itself: gitfiles.neutral)
    for k in tuple(_TABLE_ENV) + _START_ENV + tuple(sorted(k for k in e if k.startswith(prefixes))):
        v = e.get(k)
        if v is not None and v != start.get(k) and v != ours.get(k):
            return k
    return None


# Where a program of the rule (a guarded interpreter, a safe program, a shell and its -c line's program) must be:
# the folder it is found in and the file it is, links followed, one of the system's (or the sandbox's wrappers) — a
# link or a copy anywhere else (the home folder, /tmp, /var/tmp, a version manager's folder, an editor's own node) is
# none of the table's, whatever its name (red team 19, cases a31 to a36).
_SYSTEM_DIRS = frozenset(('/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/local/sbin'))
_SANDBOX_DIR = '/run/mcp-gate/'


def _system_place(p):
    return (os.path.dirname(p) in _SYSTEM_DIRS or p.startswith(_SANDBOX_DIR)) and not p.startswith(REAL_DIR)


def _not_system(first, e, base, interpreter=False):
    """Why the program `first` (a name looked up along the start's PATH, or a path from base) is not a system
    program, else None. An interpreter may be found elsewhere (a virtual environment's bin/python, a link) when the
    file it is, is a system interpreter: named as one, it is the wrapped binary in the sandbox."""
    found = native._which(first, e, base)
    if found is None:
        return 'the program is not found'
    try:
        found = os.path.normpath(found)
        real = os.path.realpath(found)
        folder = os.path.realpath(os.path.dirname(found))
    except (TypeError, ValueError, OSError):
        return 'the program is not found'
    if rule._where(real)[0] is not None:
        return 'the program is a file of the workspace or scratch'
    if interpreter and _system_place(real) and _INTERPRETER.match(os.path.basename(real)):
        return None
    if interpreter or not (_system_place(real) and _system_place(os.path.join(folder, os.path.basename(found)))):
        return 'the program is %s, not a file of the system\'s bin folders' % (real if real == found else '%s (%s)'
                                                                               % (found, real))
    return None


def _start_allowed(items, env=None, base='', depth=0):
    """None when a start is allowed after taking in whatever the workspace holds (CONTRACT.md's cases 1 to 3), else
    why not (items: the program file then argv[1:]; env None: this process's own)."""
    strs = []
    for x in items:
        try:
            strs.append(os.fsdecode(x))
        except TypeError:
            return 'an argument that is no text'
    if not strs:
        return 'no program'
    if _TABLE is None:
        return _TABLE_ERROR
    first, words = strs[0], strs[1:]
    n = os.path.basename(first)
    if n == 'busybox' and words and _SHELL_NAMES.match(words[0]):
        n, words = words[0], words[1:]       # `busybox sh -c …`: its shell
    e = _env_dict(env)
    if e is None:
        return 'an environment the guard cannot read'
    where = _not_system(first, e, base, bool(_INTERPRETER.match(n)))      # (the program it is, not its name)
    if where is not None:
        return where
    changed = _env_changed(e)                # (also for an interpreter: the child's guard takes it as its own)
    if changed is not None:
        return '%s in its environment' % changed
    if _INTERPRETER.match(n):
        if _unguarded(strs[:1], base) is not None:
            return 'an interpreter with no guard'
        return None                          # 1. guarded itself: refuses its own -e/-c text after taking in
    for names, code, git in _TABLE:
        if not names.match(n):
            continue
        if git:                              # (git's own options, its subcommand's, the files it obeys)
            w = gitfiles.words_why(words, code, base, _GIT, _code_option)
            return w if w is None or isinstance(w, str) else gitfiles.obeys_changed(w[0], w[1], e, _GIT)
        for w in words:                      # (also after '--': find reads its expression after it, a08)
            c = _code_option(w, code)
            if c is not None:
                return 'given %s' % (c if c == w else '%s (%s)' % (w[:80], c))
        return None                          # 2. a safe program given none of its code options
    if _SHELL_NAMES.match(n) and depth == 0:
        line = _shell_line(words)
        if line is None:
            return 'a shell not given a -c line'
        if _NOT_SIMPLE.search(line):
            return 'a -c line that is not simple'
        import shlex
        try:
            inner = shlex.split(line)
        except ValueError:
            return 'a -c line that is not simple'
        if not inner:
            return None
        why = _start_allowed(inner, env, base, 1)
        return None if why is None else 'a -c line: %s' % why    # 3.
    return 'not a program the table knows to be safe'


def _check_after_taking_in(items, env=None, base=''):
    """After taking in content that is not as approved, a start not allowed by _start_allowed runs only while every
    file of root is as approved (and never after taking in a scratch file)."""
    t = state._took['in']
    if t is None:
        return
    why = _start_allowed(items, env, base)
    if why is None:
        return
    v = places._workspace_as_approved()
    if v is None and t[1] is None:
        v = t                                    # content read outside the workspace (a scratch file)
    if v is not None:
        try:
            n = os.path.basename(os.fsdecode(items[0])) if items else '(program)'
        except TypeError:
            n = '(program)'
        rule._refuse(v[0], v[1], v[2], v[3], 'spawn %s: started after this process took in a file that is not as '
                'approved (it may run code it is given: %s)' % (n, why))
