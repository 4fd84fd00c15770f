"""Timing and memory readings shared by the benchmarks (numpy-free, no torch)."""

from __future__ import annotations

import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    """Wall time of ``repeats`` calls of ``fn``, in seconds, one per call."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def status_kib(field: str) -> int:
    """A field of /proc/self/status in KiB: VmRSS (now) or VmHWM (this process's peak; unlike
    getrusage's ru_maxrss it never includes a parent's memory at fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def reset_peak_rss() -> bool:
    """Reset this process's VmHWM to its current resident set (Linux: ``5`` written to
    /proc/self/clear_refs), so the next reading is the peak of what runs after. False where
    the kernel does not allow it (the mark then keeps the older peak)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False
