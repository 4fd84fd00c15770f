"""Which mistake is this: the one module that weighs the evidence and names ids.

An id is named only with evidence (the ids and their versions live in ``mistakes``):

- a **version** of the mistake (``mistakes.MISTAKES[id].versions``, run by ``exercises``)
  reproduces the learner's answer on some case and is refuted by none;
- the **grader's own checks** see it directly: the source does not parse, imports or names a
  forbidden module, the run timed out or crashed, the answer has the wrong type or shape, NaN
  where the answer is finite on ordinary inputs, a float mask, inputs changed in place;
- **stored answers**: two different inputs (a case and its twin of the same shapes, or two
  cases) got bit-identical, non-constant answers whose right answers differ;
- **tampering**: NumPy or builtins replaced, or printed output that imitates the grader's
  report (its JSON or its verdict line), named beside whatever the numbers show;
- **forbidden attempts**: the child's import hook saw the code seek attnlab, torch or another
  forbidden module by any route (import, ``__import__``, ``importlib``, ``find_spec``, a file
  path into the package), or a string naming them is passed to import machinery.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..parity import compare
from .exercises import Case, Exercise, MistakeId, Pairs
from .results import CheckResult
from .sandbox import CaseResult, RunResult

# (mistake id or pair of ids, which of its versions) -> True: reproduces the answer; False: refuted
Version = tuple[MistakeId, int]
Evidence = dict[Version, bool]
FORBIDDEN = ("attnlab", "torch")
MODULE_NAME = re.compile(r"^(attnlab|torch)(\.[A-Za-z_]\w*)*$")  # "attnlab.ref"
IMPORT_TEXT = re.compile(r"\b(?:import|from)\s+(attnlab|torch)\b")  # exec("import torch")
# calls that look for, load or read code: a literal naming attnlab/torch passed to one is a try
SEEKING_CALLS = {
    "__import__", "import_module", "find_spec", "spec_from_file_location", "find_loader",
    "load_module", "module_from_spec", "SourceFileLoader", "exec", "eval", "compile", "open",
    "read_text", "read_bytes", "listdir", "scandir", "walk", "glob", "iglob", "rglob", "Path",
    "run_path", "run_module", "import_file", "load_source", "files", "resource_filename",
}  # fmt: skip


NAIVE_RUNS = 4  # plain runs whose worst error is the yardstick of a low-precision answer


def _rounded_either_way(a: np.ndarray, low: type, rng: np.random.Generator) -> np.ndarray:
    """float64 ``a`` in precision ``low``, each number rounded down or up at random (both
    within a unit in the last place, as IEEE's directed roundings are); exact numbers, bool
    and integer arrays as they are."""
    if a.dtype.kind != "f":
        return a
    near = a.astype(low)
    with np.errstate(all="ignore"):
        other = np.nextafter(near, np.where(near < a, np.inf, -np.inf).astype(low))
    return np.where((near != a) & (rng.random(a.shape) < 0.5), other, near)


def _error(out: np.ndarray, want: np.ndarray) -> float:
    """The largest finite difference, in float64 (a run's error, for picking the worst)."""
    if out.shape != want.shape or want.dtype == bool:
        return 0.0
    d = np.abs(out.astype(np.float64) - want.astype(np.float64))
    return float(np.max(d[np.isfinite(d)], initial=0.0))


@dataclass
class Prepared:
    """What judging one exercise at one seed needs and never changes between submissions: the
    cases, their twins (same shapes, other numbers) and the right answers; the known-mistake
    candidates of each case are computed on first use and kept."""

    ex: Exercise
    cases: list[Case]
    twins: list[Case]
    twin_of: list[int]  # the case each twin copies the shapes of
    expected: list[tuple]
    _candidates: dict[tuple[int, bool, Pairs], dict] | None = None
    _versions: dict[tuple[int, Pairs], dict] | None = None
    _naive: dict[tuple[int, object], tuple | None] | None = None
    _twin_expected: dict[int, tuple] | None = None
    _stacked: dict[tuple[int, bool, Pairs], Stacked] | None = None

    def twin_expected(self, j: int) -> tuple:
        """Twin ``j``'s right answers, computed once (every submission with an answer to check
        for stored values asks for them)."""
        if self._twin_expected is None:
            self._twin_expected = {}
        if j not in self._twin_expected:
            self._twin_expected[j] = expected_of(self.ex, self.twins[j])
        return self._twin_expected[j]

    def naive(self, i: int, low: type) -> tuple | None:
        """The right answer computed plainly in precision ``low``: the yardstick of answers in
        that precision (``attnlab.parity``), once per case.

        One plain run's error is a noisy measure on cases this small (the largest of a few
        dozen errors): a float32 einsum answer, right but summing in another order, erred 2.4x
        the plain run on one case in 560. So each returned array is the worst of ``NAIVE_RUNS``
        runs: on the inputs rounded to nearest in ``low``, then rounded each number down or up
        at random (other roundings of the same float64 numbers, within a unit in the last
        place).
        """
        if self._naive is None:
            self._naive = {}
        if (i, low) not in self._naive:
            self._naive[i, low] = self._worst_naive(i, low)
        return self._naive[i, low]

    def _worst_naive(self, i: int, low: type) -> tuple | None:
        c, ex = self.cases[i], self.ex
        if ex.naive is None:
            return None
        exact, rng = as_float64(c), np.random.default_rng(i)
        runs = []
        for run in range(NAIVE_RUNS):
            args = [a.astype(low) if run == 0 else _rounded_either_way(a, low, rng) for a in exact]
            with np.errstate(all="ignore"):  # a low-precision yardstick: its flags are not news
                runs.append(ex.naive(*args, *c.scalars, **c.kwargs))
        return tuple(
            max((r[k] for r in runs), key=lambda out: _error(out, want))
            for k, want in enumerate(self.expected[i])
        )

    def candidates(self, i: int, low: bool = False, pairs: Pairs = False) -> dict[Version, tuple]:
        """Case ``i``'s versions that differ from the right answer, by (id, which version),
        computed in float64 (or float32 when ``low``: an answer computed in float32
        overflows, and rounds, where float32 does); ``pairs``: the versions of two mistakes at
        once (all, or those pair ids). Once per case: a class shares them."""
        if self._candidates is None:
            self._candidates = {}
        if (i, low, pairs) not in self._candidates:
            c, want = self.cases[i], self.expected[i]
            found = self.versions(i, pairs) if not low else self._run(i, np.float32, pairs)
            self._candidates[i, low, pairs] = {
                key: out
                for key, out in found.items()
                if out is not None and differs(out, want, low or c.float32)
            }
        return self._candidates[i, low, pairs]

    def stacked(self, i: int, low: bool = False, pairs: Pairs = False) -> Stacked:
        """``candidates`` stacked by output and shape, to compare an answer with all of them at
        once; once per case."""
        if self._stacked is None:
            self._stacked = {}
        if (i, low, pairs) not in self._stacked:
            self._stacked[i, low, pairs] = Stacked.of(self.candidates(i, low, pairs))
        return self._stacked[i, low, pairs]

    def versions(self, i: int, pairs: Pairs = False) -> dict[Version, tuple | None]:
        """Every version's outputs on case ``i`` in float64, None where it cannot run on these
        shapes (as a learner's code with that mistake cannot either); once per case."""
        if self._versions is None:
            self._versions = {}
        if (i, pairs) not in self._versions:
            self._versions[i, pairs] = self._run(i, None, pairs)
        return self._versions[i, pairs]

    def _run(self, i: int, dtype, pairs: Pairs) -> dict[Version, tuple | None]:
        c = self.cases[i]
        args = [a.astype(dtype) if dtype else a for a in as_float64(c)]
        found = self.ex.mistakes(*args, *c.scalars, **c.kwargs, pairs=pairs)
        return {(mid, k): out for mid, alts in found.items() for k, out in enumerate(alts)}


def as_float64(case: Case) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.float64) for a in case.arrays.values()]


