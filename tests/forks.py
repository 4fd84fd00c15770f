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

With ``FORKS_DIR`` set, the kernel spec and its socket go there (``FORKS_DIR/kernels.sock``), so
that code which starts kernels itself can use them while stdin stays open
(``helpers.forked_kernels``).
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

import ipykernel.debugger  # (debugpy, which a kernel loads as it starts: 0.09 s)
import ipykernel.ipkernel  # (each kernel's own imports: 0.15 s)
import ipykernel.kernelapp
import matplotlib_inline.backend_inline  # noqa: F401  (matplotlib for figures: 0.9 s; no backend)
import nbclient  # noqa: F401  (imported once, for jobs that execute notebooks)
import nbformat  # noqa: F401
import torch
import torch._dynamo  # noqa: F401  (an optimizer imports it: 2 s, once here)

import attnlab.cli
import attnlab.lessons  # noqa: F401
from helpers import become, kernel_env

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
        ipykernel.kernelapp.launch_new_instance()
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 0
    except BaseException:
        traceback.print_exc()
        status = 1
    os._exit(status)


def _kernel_spec(folder: Path) -> None:
    """A ``python3`` kernel spec on ``JUPYTER_PATH`` for the jobs, whose kernels are forks."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-S", "-c", LAUNCHER, "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    os.environ.update(kernel_env(folder))


def main() -> None:
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    tmp = Path(os.environ.get("FORKS_DIR") or tempfile.mkdtemp(prefix="forks"))
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(kernel_env(tmp)["FORKS_KERNELS"])
    listener.listen()
    _kernel_spec(tmp)
    sel = selectors.SelectSelector()  # stdin may be a file, which epoll refuses
    sel.register(0, selectors.EVENT_READ)
    sel.register(listener, selectors.EVENT_READ)
    queue: list[list] = []
    running: dict[int, tuple[str, Path, Path]] = {}  # pid -> (key, stdout file, stderr file)
    done: dict[str, list] = {}
    pending, reading, n = b"", True, 0

    def fork() -> int:
        sys.stdout.flush()
        sys.stderr.flush()
        return os.fork()

    while reading or queue or running:
        for key, _ in sel.select(timeout=0.05):
            if key.fileobj == 0:
                chunk = os.read(0, 1 << 16)
                reading = bool(chunk)
                pending += chunk
                *lines, pending = pending.split(b"\n")
                queue += [json.loads(line) for line in lines if line.strip()]
                if not reading:
                    sel.unregister(0)
            else:
                conn, _ = listener.accept()
                if fork() == 0:
                    _kernel(conn, listener)
                conn.close()  # the kernel holds the only copy: the launcher waits on it
        while queue and len(running) < width:
            (key, args, cwd), n = queue.pop(0), n + 1
            out, err = tmp / f"{n}.out", tmp / f"{n}.err"
            pid = fork()
            if pid == 0:
                become(args, cwd, str(out), str(err))
            running[pid] = (key, out, err)
        while True:  # reap every child that ended (kernels too; only jobs are reported)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in running:
                key, out, err = running.pop(pid)
                texts = [p.read_text(encoding="utf-8", errors="replace") for p in (out, err)]
                done[key] = [os.waitstatus_to_exitcode(status), *texts]
    print(json.dumps(done))


if __name__ == "__main__":
    main()
