"""Line by line, the arrays a function's locals hold: where do the values first go wrong?

``record`` runs a function under ``sys.settrace`` and keeps, after each executed line of the
chosen files, every NumPy array local that line created or changed (a copy, small arrays only).
``after_divergence`` walks the traces of the right computation and of a mistake's version (the
functions of ``variants``, which run the same lines with one keyword changed) to the first value
they disagree on; ``locate`` finds the learner's first line that holds a value the version made
from there on.

The sandbox's child runs this module too: it is sent as text ahead of ``_child.py`` (so no
``from __future__``, and NumPy is imported only once a function runs, after the child has found
it), and the child sends back at most ``MAX_EVENTS`` events of at most ``MAX_CELLS`` cells.
"""

import sys
from collections import namedtuple

MAX_CELLS = 256  # larger arrays are not kept (the grader's small cases stay far below)
MAX_EVENTS = 96  # per call of the learner's function: a loop over many lines stops recording here

# line: 1-based line of the file where the value was made; name: the local that holds it;
# skipped: (a version's value only) one the right computation changes next and the version
# keeps as it is, a step left out
Event = namedtuple("Event", ["line", "name", "value", "file", "skipped"], defaults=["", False])


def _numbers(v):
    """``v`` as a small array of numbers, or None: a NumPy array (bool, integer or float), or
    a list or tuple of floats (integers among them) or of arrays of one shape (stacked:
    a loop's rows); at most ``MAX_CELLS`` cells."""
    import numpy as np

    if isinstance(v, np.ndarray):
        return v if v.dtype.kind in "biuf" and 0 < v.size <= MAX_CELLS else None
    if not isinstance(v, (list, tuple)) or not 0 < len(v) <= MAX_CELLS:
        return None
    if all(isinstance(x, np.ndarray) for x in v):
        shape, kind = v[0].shape, v[0].dtype.kind
        if kind in "biuf" and all(x.shape == shape and x.dtype.kind == kind for x in v):
            return np.stack(v) if len(v) * v[0].size <= MAX_CELLS and v[0].size else None
        return None
    plain = all(isinstance(x, (int, float, np.integer, np.floating)) for x in v)
    if plain and any(isinstance(x, (float, np.floating)) for x in v):
        return np.asarray(v, dtype=np.float64)  # bools and integer lists (shapes) are not values
    return None


def _arrays(frame_locals: dict) -> dict:
    """{name: (the local, its numbers)} of the locals ``_numbers`` reads."""
    found = {}
    for k, v in frame_locals.items():
        a = _numbers(v)
        if a is not None:
            found[k] = (v, a)
    return found


def _changed(before: dict, now: dict) -> dict:
    """The values assigned (a new object, even with the same numbers) or changed in place."""
    import numpy as np

    return {
        k: (v, a)
        for k, (v, a) in now.items()
        if k not in before
        or before[k][0] != id(v)
        or before[k][1].shape != a.shape
        or not np.array_equal(before[k][1], a, equal_nan=a.dtype.kind == "f")
    }


def _own(v, a):
    """A copy of ``a`` where it is the learner's own object (a list read is a new array)."""
    return a.copy() if a is v else a


def _kept(arrays: dict) -> dict:
    return {k: (id(v), _own(v, a)) for k, (v, a) in arrays.items()}


def record(fn, args: tuple, kwargs: dict, files: set, most: int = MAX_EVENTS) -> tuple:
    """``fn(*args, **kwargs)`` and the events of the frames whose code lives in ``files``: after
    each line, the values it made or changed (a line's effect shows at the next line event of
    the same frame, or at its return). A call made inside gives its arguments as values of the
    caller's line (the line that passes them on)."""
    events: list = []
    state: dict = {}  # frame id -> (line running, arrays seen)
    keep = []  # the objects seen stay alive, so that an id is never reused while recording

    def settle(frame) -> None:
        line, seen = state.get(id(frame), (frame.f_lineno, {}))
        now = _arrays(frame.f_locals)
        changed = _changed(seen, now)
        for name, (v, a) in changed.items():
            if len(events) < most:
                events.append(Event(line, name, _own(v, a), frame.f_code.co_filename))
        keep.extend(v for v, _ in changed.values())  # an unchanged one is kept already
        kept = {k: seen[k] for k in now if k not in changed} | _kept(changed)
        state[id(frame)] = (frame.f_lineno, kept)

    def local(frame, event, arg):
        if len(events) >= most:
            return None  # enough: the rest runs untraced
        if event in ("line", "return"):
            settle(frame)
        if event == "return":  # what the line returns, as "<return>" (an expression's value)
            parts = arg if isinstance(arg, tuple) else (arg,)
            got = _arrays({f"<return {k}>": part for k, part in enumerate(parts)})
            events.extend(
                Event(frame.f_lineno, n, _own(v, a), frame.f_code.co_filename)
                for n, (v, a) in got.items()
            )
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename not in files or len(events) >= most:
            return None
        arrays = _arrays(frame.f_locals)  # the arguments: at the def line, as values given
        keep.extend(v for v, _ in arrays.values())
        caller = frame.f_back
        if caller is not None and id(caller) in state and caller.f_code.co_filename in files:
            events.extend(
                Event(caller.f_lineno, n, _own(v, a), caller.f_code.co_filename)
                for n, (v, a) in arrays.items()
            )  # values the caller computed, passed on
        state[id(frame)] = (frame.f_lineno, _kept(arrays))
        return local

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.settrace(old)
    return result, events[:most]  # arguments and returned values are added a call at a time


