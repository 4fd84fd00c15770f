"""Shape rules shared by the NumPy reference (``attnlab.ref``) and the torch core
(``attnlab.nn``), so both reject the same inputs with the same words. Plain tuples in, no torch.
"""

from __future__ import annotations

import numpy as np


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
