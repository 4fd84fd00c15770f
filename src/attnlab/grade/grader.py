"""Grade one submission: static checks, a sandboxed run, and a verdict made in this process.

Every failure becomes a report (syntax errors, forbidden imports, crashes, timeouts, wrong
shapes, wrong values); the grader itself never raises on a submission.
"""

from __future__ import annotations

import ast
import re
import sys
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..parity import compare
from .exercises import EXERCISES, Case, Exercise
from .hints import hint
from .notebook import Submission, read_submission
from .sandbox import CaseResult, RunResult, resolve_isolation, run_submission

OUTPUT_SHOWN = 2000  # characters of the learner's printed output kept in a report


@dataclass
class Check:
    name: str
    passed: bool
    message: str = ""
    scored: bool = True  # False for the gate checks (parsing, imports), and for "inputs left
    # unchanged" when the function never answered: an untouched starter scores 0


@dataclass
class Report:
    exercise: str
    passed: bool
    score: float
    checks: list[Check]
    mistakes: list[str]
    file: str = ""
    seed: int | None = None
    hints: dict[str, str] = field(default_factory=dict)
    isolation: str = ""  # "bwrap" or "process": how the submission was isolated
    shown: dict | None = None  # the smallest failing case's weights: {case, name, got, expected}
    output: str = ""  # what the submission printed (trimmed)
    error: str | None = None  # an internal grader error: no verdict on the submission
    lang: str = "en"  # the language of the hints, and of str() and the HTML view

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        from .report import text

        return text(self)

    def _repr_html_(self) -> str:
        """Jupyter's view: the verdict, the failed checks and the hints, every text escaped."""
        from .report import report_html

        return report_html(self)


def _finish(
    exercise: str, checks: list[Check], mistakes: list[str], lang: str, hint_level: int = 3, **kw
) -> Report:
    seen = list(dict.fromkeys(mistakes))  # first occurrence order, no repeats
    scored = [c for c in checks if c.scored]
    return Report(
        exercise,
        all(c.passed for c in checks) and bool(scored) and not seen,
        round(sum(c.passed for c in scored) / len(scored), 4) if scored else 0.0,
        checks,
        seen,
        hints={m: hint(m, lang, hint_level) for m in seen},
        lang=lang,
        **kw,
    )


def detect_exercise(source: str) -> str | None:
    """The catalogue exercise whose function the source defines, if exactly one (a file that
    does not parse is read with a plain pattern, so it can still get its syntax_error report)."""
    try:
        defined = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}
    except SyntaxError:
        defined = set(re.findall(r"^\s*def\s+(\w+)", source, flags=re.MULTILINE))
    found = [name for name in EXERCISES if name in defined]
    return found[0] if len(found) == 1 else None


def forbidden_imports(tree: ast.AST, allowed: tuple[str, ...]) -> list[str]:
    ok = set(allowed) | set(sys.stdlib_module_names)
    bad = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        bad += [n.split(".")[0] for n in names if n.split(".")[0] not in ok]
    return sorted(set(bad))


def _as_float64(case: Case) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.float64) for a in case.arrays.values()]


def _matches(
    got: list[np.ndarray], candidate: tuple, expected: tuple, low_precision: bool = False
) -> bool:
    """Whether the learner's outputs equal a wrong variant (which itself differs from the truth),
    within float32's tolerance when the task or the answer is in float32."""
    if candidate is None or len(candidate) < len(got):
        return False
    differs = False
    for g, c, e in zip(got, candidate, expected, strict=False):
        c = np.asarray(c, dtype=np.float64)
        if g is None or g.shape != c.shape:
            return False
        loose = low_precision or g.dtype != np.float64
        tol = {"rtol": 1e-3, "atol": 1e-5} if loose else {"rtol": 1e-7, "atol": 1e-9}
        if not np.allclose(g.astype(np.float64), c, equal_nan=True, **tol):
            return False
        if e.shape != c.shape or not np.allclose(c, e, equal_nan=True):
            differs = True
    return differs