INPUT = "<input>"  # the file of the events that stand for the inputs the case gives
MASKED = -1e8  # a score at or below this is masked in effect: -1e9 and -inf act the same


def _close(a, b) -> bool:
    import numpy as np

    if a.shape != b.shape or (a.dtype == bool) != (b.dtype == bool):
        return False  # a mask is not a 0/1 float array
    low = min(
        (x.dtype for x in (a, b) if x.dtype.kind == "f"), key=lambda t: t.itemsize, default=None
    )
    if low is not None and low.itemsize < 8:  # rounded as the lower precision (float32 overflows)
        a, b = a.astype(low), b.astype(low)
    a, b = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        a, b = np.maximum(a, MASKED), np.maximum(b, MASKED)  # NaN stays NaN
        return bool(np.allclose(a, b, rtol=1e-4, atol=1e-7, equal_nan=True))


def _holds(a, b) -> bool:
    """``a`` and ``b`` are the same values, or one is a part of the other along its first axes
    (a loop's row of a matrix, one head of several); a part has two values at least."""
    import numpy as np

    if a.shape == b.shape:
        return _close(a, b)
    big, small = (a, b) if a.ndim > b.ndim else (b, a)
    if small.ndim == 0 or big.shape[big.ndim - small.ndim :] != small.shape:
        return False
    if np.unique(small).size < 2:
        return False  # a constant row (zeros, ones) is part of too many things
    return any(_close(part, small) for part in big.reshape(-1, *small.shape))


def after_divergence(right: list, wrong: list) -> list:
    """The values the mistake's version holds from the first one where the right computation,
    run on the same lines, holds another (compared event by event): that one, then those of
    its later values the right computation never holds, in the order it made them. Where the
    right computation changes a value the version leaves as it was (a step the version skips),
    that old value comes first, marked ``skipped``: it is where the version went its own way."""
    held: dict = {}  # (file, name) -> the value both hold so far
    for j, (r, w) in enumerate(zip(right, wrong, strict=False)):
        if (r.file, r.line, r.name) == (w.file, w.line, w.name) and _close(r.value, w.value):
            held[r.file, r.name] = w
            continue
        kept = _kept_value(held, r, w, right[j:])
        first = [kept._replace(skipped=True)] if kept else []
        return [*first, w, *_own_values(wrong[j + 1 :], right)]
    return _own_values(wrong[len(right) :], right)


def _kept_value(held: dict, r, w, rest: list):
    """Where the version runs other lines than the right computation (it skips some), the
    value it keeps that the right computation changes: the one the right computation changes
    next, or the one the version passes on unchanged where the right computation (``rest``)
    later holds another of that shape there (same line, same name). None where the two run the same
    line."""
    if (r.file, r.line, r.name) == (w.file, w.line, w.name):
        return None  # the same step, done another way (a scale of 1): not a step left out
    if (w.file, w.name) != (r.file, r.name):
        kept = held.get((r.file, r.name))
        if kept is not None and not _close(kept.value, r.value):
            return kept
    kept = held.get((w.file, w.name))
    if kept is None or not _close(kept.value, w.value):
        return None
    later = [x for x in rest if (x.file, x.line, x.name) == (w.file, w.line, w.name)]
    changed = any(x.value.shape == w.value.shape and not _close(x.value, w.value) for x in later)
    return kept if changed else None


def _own_values(events: list, right: list) -> list:
    """The values of ``events`` the right computation never holds under the same name (whole,
    or part by part: every head of the version's (h, T, S) scores among the right's)."""
    return [e for e in events if not _held_by_name(e, right)]


