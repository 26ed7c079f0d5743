# mcp_gate_guard.py — MCP Gate's Python load guard (issue 43; the rule is src/guard/CONTRACT.md).
#
# Runs INSIDE an MCP server's Python processes and refuses to load any workspace file whose content differs
# from what a person approved. The sandbox's python wrapper starts EVERY python as
#
#     <real python> -S <this file> <the original python arguments...>
#
# so this file parses Python's own command-line grammar, installs the guard (a path hook with checking
# loaders + a PEP 578 audit hook), runs site.main() unless the original arguments had -S (so .pth files are
# opened under the audit hook), and then runs the target like Python would (script, -m module, -c code).
# Standard library only; Python 3.8+ syntax. Configuration: MCP_GATE_GUARD = path of the JSON manifest.
import _thread
import os
import sys
from importlib import machinery as _M

try:
    from _sha256 import sha256 as _sha256          # 3.8-3.11: cheaper to import than hashlib (OpenSSL)
except ImportError:  # pragma: no cover - newer Pythons
    try:
        from _sha2 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256

# Files Python turns into code when it opens them, with no compile of their text to catch (site's .pth lines,
# zipimport's archives, extension modules, bytecode — importlib's own loaders, which spec_from_file_location
# hands out, read a __pycache__ .pyc, and an unchecked-hash one is never compared with its source): checked when
# opened. A .py or .pyc opened for reading is remembered
# like any other file (a code-reading server reads sources as data); a compile of its exact text is refused.
CODE_SUFFIXES = ('.pth', '.so', '.zip', '.egg', '.whl', '.pyz', '.pyc', '.pyo')
TAINT_MAX = 16 << 20           # other files read inside root/scratch larger than this are not remembered
# Programs that run what their arguments name: every workspace file among their arguments is checked; any other
# program's arguments are its data (wc -l README.md), and only an executable file among them is checked.
import re as _re
_RUNS_ITS_ARGUMENTS = _re.compile(r'^(sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox|env|nice|nohup|timeout|time|xargs|sudo|doas|perl[\d.]*|ruby[\d.]*|php[\d.]*|node|nodejs|python[\d.]*|pypy[\d.]*|lua[\d.]*|tclsh[\d.]*|awk|gawk|mawk|nawk|make|gmake|git|npx|npm|pnpm|yarn|deno|bun|tsx|ts-node|Rscript|pwsh|source)$')
# Programs that read and run files their arguments do not name (a shell sources, make reads its Makefile, npm its
# package.json scripts, an interpreter the guard is not in imports): started only while every file of the
# workspace is what was approved, since no guard sees what they read (else refused, naming the first file that
# is not; `node` and `python` are not here: the sandbox's wrappers put the guard in them).
_READS_ITS_OWN = _re.compile(r'^(sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox|env|nice|nohup|timeout|time|xargs|sudo|doas|perl[\d.]*|ruby[\d.]*|php[\d.]*|lua[\d.]*|tclsh[\d.]*|awk|gawk|mawk|nawk|make|gmake|npx|npm|pnpm|yarn|deno|bun|tsx|ts-node|Rscript|pwsh|source|java|go|cargo|just|task|rake|bundle|gradle|mvn|ant|ninja|cmake|meson|bats|bazel|bazelisk|buck2?|scons|expect|m4|tox|nox|invoke|wish[\d.]*)$')
GUARD_FILE = os.path.abspath(__file__)
_known = {}                    # rel -> ((st_ino, st_size, st_mtime_ns), sha256): files hashed for the whole-workspace check


class McpGateGuardRefused(ImportError):
    """Raised when a file about to become code is not what was approved."""


McpGateGuardRefused.__module__ = 'mcp_gate_guard'

_tls = _thread._local()        # .busy: the guard's own reads and compiles must not re-enter the audit hook
_tainted = {}                  # sha256 of a non-matching file's text read inside root/scratch -> (p, rel, why, sha)
_told = set()                  # (p, sha, how) already reported
# Text turned into code after this process took in content that is not as approved. Transformed text (a file read
# through `cat`, a pickle whose reduce is `eval`, base64) cannot be traced back to its file, so once the process
# has read a workspace or scratch file that differs from the approval (or was started by a process that had, or
# started a program while the workspace differs), every later compile of text, code object built from bytes and
# pickle global is refused, naming that file.
TOOK_IN_VAR = 'MCP_GATE_GUARD_TOOK_IN'
CHILD_VAR = 'MCP_GATE_GUARD_CHILD'      # set on every program a guarded process starts: it can be fed later
_took = {'in': None, 'started': False}   # in: (p, rel, why, sha) of the first such content; started: ran a program
_own = set()                   # real paths this process created or truncated before it took anything in
_readlink = os.readlink         # the guard's own: os.readlink is wrapped for the server's (_on_readlink)
_state = {'on': False}
ROOT = None                    # real path of the workspace ('' when the manifest could not be read)
ROOT_PREFIX = None
FILES = {}
LINKS = {}                     # rel -> link text of each symbolic link of the workspace at approval
APPROVED = frozenset()
SCRATCH = ()
REPORT = None
BROKEN = None                  # reason the manifest could not be read, or None
SYSTEM = ()                    # with a broken manifest: the interpreter's own folders (everything else refused)
OPTIMIZE = 0
LARGE = {}                     # rel -> {size, mtimeNs, ino} of each file the approval recorded as too large to hash
_START = {'env': {}, 'cwd': '/', 'home': None}   # what this process was started with (MCP Gate's, or a checked parent's)


# ---------------------------------------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------------------------------------

def _sha(data):
    return _sha256(data).hexdigest()


def _read(p):
    _tls.busy = True
    try:
        with open(p, 'rb') as f:
            return f.read()
    finally:
        _tls.busy = False


def _where(p):
    """'root' (with rel), 'scratch', or None (not ours to check) for a real path p."""
    if not _state['on']:
        return None, None
    if BROKEN is not None:
        for d in SYSTEM:
            if p == d or p.startswith(d):
                return None, None
        return 'broken', None
    if p.startswith(ROOT_PREFIX):
        return 'root', p[len(ROOT_PREFIX):].replace(os.sep, '/')
    for d in SCRATCH:
        if p.startswith(d):
            # A file on a read-only mount (bound read-only into a scratch folder by the sandbox): the server cannot
            # have written it, so it is no scratch file.
            try:
                if os.statvfs(p).f_flag & os.ST_RDONLY:
                    return None, None
            except (OSError, ValueError, AttributeError):
                pass
            return 'scratch', None
    return None, None


def _verdict(p, data=None):
    """None when the real path p may become code; else (why, rel, sha)."""
    kind, rel = _where(p)
    if kind is None:
        return None
    if data is None:
        try:
            data = _read(p)
        except (OSError, ValueError):
            return None                              # the runtime cannot read it either: its own error follows
    h = _sha(data)
    if kind == 'root':
        want = FILES.get(rel)
        if want == h:
            return None
        return ('changed' if want is not None else 'new'), rel, h
    if kind == 'scratch':
        return (None if h in APPROVED else ('scratch', None, h))
    return 'manifest', rel, h


_REASONS = {
    'changed': 'it changed since approval',
    'new': 'it is not in what was approved',
    'scratch': 'a file written outside the workspace that was not approved',
    'sink': 'it was asked to start a program the guard could not follow',
}


def _message(p, rel, why):
    if why == 'manifest':
        reason = 'the approval manifest %s could not be read (%s)' % (os.environ.get('MCP_GATE_GUARD'), BROKEN)
    else:
        reason = _REASONS[why]
    return 'mcp-gate-guard: refused to load %s (%s): %s' % (p, rel if rel is not None else 'null', reason)


def _in_home(p):
    home = _START['home']
    return bool(home) and home != '/' and (p == home or p.startswith(_prefix(home)))


def _refuse(p, rel, why, h, how):
    msg = _message(p, rel, why)
    if why == 'scratch' and isinstance(p, str) and _in_home(p):
        # approving again cannot help: the file is no workspace file, and the home outlives the start (red team 7p, 11)
        how = '%s; it is in the server\'s own home (%s), which is kept between its starts, so approving again does ' \
              'not remove it: delete %s' % (how, _START['home'], p)
        msg += ' (%s)' % how
    elif 'after this process took in' in how or why == 'sink' or ' needs ' in how or 'environment' in how:
        msg += ' (%s)' % how
    key = (p, h, how)
    if key not in _told:
        _told.add(key)
        try:
            os.write(2, (msg + '\n').encode('utf-8', 'replace'))
        except OSError:
            pass
        if REPORT:
            _append_report(p, rel, why, h, how)
    raise McpGateGuardRefused(msg, path=p)


def _append_report(p, rel, why, h, how):
    import json
    import time
    now = time.time()
    stamp = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(now)) + '.%03dZ' % int((now % 1) * 1000)
    rec = {'file': p, 'rel': rel, 'why': why, 'sha256': h, 'runtime': 'python', 'how': how, 'pid': os.getpid(),
           'time': stamp}
    if why == 'scratch' and isinstance(p, str) and _in_home(p):
        rec['home'] = True
    line = json.dumps(rec, ensure_ascii=False) + '\n'
    _tls.busy = True
    try:
        fd = os.open(REPORT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode('utf-8'))
        finally:
            os.close(fd)
    except OSError:
        pass
    finally:
        _tls.busy = False


