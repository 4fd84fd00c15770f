"""Run many ``python ARGS`` commands as forks of one process that imported torch and attnlab once.

A fresh ``python`` spends 2-3 s of CPU importing torch before a lesson runs a line; this runner
pays it once. It reads one job a line on stdin, a JSON list ``[key, args, cwd]`` where ``args``
is what follows ``python`` on a command line (``["script.py"]``, ``["-m", "attnlab", ...]``,
``["-c", CODE, ...]``), runs up to ``sys.argv[1]`` jobs at a time, each in a forked child with
its own stdout, stderr, argv, path and working directory as that command would have them, and
when stdin ends prints one JSON object: key -> [exit status, stdout, stderr].

Nothing runs in this process before a fork but imports: no torch operation (so no thread pool
is started that a child would inherit), no matplotlib backend chosen.

    python tests/forks.py 2 < jobs.jsonl
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import tempfile
import traceback

import nbclient  # noqa: F401  (imported once, for jobs that execute notebooks)
import nbformat  # noqa: F401
import torch  # noqa: F401

import attnlab.cli
import attnlab.lessons  # noqa: F401


def _child(args: list[str], cwd: str, out: str, err: str) -> None:
    """In the forked child: become ``python ARGS`` run in ``cwd``, then exit with its status."""
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the jobs' lines are for this runner only
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    os.chdir(cwd)
    status = 0
    try:
        if args[0] == "-c":
            sys.argv, sys.path[0] = ["-c", *args[2:]], ""
            exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
        elif args[0] == "-m":
            sys.argv, sys.path[0] = [args[1], *args[2:]], os.getcwd()
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv, sys.path[0] = list(args), os.path.dirname(os.path.abspath(args[0]))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:  # as the interpreter reads it: None is 0, a message is 1
        status = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        if not isinstance(e.code, int | None):
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main() -> None:
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    tmp = tempfile.mkdtemp(prefix="forks")
    running: dict[int, tuple[str, str, str]] = {}  # pid -> (key, stdout file, stderr file)
    done: dict[str, list] = {}

    def reap() -> None:
        pid, status = os.wait()
        key, out, err = running.pop(pid)
        texts = [open(p, encoding="utf-8", errors="replace").read() for p in (out, err)]
        done[key] = [os.waitstatus_to_exitcode(status), *texts]

    for n, line in enumerate(sys.stdin):
        key, args, cwd = json.loads(line)
        while len(running) >= width:
            reap()
        out, err = f"{tmp}/{n}.out", f"{tmp}/{n}.err"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(args, cwd, out, err)
        running[pid] = (key, out, err)
    while running:
        reap()
    print(json.dumps(done))


if __name__ == "__main__":
    main()