def expected_of(ex: Exercise, case: Case) -> tuple:
    """The right answer for ``case`` (float64)."""
    return ex.reference(*as_float64(case), *case.scalars, **case.kwargs)


# ---- before the run: the source itself --------------------------------------------------------


def forbidden_imports(tree: ast.AST, allowed: tuple[str, ...]) -> list[str]:
    """Modules outside ``allowed`` and the standard library that the source imports, or names
    in a string passed to import machinery (``importlib.import_module("torch")`` and the like)."""
    ok = set(allowed) | set(sys.stdlib_module_names)
    bad = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and _call_name(node.func) in SEEKING_CALLS:
            names = _named_in_literals([*node.args, *(k.value for k in node.keywords)])
        bad += [n.split(".")[0] for n in names if n.split(".")[0] not in ok]
    return sorted(set(bad))


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _named_in_literals(exprs: list[ast.expr]) -> list[str]:
    """attnlab/torch named in the string literals inside these expressions: as a module name,
    as a folder of a path, or imported by code in a string."""
    found = []
    for e in exprs:
        for n in ast.walk(e):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                text = n.value.strip()
                if MODULE_NAME.match(text):
                    found.append(text.split(".")[0])
                parts = text.replace("\\", "/").split("/")
                found += [p for p in parts if p in FORBIDDEN]
                found += IMPORT_TEXT.findall(text)
    return found


