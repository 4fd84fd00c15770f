"""What several test areas share: a free port, tiny corpora, token batches, tiny model flags,
the short training of the lessons that train and their runs, made once per process.

Imported as ``helpers`` (tests/conftest.py puts this folder on ``sys.path``; spawned worker
processes inherit that path).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import json
import os
import runpy
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.multiprocessing as mp
from threadpoolctl import threadpool_limits

TINY_CORPUS = "abcdefgh " * 200  # 9 characters: a vocabulary a 1-step model can hold
PROSE_CORPUS = "to be, or not to be: that is the question.\n" * 120
# ``attnlab train gpt`` flags for a GPT that trains in well under a second per step
TINY_GPT = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (for gloo rendezvous)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_thread(rank: int, fn, *args) -> None:
    torch.set_num_threads(1)  # as a DataLoader worker does after a fork
    fn(rank, *args)
    sys.stdout.flush()
    sys.stderr.flush()
    # no teardown: a DDP reducer freed after its gloo group was destroyed can wait forever in
    # the group's destructor for a peer that has already left (seen once in the whole suite)
    os._exit(0)


def run_ranks(fn, args: tuple, nprocs: int) -> None:
    """``torch.multiprocessing.spawn(fn, args, nprocs)`` with forked processes: each rank starts
    with the test process's imports (torch, attnlab) instead of 2-3 s of importing them again."""
    import torch._dynamo  # noqa: F401  (DDP and the optimizers import it: here once, not per rank)

    mp.start_processes(_one_thread, args=(fn, *args), nprocs=nprocs, join=True, start_method="fork")


def fork_spawn(monkeypatch) -> None:
    """Make ``torch.multiprocessing``'s ``spawn`` and ``get_context("spawn")`` fork instead, for
    code under test that starts its own processes (the ring benchmark): the same work in each
    process, without 2-3 s of importing torch again in every one."""
    fork = mp.get_context("fork")
    monkeypatch.setattr(mp, "get_context", lambda method=None: fork)
    monkeypatch.setattr(
        mp,
        "spawn",
        lambda fn, args=(), nprocs=1, join=True, **kw: mp.start_processes(
            fn, args, nprocs, join, start_method="fork"
        ),
    )


def fork_main(argv: list[str]):
    """``python -m attnlab ARGV`` as a forked process (started; its exit status is what
    ``main`` returned): signals reach its own handlers, without importing torch again."""
    import multiprocessing

    proc = multiprocessing.get_context("fork").Process(target=_exit_with_main, args=(argv,))
    proc.start()
    return proc


def _exit_with_main(argv: list[str]) -> None:
    from attnlab.cli import main

    raise SystemExit(main(argv))


def become(args: list[str], cwd: str, out: str, err: str) -> None:
    """In a forked child: become ``python ARGS`` run in ``cwd``, then exit with its status."""
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # nothing to read (a runner reads its jobs there)
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    # streams on those descriptors, as a fresh interpreter has them (not a test's capture)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
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