def _held_by_name(e, right: list) -> bool:
    same = [r.value for r in right if (r.file, r.name) == (e.file, e.name)]
    if any(_close(e.value, v) for v in same):
        return True
    for shape in {v.shape for v in same if 0 < v.ndim < e.value.ndim}:
        if e.value.shape[e.value.ndim - len(shape) :] == shape:
            parts = e.value.reshape(-1, *shape)
            if all(any(_close(p, v) for v in same if v.shape == shape) for p in parts):
                return True
    return False


def _negated(a, b) -> bool:
    import numpy as np

    return a.dtype == bool and b.dtype == bool and a.shape == b.shape and np.array_equal(~a, b)


def locate(learner: list, wrong: list, right: list = (), next_use: bool = False):
    """The learner's first line that holds the value of one of the version's events ``wrong``
    (or a part of it: a loop's row); None when no line of theirs does.

    A learner's value the right computation holds too (``right``: K, where the version's V is
    made from W_K) names no line, unless it is held under the learner's own name in the
    version only (their V), or it is the value the version keeps where it first parts from
    the right computation (``s = Q @ K.T`` without the scale: the line that should have gone
    on). A boolean mask that is the version's negated (a mask of hidden keys, built upside
    down and negated later) names its line where the right computation holds no such value.
    Where the version left a step out (its first value is ``skipped``) and ``next_use``, the
    line named is the first after the learner's line holding that value that uses it
    (``_next_use``)."""
    first = next((w for w in wrong if not w.skipped), None)
    for k, e in enumerate(learner):
        hits = [w for w in wrong if _holds(e.value, w.value)]
        held = [r for r in right if _holds(e.value, r.value)]
        mine = [w for w in hits if w.name.lower() == e.name.lower()]
        if mine and not any(r.name.lower() == e.name.lower() for r in held):
            return e.line  # their V holds the version's V
        if hits and hits[0].skipped:
            return _next_use(learner[k + 1 :], e, wrong, right) if next_use else e.line
        if hits and not held:
            return e.line
        if (
            first in hits
            and e.value.ndim >= first.value.ndim
            and all((r.file, r.name) == (first.file, first.name) for r in held)
        ):
            return e.line  # held only as the value before the step the version leaves undone
        if hits and _input_swapped(e, held, right):
            return e.line  # their W_V holds the input W_K
        if _wrote_wrong_cells(e, learner[:k], wrong, right):
            return e.line
        if not held and any(_negated(e.value, w.value) for w in wrong):
            return e.line
    return None


def _input_swapped(e, held: list, right: list) -> bool:
    """Whether ``e`` is a local named as an input (``W_V``, a cast copy of it) that holds
    another input's values (``W_K``'s) and not its own."""
    inputs = {r.name for r in right if r.file == INPUT}
    own = [r for r in held if r.file == INPUT]
    return e.name in inputs and bool(own) and all(r.name != e.name for r in own)


def _wrote_wrong_cells(e, before: list, wrong: list, right: list) -> bool:
    """Whether the cells a line filled in an array of zeros (``pe[:, 0::2] = ...``, a loop's
    row) are a version's value there, where the right computation's value under that name is
    another."""
    import numpy as np

    prev = next((p for p in reversed(before) if p.name == e.name and p.file == e.file), None)
    if (
        prev is None
        or e.name.startswith("<")
        or prev.value.shape != e.value.shape
        or e.value.dtype.kind not in "bf"
    ):
        return False
    with np.errstate(invalid="ignore"):
        cells = ~((prev.value == e.value) | (np.isnan(prev.value) & np.isnan(e.value)))
    if not cells.any() or cells.all() or (prev.value[cells] != 0).any():
        return False  # only cells filled in from zeros: np.zeros, then a part at a time
    for w in wrong:
        same = [r for r in right if (r.file, r.name) == (w.file, w.name)]
        if w.value.shape != e.value.shape or not same or same[-1].value.shape != e.value.shape:
            continue
        if _close(e.value[cells], w.value[cells]) and not _close(
            e.value[cells], same[-1].value[cells]
        ):
            return True
    return False


def _next_use(after: list, held, wrong: list, right: list):
    """The first line after ``held``'s (a value a step should have changed, left as it was)
    that passes it on or makes a value from it: one the version makes, or one the right
    computation never holds (a value the right computation holds, a mask built and never
    applied, is passed over)."""
    for e in after:
        if e.line == held.line and e.file == held.file:
            continue
        if _holds(e.value, held.value) or any(_holds(e.value, w.value) for w in wrong):
            return e.line
        if not any(_holds(e.value, r.value) for r in right):
            return e.line
    return None
