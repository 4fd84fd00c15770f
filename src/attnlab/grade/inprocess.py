"""``attnlab.grade.check``: check a learner's own function in this process, for notebooks.

A learner checking their own code on their own machine needs no sandbox: the function is
called here on the same fixed and random cases as ``attnlab grade``, and judged by the same
code (the same ids, hints and score). ``attnlab grade FILE`` stays the sandboxed path for
anyone grading other people's code.
"""

from __future__ import annotations

import linecache
import re
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import UserError
from .exercises import EXERCISES, Case
from .grader import DEFAULT_SEED, prepared, verdict
from .lines import in_process
from .results import Report
from .sandbox import CaseResult, RunResult
from .submission import read_submission

# the file a Jupyter kernel compiles a cell into (/tmp/ipykernel_123/456.py): a path of the
# machine that ran it, which a traceback on a web book's page would show to every reader
KERNEL_CELL = re.compile(r"^.*[/\\]ipykernel_\d+[/\\][^/\\]+\.py$")


def _learner_error(e: BaseException) -> str:
    """The traceback of the learner's own frames (this module's are left out)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename != __file__]
    for f in frames:  # a notebook cell is named as a cell, not by the kernel's temporary file
        f.filename = KERNEL_CELL.sub("<cell>", f.filename)
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    return "".join(lines + traceback.format_exception_only(type(e), e))


def run_in_process(fn: Callable, cases: list[Case]) -> RunResult:
    """Call ``fn`` on every case here; what the sandbox's harness does, without the sandbox."""
    results = []
    for c in cases:
        args = [a.copy() for a in c.arrays.values()]
        try:
            with np.errstate(all="ignore"):
                r = fn(*args, *c.scalars, **c.kwargs)
        except Exception as e:  # a learner's error is a report, not a crash of the notebook
            results.append(CaseResult(error=_learner_error(e)))
            continue
        parts = list(r) if isinstance(r, (tuple, list)) else [r]
        arrays = []
        for p in parts:
            try:
                a = np.asarray(p)
            except Exception:
                a = None
            arrays.append(a if a is not None and a.dtype.kind in "biuf" else None)
        kinds = [f"ndarray {a.dtype} {a.shape}" if a is not None else type(p).__name__
                 for a, p in zip(arrays, parts, strict=True)]  # fmt: skip
        results.append(CaseResult(arrays, len(parts), type(r).__name__, kinds, inputs_after=args))
    return RunResult(results, isolation="in-process")


def check(
    fn_or_path: Callable | str | Path,
    exercise: str | None = None,
    *,
    seed: int | None = None,
    lang: str = "en",
    hint_level: int = 3,
) -> Report:
    """Check ``fn_or_path`` (a function, or a .py/.ipynb file defining it) as ``exercise``
    (default: the function's name). Returns a Report: ``.passed``, ``.score``, ``.mistakes``,
    ``.hints``; ``print(report)`` reads as ``attnlab grade``'s text, and in Jupyter it shows
    as HTML."""
    fn, name = _resolve(fn_or_path, exercise)
    seed = DEFAULT_SEED if seed is None else seed  # fixed: the same function, the same score
    prep = prepared(name, seed)
    run = run_in_process(fn, [*prep.cases, *prep.twins])
    return verdict(
        prep,
        run,
        [],
        lang,
        trace=lambda f: in_process(fn, f),
        seed=seed,
        isolation=run.isolation,
        hint_level=hint_level,
        source=_source_of(fn),
    )


def _source_of(fn: Callable) -> str:
    """The text of the file (or notebook cell) that defines ``fn``, to quote its lines."""
    name = getattr(getattr(fn, "__code__", None), "co_filename", None)
    return "".join(linecache.getlines(name)) if name else ""


def _resolve(fn_or_path, exercise: str | None) -> tuple[Callable, str]:
    if callable(fn_or_path):
        name = exercise or getattr(fn_or_path, "__name__", "")
        if name not in EXERCISES:
            raise UserError(f"unknown exercise {name!r}; choose one of {', '.join(EXERCISES)}")
        return fn_or_path, name
    path = Path(fn_or_path)
    source = read_submission(path).code
    ns: dict = {"__name__": "submission", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), ns)  # the learner's own file, on their machine
    found = [n for n in EXERCISES if callable(ns.get(n))]
    name = exercise or (found[0] if len(found) == 1 else None)
    if name is None or not callable(ns.get(name)):
        raise UserError(f"{path}: defines none of {', '.join(EXERCISES)} (or several: pass one)")
    return ns[name], name


__all__ = ["check", "run_in_process"]
