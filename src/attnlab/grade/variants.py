"""Known-wrong attention implementations: each mistake id is one small change to the right code.

``attention(Q, K, V, mask, **changes)`` computes (output, weights) the right way when called with
no changes; every keyword switches on one classic mistake. The grader runs these beside the
reference and names a mistake when the learner's output matches one of them.
"""

from __future__ import annotations

import math

import numpy as np


def softmax(
    s: np.ndarray, axis: int = -1, keepdims: bool = True, stable: bool = True
) -> np.ndarray:
    with np.errstate(all="ignore"):
        e = np.exp(s - s.max(axis=axis, keepdims=True)) if stable else np.exp(s)
        total = e.sum(axis=axis, keepdims=keepdims)
        return e / total  # without keepdims this broadcasts along the wrong axis (or fails)


def attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: bool = False,
    *,
    scale: str = "sqrt",  # "sqrt" (right), "none", "d", or a number to divide by
    axis: int = -1,
    keepdims: bool = True,
    stable: bool = True,
    mask_mode: str = "before",  # "before" (right), "after" (zeroed after softmax), "none"
    upper: bool = False,  # mask keeps the upper triangle instead of the lower
    transpose: bool = False,  # weights computed as K Q^T, i.e. transposed
) -> tuple[np.ndarray, np.ndarray]:
    """(output (T, d_v), weights (T, S)) for 2-D Q (T, d), K (S, d), V (S, d_v)."""
    d = Q.shape[-1]
    s = (K @ Q.T) if transpose else (Q @ K.T)
    div = {"sqrt": math.sqrt(d), "none": 1.0, "d": float(d)}.get(scale, scale)
    s = s / div
    m = None
    if mask:
        T, S = s.shape
        m = np.triu(np.ones((T, S), bool)) if upper else np.tril(np.ones((T, S), bool))
        if mask_mode == "before":
            s = np.where(m, s, -np.inf)
    with np.errstate(all="ignore"):
        w = softmax(s, axis=axis, keepdims=keepdims, stable=stable)
        if m is not None and mask_mode == "after":
            w = np.where(m, w, 0.0)
        return w @ V, w


def safe(fn, *args, **kwargs):
    """Run a variant; a variant that cannot run on these shapes simply does not apply."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except (ValueError, IndexError):
        return None


# One entry per mistake id: the changes to ``attention`` that make it.
ATTENTION_MISTAKES: dict[str, dict] = {
    "missing_scale": {"scale": "none"},
    "wrong_scale": {"scale": "d"},
    "softmax_axis": {"axis": 0},
    "missing_keepdims": {"keepdims": False},
    "mask_orientation": {"upper": True},
    "mask_ignored": {"mask_mode": "none"},
    "mask_after_softmax": {"mask_mode": "after"},
    "transposed_weights": {"transpose": True},
    "unstable_softmax": {"stable": False},
}
