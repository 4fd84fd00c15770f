"""Input validation shared by the reference functions.

Every check raises one ``TypeError``/``ValueError`` whose message names the argument, its shape
or dtype, and what was expected, so that a learner can fix the call without reading our code.
"""

from __future__ import annotations

import numpy as np

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


def broadcast_shape(what: str, **shapes: tuple[int, ...]) -> tuple[int, ...]:
    """``np.broadcast_shapes`` with an error that names every participant."""
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{n} {s}" for n, s in shapes.items())
        raise ValueError(f"{what}: shapes do not broadcast: {listed}") from None


def attention_shapes(
    q: tuple[int, ...], k: tuple[int, ...], v: tuple[int, ...], enable_gqa: bool
) -> tuple[int, ...]:
    """Validate q ``(..., T, E)``, k ``(..., S, E)``, v ``(..., S, Ev)``; return the batch shape.

    Shared by the NumPy reference and the torch functional core so both reject the same inputs
    with the same words. With ``enable_gqa`` the head axis (-3) of k/v may divide q's.
    """
    for shape, n, layout in (
        (q, "q", "(..., T, E)"),
        (k, "k", "(..., S, E)"),
        (v, "v", "(..., S, Ev)"),
    ):
        if len(shape) < 2:
            raise ValueError(f"{n} must have at least 2 dims {layout}, got shape {shape}")
    if q[-1] != k[-1]:
        raise ValueError(
            f"q and k must have the same width E: q {q} has {q[-1]}, k {k} has {k[-1]}"
        )
    if k[-2] != v[-2]:
        raise ValueError(
            f"k and v must have the same length S: k {k} has {k[-2]}, v {v} has {v[-2]}"
        )
    q_lead, k_lead, v_lead = q[:-2], k[:-2], v[:-2]
    if len(q) >= 3 and len(k) >= 3 and q[-3] != k[-3] and k[-3] != 1:
        hq, hk = q[-3], k[-3]
        if not enable_gqa:
            hint = " (pass enable_gqa=True for grouped-query attention)" if hq % hk == 0 else ""
            raise ValueError(f"q has {hq} heads but k has {hk}{hint}: q {q}, k {k}")
        if hk == 0 or hq % hk:
            raise ValueError(
                f"GQA: query heads ({hq}) must be a multiple of key/value heads ({hk})"
            )
        k_lead = v_lead = (*k[:-3], hq)  # after repeating each kv head for its query group
    return broadcast_shape("attention inputs", q=q_lead, k=k_lead, v=v_lead)


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
