"""Numerically stable softmax.

softmax(x)_i = exp(x_i - max(x)) / sum_j exp(x_j - max(x)). Subtracting the row maximum changes
nothing mathematically but keeps ``exp`` from overflowing (scores of 1000 are fine).
A row that is entirely ``-inf`` (a query that may attend to nothing) gives all zeros, never NaN.
NaN anywhere in a row propagates to the whole row.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``; output has the shape and dtype of ``x``.

    All ``-inf`` rows give zeros (no warnings); float16 is computed in float32.
    """
    x = as_float_array(x, "x")
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    with np.errstate(invalid="ignore", over="ignore"):
        m = np.max(work, axis=axis, keepdims=True) if work.size else work.sum(axis, keepdims=True)
        m = np.where(np.isneginf(m), 0.0, m)  # all -inf row: exp(-inf - 0) = 0, not NaN
        e = work - m  # one new array, then in place: at large T each copy of the table costs
        np.exp(e, out=e)
        s = e.sum(axis=axis, keepdims=True)
        # s == 0 only for all -inf rows, whose e is all 0 already and stays so; NaN != 0, so NaN
        # rows still divide and stay NaN.
        np.divide(e, s, out=e, where=s != 0)
    return e.astype(x.dtype, copy=False)