def fork_run(args: list[str], cwd: str | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` (a script, ``-m module`` or ``-c code``) as a fork of this process, which
    has torch and attnlab imported already; what it printed and its exit status, as
    ``subprocess.run(..., capture_output=True, text=True)`` gives them."""
    with tempfile.TemporaryDirectory() as tmp:
        out, err = f"{tmp}/out", f"{tmp}/err"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            become(list(args), cwd or os.getcwd(), out, err)
        _, status = os.waitpid(pid, 0)
        texts = [Path(p).read_text(encoding="utf-8", errors="replace") for p in (out, err)]
        return subprocess.CompletedProcess(args, os.waitstatus_to_exitcode(status), *texts)


def kernel_env(folder: Path) -> dict[str, str]:
    """The environment under which a kernel named ``python3`` is tests/forks.py's, whose kernel
    spec and socket are in ``folder``: that spec first on ``JUPYTER_PATH``, and the socket."""
    paths = [str(folder), os.environ.get("JUPYTER_PATH", "")]
    jupyter_path = os.pathsep.join(p for p in paths if p)
    return {"JUPYTER_PATH": jupyter_path, "FORKS_KERNELS": str(folder / "kernels.sock")}


_SERVER: dict = {}  # this process's tests/forks.py: "proc", its "folder" and "stderr"


def _fork_server() -> dict:
    """This process's job and kernel runner (tests/forks.py), started at first use with one
    torch thread for its jobs and kept until the process ends (its stdin closes then, and it
    ends once its jobs have), so torch, attnlab, IPython and matplotlib are imported once per
    process whatever the number of fixtures that run jobs or kernels."""
    if _SERVER and _SERVER["proc"].poll() is None:
        return _SERVER
    folder = Path(tempfile.mkdtemp(prefix="forks"))
    stderr = (folder / "stderr.txt").open("w")
    env = {**os.environ, "FORKS_DIR": str(folder), "FORKS_STREAM": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "forks.py"), "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=env,
    )
    _SERVER.update(proc=proc, folder=folder, stderr=folder / "stderr.txt")
    atexit.register(_stop_fork_server, proc, folder, os.getpid())
    return _SERVER


def _stop_fork_server(proc: subprocess.Popen, folder: Path, owner: int) -> None:
    if os.getpid() != owner:  # a fork of the process that started it
        return
    with contextlib.suppress(OSError):
        proc.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=60)
    _remove(folder, owner)


def scratch_dir(prefix: str) -> Path:
    """A new folder under the system's temporary folder (a short path, unlike pytest's
    ``tmp_path``), removed when this process ends."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(_remove, folder, os.getpid())
    return folder


def _remove(folder: Path, owner: int) -> None:
    """Remove ``folder`` at exit, in the process that made it only (not in a fork of it)."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


def fork_jobs(jobs: list[list]) -> dict[str, list]:
    """Run ``jobs`` (tests/forks.py's ``[key, args, cwd]`` or ``[key, args, cwd, after]``, keys
    new to this process) as forks of this process's runner; once all have ended, key ->
    [exit status, stdout, stderr]."""
    server = _fork_server()
    proc = server["proc"]
    proc.stdin.write("".join(json.dumps(j) + "\n" for j in jobs))
    proc.stdin.flush()
    done: dict[str, list] = {}
    while len(done) < len(jobs):
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(server["stderr"].read_text()[-3000:] or "tests/forks.py ended")
        key, *result = json.loads(line)
        done[key] = result
    return done


@contextlib.contextmanager
def forked_kernels():
    """While inside, a Jupyter kernel named ``python3`` that anything in this process starts
    (the book's executor) is a fork of this process's runner (tests/forks.py, which imported
    torch and attnlab once), instead of a fresh python that spends 3 s importing them. With
    the fork server switched off (``ATTNLAB_TEST_FORKS=0``), kernels are ordinary ones."""
    from forks import forking

    if not forking():
        yield
        return
    server = _fork_server()
    spec = server["folder"] / "kernels" / "python3" / "kernel.json"
    deadline = time.monotonic() + 120
    while not spec.exists() and server["proc"].poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # its imports: a few seconds
    env = kernel_env(server["folder"])
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        assert spec.exists() and server["proc"].poll() is None, "tests/forks.py did not start"
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_PAGES: dict[int, tuple] = {}  # id(browser) -> (its page, the listeners of the test using it)


def browser_page(browser, listeners: dict):
    """The one page of ``browser`` (this worker's chromium) that tests navigate in turn, blank,
    with ``listeners`` (event -> handler) in place of the last test's. A new page starts a
    renderer process: twelve book and explorer pages took 28 CPU-seconds opened in a context
    each and 12 navigated in one page. A test that needs a context of its own (a viewport,
    touch, a clock installed) makes one."""
    page, old = _PAGES.get(id(browser), (None, {}))
    if page is None or page.is_closed():
        page, old = browser.new_context(accept_downloads=True).new_page(), {}
    page.goto("about:blank")  # the last test's document ends before its listeners go
    for event, handler in old.items():
        page.remove_listener(event, handler)
    for event, handler in listeners.items():
        page.on(event, handler)
    _PAGES[id(browser)] = (page, listeners)
    return page


def bare_text(text: str) -> str:
    """The text without whitespace or Markdown's backticks: as the terminal renders it, however
    it wraps (CJK lines join without a space)."""
    return "".join(text.replace("`", "").split())


def write_corpus(folder: Path, text: str = TINY_CORPUS, name: str = "corpus.txt") -> Path:
    """A UTF-8 corpus file in ``folder``."""
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8")
    return path


def token_batch(
    vocab: int, batch: int, length: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens x ``(batch, length)`` and next-token targets y (x shifted left by one)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(vocab, (batch, length), generator=g)
    return x, torch.roll(x, -1, dims=1)


SHORT_STEPS = 3  # training steps per model, for the lessons that train (their STEPS): each
# step of these runs evaluates every model on 16 batches (eval_interval 1): lesson 6 cost about
# 17 CPU-seconds a run on 5 steps, 10 on 3; on 2, lesson 7's untrained models emit no date at all
SHORT_TEST = 200  # lesson 7's unseen dates per model (N_TEST; the lesson scores 2,000)
SHORT_TIMED = (64, 128, 256)  # the lengths lessons 1 and 5 time in an exercise (TIMED)
# the language each lesson's suite run writes its figures as PNG files in (``--plots``): the
# language its notebook executes in for the lessons that train, English for the others
FIGURES_IN = {6: "ja", 7: "zh"}
_LESSON_RUNS: dict[tuple, Ran] = {}


@dataclass(frozen=True)
class Ran:
    """One terminal run of a lesson, as ``lesson_run`` made it."""

    text: str  # what the lesson printed (to a pipe: plain text)
    results: dict  # what each step assigned
    session: object  # the session it ended with (callers run cells only in forks of it)
    names: list  # the names bound after each step
    printed: list  # what the setup and each step printed, in order, but the figures
    plots: Path | None  # the folder its figures went to as PNG files (FIGURES_IN), or None


def trains(number: int) -> bool:
    """Lesson ``number`` trains models (its setup has STEPS): by steps, from a seed, on one
    thread, so its numbers are the same in every run; the tests shorten it."""
    from attnlab.lessons import notebooks

    return notebooks.trains(number)


def short(number: int) -> dict:
    """The setup constants the tests shorten, where lesson ``number`` has them: the training
    steps (and lesson 7's test set, N_TEST) and the lengths an exercise times (TIMED)."""
    from attnlab.lessons import runner

    shorter = {"STEPS": SHORT_STEPS, "N_TEST": SHORT_TEST, "TIMED": SHORT_TIMED}
    return {k: v for k, v in shorter.items() if k in runner.setup_constants(number)}


def lesson_run(number: int, lang: str = "en", seed: int = 0) -> tuple[str, dict]:
    """The whole terminal lesson (what it printed, what each step assigned) on the short steps,
    run once per (lesson, language, seed) in this process: tests/lessons' modules share it
    (the lesson's tests, its exports' checks), and tests/conftest.py keeps the tests of a lesson
    on one worker. Callers only read."""
    return lesson_ran(number, lang, seed).text, lesson_ran(number, lang, seed).results


def lesson_steps(number: int, lang: str = "en", seed: int = 0) -> tuple:
    """The session ``lesson_run``'s run of lesson ``number`` ended with (callers run cells only
    in forks of it) and the names bound after each step, from that one run."""
    ran = lesson_ran(number, lang, seed)
    return ran.session, ran.names


def lesson_ran(number: int, lang: str = "en", seed: int = 0) -> Ran:
    """``lesson_run``'s run, all of it (``Ran``)."""
    key = (number, lang, seed)
    if key not in _LESSON_RUNS:
        _LESSON_RUNS[key] = _run_lesson(number, lang, seed)
    return _LESSON_RUNS[key]


def _run_lesson(number: int, lang: str, seed: int) -> Ran:
    """``lessons.run`` of the lesson on one thread (as a script or a notebook runs it here),
    watching its cells run: the session, what each printed and, after the setup and after
    each step, the names bound; the figures as PNG files too where ``FIGURES_IN`` says."""
    from attnlab import lessons
    from attnlab.lessons import runner, show, source

    buf, after, printed, figures = io.StringIO(), {}, [], []
    real, real_plot = runner.Session.run_cell, show.plot
    plots = None
    if seed == 0 and FIGURES_IN.get(number, "en") == lang:
        plots = scratch_dir("plots")  # short: a printed path fits 80 columns

    def plot(name, fig):  # what each figure printed: a quiet run (an export's) prints none
        LANG = show._caller_lang(1)  # noqa: F841 (plot reads its caller's LANG, as lesson code has it)
        with contextlib.redirect_stdout(io.StringIO()) as shown:
            real_plot(name, fig)
        figures.append(shown.getvalue())
        print(figures[-1], end="")

    def watched(self, cell, quiet=False):
        figures.clear()
        out = real(self, cell, quiet)
        if cell.kind in ("setup", "step"):
            after[cell.id or cell.kind] = (self, set(self.ns))
            printed.append(functools.reduce(lambda t, f: t.replace(f, "", 1), figures, out[0]))
        return out

    threads = torch.get_num_threads()
    runner.Session.run_cell, show.plot = watched, plot
    try:  # one BLAS and torch thread: a float64 sum's last digit depends on how it is split
        torch.set_num_threads(1)
        with threadpool_limits(1):
            results = lessons.run(number, lang, seed, plots=plots, out=buf, overrides=short(number))
    finally:
        runner.Session.run_cell, show.plot = real, real_plot
        torch.set_num_threads(threads)
    session, bound = after["setup"]
    names = []
    for cell in runner.steps(number):  # a step without code runs nothing: it binds nothing
        session, bound = after.get(cell.id, (session, bound))
        names.append(bound)
    assert len(after) == 1 + sum(c.has_code for c in runner.steps(number))
    assert source.cells(number)[0].kind == "setup"
    return Ran(buf.getvalue(), results, session, names, printed, plots)


def shared_folder(name: str) -> Path | None:
    """``../shared/<name>`` beside this checkout, or beside the main checkout of a worktree."""
    root = Path(__file__).resolve().parents[1]
    roots = [root]
    dot_git = root / ".git"
    if dot_git.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
        gitdir = Path(dot_git.read_text(encoding="utf-8").split(":", 1)[1].strip())
        if gitdir.parent.name == "worktrees":
            roots.append(gitdir.parents[2])
    for r in roots:
        folder = r.parent / "shared" / name
        if folder.is_dir():
            return folder
    return None
