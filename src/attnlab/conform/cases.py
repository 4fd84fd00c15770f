"""The features of the conformance kit and the cases that probe each one.

A ``Case`` is one call of the function under test, described by its shapes, mask, dtype and
arguments; ``FEATURES`` maps each feature id (a row of the report) to its cases, smallest first,
so the first failing case is the smallest one. Every case passes ``scale`` explicitly
(``1/sqrt(D)``) except in ``default_scale``, and every case runs in float32 except the dtype
features: a wrong default scale or a float16 bug then shows up on its own row only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

STANDARD = "standard"  # scale: pass 1/sqrt(D) explicitly
OMIT = "omit"  # scale: do not pass it (the function's default must be 1/sqrt(D))


@dataclass(frozen=True)
class Case:
    """One call: q ``(B, H, T, D)``, k ``(kv_batch, Hk, S, D)``, v ``(kv_batch, Hk, S, Dv)``."""

    B: int = 1
    H: int = 2
    T: int = 4
    S: int = 4
    D: int = 8
    Dv: int | None = None  # None: Dv = D
    Hk: int | None = None  # None: Hk = H (enable_gqa passes when they differ)
    kv_batch: int | None = None  # None: the same batch as q; 1 broadcasts
    dtype: str = "float32"
    mask: str | None = None  # None, "bool" (True = may attend) or "float" (added to scores)
    mask_shape: tuple[str, ...] = ("B", "H", "T", "S")  # symbolic, "1" broadcasts
    dead_rows: bool = False  # some query rows may attend to nothing: zeros expected
    mask_fill: str = "-inf"  # float mask's blocked entries: -inf, or "min" (the dtype's finfo.min)
    causal: bool = False
    scale: float | str = STANDARD
    layout: str = "contiguous"  # or "strided": q, k, v are transposed / sliced views
    qk_std: float = 1.0  # standard deviation of q and k entries (large_scores: 100)
    negative_rows: bool = False  # k >= 0 and even rows of q <= 0: every score of those rows < 0
    v_mean: float = 0.0  # mean of v entries (the low-precision cases: 1.0)
    grads: bool = False  # also compare dq, dk, dv
    repeat: bool = False  # call twice on the same inputs: outputs must match bit for bit
    # the opt-in rows (``ref.variant_attention``): each passes one keyword torch's SDPA lacks
    align: str = "top_left"  # "bottom_right": causal_alignment="bottom_right" (with is_causal)
    window: tuple[int, int] | None = None  # window_size=(left, right), bottom-right aligned
    softcap: float | None = None  # softcap=cap: scores -> cap * tanh(scores / cap)
    alibi: bool = False  # alibi_slopes=(H,) float32, ref.alibi_slopes(H)
    lengths: str | None = None  # "key": key_lengths=(B,) ints; "cache": cache_seqlens=(B,) ints

    @property
    def variant(self) -> bool:
        """An opt-in case: judged against ``ref.variant_attention``."""
        return (
            self.align != "top_left"
            or self.window is not None
            or self.softcap is not None
            or self.alibi
            or self.lengths is not None
        )

    @property
    def dv(self) -> int:
        return self.D if self.Dv is None else self.Dv

    @property
    def hk(self) -> int:
        return self.H if self.Hk is None else self.Hk

    @property
    def gqa(self) -> bool:
        return self.hk != self.H

    def scale_value(self) -> float | None:
        """The scale passed to the function (None: not passed, the default applies)."""
        if self.scale == OMIT:
            return None
        return 1.0 / math.sqrt(self.D) if self.scale == STANDARD else float(self.scale)

    def effective_scale(self) -> float:
        s = self.scale_value()
        return 1.0 / math.sqrt(self.D) if s is None else s

    def shapes(self) -> dict[str, tuple[int, ...]]:
        kb = self.B if self.kv_batch is None else self.kv_batch
        dims = {"B": self.B, "H": self.H, "T": self.T, "S": self.S, "1": 1}
        out = {
            "q": (self.B, self.H, self.T, self.D),
            "k": (kb, self.hk, self.S, self.D),
            "v": (kb, self.hk, self.S, self.dv),
        }
        if self.mask:
            out["mask"] = tuple(dims[d] for d in self.mask_shape)
        return out

    def describe(self) -> str:
        """One line: shapes, mask, dtype and arguments, e.g. for the smallest failing case."""
        sh = self.shapes()
        parts = [f"q {sh['q']}, k {sh['k']}, v {sh['v']}", self.dtype]
        if self.mask:
            dead = ", some rows fully masked" if self.dead_rows else ""
            fill = ", blocked entries finfo.min" if self.mask_fill == "min" else ""
            parts.append(f"{self.mask} mask {sh['mask']}{fill}{dead}")
        if self.causal:
            parts.append("is_causal=True")
        s = self.scale_value()
        parts.append("scale not passed" if s is None else f"scale={s:.4g}")
        if self.gqa:
            parts.append("enable_gqa=True")
        if self.layout != "contiguous":
            parts.append("non-contiguous q, k, v")
        if self.qk_std != 1.0:
            parts.append(f"q, k entries ~ N(0, {self.qk_std:g}^2)")
        if self.negative_rows:
            parts.append("every score of the even rows negative")
        if self.v_mean:
            parts.append(f"v entries ~ N({self.v_mean:g}, 1)")
        if self.grads:
            parts.append("with gradients")
        if self.repeat:
            parts.append("called twice")
        return ", ".join(parts + self._variant_parts())

    def _variant_parts(self) -> list[str]:
        parts = []
        if self.align != "top_left":
            parts.append(f"causal_alignment={self.align!r}")
        if self.window is not None:
            parts.append(f"window_size={self.window}")
        if self.softcap is not None:
            parts.append(f"softcap={self.softcap:g}")
        if self.alibi:
            parts.append("alibi_slopes (H,)")
        if self.lengths == "key":
            parts.append("key_lengths (B,)")
        if self.lengths == "cache":
            parts.append("cache_seqlens (B,), keys past them garbage")
        return parts


@dataclass(frozen=True)
class Feature:
    id: str
    title: str
    cases: tuple[Case, ...]
    apis: tuple[str, ...] = ("torch", "numpy")  # where the feature applies
    opt_in: str | None = None  # the keyword a target declares (names in its signature) to run it


_c = Case  # short, for the table below

_LOW = dict(B=1, H=2, T=16, S=1024, D=64, v_mean=1.0)  # long rows: float16 accumulation shows


def _dtype_cases(dtype: str, fill: str, **size) -> tuple[Case, ...]:
    """A dtype row: no mask, a bool mask, and a float mask (blocked entries ``fill``)."""
    return (
        _c(dtype=dtype, **size),
        _c(dtype=dtype, mask="bool", **size),
        _c(dtype=dtype, mask="float", mask_fill=fill, **size),
    )


def _low(dtype: str) -> tuple[Case, ...]:
    """float16 / bfloat16: a bool and a float mask over 256 keys (blocked entries the dtype's
    finfo.min: -1e9 overflows half precision, this is the fill real code uses), then 1024 keys
    unmasked (long rows: float16 running sums show)."""
    masked = _dtype_cases(dtype, "min", **{**_LOW, "S": 256})[1:]
    return (*masked, _c(dtype=dtype, **_LOW))


_GRADS = (  # gradients in every configuration the forward rows try
    _c(T=4, S=6, grads=True),
    _c(B=2, T=5, S=5, causal=True, grads=True),
    _c(T=3, S=5, causal=True, grads=True),
    _c(B=2, H=3, T=5, S=7, mask="bool", grads=True),
    _c(T=5, S=6, mask="float", dead_rows=True, grads=True),
    _c(H=4, Hk=2, T=3, S=5, grads=True),
    _c(dtype="float16", T=16, S=64, D=32, v_mean=1.0, mask="bool", grads=True),
    _c(dtype="bfloat16", T=16, S=64, D=32, v_mean=1.0, causal=True, grads=True),
)

FEATURES: dict[str, Feature] = {
    f.id: f
    for f in (
        Feature("basic", "self-attention, no mask", (_c(H=1), _c(B=2, H=3, T=5, S=5, D=16))),
        Feature("cross_length", "T != S", (_c(T=3, S=6), _c(B=2, T=7, S=2))),
        Feature("value_dim", "Dv != D", (_c(D=8, Dv=3), _c(B=2, T=5, S=6, D=4, Dv=16))),
        Feature(
            "default_scale",
            "scale not passed: 1/sqrt(D)",
            (_c(D=16, scale=OMIT), _c(T=5, S=3, D=5, scale=OMIT)),
        ),
        Feature("scale", "an explicit scale", (_c(scale=0.3), _c(T=5, S=6, D=4, scale=2.0))),
        Feature(
            "bool_mask",
            "bool mask, True = may attend",
            (_c(S=5, mask="bool"), _c(B=2, H=3, T=5, S=7, mask="bool")),
        ),
        Feature(
            "float_mask",
            "float mask added to the scores (with some -inf)",
            (_c(S=5, mask="float"), _c(B=2, H=3, T=5, S=7, mask="float")),
        ),
        Feature(
            "mask_broadcast",
            "float masks (T, S), (B, 1, T, S), (1, H, T, S), (B, 1, 1, S)",
            tuple(
                _c(B=2, H=3, T=4, S=5, mask="float", mask_shape=shape)
                for shape in (
                    ("T", "S"),
                    ("B", "1", "T", "S"),
                    ("1", "H", "T", "S"),
                    ("B", "1", "1", "S"),
                )
            ),
        ),
        Feature(
            "causal", "is_causal, T == S", (_c(causal=True), _c(B=2, H=3, T=7, S=7, causal=True))
        ),
        Feature(
            "causal_cross_length",
            "is_causal, T != S: top-left aligned like torch",
            (_c(T=3, S=5, causal=True), _c(T=5, S=3, causal=True)),
        ),
        Feature(
            "fully_masked_rows",
            "rows that may attend to nothing give zeros, never NaN",
            (_c(S=5, mask="bool", dead_rows=True), _c(B=2, T=5, S=6, mask="float", dead_rows=True)),
        ),
        Feature(
            "gqa",
            "enable_gqa: KV heads dividing the query heads",
            (_c(H=4, Hk=1, T=3, S=5), _c(H=4, Hk=2, T=3, S=5), _c(H=6, Hk=3, T=3, S=5)),
        ),
        Feature(
            "single_query",
            "T = 1 over a cache of keys, alone, with is_causal, a bool or a float mask",
            (
                _c(T=1, S=7),
                _c(B=2, H=3, T=1, S=33, D=16),
                _c(T=1, S=7, causal=True),
                _c(T=1, S=6, mask="bool"),
                _c(B=2, T=1, S=6, mask="float"),
            ),
        ),
        Feature(
            "awkward_sizes",
            "lengths and widths that are not tile multiples (T 113, S 203, D 40)",
            (_c(H=1, T=113, S=203, D=40), _c(H=1, T=97, S=97, D=40, causal=True)),
        ),
        Feature(
            "large_scores",
            "scores of magnitude ~1e4 in float32 (softmax needs the max shift)",
            (
                _c(D=16, qk_std=100.0),
                _c(B=2, T=6, S=9, D=16, qk_std=100.0),
                _c(T=4, S=6, D=16, qk_std=100.0, negative_rows=True),
            ),
        ),
        Feature(
            "float64",
            "float64: within 1e-10 of the reference; no mask, bool, float",
            _dtype_cases("float64", "-inf", T=16, S=16, D=16),
        ),
        Feature(
            "float32",
            "float32, 256 keys; no mask, bool, float",
            _dtype_cases("float32", "-inf", T=16, S=256, D=64, v_mean=1.0),
        ),
        Feature("float16", "float16: bool, float mask (finfo.min); 1024 keys", _low("float16")),
        Feature(
            "bfloat16",
            "bfloat16: bool, float mask (finfo.min); 1024 keys",
            _low("bfloat16"),
            apis=("torch",),
        ),
        Feature(
            "non_contiguous",
            "q, k, v as transposed and sliced views",
            (_c(B=2, H=3, T=5, S=6, layout="strided"),),
        ),
        Feature(
            "batch_broadcast",
            "k, v with batch 1 shared by every batch of q",
            (_c(B=3, kv_batch=1, T=4, S=5),),
        ),
        Feature(
            "gradients",
            "dq, dk, dv: masks, causal, fully masked rows, GQA, float16, bfloat16",
            _GRADS,
            apis=("torch",),
        ),
        Feature(
            "deterministic",
            "same inputs, same output, inputs left unchanged",
            (_c(B=2, T=16, S=16, D=16, repeat=True),),
        ),
    )
}

OPT_IN: dict[str, Feature] = {
    f.id: f
    for f in (
        Feature(
            "bottom_right_causal",
            "causal_alignment='bottom_right': torch's causal_lower_right, T != S",
            (
                _c(T=3, S=5, causal=True, align="bottom_right"),
                _c(B=2, T=5, S=3, causal=True, align="bottom_right"),
                _c(T=1, S=6, causal=True, align="bottom_right"),
            ),
            opt_in="causal_alignment",
        ),
        Feature(
            "sliding_window",
            "window_size=(left, right), bottom-right aligned; -1 = unbounded",
            (
                _c(T=6, S=6, window=(2, 0)),
                _c(T=4, S=9, window=(3, 1)),
                _c(B=2, T=7, S=5, window=(-1, 1)),
            ),
            opt_in="window_size",
        ),
        Feature(
            "softcap",
            "softcap=cap: scores -> cap * tanh(scores / cap), after scaling",
            (_c(D=16, qk_std=3.0, softcap=5.0), _c(T=5, S=7, qk_std=3.0, causal=True, softcap=2.0)),
            opt_in="softcap",
        ),
        Feature(
            "alibi",
            "alibi_slopes (H,): -slope * |key - query position|, bottom-right aligned",
            (_c(H=4, T=6, S=6, alibi=True), _c(H=6, T=3, S=8, alibi=True, mask="bool")),
            opt_in="alibi_slopes",
        ),
        Feature(
            "kv_cache",
            "cache_seqlens (B,): decode T queries at the end of each cache; the rest is garbage",
            (
                _c(B=2, T=1, S=9, causal=True, lengths="cache"),
                _c(B=3, T=3, S=12, causal=True, lengths="cache"),
                _c(B=2, H=4, Hk=2, T=2, S=10, causal=True, lengths="cache"),
            ),
            opt_in="cache_seqlens",
        ),
        Feature(
            "key_lengths",
            "key_lengths (B,): keys past each batch's length are padding (0: zeros)",
            (_c(B=3, T=4, S=6, lengths="key"), _c(B=2, T=5, S=7, causal=True, lengths="key")),
            opt_in="key_lengths",
        ),
    )
}
FEATURE_IDS: tuple[str, ...] = tuple(FEATURES)  # the default rows
OPT_IN_IDS: tuple[str, ...] = tuple(OPT_IN)
FEATURES.update(OPT_IN)  # every row, the opt-in ones last
