"""torch threads on a busy machine: what ``--threads`` should default to.

Trains the tiny GPT preset for a fixed number of steps (``attnlab train gpt``, each run its own
process, no evaluation but the first and last) with ``--threads 1``, ``--threads N`` (N = the
cores this process may use: what torch does by default) and ``--threads auto``, in interleaved
rounds, and prints the training tokens/s each run reports, the wall time and the load average
seen at its start. Run: python benchmarks/bench_threads.py [--iters 30] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def one(threads: str, iters: int) -> tuple[float, float, float]:
    """(tokens/s, wall s, load at start) of one training run with ``--threads threads``."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "attnlab", "train", "gpt", "--out", out, "--force",
               "--max-iters", str(iters), "--eval-interval", "100000", "--threads", threads]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
    tps = float(re.search(r"([\d,]+) tokens/s", done.stdout).group(1).replace(",", ""))
    return tps, wall, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    cores = str(len(os.sched_getaffinity(0)))
    settings = ["1", cores, "auto"]
    got: dict[str, list[tuple[float, float, float]]] = {s: [] for s in settings}
    for r in range(a.rounds):
        for s in settings:
            got[s].append(one(s, a.iters))
            print(f"round {r + 1}, --threads {s}: {got[s][-1][0]:,.0f} tokens/s", file=sys.stderr)
    print(f"tiny preset, {a.iters} steps, {cores} cores; median of {a.rounds} interleaved rounds")
    print("| --threads | tokens/s | wall s | load at start |")
    print("| --- | --- | --- | --- |")
    for s in settings:
        tps, wall, load = (statistics.median(x[i] for x in got[s]) for i in range(3))
        name = f"{s} (torch's default)" if s == cores else s
        print(f"| {name} | {tps:,.0f} | {wall:.1f} | {load:.2f} |")


if __name__ == "__main__":
    main()
