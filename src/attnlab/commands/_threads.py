"""``--threads``: torch's intra-op threads for the commands that train or sample.

torch starts one thread per core. On a machine whose cores are busy with other work, those
threads wait for each other at every op, and a small model trains many times slower than on
one thread (``benchmarks/bench_threads.py`` measures it; README, "Threads"). The default,
``auto``, takes the cores that are idle now: the cores this process may use, less the load
average of the last minute (rounded), at least 1; under torchrun, shared among the local ranks.
"""

from __future__ import annotations

import argparse
import os


def add_threads(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--threads",
        type=_threads,
        default="auto",
        metavar="N|auto",
        help="torch threads in this process (default auto: the idle cores now, at least 1; "
        "on a busy machine that is 1, often several times faster than one thread per core)",
    )


def _threads(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 or 'auto', got {text!r}")
    return n


def auto_threads(cores: int | None = None, load: float | None = None, ranks: int = 1) -> int:
    """Idle cores now, shared among ``ranks`` processes: (cores - round(load)) // ranks, >= 1."""
    cores = len(os.sched_getaffinity(0)) if cores is None else cores
    load = os.getloadavg()[0] if load is None else load
    return max(1, (cores - round(load)) // max(1, ranks))


def apply_threads(value: int | str) -> int:
    """Set torch's intra-op threads from ``--threads``; returns the number set."""
    import torch

    ranks = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    n = auto_threads(ranks=ranks) if value == "auto" else int(value)
    torch.set_num_threads(n)
    return n
