# mcp_gate_guard.py — MCP Gate's Python load guard (issue 43; the rule is src/guard/CONTRACT.md): its entry.
#
# Runs INSIDE an MCP server's Python processes and refuses to load any workspace file whose content differs
# from what a person approved. The sandbox's python wrapper starts EVERY python as
#
#     <real python> -S <this file> <the original python arguments...>
#
# so the guard parses Python's own command-line grammar, installs itself (a path hook with checking loaders + a
# PEP 578 audit hook), runs site.main() unless the original arguments had -S (so .pth files are opened under the
# audit hook), and then runs the target like Python would (script, -m module, -c code).
# Standard library only; Python 3.8+ syntax. Configuration: MCP_GATE_GUARD = path of the JSON manifest.
#
# The guard's code is the folder mcp_gate_guard_parts/ beside this file, one module per concern (PARTS, in the order
# they load; their shared state is mcp_gate_guard_parts/state.py). This file loads them by its own path, never
# through sys.path (which the server sets: PYTHONSAFEPATH, -P, -I, a folder of its own by that name), before any
# hook of the guard is on: each part's source is compiled as this one file was (no bytecode read or written) into a
# module whose __name__ is this module's, so the guard's functions and classes carry the names they had when the
# guard was one file, and the parts are taken out of sys.modules again once loaded (the process's modules are what
# they were). The guard's names (McpGateGuardRefused, LOADER_EXACT, install, …) are read through this module.
import os
import sys

_PACKAGE = 'mcp_gate_guard_parts'
PARTS = ('state', 'rule', 'loaders', 'reads', 'places', 'gitfiles', 'compiles', 'engines', 'programs', 'native',
         'children', 'pickles', 'audit', 'installing', 'cmdline')


def _load_parts():
    here = os.path.abspath(__file__)
    folder = os.path.join(os.path.dirname(here), _PACKAGE)
    package = type(sys)(_PACKAGE)
    package.__path__ = [folder]
    package.__package__ = _PACKAGE
    parts = {}
    for name in PARTS:
        m = type(sys)('%s.%s' % (_PACKAGE, name))
        m.__file__ = os.path.join(folder, name + '.py')
        m.__package__ = _PACKAGE
        setattr(package, name, m)
        parts[name] = m
    names = [_PACKAGE] + ['%s.%s' % (_PACKAGE, name) for name in PARTS]
    before = {n: sys.modules[n] for n in names if n in sys.modules}
    sys.modules[_PACKAGE] = package
    for name in PARTS:
        sys.modules['%s.%s' % (_PACKAGE, name)] = parts[name]
    try:
        for name in PARTS:              # `from . import x` in a part finds x here, loaded or still empty
            m = parts[name]
            with open(m.__file__, 'rb') as f:
                code = compile(f.read(), m.__file__, 'exec', dont_inherit=True)
            m.__name__ = __name__
            exec(code, m.__dict__)
            if name == 'state':
                m.GUARD_FILE = here
                m.GUARD_FILES = frozenset([here] + [parts[p].__file__ for p in PARTS])
    finally:
        for n in names:
            if n in before:
                sys.modules[n] = before[n]
            else:
                sys.modules.pop(n, None)
    return parts


_PARTS = _load_parts()
McpGateGuardRefused = _PARTS['state'].McpGateGuardRefused
install = _PARTS['installing'].install
check = _PARTS['rule'].check
main = _PARTS['cmdline'].main


def __getattr__(name):
    """The guard's other names (LOADER_EXACT, ROOT, …), read from the part that holds them when asked (not copied:
    the state changes after load)."""
    if not name.startswith('__'):
        for m in _PARTS.values():
            if name in m.__dict__:
                return m.__dict__[name]
    raise AttributeError('module %r has no attribute %r' % (__name__, name))


if __name__ == '__main__':
    main(sys.argv[1:])
