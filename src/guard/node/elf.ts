// A reader of ELF files' dynamic sections for the load guard (little-endian, 32 or 64 bits): the libraries a native
// library or program needs (DT_NEEDED, and the filters glibc loads alike), where the dynamic loader looks for them
// (DT_RPATH, DT_RUNPATH) and a program's own loader (PT_INTERP). Every offset is bounded by the file's size; what
// cannot be read is said in words, never thrown.
import { F } from './base';

interface ElfDynamic {
  needed: string[];
  rpath: string[];
  runpath: string[];
  interp?: string;
}

/** An ELF file with no dynamic section (a static program: it loads no library). */
export const NO_DYNAMIC = 'it has no dynamic section (not a shared library)';

/**
 * The dynamic section of an ELF file (32 or 64 bits, little-endian): DT_NEEDED, DT_RPATH and DT_RUNPATH, or a
 * string saying why it cannot be read. Every offset is bounded by the file's size.
 */
export function readElfDynamic(file: string): ElfDynamic | string {
  let fd: number;
  try {
    fd = F.openSync(file, 'r');
  } catch (e) {
    return `cannot be opened (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
  try {
    const size = F.fstatSync(fd).size;
    const at = (off: number, len: number): Buffer | null => {
      if (!Number.isSafeInteger(off) || off < 0 || len < 0 || off + len > size) return null;
      const b = Buffer.alloc(len);
      return F.readSync(fd, b, 0, len, off) === len ? b : null;
    };
    const magic = at(0, 4);
    if (!magic || magic.readUInt32BE(0) !== 0x7f454c46) return 'it is not an ELF file';
    const h = at(0, 52);
    if (!h) return 'its ELF header is truncated';
    const is64 = h[4] === 2;
    if (h[4] !== 1 && h[4] !== 2) return `unknown ELF class ${h[4]}`;
    if (h[5] !== 1) return h[5] === 2 ? 'a big-endian ELF file, which the guard does not read' : `unknown ELF data encoding ${h[5]}`;
    const eh = is64 ? at(0, 64) : h;
    if (!eh) return 'its ELF header is truncated';
    const num = (b: Buffer, o: number, wide: boolean): number => (wide ? Number(b.readBigUInt64LE(o)) : b.readUInt32LE(o));
    const phoff = num(eh, is64 ? 32 : 28, is64);
    const phentsize = eh.readUInt16LE(is64 ? 54 : 42);
    const phnum = eh.readUInt16LE(is64 ? 56 : 44);
    if (phnum === 0) return 'it has no program headers';
    if (phentsize < (is64 ? 56 : 32) || phnum > 4096) return 'its program headers are malformed';
    const ph = at(phoff, phentsize * phnum);
    if (!ph) return 'its program headers lie outside the file';
    const loads: Array<{ vaddr: number; off: number; filesz: number }> = [];
    let dyn: { off: number; filesz: number } | null = null;
    let interp: string | undefined;
    for (let i = 0; i < phnum; i++) {
      const o = i * phentsize;
      const type = ph.readUInt32LE(o);
      const off = num(ph, o + (is64 ? 8 : 4), is64);
      const vaddr = num(ph, o + (is64 ? 16 : 8), is64);
      const filesz = num(ph, o + (is64 ? 32 : 16), is64);
      if (type === 1) loads.push({ vaddr, off, filesz });
      else if (type === 2) dyn = { off, filesz };
      else if (type === 3) {
        // PT_INTERP: the dynamic loader a program names (a program, not a library, has one)
        const b = filesz > 0 && filesz <= 4096 ? at(off, filesz) : null;
        if (!b) return 'its program interpreter (PT_INTERP) lies outside the file';
        interp = b.toString('utf8', 0, b.indexOf(0) < 0 ? b.length : b.indexOf(0));
      }
    }
    if (!dyn) return NO_DYNAMIC;
    const withInterp = (r: ElfDynamic): ElfDynamic => (interp !== undefined ? { ...r, interp } : r);
    const entsize = is64 ? 16 : 8;
    if (dyn.filesz > 1 << 20) return 'its dynamic section is too large';
    const d = at(dyn.off, dyn.filesz - (dyn.filesz % entsize));
    if (!d) return 'its dynamic section lies outside the file';
    const needed: number[] = [],
      rpath: number[] = [],
      runpath: number[] = [];
    let strtab = -1,
      strsz = -1,
      ended = false;
    for (let o = 0; o + entsize <= d.length; o += entsize) {
      const tag = num(d, o, is64);
      const val = num(d, o + entsize / 2, is64);
      if (tag === 0) {
        ended = true;
        break;
      }
      // DT_NEEDED, and DT_AUXILIARY / DT_FILTER: glibc's ld.so loads a filter's object along the same search path
      // (red team 7n, case 05)
      if (tag === 1 || tag === 0x7ffffffd || tag === 0x7fffffff) needed.push(val);
      else if (tag === 5) strtab = val;
      else if (tag === 10) strsz = val;
      else if (tag === 15) rpath.push(val);
      else if (tag === 29) runpath.push(val);
    }
    if (!ended) return 'its dynamic section has no end (DT_NULL)';
    if (needed.length + rpath.length + runpath.length === 0) return withInterp({ needed: [], rpath: [], runpath: [] });
    if (strtab < 0 || strsz <= 0) return 'its dynamic section has no string table';
    // DT_STRTAB is an address: the file offset is found through the segment that holds it.
    const seg = loads.find((l) => strtab >= l.vaddr && strtab < l.vaddr + l.filesz);
    if (!seg) return 'its string table lies outside every loaded segment';
    const tab = at(seg.off + (strtab - seg.vaddr), Math.min(strsz, seg.vaddr + seg.filesz - strtab));
    if (!tab) return 'its string table lies outside the file';
    const n = stringsOf(tab, needed),
      rp = stringsOf(tab, rpath),
      rn = stringsOf(tab, runpath);
    if (!n || !rp || !rn) return 'a name in its dynamic section lies outside its string table';
    const split = (l: string[]): string[] => l.flatMap((s) => s.split(':'));
    return withInterp({ needed: n, rpath: split(rp), runpath: split(rn) });
  } catch (e) {
    return `it cannot be read (${(e as Error).message})`;
  } finally {
    F.closeSync(fd);
  }
}

/** The names at `list`'s offsets in an ELF string table (each ends at a NUL byte), or null when one lies outside it. */
function stringsOf(tab: Buffer, list: number[]): string[] | null {
  const str = (i: number): string | null => {
    if (i >= tab.length) return null;
    const end = tab.indexOf(0, i);
    return end < 0 ? null : tab.toString('utf8', i, end);
  };
  const out: string[] = [];
  for (const i of list) {
    const s = str(i);
    if (s === null) return null;
    out.push(s);
  }
  return out;
}
