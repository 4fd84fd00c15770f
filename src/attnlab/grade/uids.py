"""Process isolation run by root: each grading gets an unprivileged uid of its own, and when it
ends every process of that uid is killed, wherever it went (a double-forked daemon in a session
of its own included) before the grader writes a word of the report.

The uids (``BASE`` + a slot) belong to no account, so the child owns nothing but the working
folder it is given; it cannot write the grader's files or its results folder, and it can signal
only its own processes. ``kill(-1, SIGKILL)`` sent *as that uid* reaches exactly those: nothing
the grader or another grading runs. Without root there is no uid to give (the report says the
code ran with the grader's rights), and only the process group is killed.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

BASE = 2**31  # above the ranges accounts, sssd and containers hand out; uids go to 2**32 - 2
PER_PROCESS = 1000  # uids per grader process, reused in turn (each one's processes long gone)
_counter = itertools.count()
_lock = threading.Lock()


def grading_uid() -> int:
    """A fresh unprivileged uid for one grading when running as root, else 0 (none). Grader
    processes get disjoint ranges by pid (pid_max is at most 2**22; below 2**21 apart they
    never meet), and one process cycles through its 1000."""
    if os.geteuid() != 0:
        return 0
    with _lock:
        n = next(_counter) % PER_PROCESS
    return BASE + (os.getpid() % 2**21) * PER_PROCESS + n


def pids_of(uid: int) -> list[int]:
    """Live (not zombie) processes whose real uid is ``uid``."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            status = (p / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        real = fields.get("Uid", "").split()
        if real and int(real[0]) == uid and not fields.get("State", "").strip().startswith("Z"):
            found.append(int(p.name))
    return found


def _kill_as(uid: int) -> None:
    kill = shutil.which("kill") or "/bin/kill"
    try:
        subprocess.run(
            [kill, "-9", "-1"],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        for pid in pids_of(uid):  # no kill(1) here: one by one, a fork bomb may outrun it
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def kill_all(uid: int, within: float = 5.0) -> bool:
    """Kill every process of ``uid`` and wait until none is left (True), at most ``within`` s."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not pids_of(uid):
            return True
        _kill_as(uid)
        time.sleep(0.02)
    return not pids_of(uid)
