"""One parity rule for every comparison in attnlab: tests, ``attnlab check`` and the grader.

An answer is held against a float64 oracle:

- float64 answers: ``max|answer - oracle| <= atol64 * max(1, max|oracle|)`` (default 1e-10).
- float32/float16 answers: the flash-attention testing rule. The error may be at most twice the
  error that a naive implementation in the same precision makes against the same oracle
  (``naive``), plus a few units in the last place so that an exactly-rounded naive answer does
  not make the bound zero. Without ``naive`` the bound is 64 ulps of the answer's dtype.

NaN must sit where the oracle has NaN (and only there); infinities must match exactly.
Inputs may be NumPy arrays or torch tensors (they are converted; torch is never imported here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Parity:
    """The outcome of one comparison; ``ok`` says whether it passed."""

    ok: bool
    max_abs_err: float
    tolerance: float
    message: str = ""


def to_numpy(x: object) -> np.ndarray:
    """NumPy view of an array-like; torch tensors are detached and moved to the CPU."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()  # type: ignore[union-attr]
    return np.asarray(x)


def _max_err(a: np.ndarray, b: np.ndarray) -> float:
    finite = np.isfinite(a) & np.isfinite(b)
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(a[finite].astype(np.float64) - b[finite].astype(np.float64))))


def compare(
    answer: object, oracle: object, naive: object | None = None, *, atol64: float = 1e-10
) -> Parity:
    """Check ``answer`` against the float64 ``oracle`` (see the module docstring for the rule)."""
    a, ref = to_numpy(answer), to_numpy(oracle).astype(np.float64)
    if a.shape != ref.shape:
        return Parity(False, float("inf"), 0.0, f"shape {a.shape}, expected {ref.shape}")
    if a.dtype.kind != "f":
        return Parity(False, float("inf"), 0.0, f"dtype {a.dtype}, expected a float array")
    nan_a, nan_r = np.isnan(a), np.isnan(ref)
    if (nan_a != nan_r).any():
        where = np.argwhere(nan_a != nan_r)[0].tolist()
        what = "NaN" if nan_a[tuple(where)] else "a number"
        return Parity(
            False, float("inf"), 0.0, f"{what} at index {where} where the reference differs"
        )
    inf_a, inf_r = np.isinf(a), np.isinf(ref)
    if (inf_a != inf_r).any() or (a[inf_a] != ref[inf_r]).any():
        return Parity(False, float("inf"), 0.0, "infinities differ from the reference")
    scale = max(1.0, float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0)))
    err = _max_err(a, ref)
    if a.dtype == np.float64:
        tol = atol64 * scale
    else:
        ulp = float(np.finfo(a.dtype).eps) * scale
        tol = 2.0 * _max_err(to_numpy(naive), ref) + 4 * ulp if naive is not None else 64 * ulp
    ok = err <= tol
    return Parity(ok, err, tol, "" if ok else f"max abs error {err:.3g} > tolerance {tol:.3g}")
