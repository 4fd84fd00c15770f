"""The teacher's own exercises: a Python file that declares one, graded like the built-in ones.

The file is the teacher's code and trusted: it runs in the grader's process (the learner's file
still runs in the sandbox). It defines, at its top level:

- ``NAME`` (the function the learner writes), ``SIGNATURE`` (``"row_normalise(x)"``) and
  ``CONTRACT`` (the argument shapes, dtypes and rules, for the starter file);
- ``reference(*args, **kwargs)``: the right answer in float64 (an array, or a tuple of them);
- ``cases(rng)`` returning a list of ``Case`` (``from attnlab.grade import Case``), or a list
  ``CASES``; each case may carry ``points`` (default 1);
- optional: ``RETURNS`` (names of the returned arrays, default ``("output",)``), ``SUMMARY``
  (a string, or ``{"en": ..., "ja": ..., "zh": ...}``), ``MISTAKES`` (``{id: {"version":
  fn, "hint": str or {lang: str}}}``: a wrong version of the reference, named when it reproduces
  the learner's answers), ``POINTS`` (``{check name: points}`` for the whole-run checks such as
  ``"inputs left unchanged"``, default 1), ``ALLOWED_IMPORTS`` (default ``("numpy",)``),
  ``EXAMPLE`` (the starter's try-it lines), and the contract in a form that is checked:
  ``SHAPES`` (``{"Q": "T d", "K": "S d", "scores": "T S"}``: each argument's and returned
  array's dimensions, named or numbers, the same name the same size) and ``DTYPES`` (the
  input dtypes allowed, e.g. ``("float64", "float32")``).

``load`` checks all of it and registers the exercise beside the built-in ones, so ``grade
--exercise-file``, ``exercise start`` and ``exercise autograder`` use it by its name.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..i18n import LANGS, Text
from . import variants as wrong
from .exercises import EXERCISES, NUMPY_ONLY, Case, Exercise, Outputs
from .mistakes import MISTAKES


@dataclass(frozen=True, eq=False)  # hashed by identity: its tables are dicts
class TeacherExercise(Exercise):
    """An exercise from a teacher's file: its own mistakes (wrong versions and hints) and the
    points of its whole-run checks; everything else as a built-in ``Exercise``."""

    wrong_versions: dict[str, Callable[..., Outputs]] = field(default_factory=dict)
    hints: dict[str, Text] = field(default_factory=dict)
    run_points: dict[str, float] = field(default_factory=dict)
    shapes: dict[str, str] = field(default_factory=dict)  # array -> "T d": the contract's dims
    dtypes: tuple[str, ...] = ()  # the input dtypes the contract allows (empty: any)
    example: str = ""
    path: str = ""

    def mistakes(self, *args, pairs=False, **kwargs) -> dict:
        """{id: [outputs]} of the teacher's wrong versions on these inputs (one version each,
        None where it cannot run on them); no pairs: the teacher's versions are whole."""
        if pairs:
            return {}
        return {mid: [wrong.safe(fn, *args, **kwargs)] for mid, fn in self.wrong_versions.items()}

    def version_table(self, mask: bool = True) -> dict[str, list[dict]]:
        return {mid: [{}] for mid in self.wrong_versions}

    def hint(self, mistake: str, lang: str = "en", level: int = 3) -> str:
        if mistake in self.hints:
            return self.hints[mistake](lang)
        return super().hint(mistake, lang, level)

    def check_points(self, name: str) -> float:
        return self.run_points.get(name, 1.0)


def _bad(path: Path, what: str) -> UserError:
    return UserError(f"--exercise-file {path}: {what}")


def _text(path: Path, key: str, value, default: str = "") -> Text:
    """A string (every language) or {lang: string} (English required) as a ``Text``."""
    if value is None:
        value = default
    if isinstance(value, str):
        return Text(value, value, value)
    if isinstance(value, dict) and isinstance(value.get("en"), str):
        return Text(*(str(value.get(lang) or value["en"]) for lang in LANGS))
    raise _bad(path, f"{key} is {type(value).__name__}; expected a string or {{'en': ..., ...}}")