def static_checks(source: str, ex: Exercise) -> tuple[list[CheckResult], str | None]:
    """Parse and look at the imports before running anything; the mistake id if that fails."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        where = f"line {e.lineno}: " if e.lineno else ""  # null bytes: no line to name
        msg = where + e.msg + (f"\n    {e.text.rstrip()}" if e.text else "")
        return [CheckResult("valid Python", False, msg, scored=False)], "syntax_error"
    checks = [CheckResult("valid Python", True, scored=False)]
    if ex.allowed_imports is None:
        return checks, None
    bad = forbidden_imports(tree, ex.allowed_imports)
    if bad:
        allowed = ", ".join(ex.allowed_imports)
        msg = f"imports {', '.join(bad)}; allowed here: {allowed} and the standard library"
        return [
            *checks,
            CheckResult("allowed imports", False, msg, scored=False),
        ], "forbidden_import"
    return [*checks, CheckResult("allowed imports", True, scored=False)], None


def run_failure(run: RunResult, ex: Exercise, timeout: float) -> tuple[CheckResult, str] | None:
    """The check and mistake id for a run that produced no per-case results, if it did not."""
    if run.timeout:
        return CheckResult(
            "finishes in time", False, f"still running after {timeout:g} s"
        ), "timeout"
    if run.crashed:
        return CheckResult("runs", False, f"the process died: {run.crashed}"), "crash"
    if run.forbidden:
        msg = f"imports {run.forbidden!r} at run time"
        return CheckResult("allowed imports", False, msg), "forbidden_import"
    if run.missing:
        msg = f"no function named {run.missing!r}; expected {ex.signature}"
        return CheckResult("defines the function", False, msg), "missing_function"
    if run.load_error:
        msg = f"raised while loading: {last_line(run.load_error)}\n{run.load_error.rstrip()}"
        return CheckResult("loads", False, msg), "crash"
    return None


def last_line(tb: str) -> str:
    lines = [ln for ln in tb.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "error"


# ---- one case ---------------------------------------------------------------------------------


def _judged_precision(answer: np.dtype, case: Case) -> type | None:
    """The dtype whose error budget an answer gets: the task's, never the answer's own.

    float64 cases are judged at float64 unless the answer was computed in float32 (the course's
    everyday precision, which then gets float32's budget); float32 cases at float32. An answer in
    a lower precision (float16) never widens the budget: casting down cannot hide an error.
    """
    if case.float32 or answer == np.float32 or np.finfo(answer).bits < 32:
        return np.float32
    return None


def shape_check(
    ex: Exercise, case: Case, cr: CaseResult, expected: tuple
) -> tuple[CheckResult | None, list[str]]:
    """A failure before any number can be compared: an error, or the wrong kind or shape."""
    fail = CheckResult
    if cr.forbidden:
        msg = f"imports {cr.forbidden!r}, which this exercise forbids"
        return fail(case.name, False, msg), ["forbidden_import"]
    if cr.error:
        msg = f"raised {last_line(cr.error)}\n{cr.error.rstrip()}"
        return fail(case.name, False, msg), ["crash"]
    want_tuple = len(ex.returns) > 1
    if want_tuple and (cr.kind not in ("tuple", "list") or cr.n_parts != len(ex.returns)):
        got = f"{cr.kind} of {cr.n_parts}" if cr.kind in ("tuple", "list") else str(cr.kind)
        msg = f"expected a tuple ({', '.join(ex.returns)}), got {got}"
        return fail(case.name, False, msg), ["wrong_return"]
    if not want_tuple and cr.kind in ("tuple", "list"):
        msg = f"expected one array ({ex.returns[0]}), got a {cr.kind}"
        return fail(case.name, False, msg), ["wrong_return"]
    got = cr.outputs[: len(ex.returns)]
    for name, g, e, t in zip(ex.returns, got, expected, cr.types or [], strict=False):
        if g is None:
            return fail(case.name, False, f"{name}: expected a numeric array, got {t}"), [
                "wrong_return"
            ]
        if g.shape != e.shape:
            return fail(case.name, False, f"{name} has shape {g.shape}, expected {e.shape}"), [
                "wrong_return"
            ]
    return None, []


def problems(prep: Prepared, i: int, got: list) -> tuple[list[str], list[str]]:
    """What is wrong with each returned array, and the mistakes the answer itself proves
    (a NaN where the answer is finite on ordinary inputs; a mask that is not bool)."""
    ex, case, expected = prep.ex, prep.cases[i], prep.expected[i]
    found, direct = [], []
    for name, g, e in zip(ex.returns, got, expected, strict=True):
        if e.dtype == bool:
            if not np.array_equal(g.astype(bool), e):
                bad = np.argwhere(g.astype(bool) != e)
                found.append(f"{name} differs from the expected mask at {bad[0].tolist()}")
            elif g.dtype != bool:
                found.append(
                    f"{name} is {g.dtype}, expected a bool array (np.tril(..., dtype=bool))"
                )
                direct.append("mask_dtype")
            continue
        integer = g.dtype.kind in "biu"
        if g.dtype.kind not in "f":
            g = g.astype(np.float64)
        low = _judged_precision(g.dtype, case)
        plain = prep.naive(i, low) if low is not None else None
        naive = None if plain is None else plain[ex.returns.index(name)]
        p = compare(g if low is None else g.astype(low), e, naive)
        if p.ok:
            continue
        if integer:
            direct.append("wrong_dtype")
        elif _half_precision(prep, i, name, g):
            direct.append("low_precision")
        bad_nan = (~np.isfinite(g)) & np.isfinite(e)
        if bad_nan.any():
            where = np.argwhere(bad_nan)[0].tolist()
            found.append(f"{name} has NaN/Inf at {where} where the answer is finite")
            if not case.large:  # NaN on ordinary inputs is a mistake by itself
                direct.append("nan_output")
        else:
            err = np.abs(g.astype(np.float64) - e)
            at = tuple(int(j) for j in np.unravel_index(np.argmax(err), e.shape))
            found.append(
                f"{name}: {p.message}; at {list(at)} got {g[at]:.6g}, expected {e[at]:.6g}"
            )
    return found, direct


def _half_precision(prep: Prepared, i: int, name: str, g: np.ndarray) -> bool:
    """An answer computed in float16: every number is a float16 (whatever dtype it was cast
    back to) and it is right within float16's budget of the parity rule (twice the error of
    the plain computation in float16), though not within its own precision's."""
    finite = np.isfinite(g)
    if not finite.any() or g.dtype.itemsize < 2:
        return False
    half = g.astype(np.float16)
    if not np.array_equal(half.astype(g.dtype), g, equal_nan=True):
        return False
    ex = prep.ex
    plain = prep.naive(i, np.float16)
    naive = None if plain is None else plain[ex.returns.index(name)]
    return naive is not None and compare(half, prep.expected[i][ex.returns.index(name)], naive).ok