def _link_verdict(path, p):
    """For a path named inside the workspace that resolved outside it (p): None when the first symbolic link on the
    way is one the approval recorded with the same text; else (link path, rel, why)."""
    if not _state['on'] or BROKEN is not None or p.startswith(ROOT_PREFIX):
        return None
    try:
        lex = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None
    if not lex.startswith(ROOT_PREFIX):
        return None
    cur, rel = ROOT, ''
    for part in lex[len(ROOT_PREFIX):].split(os.sep):
        if not part:
            continue
        cur = os.path.join(cur, part)
        rel = rel + '/' + part if rel else part
        try:
            if not os.path.islink(cur):
                if os.path.isdir(cur):
                    continue
                return None
            text = _readlink(cur)
        except OSError:
            text = None
        if LINKS.get(rel) != text:
            return cur, rel, ('changed' if rel in LINKS or rel in FILES else 'new')
        return None
    return None


def _links_as_approved(path, p, how):
    """A load named inside the workspace that resolved outside it (p) went through a symbolic link of the
    workspace: that link must be one the approval recorded, with the same text; the first link on the way decides."""
    v = _link_verdict(path, p)
    if v is not None:
        _refuse(v[0], v[1], v[2], '', how + ' through a symbolic link')


def _inside_root(path):
    try:
        return _state['on'] and BROKEN is None and os.path.abspath(os.fsdecode(path)).startswith(ROOT_PREFIX)
    except (TypeError, ValueError):
        return False


def check(path, data=None, how='open'):
    """Applies the rule to a file about to become code; raises McpGateGuardRefused when it is refused."""
    p = os.path.realpath(path)
    _links_as_approved(path, p, how)
    v = _verdict(p, data)
    if v is not None:
        _refuse(p, v[1], v[0], v[2], how)
    return p


# ---------------------------------------------------------------------------------------------------------
# Imports: a path hook whose loaders check the exact bytes before compile / unmarshal / dlopen
# ---------------------------------------------------------------------------------------------------------

def _compile(data, path):
    _tls.busy = True
    try:
        return compile(data, path, 'exec', dont_inherit=True, optimize=OPTIMIZE)
    finally:
        _tls.busy = False


def _source_get_code(self, fullname):
    """SourceFileLoader.get_code for every source loader (also the ones importlib.util.spec_from_file_location hands
    out): a file inside root or scratch is read once, checked and compiled, never from a __pycache__ .pyc."""
    p = os.path.realpath(self.path)
    if _where(p)[0] is None:
        _links_as_approved(self.path, p, 'python-import')
        if not _inside_root(self.path):
            return _ORIGINAL_GET_CODE(self, fullname)
    _tls.busy = True
    try:
        data = self.get_data(self.path)
    finally:
        _tls.busy = False
    check(p, data, 'python-import')
    return _compile(data, self.path)


_ORIGINAL_GET_CODE = _M.SourceFileLoader.get_code


class _Source(_M.SourceFileLoader):
    # never the repository's __pycache__ (a planted or stale .pyc there is ignored); no cache is written
    get_code = _source_get_code

    def source_to_code(self, data, path, *, _optimize=-1):
        return compile(data, path, 'exec', dont_inherit=True, optimize=OPTIMIZE)


class _Sourceless(_M.SourcelessFileLoader):
    def get_data(self, path):
        _tls.busy = True
        try:
            data = super().get_data(path)
        finally:
            _tls.busy = False
        if path == self.path:
            check(path, data, 'python-import')
        return data


class _Extension(_M.ExtensionFileLoader):
    def create_module(self, spec):
        check(self.path, None, 'dlopen')             # before dlopen runs the library's constructors
        _check_native_if_writable(self.path, 'dlopen')
        return super().create_module(spec)


class _RefusedEntry(object):
    """Path entry finder for a refused archive on sys.path: keeps zipimport from loading it."""

    def __init__(self, path, verdict):
        self.path, self.verdict = path, verdict

    def find_spec(self, fullname, target=None):
        v = self.verdict
        _refuse(self.path, v[1], v[0], v[2], 'zipimport')

    def invalidate_caches(self):
        pass


_file_finder_hook = None


def _path_hook(entry):
    try:
        return _file_finder_hook(entry)
    except ImportError:
        pass
    # not a folder: an archive (zipimport) whose name may not end in .zip/.egg/.whl — check it here
    try:
        p = os.path.realpath(os.fspath(entry) or '.')
        if _where(p)[0] is not None and os.path.isfile(p) and not p.endswith(CODE_SUFFIXES):
            data = _read(p)
            if b'PK\x05\x06' in data[-65557:]:
                v = _verdict(p, data)
                if v is not None:
                    return _RefusedEntry(p, v)
    except (OSError, TypeError, ValueError):
        pass
    raise ImportError('not a folder', path=entry)


# ---------------------------------------------------------------------------------------------------------
# PEP 578 audit hook: opens of code files, compile of a non-matching file's text, ctypes, program starts
# ---------------------------------------------------------------------------------------------------------

_TEXT_READERS = ('linecache', 'tokenize', 'traceback', 'inspect')


def _read_for_display():
    """True when the open comes from traceback/source display (linecache): not a load."""
    try:
        f = sys._getframe(3)
        n = 0
        while f is not None and n < 12:
            if f.f_globals.get('__name__') in _TEXT_READERS:
                return True
            f, n = f.f_back, n + 1
    except Exception:
        pass
    return False


def _read_by_site_venv():
    """True when the open comes from the interpreter's own site.venv() (it reads pyvenv.cfg for `home` and
    `include-system-site-packages`; the site-packages it then adds load under the guard like any file)."""
    try:
        f = sys._getframe(3)
        n = 0
        while f is not None and n < 6:
            c = f.f_code
            if c.co_name == 'venv' and (c.co_filename == '<frozen site>' or (
                    c.co_filename.endswith(os.sep + 'site.py') and _where(os.path.realpath(c.co_filename))[0] is None)):
                return True
            f, n = f.f_back, n + 1
    except Exception:
        pass
    return False


def _taint(p, v, data):
    _tainted[v[2]] = (p, v[1], v[0], v[2])
    if b'\r' in data:                           # the same text read in text mode (universal newlines)
        try:
            t = data.replace(b'\r\n', b'\n').replace(b'\r', b'\n')
            _tainted[_sha(t)] = (p, v[1], v[0], v[2])
        except Exception:
            pass


def _note_own(path, mode, flags):
    """A file this process creates or truncates (before it took anything in) holds what it wrote, not a change."""
    if _took['in'] is not None:
        return
    # os.open: truncated, or created new (O_CREAT with O_EXCL); O_EXCL alone creates nothing (red team 4, case 12)
    fresh = ('w' in mode or 'x' in mode) if mode is not None else \
        bool(flags & os.O_TRUNC) or (flags & (os.O_CREAT | os.O_EXCL)) == (os.O_CREAT | os.O_EXCL)
    if fresh:
        try:
            _own.add(os.path.realpath(os.fsdecode(path)))
        except (TypeError, ValueError):
            pass


def _took_in(p, v):
    if _took['in'] is None and p not in _own:
        _took['in'] = (p, v[1], v[0], v[2])


def _on_open(args):
    path, mode = args[0], args[1]
    if isinstance(path, int):
        return
    flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
    if mode is None:                            # os.open(path, flags)
        if flags & 3 != os.O_RDONLY:
            _note_own(path, None, flags)
        if flags & 3 == os.O_WRONLY or flags & os.O_TRUNC:
            return
    elif not isinstance(mode, str):
        return
    else:
        if 'r' not in mode:
            _note_own(path, mode, 0)
        if not ('r' in mode or ('+' in mode and 'w' not in mode)):
            return
    try:
        name = os.fsdecode(path)
    except TypeError:
        return
    if not os.path.isabs(name) and getattr(_tls, 'dir_fd', False):
        return                                  # os.open(..., dir_fd=): looked at by _wrap_open once it is open
    if not os.path.isabs(name) and not os.path.lexists(name):
        # Read relative to a folder descriptor some other way (posix.open before the guard's wrapper, an opener):
        # where it is cannot be told, so it counts as content that is not as approved (red team 4, case 10).
        _took_in(name, ('new', None, ''))
        return
    p = os.path.realpath(name)
    if _where(p)[0] is None:
        # read through a workspace link made or retargeted since approval: content that is not as approved
        lv = _link_verdict(name, p)
        if lv is not None and os.path.isfile(p) and os.path.getsize(p) <= TAINT_MAX:
            try:
                data = _read(p)
            except OSError:
                return
            v = (lv[2], lv[1], _sha(data))
            _taint(lv[0], v, data)
            _took_in(lv[0], v)
        return
    try:
        st = os.stat(p)
    except OSError:
        return
    if st.st_mode & 0o170000 != 0o100000:        # not a regular file
        return
    if p.endswith(CODE_SUFFIXES) or name.endswith(CODE_SUFFIXES):
        try:
            data = _read(p)
        except OSError:
            return
        v = _verdict(p, data)
        if v is None:
            return
        if _read_for_display():
            # a traceback showing source is not a load; compile of it, or of any part of it, after that is refused
            # (a line of it handed back by linecache and exec'd: red team 5, case 02)
            _taint(p, v, data)
            _took_in(p, v)
            return
        _refuse(p, v[1], v[0], v[2], 'open')
    if os.path.basename(p) == 'pyvenv.cfg' and _read_by_site_venv():
        return                                  # a virtual environment's settings, read by site: no text becomes code
    if st.st_size > TAINT_MAX:
        if _took['in'] is None:
            v = _differs(p, st)
            if v is not None:
                _took_in(p, v)
        return
    try:
        data = _read(p)
    except OSError:
        return
    v = _verdict(p, data)
    if v is not None and p not in _own:
        _taint(p, v, data)
        _took_in(p, v)


