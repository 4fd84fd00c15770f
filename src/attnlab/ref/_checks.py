"""Input validation shared by the reference functions.

Every check raises one ``TypeError``/``ValueError`` whose message names the argument, its shape
or dtype, and what was expected, so that a learner can fix the call without reading our code.
"""

from __future__ import annotations

import numpy as np

from ..shapes import broadcast_shape

FLOAT_DTYPES = (np.float16, np.float32, np.float64)


def as_float_array(x: object, name: str) -> np.ndarray:
    """Return ``x`` as a floating ndarray; integers, bools and objects are a ``TypeError``."""
    arr = np.asarray(x)
    if arr.dtype.type not in FLOAT_DTYPES:
        raise TypeError(
            f"{name} must be a floating-point array (float32 or float64), got dtype {arr.dtype}"
            + (" — convert with .astype(np.float64)" if arr.dtype.kind in "iub" else "")
        )
    return arr


def same_dtype(**arrays: np.ndarray) -> np.dtype:
    """All arrays share one dtype; return it, else a ``TypeError`` listing each."""
    dtypes = {name: a.dtype for name, a in arrays.items()}
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{n}: {d}" for n, d in dtypes.items())
        raise TypeError(f"inputs must share one dtype, got {listed}")
    return next(iter(dtypes.values()))


def min_ndim(x: np.ndarray, n: int, name: str, layout: str) -> None:
    if x.ndim < n:
        raise ValueError(f"{name} must have at least {n} dims {layout}, got shape {x.shape}")


def mask_array(attn_mask: object, scores_shape: tuple[int, ...]) -> np.ndarray:
    """attn_mask as an array: bool (True = may attend) or float (added to scores), and
    broadcastable to ``scores_shape`` (..., T, S)."""
    m = np.asarray(attn_mask)
    if m.dtype != bool and m.dtype.kind != "f":
        raise TypeError(
            f"attn_mask must be bool (True = may attend) or float (added to scores), got dtype {m.dtype}"
        )
    broadcast_shape(
        "attn_mask must broadcast to the scores", attn_mask=m.shape, scores=scores_shape
    )
    return m


def check_weight(W: np.ndarray, wn: str, x: np.ndarray, xn: str, d_in: str = "d_in") -> None:
    """A projection matrix ``W`` applied as ``x @ W`` must be 2-D with x's width as its rows."""
    if W.ndim != 2 or W.shape[0] != x.shape[-1]:
        raise ValueError(
            f"{wn} must be ({d_in}, d_out) with {d_in} = {xn}.shape[-1] = {x.shape[-1]}, "
            f"got {wn} {W.shape} for {xn} {x.shape}"
        )