# ---- known mistakes: versions that reproduce the answer ---------------------------------------


def close(a: np.ndarray, b: np.ndarray, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """``np.allclose(a, b, rtol, atol, equal_nan=True)`` for arrays of one shape, at a third of
    its cost on the small arrays of the cases (a diagnosis compares thousands of them)."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - b)
        near = d <= atol + rtol * np.abs(b)
    if np.isfinite(d).all():  # both finite everywhere: the usual case
        return bool(near.all())
    same = (a == b) | (np.isnan(a) & np.isnan(b))  # equal infinities, NaN with NaN
    return bool((near & np.isfinite(a) & np.isfinite(b) | same).all())


def close_each(a: np.ndarray, stack: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """``close(a, b, rtol, atol)`` for each ``b`` along the first axis of ``stack`` ``(n,
    *a.shape)``: ``(n,)`` booleans."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(a - stack)
        near = d <= atol + rtol * np.abs(stack)
    within = tuple(range(1, stack.ndim))
    if np.isfinite(d).all():  # both finite everywhere: the usual case
        return near.all(axis=within)
    same = (a == stack) | (np.isnan(a) & np.isnan(stack))  # equal infinities, NaN with NaN
    return (near & np.isfinite(a) & np.isfinite(stack) | same).all(axis=within)


@dataclass(frozen=True)
class Stacked:
    """A case's versions (``Prepared.candidates``) as one array per output and shape, so that
    an answer is compared with every version in a few NumPy operations, not one ``close`` per
    version (a diagnosis weighs a hundred versions on each of a dozen cases)."""

    keys: list[Version]
    lengths: np.ndarray  # (K,) how many outputs each version has
    groups: list[dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]]]
    # per output: shape -> (the versions of that shape (n,), their outputs (n, *shape) float64)

    @classmethod
    def of(cls, candidates: dict[Version, tuple]) -> Stacked:
        keys = list(candidates)
        outs = [[np.asarray(o, dtype=np.float64) for o in candidates[k]] for k in keys]
        lengths = np.array([len(o) for o in outs], dtype=int)
        groups = []
        for j in range(max(lengths, default=0)):
            shapes: dict[tuple[int, ...], list[int]] = {}
            for n, o in enumerate(outs):
                if j < len(o):
                    shapes.setdefault(o[j].shape, []).append(n)
            groups.append(
                {
                    shape: (np.array(ns), np.stack([outs[n][j] for n in ns]))
                    for shape, ns in shapes.items()
                }
            )
        return cls(keys, lengths, groups)

    def matching(self, got: list, expected: tuple, low_precision: bool) -> Evidence:
        """``matches(got, version, expected, low_precision, known=True)`` for every version."""
        compared = got[: len(expected)]  # (as zip(got, version, expected) pairs them)
        hit = self.lengths >= len(got) if compared else np.zeros(len(self.keys), dtype=bool)
        for j, g in enumerate(compared):
            group = None if g is None or j >= len(self.groups) else self.groups[j].get(g.shape)
            if group is None:
                return dict.fromkeys(self.keys, False)
            loose = low_precision or g.dtype != np.float64
            rtol, atol = (1e-3, 1e-5) if loose else (1e-7, 1e-9)
            ns, outs = group
            this = np.zeros(len(self.keys), dtype=bool)
            this[ns] = close_each(g.astype(np.float64), outs, rtol, atol)
            hit &= this
        return dict(zip(self.keys, hit.tolist(), strict=True))


