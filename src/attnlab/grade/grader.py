"""Grade one submission: static checks, a sandboxed run, and a verdict made in this process.

This module orchestrates; the evidence is weighed in ``diagnosis`` and the ids are the table in
``mistakes``. Every failure becomes a report (syntax errors, forbidden imports, crashes,
timeouts, wrong shapes, wrong values); the grader itself never raises on a submission.
"""

from __future__ import annotations

import ast
import re
import threading
import traceback
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..i18n import Text
from . import diagnosis
from . import helpers as helper_modules
from .diagnosis import Prepared
from .exercises import EXERCISES, repeats, twins
from .lines import LearnerTrace, dtype_lines, mistake_lines
from .mistakes import hint
from .results import CheckResult, Report
from .sandbox import RunResult, resolve_isolation, run_submission
from .submission import SUFFIXES, Submission, read_submission

DEFAULT_SEED = 0  # the random cases' seed unless one is given: the same file, the same score
OUTPUT_SHOWN = 2000  # characters of the learner's printed output kept in a report
_PREPARING = threading.Lock()
# every case raised NotImplementedError: the starter as it came, its TODO not yet written
NOT_WRITTEN = {
    "name": Text("the function written", "関数の実装", "函数的实现"),
    "message": Text(
        "not written yet: it raises NotImplementedError",
        # each fits 80 columns behind "  FAIL  the function written: " (不合格  関数の実装：)
        "まだ書かれていません（NotImplementedError のまま）。",
        "尚未编写（仍抛出 NotImplementedError），写好后再检查一次。",
    ),
}


def _finish(
    exercise: str,
    checks: list[CheckResult],
    mistakes: list[str],
    lang: str,
    hint_level: int = 3,
    **kw,
) -> Report:
    seen = list(dict.fromkeys(mistakes))  # first occurrence order, no repeats
    scored = [c for c in checks if c.scored]
    earned = sum(c.points for c in scored if c.passed)
    total = sum(c.points for c in scored)
    ex = EXERCISES.get(exercise)
    return Report(
        exercise,
        all(c.passed for c in checks) and bool(scored) and not seen,
        round(earned / total, 4) if total else 0.0,
        checks,
        seen,
        hints={m: ex.hint(m, lang, hint_level) if ex else hint(m, lang, hint_level) for m in seen},
        lang=lang,
        points=earned,
        max_points=total,
        **kw,
    )


def prepared(exercise: str, seed: int) -> Prepared:
    """The cases, twins (and repeats) and right answers of ``exercise`` at ``seed``, computed
    once per process
    (a class graded at one seed computes them once, not once per student)."""
    with _PREPARING:
        return _prepared(exercise, seed)


def forget_prepared() -> None:
    """Drop the prepared cases (a teacher's exercise registered again under its name)."""
    with _PREPARING:
        _prepared.cache_clear()


@lru_cache(maxsize=256)  # small arrays; a 20-seed sweep of 7 exercises fits
def _prepared(exercise: str, seed: int) -> Prepared:
    ex = EXERCISES[exercise]
    cases = ex.make_cases(np.random.default_rng(seed))
    pairs = twins(cases, seed) + repeats(cases)
    expected = [diagnosis.expected_of(ex, c) for c in cases]
    return Prepared(ex, cases, [c for _, c in pairs], [i for i, _ in pairs], expected)


def detect_exercise(source: str) -> str | None:
    """The catalogue exercise whose function the source defines, if exactly one (a file that
    does not parse is read with a plain pattern, so it can still get its syntax_error report)."""
    try:
        defined = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    except SyntaxError:
        defined = set(re.findall(r"^\s*def\s+(\w+)", source, flags=re.MULTILINE))
    found = [name for name in EXERCISES if name in defined]
    return found[0] if len(found) == 1 else None


def _printed(run: RunResult) -> str:
    """The learner's own printed output, trimmed (learners debug with print)."""
    text = (run.stdout + run.stderr).strip()
    extra = run.dropped + max(0, len(text) - OUTPUT_SHOWN)
    text = text[:OUTPUT_SHOWN]
    return text + (f"\n... ({extra} more characters not shown)" if extra else "")


SHOWN_MAX = 144  # cells: a failing case larger than this is described, not drawn