def _differs(p, st):
    """The verdict for a large file read as data, hashed once per (inode, size, mtime)."""
    kind, rel = _where(p)
    if kind is None:
        return None
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _known.get(p)
    if hit is None or hit[0] != key:
        v = _verdict(p)
        _known[p] = (key, v)
        return v
    return hit[1]


_PERCENT = _re.compile(rb'%([0-9A-Fa-f]{2})')


def _sqlite_uri_path(name):
    """The file a `file:` URI names, decoded as SQLite does (sqlite3ParseUri): an authority of '' or 'localhost'
    after `//`, the path up to `?` or `#`, %XX decoded. None when SQLite would not open a file it names."""
    rest = name[5:]
    if rest.startswith('//'):
        end = rest.find('/', 2)
        if end < 0:
            end = len(rest)
        if rest[2:end] not in ('', 'localhost'):
            return None
        rest = rest[end:]
    for c in '?#':
        rest = rest.split(c, 1)[0]
    raw = _PERCENT.sub(lambda m: bytes((int(m.group(1), 16),)), os.fsencode(rest))
    if b'\0' in raw:
        raw = raw.split(b'\0', 1)[0]
    return os.fsdecode(raw)


def _on_sqlite(args):                           # sqlite3.connect: (database,) — read by the library itself
    try:
        name = os.fsdecode(args[0])
    except (TypeError, IndexError):
        return
    if name == ':memory:' or not name:
        return
    names = [name]                               # uri=False: the name as written (the event does not say which)
    if name.startswith('file:'):
        try:
            decoded = _sqlite_uri_path(name)
        except (ValueError, TypeError, UnicodeError):
            decoded = None
        if decoded is None:                      # cannot be placed: the workspace is checked at the next compile
            _took['started'] = True
            return
        if decoded:
            names.append(decoded)
    for n in names:
        if _take_in_file(n) is None:             # there, but cannot be looked at: fail closed
            _took['started'] = True


def _take_in_file(name):
    """A file a library reads itself (sqlite, dbm): counted as taken in when it is not as approved; True then (None
    when it is there but cannot be looked at)."""
    p = os.path.realpath(name)
    try:
        st = os.stat(p)
    except OSError:
        return None if os.path.lexists(name) else False   # there but not statable (a loop, no access): None
    if st.st_mode & 0o170000 != 0o100000:
        return False
    v = _differs(p, st)
    if v is not None:
        _took_in(p, v)
    return v is not None


def _on_readlink(path, dir_fd, text):
    """os.readlink: a link's text is content the approval records (its `links`); the text of a workspace link made
    or retargeted since counts as taken in (red team 4, case 13: eval of a link's text)."""
    if _took['in'] is not None or BROKEN is not None:
        return
    try:
        name = os.fsdecode(path)
    except TypeError:
        return
    if dir_fd is not None and not os.path.isabs(name):
        try:
            name = os.path.join(_readlink('/proc/self/fd/%d' % dir_fd), name)
        except (OSError, TypeError):
            _took_in(name, ('new', None, ''))
            return
    lex = os.path.abspath(name)
    folder = os.path.realpath(os.path.dirname(lex))
    full = os.path.join(folder, os.path.basename(lex))
    if not full.startswith(ROOT_PREFIX):
        return                                  # a link in a scratch folder: no record of it (the process's own)
    rel = full[len(ROOT_PREFIX):].replace(os.sep, '/')
    try:
        t = os.fsdecode(text)
    except TypeError:
        return
    if LINKS.get(rel) != t:
        _took_in(full, ('changed' if rel in LINKS or rel in FILES else 'new', rel, _sha(t.encode('utf-8', 'surrogateescape'))))


def _on_dbm(filename):
    """dbm.ndbm / dbm.gnu open their files in C (no `open` event, unlike shelve's format probe): each file of the
    database that is not as approved counts as taken in (red team 4, case 14: a pickle in a pulled state.db)."""
    try:
        name = os.fsdecode(filename)
    except TypeError:
        return
    for f in (name, name + '.db', name + '.dir', name + '.pag'):
        if _take_in_file(f):
            return