def matches(
    got: list[np.ndarray], candidate: tuple, expected: tuple, low_precision: bool, known=False
) -> bool:
    """Whether the learner's outputs equal a wrong version (which itself differs from the
    truth: ``known`` when that was checked already), within float32's tolerance when the task
    or the answer is in float32."""
    if candidate is None or len(candidate) < len(got):
        return False
    differs = False
    for g, c, e in zip(got, candidate, expected, strict=False):
        c = np.asarray(c, dtype=np.float64)
        if g is None or g.shape != c.shape:
            return False
        loose = low_precision or g.dtype != np.float64
        tol = {"rtol": 1e-3, "atol": 1e-5} if loose else {"rtol": 1e-7, "atol": 1e-9}
        if not close(g.astype(np.float64), c, **tol):
            return False
        if known or e.shape != c.shape or not close(c, e):
            differs = True
    return differs


def differs(candidate: tuple, expected: tuple, low_precision: bool = False) -> bool:
    tol = {"rtol": 1e-3, "atol": 1e-5} if low_precision else {}
    for c, e in zip(candidate, expected, strict=False):
        c = np.asarray(c, dtype=np.float64)
        if c.shape != e.shape or not close(c, e, **tol):
            return True
    return False


def weigh(candidates: dict, got: list, expected: tuple, low_precision: bool) -> Evidence:
    """Each version that differs from the right answer here either reproduces the learner's
    answer or is refuted by it; a version equal to the right answer tells nothing."""
    return {
        (mid, k): matches(got, c, expected, low_precision)
        for mid, alts in candidates.items()
        for k, c in enumerate(alts)
        if c is not None and differs(c, expected, low_precision)
    }


def _low(got: list) -> bool:
    return any(g is not None and g.dtype.kind == "f" and g.dtype.itemsize <= 4 for g in got)


def _all_broken(got: list) -> bool:
    """Every number of the answer is NaN or infinite."""
    floats = [g for g in got if g is not None and g.dtype.kind == "f" and g.size]
    return bool(floats) and not any(np.isfinite(g).any() for g in floats)


def evidence(prep: Prepared, i: int, got: list, pairs: Pairs = False) -> Evidence:
    """Versions for case ``i`` (an answer in float32 is also compared with the versions run in
    float32: it reproduces a version in either precision, or refutes it); the probes (a
    hypothesis read off the learner's own answer, e.g. the base of a sin/cos table) only when
    no fixed version reproduces the answer. ``pairs``: the versions of two mistakes at once."""
    ex, case, want = prep.ex, prep.cases[i], prep.expected[i]
    found = prep.stacked(i, pairs=pairs).matching(got, want, case.float32)
    if _low(got):
        for key, hit in prep.stacked(i, low=True, pairs=pairs).matching(got, want, True).items():
            found[key] = found.get(key, False) or hit
    if pairs:
        return found
    if ex.probes is not None and not any(found.values()):  # probes: keys of their own
        args = (*as_float64(case), *case.scalars)
        found.update(weigh(ex.probes(*args, got, **case.kwargs), got, want, case.float32))
    return found


def supported(matched: dict[Version, set[int]], refuted: set[Version]) -> list[MistakeId]:
    """Ids with a version that reproduced the answer on some cases and was refuted on none,
    the best supported first; an id whose cases are all explained by the ids before it adds
    nothing and is left out (two versions that both break into NaN on the same large case do
    not make two mistakes)."""
    cases = _cases_by_id(matched, refuted)
    named, explained = [], set()
    for mid in sorted(cases, key=lambda m: -len(cases[m])):  # stable: table order on ties
        if not cases[mid] <= explained:
            named.append(mid)
            explained |= cases[mid]
    return named


def _cases_by_id(
    matched: dict[Version, set[int]], refuted: set[Version]
) -> dict[MistakeId, set[int]]:
    """Per id, the cases its unrefuted versions reproduced."""
    cases: dict[MistakeId, set[int]] = {}
    for (mid, k), where in matched.items():
        if (mid, k) not in refuted:
            cases.setdefault(mid, set()).update(where)
    return cases


# ---- stored answers, tampering, forbidden attempts --------------------------------------------


