# mcp_gate_guard_parts/rule.py — The rule (src/guard/CONTRACT.md): where a real path lies (root, scratch, neither),
# whether its bytes are what was approved, the refusal (its stderr line and its report record) and the symbolic-link
# checks.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import errno
import os
from . import state


# ---------------------------------------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------------------------------------

def _sha(data):
    return state._sha256(data).hexdigest()


def _open_real(p, flags=os.O_RDONLY):
    """A descriptor for the real path p; one longer than a call may name (ENAMETOOLONG: a workspace folder deeper than
    PATH_MAX, which the server reaches by changing into it and reads by a relative name) folder by folder."""
    was = getattr(state._tls, 'busy', False)
    state._tls.busy = True                       # the guard's own opens raise the `open` audit event too
    try:
        return _open_steps(p, flags | getattr(os, 'O_CLOEXEC', 0))
    finally:
        state._tls.busy = was


def _open_steps(p, flags):
    try:
        return state._open(p, flags)
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            raise
    parts = [x for x in p.split(os.sep) if x]
    fd = state._open(os.sep, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_CLOEXEC', 0))
    try:
        for part in parts[:-1]:
            nxt = state._open(part, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_CLOEXEC', 0), dir_fd=fd)
            os.close(fd)
            fd = nxt
        return state._open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _stat(p):
    """os.stat of a real path, also one too long to name in one call (_open_real)."""
    try:
        return os.stat(p)
    except OSError as e:
        if e.errno != errno.ENAMETOOLONG:
            raise
    fd = _open_real(p, getattr(os, 'O_PATH', os.O_RDONLY))
    try:
        return os.stat(fd)
    finally:
        os.close(fd)


def _plain(path):
    """A str or bytes subclass as the plain value the opener uses (its own methods, which os.path calls, may lie)."""
    if isinstance(path, str) and type(path) is not str:
        return str.__str__(path)
    if isinstance(path, bytes) and type(path) is not bytes:
        return b''.join((path,))
    return path


def _read(p):
    was = getattr(state._tls, 'busy', False)
    state._tls.busy = True
    try:
        with open(_open_real(p), 'rb') as f:
            return f.read()
    finally:
        state._tls.busy = was


def _anon(p):
    """A real path that names no file of the file system: what /proc/self/fd/N resolves to for a memfd
    ('/memfd:x (deleted)'), an unlinked file ('/tmp/x (deleted)') or a pipe ('.../pipe:[7]'). Only the server made
    it, as a scratch file; its bytes are read through the name it was reached by (red team 13, cases 02-04)."""
    return p.startswith('/memfd:') or p.endswith(' (deleted)') or ':[' in os.path.basename(p)


def _source(name, p):
    """Where the bytes of the file named `name` (real path p) are read from: p, or the name when p names no file."""
    return name if _anon(p) or (not os.path.lexists(p) and os.path.exists(name)) else p


def _where(p, anon=False):
    """'root' (with rel), 'scratch', or None (not ours to check) for a real path p (anon: it names no file, _source)."""
    if not state._state['on']:
        return None, None
    if state.BROKEN is not None:
        for d in state.SYSTEM:
            if p == d or p.startswith(d):
                return None, None
        return 'broken', None
    if anon or _anon(p):
        return 'scratch', None
    if p.startswith(state.ROOT_PREFIX):
        return 'root', p[len(state.ROOT_PREFIX):].replace(os.sep, '/')
    for d in state.SCRATCH:
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


def _verdict(p, data=None, name=None):
    """None when the real path p may become code; else (why, rel, sha). `name`: how it was reached (read through it
    when p names no file)."""
    src = p if name is None else _source(name, p)
    kind, rel = _where(p, src != p)
    if kind is None:
        return None
    if data is None:
        try:
            data = _read(src)
        except (OSError, ValueError):
            if src != p:
                return 'scratch', None, ''           # it opens, but cannot be read to be checked: refused
            return None                              # the runtime cannot read it either: its own error follows
    h = _sha(data)
    if kind == 'root':
        want = state.FILES.get(rel)
        if want == h:
            return None
        return ('changed' if want is not None else 'new'), rel, h
    if kind == 'scratch':
        return (None if h in state.APPROVED else ('scratch', None, h))
    return 'manifest', rel, h


# Said at the end of a rule that approving again cannot satisfy: MCP Gate then does not suggest approving (CONTRACT.md).
AGAIN = 'approving again does not change this'

_REASONS = {
    'changed': 'it changed since approval',
    'new': 'it is not in what was approved',
    'scratch': 'a file written outside the workspace that was not approved',
    'sink': 'it was asked to start a program the guard could not follow',
    'codec': 'its coding declaration names a codec registered at run time, not one of Python\'s own, so the text '
             'it decodes to is not what was approved: declare utf-8 or one of Python\'s codecs (' + AGAIN + ')',
    'unlistable': 'a folder of the workspace that cannot be listed, so what it holds cannot be compared with the '
                  'approval: make it readable, or move it out of the workspace (' + AGAIN + ')',
}


def _message(p, rel, why):
    if why == 'manifest':
        reason = 'the approval manifest %s could not be read (%s)' % (os.environ.get('MCP_GATE_GUARD'), state.BROKEN)
    else:
        reason = _REASONS[why]
    return 'mcp-gate-guard: refused to load %s (%s): %s' % (p, rel if rel is not None else 'null', reason)


def _in_home(p):
    home = state._START['home']
    return bool(home) and home != '/' and (p == home or p.startswith(_prefix(home)))


def _refuse(p, rel, why, h, how):
    msg = _message(p, rel, why)
    if why == 'scratch' and isinstance(p, str) and _in_home(p):
        # approving again cannot help: the file is no workspace file, and the home outlives the start (red team 7p, 11)
        how = '%s; it is in the server\'s own home (%s), which is kept between its starts, so approving again does ' \
              'not remove it: delete %s' % (how, state._START['home'], p)
        msg += ' (%s)' % how
    elif 'after this process took in' in how or why in ('sink', 'codec') or ' needs ' in how or 'environment' in how:
        msg += ' (%s)' % how
    if why in ('unlistable', 'codec'):           # MCP Gate's records know the why values of the contract: the
        _tell((p, h, how), msg, lambda: _append_report(p, rel, 'sink', h, how, rule=msg))   # rule says it instead
    else:
        _tell((p, h, how), msg, lambda: _append_report(p, rel, why, h, how))
    raise state.McpGateGuardRefused(msg, path=p)


def _tell(key, msg, report):
    """Says a refusal once per key: the line on stderr, and the record in the report MCP Gate reads."""
    if key in state._told:
        return
    state._told.add(key)
    try:
        os.write(2, (msg + '\n').encode('utf-8', 'replace'))
    except OSError:
        pass
    if state.REPORT:
        report()


def _refuse_unchecked(event, args, err):
    """Refuses what an audit event was about when the guard's check of it raised (fail closed): the message and the
    report name the event, what it was about and the error, for the person to report to MCP Gate."""
    first = args[0] if isinstance(args, tuple) and args else None
    try:
        p = os.fsdecode(first) if isinstance(first, (str, bytes)) else '(%s)' % event
    except Exception:
        p = '(%s)' % event
    reason = 'the guard could not check %s (%s: %s), so it is refused; this is a fault of MCP Gate\'s guard: ' \
             'report it with this line' % (event, type(err).__name__, str(err)[:200])
    msg = 'mcp-gate-guard: refused %s: %s' % (p, reason)
    _tell((p, event, type(err).__name__), msg, lambda: _append_report(p, None, 'sink', '', event, rule=reason))
    raise state.McpGateGuardRefused(msg, path=p)


def _append_report(p, rel, why, h, how, rule=None):
    import json
    import time
    now = time.time()
    stamp = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(now)) + '.%03dZ' % int((now % 1) * 1000)
    rec = {'file': p, 'rel': rel, 'why': why, 'sha256': h, 'runtime': 'python', 'how': how, 'pid': os.getpid(),
           'time': stamp}
    if why == 'scratch' and isinstance(p, str) and _in_home(p):
        rec['home'] = True
    if rule:
        rec['rule'] = rule
    line = json.dumps(rec, ensure_ascii=False) + '\n'
    state._tls.busy = True
    try:
        fd = os.open(state.REPORT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode('utf-8'))
        finally:
            os.close(fd)
    except OSError:
        pass
    finally:
        state._tls.busy = False


def _link_verdict(path, p):
    """For a path named inside the workspace that resolved outside it (p): None when the first symbolic link on the
    way is one the approval recorded with the same text; else (link path, rel, why)."""
    if not state._state['on'] or state.BROKEN is not None or p.startswith(state.ROOT_PREFIX):
        return None
    try:
        lex = os.path.abspath(os.fsdecode(path))
    except (TypeError, ValueError):
        return None
    if not lex.startswith(state.ROOT_PREFIX):
        return None
    cur, rel = state.ROOT, ''
    for part in lex[len(state.ROOT_PREFIX):].split(os.sep):
        if not part:
            continue
        cur = os.path.join(cur, part)
        rel = rel + '/' + part if rel else part
        try:
            if not os.path.islink(cur):
                if os.path.isdir(cur):
                    continue
                return None
            text = state._readlink(cur)
        except OSError:
            text = None
        if state.LINKS.get(rel) != text:
            return cur, rel, ('changed' if rel in state.LINKS or rel in state.FILES else 'new')
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
        return state._state['on'] and state.BROKEN is None and os.path.abspath(os.fsdecode(path)).startswith(state.ROOT_PREFIX)
    except (TypeError, ValueError):
        return False


def check(path, data=None, how='open'):
    """Applies the rule to a file about to become code; raises McpGateGuardRefused when it is refused."""
    p = os.path.realpath(path)
    _links_as_approved(path, p, how)
    v = _verdict(p, data, path)
    if v is not None:
        _refuse(p, v[1], v[0], v[2], how)
    return p
def _prefix(d):
    return d if d.endswith(os.sep) else d + os.sep
