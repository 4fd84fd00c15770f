"""The long-context goals of attnlab (issue: tiled attention), measured side by side.

1. T=4096, 8 heads, d=64, float32, causal: tiled_attention time vs torch's SDPA (goal <= 1.2x,
   the median of interleaved runs in one process: ``forward_goal``), with the table's per-process
   times and the naive NumPy attention for reference.
2. T=16384, 1 head, d=64, float32, causal: tiled peak extra memory (goal < 64 MiB), and T=65536
   running to completion.
3. Backward at T=4096: time vs the forward (goal <= 3x) and peak memory.

In the tables each method runs in its own process (attnlab.bench); times are medians. Run:
    python benchmarks/bench_attention.py            (all, a few minutes)
    python benchmarks/bench_attention.py --goal     (goal 1 only, interleaved, ~20 s)
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from attnlab import bench

# After each call torch's OpenMP threads spin for about 8 ms before they sleep (measured here:
# the process's CPU time in an idle pause after a call). A call timed at once after torch's
# shares the cores with them (tiled_attention took 1-4% longer so, in 31 paired rounds), so
# every timed call, torch's included, starts after a pause.
SETTLE_S = 0.05


def forward_goal(T: int = 4096, heads: int = 8, rounds: int = 15) -> float:
    """tiled_attention / torch SDPA at (1, heads, T, 64), float32, causal: both run in turn in
    this process, ``rounds`` times, each after a pause of SETTLE_S; prints and returns the
    median of the per-round ratios."""
    import torch
    import torch.nn.functional as F

    from attnlab.ref import tiled_attention

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, heads, T, 64)).astype(np.float32) for _ in range(3))
    qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))

    def torch_sdpa():
        with torch.no_grad():
            F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)

    runs = {"tiled": lambda: tiled_attention(q, k, v, is_causal=True), "torch": torch_sdpa}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for fn in runs.values():
        fn()  # warm-up
    for _ in range(rounds):
        for name, fn in runs.items():  # interleaved: both see the same load
            time.sleep(SETTLE_S)
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    ratio = statistics.median(a / b for a, b in zip(times["tiled"], times["torch"], strict=True))
    print(
        f"1. T={T}, {heads} heads, d=64, float32, causal, median of {rounds} interleaved rounds: "
        f"tiled {statistics.median(times['tiled']):.3f} s, torch SDPA "
        f"{statistics.median(times['torch']):.3f} s, ratio {ratio:.2f}x  [goal <= 1.2x]"
    )
    return ratio


def main() -> None:
    forward_goal()
    if "--goal" in sys.argv[1:]:
        return
    runs = [
        bench.BenchConfig(
            lengths=(1024, 2048, 4096),
            methods=("naive", "tiled", "torch", "tiled-bwd", "torch-bwd"),
            causal=True,
            repeats=7,
        ),
        bench.BenchConfig(
            lengths=(16384, 65536), methods=("tiled", "torch"), heads=1, causal=True, repeats=1
        ),
    ]
    for cfg in runs:
        rows, roof = bench.run(cfg, progress=False)
        print(bench.table(rows, roof, cfg))
        by = {(r.method, r.T): r for r in rows}
        fwd, bwd = by.get(("tiled", 4096)), by.get(("tiled-bwd", 4096))
        if fwd and bwd and fwd.time_s and bwd.time_s:
            print(f"tiled backward / forward at T=4096: {bwd.time_s / fwd.time_s:.2f}x")
        print()


if __name__ == "__main__":
    main()
