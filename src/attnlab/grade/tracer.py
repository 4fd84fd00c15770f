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

# line: 1-based line of the file where the value was made; name: the local that holds it
Event = namedtuple("Event", ["line", "name", "value", "file"], defaults=[""])


def _arrays(frame_locals: dict) -> dict:
    import numpy as np

    return {
        k: v
        for k, v in frame_locals.items()
        if isinstance(v, np.ndarray) and v.dtype.kind in "biuf" and 0 < v.size <= MAX_CELLS
    }


def _changed(before: dict, now: dict) -> dict:
    """The arrays assigned (a new object, even with the same numbers) or changed in place."""
    import numpy as np

    return {
        k: v
        for k, v in now.items()
        if k not in before
        or before[k][0] != id(v)
        or before[k][1].shape != v.shape
        or not np.array_equal(before[k][1], v, equal_nan=v.dtype.kind == "f")
    }


def _kept(arrays: dict) -> dict:
    return {k: (id(v), v.copy()) for k, v in arrays.items()}


def record(fn, args: tuple, kwargs: dict, files: set, most: int = MAX_EVENTS) -> tuple:
    """``fn(*args, **kwargs)`` and the events of the frames whose code lives in ``files``: after
    each line, the arrays it made or changed (a line's effect shows at the next line event of
    the same frame, or at its return)."""
    events: list = []
    state: dict = {}  # frame id -> (line running, arrays seen)
    keep = []  # the arrays seen stay alive, so that an id is never reused while recording

    def settle(frame) -> None:
        line, seen = state.get(id(frame), (frame.f_lineno, {}))
        now = _arrays(frame.f_locals)
        changed = _changed(seen, now)
        for name, value in changed.items():
            if len(events) < most:
                events.append(Event(line, name, value.copy(), frame.f_code.co_filename))
        keep.extend(changed.values())  # an unchanged array is kept already, and not copied again
        kept = {k: seen[k] for k in now if k not in changed} | _kept(changed)
        state[id(frame)] = (frame.f_lineno, kept)

    def local(frame, event, arg):
        if len(events) >= most:
            return None  # enough: the rest runs untraced
        if event in ("line", "return"):
            settle(frame)
        if event == "return":  # what the line returns, as "<return>" (an expression's value)
            for k, part in enumerate(arg if isinstance(arg, tuple) else (arg,)):
                got = _arrays({f"<return {k}>": part})
                events.extend(
                    Event(frame.f_lineno, n, v.copy(), frame.f_code.co_filename)
                    for n, v in got.items()
                )
        return local

    def global_(frame, event, arg):
        if frame.f_code.co_filename not in files or len(events) >= most:
            return None
        arrays = _arrays(frame.f_locals)  # the arguments: at the def line, as values given
        keep.extend(arrays.values())
        if state:  # a call made inside: its arguments are values the caller computed
            events.extend(
                Event(frame.f_lineno, n, v.copy(), frame.f_code.co_filename)
                for n, v in arrays.items()
            )
        state[id(frame)] = (frame.f_lineno, _kept(arrays))
        return local

    old = sys.gettrace()
    sys.settrace(global_)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.settrace(old)
    return result, events[:most]  # arguments and returned values are added a call at a time


def _close(a, b) -> bool:
    import numpy as np

    if a.shape != b.shape:
        return False
    a, b = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(a, b, rtol=1e-4, atol=1e-7, equal_nan=True))


def after_divergence(right: list, wrong: list) -> list:
    """The values the mistake's version holds from the first one where the right computation,
    run on the same lines, holds another (compared event by event): that one, then those of
    its later values the right computation never holds, in the order it made them. Where the
    right computation changes a value the version leaves as it was (a step the version skips),
    that old value comes first: it is where the version went its own way."""
    held: dict = {}  # (file, name) -> the value both hold so far
    for j, (r, w) in enumerate(zip(right, wrong, strict=False)):
        if (r.file, r.line, r.name) == (w.file, w.line, w.name) and _close(r.value, w.value):
            held[r.file, r.name] = w
            continue
        kept = held.get((r.file, r.name)) if (w.file, w.name) != (r.file, r.name) else None
        first = [kept] if kept is not None and not _close(kept.value, r.value) else []
        return [*first, w, *_own(wrong[j + 1 :], right)]
    return _own(wrong[len(right) :], right)


def _own(events: list, right: list) -> list:
    """The values of ``events`` the right computation never holds under the same name."""
    return [
        e
        for e in events
        if not any((r.file, r.name) == (e.file, e.name) and _close(e.value, r.value) for r in right)
    ]


def locate(learner: list, wrong: list):
    """The learner's first line that holds the value of one of the version's events ``wrong``;
    None when no line of theirs does. Where several of their lines hold that same value (K,
    and a V made from W_K), the one whose variable is named as the version's wins. (A value
    the mistake makes by leaving a step out may equal an earlier right value: the line named
    is then the one that should have gone on, as in ``s = Q @ K.T`` without the scale; a line
    that does two steps at once holds a later value of the version's.)"""
    for e in learner:
        hit = next((w for w in wrong if _close(e.value, w.value)), None)
        if hit is None:
            continue
        same = [x for x in learner if _close(x.value, hit.value)]
        named = [x for x in same if x.name.lower() == hit.name.lower()]
        return (named or same)[0].line
    return None