def _smallest_failing_weights(
    prep: Prepared, run: RunResult, checks: list[CheckResult]
) -> dict | None:
    """For exercises that return weights (or a mask): the learner's and the expected array on
    the smallest failing case, to show side by side. Only outputs, never the case's inputs."""
    ex, cases, expected = prep.ex, prep.cases, prep.expected
    name = next((n for n in ("weights", "mask") if n in ex.returns), None)
    if name is None:
        return None
    k = ex.returns.index(name)
    best = None
    for case, cr, check, answer in zip(cases, run.cases, checks, expected, strict=False):
        got = cr.outputs[k] if not check.passed and len(cr.outputs) > k else None
        if got is None:
            continue
        want = answer[k]
        if got.shape == want.shape and want.size <= SHOWN_MAX:
            if best is None or want.size < best[0]:
                best = (want.size, case.name, got, want)
    if best is None:
        return None

    def plain(a: np.ndarray) -> list:  # JSON-safe: NaN and Inf become None (null)
        a = np.asarray(a, dtype=np.float64)
        cells = a.astype(object)
        cells[~np.isfinite(a)] = None
        return cells.tolist()

    _, case_name, got, want = best
    return {"case": case_name, "name": name, "got": plain(got), "expected": plain(want)}


def grade_source(
    source: str,
    exercise: str,
    *,
    lang: str = "en",
    timeout: float = 10.0,
    seed: int = DEFAULT_SEED,
    memory_mb: int = 2048,
    file: str = "",
    isolation: str = "auto",
    hint_level: int = 3,
    helpers: helper_modules.Helpers | None = None,
) -> Report:
    """Grade Python ``source`` as a submission for ``exercise``.

    ``isolation``: ``"auto"`` (bwrap where it works), ``"bwrap"`` (or fail) or ``"process"``.
    ``helpers``: {module name: (file name, source)}, the helper modules handed in beside it,
    importable inside the sandbox (``attnlab.grade.helpers``).
    Raises ``SandboxError`` when the sandbox itself fails: that is not the submission's fault.
    """
    ex = EXERCISES[exercise]
    meta = {
        "file": file,
        "seed": seed,
        "isolation": resolve_isolation(isolation),
        "hint_level": hint_level,
    }
    helpers = helpers or {}
    if helpers:
        meta["notes"] = [helper_modules.note(helpers, helper_modules.imported(source, helpers))]
    checks, static_mistake = _static_checks(source, ex, helpers)
    if static_mistake:
        return _finish(exercise, checks, [static_mistake], lang, **meta)
    prep = prepared(exercise, seed)
    run = run_submission(
        source,
        ex.name,
        [
            {
                "arrays": c.arrays,
                "scalars": list(c.scalars),
                "kwargs": c.kwargs,
                "expect": shapes,
                "trace": i < len(prep.cases) and ex.variant is not None,  # to show the line
            }
            for i, (c, shapes) in enumerate(
                zip([*prep.cases, *prep.twins], _answer_shapes(prep), strict=True)
            )
        ],
        list(ex.allowed_imports) if ex.allowed_imports is not None else None,
        timeout=timeout,
        memory_mb=memory_mb,
        filename=Path(file).name if file else "submission.py",
        isolation=meta["isolation"],
        helpers=helpers,
    )
    meta.update(isolation=run.isolation, output=_printed(run))
    failure = diagnosis.run_failure(run, ex, timeout)
    if failure is not None:
        return _finish(exercise, [*checks, failure[0]], [failure[1]], lang, **meta)
    n = len(prep.cases) + len(prep.twins)
    if len(run.cases) != n:  # the child's results are untrusted: a learner can forge them
        msg = f"the submission's process returned {len(run.cases)} results for {n} cases"
        return _finish(
            exercise, [*checks, CheckResult("runs", False, msg)], ["crash"], lang, **meta
        )
    return verdict(prep, run, checks, lang, trace=lambda f: _traced(run), source=source, **meta)


def _static_checks(source: str, ex, helpers: helper_modules.Helpers):
    """``diagnosis.static_checks`` with the helpers importable, then the same import rule on
    each helper the submission imports (a helper importing torch is a forbidden import)."""
    if not helpers or ex.allowed_imports is None:
        return diagnosis.static_checks(source, ex)
    allowed = (*ex.allowed_imports, *helpers)
    checks, mistake = diagnosis.static_checks(source, replace(ex, allowed_imports=allowed))
    if mistake:
        return checks, mistake
    for name in helper_modules.imported(source, helpers):
        file, text = helpers[name]
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            msg = f"helper {file}, line {e.lineno}: {e.msg}"
            return [*checks, CheckResult("valid Python", False, msg, scored=False)], "syntax_error"
        bad = diagnosis.forbidden_imports(tree, allowed)
        if bad:
            msg = (
                f"helper {file} imports {', '.join(bad)}; allowed here: "
                f"{', '.join(ex.allowed_imports)}, the standard library and your helper modules"
            )
            fail = CheckResult("allowed imports", False, msg, scored=False)
            return [*checks[:-1], fail], "forbidden_import"
    return checks, None