def _outputs(fn: Callable) -> Callable[..., Outputs]:
    """``fn`` returning a tuple of arrays, whether it returns one array or several."""

    def call(*args, **kwargs) -> Outputs:
        out = fn(*args, **kwargs)
        parts = out if isinstance(out, tuple | list) else (out,)
        return tuple(np.asarray(p) for p in parts)

    return call


def _cases_of(path: Path, ns: dict) -> Callable[[np.random.Generator], list[Case]]:
    make = ns.get("cases")
    fixed = ns.get("CASES")
    if make is None and fixed is None:
        raise _bad(path, "defines neither cases(rng) nor CASES; expected one of them")
    if make is not None and not callable(make):
        raise _bad(path, f"cases is {type(make).__name__}; expected a function cases(rng)")

    def cases(rng: np.random.Generator) -> list[Case]:
        found = list(make(rng) if make is not None else fixed)
        if not found or not all(isinstance(c, Case) for c in found):
            raise _bad(path, "the cases must be a non-empty list of attnlab.grade.Case")
        return found

    return cases


def _mistakes_of(path: Path, ns: dict) -> tuple[dict, dict]:
    table = ns.get("MISTAKES") or {}
    if not isinstance(table, dict):
        raise _bad(path, f"MISTAKES is {type(table).__name__}; expected {{id: {{...}}}}")
    versions, hints = {}, {}
    for mid, entry in table.items():
        if not isinstance(mid, str) or not mid.isidentifier():
            raise _bad(path, f"mistake id {mid!r}: expected a name like 'sum_over_columns'")
        if mid in MISTAKES:
            raise _bad(path, f"mistake id {mid!r} is a built-in id; choose another name")
        if not isinstance(entry, dict) or not callable(entry.get("version")):
            raise _bad(path, f"MISTAKES[{mid!r}]: expected {{'version': function, 'hint': ...}}")
        versions[mid] = _outputs(entry["version"])
        hints[mid] = _text(path, f"MISTAKES[{mid!r}]['hint']", entry.get("hint"), mid)
    return versions, hints


def _points_of(path: Path, ns: dict) -> dict[str, float]:
    points = ns.get("POINTS") or {}
    ok = isinstance(points, dict) and all(
        isinstance(v, int | float) and v >= 0 for v in points.values()
    )
    if not ok:
        raise _bad(path, "POINTS: expected {check name: points >= 0}")
    return {str(k): float(v) for k, v in points.items()}


def _shapes_of(path: Path, ns: dict) -> dict[str, str]:
    shapes = ns.get("SHAPES") or {}
    if not isinstance(shapes, dict) or not all(isinstance(v, str) for v in shapes.values()):
        raise _bad(path, "SHAPES: expected {array name: 'T d'} (dimension names or numbers)")
    return {str(k): v for k, v in shapes.items()}


def _dtypes_of(path: Path, ns: dict) -> tuple[str, ...]:
    try:
        return tuple(str(np.dtype(d)) for d in ns.get("DTYPES") or ())
    except TypeError as e:
        raise _bad(path, f"DTYPES: {e}; expected NumPy dtype names like 'float32'") from None


def misfit(shapes: dict[str, str], arrays: dict[str, np.ndarray]) -> str | None:
    """Why ``arrays`` break the contract's dimensions ``shapes``, or None: every array of a
    name in ``shapes`` has its rank, its numbered sizes, and one size per dimension name."""
    sizes: dict[str, tuple[int, str]] = {}
    for name, spec in shapes.items():
        if name not in arrays:
            continue
        want, got = spec.split(), tuple(np.shape(arrays[name]))
        says = f"{name} has shape {got}, SHAPES says ({', '.join(want)})"
        if len(want) != len(got):
            return says
        for dim, n in zip(want, got, strict=True):
            if dim.isdigit() and int(dim) != n:
                return says
            seen = sizes.setdefault(dim, (n, name))
            if seen[0] != n:
                return f"{says} with {dim} = {seen[0]} from {seen[1]}"
    return None


