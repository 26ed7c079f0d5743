# mcp_gate_guard_parts/gitfiles.py — git after taking in (src/guard/CONTRACT.md, "git after taking in"): git's own
# options and its subcommand's, and the files git obeys when it starts — configuration (system, global, every
# repository found from its working folder up, named by an argument or by a remote's local URL, their
# config.worktree, commondir and include.path) and hooks. git runs what they say (an alias `!…`, core.fsmonitor,
# core.hooksPath, a hook, a filter, a pager), so once this process took in what is not as approved, each of them in
# the workspace or a scratch folder that is not as approved may hold only the table's `config_keys`, and no hook may
# be such a file (red team 19). The table's `git` section (command_lines.json) is shared with the Node guard (git.ts).
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import re as _re
from . import state, rule

_MAX = 64                     # repositories and configuration files looked at; more is not safe (bounded work)
_MAX_BYTES = 1024 * 1024


def load(t):
    """The table's `git` section made ready (compiled patterns); raises ValueError when it is not as described."""
    g = t.get('git')
    if not isinstance(g, dict):
        raise ValueError('no "git" section')
    keys, sub_code, takes = g.get('config_keys'), g.get('sub_code'), g.get('takes_value')
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError('"git.config_keys" is not a list of patterns')
    if not isinstance(takes, list) or not all(isinstance(k, str) for k in takes):
        raise ValueError('"git.takes_value" is not a list of options')
    if not isinstance(sub_code, dict) or not all(isinstance(v, list) and all(isinstance(c, str) and c for c in v)
                                                for v in sub_code.values()):
        raise ValueError('"git.sub_code" is not a map of lists of options')
    if not isinstance(g.get('subcommands'), str):
        raise ValueError('"git.subcommands" is not a pattern')
    n = g.get('neutral')
    if not isinstance(n, dict) or not isinstance(n.get('env'), dict) or not isinstance(n.get('config'), list) or \
            not all(isinstance(kv, list) and len(kv) == 2 and all(isinstance(x, str) for x in kv) for kv in n['config']):
        raise ValueError('"git.neutral" is not as described')
    neutral = dict(n['env'])
    neutral['GIT_CONFIG_COUNT'] = str(len(n['config']))
    for i, (k, v) in enumerate(n['config']):
        neutral['GIT_CONFIG_KEY_%d' % i] = k
        neutral['GIT_CONFIG_VALUE_%d' % i] = v
    return {'keys': tuple(_re.compile(k) for k in keys), 'subs': _re.compile(g['subcommands']),
            'sub_code': {k: frozenset(v) for k, v in sub_code.items()}, 'takes': frozenset(takes), 'neutral': neutral}


def words_why(words, code, base, g, code_option):
    """git's words after its name: why not safe (a str), None for git alone, or (folder it works in, words after the
    subcommand)."""
    d = base or os.getcwd()
    i = 0
    while i < len(words) and words[i].startswith('-'):
        w = words[i]
        c = code_option(w, code)
        if c is not None:
            return 'given %s' % (c if c == w else '%s (%s)' % (w[:80], c))
        if w == '-C':
            d = os.path.join(d, words[i + 1] if i + 1 < len(words) else '')
        if w in g['takes']:
            i += 1
        i += 1
    if i >= len(words):
        return None
    sub = words[i]
    if not g['subs'].match(sub):
        return 'git %s, not a git command of the table' % sub[:80]
    rest = words[i + 1:]
    for w in rest:
        c = code_option(w, g['sub_code'].get(sub, frozenset()))
        if c is not None:
            return 'git %s given %s' % (sub, c if c == w else '%s (%s)' % (w[:80], c))
    return os.path.normpath(d), rest


def config_entries(text):
    """[(key, value)] of a git configuration text (section and name lower-cased, a subsection kept), or None when a
    line is none that git and this reader read alike (a value continued on the next line, a key before a section)."""
    out = []
    section = None
    for raw in text.split('\n'):
        line = raw.rstrip('\r').strip()
        if not line or line[0] in '#;':
            continue
        if line.replace('\\\\', '').endswith('\\'):
            return None
        m = _re.match(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\](.*)$', line)
        if m:
            name = m.group(1).lower()
            section = name if m.group(2) is None else '%s.%s' % (name, _re.sub(r'\\(.)', r'\1', m.group(2)))
            line = m.group(3).strip()
            if not line or line[0] in '#;':
                continue
        kv = _re.match(r'^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$', line)
        if kv is None or section is None:
            return None
        out.append(('%s.%s' % (section, kv.group(1).lower()), _unquote(kv.group(2) if kv.group(2) is not None
                                                                      else 'true')))
    return out


def _unquote(v):
    out, quoted, i = [], False, 0
    while i < len(v):
        c = v[i]
        if c == '"':
            quoted = not quoted
        elif c == '\\' and i + 1 < len(v):
            i += 1
            out.append({'n': '\n', 't': '\t'}.get(v[i], v[i]))
        elif not quoted and c in '#;':
            break
        else:
            out.append(c)
        i += 1
    return ''.join(out).strip()


def _local(v, frm, home):
    """A value naming a local path (a remote's URL, an include) made absolute from frm; None for a host's URL."""
    if v.startswith('file://'):
        return v[len('file://'):]
    if v.startswith('~/') and home:
        return os.path.join(home, v[2:])
    if not v.startswith('/') and _re.match(r'^[A-Za-z][A-Za-z0-9+.-]*::?', v):
        return None
    return os.path.normpath(os.path.join(frm, v))


