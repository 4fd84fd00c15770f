"""Class mode: grade a folder of submissions as a class hands them in, each file read once and
run in its own sandbox.

Each student (a subfolder, or a file at the top: its own student) may hand in several files:
each exercise's file is found by the function it defines, then by its name; files that define
no exercise function are helpers, never graded, and listed as ignored; a student's other .py
files are importable by the graded one as helper modules (``attnlab.grade.helpers``); several
files for one exercise are attempts, all graded (the gradebook keeps the best).
"""

from __future__ import annotations

import ast
import os
import re
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import helpers as helper_modules
from .exercises import EXERCISES
from .grader import grade_text, internal_error
from .results import CheckResult, Report
from .sandbox import resolve_isolation
from .submission import SUFFIXES, Submission, read_submission


class UnsafeClassError(RuntimeError):
    """Class mode without a real sandbox, and the teacher did not say that is fine."""


@dataclass
class ClassResult:
    """A graded class: the reports, every student (an empty folder too), the files ignored."""

    reports: list[Report]
    students: list[str]
    ignored: list[str] = field(default_factory=list)  # "alice/utils.py (why)"
    exercises: list[str] | None = None  # the assigned exercises, when given


@dataclass
class _File:
    path: Path
    rel: str
    submission: Submission | None  # None: could not be read (``why`` says why)
    why: str = ""
    mistake: str = ""
    defined: tuple[str, ...] = ()  # the exercise functions it defines, catalogue order

    @property
    def own(self) -> str | None:
        """The exercise this file is for: the one it defines, or of several the one its name
        starts with, else the latest in the course (a helper like softmax_rows comes first)."""
        named = [e for e in self.defined if self.path.stem.startswith(e)]
        return (named or list(self.defined[-1:]) or [None])[0]


def submissions_in(folder: Path) -> list[Path]:
    """The .py/.ipynb entries of ``folder`` and of its student subfolders (``alice/hw.py``), one
    level deep; symlinks are listed (to be refused, never followed), linked folders skipped."""
    found = [p for p in folder.iterdir() if p.suffix in SUFFIXES]
    for sub in student_folders(folder):
        found += [p for p in sub.iterdir() if p.suffix in SUFFIXES]
    return sorted(found)


def student_folders(folder: Path) -> list[Path]:
    """The student subfolders of ``folder``, empty ones too; not hidden or linked folders, nor
    what tools leave behind (``__pycache__``, a zip's ``__MACOSX``: names starting ``__``)."""
    return sorted(
        p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
        and p.suffix not in SUFFIXES and not p.name.startswith((".", "__"))
    )  # fmt: skip


def defined_exercises(source: str) -> tuple[str, ...]:
    """The catalogue exercises whose function ``source`` defines at its top level or anywhere
    (a file that does not parse is read with a plain pattern, so it still finds its report)."""
    try:
        names = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        names = set(re.findall(r"^\s*def\s+(\w+)", source, flags=re.MULTILINE))
    return tuple(e for e in EXERCISES if e in names)


def _read(p: Path, folder: Path) -> _File:
    rel = str(p.relative_to(folder))
    if p.is_symlink() or not p.is_file():
        return _File(p, rel, None, "not a regular file (symlinks are not followed)", "crash")
    try:
        sub = read_submission(p, follow_symlinks=False)
    except ValueError as e:  # not a notebook, not Unicode, nested too deeply: says which
        return _File(p, rel, None, str(e), "syntax_error")
    except OSError as e:
        return _File(p, rel, None, f"cannot read it ({e.strerror})", "crash")
    except RecursionError:  # not expected past read_submission's own checks; still this file's
        return _File(p, rel, None, "nested too deeply to read", "syntax_error")
    return _File(p, rel, sub, defined=defined_exercises(sub.code))


