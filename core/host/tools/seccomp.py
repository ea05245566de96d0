"""The seccomp filter bubblewrap installs in every sandboxed command: no Unix sockets.

A read-only bind of ``/`` does not stop ``connect()`` to a Unix socket (a Docker or D-Bus socket, an SSH agent),
and a seccomp filter cannot read the address ``connect()`` is given. So the filter refuses the calls that make a
socket able to reach one:

- ``socket(AF_UNIX, …)`` fails with ``EACCES``: no Unix socket can be created, in the workspace or anywhere;
- ``socketpair(AF_UNIX, SOCK_DGRAM, …)`` fails with ``EACCES`` (a datagram pair could ``sendto`` any socket
  path); stream and seqpacket pairs, already connected to each other and nothing else, stay allowed;
- ``io_uring_setup``, ``io_uring_enter`` and ``io_uring_register`` fail with ``ENOSYS`` (io_uring creates and
  connects sockets without those system calls);
- every system call of another ABI (32-bit or x32 code on a 64-bit kernel, whose ``socketcall`` multiplexer
  hides its arguments) fails with ``ENOSYS``.

The program is classic BPF built here with ``struct``; ``program()`` is None on an architecture it has no
system-call numbers for, where Unix sockets stay reachable (``sandbox.shell_mode`` says so).
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

# Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
AND_K = 0x54
RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
# Offsets in struct seccomp_data: nr, arch, then six 64-bit arguments (their low halves on little-endian).
NR, ARCH = 0, 4
ARG0, ARG1 = 16, 24
AF_UNIX = 1
SOCK_DGRAM = 2
SOCK_TYPE_MASK = 0xF
X32_BIT = 0x40000000


@dataclass(frozen=True, slots=True)
class Abi:
    """The system-call numbers the filter needs on one architecture."""

    audit_arch: int
    socket: int
    socketpair: int
    io_uring: tuple[int, ...]
    x32: bool = False  # x86-64 kernels also take x32 calls (numbers with X32_BIT set) under the same arch


ABIS = {
    "x86_64": Abi(0xC000003E, 41, 53, (425, 426, 427), x32=True),
    "aarch64": Abi(0xC00000B7, 198, 199, (425, 426, 427)),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build(abi: Abi) -> bytes:
    """The filter for ``abi`` as the bytes of a ``struct sock_filter`` array (what ``bwrap --seccomp`` reads)."""
    deny_unix = RET_ERRNO | errno.EACCES
    no_such_call = RET_ERRNO | errno.ENOSYS
    # Each entry: (code, k, jump-if-true label, jump-if-false label); labels resolve to relative offsets.
    prog: list[tuple[str | None, int, int, str | None, str | None]] = [
        (None, LD_W_ABS, ARCH, None, None),
        (None, JEQ_K, abi.audit_arch, "native", "nosys"),
        ("native", LD_W_ABS, NR, None, None),
    ]
    if abi.x32:
        prog.append((None, JGE_K, X32_BIT, "nosys", None))
    prog += [
        (None, JEQ_K, abi.socket, "socket", None),
        (None, JEQ_K, abi.socketpair, "socketpair", None),
        *((None, JEQ_K, nr, "nosys", None) for nr in abi.io_uring),
        (None, JEQ_K, 0, "allow", "allow"),  # every other call (BPF jumps forward only)
        ("socket", LD_W_ABS, ARG0, None, None),
        (None, JEQ_K, AF_UNIX, "deny", "allow"),
        ("socketpair", LD_W_ABS, ARG0, None, None),
        (None, JEQ_K, AF_UNIX, None, "allow"),
        (None, LD_W_ABS, ARG1, None, None),
        (None, AND_K, SOCK_TYPE_MASK, None, None),
        (None, JEQ_K, SOCK_DGRAM, "deny", "allow"),
        ("deny", RET_K, deny_unix, None, None),
        ("nosys", RET_K, no_such_call, None, None),
        ("allow", RET_K, RET_ALLOW, None, None),
    ]
    where = {label: i for i, (label, *_rest) in enumerate(prog) if label}

    def hop(i: int, label: str | None) -> int:
        return 0 if label is None else where[label] - i - 1

    return b"".join(_insn(code, k, hop(i, jt), hop(i, jf)) for i, (_, code, k, jt, jf) in enumerate(prog))


def program() -> bytes | None:
    """The filter for this machine's architecture, or None when there is none for it."""
    abi = ABIS.get(platform.machine())
    return None if abi is None else build(abi)


def filter_fd() -> int | None:
    """A file descriptor to read the filter from (the read end of a pipe holding it, to pass to ``bwrap
    --seccomp``; the caller closes it), or None on an architecture without a filter."""
    data = program()
    if data is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, data)  # a few hundred bytes: far below a pipe's buffer, so this never blocks
    finally:
        os.close(write)
    return read
