# mcp_gate_guard_parts/installing.py — Installation: reading the manifest (fail closed), installing the path hook, the
# audit hook and the wrappers, and the network shim.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import sys
from importlib import machinery as _M
from . import state, rule, loaders, reads, places, engines, children, audit, pickles


_parse_json = state._parse_json         # (in state.py: programs.py reads its table with it before this part loads)


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
    state.LARGE.update({k.replace('\\', '/'): v for k, v in large.items()})
    since = m.get('since')
    if since is not None and (isinstance(since, bool) or not isinstance(since, (int, float)) or since != since):
        raise ValueError('"since" is not a number of milliseconds')
    state.SINCE = since
    folders = m.get('folders')
    if folders is not None and (not isinstance(folders, list) or not all(isinstance(f, str) for f in folders)):
        raise ValueError('"folders" is not a list of folder paths')
    state.FOLDERS = frozenset(f.replace('\\', '/').strip('/') for f in folders) if folders is not None else None
    return root, files, scratch, report, approved, links


def install():
    """Reads the manifest (fail closed) and installs the path hook and the audit hook. Idempotent."""
    if state._state['on']:
        return True
    manifest = os.environ.get('MCP_GATE_GUARD')
    if not manifest:
        return False
    try:
        root, files, scratch, report, approved, links = _load_manifest(manifest)
        state.LINKS = {k.replace('\\', '/'): v for k, v in links.items()}
        state.ROOT = os.path.realpath(root)
        state.ROOT_PREFIX = rule._prefix(state.ROOT)
        state.FILES = {k.replace('\\', '/'): v.lower() for k, v in files.items()}
        state.APPROVED = frozenset(state.FILES.values()) | frozenset(a.lower() for a in approved)
        state.SCRATCH = tuple(sorted({rule._prefix(os.path.realpath(s)) for s in scratch}))
        state.REPORT = report
    except Exception as e:  # unreadable or unparsable: every file outside the interpreter's own folders refused
        state.BROKEN = '%s: %s' % (type(e).__name__, e)
        state.ROOT, state.ROOT_PREFIX = '', '\0'
        dirs = {sys.base_prefix, sys.base_exec_prefix, os.path.dirname(getattr(os, '__file__', '') or '')}
        state.SYSTEM = tuple(sorted({rule._prefix(os.path.realpath(d)) for d in dirs if d}))
    _M.SourceFileLoader.get_code = loaders._source_get_code
    _M.SourceFileLoader.exec_module = engines._exec_module   # records jinja2 as it loaded (a template's compile)
    _M.ExtensionFileLoader.exec_module = engines._exec_extension
    for n, m in list(sys.modules.items()):          # code generators loaded before the guard (none usually)
        if isinstance(n, str) and engines._engine_module(n) and m is not None and n not in engines._engine_as_loaded:
            engines._engine_as_loaded[n] = engines._engine_state(m)
    state._file_finder_hook = _M.FileFinder.path_hook(
        (loaders._Extension, _M.EXTENSION_SUFFIXES), (loaders._Source, _M.SOURCE_SUFFIXES), (loaders._Sourceless, _M.BYTECODE_SUFFIXES))
    sys.path_hooks.insert(0, loaders._path_hook)
    sys.path_importer_cache.clear()
    # a bytecode cache prefix inside root/scratch would hold unchecked code for files outside them
    prefix = getattr(sys, 'pycache_prefix', None)
    if prefix and rule._where(os.path.realpath(prefix))[0] is not None:
        sys.pycache_prefix = None
    state._START['env'] = dict(os.environ)
    try:
        state._START['cwd'] = os.getcwd()
    except OSError:
        pass
    home = os.environ.get('HOME')
    if home and os.path.isabs(home):
        state._START['home'] = os.path.realpath(home)
    if os.environ.get(state.CHILD_VAR):
        state._took['started'] = True
    inherited = os.environ.get(state.TOOK_IN_VAR)
    if inherited:
        try:
            import json
            t = json.loads(inherited)
            state._took['in'] = (str(t[0]), t[1], str(t[2]), str(t[3]))
        except Exception:
            state._took['in'] = (inherited, None, 'changed', '')
    sys.addaudithook(audit._audit)
    sys.meta_path.insert(0, reads._DbmFinder)
    sys.meta_path.insert(0, pickles._PickleFinder)
    if 'pickle' in sys.modules:
        pickles._patch_pickle(sys.modules['pickle'])
    for m in ('readline', '_ssl', 'ssl'):         # imported before the guard (site, an interactive hook)
        if m in sys.modules:
            try:
                reads._wrap_readers(sys.modules[m])
            except Exception:
                pass
    reads._wrap_readlink()
    reads._wrap_open()
    places._wrap_looks()
    places._wrap_file_finder(_M.FileFinder)
    children._wrap_fork_exec()
    state._state['on'] = True
    _network_shim()
    return True


NETSHIM = '/run/mcp-gate/net-shim.py'


def _network_shim():
    """In a sandbox with a network door, MCP Gate's Python network shim (src/netshim/mcp_gate_netshim.py), shown
    read-only at this one place, carries raw TCP and names through the door; run before any code of the server."""
    if not os.environ.get('MCP_GATE_DOOR') or not os.path.isfile(NETSHIM) or rule._where(os.path.realpath(NETSHIM))[0]:
        return
    g = {'__name__': 'mcp_gate_netshim', '__file__': NETSHIM}
    try:
        data = rule._read(NETSHIM)
        state._tls.busy = True
        try:
            code = compile(data, NETSHIM, 'exec', dont_inherit=True)
        finally:
            state._tls.busy = False
        exec(code, g)
        g['install']()
    except Exception as e:  # the network shim's trouble never stops the server: its connections fail as before
        try:
            os.write(2, ('mcp-gate: the network shim did not load: %s\n' % e).encode('utf-8', 'replace'))
        except OSError:
            pass
