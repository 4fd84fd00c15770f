"""How long does grading one submission take? (issue goal: under 3 s)

Grades a correct and a wrong self_attention submission N times each and prints the median and
spread of the wall time (sandboxed child process included). Run: python benchmarks/bench_grade.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from attnlab.grade import grade_file

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "grade" / "submissions"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    grade_file(CORPUS / "self_attention__pass__vectorized.py")  # warm up: imports, torch
    print(f"{'submission':45s} {'median s':>9s} {'min s':>7s} {'max s':>7s}")
    for name in (
        "self_attention__pass__vectorized.py",
        "self_attention__pass__loops.py",
        "self_attention__missing_scale__no_sqrt.py",
        "multi_head_attention__pass__reshape.py",
    ):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            grade_file(CORPUS / name)
            times.append(time.perf_counter() - start)
        print(f"{name:45s} {statistics.median(times):9.3f} {min(times):7.3f} {max(times):7.3f}")


if __name__ == "__main__":
    main()
