"""Judge one output against the float64 reference with ``attnlab.parity``'s rule, and say where
it differs (which batches, heads and rows).

The rule: at most twice the error of torch's own answer at that dtype, plus 4 units in the last
place of the dtype at the output's scale (float64: 1e-10 relative). NumPy has no bfloat16, so a
bfloat16 answer is compared as float32 with the floor taken at bfloat16's epsilon.
"""

from __future__ import annotations

import numpy as np

from ..parity import Parity, compare

BF16_EPS = 2.0**-7
F32_EPS = float(np.finfo(np.float32).eps)


def judge(answer: np.ndarray, oracle: np.ndarray, naive: np.ndarray | None, dtype: str) -> Parity:
    """``parity.compare(answer, oracle, naive)``; bfloat16 answers arrive as float32."""
    with np.errstate(all="ignore"):
        p = compare(answer, oracle, naive)
    if dtype != "bfloat16" or p.tolerance == 0.0:
        return p
    finite = oracle[np.isfinite(oracle)]
    scale = max(1.0, float(np.max(np.abs(finite), initial=0.0)))
    tol = p.tolerance + 4 * (BF16_EPS - F32_EPS) * scale
    ok = p.max_abs_err <= tol
    msg = "" if ok else f"max abs error {p.max_abs_err:.3g} > tolerance {tol:.3g}"
    return Parity(ok, p.max_abs_err, tol, msg)


def budget(oracle: np.ndarray, naive: np.ndarray | None, dtype: str) -> float:
    """The tolerance the rule grants at this dtype (whatever the answer is)."""
    like = oracle.astype(np.float32 if dtype == "bfloat16" else dtype)
    return judge(like, oracle, naive, dtype).tolerance


def _spans(idx: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    out, start = [], None
    for i, x in enumerate(idx):
        if start is None:
            start = x
        if i + 1 == len(idx) or idx[i + 1] != x + 1:
            out.append(str(start) if start == x else f"{start}-{x}")
            start = None
    return ", ".join(out)


def locate(answer: np.ndarray, oracle: np.ndarray, tol: float, rows: str = "rows") -> str:
    """Where ``answer`` ``(B, H, T, E)`` misses ``oracle`` by more than ``tol``: e.g.
    'rows 0-2, heads 1-2, every batch (12 of 24 rows; NaN in 2)'; at most 4 rows are named one
    by one: '(batch 0, head 1, row 3), ...'."""
    a = answer.astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = (np.isnan(a) != np.isnan(oracle)) | (np.abs(a - oracle) > tol)
        bad |= np.isinf(a) & ~(a == oracle)
    full = bad.any(-1)  # (B, H, T): the rows that miss
    if not full.any():
        return ""
    parts = []
    if full.ndim == 3:  # (B, H, T)
        b_idx, h_idx, t_idx = (sorted(set(ix.tolist())) for ix in np.nonzero(full))
        parts.append(f"{rows} {_spans(t_idx)}")
        parts.append(f"heads {_spans(h_idx)}" if len(h_idx) < full.shape[1] else "every head")
        if full.shape[0] > 1:
            parts.append(
                f"batches {_spans(b_idx)}" if len(b_idx) < full.shape[0] else "every batch"
            )
    else:
        parts.append(f"{rows} {_spans(sorted(set(np.nonzero(full)[-1].tolist())))}")
    n_bad = int(full.sum())
    if full.ndim == 3 and n_bad <= 4:  # few: name each one
        parts = [f"(batch {b}, head {h}, {rows[:-1]} {t})" for b, h, t in np.argwhere(full)]
    count = f"{n_bad} of {full.size} {rows}"
    nan_rows = int(np.isnan(a).any(-1).sum())
    if nan_rows:
        count += f"; NaN in {nan_rows}"
    return f"{', '.join(parts)} ({count})"
