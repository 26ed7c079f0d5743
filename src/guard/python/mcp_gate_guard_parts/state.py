# mcp_gate_guard_parts/state.py — The guard's shared state: the manifest as read (ROOT, FILES, SCRATCH, …), what this
# process took in and was started with, the exception a refusal raises, and the JSON reader (for the manifest and
# programs.py's table). Every other part reads these as attributes of this module (`state.ROOT`), never as copies,
# since install() and the command line assign them once the parts are loaded.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.

import _thread
import os

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
GUARD_FILE = None               # absolute path of mcp_gate_guard.py, the entry (set as it loads the parts)
GUARD_FILES = frozenset()      # it and every part: the guard's own frames
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
_gone = set()                  # of those, names it removed (and has not made again): only their absence is its own


def _is_own(p):
    """p is a name this process made (created, truncated, a folder), or removed and is still gone: whatever is there
    at a removed name another process put there (a child's `git init`, a `mv`: red team 20, r10)."""
    return p in _own and (p not in _gone or not os.path.lexists(p))
_readlink = os.readlink         # the guard's own: os.readlink is wrapped for the server's (_on_readlink)
_open = os.open                 # the guard's own: os.open is wrapped for the server's (_wrap_open)
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
FOLDERS = None                 # rel of each folder holding no file or link at approval (manifest "folders"), or None
SINCE = None                   # ms since the epoch when the approval's measure began (manifest "since"), or None
_looked = set()                # absolute names the server looked at by a metadata call (stat, exists, ...): compared
_scanned = set()               # folders it scandir'ed (each entry's kind, size, times): with the approval lazily
_START = {'env': {}, 'cwd': '/', 'home': None}   # what this process was started with (MCP Gate's, or a checked parent's)
_file_finder_hook = None
_TYPE_NODES = None


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