def _answers(ex: Exercise, cr: CaseResult) -> tuple | None:
    got = tuple(cr.outputs[: len(ex.returns)])
    if cr.error or not got or any(g is None for g in got):
        return None
    return got


def _stored_part(got: tuple, other: tuple, want: tuple, other_want: tuple) -> bool:
    """Whether some returned array is bit-identical for two inputs, not constant, although
    its right answers differ there (stored weights beside a computed output count too)."""
    if len(got) != len(other):
        return False
    for g, o, w, ow in zip(got, other, want, other_want, strict=False):
        if (
            g.dtype.kind == "f"
            and g.shape == o.shape
            and _informative((g,))
            and np.array_equal(g, o)
        ):
            if differs((w,), (ow,)):
                return True
    return False


def _informative(got: tuple) -> bool:
    """Not a constant array (a forgotten stub gives zeros): numbers worth calling stored."""
    return any(
        g.size > 1 and np.isfinite(g).all() and np.ptp(g.astype(np.float64)) > 0 for g in got
    )


def _is_repeat(prep: Prepared, j: int) -> bool:
    """Whether twin ``j`` is its case again, unchanged (``exercises.repeats``)."""
    case, twin = prep.cases[prep.twin_of[j]], prep.twins[j]
    return all(np.array_equal(case.arrays[n], twin.arrays[n]) for n in case.arrays)


def randomness(prep: Prepared, run: RunResult) -> CheckResult | None:
    """The failed "same answer twice" check: a case given again, unchanged, got another
    answer (randomness inside the function, such as dropout)."""
    ex, n = prep.ex, len(prep.cases)
    for j, again in enumerate(run.cases[n : n + len(prep.twins)]):
        i = prep.twin_of[j]
        first, second = _answers(ex, run.cases[i]), _answers(ex, again)
        if not (first and second and _is_repeat(prep, j)):
            continue
        if not all(
            a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
            for a, b in zip(first, second, strict=True)
        ):
            msg = f"{prep.cases[i].name}: two calls with the same inputs gave different answers"
            return CheckResult("same answer for the same inputs", False, msg)
    return None


def hardcoded(prep: Prepared, run: RunResult, expected_of_twin: Callable[[int], tuple]) -> bool:
    """Stored answers: a case and its twin, or two cases with other inputs, got the same
    non-constant array (any of the returned ones) although its right answers differ."""
    ex, n = prep.ex, len(prep.cases)
    mine = [_answers(ex, cr) for cr in run.cases[:n]]
    for j, twin_cr in enumerate(run.cases[n : n + len(prep.twins)]):
        i = prep.twin_of[j]
        got, twin = mine[i], _answers(ex, twin_cr)
        if got and twin and not _is_repeat(prep, j):
            if _stored_part(got, twin, prep.expected[i], expected_of_twin(j)):
                return True
    for i, (case, got) in enumerate(zip(prep.cases, mine, strict=True)):
        if not got:
            continue
        for k in range(i):
            prev = prep.cases[k]
            same_inputs = prev.arrays.keys() == case.arrays.keys() and all(
                np.array_equal(prev.arrays[a], case.arrays[a]) for a in case.arrays
            )
            if same_inputs and prev.scalars == case.scalars:
                continue  # only the keyword differs (mask=True vs False): not evidence
            if mine[k] and _stored_part(got, mine[k], prep.expected[i], prep.expected[k]):
                return True
    return False


REPORT_LINE = re.compile(
    r"^\s*(PASSED|合格|通过)\s*$|^\S*\s*\w+: \d+/\d+ (checks passed|チェック合格|项检查通过)",
    re.MULTILINE,
)


def imitates_report(printed: str) -> bool:
    """Printed output that looks like the grader's own report: its verdict line, its header,
    or a JSON object with the report's fields."""
    if REPORT_LINE.search(printed):
        return True
    for line in printed.splitlines():
        line = line.strip()
        if line.startswith("{") and '"passed"' in line:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and {"passed", "score"} <= obj.keys():
                return True
    return False


def tampering_checks(run: RunResult, printed: str) -> list[CheckResult]:
    """The failed "leaves NumPy and the grader alone" check, if the code tampered."""
    what = []
    if run.tampered:
        what.append("replaced " + ", ".join(run.tampered))
    if imitates_report(printed):
        what.append("printed an imitation of the grader's report")
    if not what:
        return []
    msg = "; ".join(what) + " (the verdict is computed outside: no effect)"
    return [CheckResult("leaves NumPy and the grader alone", False, msg)]


def attempt_checks(run: RunResult) -> list[CheckResult]:
    """The failed "allowed imports" check, if the code sought a forbidden module at run time."""
    if not run.attempts:
        return []
    msg = "tried to reach " + ", ".join(run.attempts) + " at run time (not available here)"
    return [CheckResult("allowed imports", False, msg)]


