"""The bubblewrap (``bwrap``) command line that isolates one submission.

What the child gets: new user, PID, IPC, UTS, cgroup and network namespaces (no network at all);
``--die-with-parent`` and ``--new-session``; an empty environment but for a few variables; a
size-capped private tmpfs at ``/tmp`` as its only writable place; and read-only binds of only
what it needs: the shared libraries under ``/usr/lib``, the interpreter, the Python standard
library (its ``site-packages`` hidden under an empty tmpfs) and NumPy, mounted alone at
``/sandbox/site/numpy``. attnlab, torch, the teacher's files, other submissions and the grader's
processes are not in its world.

Doors closed inside (each held by a hostile submission in tests/grade/test_hostile.py): no new
user namespaces (``--disable-userns`` where this bwrap has it and the grader is not root, and in
any case a seccomp filter,
``attnlab.grade.seccomp``, that refuses ``unshare``/``clone`` with namespace flags, ``setns`` and
``clone3``); no memory outside the address-space limit: ``memfd_create``, ``memfd_secret`` and
SysV ``shmget`` are refused (a memfd filled with ``fallocate`` is not counted by RLIMIT_AS, and
no cgroup is assumed: Gradescope's containers have none to give), ``/dev`` is read-only and
every tmpfs is sized (``/tmp`` 64 MiB, ``/dev/shm`` 1 MiB, the hidden folders 64 KiB).

The user inside is ``nobody`` (65534). When the grader runs as root, a plain ``--uid 65534``
would still be root on the host (the namespace maps the caller's uid), so in that case the
grader writes the namespace's uid map itself (``--userns-block-fd``): 65534 inside is 65534
outside, and the harness drops to it before it reads the submission. See bwrap(1).
"""

from __future__ import annotations

import functools
import json
import os
import select
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from . import seccomp

NOBODY = 65534
SITE = "/sandbox/site"  # the only folder added to the child's sys.path: NumPy alone
TMP_BYTES = 64 * 2**20  # the private tmpfs
SHM_BYTES = 2**20  # /dev/shm (POSIX semaphores need a little)
HIDE_BYTES = 64 * 2**10  # the empty tmpfs that hides a folder


@functools.cache
def numpy_dirs() -> tuple[Path, ...]:
    """The NumPy package folder and, for wheels, its bundled libraries (``numpy.libs``)."""
    import numpy

    pkg = Path(numpy.__file__).resolve().parent
    libs = pkg.with_name("numpy.libs")
    return (pkg, libs) if libs.is_dir() else (pkg,)


@functools.cache
def interpreter_files() -> tuple[Path, list[Path]]:
    """The real interpreter binary and the files it needs besides /usr/lib: its shared libpython."""
    exe = Path(os.path.realpath(sys.executable))
    extra = []
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        lib = Path(sysconfig.get_config_var("LIBDIR") or "") / (
            sysconfig.get_config_var("INSTSONAME") or ""
        )
        if lib.is_file():
            extra.append(lib)
    return exe, extra


def _ro(src: Path | str, dest: Path | str | None = None) -> list[str]:
    return ["--ro-bind", str(src), str(dest or src)]


def _hide(folder: Path | str) -> list[str]:
    """An empty, tiny tmpfs over ``folder`` (every tmpfs is sized)."""
    return ["--size", str(HIDE_BYTES), "--tmpfs", str(folder)]


