# mcp_gate_guard_parts/native.py — Native libraries: what the dynamic loader maps by itself (DT_NEEDED along DT_RPATH,
# LD_LIBRARY_PATH, DT_RUNPATH), read from the ELF file without the loader.
# A part of MCP Gate's Python load guard: its entry is mcp_gate_guard.py beside this folder (how the parts load), the
# rule src/guard/CONTRACT.md. Standard library only; Python 3.8+ syntax.
import os
import re as _re
from . import state, rule, places


# ---------------------------------------------------------------------------------------------------------
# Native libraries: what the dynamic loader maps by itself (DT_NEEDED along DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH)
# ---------------------------------------------------------------------------------------------------------
ELF_DEPTH = 8
ELF_MAX = 512
_HWCAPS = _re.compile(r'^(glibc-hwcaps|tls|x86_64|i[3-6]86|haswell|xeon_phi|avx512_1|sse2|aarch64|v[5-8]l?|power\d+|ppc64(le)?|s390x?|z\d+)$')


def _START_LIBRARY_PATH():
    v = state._START['env'].get('LD_LIBRARY_PATH', '')
    return _library_path(v, state._START['cwd'])


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
    state._tls.busy = True
    try:
        size = os.fstat(f.fileno()).st_size

        def at(off, n):
            if off < 0 or n < 0 or off + n > size:
                return None
            f.seek(off)
            b = f.read(n)
            return b if len(b) == n else None
        segments = _elf_segments(at)
        if isinstance(segments, str):
            return segments
        return _elf_dynamic_section(at, *segments)
    except (OSError, ValueError, OverflowError) as e:
        return 'it cannot be read (%s)' % e
    finally:
        state._tls.busy = False
        f.close()


def _elf_num(b, o, n):
    """The little-endian number of n bytes at o of b (no struct: this runs while extensions import)."""
    if o + n > len(b):
        raise ValueError('short read')
    return int.from_bytes(b[o:o + n], 'little')


def _elf_segments(at):
    """(is64, the loaded segments (vaddr, offset, size), the dynamic segment (offset, size)) of the ELF file read by
    at(offset, n), or a string saying why they cannot be read."""
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

    def num(b, o, n=W):
        return _elf_num(b, o, n)
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
    return is64, loads, dyn


def _elf_dynamic_section(at, is64, loads, dyn):
    """{'needed', 'rpath', 'runpath'} from the dynamic segment dyn, or a string saying why it cannot be read."""
    W = 8 if is64 else 4

    def num(b, o, n=W):
        return _elf_num(b, o, n)
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


def _native_refusal(p, how, tail):
    kind, rel = rule._where(p)
    why = 'scratch' if kind == 'scratch' else ('changed' if rel in state.FILES else 'new')
    rule._refuse(p, rel if kind == 'root' else None, why, '', '%s: %s' % (how, tail))


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
    if rule._where(os.path.realpath(d))[0] is not None:
        state._tls.busy = True
        try:
            sub(d, 1)
        finally:
            state._tls.busy = False
    return out


def _check_native(name, how, library_path, base=None, program=False):
    """A native library (or a program) about to be mapped, and every library it needs that is found in a writable
    place, recursively: each checked as code (red team 7p, cases 08-10). A library in a writable place that cannot be
    read as ELF, or names a search folder the guard cannot resolve, is refused. `library_path`: LD_LIBRARY_PATH as
    the loader reads it (this process's at its start, or the child's)."""
    if not state._state['on'] or not isinstance(name, str) or not name or state.BROKEN is not None:
        return
    base = base or os.getcwd()
    seen = set()

    def visit(lexical, inherited, depth):
        p = os.path.realpath(lexical)
        src = rule._source(lexical, p)              # a memfd, an unlinked file: read through the name given
        if p in seen or not os.path.isfile(src):
            return
        mine = rule._where(p, src != p)[0] is not None
        if len(seen) >= ELF_MAX or depth > ELF_DEPTH:
            if mine:
                _native_refusal(p, how, 'it is needed through more than %d levels or %d libraries, more than the guard '
                                'follows' % (ELF_DEPTH, ELF_MAX))
            return
        seen.add(p)
        if mine:
            rule.check(lexical, None, how if depth == 0 else '%s (needed by what it loads)' % how)
        dyn = _read_elf_dynamic(src)
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
                    if mine or rule._where(os.path.realpath(e[:e.index('$')] or '/'))[0] is not None:
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
                if os.path.isfile(rc) and rule._where(rc)[0] is not None:
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
        p = os.path.realpath(name) if '/' in name else None
        mine = p is not None and rule._where(p, rule._source(name, p) != p)[0] is not None
    except (TypeError, ValueError):
        return
    if mine or any(places._writable_place(os.path.realpath(d)) for d in lp):
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
