"""The test suite's time by xdist group: how ``make test`` can spread over the cores.

Sums each test's time by the xdist group it is in (``tests/conftest.py`` puts them there, and
``--dist loadgroup`` ends a grouped test's node id with ``@group``; a test without one may go
to any worker) and prints, per group, the seconds its tests took, largest first, then the sum
of the ungrouped tests and the total. A group runs on one worker, so the largest group is a
floor under the suite's wall time; the total over the number of workers is another.

The times: CPU-seconds, which a busy machine changes little, when the run loaded this file as
a plugin (each test's setup, call and teardown: the worker's own CPU time, that of the
processes it waited for and that of its live children, such as the fork runner of
``helpers.fork_jobs``; written to ``SUITE_CPU/<worker>.json``)::

    SUITE_CPU=build/cpu PYTHONPATH=tools pytest -p suite_groups -n auto --dist loadgroup
    python tools/suite_groups.py build/cpu [--top 25]

A worker's sum is right; one test's share may hold CPU that an earlier test's threads or
children spent in the background (counted when they ran or were waited for), so read single
tests with care. Or wall seconds, from a ``--durations=0`` report (on a busy machine they hold
the waiting too)::

    pytest -q -n auto --dist loadgroup --durations=0 > durations.txt
    python tools/suite_groups.py durations.txt
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROW = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S.*?)\s*$")


def _cpu() -> float:
    """This process's CPU-seconds, those of the children it waited for and those of its live
    children so far (a runner kept for the whole session, such as tests/forks.py)."""
    done = sum(
        u.ru_utime + u.ru_stime
        for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )
    return done + sum(map(_live, _children()))


def _children() -> list[int]:
    pids = []
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


def _live(pid: int) -> float:
    """A live child's CPU-seconds and those of the children it waited for (``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


_SPENT: dict[str, float] = defaultdict(float)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # a plugin hook (``-p suite_groups``)
    start = _cpu()
    yield
    _SPENT[item.nodeid] += _cpu() - start


def pytest_sessionfinish(session) -> None:  # a plugin hook: this worker's CPU-seconds
    folder = os.environ.get("SUITE_CPU")
    if folder and _SPENT:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, f"{worker}.json").write_text(json.dumps(_SPENT))


def durations(text: str) -> dict[str, float]:
    """Seconds per node id (setup, call and teardown summed) from a ``--durations`` report."""
    out: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        if m := ROW.match(line):
            out[m.group(3)] += float(m.group(1))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("report")
    p.add_argument("--top", type=int, default=25)
    known = p.parse_args()
    report = Path(known.report)
    if report.is_dir():  # CPU-seconds per test, from each worker
        times = {k: v for f in report.glob("*.json") for k, v in json.loads(f.read_text()).items()}
    else:
        times = durations(report.read_text(encoding="utf-8", errors="replace"))
    per: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for node, secs in times.items():
        key = node.rpartition("@")[2] if "@" in node else "(no group)"
        per[key] += secs
        counts[key] += 1
    total = sum(per.values())
    rows = sorted(((v, k) for k, v in per.items() if not k.startswith("(")), reverse=True)
    print(f"{'seconds':>8}  {'tests':>5}  group")
    for v, k in rows[: known.top]:
        print(f"{v:8.1f}  {counts[k]:5d}  {k}")
    if len(rows) > known.top:
        rest_s = sum(v for v, _ in rows[known.top :])
        print(f"{rest_s:8.1f}  {'':5}  ({len(rows) - known.top} more groups)")
    for k in sorted(k for k in per if k.startswith("(")):
        print(f"{per[k]:8.1f}  {counts[k]:5d}  {k}")
    print(f"{total:8.1f}  {sum(counts.values()):5d}  total ({total / 2:.1f} a worker on 2)")


if __name__ == "__main__":
    sys.exit(main())
