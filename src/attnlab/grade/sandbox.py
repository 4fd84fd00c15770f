"""Run learner code in an isolated child and bring back only arrays.

Two isolation levels, named in every report:

- ``bwrap``: bubblewrap namespaces (see ``attnlab.grade.bwrap``): no network, no other files, no
  view of other processes, host user ``nobody``, a private tmpfs; the child sees only the
  standard library and NumPy.
- ``process``: a plain ``python -I -S`` child in a session of its own whose ``sys.path`` holds
  the standard library and a folder that links to NumPy alone, under the same seccomp filter as
  bwrap's (``attnlab.grade.seccomp``). It cannot import attnlab or torch by name. Run by root,
  it becomes an unprivileged uid of its own (``attnlab.grade.uids``) before the submission runs,
  and every process of that uid is killed before the grading returns; otherwise it runs as the
  grader's user and could read or write what that user can.

Both get no stdin, a minimal environment, resource limits (address space, CPU seconds, file size,
open files; processes too under bwrap as root), and a wall-clock timeout after which the whole
process group (under bwrap: the whole PID namespace) is killed. Inputs go in through a memfd,
results come back through a pipe; stdout and stderr are read concurrently and capped, so a
submission can neither stall the grader on a pipe nor fill its memory.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import _child, bwrap, seccomp, stream, tracer, uids

# the harness: the tracer's functions, then the child's own code (tracer.py has no imports the
# child cannot make before it finds NumPy)
CHILD_SOURCE = "\n\n".join(Path(m.__file__).read_text(encoding="utf-8") for m in (tracer, _child))
OUTPUT_KEEP = 2**20  # bytes of stdout/stderr kept; the rest is counted and dropped
FILE_MAX = 64 * 2**20
KEEP_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "SYSTEMROOT")
ISOLATIONS = ("auto", "bwrap", "process")


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the submission): an internal grader error."""


@dataclass
class CaseResult:
    outputs: list[np.ndarray | None] = field(default_factory=list)  # numeric parts returned
    n_parts: int = 0
    kind: str | None = None  # type name of the return value
    types: list[str] | None = None
    inputs_after: list[np.ndarray] = field(default_factory=list)
    error: str | None = None  # traceback
    forbidden: str | None = None
    trace: list = field(default_factory=list)  # tracer.Event of a traced case: what each line made


@dataclass
class RunResult:
    cases: list[CaseResult]
    isolation: str = "process"
    load_error: str | None = None
    forbidden: str | None = None
    missing: str | None = None
    timeout: bool = False
    crashed: str | None = None  # the child died without sending results (killed, out of memory)
    stdout: str = ""
    stderr: str = ""
    dropped: int = 0  # bytes of output beyond the cap
    tampered: list[str] = field(default_factory=list)  # NumPy/builtins names the code replaced
    attempts: list[str] = field(default_factory=list)  # forbidden modules or files it sought


