"""``attnlab grade``: grade learners' NumPy attention against PyTorch and name the mistake.

- ``exercises``: the catalogue (contract, cases, reference, known mistakes)
- ``sandbox``: runs learner code in a separate, limited process
- ``grader``: turns what came back into checks and mistake ids
- ``report``: text, JSON, JUnit and class CSV
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .exercises import EXERCISES
from .grader import Check, Report, grade_file, grade_source
from .starter import write_starter


def submissions_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix in (".py", ".ipynb") and p.is_file())


def grade_dir(
    folder: str | Path, exercise: str | None = None, jobs: int | None = None, **kw
) -> list[Report]:
    """Grade every .py/.ipynb in ``folder`` in parallel (each in its own sandboxed process)."""
    files = submissions_in(Path(folder))
    if not files:
        raise ValueError(f"{folder}: no .py or .ipynb files to grade")

    def one(p: Path) -> Report:
        try:
            return grade_file(p, exercise, **kw)
        except ValueError as e:  # could not tell the exercise: a report, not a crash
            return Report(
                exercise or "unknown",
                False,
                0.0,
                [Check("exercise", False, str(e))],
                ["wrong_return"],
                file=str(p),
            )

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        return list(pool.map(one, files))


__all__ = [
    "EXERCISES",
    "Check",
    "Report",
    "grade_dir",
    "grade_file",
    "grade_source",
    "write_starter",
]
