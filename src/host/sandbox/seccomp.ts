// The seccomp filter every contained server runs under (bubblewrap loads it with `--seccomp FD`): a small classic
// BPF program, generated here, that keeps a server to the sockets the sandbox means it to have. Without it a server
// could connect() to a host service's socket file in a path it can see (the workspace, a read path: a docker.sock,
// an agent's socket), reach the host's abstract sockets had it the host's network namespace, or open a socket family
// no network namespace contains (AF_VSOCK reaches the hypervisor's host from a VM, whatever the namespace).
//
// What it answers, for the host's own architecture (x86-64 or arm64):
//   - socket(family, …): IP (AF_INET, AF_INET6) and AF_NETLINK (interface lists) are allowed; AF_UNIX is EPERM
//     unless Unix sockets are allowed (the user's `unixSockets: true`); every other family is EAFNOSUPPORT, as on
//     a kernel without it (AF_VSOCK, AF_PACKET, AF_ALG, Bluetooth, TIPC, …);
//   - socketpair(AF_UNIX, type): SOCK_STREAM and SOCK_SEQPACKET are allowed — connected for good (a second
//     connect() is EISCONN), what Node, Python and libuv make for child processes' stdio; a datagram pair could be
//     pointed at any socket path (connect() again, sendto()), so it is EPERM unless Unix sockets are allowed;
//   - io_uring_setup, io_uring_enter, io_uring_register: ENOSYS. io_uring opens sockets (IORING_OP_SOCKET)
//     without the socket() call this filter sees; programs fall back to plain system calls;
//   - no new user namespace: unshare(…CLONE_NEWUSER…) and clone(…CLONE_NEWUSER…) are EPERM, clone3 is ENOSYS (its
//     flags are in memory a filter cannot read; glibc and libuv fall back to clone, as under Docker's and Flatpak's
//     filters). bubblewrap's `--disable-userns` does the same with a second user namespace, but a sandbox with a
//     network door (../net/egress.ts) cannot have that one: the door is opened from outside by entering the sandbox's
//     user namespace, which must be the one that owns its network namespace. The filter holds either way, on every
//     bubblewrap version.
// Every system call of another architecture (i386 through int 0x80 on x86-64, which has socketcall) and of the
// x32 ABI ends the process: a filter is written for one system call table.
// Measured (2026-12-02): no npm package builds seccomp programs without a native addon; Debian has libseccomp
// (C, or python3-seccomp), which MCP Gate would need at run time on every machine. The program is under 32
// instructions; the tests run it in a real bubblewrap.
import { constants } from 'node:os';

const AUDIT_ARCH: Record<string, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };
/** System call numbers (x86-64's table; arm64 uses the generic one). io_uring's are the same on both. */
const NR: Record<string, { socket: number; socketpair: number; unshare: number; clone: number }> = {
  x64: { socket: 41, socketpair: 53, unshare: 272, clone: 56 },
  arm64: { socket: 198, socketpair: 199, unshare: 97, clone: 220 },
};
const IO_URING = [425, 426, 427];
const CLONE3 = 435;
/** linux/sched.h; the first argument of unshare and of clone (flags) on both architectures. */
const CLONE_NEWUSER = 0x10000000;
const X32_BIT = 0x40000000;

const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;
const SOCK_TYPE_MASK = 0xf;

// BPF instruction classes and modes (linux/filter.h), seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const AND_K = 0x54;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
// struct seccomp_data: nr (u32) at 0, arch (u32) at 4, args (u64 each) from 16. Both architectures are little
// endian: an argument's low 32 bits are at 16 + 8 × i. The kernel reads int arguments (family, type) as 32 bits.
const OFF_NR = 0;
const OFF_ARCH = 4;
const argLow = (i: number) => 16 + 8 * i;

/** The architectures the filter is built for. */
export const SECCOMP_ARCHES = Object.keys(AUDIT_ARCH);

interface Insn {
  code: number;
  jt?: string | number;
  jf?: string | number;
  k: number;
  label?: string;
}

/**
 * The filter as bubblewrap reads it (an array of struct sock_filter, 8 bytes each), or undefined for an
 * architecture it is not built for (the caller refuses to contain rather than run without it). `unixSockets`: the
 * user allowed Unix sockets (socket(AF_UNIX) and every socketpair); the rest of the filter stays.
 */
