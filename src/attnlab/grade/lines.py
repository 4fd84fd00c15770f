"""Show the line: for each named mistake, the line of the learner's file where its values first
go wrong.

The mistake's version and the right computation (``Exercise.variant`` with and without the
version's changes) are traced line by line on the smallest case the version reproduced; the
values from the first one where they part are what the mistake makes. The learner's function,
traced on the same case, names its first line that holds one of them (``tracer``).
"""

from __future__ import annotations

from collections.abc import Callable

from . import variants
from .diagnosis import Findings, as_float64
from .exercises import MistakeId
from .mistakes import LEFT_OUT
from .tracer import INPUT, Event, after_divergence, locate, record

# LEFT_OUT (mistakes.py) are the mistakes whose version leaves the mask out where the scores are
# made: the learner's code has no line for it, so the line named is the first after the scores
# are made that uses them unmasked (tracer.locate's next_use), and the report says so (words: line_unmasked).

# case index -> the learner's function's events on that case (traced where it runs)
LearnerTrace = Callable[[int], list[Event]]
VARIANT_FILES = {variants.__file__}


def _trace(f: Findings, i: int, changes: dict) -> list[Event]:
    ex, case = f.prep.ex, f.prep.cases[i]
    args = (*as_float64(case), *case.scalars)
    return record(ex.variant, args, {**case.kwargs, **changes}, VARIANT_FILES, most=5000)[1]


def wrong_values(
    f: Findings, mid: MistakeId, k: int, i: int, alone: str | None = None
) -> tuple[list, list]:
    """The values version ``k`` of ``mid`` makes on case ``i`` from the first one where the
    right computation holds another (``tracer.after_divergence``), and the right computation's
    values. For a pair, ``alone``: the values that mistake of the two adds to the other's
    version (the other's version is then the "right" one)."""
    ex, mask = f.prep.ex, f.prep.cases[i].kwargs.get("mask", True)
    changes = ex.changes(mid, k, mask)
    base: dict = {}
    if alone is not None:
        own = ex.version_table(mask)[alone]
        base = {key: v for key, v in changes.items() if not any(key in c for c in own)}
    right = _trace(f, i, base)
    given = [Event(0, name, a, INPUT) for name, a in f.prep.cases[i].arrays.items()]
    return after_divergence(right, _trace(f, i, changes)), given + right  # inputs: held too


def mistake_lines(f: Findings, learner: LearnerTrace) -> dict[str, list[int]]:
    """{named id: [1-based lines]} for the ids a version named, alone or in a pair (the
    grader's own checks have no version to trace)."""
    found: dict[str, list[int]] = {}
    if f.prep.ex.variant is None:
        return found
    table = f.prep.ex.version_table()  # once, not once per try
    for mid in f.named:
        keys = [key for key in f.keys if mid in _ids(key[0]) and f.where.get(key)]
        tries = sorted(
            ((min(f.where[key], key=lambda i: _size(f, i)), key) for key in keys),
            key=lambda ik: _size(f, ik[0]),
        )  # the smallest case each version reproduced, smallest first
        for i, (version, k) in tries:
            if not all(m in table for m in _ids(version)):
                continue  # a probe's hypothesis (a base read off the table): no version
            alone = mid if isinstance(version, tuple) else None
            wrong, right = wrong_values(f, version, k, i, alone)
            line = locate(learner(i), wrong, right, next_use=mid in LEFT_OUT)
            if line is not None:
                found[mid] = [line]
                break
    return found


# ids the grader's checks name from the answer's numbers alone: the learner's first value
# that shows it (an integer array; a half-precision one)
SHOWN_BY_DTYPE = {
    "wrong_dtype": lambda a: a.dtype.kind in "iu",
    "low_precision": lambda a: a.dtype.itemsize == 2 and a.dtype.kind == "f",
}
# an integer array the learner's code needs (np.arange(T) for the positions) is not the answer's:
# only one of an answer's shape shows an integer answer
ANSWER_SHAPED = {"wrong_dtype"}


def dtype_lines(f: Findings, learner: LearnerTrace) -> dict[str, list[int]]:
    """{id: [line]} for the ids of ``SHOWN_BY_DTYPE`` named: on the smallest failing case."""
    found: dict[str, list[int]] = {}
    failing = [i for i, got in enumerate(f.answers) if got and not f.checks[i].passed]
    for mid, shows in SHOWN_BY_DTYPE.items():
        if mid not in f.ids or not failing:
            continue
        i = min(failing, key=lambda i: _size(f, i))
        shapes = {a.shape for a in f.prep.expected[i]} if mid in ANSWER_SHAPED else None
        events = learner(i)
        line = next(
            (
                e.line
                for e in events
                if shows(e.value) and (shapes is None or e.value.shape in shapes)
            ),
            None,
        )
        if line is not None:
            found[mid] = [line]
    return found


def _ids(mid: MistakeId) -> tuple[str, ...]:
    return mid if isinstance(mid, tuple) else (mid,)


def _size(f: Findings, i: int) -> tuple[bool, int]:
    """Smaller first, but a case with an axis of length 1 (one query: every mask and weight
    trivial) after the others."""
    arrays = f.prep.cases[i].arrays.values()
    flat = any(1 in a.shape for a in arrays) or 1 in f.prep.cases[i].scalars
    return flat, sum(a.size for a in arrays) + sum(f.prep.cases[i].scalars)


def in_process(fn: Callable, f: Findings) -> LearnerTrace:
    """The learner's events, traced here (``attnlab.grade.check``: their own code, on their
    own machine)."""
    files = {fn.__code__.co_filename} if hasattr(fn, "__code__") else set()

    def trace(i: int) -> list[Event]:
        case = f.prep.cases[i]
        args = [a.copy() for a in case.arrays.values()]
        try:
            _, events = record(fn, (*args, *case.scalars), dict(case.kwargs), files)
        except Exception:  # the learner's error is reported elsewhere
            return []
        return events

    return trace
