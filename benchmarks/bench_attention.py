"""The long-context goals of attnlab (issue: tiled attention), measured side by side.

1. T=4096, 8 heads, d=64, float32, causal: tiled_attention time vs torch's SDPA (goal <= 1.5x),
   with the naive NumPy attention for reference.
2. T=16384, 1 head, d=64, float32, causal: tiled peak extra memory (goal < 64 MiB), and T=65536
   running to completion.
3. Backward at T=4096: time vs the forward (goal <= 3x) and peak memory.

Each method runs in its own process (attnlab.bench); times are medians. Run:
    python benchmarks/bench_attention.py
"""

from __future__ import annotations

from attnlab import bench


def main() -> None:
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
