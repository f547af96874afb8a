"""A seccomp filter for the sandboxed child: the system calls that reach kernel state which
outlives a process fail with ``EPERM``.

Kernel keyrings (``add_key``, ``keyctl``, ``request_key``) belong to the user, not to a
process: a key one child stores in its user keyring, or in the session keyring it inherited,
is there for the next child of the same user (another task's, or another submission's in
``grade-batch``) to read. POSIX message queues (``mq_open``) live in the IPC namespace until
someone unlinks them. A grading probe needs neither, so the child forbids them on itself,
after its resource limits and before it imports any submitted code; a filter, once
installed, holds for the process and everything it starts, and cannot be removed.

Raw classic BPF through ``prctl(PR_SET_SECCOMP)``, with ctypes only: the child runs this file
next to ``child.py`` and imports nothing from the package (which, there, is the code under
test). Known architectures: x86_64 and aarch64; a system call made through another ABI
(x86's 32-bit ``int 0x80`` or x32) fails whatever it is.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

__all__ = ["DENIED", "SYSCALLS", "install", "program"]

DENIED = ("add_key", "request_key", "keyctl", "mq_open")

# audit architecture, and the numbers of the denied calls (asm-generic for aarch64)
SYSCALLS = {
    "x86_64": (0xC000003E, {"add_key": 248, "request_key": 249, "keyctl": 250, "mq_open": 240}),
    "aarch64": (0xC00000B7, {"add_key": 217, "request_key": 218, "keyctl": 219, "mq_open": 180}),
}
_X32_BIT = 0x40000000

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def program(machine: str | None = None, denied=DENIED) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` (default: this one), as (code, jt, jf, k) instructions.

    Raises:
        OSError: the architecture is not one this module knows.
    """
    machine = machine or platform.machine()
    if machine not in SYSCALLS:
        raise OSError(errno.ENOSYS, f"no seccomp syscall table for {machine!r}")
    arch, numbers = SYSCALLS[machine]
    checks = [numbers[name] for name in denied]
    body = [(_LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
    if machine == "x86_64":
        body.append((_JGE_K, 0, 0, _X32_BIT))  # the x32 ABI: denied
    body += [(_JEQ_K, 0, 0, nr) for nr in checks]
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, arch), (_RET_K, 0, 0, _ERRNO | errno.EPERM)]
    prog += body + [(_RET_K, 0, 0, _ALLOW), (_RET_K, 0, 0, _ERRNO | errno.EPERM)]
    deny = len(prog) - 1
    out = []
    for k, (code, jt, jf, value) in enumerate(prog):
        if code in (_JGE_K, _JEQ_K) and k > 1:
            jt = deny - k - 1  # to the last instruction: deny
        out.append((code, jt, jf, value))
    return out


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]  # fmt: skip


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


def install(denied=DENIED) -> str:
    """Install the filter on this process (and what it starts); return what was denied.

    Raises:
        OSError: the architecture is unknown, or the kernel refused the filter.
    """
    instructions = program(denied=denied)
    table = (_Filter * len(instructions))(*(_Filter(*i) for i in instructions))
    prog = _Program(len(instructions), table)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]  # fmt: skip
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(e)}")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"prctl(PR_SET_SECCOMP): {os.strerror(e)}")
    return ", ".join(denied)