export function socketFilter(o: { unixSockets: boolean }, arch: string = process.arch): Buffer | undefined {
  const audit = AUDIT_ARCH[arch];
  const nr = NR[arch];
  if (audit === undefined || !nr) return undefined;
  const eperm = RET_ERRNO | constants.errno.EPERM;
  const enosys = RET_ERRNO | constants.errno.ENOSYS;
  const noFamily = RET_ERRNO | constants.errno.EAFNOSUPPORT;
  const prog: Insn[] = [
    { code: LD_W_ABS, k: OFF_ARCH },
    { code: JEQ_K, k: audit, jt: 0, jf: 'kill' },
    { code: LD_W_ABS, k: OFF_NR },
    ...(arch === 'x64' ? [{ code: JGE_K, k: X32_BIT, jt: 'kill', jf: 0 }] : []),
    { code: JEQ_K, k: nr.socket, jt: 'socket', jf: 0 },
    { code: JEQ_K, k: nr.socketpair, jt: 'pair', jf: 0 },
    ...IO_URING.map((n) => ({ code: JEQ_K, k: n, jt: 'enosys', jf: 0 })),
    { code: JEQ_K, k: CLONE3, jt: 'enosys', jf: 0 },
    { code: JEQ_K, k: nr.unshare, jt: 'userns', jf: 0 },
    { code: JEQ_K, k: nr.clone, jt: 'userns', jf: 0 },
    { code: RET_K, k: RET_ALLOW },
    { label: 'userns', code: LD_W_ABS, k: argLow(0) },
    { code: JSET_K, k: CLONE_NEWUSER, jt: 'eperm', jf: 'allow' },
    { label: 'socket', code: LD_W_ABS, k: argLow(0) },
    { code: JEQ_K, k: AF_INET, jt: 'allow', jf: 0 },
    { code: JEQ_K, k: AF_INET6, jt: 'allow', jf: 0 },
    { code: JEQ_K, k: AF_NETLINK, jt: 'allow', jf: 0 },
    { code: JEQ_K, k: AF_UNIX, jt: o.unixSockets ? 'allow' : 'eperm', jf: 'nofamily' },
    { label: 'pair', code: LD_W_ABS, k: argLow(0) },
    { code: JEQ_K, k: AF_UNIX, jt: 0, jf: 'nofamily' },
    ...(o.unixSockets
      ? [{ code: RET_K, k: RET_ALLOW }]
      : [
          { code: LD_W_ABS, k: argLow(1) },
          { code: AND_K, k: SOCK_TYPE_MASK },
          { code: JEQ_K, k: SOCK_STREAM, jt: 'allow', jf: 0 },
          { code: JEQ_K, k: SOCK_SEQPACKET, jt: 'allow', jf: 'eperm' },
        ]),
    { label: 'allow', code: RET_K, k: RET_ALLOW },
    { label: 'eperm', code: RET_K, k: eperm },
    { label: 'nofamily', code: RET_K, k: noFamily },
    { label: 'enosys', code: RET_K, k: enosys },
    { label: 'kill', code: RET_K, k: RET_KILL_PROCESS },
  ];
  const at = new Map<string, number>();
  prog.forEach((p, i) => p.label && at.set(p.label, i));
  const jump = (from: number, to: string | number | undefined) => {
    if (to === undefined || typeof to === 'number') return to ?? 0;
    const offset = at.get(to)! - from - 1;
    if (!(offset >= 0 && offset < 256)) throw new Error(`seccomp filter: jump to ${to} out of range`);
    return offset;
  };
  // Both architectures are little endian: struct sock_filter { u16 code; u8 jt; u8 jf; u32 k } in that order.
  const out = Buffer.alloc(prog.length * 8);
  prog.forEach((p, i) => {
    const o8 = i * 8;
    out.writeUInt16LE(p.code, o8);
    out.writeUInt8(jump(i, p.jt), o8 + 2);
    out.writeUInt8(jump(i, p.jf), o8 + 3);
    out.writeUInt32LE(p.k >>> 0, o8 + 4);
  });
  return out;
}