# ---- all cases --------------------------------------------------------------------------------


@dataclass
class Findings:
    """What the case checks saw, which the naming and then the rules turn into ordered ids."""

    prep: Prepared
    run: RunResult
    checks: list[CheckResult]
    answers: list[list | None]  # per case: the returned arrays, None where none could be judged
    direct: list[str]  # ids the checks saw themselves, once per case that showed them
    unshaped: dict[str, dict[int, CaseResult]]  # crash / wrong_return: their cases
    mutated: list[str]  # the inputs changed in place
    printed: str = ""  # the learner's printed output
    named: list[MistakeId] = field(default_factory=list)  # ids a version reproduced
    keys: list[Version] = field(default_factory=list)  # those versions
    where: dict[Version, set[int]] = field(default_factory=dict)  # the cases each reproduced
    ids: list[str] = field(default_factory=list)  # the verdict's ids, best supported first


def case_checks(prep: Prepared, run: RunResult, printed: str = "") -> Findings:
    """One check per case (shape first, then the numbers), then the whole-run checks: inputs
    left alone, the same answer for the same inputs."""
    ex, cases = prep.ex, prep.cases
    f = Findings(prep, run, [], [], [], {}, [], printed)
    for i, (case, cr) in enumerate(zip(cases, run.cases, strict=False)):
        check, ids = shape_check(ex, case, cr, prep.expected[i])
        got = None
        if ids in (["crash"], ["wrong_return"]):
            f.unshaped.setdefault(ids[0], {})[i] = cr
        if check is None:
            got = cr.outputs[: len(ex.returns)]
            found, ids = problems(prep, i, got)
            check = CheckResult(case.name, not found, "; ".join(found))
        f.checks.append(check)
        f.answers.append(got)
        f.direct += ids
        for (name, before), after in zip(case.arrays.items(), cr.inputs_after, strict=False):
            if not np.array_equal(before, after, equal_nan=True) and name not in f.mutated:
                f.mutated.append(name)
    if any(c.arrays for c in cases):  # exercises with array inputs: were they left alone?
        msg = "" if not f.mutated else f"changed its input(s) {', '.join(f.mutated)} in place"
        answered = any(cr.error is None and cr.outputs for cr in run.cases)
        f.checks.append(CheckResult("inputs left unchanged", not f.mutated, msg, scored=answered))
    random = randomness(prep, run)
    if random is not None:
        f.checks.append(random)
        f.direct.insert(0, "random_inside")
    return f


def name_versions(f: Findings) -> None:
    """The ids whose versions reproduce the wrong answers: one mistake each, or, when those
    leave wrong answers unexplained, two made at once."""
    if all(c.passed for c in f.checks):
        return
    pairs = zip(f.answers, f.checks[: len(f.answers)], strict=True)
    wrong = {i for i, (got, c) in enumerate(pairs) if got and not c.passed}
    f.named, f.keys, covered, f.where = _named_versions(f.prep, f.answers, wrong)
    if wrong - covered:
        pair, pair_keys, where = _named_pair(f.prep, f.answers, wrong)
        if pair:
            f.named, f.keys, f.where = pair, pair_keys, where


def _nan_explained(f: Findings) -> None:
    if f.named:
        f.direct = [m for m in f.direct if m != "nan_output"]


def _unshaped_explained(f: Findings) -> None:
    for generic, where in f.unshaped.items():
        if f.keys and all(_explains(f.prep, f.keys, i, cr) for i, cr in where.items()):
            f.direct = [m for m in f.direct if m != generic]


def _in_order(f: Findings) -> None:
    counts = {m: f.direct.count(m) for m in f.direct}
    f.ids = [*f.named, *sorted(counts, key=lambda m: -counts[m])]


def _attempts_first(f: Findings) -> None:
    attempts = attempt_checks(f.run)
    if attempts:
        f.checks += attempts
        f.ids = ["forbidden_import", *(m for m in f.ids if m != "forbidden_import")]


def _stored_answers(f: Findings) -> None:
    if f.named or f.run.attempts or "random_inside" in f.direct:
        return  # (answers that change between two calls with the same inputs are no table:
        # dropout once zeroed, in a case and its twin alike, the one row where they differ)

    if hardcoded(f.prep, f.run, f.prep.twin_expected) or (
        all(c.passed for c in f.checks) and raises_elsewhere(f.prep, f.run)
    ):
        f.ids.insert(0, "hardcoded_output")


def raises_elsewhere(prep: Prepared, run: RunResult) -> bool:
    """A twin (the same shapes as its case, other numbers) raised: with every case passed, a
    table of answers looked up by the exact inputs (an attention never fails on other numbers)."""
    n = len(prep.cases)
    twins = run.cases[n : n + len(prep.twins)]
    return any(cr.error and not _is_repeat(prep, j) for j, cr in enumerate(twins))