def resolve_isolation(isolation: str = "auto") -> str:
    """``bwrap`` where it works, else ``process``; asking for ``bwrap`` where it cannot work is
    an error that says why."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {isolation!r}")
    if isolation == "process":
        return "process"
    why = bwrap.unavailable_reason()
    if why is None:
        return "bwrap"
    if isolation == "bwrap":
        raise SandboxError(why)
    return "process"


def _limits(memory_mb: int, cpu_seconds: int):
    def apply() -> None:
        import resource

        mem = memory_mb * 2**20
        for res, value in (
            (resource.RLIMIT_AS, mem),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_CPU, cpu_seconds),
            (resource.RLIMIT_FSIZE, FILE_MAX),
            (resource.RLIMIT_NOFILE, 256),
            (resource.RLIMIT_MSGQUEUE, 0),  # POSIX message queues: memory RLIMIT_AS misses
        ):
            resource.setrlimit(res, (value, value))

    return apply


def _input_memfd(
    source: str, function: str, cases: list[dict], allowed, filename: str, helpers=None
) -> int:
    spec = {
        "function": function,
        "allowed": allowed,
        "filename": filename,
        "helpers": {name: [file, text] for name, (file, text) in (helpers or {}).items()},
        "seccomp": (seccomp.program() or b"").hex(),  # process isolation loads it itself
        "cases": [
            {
                "arrays": list(c["arrays"]),
                "scalars": c.get("scalars", []),
                "kwargs": c.get("kwargs", {}),
                "expect": [list(s) for s in c["expect"]],
                "shapes": [list(a.shape) for a in c["arrays"].values()],
                "trace": bool(c.get("trace")),
            }
            for c in cases
        ],
    }
    arrays = [
        (f"c{i}_{n}", np.ascontiguousarray(a))
        for i, c in enumerate(cases)
        for n, a in c["arrays"].items()
    ]
    spec["arrays"] = [[key, a.dtype.str, list(a.shape)] for key, a in arrays]
    spec["source"] = source
    # framed as the child answers (_child.frame), then each array's bytes in the header's
    # order (a zip of arrays took the child 40 ms to read)
    data = b"".join(a.tobytes() for _, a in arrays)
    fd = os.memfd_create("attnlab-cases", 0)  # inheritable on purpose: the child reads it
    _child.write_all(fd, _child.frame(json.dumps(spec).encode(), len(data)) + data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class _Pipes:
    """Reads several pipes at once with caps; never blocks past a deadline."""

    def __init__(self, fds: dict[str, int], caps: dict[str, int]):
        self.sel = selectors.DefaultSelector()
        self.data = {name: bytearray() for name in fds}
        self.caps, self.dropped = caps, dict.fromkeys(fds, 0)
        for name, fd in fds.items():
            os.set_blocking(fd, False)
            self.sel.register(fd, selectors.EVENT_READ, name)

    def pump(self, until: float) -> bool:
        """Read until every pipe is closed (True) or ``until`` passes (False)."""
        while self.sel.get_map():
            left = until - time.monotonic()
            if left <= 0:
                return False
            for key, _ in self.sel.select(min(left, 0.5)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    self.sel.unregister(key.fd)
                    continue
                buf, cap = self.data[key.data], self.caps[key.data]
                room = max(0, cap - len(buf))
                buf += chunk[:room]
                self.dropped[key.data] += len(chunk) - min(room, len(chunk))
        return True

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            self.sel.unregister(key.fd)
        self.sel.close()


def _env(home: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
    env.update(
        PATH="/usr/bin:/bin",
        LANG="C.UTF-8",
        HOME=home,
        OPENBLAS_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _process_site(tmp: Path) -> str:
    """A folder that links to NumPy alone: the only third-party path the child gets."""
    site = tmp / "site"
    site.mkdir()
    for d in bwrap.numpy_dirs():
        (site / d.name).symlink_to(d, target_is_directory=True)
    return str(site)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _harness(isolation: str, in_fd: int, out_w: int, tmp: Path | None, drop_uid: int) -> list[str]:
    """The child interpreter running the harness (passed as text: the sandbox cannot see it).
    Process isolation drops the uid late: after NumPy and the input are read."""
    exe, _ = bwrap.interpreter_files()
    site = bwrap.SITE if isolation == "bwrap" else _process_site(tmp)
    when = "early" if isolation == "bwrap" else "late"
    args = [str(in_fd), str(out_w), site, str(drop_uid), when]
    return [str(exe), "-I", "-S", "-c", CHILD_SOURCE, *args]


def _popen(cmd: list[str], env: dict, cwd: str, fds: tuple[int, ...], limits) -> subprocess.Popen:
    return subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
        pass_fds=fds,
        preexec_fn=limits,
    )


def _spawn(
    isolation: str, in_fd: int, out_w: int, tmp: Path | None, limits, uid: int = 0
) -> subprocess.Popen:
    """Start the child: plain (process isolation, as ``uid`` when that is not 0), under bwrap,
    or under bwrap as root."""
    if isolation != "bwrap":
        cmd = _harness(isolation, in_fd, out_w, tmp, uid)
        return _popen(cmd, _env(str(tmp)), str(tmp), (in_fd, out_w), limits)
    host_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # to find bwrap itself
    filt = seccomp.memfd()
    try:
        fds = (in_fd, out_w) + ((filt,) if filt is not None else ())
        if os.geteuid() != 0:
            cmd = [*bwrap.command(_env("/tmp"), map_uid_outside=False, seccomp_fd=filt)]
            cmd += _harness(isolation, in_fd, out_w, tmp, 0)
            return _popen(cmd, host_env, "/", fds, limits)
        return _spawn_as_root(fds, filt, limits, host_env)
    finally:
        if filt is not None:
            os.close(filt)


def _spawn_as_root(fds: tuple, filt: int | None, limits, host_env: dict) -> subprocess.Popen:
    """bwrap started by root: it waits on a pipe while we write its user namespace's uid map
    (65534 inside is the host's nobody), then the harness drops to 65534 before anything else."""
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    try:
        cmd = [*bwrap.command(_env("/tmp"), map_uid_outside=True, seccomp_fd=filt)]
        cmd += ["--info-fd", str(info_w), "--userns-block-fd", str(block_r)]
        cmd += _harness("bwrap", fds[0], fds[1], None, bwrap.NOBODY)
        proc = _popen(cmd, host_env, "/", (*fds, info_w, block_r), limits)
        os.close(info_w)
        os.close(block_r)
        info_w = block_r = -1
        try:
            bwrap.wait_and_map_uid(info_r, block_w)
        except OSError as e:
            _kill_group(proc)
            _, err = proc.communicate()
            raise SandboxError(f"{e}: {err.decode(errors='replace').strip()}") from None
        return proc
    finally:
        for fd in (info_r, info_w, block_r, block_w):
            if fd >= 0:
                os.close(fd)


def run_submission(
    source: str,
    function: str,
    cases: list[dict],
    allowed_imports: list[str] | None,
    timeout: float = 10.0,
    memory_mb: int = 2048,
    filename: str = "submission.py",
    isolation: str = "auto",
    helpers: dict[str, tuple[str, str]] | None = None,
) -> RunResult:
    """Call ``function`` from ``source`` on every case in an isolated child process.

    Each case is ``{"arrays": {name: ndarray}, "scalars": [...], "kwargs": {...}, "expect":
    [shape, ...]}``; arrays are passed positionally in order, then the scalars, then the keyword
    arguments; ``expect`` holds the shape of each part of the right answer (what bounds the
    result stream before it is read: ``attnlab.grade.stream``). ``helpers``: {module name:
    (file name, source)} of the helper modules handed in beside the submission, importable
    inside (copies sent with the cases, held to the same imports as the submission). Raises
    ``SandboxError`` only when the sandbox itself fails, never for what the submission does.
    """
    level = resolve_isolation(isolation)
    # process mode's working folder; bwrap needs none (its /tmp is a private tmpfs)
    tmp = Path(tempfile.mkdtemp(prefix="attnlab-grade-")) if level == "process" else None
    uid = uids.grading_uid() if level == "process" else 0
    if uid:
        os.chown(tmp, uid, uid)  # its only folder; the results folder stays root's
    in_fd = _input_memfd(source, function, cases, allowed_imports, filename, helpers)
    out_r, out_w = os.pipe()
    try:
        limits = _limits(memory_mb, int(timeout) + 2)
        proc = _spawn(level, in_fd, out_w, tmp, limits, uid)
        os.close(out_w)
        out_w = -1
        layout = stream.Layout(
            [[tuple(s) for s in c["expect"]] for c in cases],
            [[a.shape for a in c["arrays"].values()] for c in cases],
            [bool(c.get("trace")) for c in cases],
        )
        return _collect(proc, out_r, layout, timeout, level)
    finally:
        for fd in (in_fd, out_r, out_w):
            if fd >= 0:
                os.close(fd)
        if uid and not uids.kill_all(uid):  # daemons included, before a word is written
            raise SandboxError(f"processes of uid {uid} survived SIGKILL for 5 s")
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _collect(proc, out_r: int, layout: stream.Layout, timeout: float, level: str) -> RunResult:
    cap = len(_child.MAGIC) + layout.stream_cap()  # known before a byte is read
    caps = {"stdout": OUTPUT_KEEP, "stderr": OUTPUT_KEEP, "results": cap}
    fds = {"stdout": proc.stdout.fileno(), "stderr": proc.stderr.fileno(), "results": out_r}
    pipes = _Pipes(fds, caps)
    start = time.monotonic()
    try:
        finished = _pump_while_alive(proc, pipes, start + timeout)
        if not finished and proc.poll() is None:
            return _timed_out(proc, pipes, level)
        try:
            proc.wait(timeout=max(0.5, start + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            return _timed_out(proc, pipes, level)
        pipes.pump(time.monotonic() + 0.5)  # process mode: a background child may hold a pipe
    finally:
        _kill_group(proc)  # anything the submission left behind in its group
        pipes.close()
        proc.stdout.close()
        proc.stderr.close()
    if pipes.dropped["results"]:
        why = f"it sent back more than the {cap} bytes its answers can take"
        return _result(pipes, level, crashed=why)
    return _parse(pipes, proc.returncode, layout, level)


def _pump_while_alive(proc: subprocess.Popen, pipes: _Pipes, until: float) -> bool:
    """Read until every pipe closes (True), or the child exits (True, after half a second more
    to drain: a process that still holds a pipe is a leftover of the submission, killed next,
    and no longer holds the grading to its full timeout), or ``until`` passes (False)."""
    while True:
        if pipes.pump(min(until, time.monotonic() + 0.2)):
            return True
        if proc.poll() is not None:
            pipes.pump(time.monotonic() + 0.5)
            return True
        if time.monotonic() >= until:
            return False


def _timed_out(proc: subprocess.Popen, pipes: _Pipes, level: str) -> RunResult:
    """Kill everything the submission started (bwrap: the PID namespace goes with it), keep
    what it printed up to then, and report the timeout."""
    _kill_group(proc)
    proc.wait()
    pipes.pump(time.monotonic() + 0.5)
    return _result(pipes, level, timeout=True)


def _text(b: bytes | bytearray) -> str:
    return bytes(b).decode("utf-8", errors="replace")


def _result(pipes: _Pipes, level: str, **kw) -> RunResult:
    return RunResult(
        [],
        isolation=level,
        stdout=_text(pipes.data["stdout"]),
        stderr=_text(pipes.data["stderr"]),
        dropped=pipes.dropped["stdout"] + pipes.dropped["stderr"],
        **kw,
    )


def _parse(pipes: _Pipes, returncode: int, layout: stream.Layout, level: str) -> RunResult:
    raw = bytes(pipes.data["results"])
    if not raw.startswith(_child.MAGIC):
        err = _text(pipes.data["stderr"]).strip().splitlines()
        raise SandboxError(
            f"the sandbox did not start (exit code {returncode}): {err[-1] if err else 'no output'}"
        )
    try:  # the child can write anything to its pipe: untrusted, bounded and checked as read
        status, data = stream.read(raw[len(_child.MAGIC) :], layout)
        status = stream.checked_status(status, len(layout.expect))
        return _from_status(_result(pipes, level), status, data, layout)
    except stream.Incomplete:
        why = f"exit code {returncode}" + (f" (signal {-returncode})" if returncode < 0 else "")
        tail = _text(pipes.data["stderr"]).strip().splitlines()[-3:]
        return _result(pipes, level, crashed=why + ("\n" + "\n".join(tail) if tail else ""))
    except stream.Malformed as e:
        return _result(pipes, level, crashed=f"it sent back malformed results: {e}")


def _from_status(result: RunResult, status: dict, data: dict, layout: stream.Layout) -> RunResult:
    """A RunResult from a checked status: only the parts and inputs the exercise has are read."""
    le = status["load_error"]
    result.attempts = status["attempts"]
    if le is not None:
        result.forbidden, result.missing = le["forbidden"], le["missing"]
        result.load_error = le["traceback"]
        if not (le["forbidden"] or le["missing"] or le["traceback"]):
            result.crashed = "it sent back an empty load error"
        return result
    for i, entry in enumerate(status["cases"]):
        cr = CaseResult(n_parts=entry["n"], kind=entry["kind"], types=entry["types"])
        if entry["error"] is not None:
            cr.error, cr.forbidden = entry["error"]["traceback"], entry["error"]["forbidden"]
        else:
            n_out = min(cr.n_parts, len(layout.expect[i]))
            cr.outputs = [data.get(f"r{i}_{j}") for j in range(n_out)]
            missing = [j for j in range(len(layout.inputs[i])) if f"a{i}_{j}" not in data]
            if missing:
                raise stream.Malformed(f"case {i} without its input {missing[0]}")
            cr.inputs_after = [data[f"a{i}_{j}"] for j in range(len(layout.inputs[i]))]
            cr.trace = [
                tracer.Event(line, name, data[f"t{i}_{k}"])
                for k, (line, name) in enumerate(entry["trace"])
                if f"t{i}_{k}" in data
            ]
        result.cases.append(cr)
    result.tampered = status["tampered"]
    return result
