"""Measurements in a fresh process: ``python -m attnlab.bench.probe METHOD H D DTYPE CAUSAL REPEATS T...``

Prints one JSON line per length: the run times and the peak extra resident memory, read from
/proc/self/status (VmHWM, this process's high-water mark; getrusage's ru_maxrss would include the
parent's memory at fork). Lengths run in ascending order, so the mark after length T's first run
is that run's peak. One process per method keeps one method's memory from hiding another's.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from .measure import status_kib, timed
from .methods import METHODS


def main(argv: list[str]) -> None:
    method, H, D, dtype, causal, repeats, *lengths = argv
    H, D, repeats, causal, dt = int(H), int(D), int(repeats), causal == "1", np.dtype(dtype)
    m = METHODS[method]
    rng = np.random.default_rng(0)
    m.prepare(64, H, D, dt, causal, rng)()  # warm up: thread pools, BLAS buffers, lazy imports
    for T in sorted(int(t) for t in lengths):
        run = m.prepare(T, H, D, dt, causal, rng)
        base = status_kib("VmRSS")
        times = timed(run, repeats)
        peak = max(0, status_kib("VmHWM") - base) * 1024
        print(json.dumps({"T": T, "times": times, "peak_extra_bytes": peak}), flush=True)
        del run


if __name__ == "__main__":
    main(sys.argv[1:])