def _last_line(tb: str) -> str:
    lines = [ln for ln in tb.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "error"


def _judged_precision(answer: np.dtype, case: Case) -> type | None:
    """The dtype whose error budget an answer gets: the task's, never the answer's own.

    float64 cases are judged at float64 unless the answer was computed in float32 (the course's
    everyday precision, which then gets float32's budget); float32 cases at float32. An answer in
    a lower precision (float16) never widens the budget: casting down cannot hide an error.
    """
    if case.float32 or answer == np.float32 or np.finfo(answer).bits < 32:
        return np.float32
    return None


# (mistake id, which of its variants) -> True: reproduces the answer; False: refuted by it
Evidence = dict[tuple[str, int], bool]


def _expected(ex: Exercise, case: Case) -> tuple:
    """The right answer for ``case``: the float64 torch oracle, computed once per case."""
    return ex.reference(*_as_float64(case), *case.scalars, **case.kwargs)


def _check_case(
    ex: Exercise, case: Case, cr: CaseResult, expected: tuple
) -> tuple[Check, list[str], Evidence]:
    check, ids = _shape_check(ex, case, cr, expected)
    if check is not None:
        return check, ids, {}
    args64 = _as_float64(case)
    got = cr.outputs[: len(ex.returns)]
    problems, direct = _problems(ex, case, got, expected, args64)
    evidence = _evidence(ex, case, got, expected, args64)
    if not problems:
        return Check(case.name, True), [], evidence
    return Check(case.name, False, "; ".join(problems)), direct, evidence


def _shape_check(
    ex: Exercise, case: Case, cr: CaseResult, expected: tuple
) -> tuple[Check | None, list[str]]:
    """A failure before any number can be compared: an error, or the wrong kind or shape."""
    if cr.forbidden:
        msg = f"imports {cr.forbidden!r}, which this exercise forbids"
        return Check(case.name, False, msg), ["forbidden_import"]
    if cr.error:
        msg = f"raised {_last_line(cr.error)}\n{cr.error.rstrip()}"
        return Check(case.name, False, msg), ["crash"]
    want_tuple = len(ex.returns) > 1
    if want_tuple and (cr.kind not in ("tuple", "list") or cr.n_parts != len(ex.returns)):
        got = f"{cr.kind} of {cr.n_parts}" if cr.kind in ("tuple", "list") else str(cr.kind)
        return Check(case.name, False, f"expected a tuple ({', '.join(ex.returns)}), got {got}"), [
            "wrong_return"
        ]
    if not want_tuple and cr.kind in ("tuple", "list"):
        return Check(case.name, False, f"expected one array ({ex.returns[0]}), got a {cr.kind}"), [
            "wrong_return"
        ]
    got = cr.outputs[: len(ex.returns)]
    for name, g, e, t in zip(ex.returns, got, expected, cr.types or [], strict=False):
        if g is None:
            return Check(case.name, False, f"{name}: expected a numeric array, got {t}"), [
                "wrong_return"
            ]
        if g.shape != e.shape:
            return Check(case.name, False, f"{name} has shape {g.shape}, expected {e.shape}"), [
                "wrong_return"
            ]
    return None, []


def _problems(
    ex: Exercise, case: Case, got: list, expected: tuple, args64: list
) -> tuple[list[str], list[str]]:
    """What is wrong with each returned array, and the mistakes the answer itself proves
    (a NaN where the answer is finite on ordinary inputs; a mask that is not bool)."""
    problems, direct = [], []
    for name, g, e in zip(ex.returns, got, expected, strict=True):
        if e.dtype == bool:
            if not np.array_equal(g.astype(bool), e):
                bad = np.argwhere(g.astype(bool) != e)
                problems.append(f"{name} differs from the expected mask at {bad[0].tolist()}")
            elif g.dtype != bool:
                problems.append(
                    f"{name} is {g.dtype}, expected a bool array (np.tril(..., dtype=bool))"
                )
                direct.append("mask_dtype")
            continue
        if g.dtype.kind not in "f":
            g = g.astype(np.float64)
        low = _judged_precision(g.dtype, case)
        naive = None
        if low is not None and ex.naive is not None:
            low_args = [a.astype(low) for a in args64]
            with np.errstate(all="ignore"):  # a low-precision yardstick: its flags are not news
                naive = ex.naive(*low_args, *case.scalars, **case.kwargs)[ex.returns.index(name)]
        p = compare(g if low is None else g.astype(low), e, naive)
        if p.ok:
            continue
        bad_nan = (~np.isfinite(g)) & np.isfinite(e)
        if bad_nan.any():
            where = np.argwhere(bad_nan)[0].tolist()
            problems.append(f"{name} has NaN/Inf at {where} where the answer is finite")
            if not case.large:  # NaN on ordinary inputs is a mistake by itself
                direct.append("nan_output")
        else:
            err = np.abs(g.astype(np.float64) - e)
            i = tuple(int(j) for j in np.unravel_index(np.argmax(err), e.shape))
            problems.append(
                f"{name}: {p.message}; at {list(i)} got {g[i]:.6g}, expected {e[i]:.6g}"
            )
    return problems, direct


def _evidence(ex: Exercise, case: Case, got: list, expected: tuple, args64: list) -> Evidence:
    """For each known mistake whose code gives a different answer than the right code on this
    case: does it reproduce the learner's answer (True) or not (False, refuted)? The learner's
    own answer feeds the probes (a hypothesis read off it, e.g. the base of a sin/cos table),
    which are consulted only when no fixed variant reproduces the answer."""
    args = (*args64, *case.scalars)
    found = _weigh(ex.mistakes(*args, **case.kwargs), got, expected, case.float32)
    if ex.probes is not None and not any(found.values()):  # probes: keys of their own
        found.update(_weigh(ex.probes(*args, got, **case.kwargs), got, expected, case.float32))
    return found


def _weigh(candidates: dict, got: list, expected: tuple, low_precision: bool) -> Evidence:
    """Each variant that differs from the right answer here either reproduces the learner's
    answer or is refuted by it; a variant equal to the right answer tells nothing."""
    return {
        (mid, k): _matches(got, c, expected, low_precision)
        for mid, alts in candidates.items()
        for k, c in enumerate(alts)
        if c is not None and _differs(c, expected)
    }


def _differs(candidate: tuple, expected: tuple) -> bool:
    for c, e in zip(candidate, expected, strict=False):
        c = np.asarray(c, dtype=np.float64)
        if c.shape != e.shape or not np.allclose(c, e, equal_nan=True):
            return True
    return False


def _printed(run: RunResult) -> str:
    """The learner's own printed output, trimmed (learners debug with print)."""
    text = (run.stdout + run.stderr).strip()
    extra = run.dropped + max(0, len(text) - OUTPUT_SHOWN)
    text = text[:OUTPUT_SHOWN]
    return text + (f"\n... ({extra} more characters not shown)" if extra else "")


def _run_failure(run: RunResult, ex: Exercise, timeout: float) -> tuple[Check, str] | None:
    """The check and mistake id for a run that produced no per-case results, if it did not."""
    if run.timeout:
        return Check("finishes in time", False, f"still running after {timeout:g} s"), "timeout"
    if run.crashed:
        return Check("runs", False, f"the process died: {run.crashed}"), "crash"
    if run.forbidden:
        msg = f"imports {run.forbidden!r} at run time"
        return Check("allowed imports", False, msg), "forbidden_import"
    if run.missing:
        msg = f"no function named {run.missing!r}; expected {ex.signature}"
        return Check("defines the function", False, msg), "missing_function"
    if run.load_error:
        msg = f"raised while loading: {_last_line(run.load_error)}\n{run.load_error.rstrip()}"
        return Check("loads", False, msg), "crash"
    return None


def _static_checks(source: str, ex: Exercise) -> tuple[list[Check], str | None]:
    """Parse and look at the imports before running anything; the mistake id if that fails."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        msg = f"line {e.lineno}: {e.msg}" + (f"\n    {e.text.rstrip()}" if e.text else "")
        return [Check("valid Python", False, msg, scored=False)], "syntax_error"
    checks = [Check("valid Python", True, scored=False)]
    if ex.allowed_imports is None:
        return checks, None
    bad = forbidden_imports(tree, ex.allowed_imports)
    if bad:
        allowed = ", ".join(ex.allowed_imports)
        msg = f"imports {', '.join(bad)}; allowed here: {allowed} and the standard library"
        return [*checks, Check("allowed imports", False, msg, scored=False)], "forbidden_import"
    return [*checks, Check("allowed imports", True, scored=False)], None


def _judge_cases(
    ex: Exercise, cases: list[Case], run: RunResult, expected: list[tuple]
) -> tuple[list[Check], list[str]]:
    checks: list[Check] = []
    direct: list[str] = []
    matched: dict[tuple[str, int], int] = {}
    refuted: set[tuple[str, int]] = set()
    mutated: list[str] = []
    for case, cr, want in zip(cases, run.cases, expected, strict=True):
        check, ids, evidence = _check_case(ex, case, cr, want)
        checks.append(check)
        direct += ids
        for mid, fits in evidence.items():
            if fits:
                matched[mid] = matched.get(mid, 0) + 1
            else:
                refuted.add(mid)
        for (name, before), after in zip(case.arrays.items(), cr.inputs_after, strict=False):
            if not np.array_equal(before, after, equal_nan=True) and name not in mutated:
                mutated.append(name)
    if any(c.arrays for c in cases):  # exercises with array inputs: were they left alone?
        msg = "" if not mutated else f"changed its input(s) {', '.join(mutated)} in place"
        answered = any(cr.error is None and cr.outputs for cr in run.cases)
        checks.append(Check("inputs left unchanged", not mutated, msg, scored=answered))
    failed = any(not c.passed for c in checks)
    named = _supported(matched, refuted)
    if named:  # a known mistake explains the NaN: no separate nan_output
        direct = [m for m in direct if m != "nan_output"]
    counts = {m: direct.count(m) for m in direct}
    ordered = (named if failed else []) + sorted(counts, key=lambda m: -counts[m])
    if _hardcoded(ex, cases, run, expected):
        ordered.insert(0, "hardcoded_output")
    return checks, ordered + (["mutates_input"] if mutated else [])


def _supported(matched: dict[tuple[str, int], int], refuted: set[tuple[str, int]]) -> list[str]:
    """Ids with a variant that reproduced the answer somewhere and was refuted nowhere, the
    best supported first."""
    support: dict[str, int] = {}
    for (mid, k), n in matched.items():
        if (mid, k) not in refuted:
            support[mid] = max(support.get(mid, 0), n)
    return sorted(support, key=lambda m: -support[m])


SHOWN_MAX = 144  # cells: a failing case larger than this is described, not drawn


def _smallest_failing_weights(
    ex: Exercise, cases: list[Case], run: RunResult, checks: list[Check], expected: list[tuple]
) -> dict | None:
    """For exercises that return weights (or a mask): the learner's and the expected array on
    the smallest failing case, to show side by side. Only outputs, never the case's inputs."""
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


def _hardcoded(ex: Exercise, cases: list[Case], run: RunResult, expected: list[tuple]) -> bool:
    """Evidence of stored answers: two cases whose right answers differ got the same arrays."""
    seen: list[tuple[tuple, Case, tuple]] = []
    for case, cr, want in zip(cases, run.cases, expected, strict=True):
        got = tuple(cr.outputs[: len(ex.returns)])
        if not got or any(g is None for g in got):
            continue
        for other, prev, was in seen:
            same_inputs = prev.arrays.keys() == case.arrays.keys() and all(
                np.array_equal(prev.arrays[n], case.arrays[n]) for n in case.arrays
            )
            if same_inputs and prev.scalars == case.scalars:
                continue  # only the keyword differs (mask=True vs False): not evidence
            if len(other) == len(got) and all(
                a.shape == b.shape and np.array_equal(a, b) for a, b in zip(other, got, strict=True)
            ):
                if any(
                    w.shape != v.shape or not np.allclose(w, v)
                    for w, v in zip(want, was, strict=True)
                ):
                    return True
        seen.append((got, case, want))
    return False


def grade_source(
    source: str,
    exercise: str,
    *,
    lang: str = "en",
    timeout: float = 10.0,
    seed: int = 0,
    memory_mb: int = 2048,
    file: str = "",
    isolation: str = "auto",
    hint_level: int = 3,
) -> Report:
    """Grade Python ``source`` as a submission for ``exercise``.

    ``isolation``: ``"auto"`` (bwrap where it works), ``"bwrap"`` (or fail) or ``"process"``.
    Raises ``SandboxError`` when the sandbox itself fails: that is not the submission's fault.
    """
    ex = EXERCISES[exercise]
    meta = {
        "file": file,
        "seed": seed,
        "isolation": resolve_isolation(isolation),
        "hint_level": hint_level,
    }
    checks, static_mistake = _static_checks(source, ex)
    if static_mistake:
        return _finish(exercise, checks, [static_mistake], lang, **meta)
    cases = ex.make_cases(np.random.default_rng(seed))
    run = run_submission(
        source,
        ex.name,
        [{"arrays": c.arrays, "scalars": list(c.scalars), "kwargs": c.kwargs} for c in cases],
        list(ex.allowed_imports) if ex.allowed_imports is not None else None,
        timeout=timeout,
        memory_mb=memory_mb,
        filename=Path(file).name if file else "submission.py",
        isolation=meta["isolation"],
    )
    meta.update(isolation=run.isolation, output=_printed(run))
    failure = _run_failure(run, ex, timeout)
    if failure is not None:
        return _finish(exercise, [*checks, failure[0]], [failure[1]], lang, **meta)
    if len(run.cases) != len(cases):  # the child's results are untrusted: a learner can forge them
        msg = f"the submission's process returned {len(run.cases)} results for {len(cases)} cases"
        return _finish(exercise, [*checks, Check("runs", False, msg)], ["crash"], lang, **meta)
    return verdict(ex, cases, run, checks, lang, **meta)


def verdict(
    ex: Exercise, cases: list[Case], run: RunResult, checks: list[Check], lang: str, **meta
) -> Report:
    """The report for a run that answered every case: the judged cases after ``checks`` (the
    gate checks already passed), the smallest failing weights, any tampering. Shared by the
    sandboxed grader and ``check`` (in-process)."""
    expected = [_expected(ex, c) for c in cases]
    case_checks, mistakes = _judge_cases(ex, cases, run, expected)
    meta["shown"] = _smallest_failing_weights(ex, cases, run, case_checks, expected)
    if run.tampered:
        msg = (
            "replaced " + ", ".join(run.tampered) + " (the verdict is computed outside: no effect)"
        )
        case_checks.append(Check("leaves NumPy and the grader alone", False, msg))
        mistakes.insert(0, "grader_tampering")
    return _finish(ex.name, checks + case_checks, mistakes, lang, **meta)


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
            [Check("valid notebook", False, str(e))],
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
        r.checks.append(Check("notebook cells", True, "; ".join(submission.notes), scored=False))
    return r