def _system_binds() -> list[str]:
    """/usr/lib (and lib64) read-only, /lib* as on the host; nothing from /usr/local or /etc."""
    args = []
    for d in ("/usr/lib", "/usr/lib64", "/usr/lib32"):
        if os.path.isdir(d) and not os.path.islink(d):
            args += _ro(d)
    for d in ("/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += _ro(d)
    for hidden in ("/usr/lib/python3/dist-packages", "/usr/lib/python3/site-packages"):
        if os.path.isdir(hidden):  # Debian's system packages: not the learner's business
            args += _hide(hidden)
    return args


def _python_binds() -> list[str]:
    exe, extra = interpreter_files()
    stdlib = Path(sysconfig.get_path("stdlib"))
    args = _ro(exe)
    for f in extra:
        args += _ro(f)
    if not str(stdlib).startswith("/usr/lib/"):
        args += _ro(stdlib)
    for sub in ("site-packages", "dist-packages"):
        if (stdlib / sub).is_dir():
            args += _hide(stdlib / sub)
    for d in numpy_dirs():
        args += _ro(d, f"{SITE}/{d.name}")
    return args


def command(env: dict[str, str], *, map_uid_outside: bool, seccomp_fd: int | None) -> list[str]:
    """The bwrap arguments up to (not including) the command to run inside; ``seccomp_fd``
    holds ``seccomp.program()`` (bwrap reads it), None where there is no filter for this
    machine."""
    args = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        # bwrap refuses --disable-userns beside --userns-block-fd (root): the filter holds there
        *(["--disable-userns"] if not map_uid_outside and disable_userns_works() else []),
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--clearenv",
        *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
    ]
    for k, v in env.items():
        args += ["--setenv", k, v]
    if map_uid_outside:  # running as root: we write the uid map, the harness drops to nobody
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    binds = _system_binds() + _python_binds()
    args += _parent_dirs(binds) + binds
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"]
    args += ["--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    return [*args, "--chdir", "/tmp"]


def _parent_dirs(binds: list[str]) -> list[str]:
    """Create the folders above each mount point world-readable (bwrap as root makes them 0700,
    which the unprivileged user inside could not walk through)."""
    made: list[str] = []
    for i, a in enumerate(binds):
        if a in ("--ro-bind", "--tmpfs"):
            dest = Path(binds[i + (2 if a == "--ro-bind" else 1)])
            made += [str(p) for p in reversed(dest.parents) if str(p) != "/" and str(p) not in made]
    out = []
    for d in made:
        out += ["--perms", "0755", "--dir", d]
    return out


def wait_and_map_uid(info_fd: int, block_fd: int, timeout: float = 10.0) -> None:
    """Root only: read the sandbox's pid from bwrap's info fd, map 0 and 65534 to themselves,
    then let bwrap go on. The harness inside drops to 65534 (host ``nobody``) at once."""
    buf = b""
    while True:
        ready, _, _ = select.select([info_fd], [], [], timeout)
        chunk = os.read(info_fd, 4096) if ready else b""
        if not chunk:
            raise OSError("bwrap did not start (no child pid on its info fd)")
        buf += chunk
        try:
            pid = json.loads(buf)["child-pid"]
            break
        except (ValueError, KeyError):
            continue
    for kind in ("uid", "gid"):
        Path(f"/proc/{pid}/{kind}_map").write_text(f"0 0 1\n{NOBODY} {NOBODY} 1\n")
    os.write(block_fd, b"1")


@functools.cache
def unavailable_reason() -> str | None:
    """None if bwrap can build a sandbox here; otherwise why not (shown in every report)."""
    if not sys.platform.startswith("linux"):
        return f"bwrap is Linux only (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = ["bwrap", "--unshare-all", "--unshare-user", *_system_binds(), *_python_binds()]
    exe, _ = interpreter_files()
    filt = seccomp.memfd()  # the filter too: a kernel without seccomp filters fails here
    if filt is not None:
        probe += ["--seccomp", str(filt)]
    try:
        r = subprocess.run(
            [*probe, str(exe), "-I", "-S", "-c", "pass"],
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            pass_fds=(filt,) if filt is not None else (),
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap failed to start: {e}"
    finally:
        if filt is not None:
            os.close(filt)
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()
        return "bwrap cannot create a sandbox here: " + (err[-1] if err else f"exit {r.returncode}")
    return None


@functools.cache
def disable_userns_works() -> bool:
    """Whether this bwrap can forbid new user namespaces inside (``--disable-userns``, bwrap
    0.8+, and a kernel that allows the nested namespace it uses): tried once, not assumed."""
    if unavailable_reason() is not None:
        return False
    exe, _ = interpreter_files()
    probe = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns"]
    probe += ["--assert-userns-disabled", *_system_binds(), *_python_binds()]
    try:
        r = subprocess.run(
            [*probe, str(exe), "-I", "-S", "-c", "pass"],
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0
