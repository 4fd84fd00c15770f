"""Run many ``python ARGS`` commands as forks of one process that imported torch and attnlab once.

A fresh ``python`` spends 2-3 s of CPU importing torch before a lesson runs a line; this runner
pays it once. It reads one job a line on stdin, a JSON list ``[key, args, cwd]`` where ``args``
is what follows ``python`` on a command line (``["script.py"]``, ``["-m", "attnlab", ...]``,
``["-c", CODE, ...]``), runs up to ``sys.argv[1]`` jobs at a time, each in a forked child with
its own stdout, stderr, argv, path and working directory as that command would have them, and
when stdin ends prints one JSON object: key -> [exit status, stdout, stderr].

Jupyter kernels too: the jobs see a kernel spec ``python3`` (on ``JUPYTER_PATH``) whose command
is a small launcher; the launcher hands its connection file, working directory, environment
and standard streams to this runner, which forks an IPython kernel with them, and waits for
that kernel to end, so a kernel manager starts, talks to and stops it as it would any kernel.

Nothing runs in this process before a fork but imports: no torch operation (so no thread pool
is started that a child would inherit), no matplotlib backend chosen.

    python tests/forks.py 2 < jobs.jsonl

A job may name another's key as a fourth item (``[key, args, cwd, after]``): it starts once that
job has ended (a script runs after the job that writes it).

``ATTNLAB_TEST_FORKS=0`` turns the forking off (for a platform where forking a process that
imported torch is unsafe, or to rule the runner out when a test fails): each job is then a
fresh ``python ARGS`` and each kernel an ordinary ipykernel, with the same results, only slower.

With ``FORKS_DIR`` set, the kernel spec and its socket go there (``FORKS_DIR/kernels.sock``), so
that code which starts kernels itself can use them while stdin stays open
(``helpers.forked_kernels``). With ``FORKS_STREAM=1`` each job's result is printed as it ends,
one JSON line ``[key, exit status, stdout, stderr]``, instead of all at the end: a test process
keeps one runner for all its jobs and kernels (``helpers.fork_jobs``), so the imports are paid
once per process, not once per fixture.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import sys
import tempfile
import traceback
from pathlib import Path

SWITCH = "ATTNLAB_TEST_FORKS"


def forking() -> bool:
    """Whether jobs and kernels are forks (the default) or fresh processes (``SWITCH=0``)."""
    return os.environ.get(SWITCH, "1") != "0"


def _preload() -> None:
    """What every job and kernel would import: imported once, here, before any fork."""
    import ipykernel.debugger  # (debugpy, which a kernel loads as it starts: 0.09 s)
    import ipykernel.ipkernel  # (each kernel's own imports: 0.15 s)
    import ipykernel.kernelapp  # noqa: F401
    import matplotlib_inline.backend_inline  # noqa: F401  (matplotlib for figures: 0.9 s)
    import nbclient  # noqa: F401  (for jobs that execute notebooks)
    import nbformat  # noqa: F401
    import torch
    import torch._dynamo  # noqa: F401  (an optimizer imports it: 2 s, once here)

    import attnlab.cli
    import attnlab.lessons  # noqa: F401


# the kernel's launcher: a bare python (no site) that passes its part on, forwards the signals
# a kernel manager sends (SIGINT interrupts, SIGTERM ends) and lives as long as the kernel
LAUNCHER = """
import json, os, signal, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["FORKS_KERNELS"])
msg = json.dumps([sys.argv[1], os.getcwd(), dict(os.environ)]).encode()
socket.send_fds(s, [msg], [0, 1, 2])
pid = int(s.makefile().readline())
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, lambda n, _: os.kill(pid, n))
while s.recv(1):  # empty when the kernel has ended: its copy of this socket closes
    pass