def _text(p):
    try:
        rp = os.path.realpath(p)
        if rule._stat(rp).st_size > _MAX_BYTES:
            return None
        return rule._read(rp).decode('utf-8', 'replace')
    except (OSError, ValueError):
        return None


def _as_approved(p):
    """As approved, or outside the workspace and scratch folders and not changed since the approval began (one the
    process's own git wrote elsewhere — `git init /elsewhere`, `git config` — is not, when it can write it: red team
    21, g01)."""
    try:
        rp = os.path.realpath(p)
        if rule._verdict(rp) is not None:
            return False
        if state.SINCE is None or not os.path.exists(rp) or os.stat(rp).st_ctime_ns // 1000000 <= state.SINCE:
            return True
        return not os.access(rp, os.W_OK)
    except (OSError, ValueError):
        return False


def obeys_changed(d, args, env, g):
    """Why git, working in d with the words after its subcommand `args` and the environment env, may obey a file
    that is not as approved, else None."""
    was = getattr(state._tls, 'busy', False)
    state._tls.busy = True                       # (the guard's own looks: no audit event of them counts)
    try:
        return _obeys_changed(d, args, env, g)
    finally:
        state._tls.busy = was


def neutral(target, g):
    """The table's `git.neutral` put in a start's environment (a dict, or os.environ when it inherits this process's):
    git opens no editor or pager, runs no hook, enters no submodule. Returns the variables it set."""
    if g is None:
        return {}
    for k in [k for k in target if k.startswith('GIT_CONFIG_KEY_') or k.startswith('GIT_CONFIG_VALUE_')]:
        del target[k]
    target.update(g['neutral'])
    return g['neutral']


def _obeys_changed(d, args, env, g):
    home = env.get('HOME')
    configs, git_dirs, hook_dirs, seen = [], [], [], set()

    def repo(x):
        dot = os.path.join(x, '.git')
        if os.path.isdir(dot):
            git_dirs.append(dot)
        elif os.path.isfile(dot):
            # (as git reads it: the whole text after "gitdir: ", only its trailing CR and LF taken off — red team 21)
            t = (_text(dot) or '').rstrip('\r\n')
            if t.startswith('gitdir: '):
                git_dirs.append(os.path.normpath(os.path.join(x, t[len('gitdir: '):])))
        head = os.path.join(x, 'HEAD')                # (a HEAD link into refs/ counts: red team 21, g07)
        if (os.path.isfile(head) or os.path.islink(head)) and (os.path.isdir(os.path.join(x, 'objects')) or any(
                os.path.isfile(os.path.join(x, n)) for n in ('commondir', 'config'))):
            git_dirs.append(x)                   # (a bare repository, or a folder git may take as one)
    if env.get('GIT_CONFIG_GLOBAL') is not None:
        configs.append(os.path.join(d, env['GIT_CONFIG_GLOBAL']))
    elif home:
        configs += [os.path.join(home, '.gitconfig'),
                    os.path.join(env.get('XDG_CONFIG_HOME') or os.path.join(home, '.config'), 'git', 'config')]
    configs.append(env.get('GIT_CONFIG_SYSTEM') or '/etc/gitconfig')
    if env.get('GIT_DIR'):
        git_dirs.append(os.path.join(d, env['GIT_DIR']))
    x = d
    while True:
        repo(x)
        if os.path.dirname(x) == x:
            break
        x = os.path.dirname(x)
    def local(p):                               # (at <path>.git too: receive-pack's own lookup, red team 21)
        if p is not None:
            for c in (p, p + '.git'):
                if os.path.isdir(c):
                    repo(c)
    for a in args:
        if not a.startswith('-'):
            local(_local(a, d, home))
    gi = ci = 0
    while True:
        if gi < len(git_dirs):
            gd = git_dirs[gi]
            gi += 1
            if ('d', gd) in seen:
                continue
            seen.add(('d', gd))
            configs += [os.path.join(gd, 'config'), os.path.join(gd, 'config.worktree')]
            hook_dirs.append(os.path.join(gd, 'hooks'))
            common = _text(os.path.join(gd, 'commondir'))
            if common is not None:
                git_dirs.append(os.path.normpath(os.path.join(gd, common.strip())))
            continue
        if ci >= len(configs):
            break
        f = configs[ci]
        ci += 1
        if ('c', f) in seen or not os.path.isfile(f):
            continue
        seen.add(('c', f))
        if len(seen) > _MAX:
            return 'git, obeying more than %d repositories and configuration files' % _MAX
        approved = _as_approved(f)
        text = _text(f)
        entries = None if text is None else config_entries(text)
        if entries is None:
            if not approved:
                return 'git, obeying %s, which is not as approved and not plain git configuration' % f
            continue
        for key, value in entries:
            if not approved and not any(k.match(key) for k in g['keys']):
                return 'git, obeying %s (%s), which is not as approved' % (f, key)
            if key == 'include.path' or (key.startswith('includeif.') and key.endswith('.path')):
                p = _local(value, os.path.dirname(f), home)
                if p is not None:
                    configs.append(p)
            elif key == 'core.hookspath':
                p = _local(value, d, home)
                if p is not None:
                    hook_dirs.append(p)
            elif key.startswith('remote.') and (key.endswith('.url') or key.endswith('.pushurl')):
                local(_local(value, d, home))
    for h in hook_dirs:
        if ('h', h) in seen:
            continue
        seen.add(('h', h))
        try:
            names = os.listdir(h)
        except OSError:
            continue
        for n in names:
            if not n.endswith('.sample') and not _as_approved(os.path.join(h, n)):
                return 'git, with the hook %s, which is not as approved' % os.path.join(h, n)
    return None