def _traced(run: RunResult) -> LearnerTrace:
    """The learner's events on a case, as the sandbox traced them (untrusted: a line number
    shown is only ever quoted from the graded source itself)."""
    return lambda i: run.cases[i].trace if i < len(run.cases) else []


def _answer_shapes(prep: Prepared) -> list[list[tuple[int, ...]]]:
    """The shape of each part of the right answer, per case then per twin (a twin has its
    case's shapes): what bounds the sandbox's result stream before it is read."""
    own = [[np.shape(a) for a in answer] for answer in prep.expected]
    return own + [own[i] for i in prep.twin_of]


def verdict(
    prep: Prepared,
    run: RunResult,
    checks: list[CheckResult],
    lang: str,
    trace: Callable[[diagnosis.Findings], LearnerTrace] | None = None,
    **meta,
) -> Report:
    """The report for a run that answered every case (and twin): the judged cases after
    ``checks`` (the gate checks already passed), the smallest failing weights, any tampering,
    and, where ``trace`` can trace the learner's function, the line of each named mistake.
    Shared by the sandboxed grader and ``check`` (in-process)."""
    f = diagnosis.judge(prep, run, meta.get("output", ""))
    _points(prep, f.checks)
    if _untouched(run):
        return _not_written(prep, checks, f.checks, lang, **meta)
    meta["shown"] = _smallest_failing_weights(prep, run, f.checks)
    if trace is not None and f.ids:
        learner = trace(f)
        meta["lines"] = mistake_lines(f, learner) | dtype_lines(f, learner)
    return _finish(prep.ex.name, checks + f.checks, f.ids, lang, **meta)


def _untouched(run: RunResult) -> bool:
    """Every case raised NotImplementedError: the starter's TODO, nothing written yet."""
    last = [(r.error or "").strip().splitlines()[-1:] for r in run.cases]
    return bool(last) and all(x and x[0].startswith("NotImplementedError") for x in last)


def _not_written(
    prep: Prepared, gates: list[CheckResult], judged: list[CheckResult], lang: str, **meta
) -> Report:
    """One failed check in place of the judged ones, the total still theirs (a starter scores
    0 of the same points as any other hand-in: one class, one column); no mistake is named."""
    check = CheckResult(NOT_WRITTEN["name"](lang), False, NOT_WRITTEN["message"](lang))
    r = _finish(prep.ex.name, [*gates, check], [], lang, **meta)
    return replace(r, max_points=sum(c.points for c in judged))  # as if it had answered


def _points(prep: Prepared, checks: list[CheckResult]) -> None:
    """Each check's points: its case's, else the exercise's for a whole-run check."""
    of_case = {c.name: c.points for c in prep.cases}
    for c in checks:
        c.points = of_case.get(c.name, prep.ex.check_points(c.name))


def internal_error(exercise: str, file: str, message: str) -> Report:
    """A report that carries no verdict: the grader broke, not the submission."""
    return Report(exercise, False, 0.0, [], [], file=file, error=message)


def grade_file(path: str | Path, exercise: str | None = None, **kw) -> Report:
    """Grade a .py or .ipynb file; ``exercise`` is detected from the function it defines if None.

    Raises ``ValueError`` when the exercise cannot be told. A failure of the grader itself gives
    a report with ``error`` set (never a FAILED verdict).
    """
    path = Path(path)
    try:
        submission = read_submission(path)
    except ValueError as e:
        return _finish(
            exercise or "unknown",
            [CheckResult("valid notebook", False, str(e))],
            ["syntax_error"],
            kw.get("lang", "en"),
            file=str(path),
        )
    return grade_text(submission, path, exercise, **kw)


def grade_text(submission: Submission, path: Path, exercise: str | None = None, **kw) -> Report:
    """Grade a submission already read from ``path`` (read once; never opened again). For a
    notebook, every line number in the report names its cell."""
    source = submission.code
    name = exercise or detect_exercise(source)
    if name is None:
        if Path(path).suffix not in SUFFIXES:
            raise ValueError(f"{path}: expected a Python file (.py) or a notebook (.ipynb)")
        raise ValueError(
            f"{path}: cannot tell which exercise this is (it must define exactly one of "
            f"{', '.join(EXERCISES)}); pass --exercise NAME"
        )
    if name not in EXERCISES:
        raise ValueError(f"unknown exercise {name!r}; choose one of {', '.join(EXERCISES)}")
    try:
        r = grade_source(source, name, file=str(path), **kw)
    except Exception as e:  # the grader's own failure: reported as such, never as the learner's
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return internal_error(name, str(path), f"internal grader error: {detail}")
    for c in r.checks:
        c.message = submission.relabel(c.message)
    if submission.notes:
        r.checks.append(
            CheckResult("notebook cells", True, "; ".join(submission.notes), scored=False)
        )
    return r