"""


def _kernel(conn: socket.socket, listener: socket.socket) -> None:
    """In a forked child: the IPython kernel the launcher on ``conn`` asked for."""
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    connection_file, cwd, env = json.loads(msg)
    listener.close()
    conn.sendall(f"{os.getpid()}\n".encode())
    for fd, theirs in enumerate(fds):
        os.dup2(theirs, fd)
        os.close(theirs)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    del sys.path[0]  # as ipykernel_launcher does; the kernel puts the working directory first
    sys.argv = ["ipykernel_launcher", "-f", connection_file]
    status = 0
    try:
        import ipykernel.kernelapp

        ipykernel.kernelapp.launch_new_instance()
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 0
    except BaseException:
        traceback.print_exc()
        status = 1
    os._exit(status)


def _kernel_spec(folder: Path) -> None:
    """A ``python3`` kernel spec on ``JUPYTER_PATH`` for the jobs, whose kernels are forks."""
    from helpers import kernel_env

    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-S", "-c", LAUNCHER, "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    os.environ.update(kernel_env(folder))


def _exec(args: list[str], cwd: str, out: str, err: str) -> None:
    """In a forked child: run ``python ARGS`` in ``cwd``, a fresh interpreter (``SWITCH=0``)."""
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    os.chdir(cwd)
    os.execv(sys.executable, [sys.executable, *args])


class _Jobs:
    """The jobs read so far, those running and those done: ``start`` forks what may start."""

    def __init__(self, width: int, tmp: Path) -> None:
        self.width, self.tmp, self.n = width, tmp, 0
        self.queue: list[list] = []  # [key, args, cwd] or [key, args, cwd, after]
        self.running: dict[int, tuple[str, Path, Path]] = {}  # pid -> (key, stdout, stderr)
        self.done: dict[str, list] = {}  # key -> [exit status, stdout, stderr]

    def ready(self) -> list | None:
        """The first queued job whose ``after`` (if any) has ended."""
        for job in self.queue:
            if len(job) < 4 or job[3] in self.done:
                self.queue.remove(job)
                return job
        return None

    def start(self) -> None:
        while len(self.running) < self.width and (job := self.ready()):
            key, args, cwd = job[:3]
            self.n += 1
            out, err = self.tmp / f"{self.n}.out", self.tmp / f"{self.n}.err"
            pid = _fork()
            if pid == 0:
                if forking():
                    from helpers import become

                    become(args, cwd, str(out), str(err))
                _exec(args, cwd, str(out), str(err))
            self.running[pid] = (key, out, err)

    def reap(self) -> None:
        """Every child that ended (kernels too; only jobs are reported)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self.running:
                key, out, err = self.running.pop(pid)
                texts = [p.read_text(encoding="utf-8", errors="replace") for p in (out, err)]
                self.done[key] = [os.waitstatus_to_exitcode(status), *texts]
                if os.environ.get("FORKS_STREAM") == "1":
                    print(json.dumps([key, *self.done[key]]), flush=True)


def _fork() -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    return os.fork()


def main() -> None:
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    tmp = Path(os.environ.get("FORKS_DIR") or tempfile.mkdtemp(prefix="forks"))
    sel = selectors.SelectSelector()  # stdin may be a file, which epoll refuses
    sel.register(0, selectors.EVENT_READ)
    listener = None
    if forking():
        from helpers import kernel_env

        _preload()
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(kernel_env(tmp)["FORKS_KERNELS"])
        listener.listen()
        _kernel_spec(tmp)
        sel.register(listener, selectors.EVENT_READ)
    jobs, pending, reading = _Jobs(width, tmp), b"", True
    while reading or jobs.queue or jobs.running:
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj == 0:
                chunk = os.read(0, 1 << 16)
                reading = bool(chunk)
                pending += chunk
                *lines, pending = pending.split(b"\n")
                jobs.queue += [json.loads(line) for line in lines if line.strip()]
                if not reading:
                    sel.unregister(0)
            else:
                conn, _ = listener.accept()
                if _fork() == 0:
                    _kernel(conn, listener)
                conn.close()  # the kernel holds the only copy: the launcher waits on it
        jobs.start()
        jobs.reap()
    if os.environ.get("FORKS_STREAM") != "1":
        print(json.dumps(jobs.done))


if __name__ == "__main__":
    main()
