"""Say what, not only where: the known conventions a failing output may follow instead of
torch's, each computed in float64 from the inputs the target saw, and named when the target's
output matches it within the parity rule (the budget of the failing case).

Each convention is a way real attention code differs from torch's SDPA: a causal mask aligned
bottom-right, GQA heads tiled, fully masked rows given mean(V), ``is_causal`` ignored, a mask
inverted or read as the other kind, float32 internals for float64 inputs, a missing or default
scale, dropout left active. Only conventions that change this case's answer are tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import ref
from .calls import CaseResult, call_again
from .cases import OMIT, Case
from .inputs import Inputs
from .judge import budget, judge
from .reference import variant_reference


@dataclass(frozen=True)
class Convention:
    id: str
    says: str  # what the target does, in one phrase
    applies: Callable[[Case], bool]
    options: Callable[[Case], dict]  # keyword arguments of ``attend`` giving its answer


def attend(
    inp: Inputs,
    *,
    causal: str = "top_left",
    heads: str = "interleave",
    dead: str = "zero",
    mask: str = "as_given",
    scale: float | None = None,
) -> np.ndarray:
    """float64 attention of ``inp`` under the given conventions (the defaults are torch's).

    causal: top_left, bottom_right or ignored; heads: interleave (h // g) or tile (h % Hk);
    dead: zero or mean (mean of v for rows that may attend to nothing); mask: as_given,
    inverted (bool), nonzero (a float mask read as bool), numbers (a bool mask added as 0/1).
    """
    c, s = inp.case, inp.seen
    q, k, v = s["q"], s["k"], s["v"]  # (B, H, T, D), (Bk, Hk, S, D), (Bk, Hk, S, Dv)
    if c.gqa:
        g = c.H // c.hk
        k, v = (
            (np.repeat(x, g, -3) if heads == "interleave" else np.tile(x, (1, g, 1, 1)))
            for x in (k, v)
        )
    scale = c.effective_scale() if scale is None else scale
    x = q @ np.swapaxes(k, -1, -2) * scale  # (B, H, T, S)
    m = s.get("mask")
    if m is not None:
        x = x + _bias(m, mask)
    if c.causal and causal != "ignored":
        offset = c.S - c.T if causal == "bottom_right" else 0
        x = np.where(np.tril(np.ones((c.T, c.S), dtype=bool), offset), x, -np.inf)
    top = x.max(-1, keepdims=True)
    empty = np.isneginf(top)  # (B, H, T, 1): rows that may attend to nothing
    e = np.exp(x - np.where(empty, 0.0, top))
    total = e.sum(-1, keepdims=True)
    out = (e @ v) / np.where(total > 0, total, 1.0)
    if dead == "mean":
        out = np.where(empty, v.mean(-2, keepdims=True), out)
    return out


def _bias(m: np.ndarray, how: str) -> np.ndarray:
    if m.dtype == bool:
        if how == "numbers":
            return m.astype(np.float64)
        return np.where(~m if how == "inverted" else m, 0.0, -np.inf)
    return np.where(m != 0, 0.0, -np.inf) if how == "nonzero" else m


def _scale_passed(c: Case) -> bool:
    return c.scale != OMIT and abs(c.effective_scale() - 1 / math.sqrt(c.D)) > 1e-12


CONVENTIONS = (
    Convention(
        "bottom_right_causal",
        "is_causal aligned bottom-right (query t sees keys 0..t + S - T, torch's "
        "causal_lower_right), where torch's is_causal aligns top-left",
        lambda c: c.causal and c.T != c.S,
        lambda c: {"causal": "bottom_right"},
    ),
    Convention(
        "causal_ignored",
        "is_causal ignored (no causal mask)",
        lambda c: c.causal,
        lambda c: {"causal": "ignored"},
    ),
    Convention(
        "gqa_tiled",
        "GQA heads tiled: query head h uses kv head h % Hk, where torch uses h // (H / Hk)",
        lambda c: c.gqa and c.hk > 1,
        lambda c: {"heads": "tile"},
    ),
    Convention(
        "masked_rows_mean_v",
        "fully masked rows give mean(V), uniform weights over every key (as a finite fill "
        "like -1e9 does), where torch gives zeros",
        lambda c: c.dead_rows,
        lambda c: {"dead": "mean"},
    ),
    Convention(
        "mask_inverted",
        "the bool mask inverted (True read as blocked)",
        lambda c: c.mask == "bool",
        lambda c: {"mask": "inverted"},
    ),
    Convention(
        "bool_mask_added",
        "the bool mask added to the scores as 0/1 instead of blocking",
        lambda c: c.mask == "bool",
        lambda c: {"mask": "numbers"},
    ),
    Convention(
        "float_mask_as_bool",
        "the float (additive) mask read as a bool mask (nonzero = may attend)",
        lambda c: c.mask == "float",
        lambda c: {"mask": "nonzero"},
    ),
    Convention(
        "no_scale",
        "scores not scaled (scale 1)",
        lambda c: c.effective_scale() != 1.0,
        lambda c: {"scale": 1.0},
    ),
    Convention(
        "scale_ignored",
        "the scale argument ignored (1/sqrt(D) used)",
        _scale_passed,
        lambda c: {"scale": 1 / math.sqrt(c.D)},
    ),
    Convention(
        "default_scale_1_over_d",
        "default scale 1/D instead of 1/sqrt(D)",
        lambda c: c.scale == OMIT and c.D != 1,
        lambda c: {"scale": 1 / c.D},
    ),
)


def _wider(c: Case) -> dict:
    left, right = c.window
    return {"window_size": (left + 1, right)}


def _slopes(inp: Inputs, sign: float) -> dict:
    return {"alibi_slopes": sign * inp.seen["alibi_slopes"]}


# the opt-in rows' conventions: (id, says, applies, the changed arguments of ref.variant_attention)
VARIANT_CONVENTIONS: tuple[tuple[str, str, Callable, Callable[[Inputs], dict]], ...] = (
    (
        "top_left_causal",
        "causal_alignment ignored: is_causal aligned top-left (query t sees keys 0..t)",
        lambda c: c.align == "bottom_right",
        lambda inp: {"causal_alignment": "top_left"},
    ),
    (
        "window_ignored",
        "window_size ignored",
        lambda c: c.window is not None,
        lambda inp: {"window_size": None},
    ),
    (
        "window_one_wider",
        "the window reaches one key further back (left + 1 keys)",
        lambda c: c.window is not None and c.window[0] >= 0,
        lambda inp: _wider(inp.case),
    ),
    (
        "softcap_ignored",
        "softcap ignored",
        lambda c: c.softcap is not None,
        lambda inp: {"softcap": None},
    ),
    (
        "softcap_before_scale",
        "the cap applied before scaling: cap * tanh(q k^T / cap) * scale",
        lambda c: c.softcap is not None,
        lambda inp: {"softcap": inp.case.softcap * inp.case.effective_scale()},
    ),
    (
        "alibi_ignored",
        "alibi_slopes ignored",
        lambda c: c.alibi,
        lambda inp: {"alibi_slopes": None},
    ),
    (
        "alibi_sign_flipped",
        "ALiBi added with the wrong sign (+slope * distance)",
        lambda c: c.alibi,
        lambda inp: _slopes(inp, -1.0),
    ),
    (
        "cache_seqlens_ignored",
        "cache_seqlens ignored: the whole cache attended, garbage included",
        lambda c: c.lengths == "cache",
        lambda inp: {"cache_seqlens": None, "causal_alignment": "bottom_right"},
    ),
    (
        "key_lengths_ignored",
        "key_lengths ignored",
        lambda c: c.lengths == "key",
        lambda inp: {"key_lengths": None},
    ),
    (
        "key_lengths_inclusive",
        "one key too many: keys 0..length (inclusive) attended",
        lambda c: c.lengths == "key",
        lambda inp: {"key_lengths": np.minimum(inp.seen["key_lengths"] + 1, inp.case.S)},
    ),
)
FLOAT32 = "float32_internals", "float32 internals: float64 inputs computed in float32"
DROPOUT = "dropout_active", "dropout active (or other randomness): two calls on the same inputs"


def _close(x: np.ndarray, want: np.ndarray, tol: float) -> bool:
    """NaN where ``want`` has NaN, the same infinities, and every other entry within ``tol``."""
    x = x.astype(np.float64)
    if x.shape != want.shape or (np.isnan(x) != np.isnan(want)).any():
        return False
    inf = np.isinf(x) | np.isinf(want)
    if (x[inf] != want[inf]).any():
        return False
    ok = ~(np.isnan(x) | inf)
    return bool(np.all(np.abs(x[ok] - want[ok]) <= tol))


def explain(fn, r: CaseResult, api: str, device: str) -> list[tuple[str, str]]:
    """(id, sentence) of each convention the failing case's output matches; [] when none does
    (or the target gave no output array to compare)."""
    got, c = r.got.get("out"), r.case
    if got is None or r.inp is None or got.shape != r.oracle["out"].shape:
        return []
    oracle = r.oracle["out"]
    tol = budget(oracle, r.naive.get("out"), c.dtype)  # the case's budget for its output
    found = []
    for cid, says, alt in _alternatives(r.inp):
        if _close(alt, oracle, tol):
            continue  # the same answer here: says nothing
        if _close(got, alt, tol):
            found.append((cid, says))
    if c.dtype == "float64" and _float32_like(r.inp, got, oracle):
        found.append(FLOAT32)
    if not c.repeat:
        gap = _gap(fn, r, got, api, device)
        if gap > tol:  # a last-bit wobble is not dropout: the deterministic row judges that
            found.append((DROPOUT[0], f"{DROPOUT[1]} differ by up to {gap:.3g}"))
    return found


def _gap(fn, r: CaseResult, got: np.ndarray, api: str, device: str) -> float:
    """How far a second call on the same inputs lands from the first (0: same, or no answer)."""
    again = call_again(fn, r.inp, api, device)
    if again is None or again.shape != got.shape:
        return 0.0
    with np.errstate(invalid="ignore"):
        d = np.abs(again.astype(np.float64) - got)
    return float(np.nanmax(d, initial=0.0))


def _alternatives(inp: Inputs):
    """(id, says, float64 answer) of each convention that applies to the case."""
    c = inp.case
    if c.variant:
        for cid, says, applies, change in VARIANT_CONVENTIONS:
            if applies(c):
                yield cid, says, variant_reference(inp, inp.seen, **change(inp))
        return
    for conv in CONVENTIONS:
        if conv.applies(c):
            yield conv.id, conv.says, attend(inp, **conv.options(c))


def _float32_like(inp: Inputs, got: np.ndarray, oracle: np.ndarray) -> bool:
    """``got`` passes the float32 rule (against a float32 composition's error) though it was
    asked for float64."""
    c, s = inp.case, inp.seen
    f32 = {n: a if a.dtype == bool else a.astype(np.float32) for n, a in s.items()}
    answer = ref.scaled_dot_product_attention(
        f32["q"],
        f32["k"],
        f32["v"],
        attn_mask=f32.get("mask"),
        is_causal=c.causal,
        scale=c.effective_scale(),
        enable_gqa=c.gqa,
    )
    return judge(got.astype(np.float32), oracle, answer, "float32").ok