class _DbmFinder(object):
    """Puts _on_dbm in front of the C dbm modules' open when they are imported (dbm.ndbm and dbm.gnu copy it), and
    _wrap_sqlite around _sqlite3's connect (sqlite3 copies it)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in ('_dbm', '_gdbm', '_sqlite3', 'readline', '_ssl', 'ssl'):
            return None
        spec = _M.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if name == '_sqlite3':
                _wrap_sqlite(module)
                return
            if name in ('readline', '_ssl', 'ssl'):
                _wrap_readers(module)
                return
            opener = getattr(module, 'open', None)
            if callable(opener):
                def open(filename, *a, **k):
                    _on_dbm(filename)
                    return opener(filename, *a, **k)
                module.open = open
        spec.loader.exec_module = exec_module
        return spec


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
                    _take_in_file(os.path.join(name, n))
            except OSError:
                pass
        else:
            _take_in_file(name)


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
        _tls.dir_fd = True
        try:
            fd = real(path, flags, mode, dir_fd=dir_fd)
        finally:
            _tls.dir_fd = False
        try:
            where = _readlink('/proc/self/fd/%d' % fd)
        except OSError:                         # not placed (no /proc): counted as content not as approved
            where = None
            if flags & 3 != os.O_WRONLY:
                _took_in(os.fsdecode(path), ('new', None, ''))
        try:
            if where is not None:
                _on_open((where, None, flags))
        except McpGateGuardRefused:
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
    if dst in _own and src not in _own:
        _own.discard(dst)


def _sqlite_authorizer(action, arg1, arg2, db, trigger):
    if action == 24:                            # SQLITE_ATTACH: a database file opened by the library itself
        if arg1:
            _on_sqlite((arg1,))
        else:                                   # a bound name: not told; the workspace is checked at the next compile
            _took['started'] = True
    return 0                                    # SQLITE_OK


def _on_sqlite_handle(args):
    """sqlite3.connect/handle: a connection made without sqlite3.connect (the class called itself), whose ATTACH the
    guard does not see: the workspace is checked at the next compile, as after a program start."""
    if not getattr(_tls, 'sqlite_connect', False):
        _took['started'] = True


def _wrap_sqlite(module):
    """sqlite3.connect: what a connection ATTACHes is read by the library itself (red team 5, case 03), so each
    connection gets an authorizer that looks at the file an ATTACH names (set once __init__ is done: the audit
    event comes before)."""
    real = getattr(module, 'connect', None)
    if not callable(real):
        return

    def connect(*a, **k):
        _tls.sqlite_connect = True
        try:
            conn = real(*a, **k)
        finally:
            _tls.sqlite_connect = False
        try:
            conn.set_authorizer(_sqlite_authorizer)
        except Exception:                       # what it ATTACHes unseen: the workspace is checked at the next compile
            _took['started'] = True
        return conn
    module.connect = connect


def _wrap_readlink():
    real = _readlink

    def readlink(path, *a, **k):
        text = real(path, *a, **k)
        # The guard's own os.path.realpath calls follow links to decide; the server's read the text too (a
        # dangling link's text comes back as the last part of the path: red team 5, case 10).
        f = sys._getframe(1)
        while f is not None and (f.f_code.co_filename == '<frozen posixpath>' or f.f_code.co_filename.endswith(os.sep + 'posixpath.py')):
            f = f.f_back
        if not getattr(_tls, 'busy', False) and (f is None or f.f_code.co_filename != GUARD_FILE):
            try:
                _on_readlink(path, k.get('dir_fd'), text)
            except Exception:
                pass
        return text
    os.readlink = readlink
    try:
        import posix
        posix.readlink = readlink               # the same function under its other name (red team 5, case 05)
    except ImportError:
        pass


# Code generators of the standard library that build source from identifiers they validate (namedtuple,
# dataclass), ast.parse (a tree is code only when compiled again) and site's `.pth` lines (the file is checked when
# it is opened): their compiles are not text the process took in. Recognised by name, outside root and scratch.
_GENERATORS = tuple(os.sep + f for f in ('collections' + os.sep + '__init__.py', 'ast.py'))


def _generated(f):
    """f: the frame that called compile. namedtuple (it checks its names itself) and ast.parse; a dataclass or an attrs
    class only while what names its fields is identifiers (./_dataclass_compile, ./_attrs_compile)."""
    name = f.f_code.co_filename
    if name == '<frozen site>':
        return True
    try:
        p = os.path.realpath(name)
        inside = _where(p)[0] is not None
    except (TypeError, ValueError):
        return False
    # The standard library's generators only from outside root and scratch (a workspace file named ast.py or
    # dataclasses.py is the application's code); attrs also from a package folder of a workspace venv, as approved.
    if name.endswith(os.sep + 'typing_inspection' + os.sep + 'typing_objects.py') and _library_file(p):
        return _identity_check_compile(f)
    if not inside:
        if name.endswith(_GENERATORS):
            return True
        if name.endswith(os.sep + 'dataclasses.py'):
            return _dataclass_compile(f)
    if name.endswith(os.sep + 'attr' + os.sep + '_make.py') and _library_file(p):
        return _attrs_compile(f)
    return False


def _identity_check_compile(f):
    """typing_inspection (pydantic's) makes its is_* helpers as it loads: `def <function_name>(obj): return obj is
    typing.<member> ...` (or `isinstance(obj, _obj)`) from its own literals; a compile passes while both are identifiers and the module's import is
    running (red team 10p, cases 31-32: importing pydantic after reading an edited file)."""
    if f.f_code.co_name not in ('_compile_identity_check_function', '_compile_isinstance_check_function') or \
            getattr(_tls, 'engine_depth', 0) <= 0:
        return False
    return _identifiers([f.f_locals.get('member'), f.f_locals.get('function_name')])


def _library_file(p):
    """A file outside root and scratch, or an approved one of the site-packages of the virtual environment this
    interpreter runs in, when that is in the workspace (a folder merely named site-packages is the application's
    code). A package there is taken for the library it says it is: a forged one in a committed venv is not told apart
    (docs/concepts.md says so)."""
    kind = _where(p)[0]
    if kind is None:
        return True
    if kind != 'root' or sys.prefix == sys.base_prefix:
        return False
    prefix = _prefix(os.path.realpath(sys.prefix))
    if not p.startswith(prefix):
        return False
    parts = p[len(prefix):].split(os.sep)
    if 'site-packages' not in parts and 'dist-packages' not in parts:
        return False
    try:
        return _differs(p, os.stat(p)) is None
    except OSError:
        return False


def _site_frame(f):
    """True when f is site's addpackage (running a .pth line), in the interpreter's own site."""
    c = f.f_code
    if c.co_name != 'addpackage':
        return False
    if c.co_filename == '<frozen site>':
        return True
    return c.co_filename.endswith(os.sep + 'site.py') and _where(os.path.realpath(c.co_filename))[0] is None


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
        return _where(os.path.realpath(pth))[0] is None
    except (TypeError, ValueError):
        return False


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
    depth = getattr(_tls, 'engine_depth', 0)
    _tls.engine_depth = depth + 1
    try:
        run(self, module)
    finally:
        _tls.engine_depth = depth
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
            if name not in _engine_as_loaded and getattr(_tls, 'engine_depth', 0) > 0:
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
        kind, rel = _where(p)
        h = _sha(str.encode(text, 'utf-8'))
        if kind == 'root':
            return FILES.get(rel) == h
        if kind is None:
            return _sha(_read(p)) == h
    except (OSError, TypeError, ValueError, UnicodeError):
        pass
    return False


# A template read by the application itself (`Template(open('x.j2').read())`): the exact text of an approved file
# that is a template by its name — a reviewer reads those as templates, not as data.
_TEMPLATE_SUFFIXES = ('.j2', '.jinja', '.jinja2', '.tmpl', '.tpl', '.template')
_template_hashes = {}


def _template_text(text):
    if not _template_hashes:
        _template_hashes.update({h: rel for rel, h in FILES.items() if rel.lower().endswith(_TEMPLATE_SUFFIXES)})
        _template_hashes.setdefault('', '')
    try:
        return bool(_template_hashes.get(_sha(str.encode(text, 'utf-8'))))
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


def _source_constants(filename):
    """The string constants of an approved module's source (empty when its file is not as approved)."""
    try:
        p = os.path.realpath(filename)
        st = os.stat(p)
    except (OSError, TypeError, ValueError):
        return frozenset()
    key = (p, st.st_ino, st.st_size, st.st_mtime_ns)
    hit = _constants.get(p)
    if hit is not None and hit[0] == key:
        return hit[1]
    found = frozenset()
    _tls.busy = True
    try:
        data = _read(p)
        if _verdict(p, data) is None and len(data) <= TAINT_MAX:
            import ast
            found = frozenset(n.value for n in ast.walk(ast.parse(data, p))
                              if isinstance(n, ast.Constant) and type(n.value) is str)
    except Exception:
        found = frozenset()
    finally:
        _tls.busy = False
    _constants[p] = (key, found)
    return found


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
        if not all(_library_file(os.path.realpath(getattr(sys.modules[m], '__file__', '') or '/nonexistent'))
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
            if not all(_engine_class(k) for k in type(ext).__mro__ if k is not object):
                return False
        lexer = env.lexer
        if not _engine_class(type(lexer)):
            return False
        return _same_shape(vars(type(lexer)(env)), vars(lexer))
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


def _after_taking_in(how):
    """Refuses when this process took in content that is not as approved (read it, was started by a process that
    had, or started a program while the workspace differs): `how` is the text, bytes or pickle being turned into code."""
    t = _took['in']
    if t is None and _took['started']:
        v = _workspace_as_approved()
        if v is not None:
            t = _took['in'] = v
    if t is not None:
        _refuse(t[0], t[1], t[2], t[3], how)


_TYPE_NODES = None


def _type_expression(src):
    """True when src is only a type expression (`Optional['Node']`, `list[int] | None`): names, attributes,
    subscripts, constants, tuples, lists, dicts, sets and `|` — no call, lambda or comprehension, so evaluating it
    runs no code of its own (typing's forward references, annotations evaluated by pydantic or inspect, the
    `args`/`kwargs` logging.config.fileConfig evaluates: `(sys.stderr,)`, `{}`)."""
    global _TYPE_NODES
    import ast
    if _TYPE_NODES is None:
        _TYPE_NODES = (ast.Expression, ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Tuple, ast.List,
                       ast.Dict, ast.Set, ast.BinOp, ast.BitOr, ast.Load, ast.Index if hasattr(ast, 'Index') else ast.Load)
    if len(src) > 4096:
        return False
    _tls.busy = True
    try:
        tree = ast.parse(src, mode='eval')
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    finally:
        _tls.busy = False
    for node in ast.walk(tree):
        if not isinstance(node, _TYPE_NODES):
            return False
        if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.BitOr):
            return False
        if isinstance(node, ast.Attribute) and node.attr.startswith('_'):
            return False
        if isinstance(node, ast.Name) and node.id.startswith('__'):
            return False
    return True


def _on_compile(args):
    after = _took['in'] is not None or _took['started']
    if not _tainted and not after:            # the usual case: nothing taken in, nothing to compare (no hashing)
        return
    src = args[0]
    if isinstance(src, str):
        try:
            src = src.encode('utf-8')
        except UnicodeError:
            src = None
    h = _sha(src) if isinstance(src, (bytes, bytearray)) else None
    if h is not None and _tainted:              # the exact text of a file that is not as approved: named as such
        t = _tainted.get(h)
        if t is not None:
            _refuse(t[0], t[1], t[2], t[3], 'exec')
    if h is not None and h in APPROVED:         # the exact text of an approved file: approved code
        return
    if after:
        # frame 2 is the Python code that called compile/eval/exec (the builtins have no frame of their own)
        if not _generated(sys._getframe(2)) and not _in_site() and \
                not (isinstance(src, (bytes, bytearray)) and _type_expression(src)) and not _template_compile():
            _after_taking_in('exec (text turned into code after this process took in a file that is not as approved)')


def _on_dlopen(args):
    name = args[0] if args else None
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if isinstance(name, str) and '/' in name:    # a bare name is looked up in the system's library path
        check(name, None, 'dlopen')
    if isinstance(name, str) and name:
        _check_native_if_writable(name, 'dlopen')


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
    names = []
    for item in items[:2]:
        try:
            names.append(os.path.basename(os.fsdecode(item)))
        except TypeError:
            pass
    runs = unguarded is not None or any(_RUNS_ITS_ARGUMENTS.match(n) for n in names)
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
            if _where(p)[0] is None:
                continue
            try:
                st = os.stat(p)
            except (OSError, ValueError):
                continue
            if st.st_mode & 0o170000 != 0o100000:
                continue
            if not (i <= 1 or runs or st.st_mode & 0o111 or w in scripts):
                if _took['in'] is None:              # data it is handed: what the program may pass back
                    v = _differs(p, st)
                    if v is not None:
                        _took_in(p, v)
                continue
            v = _verdict(p)
            if v is not None:
                _refuse(p, v[1], v[0], v[2], 'spawn')
    # After the files it is given: what it may read besides them must be as approved too.
    reader = _reads_its_own(items, cwd)
    if reader is None and unguarded is not None:
        reader = '%s with no guard' % unguarded
    if reader is not None:
        v = _workspace_as_approved()
        if v is not None:
            _refuse(v[0], v[1], v[2], v[3], 'spawn %s (it reads workspace files no guard sees)' % reader)


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


def _reads_its_own(items, cwd=None):
    """The name of the program among items[:2] that reads files no guard sees, else None: by its name, or by the
    interpreter its `#!` line names. `sh -c 'cmd'` (also `-lc`, `-ec`) is read as its command line: a sourced file,
    eval, a substitution, or any word of the line naming such a program makes it one; else it is not."""
    names = []
    for item in items[:2]:
        try:
            w = os.fsdecode(item)
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
        if not _READS_ITS_OWN.match(n):
            continue
        if _SHELLS.match(n):
            rest = [os.fsdecode(x) for x in items[1:] if isinstance(x, (str, bytes))]
            flag = next((i for i, a in enumerate(rest[:-1]) if _re.match(r'^-[A-Za-z]*c[A-Za-z]*$', a)), None)
            if flag is not None:
                return _shell_line_reads(rest[flag + 1], n)
        return n
    return None


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
        if _READS_ITS_OWN.match(os.path.basename(w)):
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


def _writable_place(p):
    """True for a real path in the workspace, a scratch folder or this process's home (or one of those itself)."""
    if not _state['on']:
        return False
    if BROKEN is not None:
        return _where(p)[0] is not None
    if p == ROOT or _in_home(p) or _where(p)[0] is not None:
        return True
    return any(p == d.rstrip(os.sep) for d in SCRATCH)


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
        if _writable_place(p):
            return p
    return None


def _check_env(env, base, items=()):
    """A child's environment: a variable that makes a program load code no guard sees (red team 7p, case 03), set
    otherwise than this process was started with, is refused — one of _CODE_VARS whatever its value, any other of
    the loader list when its value names a writable place."""
    if not _state['on']:
        return
    e = _env_dict(env)
    if e is None:
        _refuse(ROOT or '(workspace)', None, 'sink', '', 'spawn with an environment the guard cannot read')
    start = _START['env']
    # a Python child is guarded itself: what PYTHONPATH puts on its sys.path is checked as it is imported
    python = any(_re.match(r'^(python[\d.]*|pypy[\d.]*)$', os.path.basename(os.fsdecode(x))) for x in items[:2]
                 if isinstance(x, (str, bytes)))
    for k in sorted(e):
        v = e[k]
        if start.get(k) == v or k in (TOOK_IN_VAR, CHILD_VAR, 'MCP_GATE_GUARD') or not _loader_variable(k):
            continue
        if k == 'ENV' and not _re.search(r'[/$`]', v) and not os.path.exists(os.path.join(base, v)):
            continue                             # ENV=production: a word, no file (sh sources $ENV, expanded)
        bad = None
        if _CODE_VARS.match(k) or k.startswith('BASH_FUNC_') or '%' in k or '(' in k:
            bad = 'it makes the program run code it names'
        elif k not in _NOT_LOADERS and not (python and k in ('PYTHONPATH', 'PYTHONSAFEPATH', 'PYTHONUSERBASE')):
            w = _names_writable(k, v, base)
            if w is not None and (w == ROOT or w.startswith(ROOT_PREFIX)):
                # a workspace folder (a bundled helper's LD_LIBRARY_PATH=lib): what the program loads from it is
                # approved only while every file of the workspace is what was approved, as for a program that reads
                # its own files
                ws = _workspace_as_approved()
                if ws is not None:
                    _refuse(ws[0], ws[1], ws[2], ws[3], 'spawn with %s=%s in its environment (it names the workspace, '
                            'and no guard sees what the program loads from there)' % (k, v[:200]))
            elif w is not None:
                bad = 'it names %s, a place the server can write' % w
        if bad is not None:
            p = _names_writable(k, v, base) or ROOT or '(workspace)'
            how = 'spawn with %s=%s in its environment (%s; no guard sees what it loads)' % (k, v[:200], bad)
            kind, rel = _where(p)
            if kind == 'root':
                vv = _verdict(p)
                if vv is not None:
                    _refuse(p, vv[1], vv[0], vv[2], how)
            _refuse(p, rel if kind == 'root' else None, 'sink', '', how)


# Interpreters and the options that give them code on their command line (a shell's -c, `perl -e`…): after this
# process took in content that is not as approved, that text may be it (red team 7p, case 02).
_INLINE = (
    (_re.compile(r'^(sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox|rbash|pwsh|powershell)$'), _re.compile(r'^(-[A-Za-z]*c[A-Za-z]*|-Command|-command)$')),
    (_re.compile(r'^(python[\d.]*|pypy[\d.]*)$'), _re.compile(r'^-[A-Za-z]*c')),
    (_re.compile(r'^(node|nodejs|bun|deno)$'), _re.compile(r'^(-e|--eval|-p|--print|-pe|--eval=.*|--print=.*|eval)$')),
    (_re.compile(r'^(perl[\d.]*)$'), _re.compile(r'^-[A-Za-z]*[eE]')),
    (_re.compile(r'^(ruby[\d.]*|lua[\d.]*|luajit|Rscript|R|julia|osascript|jshell)$'), _re.compile(r'^(-[A-Za-z]*e|--eval|--expr|-r)$')),
    (_re.compile(r'^(php[\d.]*)$'), _re.compile(r'^(-r|--run)$')),
)
_AWK = _re.compile(r'^[gmn]?awk$|^busybox$')


def _inline_code(items):
    """'<program> <option>' when a start gives a program code on its command line, else None."""
    strs = []
    for x in items:
        try:
            strs.append(os.fsdecode(x))
        except TypeError:
            strs.append('')
    for at in range(min(3, len(strs))):
        n = os.path.basename(strs[at])
        for prog, flag in _INLINE:
            if not prog.match(n):
                continue
            for a in strs[at + 1:]:
                if flag.match(a):
                    if n.startswith(('python', 'pypy')) and _multiprocessing_line(strs[strs.index(a) + 1:][:1]):
                        return None
                    return '%s %s' % (n, a)
                if not a.startswith('-') and a != 'eval':
                    break
        if _AWK.match(n) and n != 'busybox':
            rest = strs[at + 1:]
            if not any(a in ('-f', '--file') or a.startswith(('-f', '--file=')) and not a.startswith('-F') for a in rest):
                return '%s (its program text)' % n
    return None


def _multiprocessing_line(texts):
    """True for the command line multiprocessing's spawn and forkserver start their interpreters with: a call of
    their own entry point with constant arguments (no code of its own)."""
    if not texts:
        return False
    text = texts[0]
    if len(text) > 65536 or not text.startswith('from multiprocessing.'):
        return False
    import ast
    _tls.busy = True
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    finally:
        _tls.busy = False
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


def _check_inline(items):
    t = _took['in']
    if t is None:
        return
    what = _inline_code(items)
    if what is None:
        return
    v = _workspace_as_approved()
    if v is None and t[1] is None:
        v = t                                    # content read outside the workspace (a scratch file)
    if v is not None:
        _refuse(v[0], v[1], v[2], v[3], 'spawn %s: code on its command line, started after this process took in a '
                'file that is not as approved (the text may be that file\'s)' % what)


# ---------------------------------------------------------------------------------------------------------
# Native libraries: what the dynamic loader maps by itself (DT_NEEDED along DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH)
# ---------------------------------------------------------------------------------------------------------
ELF_DEPTH = 8
ELF_MAX = 512
_HWCAPS = _re.compile(r'^(glibc-hwcaps|tls|x86_64|i[3-6]86|haswell|xeon_phi|avx512_1|sse2|aarch64|v[5-8]l?|power\d+|ppc64(le)?|s390x?|z\d+)$')


def _START_LIBRARY_PATH():
    v = _START['env'].get('LD_LIBRARY_PATH', '')
    return _library_path(v, _START['cwd'])


def _library_path(v, base):
    if not v:
        return []
    return [os.path.normpath(os.path.join(base, d)) for d in _re.split(r'[:;]', v)]


def _read_elf_dynamic(p):
    """{'needed', 'rpath', 'runpath'} of an ELF file (32/64 bits, little-endian; DT_AUXILIARY and DT_FILTER count as
    needed), or a string saying why it cannot be read. Every offset is bounded by the file's size (a port of the
    Node guard's readElfDynamic)."""
    try:
        f = open(p, 'rb')
    except OSError as e:
        return 'cannot be opened (%s)' % e.strerror
    _tls.busy = True
    try:
        size = os.fstat(f.fileno()).st_size

        def at(off, n):
            if off < 0 or n < 0 or off + n > size:
                return None
            f.seek(off)
            b = f.read(n)
            return b if len(b) == n else None
        magic = at(0, 4)
        if magic != b'\x7fELF':
            return 'it is not an ELF file'
        h = at(0, 52)
        if h is None:
            return 'its ELF header is truncated'
        if h[4] not in (1, 2):
            return 'unknown ELF class %d' % h[4]
        is64 = h[4] == 2
        if h[5] != 1:
            return 'a big-endian ELF file, which the guard does not read' if h[5] == 2 else 'unknown ELF data encoding %d' % h[5]
        eh = at(0, 64) if is64 else h
        if eh is None:
            return 'its ELF header is truncated'
        W = 8 if is64 else 4

        def num(b, o, n=W):                      # little-endian (no struct: this runs while extensions import)
            if o + n > len(b):
                raise ValueError('short read')
            return int.from_bytes(b[o:o + n], 'little')
        phoff = num(eh, 32 if is64 else 28)
        phentsize = num(eh, 54 if is64 else 42, 2)
        phnum = num(eh, 56 if is64 else 44, 2)
        if phnum == 0:
            return 'it has no program headers'
        if phentsize < (56 if is64 else 32) or phnum > 4096:
            return 'its program headers are malformed'
        ph = at(phoff, phentsize * phnum)
        if ph is None:
            return 'its program headers lie outside the file'
        loads, dyn = [], None
        for i in range(phnum):
            o = i * phentsize
            typ = num(ph, o, 4)
            off = num(ph, o + (8 if is64 else 4))
            vaddr = num(ph, o + (16 if is64 else 8))
            filesz = num(ph, o + (32 if is64 else 16))
            if typ == 1:
                loads.append((vaddr, off, filesz))
            elif typ == 2:
                dyn = (off, filesz)
        if dyn is None:
            return 'it has no dynamic section (not a shared library)'
        ent = 16 if is64 else 8
        if dyn[1] > 1 << 20:
            return 'its dynamic section is too large'
        d = at(dyn[0], dyn[1] - dyn[1] % ent)
        if d is None:
            return 'its dynamic section lies outside the file'
        needed, rpath, runpath = [], [], []
        strtab = strsz = -1
        ended = False
        for o in range(0, len(d) - ent + 1, ent):
            tag, val = num(d, o), num(d, o + ent // 2)
            if tag == 0:
                ended = True
                break
            if tag in (1, 0x7ffffffd, 0x7fffffff):   # DT_NEEDED, DT_AUXILIARY, DT_FILTER
                needed.append(val)
            elif tag == 5:
                strtab = val
            elif tag == 10:
                strsz = val
            elif tag == 15:
                rpath.append(val)
            elif tag == 29:
                runpath.append(val)
        if not ended:
            return 'its dynamic section has no end (DT_NULL)'
        if not (needed or rpath or runpath):
            return {'needed': [], 'rpath': [], 'runpath': []}
        if strtab < 0 or strsz <= 0:
            return 'its dynamic section has no string table'
        seg = next((l for l in loads if l[0] <= strtab < l[0] + l[2]), None)
        if seg is None:
            return 'its string table lies outside every loaded segment'
        tab = at(seg[1] + (strtab - seg[0]), min(strsz, seg[0] + seg[2] - strtab))
        if tab is None:
            return 'its string table lies outside the file'

        def strs(lst):
            out = []
            for i in lst:
                end = tab.find(b'\0', i) if i < len(tab) else -1
                if end < 0:
                    return None
                out.append(os.fsdecode(tab[i:end]))
            return out
        n, rp, rn = strs(needed), strs(rpath), strs(runpath)
        if n is None or rp is None or rn is None:
            return 'a name in its dynamic section lies outside its string table'
        split = lambda l: [x for s in l for x in s.split(':')]
        return {'needed': n, 'rpath': split(rp), 'runpath': split(rn)}
    except (OSError, ValueError, OverflowError) as e:
        return 'it cannot be read (%s)' % e
    finally:
        _tls.busy = False
        f.close()


def _native_refusal(p, how, tail):
    kind, rel = _where(p)
    why = 'scratch' if kind == 'scratch' else ('changed' if rel in FILES else 'new')
    _refuse(p, rel if kind == 'root' else None, why, '', '%s: %s' % (how, tail))


def _expand_search(entry, origins, base):
    if '$' not in entry:
        return [os.path.normpath(os.path.join(base, entry))]
    out = []
    for o in origins:
        e = _re.sub(r'\$\{ORIGIN\}|\$ORIGIN(?![A-Za-z0-9_])', lambda m: o, entry)
        if '$' in e:
            return None
        out.append(os.path.normpath(os.path.join(base, e)))
    return out


def _in_folder(d, name):
    out = [os.path.join(d, name)]

    def sub(x, depth):
        try:
            entries = os.listdir(x)
        except OSError:
            return
        for e in sorted(entries):
            full = os.path.join(x, e)
            if not os.path.isdir(full):
                continue
            if os.path.basename(x) != 'glibc-hwcaps' and not _HWCAPS.match(e):
                continue
            out.append(os.path.join(full, name))
            if depth < 3:
                sub(full, depth + 1)
    if _where(os.path.realpath(d))[0] is not None:
        _tls.busy = True
        try:
            sub(d, 1)
        finally:
            _tls.busy = False
    return out


def _check_native(name, how, library_path, base=None, program=False):
    """A native library (or a program) about to be mapped, and every library it needs that is found in a writable
    place, recursively: each checked as code (red team 7p, cases 08-10). A library in a writable place that cannot be
    read as ELF, or names a search folder the guard cannot resolve, is refused. `library_path`: LD_LIBRARY_PATH as
    the loader reads it (this process's at its start, or the child's)."""
    if not _state['on'] or not isinstance(name, str) or not name or BROKEN is not None:
        return
    base = base or os.getcwd()
    seen = set()

    def visit(lexical, inherited, depth):
        p = os.path.realpath(lexical)
        if p in seen or not os.path.isfile(p):
            return
        mine = _where(p)[0] is not None
        if len(seen) >= ELF_MAX or depth > ELF_DEPTH:
            if mine:
                _native_refusal(p, how, 'it is needed through more than %d levels or %d libraries, more than the guard '
                                'follows' % (ELF_DEPTH, ELF_MAX))
            return
        seen.add(p)
        if mine:
            check(lexical, None, how if depth == 0 else '%s (needed by what it loads)' % how)
        dyn = _read_elf_dynamic(p)
        if isinstance(dyn, str):
            if mine and not (program and depth == 0):   # a program may be a script: its #! interpreter is started
                _native_refusal(p, how, 'it is loaded as native code but the guard cannot read it as an ELF shared '
                                'library: %s' % dyn)
            return
        origins = sorted({os.path.dirname(os.path.abspath(os.path.join(base, lexical))), os.path.dirname(p)})

        def expand(lst):
            out = []
            for e in lst:
                r = _expand_search(e, origins, base)
                if r is None:
                    if mine or _where(os.path.realpath(e[:e.index('$')] or '/'))[0] is not None:
                        _native_refusal(p, how, 'its library search path %r names a token the guard does not resolve' % e)
                    continue
                out.extend(r)
            return out
        rpath = [] if dyn['runpath'] else expand(dyn['rpath']) + inherited
        dirs = rpath + library_path + expand(dyn['runpath'])
        for need in dyn['needed']:
            cands = [os.path.normpath(os.path.join(base, need))] if '/' in need else \
                [c for d in dirs for c in _in_folder(d, need)]
            for c in cands:
                rc = os.path.realpath(c)
                if os.path.isfile(rc) and _where(rc)[0] is not None:
                    visit(c, rpath, depth + 1)
    if '/' in name:
        visit(os.path.join(base, name), [], 0)
    else:
        for d in library_path:
            for c in _in_folder(d, name):
                visit(c, [], 0)


def _check_native_if_writable(name, how):
    """In this process: a library in a writable place, or any library while LD_LIBRARY_PATH names one (a system library
    can only need what lies in a writable place through it)."""
    lp = _START_LIBRARY_PATH()
    try:
        mine = '/' in name and _where(os.path.realpath(name))[0] is not None
    except (TypeError, ValueError):
        return
    if mine or any(_writable_place(os.path.realpath(d)) for d in lp):
        _check_native(name, how, lp)


def _which(name, env, base):
    """The file a program name starts (a name with no `/` looked up along the start's PATH), or None."""
    if '/' in name:
        return os.path.join(base, name)
    path = (env or {}).get('PATH', os.environ.get('PATH', os.defpath))
    for d in path.split(':'):
        f = os.path.join(base, d or '.', name)
        if os.path.isfile(f) and os.access(f, os.X_OK):
            return f
    return None


def _check_start(items, cwd, env):
    """Everything a start is given besides its arguments' files: its environment, code on its command line, the
    program found along its PATH and the native libraries the dynamic loader maps for it."""
    try:
        base = os.fsdecode(cwd) if cwd is not None else os.getcwd()
    except (TypeError, OSError):
        base = '.'
    e = _env_dict(env)
    _check_env(env, base, items)
    _check_inline(items)
    if not items or BROKEN is not None:
        return
    try:
        first = os.fsdecode(items[0] if items[0] is not None else (items[1] if len(items) > 1 else ''))
    except TypeError:
        return
    prog = _which(first, e, base) if first else None
    if prog is None:
        return
    lp = _library_path((e or {}).get('LD_LIBRARY_PATH', ''), base)
    p = os.path.realpath(prog)
    if '/' not in first and _where(p)[0] is not None:
        check(prog, None, 'spawn')               # found along a PATH that names a writable place
    if _where(p)[0] is not None or any(_writable_place(os.path.realpath(d)) for d in lp):
        _check_native(prog, 'spawn', lp, base, program=True)


def _workspace_as_approved():
    """None when every file of the workspace is what was approved; else (p, rel, why, sha) of the first that is not."""
    if not _state['on']:
        return None
    if BROKEN is not None or not ROOT:
        return ROOT or '(workspace)', None, 'manifest', ''   # what is approved is not known: fail closed
    _tls.busy = True
    try:
        for d, dirs, names in os.walk(ROOT):
            if d == ROOT and '.git' in dirs:
                dirs.remove('.git')
            dirs.sort()
            for n in sorted(names):
                p = os.path.join(d, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if st.st_mode & 0o170000 != 0o100000:
                    continue
                rel = p[len(ROOT_PREFIX):].replace(os.sep, '/')
                want = FILES.get(rel)
                if want is None:
                    try:
                        with open(p, 'rb') as f:
                            return p, rel, 'new', _sha(f.read())
                    except OSError:
                        return p, rel, 'new', ''
                if want == 'too-large':
                    # not hashed (over 256 MiB): its size, modification time and inode must be what was recorded
                    # (red team 7p, case 05); with no record it cannot be told unchanged
                    rec = LARGE.get(rel)
                    if not isinstance(rec, dict) or rec.get('size') != st.st_size or \
                            str(rec.get('mtimeNs')) != str(st.st_mtime_ns) or \
                            (rec.get('ino') is not None and str(rec.get('ino')) != str(st.st_ino)):
                        return p, rel, 'changed', ''
                    continue
                key = (st.st_ino, st.st_size, st.st_mtime_ns)
                hit = _known.get(rel)
                if hit is not None and hit[0] == key:
                    h = hit[1]
                else:
                    try:
                        with open(p, 'rb') as f:
                            h = _sha(f.read())
                    except OSError:
                        continue
                    _known[rel] = (key, h)
                if h != want:
                    return p, rel, 'changed', h
    finally:
        _tls.busy = False
    return None


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
    _took['started'] = True
    target = os.environ if env is None else env
    t = _took['in']
    try:
        # A child can be fed text through its pipes at any later time (a worker started while nothing was taken
        # in): it checks the workspace itself when it turns text into code, as a process that started one does.
        target[CHILD_VAR] = '1'
        if t is not None:
            import json
            target[TOOK_IN_VAR] = json.dumps([t[0], t[1], t[2], t[3]])
    except (TypeError, AttributeError):
        # Unmarked, the child could later be fed a changed file's text and not know it: refused (pass a dict).
        if t is not None:
            _refuse(t[0], t[1], t[2], t[3], 'spawn with an environment the guard cannot mark, after this process '
                    'took in a file that is not as approved')
        _refuse(ROOT or '(workspace)', None, 'sink', '', 'spawn with an environment the guard cannot mark (a '
                'read-only mapping: pass a dict)')


def _on_popen(args):      # subprocess.Popen: (executable, args, cwd, env)
    _check_program([args[0]] + _seq(args[1]), args[2])
    _check_start([args[0]] + _seq(args[1]) if args[0] is not None else _seq(args[1]), args[2], args[3] if len(args) > 3 else None)
    _started(args[3] if len(args) > 3 else None)
    _tls.popen = True                           # its _posixsubprocess.fork_exec is this start


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
        if getattr(_tls, 'popen', False):
            _tls.popen = False
            return real(*a, **k)
        if not getattr(_tls, 'busy', False):
            argv = _seq(a[0]) if a else []
            exe = _seq(a[1])[:1] if len(a) > 1 else []
            _check_program(exe + argv[1:] if exe else argv, a[4] if len(a) > 4 else None)
            _check_start(exe + argv[1:] if exe else argv, a[4] if len(a) > 4 else None, a[5] if len(a) > 5 else None)
            _took['started'] = True
            t = _took['in']
            if t is not None:
                import json
                mark = json.dumps([t[0], t[1], t[2], t[3]])
                env = a[5] if len(a) > 5 else None
                if env is None:
                    os.environ[TOOK_IN_VAR] = mark
                else:
                    a = list(a)
                    a[5] = [e for e in env if not os.fsencode(e).startswith(TOOK_IN_VAR.encode() + b'=')] + \
                        [os.fsencode('%s=%s' % (TOOK_IN_VAR, mark))]
        return real(*a, **k)
    _posixsubprocess.fork_exec = fork_exec


def _on_exec(args):       # os.exec: (path, args, env); os.posix_spawn: (path, argv, env)
    _check_program([args[0]] + _seq(args[1]), None)
    _check_start([args[0]] + _seq(args[1])[1:], None, args[2] if len(args) > 2 else None)
    _started(args[2] if len(args) > 2 else None)


def _on_spawn(args):      # os.spawn: (mode, path, args, env)
    _check_program([args[1]] + _seq(args[2]), None)
    _check_start([args[1]] + _seq(args[2])[1:], None, args[3] if len(args) > 3 else None)
    _started(args[3] if len(args) > 3 else None)


def _on_system(args):     # os.system: (command,) — run by /bin/sh -c
    _check_program(['sh', '-c', args[0]], None)
    _check_start(['/bin/sh', '-c', args[0]], None, None)
    _started(None)


def _on_marshal_load(args):
    """marshal.load(file): bytes read from a file object turned into code (jinja2's bytecode cache: red team 10p,
    case 04). importlib never uses it; after taking in, refused like marshal.loads."""
    if _took['in'] is not None or _took['started']:
        _after_taking_in('marshal.load (bytes turned into code after this process took in a file that is not as '
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
            if _where(p)[0] is None and not _inside_root(name):
                _links_as_approved(name, p, 'python-import')
                return
            try:
                data = _read(p)
            except OSError:
                data = None
            if data is not None:
                check(name, data, 'python-import')
                try:
                    same = bytes(data[16:]) == bytes(args[0])
                except Exception:
                    same = False
                if same:
                    return
    if _took['in'] is not None or _took['started']:
        _after_taking_in('marshal (bytes turned into code after this process took in a file that is not as approved)')


def _on_code_new(args):
    if _took['in'] is not None or _took['started']:
        _after_taking_in('code object built after this process took in a file that is not as approved')


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
            if spec is None or not spec.has_location or _where(os.path.realpath(spec.origin))[0] is not None:
                return False
            m = importlib.import_module(module)
        except Exception:
            return False
    if _where(os.path.realpath(getattr(m, '__file__', '') or '/'))[0] is not None:
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
    return _inside_root(p) and _verdict(p) is None


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
    std = top in getattr(sys, 'stdlib_module_names', ()) and not _inside_root(getattr(m, '__file__', '') or '')
    return isinstance(v, type) and issubclass(v, BaseException) and std


def _on_find_class(args):
    if (_took['in'] is not None or _took['started']) and not _pickle_allowed(args[0], args[1]):
        _after_taking_in('pickle %s.%s (a pickle names what it calls; loaded after this process took in a file that '
                         'is not as approved)' % (args[0], args[1]))


def _on_fork(args):       # os.fork / os.forkpty: the child can read what it likes and hand it back (red team 6p, case 02)
    _took['started'] = True


def _on_ctypes_call(args):
    """A foreign function looked up or called (libc's open through ctypes raises no `open` event: red team 6p, case
    03): what it read is not known, so the workspace is checked at the next compile, as after a program start."""
    _took['started'] = True


_DIRS = []


def _approved_dirs():
    if not _DIRS:
        d = set()
        for k in list(FILES) + list(LINKS):
            parts = k.split('/')
            for i in range(1, len(parts)):
                d.add('/'.join(parts[:i]))
        _DIRS.append(d)
    return _DIRS[0]


def _on_listdir(args):
    """os.listdir / os.scandir (os.walk, glob, pathlib) of a workspace folder: a name that was not there at approval
    is content the pull brought (a file named by code: red team 6p, case 04), taken in like a changed file's text."""
    if _took['in'] is not None or BROKEN is not None or not _state['on']:
        return
    try:
        f = sys._getframe(2)                     # importlib's FileFinder lists a folder on sys.path: each file an
        if f.f_code.co_name == '_fill_cache' and f.f_code.co_filename.startswith('<frozen importlib'):
            return                               # import loads is checked itself, and the names reach no code
    except ValueError:
        pass
    path = args[0] if args else None
    if path is None:
        path = '.'
    if isinstance(path, int):
        try:
            name = _readlink('/proc/self/fd/%d' % path)
        except OSError:
            _took['started'] = True              # a folder that cannot be placed: the workspace at the next compile
            return
    else:
        try:
            name = os.fsdecode(path)
        except TypeError:
            return
    p = os.path.realpath(name)
    if p != ROOT and not p.startswith(ROOT_PREFIX):
        return
    rel = '' if p == ROOT else p[len(ROOT_PREFIX):].replace(os.sep, '/')
    _tls.busy = True
    try:
        try:
            names = os.listdir(p)
        except OSError:
            return
        dirs = _approved_dirs()
        for n in sorted(names):
            r = rel + '/' + n if rel else n
            if r == '.git' or r in FILES or r in LINKS or r in dirs:
                continue
            full = os.path.join(p, n)
            if full in _own:
                continue
            h = ''
            try:
                if os.path.isdir(full) and not os.path.islink(full):
                    if not os.listdir(full):
                        continue                 # an empty folder: no pull makes one, nothing in it
                elif os.path.isfile(full) and os.path.getsize(full) <= TAINT_MAX:
                    with open(full, 'rb') as f:
                        h = _sha(f.read())
            except OSError:
                pass
            _took_in(full, ('new', r, h))
            return
    finally:
        _tls.busy = False


_EVENTS = {
    'os.fork': _on_fork,
    'os.forkpty': _on_fork,
    'ctypes.dlsym': _on_ctypes_call,
    'ctypes.dlsym/handle': _on_ctypes_call,
    'ctypes.call_function': _on_ctypes_call,
    'os.listdir': _on_listdir,
    'os.scandir': _on_listdir,
    'open': _on_open,
    'compile': _on_compile,
    'marshal.loads': _on_marshal,
    'marshal.load': _on_marshal_load,
    'code.__new__': _on_code_new,
    'pickle.find_class': _on_find_class,
    'sqlite3.connect': _on_sqlite,
    'sqlite3.connect/handle': _on_sqlite_handle,
    'os.rename': _on_replace,
    'os.link': _on_replace,
    'ctypes.dlopen': _on_dlopen,
    'subprocess.Popen': _on_popen,
    'os.exec': _on_exec,
    'os.posix_spawn': _on_exec,
    'os.spawn': _on_spawn,
    'os.system': _on_system,
}


def _audit(event, args):
    handler = _EVENTS.get(event)
    if handler is None or getattr(_tls, 'busy', False):
        return
    try:
        handler(args)
    except McpGateGuardRefused:
        raise
    except Exception:                            # the guard's own trouble never breaks an unrelated call
        pass


# ---------------------------------------------------------------------------------------------------------
# Installation
# ---------------------------------------------------------------------------------------------------------

def _prefix(d):
    return d if d.endswith(os.sep) else d + os.sep


class _JsonContext(object):
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo = None

    @staticmethod
    def parse_constant(name):
        raise ValueError('invalid constant %s' % name)


def _parse_json(text):
    """json.loads without importing json (and so re): its C scanner, when present."""
    try:
        from _json import make_scanner
    except ImportError:
        make_scanner = None
    if make_scanner is None:
        import json
        return json.loads(text)
    ctx = _JsonContext()
    ctx.memo = {}
    start = len(text) - len(text.lstrip(' \t\n\r'))
    try:
        value, end = make_scanner(ctx)(text, start)
    except StopIteration:
        raise ValueError('not JSON')
    if text[end:].strip(' \t\n\r'):
        raise ValueError('extra data after the JSON value')
    return value


def _load_manifest(path):
    with open(path, 'rb') as f:
        m = _parse_json(f.read().decode('utf-8-sig'))
    if not isinstance(m, dict) or m.get('version') != 1:
        raise ValueError('not a version 1 manifest')
    root, files = m.get('root'), m.get('files')
    scratch, report = m.get('scratch', []), m.get('report')
    if not isinstance(root, str) or not os.path.isabs(root):
        raise ValueError('"root" is not an absolute path')
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ValueError('"files" is not an object of path -> sha256')
    if not isinstance(scratch, list) or not all(isinstance(s, str) and os.path.isabs(s) for s in scratch):
        raise ValueError('"scratch" is not a list of absolute paths')
    if report is not None and not isinstance(report, str):
        raise ValueError('"report" is not a path')
    approved = m.get('approved', [])
    if not isinstance(approved, list) or not all(isinstance(a, str) for a in approved):
        raise ValueError('"approved" is not a list of sha256')
    links = m.get('links', {})
    if not isinstance(links, dict) or not all(isinstance(v, str) for v in links.values()):
        raise ValueError('"links" is not an object of link texts')
    large = m.get('large', {})
    if not isinstance(large, dict) or not all(isinstance(v, dict) for v in large.values()):
        raise ValueError('"large" is not an object of file records')
    LARGE.update({k.replace('\\', '/'): v for k, v in large.items()})
    return root, files, scratch, report, approved, links


def install():
    """Reads the manifest (fail closed) and installs the path hook and the audit hook. Idempotent."""
    global ROOT, ROOT_PREFIX, FILES, LINKS, APPROVED, SCRATCH, REPORT, BROKEN, SYSTEM, _file_finder_hook
    if _state['on']:
        return True
    manifest = os.environ.get('MCP_GATE_GUARD')
    if not manifest:
        return False
    try:
        root, files, scratch, report, approved, links = _load_manifest(manifest)
        LINKS = {k.replace('\\', '/'): v for k, v in links.items()}
        ROOT = os.path.realpath(root)
        ROOT_PREFIX = _prefix(ROOT)
        FILES = {k.replace('\\', '/'): v.lower() for k, v in files.items()}
        APPROVED = frozenset(FILES.values()) | frozenset(a.lower() for a in approved)
        SCRATCH = tuple(sorted({_prefix(os.path.realpath(s)) for s in scratch}))
        REPORT = report
    except Exception as e:  # unreadable or unparsable: every file outside the interpreter's own folders refused
        BROKEN = '%s: %s' % (type(e).__name__, e)
        ROOT, ROOT_PREFIX = '', '\0'
        dirs = {sys.base_prefix, sys.base_exec_prefix, os.path.dirname(getattr(os, '__file__', '') or '')}
        SYSTEM = tuple(sorted({_prefix(os.path.realpath(d)) for d in dirs if d}))
    _M.SourceFileLoader.get_code = _source_get_code
    _M.SourceFileLoader.exec_module = _exec_module   # records jinja2 as it loaded (a template's compile)
    _M.ExtensionFileLoader.exec_module = _exec_extension
    for n, m in list(sys.modules.items()):          # code generators loaded before the guard (none usually)
        if isinstance(n, str) and _engine_module(n) and m is not None and n not in _engine_as_loaded:
            _engine_as_loaded[n] = _engine_state(m)
    _file_finder_hook = _M.FileFinder.path_hook(
        (_Extension, _M.EXTENSION_SUFFIXES), (_Source, _M.SOURCE_SUFFIXES), (_Sourceless, _M.BYTECODE_SUFFIXES))
    sys.path_hooks.insert(0, _path_hook)
    sys.path_importer_cache.clear()
    # a bytecode cache prefix inside root/scratch would hold unchecked code for files outside them
    prefix = getattr(sys, 'pycache_prefix', None)
    if prefix and _where(os.path.realpath(prefix))[0] is not None:
        sys.pycache_prefix = None
    _START['env'] = dict(os.environ)
    try:
        _START['cwd'] = os.getcwd()
    except OSError:
        pass
    home = os.environ.get('HOME')
    if home and os.path.isabs(home):
        _START['home'] = os.path.realpath(home)
    if os.environ.get(CHILD_VAR):
        _took['started'] = True
    inherited = os.environ.get(TOOK_IN_VAR)
    if inherited:
        try:
            import json
            t = json.loads(inherited)
            _took['in'] = (str(t[0]), t[1], str(t[2]), str(t[3]))
        except Exception:
            _took['in'] = (inherited, None, 'changed', '')
    sys.addaudithook(_audit)
    sys.meta_path.insert(0, _DbmFinder)
    for m in ('readline', '_ssl', 'ssl'):         # imported before the guard (site, an interactive hook)
        if m in sys.modules:
            try:
                _wrap_readers(sys.modules[m])
            except Exception:
                pass
    _wrap_readlink()
    _wrap_open()
    _wrap_fork_exec()
    _state['on'] = True
    _network_shim()
    return True


NETSHIM = '/run/mcp-gate/net-shim.py'


def _network_shim():
    """In a sandbox with a network door, MCP Gate's Python network shim (src/netshim/mcp_gate_netshim.py), shown
    read-only at this one place, carries raw TCP and names through the door; run before any code of the server."""
    if not os.environ.get('MCP_GATE_DOOR') or not os.path.isfile(NETSHIM) or _where(os.path.realpath(NETSHIM))[0]:
        return
    g = {'__name__': 'mcp_gate_netshim', '__file__': NETSHIM}
    try:
        data = _read(NETSHIM)
        _tls.busy = True
        try:
            code = compile(data, NETSHIM, 'exec', dont_inherit=True)
        finally:
            _tls.busy = False
        exec(code, g)
        g['install']()
    except Exception as e:  # the network shim's trouble never stops the server: its connections fail as before
        try:
            os.write(2, ('mcp-gate: the network shim did not load: %s\n' % e).encode('utf-8', 'replace'))
        except OSError:
            pass


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
    global OPTIMIZE
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
    OPTIMIZE = values['optimize']
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
        if _where(os.path.realpath(pre))[0] is None:
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
        exempt = _took['in'] is None or _multiprocessing_line([o['command']])
        _tls.busy = exempt
        try:
            if not exempt:
                _after_taking_in('-c (the command line of a child whose parent took in a file that is not as '
                                 'approved: text turned into code after this process took in a file that is not as '
                                 'approved)')
            code = compile(o['command'], '<string>', 'exec', dont_inherit=True, optimize=OPTIMIZE)
        except McpGateGuardRefused:
            sys.exit(1)
        finally:
            _tls.busy = False
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
        data = _read(full)                         # read once, checked here whatever its name, then compiled
    except OSError as e:
        sys.stderr.write("%s: can't open file %r: [Errno %s] %s\n" % (
            (getattr(sys, 'orig_argv', None) or [sys.executable])[0], full, e.errno, e.strerror))
        sys.exit(2)
    try:
        check(full, data, 'script')
    except McpGateGuardRefused:
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
    code = _compile(data, full)
    del data
    exec(code, g)


def _trim(tb):
    skip = {GUARD_FILE}
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
    install()
    # the guard's own folder is not the program's sys.path[0]
    if not getattr(sys.flags, 'safe_path', False) and sys.path and \
            os.path.realpath(sys.path[0] or '.') == os.path.dirname(os.path.realpath(GUARD_FILE)):
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
        except McpGateGuardRefused:
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
            _tls.busy = True                     # Python's own display parses the lines it shows: not a load
        try:
            sys.excepthook(type(e), e, tb)
        finally:
            _tls.busy = False
        if inspect:
            os.environ['PYTHONINSPECT'] = '1'
            return
        sys.exit(1)
    if inspect:
        os.environ['PYTHONINSPECT'] = '1'


if __name__ == '__main__':
    main(sys.argv[1:])
