"""A classic-BPF seccomp filter, written out by hand, that closes the sandbox's last doors.

Refused with EPERM: ``unshare`` and ``clone`` with any namespace flag (a new user namespace
would give the submission every capability in it and an unlimited tmpfs), ``setns``,
``memfd_create`` and ``memfd_secret`` (their pages, filled with ``fallocate``, are not counted by
RLIMIT_AS), and SysV ``shmget`` (the same). ``clone3`` gets ENOSYS (its flags sit in memory a
filter cannot read; the C library then falls back to ``clone``, which is checked). A system call
from another architecture's table (x32, i386 through ``int 0x80``) gets ENOSYS. Everything else
is allowed. bwrap loads it (``--seccomp FD``) just before it starts the harness.

Only x86_64 and aarch64 are known here; elsewhere ``program()`` returns None and the sandbox
relies on ``--disable-userns`` alone (the report's isolation line does not change).
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
NR, ARCH, ARG0_LOW = 0, 4, 16
LD_W_ABS, JEQ, JSET, JGE, RET = 0x20, 0x15, 0x45, 0x35, 0x06
ALLOW = 0x7FFF0000
ERRNO = 0x00050000
NAMESPACE_FLAGS = 0x7E020080  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME

TABLES = {  # audit arch, {name: number}
    "x86_64": (
        0xC000003E,
        {"memfd_create": 319, "memfd_secret": 447, "shmget": 29, "setns": 308,
         "clone3": 435, "unshare": 272, "clone": 56},
    ),
    "aarch64": (
        0xC00000B7,
        {"memfd_create": 279, "memfd_secret": 447, "shmget": 194, "setns": 268,
         "clone3": 435, "unshare": 97, "clone": 220},
    ),
}  # fmt: skip
DENIED = ("memfd_create", "memfd_secret", "shmget", "setns")


def _assemble(steps: list[tuple]) -> bytes:
    """Steps are ``(code, k)``, ``(code, k, "label")`` (jump to label if true, else next) or
    ``("label",)``; jump offsets are resolved here (BPF jumps only forward)."""
    labels, at = {}, 0
    for s in steps:
        if len(s) == 1:
            labels[s[0]] = at
        else:
            at += 1
    out, at = [], 0
    for s in steps:
        if len(s) == 1:
            continue
        code, k, *target = s
        jt = labels[target[0]] - at - 1 if target else 0
        out.append(struct.pack("=HBBI", code, jt, 0, k))
        at += 1
    return b"".join(out)


def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture, or None where it is not known."""
    machine = machine or platform.machine()
    if machine not in TABLES:
        return None
    arch, nr = TABLES[machine]
    steps: list[tuple] = [(LD_W_ABS, ARCH), (JEQ, arch, "native"), (RET, ERRNO | errno.ENOSYS)]
    steps += [("native",), (LD_W_ABS, NR)]
    if machine == "x86_64":
        steps += [(JGE, 0x40000000, "nosys")]  # the x32 table
    steps += [(JEQ, nr[name], "deny") for name in DENIED]
    steps += [(JEQ, nr["clone3"], "nosys")]
    steps += [(JEQ, nr["unshare"], "flags"), (JEQ, nr["clone"], "flags"), (RET, ALLOW)]
    steps += [("flags",), (LD_W_ABS, ARG0_LOW), (JSET, NAMESPACE_FLAGS, "deny"), (RET, ALLOW)]
    steps += [("deny",), (RET, ERRNO | errno.EPERM), ("nosys",), (RET, ERRNO | errno.ENOSYS)]
    return _assemble(steps)


def memfd() -> int | None:
    """A memfd holding ``program()`` at offset 0, for bwrap's ``--seccomp FD``; None where
    there is no filter for this machine. The caller closes it."""
    prog = program()
    if prog is None:
        return None
    fd = os.memfd_create("attnlab-seccomp", 0)
    os.write(fd, prog)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
