"""Measurements in a fresh process: ``python -m attnlab.bench.probe METHOD H D DTYPE CAUSAL REPEATS T...``

Prints one JSON line per length: the run times and the peak extra memory of one call. Times
come from runs with nothing traced. Memory comes from one more call, read two ways and the
larger kept: NumPy's allocations through ``tracemalloc`` (NumPy reports every array buffer to
it, so a temporary freed before the call returns still counts), and the resident set's
high-water mark over the call (``/proc/self/status`` VmHWM, reset just before it where Linux
allows: torch's allocations, which tracemalloc does not see). One process per method keeps one
method's memory from hiding another's.
"""

from __future__ import annotations

import json
import sys
import tracemalloc

import numpy as np

from .measure import reset_peak_rss, status_kib, timed
from .methods import METHODS


def peak_extra_bytes(run) -> tuple[int, int]:
    """(traced, resident): NumPy's peak allocation during one ``run()`` and the growth of the
    resident set's high-water mark over it, in bytes."""
    reset_peak_rss()
    base = status_kib("VmRSS")
    tracemalloc.start()
    try:
        run()
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    resident = max(0, status_kib("VmHWM") - base) * 1024
    return traced, resident


def main(argv: list[str]) -> None:
    method, H, D, dtype, causal, repeats, *lengths = argv
    H, D, repeats, causal, dt = int(H), int(D), int(repeats), causal == "1", np.dtype(dtype)
    m = METHODS[method]
    rng = np.random.default_rng(0)
    m.prepare(64, H, D, dt, causal, rng)()  # warm up: thread pools, BLAS buffers, lazy imports
    for T in sorted(int(t) for t in lengths):
        run = m.prepare(T, H, D, dt, causal, rng)
        times = timed(run, repeats)
        traced, resident = peak_extra_bytes(run)
        line = {"T": T, "times": times, "peak_extra_bytes": max(traced, resident)}
        print(json.dumps({**line, "traced_bytes": traced, "rss_bytes": resident}), flush=True)
        del run


if __name__ == "__main__":
    main(sys.argv[1:])
