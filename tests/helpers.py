"""What several test areas share: a free port, tiny corpora, token batches, tiny model flags,
the short training budget of the lessons that train and their runs, made once per process.

Imported as ``helpers`` (tests/conftest.py puts this folder on ``sys.path``; spawned worker
processes inherit that path).
"""

from __future__ import annotations

import io
import socket
from pathlib import Path

import torch
import torch.multiprocessing as mp

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


def run_ranks(fn, args: tuple, nprocs: int) -> None:
    """``torch.multiprocessing.spawn(fn, args, nprocs)`` with forked processes: each rank starts
    with the test process's imports (torch, attnlab) instead of 2-3 s of importing them again."""
    import torch._dynamo  # noqa: F401  (DDP and the optimizers import it: here once, not per rank)

    mp.start_processes(_one_thread, args=(fn, *args), nprocs=nprocs, join=True, start_method="fork")


def fork_spawn(monkeypatch) -> None:
    """Make ``torch.multiprocessing``'s ``spawn`` and ``get_context("spawn")`` fork instead, for
    code under test that starts its own processes (the ring benchmark): the same work in each
    process, without 2-3 s of importing torch again in every one."""
    import torch._dynamo  # noqa: F401  (imported here once, as in run_ranks)

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


SHORT_BUDGET = 0.5  # seconds of training per model, for the lessons that train: a few steps each
_LESSON_RUNS: dict[tuple, tuple[str, dict]] = {}


def short(number: int) -> dict:
    """The short budget, for a lesson whose setup has a BUDGET; nothing for the others."""
    from attnlab.lessons import runner

    return {"BUDGET": SHORT_BUDGET} if "BUDGET" in runner.tunable(number) else {}


def lesson_run(number: int, lang: str = "en", seed: int = 0) -> tuple[str, dict]:
    """The whole terminal lesson (what it printed, what each step assigned) on the short budget,
    run once per (lesson, language, seed) in this process: tests/lessons' modules share it, and
    tests/conftest.py keeps the tests of a lesson that trains on one worker. Callers only read."""
    from attnlab import lessons

    key = (number, lang, seed)
    if key not in _LESSON_RUNS:
        buf = io.StringIO()
        results = lessons.run(number, lang, seed, out=buf, overrides=short(number))
        _LESSON_RUNS[key] = buf.getvalue(), results
    return _LESSON_RUNS[key]