def _tampering_first(f: Findings) -> None:
    tampering = tampering_checks(f.run, f.printed)
    if tampering:
        f.checks += tampering
        f.ids.insert(0, "grader_tampering")


def _mutation_last(f: Findings) -> None:
    if f.mutated:
        f.ids.append("mutates_input")


# The rules that turn the findings into the verdict's ids, in the order they apply.
RULES: list[tuple[str, Callable[[Findings], None]]] = [
    ("a named mistake explains the NaN it makes: no separate nan_output", _nan_explained),
    ("a named mistake explains its crashes and wrong shapes", _unshaped_explained),
    ("named ids first, then what the checks saw, most cases first", _in_order),
    ("a forbidden attempt comes first: what follows is its consequence", _attempts_first),
    ("stored answers, where no version and no attempt explains them", _stored_answers),
    ("tampering comes first: it is named beside whatever the numbers show", _tampering_first),
    ("inputs changed in place come last", _mutation_last),
]


def judge(prep: Prepared, run: RunResult, printed: str = "") -> Findings:
    """The checks of every case and the mistake ids (``.checks``, ``.ids``, best supported
    first): the case checks, the versions that reproduce the answers, then ``RULES`` in order."""
    f = case_checks(prep, run, printed)
    name_versions(f)
    for _, rule in RULES:
        rule(f)
    return f


def _support(
    prep: Prepared, answers: list[list | None], pairs: Pairs = False
) -> tuple[dict[Version, set[int]], set[Version]]:
    """The cases each version reproduced, and the versions some answer refuted."""
    matched: dict[Version, set[int]] = {}
    refuted: set[Version] = set()
    for i, got in enumerate(answers):
        if got is None:
            continue
        for key, fits in evidence(prep, i, got, pairs).items():
            if fits:
                matched.setdefault(key, set()).add(i)
            else:
                refuted.add(key)
    return matched, refuted


def _named_versions(
    prep: Prepared, answers: list[list | None], wrong: set[int]
) -> tuple[list[MistakeId], list[Version], set[int], dict[Version, set[int]]]:
    """The ids the versions support, the versions that reproduced an answer unrefuted, and
    the cases those reproduced. An answer that is NaN everywhere matches many wrong versions:
    an id seen only in such answers is named only when no wrong answer is left unexplained."""
    matched, refuted = _support(prep, answers)
    named = supported(matched, refuted)
    keys = [key for key in matched if key not in refuted and key[0] in named]
    if wrong - set().union(*(matched[key] for key in keys)):
        broken = {i for i, got in enumerate(answers) if got is not None and _all_broken(got)}
        weak = {m for m in named if all(matched[k] <= broken for k in keys if k[0] == m)}
        named = [m for m in named if m not in weak]
        keys = [key for key in keys if key[0] not in weak]
    return named, keys, set().union(*(matched[key] for key in keys)), matched


def _named_pair(
    prep: Prepared, answers: list[list | None], wrong: set[int]
) -> tuple[list[str], list[Version], dict[Version, set[int]]]:
    """Two mistakes made at once: versions that make both reproduce every
    wrong answer (``wrong``: the cases whose numbers failed), and none is refuted. Of such
    pairs, only the ids they all share are named (two pairs that fit equally well do not tell
    their other ids apart)."""
    if not wrong:
        return [], [], {}
    # every pair on one wrong answer, then only the pairs that reproduced it (a pair must
    # reproduce them all): a tenth of the versions to run
    first = min(wrong)
    fits = evidence(prep, first, answers[first], pairs=True)
    alive = frozenset(key[0] for key, fit in fits.items() if fit)
    if not alive:
        return [], [], {}
    matched, refuted = _support(prep, answers, pairs=alive)
    best = [pair for pair, where in _cases_by_id(matched, refuted).items() if wrong <= where]
    if not best:
        return [], [], {}
    shared = set.intersection(*(set(pair) for pair in best))
    named = [m for m in best[0] if m in shared]
    return named, [key for key in matched if key not in refuted and key[0] in best], matched


def _explains(prep: Prepared, keys: list[Version], i: int, cr: CaseResult) -> bool:
    """Whether a version of a named mistake fails on case ``i`` as the learner's code did: it
    cannot run on these shapes where the code raised, or its arrays have the code's shapes
    (``missing_keepdims`` breaks on a non-square input and broadcasts a column to a square)."""
    for key in keys:
        pair = key[0]
        out = prep.versions(i, frozenset({pair}) if isinstance(pair, tuple) else False).get(key)
        if cr.error:
            if out is None:
                return True
        elif out is not None and cr.outputs:
            shapes = [getattr(g, "shape", None) for g in cr.outputs[: len(out)]]
            if shapes == [np.shape(o) for o in out]:
                return True
    return False
