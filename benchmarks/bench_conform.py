"""The conform goal (issue 35): the kit's checks take at most 10 s beyond importing torch.

Each measurement is a fresh Python process (an import is only slow the first time), timing
``import torch`` plus attnlab's conform package, then ``check_attention`` on the target (every
default row), in wall seconds and CPU seconds (all threads). Two ways side by side, interleaved,
``--repeats`` rounds, medians:

- ``now``: the kit as it is: cases on one torch thread (the twice-called case on the caller's
  threads), gradients through the scalar ``sum(out * grad_out)``;
- ``before``: the same code with those two changes undone in the child (torch's threads left
  as they are, ``out.backward(grad_out)``), which is the kit as it was before them.

Both reports must be identical, digit for digit, or the script says so and exits 1. Then the
whole command, ``attnlab conform TARGET`` (a process of its own, start to exit), ``--repeats``
times. The load average is printed before and after: on a shared machine, wall time waits for
the cores, CPU time much less so.

Run: python benchmarks/bench_conform.py [--repeats 3] [--target MODULE:FUNCTION]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

REFERENCE = "torch.nn.functional:scaled_dot_product_attention"

CHILD = r"""
import json, sys, time
variant, target = sys.argv[1], sys.argv[2]
w0, c0 = time.perf_counter(), time.process_time()
import torch
import attnlab.conform as conform
from attnlab.conform import calls, reference, run
w1, c1 = time.perf_counter(), time.process_time()
if variant == "before":  # the two changes undone: torch's threads as they are, backward(tensor)
    from contextlib import nullcontext
    run.torch_threads = lambda n: nullcontext()
    calls.backward = reference.backward = lambda out, g: out.backward(g)
fn = conform.load_target(target)
report = conform.check_attention(fn, target=target)
w2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"import_s": w1 - w0, "import_cpu": c1 - c0, "check_s": w2 - w1,
                  "check_cpu": c2 - c1, "passed": report.passed, "report": str(report),
                  "threads": torch.get_num_threads()}))
"""


def child(variant: str, target: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, variant, target], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def command(target: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``attnlab conform TARGET``, start to exit (children's CPU)."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "attnlab", "conform", target],
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--target", default=REFERENCE)
    a = ap.parse_args()
    print(f"target {a.target}; {os.cpu_count()} CPUs; load {_load()} at the start", flush=True)
    runs: dict[str, list[dict]] = {"now": [], "before": []}
    for i in range(a.repeats):
        for variant in ("now", "before") if i % 2 == 0 else ("before", "now"):
            runs[variant].append(child(variant, a.target))
            print(f"  round {i + 1} {variant}: {_line(runs[variant][-1])}", flush=True)
    digests = {hashlib.sha256(r["report"].encode()).hexdigest() for v in runs.values() for r in v}
    print("\n| way | import torch + kit: wall (CPU) | checks: wall (CPU) | passed |")
    print("| --- | --- | --- | --- |")
    for variant, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0] if k.endswith(("_s", "_cpu"))}
        print(
            f"| {variant} | {med['import_s']:.1f} s ({med['import_cpu']:.1f} s) | "
            f"{med['check_s']:.2f} s ({med['check_cpu']:.2f} s) | {rs[0]['passed']} |"
        )
    whole = [command(a.target) for _ in range(a.repeats)]
    wall, cpu = statistics.median(w for w, _ in whole), statistics.median(c for _, c in whole)
    print(f"\nattnlab conform {a.target}: {wall:.1f} s wall ({cpu:.1f} s CPU), median of "
          f"{a.repeats}; goal: checks <= 10 s beyond the import")  # fmt: skip
    print(
        f"load {_load()} at the end; reports identical across ways and rounds: {len(digests) == 1}"
    )
    return 0 if len(digests) == 1 else 1


def _line(r: dict) -> str:
    return (
        f"import {r['import_s']:.1f} s ({r['import_cpu']:.1f} s CPU), checks {r['check_s']:.2f} s "
        f"({r['check_cpu']:.2f} s CPU), {r['threads']} torch threads, passed {r['passed']}"
    )


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
