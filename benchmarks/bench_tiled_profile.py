"""Where the tiled forward's time goes, next to torch's SDPA: one thread each, CPU time.

The goal (benchmarks/bench_attention.py --goal) is a wall-clock ratio on two threads, which a
shared machine moves by 10-30% from run to run. This script measures what the ratio is made
of on one thread (BLAS and torch held to one thread each), with each thread's own CPU time
(``time.thread_time``: the time other processes take from the core is not counted):

1. T=4096, 8 heads, d=64, float32, causal: ``tiled_attention(workers=1)`` and torch's SDPA,
   in interleaved rounds: median CPU time of each and the median per-round ratio.
2. The fast path's operations (``tiled_kernel._tile`` timed op by op, in one extra run): the two
   matmuls, exp, the row sums, the rest (Python, the strips' masks, sums across tiles).
3. One tile (512 keys x 256 queries): NumPy's exp and torch's exp per element, and the matmuls'
   GFLOP/s against a 2048^3 matmul's.

Run: python benchmarks/bench_tiled_profile.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F
from threadpoolctl import threadpool_limits

from attnlab.ref import tiled_attention, tiled_kernel

T, HEADS, E = 4096, 8, 64


def cpu_ms(fn, reps: int = 1) -> float:
    """This thread's CPU time of ``reps`` calls of fn, in ms per call."""
    start = time.thread_time()
    for _ in range(reps):
        fn()
    return (time.thread_time() - start) * 1e3 / reps


def side_by_side(q, k, v, rounds: int) -> dict[str, list[float]]:
    """CPU ms of tiled_attention (one worker) and torch's SDPA, interleaved, ``rounds`` each."""
    qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))

    def torch_sdpa():
        with torch.no_grad():
            F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)

    runs = {"tiled": lambda: tiled_attention(q, k, v, is_causal=True, workers=1)}
    runs["torch"] = torch_sdpa
    for fn in runs.values():
        fn()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            times[name].append(cpu_ms(fn))
    return times


def op_shares(q, k, v) -> tuple[float, dict[str, float]]:
    """(CPU ms of one run, CPU ms per operation of the fast path's tiles) with ``_tile`` timed
    op by op (the timers add a little to the run)."""
    spent: collections.Counter[str] = collections.Counter()
    clock = time.thread_time

    def timed_tile(kj, vj, qTh, flat, floor, keep, acc_out, sum_out, ones):
        pT = flat[: len(kj) * qTh.shape[1]].reshape(len(kj), qTh.shape[1])
        t0 = clock()
        np.matmul(kj, qTh, out=pT)
        t1 = clock()
        if floor is not None:
            np.maximum(pT, floor, out=pT)
        np.exp(pT, out=pT)
        t2 = clock()
        if keep is not None:
            pT[len(pT) - len(keep) :] *= keep
        t3 = clock()
        np.matmul(pT.T, vj, out=acc_out)
        t4 = clock()
        np.matmul(ones[: len(pT)], pT, out=sum_out)
        t5 = clock()
        for name, dt in zip(("scores q.k", "exp", "mask", "p @ v", "row sums"),
                            (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):  # fmt: skip
            spent[name] += dt * 1e3

    real = tiled_kernel._tile
    tiled_kernel._tile = timed_tile
    try:
        total = cpu_ms(lambda: tiled_attention(q, k, v, is_causal=True, workers=1))
    finally:
        tiled_kernel._tile = real
    return total, dict(spent)


def one_tile(rounds: int) -> dict[str, float]:
    """ns per element of NumPy's and torch's exp on a 512 x 256 float32 tile; GFLOP/s of the
    tile's two matmuls and of a 2048^3 one (best of ``rounds``)."""
    rng = np.random.default_rng(0)
    s = rng.standard_normal((512, 256)).astype(np.float32)
    out = np.empty_like(s)
    st, ot = torch.from_numpy(s), torch.from_numpy(out)
    kj, qT = (
        rng.standard_normal((512, E), dtype=np.float32),
        rng.standard_normal((E, 256), dtype=np.float32),
    )
    pv = np.empty((256, E), np.float32)
    big = rng.standard_normal((2048, 2048), dtype=np.float32)
    big_out = np.empty_like(big)
    n, flops = s.size, 2 * 512 * 256 * E
    best = collections.defaultdict(lambda: float("inf"))
    for _ in range(rounds):
        best["numpy exp"] = min(best["numpy exp"], cpu_ms(lambda: np.exp(s, out=out), 50) * 1e6 / n)
        best["torch exp"] = min(
            best["torch exp"], cpu_ms(lambda: torch.exp(st, out=ot), 50) * 1e6 / n
        )
        best["scores"] = min(best["scores"], cpu_ms(lambda: np.matmul(kj, qT, out=out), 50))
        best["p @ v"] = min(best["p @ v"], cpu_ms(lambda: np.matmul(out.T, kj, out=pv), 50))
        best["2048^3"] = min(best["2048^3"], cpu_ms(lambda: np.matmul(big, big, out=big_out)))
    return {
        "numpy exp ns/element": best["numpy exp"],
        "torch exp ns/element": best["torch exp"],
        "scores matmul GFLOP/s": flops / best["scores"] / 1e6,
        "p @ v matmul GFLOP/s": flops / best["p @ v"] / 1e6,
        "2048^3 matmul GFLOP/s": 2 * 2048**3 / best["2048^3"] / 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    a = ap.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, HEADS, T, E)).astype(np.float32) for _ in range(3))
    with threadpool_limits(limits=1, user_api="blas"):
        print(f"load average at the start: {os.getloadavg()[0]:.2f}")
        times = side_by_side(q, k, v, a.rounds)
        ratio = statistics.median(
            x / y for x, y in zip(times["tiled"], times["torch"], strict=True)
        )
        tiled_ms, torch_ms = (statistics.median(times[n]) for n in ("tiled", "torch"))
        print(f"1. T={T}, {HEADS} heads, d={E}, float32, causal, one thread, CPU time, median of "
              f"{a.rounds} interleaved rounds: tiled {tiled_ms:.0f} ms, torch SDPA {torch_ms:.0f} "
              f"ms, ratio {ratio:.3f}x")  # fmt: skip
        total, spent = op_shares(q, k, v)
        spent["rest"] = total - sum(spent.values())
        print(f"2. the fast path's operations (one timed run, {total:.0f} ms):")
        for name, ms in spent.items():
            print(f"   {name:12s} {ms:6.1f} ms  {ms / total:6.1%}")
        print("3. one 512 x 256 tile, best of the rounds:")
        for name, value in one_tile(a.rounds).items():
            print(f"   {name:24s} {value:6.2f}")
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