def pick(files: list[_File], assigned: list[str] | None):
    """One student's files -> ([(file, exercise)] to grade, ["rel (why)"] ignored).

    Each exercise's file: the files made for it (``own``), else those defining its function,
    else those named for it; several are attempts, all graded. When one assigned exercise is
    left without a file, the files that define no exercise function are graded as it (a renamed
    function gets its ``missing_function`` report, an unreadable file its reason: the exercise
    scores 0 either way); otherwise such files are helpers, never graded."""
    targets = assigned or list(dict.fromkeys(f.own for f in files if f.own))
    plan: list[tuple[_File, str]] = []
    for ex in targets:
        found = (
            [f for f in files if f.own == ex]
            or [f for f in files if ex in f.defined]
            or [f for f in files if f.path.stem.startswith(ex)]
        )
        plan += [(f, ex) for f in found]
    used = {id(f) for f, _ in plan}
    left = [f for f in files if id(f) not in used]
    unmatched = [ex for ex in targets if ex not in {e for _, e in plan}]
    if assigned and len(unmatched) == 1:
        plan += [(f, unmatched[0]) for f in left if not f.defined]
        left = [f for f in left if f.defined]
    ignored = [f"{f.rel} ({_why_ignored(f, assigned)})" for f in left]
    return plan, ignored


def _why_ignored(f: _File, assigned: list[str] | None) -> str:
    if f.submission is None:
        return f.why
    if not f.defined:
        name = helper_modules.module_name(f.path)
        if name is None:
            return "defines no exercise function"
        return f"a helper module, importable as {name}; not graded"
    return f"defines {', '.join(f.defined)}, not assigned"


def student_files(folder: Path) -> dict[str, list[Path]]:
    """{student: their files}: a subfolder's files, or a file at the top as its own student."""
    by: dict[str, list[Path]] = {s.name: [] for s in student_folders(folder)}
    for p in submissions_in(folder):
        rel = p.relative_to(folder)
        by.setdefault(rel.parts[0] if len(rel.parts) > 1 else p.stem, []).append(p)
    return dict(sorted(by.items()))


def grade_dir(
    folder: str | Path,
    exercise: str | None = None,
    jobs: int | None = None,
    *,
    isolation: str = "auto",
    allow_unsandboxed: bool = False,
    **kw,
) -> list[Report]:
    """Grade every student's files in ``folder`` (see ``grade_class``); ``exercise``, when
    given, is the one exercise assigned. Returns the reports."""
    assigned = [exercise] if exercise else None
    return grade_class(
        folder, assigned, jobs, isolation=isolation, allow_unsandboxed=allow_unsandboxed, **kw
    ).reports


def grade_class(
    folder: str | Path,
    exercises: list[str] | None = None,
    jobs: int | None = None,
    *,
    isolation: str = "auto",
    allow_unsandboxed: bool = False,
    **kw,
) -> ClassResult:
    """Grade a class folder in parallel, each file in its own sandbox: for each student, the
    file of each exercise in ``exercises`` (default: every exercise their files define).

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
    by_student = student_files(folder)
    if not any(by_student.values()):
        raise ValueError(f"{folder}: no .py or .ipynb files to grade")
    plan, ignored = [], []
    for files in by_student.values():
        read = [_read(p, folder) for p in files]
        some, left = pick(read, exercises)
        plan += [(f, ex, helpers_of(f, read)) for f, ex in some]
        ignored += left

    def one(job: tuple[_File, str, helper_modules.Helpers]) -> Report:
        """One file's report, whatever the file holds: its failure is its own."""
        f, ex, helpers = job
        try:
            return _one(f, ex, level, {**kw, "helpers": helpers})
        except Exception as e:  # the grader's own failure on this file: that file's error only
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()[:500]
            r = internal_error(ex, f.rel, f"internal grader error: {detail}")
            r.seed = kw.get("seed")
            return r

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        reports = list(pool.map(one, plan))
    return ClassResult(reports, list(by_student), ignored, exercises)


def helpers_of(graded: _File, files: list[_File]) -> helper_modules.Helpers:
    """The helper modules ``graded`` may import: the student's other readable .py files."""
    pairs = [(f.path, f.submission.code) for f in files if f.submission is not None]
    return helper_modules.gather(pairs, graded.path)


def _one(f: _File, exercise: str, level: str, kw: dict) -> Report:
    if f.submission is None:
        checks = [CheckResult("submission", False, f.why)]
        return Report(exercise, False, 0.0, checks, [f.mistake], file=f.rel, seed=kw.get("seed"))
    return grade_text(f.submission, Path(f.rel), exercise, isolation=level, **kw)
