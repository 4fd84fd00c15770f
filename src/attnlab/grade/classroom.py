"""Class mode: grade a folder of submissions, each read once and run in its own sandbox."""

from __future__ import annotations

import os
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .grader import grade_text, internal_error
from .notebook import read_submission
from .results import CheckResult, Report
from .sandbox import resolve_isolation

SUFFIXES = (".py", ".ipynb")


class UnsafeClassError(RuntimeError):
    """Class mode without a real sandbox, and the teacher did not say that is fine."""


def submissions_in(folder: Path) -> list[Path]:
    """The .py/.ipynb entries of ``folder`` and of its student subfolders (``alice/hw.py``), one
    level deep; symlinks are listed (to be refused, never followed), linked folders skipped."""
    found = [p for p in folder.iterdir() if p.suffix in SUFFIXES]
    for sub in folder.iterdir():
        if sub.is_dir() and not sub.is_symlink() and not sub.name.startswith("."):
            found += [p for p in sub.iterdir() if p.suffix in SUFFIXES]
    return sorted(found)


def _refused(path: Path, exercise: str | None, why: str, mistake: str, folder: Path) -> Report:
    checks = [CheckResult("submission", False, why)]
    rel = str(path.relative_to(folder))
    return Report(exercise or "unknown", False, 0.0, checks, [mistake], file=rel)


def grade_dir(
    folder: str | Path,
    exercise: str | None = None,
    jobs: int | None = None,
    *,
    isolation: str = "auto",
    allow_unsandboxed: bool = False,
    **kw,
) -> list[Report]:
    """Grade every .py/.ipynb in ``folder`` in parallel, each in its own sandbox.

    Without bwrap (``isolation`` resolves to ``process``) a folder of untrusted code is refused
    with ``UnsafeClassError`` unless ``allow_unsandboxed`` is set. The folder is only read.
    """
    level = resolve_isolation(isolation)
    if level != "bwrap" and not allow_unsandboxed:
        from . import bwrap

        why = bwrap.unavailable_reason() or "process isolation was asked for"
        raise UnsafeClassError(
            f"refusing to grade a class folder without a sandbox ({why}); "
            "pass --no-sandbox to grade it anyway with process isolation only"
        )
    folder = Path(folder)
    files = submissions_in(folder)
    if not files:
        raise ValueError(f"{folder}: no .py or .ipynb files to grade")

    def one(p: Path) -> Report:
        """One file's report, whatever the file holds: its failure is its own."""
        try:
            return _one(p, folder, exercise, level, kw)
        except Exception as e:  # the grader's own failure on this file: that file's error only
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()[:500]
            rel = str(p.relative_to(folder))
            return internal_error(exercise or "unknown", rel, f"internal grader error: {detail}")

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        return list(pool.map(one, files))


def _one(p: Path, folder: Path, exercise: str | None, level: str, kw: dict) -> Report:
    if p.is_symlink() or not p.is_file():
        why = "not a regular file (symlinks are not followed)"
        return _refused(p, exercise, why, "crash", folder)
    try:
        submission = read_submission(p, follow_symlinks=False)
    except ValueError as e:  # not a notebook, not Unicode, nested too deeply: says which
        return _refused(p, exercise, str(e), "syntax_error", folder)
    except OSError as e:
        return _refused(p, exercise, f"cannot read it ({e.strerror})", "crash", folder)
    except RecursionError:  # not expected past read_submission's own checks; still this file's
        return _refused(p, exercise, "nested too deeply to read", "syntax_error", folder)
    try:
        return grade_text(submission, p.relative_to(folder), exercise, isolation=level, **kw)
    except ValueError as e:  # could not tell the exercise: a report, not a crash
        return _refused(p, exercise, str(e), "missing_function", folder)
