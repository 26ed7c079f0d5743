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
    e = g.get('editor')
    if not isinstance(e, dict) or not all(isinstance(e.get(k), list) for k in ('subcommands', 'opens', 'message',
                                                                               'default')) \
            or not isinstance(e.get('when'), dict):
        raise ValueError('"git.editor" is not as described')
    return {'keys': tuple(_re.compile(k) for k in keys), 'subs': _re.compile(g['subcommands']),
            'sub_code': {k: frozenset(v) for k, v in sub_code.items()}, 'takes': frozenset(takes),
            'editor': {k: (frozenset(v) if isinstance(v, list) else {a: frozenset(b) for a, b in v.items()})
                       for k, v in e.items() if k != 'about'}}


def _may_edit(sub, rest, g, code_option):
    """The subcommand and the words after it may open an editor (the table's `editor`)."""
    e = g['editor']
    if sub not in e['subcommands']:
        return False

    def has(opts):
        return any(code_option(w, opts) is not None for w in rest)
    return (has(e['opens']) or sub in e['default'] or has(e['when'].get(sub, frozenset()))) and not has(e['message'])


def words_why(words, code, base, g, code_option):
    """git's words after its name: why not safe (a str), None for git alone, or (folder it works in, words after the
    subcommand, the subcommand when it may open an editor else None)."""
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
    return os.path.normpath(d), rest, (sub if _may_edit(sub, rest, g, code_option) else None)


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
    try:
        return rule._verdict(os.path.realpath(p)) is None
    except (OSError, ValueError):
        return False


def obeys_changed(d, args, env, g, edits=None):
    """Why git, working in d with the words after its subcommand `args` and the environment env, may obey a file
    that is not as approved (or open an editor, when `edits` names its subcommand), else None."""
    was = getattr(state._tls, 'busy', False)
    state._tls.busy = True                       # (the guard's own looks: no audit event of them counts)
    try:
        editor = []
        why = _obeys_changed(d, args, env, g, editor)
        return why if why is not None or edits is None else _editor_opens(edits, env, editor[-1] if editor else None)
    finally:
        state._tls.busy = was


def _editor_opens(sub, env, core):
    """git `sub` may open an editor: the one git finds (GIT_EDITOR, core.editor, VISUAL when TERM names a terminal,
    EDITOR, else vi when it does) reads startup files of its own (~/.vimrc): why not safe, unless `:` or `true`."""
    term = env.get('TERM')
    dumb = not term or term == 'dumb'
    found = env.get('GIT_EDITOR') or core or (not dumb and env.get('VISUAL')) or env.get('EDITOR') or \
        (None if dumb else 'vi')
    if not found or _re.match(r'^\s*(:|(/usr)?(/bin/)?true)\s*$', found):
        return None
    return 'git %s, which may open an editor (%s) that reads startup files of its own' % (sub, found[:80])


def _obeys_changed(d, args, env, g, editor):
    home = env.get('HOME')
    configs, git_dirs, hook_dirs, seen = [], [], [], set()

    def repo(x):
        dot = os.path.join(x, '.git')
        if os.path.isdir(dot):
            git_dirs.append(dot)
        elif os.path.isfile(dot):
            m = _re.search(r'(?m)^gitdir:\s*(.+?)\s*$', _text(dot) or '')
            if m:
                git_dirs.append(os.path.normpath(os.path.join(x, m.group(1))))
        if os.path.isfile(os.path.join(x, 'HEAD')) and (os.path.isdir(os.path.join(x, 'objects')) or any(
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
    for a in args:
        if not a.startswith('-'):
            p = _local(a, d, home)
            if p is not None and os.path.isdir(p):
                repo(p)
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
            elif key == 'core.editor' and value:
                editor.append(value)
            elif key == 'core.hookspath':
                p = _local(value, d, home)
                if p is not None:
                    hook_dirs.append(p)
            elif key.startswith('remote.') and (key.endswith('.url') or key.endswith('.pushurl')):
                p = _local(value, d, home)
                if p is not None and os.path.isdir(p):
                    repo(p)
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
