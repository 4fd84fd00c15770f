"""Known-wrong implementations: each keyword switches on one small change to the right code.

``attention(Q, K, V, mask, **changes)`` computes (output, weights) the right way when called with
no changes; every keyword switches on one classic slip. Which changes make which mistake id is
said in one place, ``mistakes.MISTAKES`` (its ``versions``). The grader runs these beside the
reference and names a mistake only when the learner's output matches one of them (and the variant
differs from the right answer on that case), so a name always comes with its evidence.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

AXES = {"row": -1, "column": -2, "all": None}


def softmax(
    s: np.ndarray, *, max_over: str = "row", sum_over: str = "row", keepdims: bool = True
) -> np.ndarray:
    """Softmax with the classic slips: ``max_over`` is where the maximum is subtracted ("row",
    right; "column"; "all", one global max; "none", no subtraction), ``sum_over`` what the
    exponentials are divided by ("row", right; "column"; "all", the whole array's sum)."""
    with np.errstate(all="ignore"):
        if max_over == "none":
            e = np.exp(s)
        else:  # shifted: a local of its own, so that the line that shifts is traced (lines.py)
            shifted = s - s.max(AXES[max_over], keepdims=True)
            e = np.exp(shifted)
        if sum_over == "all":
            return e / e.sum()
        return e / e.sum(axis=AXES[sum_over], keepdims=keepdims)  # no keepdims: wrong broadcast


def attention(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: bool = False,
    *,
    scale: str | float = "sqrt",  # "sqrt" (right), "none", "d", "sqrt_model", "times_sqrt"
    scale_at: str = "scores",  # "scores" (right), "weights" or "output": divided after softmax
    d_model: int | None = None,  # the model width, for scale="sqrt_model"
    mask_mode: str = "before",  # "before" (right), "after", "after_renorm", "zero", "none"
    diagonal: bool = True,  # False: the mask hides the diagonal too (np.tril(k=-1))
    ahead: int = 0,  # 1: the mask also shows the next key (np.tril(k=1))
    upper: bool | str = False,  # True: keeps the upper triangle; "strict": np.triu(k=1) kept
    fill: float | str = -np.inf,  # masked scores' value (-1e9 differs on fully masked rows);
    # "add": -1e9 added to them (a fully masked row then keeps its unmasked softmax)
    transpose: bool = False,  # scores computed as K Q^T
    weights_T: bool = False,  # right output, weights returned transposed
    align: str = "top_left",  # "bottom_right": the causal diagonal ends at the last key
    kt: str = "transpose",  # "reshape": K.reshape(d, S) where K.T is meant
    **softmax_changes,
) -> tuple[np.ndarray, np.ndarray]:
    """(output (T, d_v), weights (T, S)) for 2-D Q (T, d), K (S, d), V (S, d_v)."""
    d = Q.shape[-1]
    k_t = K.reshape(d, K.shape[0]) if kt == "reshape" else K.T  # (d, S)
    s = (K @ Q.T) if transpose else (Q @ k_t)
    divisor = _divisor(scale, d, d_model)
    if scale_at == "scores":
        s = s / divisor
    m = None
    if mask:
        T, S = s.shape
        m = causal(T, upper=upper, diagonal=diagonal, ahead=ahead, S=S, align=align)
        if mask_mode == "before" and fill == "add":
            s = s + np.where(m, 0.0, -1e9)
        elif mask_mode == "before":
            s = np.where(m, s, fill)
        elif mask_mode == "zero":
            s = np.where(m, s, 0.0)
    with np.errstate(all="ignore"):
        w = softmax(s, **softmax_changes)
        if m is not None and mask_mode in ("after", "after_renorm"):
            w = np.where(m, w, 0.0)
            if mask_mode == "after_renorm":
                w = w / w.sum(-1, keepdims=True)
        if scale_at == "weights":
            w = w / divisor
        out = w @ V
        if scale_at == "output":
            out = out / divisor
    return out, (w.T if weights_T else w)


def _divisor(scale: str | float, d: int, d_model: int | None) -> float:
    if scale == "sqrt_model":
        if d_model is None or d_model == d:
            raise ValueError("no model width here")  # the variant does not apply
        return math.sqrt(d_model)
    named = {"sqrt": math.sqrt(d), "none": 1.0, "d": float(d), "times_sqrt": 1 / math.sqrt(d)}
    return named.get(scale, scale)


def causal(
    T: int,
    *,
    upper: bool | str = False,
    diagonal: bool = True,
    ahead: int = 0,
    S: int | None = None,
    align: str = "top_left",
) -> np.ndarray:
    """The causal mask (T, S) with its slips (as in ``attention``); ``align="bottom_right"``
    puts the last query on the last key (``np.tril(k=S-T)``), where query t must see keys 0..t."""
    S = T if S is None else S
    ones = np.ones((T, S), dtype=bool)
    if upper:
        return np.triu(ones, 1 if upper == "strict" else 0)
    shift = S - T if align == "bottom_right" else 0
    return np.tril(ones, (0 if diagonal else -1) + ahead + shift)


def self_attention(X, W_Q, W_K, W_V, mask=False, *, values: str = "W_V", **changes):
    """Self-attention with a projection slip (``values``: the matrix V is built from)."""
    W = {"W_V": W_V, "W_K": W_K, "W_Q": W_Q}[values]
    return attention(X @ W_Q, X @ W_K, X @ W, mask, d_model=X.shape[1], **changes)


def safe(fn, *args, **kwargs):
    """Run a variant; a variant that cannot run on these shapes simply does not apply."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except (ValueError, IndexError):
        return None


def heads(X: np.ndarray, W: np.ndarray, h: int, how: str = "right") -> np.ndarray:
    """Project and split into ``h`` heads (h, T, d_k): "right" (reshape then transpose),
    "reshape" (reshape straight to (h, T, d_k)) or "interleaved" (head i takes columns i::h)."""
    P = X @ W  # (T, d_model)
    T, d_model = P.shape
    d_k = d_model // h
    if how == "reshape":
        return P.reshape(h, T, d_k)
    if how == "interleaved":
        return np.stack([P[:, i::h] for i in range(h)])
    return P.reshape(T, h, d_k).transpose(1, 0, 2)


def merge(outs: np.ndarray, how: str = "right") -> np.ndarray:
    """(h, T, d_k) -> (T, h * d_k): "right" (transpose then reshape), "reshape" (straight),
    "interleaved" (head i written back to columns i::h) or "reversed" (the last head first)."""
    h, T, d_k = outs.shape
    if how == "reversed":
        outs, how = outs[::-1], "right"
    if how == "interleaved":
        out = np.empty((T, h * d_k), dtype=outs.dtype)
        for i in range(h):
            out[:, i::h] = outs[i]
        return out
    flat = outs if how == "reshape" else outs.transpose(1, 0, 2)
    return flat.reshape(T, h * d_k)


def multi_head(
    X,
    W_Q,
    W_K,
    W_V,
    W_O,
    h,
    mask=False,
    *,
    split="right",
    join="right",
    project=True,
    values="W_V",
    across_heads=None,
    **changes,
) -> np.ndarray:
    """Multi-head attention with one of its slips (``split``, ``join``, ``project``, ``values``:
    the matrix V is built from, ``across_heads``: "sum" or "max" of the softmax taken over all
    heads at once) or a per-head attention slip (``changes``, as in ``attention``)."""
    W_V = {"W_V": W_V, "W_K": W_K, "W_Q": W_Q}[values]
    Q, K, V = (heads(X, W, h, split) for W in (W_Q, W_K, W_V))
    if across_heads is not None:
        return _across_heads(Q, K, V, mask, across_heads) @ W_O
    d_model = X.shape[1]
    outs = np.stack(
        [attention(Q[i], K[i], V[i], mask, d_model=d_model, **changes)[0] for i in range(h)]
    )
    out = merge(outs, join)
    return out @ W_O if project else out


def _across_heads(Q, K, V, mask, which: str) -> np.ndarray:
    """(T, d_model) heads joined, with the softmax's sum or max taken over every head at once
    ("sum", "max"), or the whole softmax taken over the heads axis ("axis": axis=0)."""
    s = Q @ K.transpose(0, 2, 1) / math.sqrt(Q.shape[-1])  # (h, T, S)
    if mask:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    with np.errstate(all="ignore"):
        if which == "axis":
            e = np.exp(s - s.max(0, keepdims=True))
            return merge(e / e.sum(0, keepdims=True) @ V)
        top = s.max() if which == "max" else s.max(-1, keepdims=True)
        shifted = s - top
        e = np.exp(shifted)
        w = e / (e.sum() if which == "sum" else e.sum(-1, keepdims=True))
    return merge(w @ V)


def positional(
    T: int,
    d: int,
    *,
    base: float = 10000.0,
    exponent: str = "2i",  # "2i" (right) or "i": frequency base^(-i/d) for pair i
    odd_own_index: bool = False,  # cos column 2i+1 uses (2i+1)/d instead of 2i/d
    layout: str = "interleaved",  # "interleaved" (right), "concat" (all sines, then all cosines)
    start: int = 0,  # first position (right: 0)
    swap: bool = False,  # cos on even columns, sin on odd
    only: str | None = None,  # "sin" or "cos": both columns of a pair take that one function
) -> np.ndarray:
    pos = np.arange(start, start + T, dtype=np.float64)[:, None]  # (T, 1)
    i = np.arange(d // 2, dtype=np.float64)
    power = 2 * i if exponent == "2i" else i
    angle = pos * base ** (-power / d)  # (T, d/2)
    odd_angle = pos * base ** (-(2 * i + 1) / d) if odd_own_index else angle
    sin, cos = np.sin(angle), np.cos(odd_angle)
    if swap:
        sin, cos = np.cos(angle), np.sin(odd_angle)
    if only is not None:
        f = np.sin if only == "sin" else np.cos
        sin, cos = f(angle), f(odd_angle)
    if layout == "concat":
        return np.concatenate([sin, cos], axis=1)
    pe = np.empty((T, d))
    pe[:, 0::2], pe[:, 1::2] = sin, cos
    return pe


def estimated_pe_base(pe: np.ndarray) -> float | None:
    """The base a sin/cos table was built with, read off its second column pair at position 1
    (angle = base^(-2/d)); None when the table is too small or not of that form."""
    if pe.ndim != 2 or pe.shape[0] < 2 or pe.shape[1] < 4:
        return None
    d = pe.shape[1]
    with np.errstate(all="ignore"):
        angle = math.atan2(float(pe[1, 2]), float(pe[1, 3]))
        if not 0 < angle < 1:
            return None
        return angle ** (-d / 2)


def additive(
    query, keys, W_q, W_k, v, *, tanh: str = "inside", softmax_over: str = "keys", **softmax_changes
):
    """Bahdanau attention with its slips: ``tanh`` "inside" (right: v . tanh(q W_q + k W_k)),
    "none", "outside" (tanh of the whole score), "query" or "key" (on one term only),
    "separate" (on each term apart);
    ``softmax_over`` "keys" (right) or "features" (a length-1 axis: every weight 1), and
    ``softmax`` changes (``max_over="none"``: no max subtraction)."""
    a, b = query @ W_q, keys @ W_k  # (d_a,), (S, d_a)
    with np.errstate(all="ignore"):
        pre = {
            "inside": np.tanh(a + b) @ v,
            "none": (a + b) @ v,
            "outside": np.tanh((a + b) @ v),
            "query": (np.tanh(a) + b) @ v,
            "key": (a + np.tanh(b)) @ v,
            "separate": (np.tanh(a) + np.tanh(b)) @ v,
        }[tanh]
        w = np.ones_like(pre) if softmax_over == "features" else softmax(pre, **softmax_changes)
    return w @ keys, w


# Each family of exercises and the functions its versions' keywords go to: the first runs the
# version, the others receive the keywords it passes on (``mistakes`` checks every version's
# keywords against this when it loads, so a misspelt change fails at import, not silently).
FAMILIES: dict[str, tuple] = {
    "softmax": (softmax,),
    "mask": (causal,),
    "attention": (attention, causal, softmax),
    "projections": (self_attention, attention, causal, softmax),
    "heads": (multi_head, attention, causal, softmax),
    "positions": (positional,),
    "additive": (additive, softmax),
}


def keywords(family: str) -> set[str]:
    """The keyword changes the versions of ``family`` may make."""
    return {
        name
        for fn in FAMILIES[family]
        for name, p in inspect.signature(fn).parameters.items()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is not p.empty
    }
