"""How long does grading take, and what does the bwrap sandbox add?

Grades submissions N times each under both isolation levels, side by side in one run, and prints
the median wall time per submission (sandbox start, NumPy import in the child and the verdict
included) and the sandbox's cost: median(bwrap) - median(process). Then grades a class of 200
files with 2 jobs. Goals (issue 10): <= 0.3 s added per submission, a 200-file class <= 60 s.

Run: python benchmarks/bench_grade.py [--repeats 7] [--class-size 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from attnlab.grade import grade_dir, grade_file
from attnlab.grade.bwrap import unavailable_reason

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "grade" / "submissions"
NAMES = (
    "self_attention__pass__vectorized.py",
    "self_attention__pass__loops.py",
    "self_attention__missing_scale__no_sqrt.py",
    "multi_head_attention__pass__reshape.py",
)


def _median_time(path: Path, isolation: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        grade_file(path, isolation=isolation, seed=0)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--class-size", type=int, default=200)
    args = ap.parse_args()
    why = unavailable_reason()
    levels = ("process",) if why else ("process", "bwrap")
    if why:
        print(f"bwrap unavailable ({why}): process isolation only")
    grade_file(CORPUS / NAMES[0])  # warm up: imports, torch, the bwrap probe
    print(f"{'submission':45s} " + " ".join(f"{lvl + ' s':>10s}" for lvl in levels) + "   added")
    for name in NAMES:
        t = {lvl: _median_time(CORPUS / name, lvl, args.repeats) for lvl in levels}
        added = f"{t['bwrap'] - t['process']:+7.3f}" if "bwrap" in t else ""
        print(f"{name:45s} " + " ".join(f"{t[lvl]:10.3f}" for lvl in levels) + f"  {added}")
    with tempfile.TemporaryDirectory() as tmp:
        sources = [CORPUS / n for n in NAMES if n.startswith("self_attention")]
        for i in range(args.class_size):
            src = sources[i % len(sources)]
            (Path(tmp) / f"student{i:03d}.py").write_bytes(src.read_bytes())
        start = time.perf_counter()
        reports = grade_dir(tmp, "self_attention", jobs=2, allow_unsandboxed=True, seed=0)
        took = time.perf_counter() - start
        print(
            f"\nclass of {len(reports)} files, --jobs 2, {reports[0].isolation}: {took:.1f} s "
            f"({took / len(reports):.3f} s per file)"
        )


if __name__ == "__main__":
    main()
