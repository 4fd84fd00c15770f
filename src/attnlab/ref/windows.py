"""Which keys a query may see, for the masks practitioners use beyond torch's ``is_causal``.

All are bool ``(T, S)`` masks (True = may attend) aligned **bottom-right**, as FlashAttention
and torch's ``causal_lower_right`` align them: query t is the (S - T + t)-th position of the
key sequence, so the last query sits on the last key. (torch's ``is_causal`` and
``causal_mask`` align top-left instead: query t sits on key t.)
"""

from __future__ import annotations

import numpy as np

from .masks import padding_mask


def _check(T: int, S: int) -> None:
    for name, n in (("T", T), ("S", S)):
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")


def causal_lower_right(T: int, S: int) -> np.ndarray:
    """Bool ``(T, S)``: query t may see keys s <= t + S - T (torch's ``causal_lower_right``).
    With T > S the first T - S queries see nothing."""
    _check(T, S)
    return np.tril(np.ones((T, S), dtype=bool), S - T)


def sliding_window_mask(T: int, S: int, left: int, right: int) -> np.ndarray:
    """Bool ``(T, S)``: query t, placed at key position p = t + S - T, may see keys
    p - left <= s <= p + right (FlashAttention's ``window_size=(left, right)``); -1 leaves that
    side unbounded, so ``(-1, 0)`` is ``causal_lower_right`` and ``(-1, -1)`` sees everything."""
    _check(T, S)
    for name, w in (("left", left), ("right", right)):
        if not isinstance(w, (int, np.integer)) or isinstance(w, bool) or w < -1:
            raise ValueError(f"window {name} must be an int >= -1 (-1: unbounded), got {w!r}")
    offset = (np.arange(S)[None, :] - np.arange(T)[:, None]) - (S - T)  # s - p: (T, S)
    ok = np.ones((T, S), dtype=bool)
    if left >= 0:
        ok &= offset >= -left
    if right >= 0:
        ok &= offset <= right
    return ok


def length_mask(lengths: np.ndarray, S: int) -> np.ndarray:
    """Bool ``(B, 1, 1, S)`` from valid key lengths ``(B,)``: key s of batch b may be seen when
    s < lengths[b] (broadcasts over heads and queries): ``padding_mask`` with a heads axis."""
    return padding_mask(lengths, S)[:, None]