def build(path: str | Path, ns: dict) -> TeacherExercise:
    """The exercise a teacher's file declares (its top-level names ``ns``), checked."""
    path = Path(path)
    name, sig = ns.get("NAME"), ns.get("SIGNATURE")
    if not isinstance(name, str) or not name.isidentifier():
        raise _bad(path, f"NAME is {name!r}; expected the function's name, like 'row_normalise'")
    if name in EXERCISES and not isinstance(EXERCISES[name], TeacherExercise):
        raise _bad(path, f"NAME {name!r} is a built-in exercise; choose another name")
    if not callable(ns.get("reference")):
        raise _bad(path, "defines no reference(...) function (the right answer in float64)")
    if not isinstance(sig, str) or not sig.startswith(name + "("):
        raise _bad(path, f"SIGNATURE is {sig!r}; expected '{name}(...)'")
    returns = tuple(ns.get("RETURNS") or ("output",))
    allowed = ns.get("ALLOWED_IMPORTS", NUMPY_ONLY)
    versions, hints = _mistakes_of(path, ns)
    return TeacherExercise(
        name=name,
        signature=sig,
        returns=returns,
        summary=_text(path, "SUMMARY", ns.get("SUMMARY"), f"the teacher's exercise {name}"),
        doc=str(ns.get("CONTRACT") or sig),
        make_cases=_cases_of(path, ns),
        reference=_outputs(ns["reference"]),
        allowed_imports=None if allowed is None else tuple(allowed),
        wrong_versions=versions,
        hints=hints,
        run_points=_points_of(path, ns),
        shapes=_shapes_of(path, ns),
        dtypes=_dtypes_of(path, ns),
        example=str(ns.get("EXAMPLE") or f"    # try {sig} on a small input and print it"),
        path=str(path.resolve()),
    )


def check(ex: TeacherExercise, path: Path) -> None:
    """Run the teacher's reference on the cases once: a file whose cases or reference do not
    fit together is refused now, in one line, not at the first student."""
    for case in ex.make_cases(np.random.default_rng(0)):
        if case.points < 0:
            raise _bad(path, f"case {case.name!r} has points {case.points}; expected >= 0")
        args = [np.asarray(a, np.float64) for a in case.arrays.values()]
        try:
            out = ex.reference(*args, *case.scalars, **case.kwargs)
        except Exception as e:
            raise _bad(path, f"reference failed on case {case.name!r}: {e}") from None
        if len(out) != len(ex.returns):
            what = f"{len(out)} arrays for RETURNS {ex.returns}"
            raise _bad(path, f"reference returned {what} on case {case.name!r}")
        _fits_contract(ex, case, out, path)


def _fits_contract(ex: TeacherExercise, case: Case, out: Outputs, path: Path) -> None:
    """The case's inputs and the reference's answer against ``SHAPES`` and ``DTYPES``."""
    known = set(case.arrays) | set(ex.returns)
    unknown = sorted(set(ex.shapes) - known)
    if unknown:
        raise _bad(path, f"SHAPES names {unknown[0]!r}: neither an argument nor in RETURNS")
    why = misfit(ex.shapes, {**case.arrays, **dict(zip(ex.returns, out, strict=True))})
    if why:
        raise _bad(path, f"case {case.name!r} breaks the contract: {why}")
    bad = [n for n, a in case.arrays.items() if ex.dtypes and str(a.dtype) not in ex.dtypes]
    if bad:
        dtype = case.arrays[bad[0]].dtype
        raise _bad(path, f"case {case.name!r}: {bad[0]} is {dtype}, DTYPES allows {ex.dtypes}")


def load(path: str | Path) -> TeacherExercise:
    """Run the teacher's exercise file, check it and register it by its name (a name of a
    built-in exercise is refused). Raises ``UserError`` (one line) for a malformed file."""
    path = Path(path)
    if not path.is_file():
        raise _bad(path, "no such file; expected a Python file declaring an exercise")
    try:
        ns = runpy.run_path(str(path), run_name="attnlab_teacher_exercise")
    except Exception as e:  # the teacher's own file: what broke, in one line
        detail = str(e).splitlines()[0] if str(e) else ""
        raise _bad(path, f"cannot run it ({type(e).__name__}: {detail})") from None
    ex = build(path, ns)
    check(ex, path)
    register(ex)
    return ex


def register(ex: Exercise) -> None:
    """Put ``ex`` among the exercises (replacing an earlier teacher exercise of that name) and
    forget the cases prepared for an earlier one."""
    from .grader import forget_prepared

    EXERCISES[ex.name] = ex
    forget_prepared()
