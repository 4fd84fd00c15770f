"""The cases behind ``attnlab check``: every reference function against PyTorch, on random inputs.

Each ``Case`` builds float64 inputs, runs attnlab on them and runs an independent torch oracle
(``attnlab.oracles``).
In float64 the two must agree to 1e-10; in float32 attnlab's error against the float64 oracle
may be at most twice that of the same torch oracle run in float32 (``attnlab.parity``).
The test suite runs these same cases, so the command and the tests can never drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from . import oracles, ref
from .nn import functional as AF
from .parity import Parity, compare, to_numpy
from .tables import text_table

Arrays = dict[str, np.ndarray]
_TORCH_DTYPES = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32}


@dataclass(frozen=True)
class Case:
    function: str
    name: str
    make: Callable[[np.random.Generator], Arrays]  # float64 (and bool) inputs
    ours: Callable[..., object]  # attnlab on NumPy inputs -> array or tuple of arrays
    oracle: Callable[..., object]  # torch on tensor inputs -> tensor or tuple of tensors


@dataclass(frozen=True)
class Row:
    function: str
    case: str
    dtype: str
    parity: Parity


def _as_tuple(x: object) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def run_case(case: Case, dtype: type = np.float64, seed: int = 0) -> Row:
    """Run one case in ``dtype`` and compare with the float64 oracle (and float32 torch)."""
    inputs = case.make(np.random.default_rng(seed))
    cast = {n: a.astype(dtype) if a.dtype.kind == "f" else a for n, a in inputs.items()}

    def tensors(tdtype: torch.dtype) -> dict[str, torch.Tensor]:
        return {
            n: torch.from_numpy(a).to(tdtype) if a.dtype.kind == "f" else torch.from_numpy(a)
            for n, a in cast.items()
        }

    answers = _as_tuple(case.ours(**cast))
    with torch.no_grad():
        expected = _as_tuple(case.oracle(**tensors(torch.float64)))
        naives = (
            _as_tuple(case.oracle(**tensors(_TORCH_DTYPES[np.dtype(dtype)])))
            if dtype != np.float64
            else (None,) * len(expected)
        )
    if len(answers) != len(expected):
        return Row(
            case.function,
            case.name,
            np.dtype(dtype).name,
            Parity(False, math.inf, 0.0, f"{len(answers)} results, expected {len(expected)}"),
        )
    results = [compare(a, o, n) for a, o, n in zip(answers, expected, naives, strict=True)]
    worst = max(results, key=lambda p: (not p.ok, p.max_abs_err))
    return Row(case.function, case.name, np.dtype(dtype).name, worst)


# ---- the cases -------------------------------------------------------------------------------


def _qkv(B=2, H=3, T=5, S=7, E=8, Ev=6, Hk=None):
    Hk = H if Hk is None else Hk

    def make(rng: np.random.Generator) -> Arrays:
        return {
            "q": rng.standard_normal((B, H, T, E)),
            "k": rng.standard_normal((B, Hk, S, E)),
            "v": rng.standard_normal((B, Hk, S, Ev)),
        }

    return make


def _with(make, **extra: Callable[[np.random.Generator], np.ndarray]):
    def both(rng: np.random.Generator) -> Arrays:
        d = make(rng)
        d.update({n: f(rng) for n, f in extra.items()})
        return d

    return both


def _mask_with_dead_row(rng: np.random.Generator) -> np.ndarray:
    m = rng.random((2, 1, 5, 7)) < 0.6
    m[:, :, 2] = False  # query 2 may attend to nothing: zeros, not NaN
    return m


def _mha_inputs(T: int, S: int, d_model: int = 12) -> Callable[[np.random.Generator], Arrays]:
    def make(rng: np.random.Generator) -> Arrays:
        lengths = np.array([S, max(S - 3, 1)])
        return {
            "query": rng.standard_normal((2, T, d_model)),
            "key": rng.standard_normal((2, S, d_model)),
            "value": rng.standard_normal((2, S, d_model)),
            **{
                f"W_{n}": rng.standard_normal((d_model, d_model)) / math.sqrt(d_model)
                for n in "qkvo"
            },
            **{f"b_{n}": rng.standard_normal(d_model) * 0.1 for n in "qkvo"},
            "mask": ref.padding_mask(lengths, S)[:, None],  # (B, 1, 1, S)
        }

    return make


def _mha_oracle(query, key, value, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, mask, causal=False):
    return oracles.torch_mha(
        query,
        key,
        value,
        W_q,
        W_k,
        W_v,
        W_o,
        3,
        (b_q, b_k, b_v, b_o),
        key_padding=mask[:, 0, 0],
        causal=causal,
    )


def _ours_mha(query, key, value, W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o, mask, causal=False):
    return ref.multi_head_attention(
        query,
        key,
        value,
        W_q,
        W_k,
        W_v,
        W_o,
        3,
        b_q,
        b_k,
        b_v,
        b_o,
        attn_mask=mask,
        is_causal=causal,
    )


def _rotary_inputs(offset: int):
    def make(rng: np.random.Generator) -> Arrays:
        return {"x": rng.standard_normal((2, 3, 9, 8)), "positions": np.arange(offset, offset + 9)}

    return make


def _score_inputs(d_q=6, d_k=6, d_a=5):
    def make(rng: np.random.Generator) -> Arrays:
        return {
            "q": rng.standard_normal((3, d_q)),
            "k": rng.standard_normal((3, 7, d_k)),
            "W": rng.standard_normal((d_q, d_k)),
            "W_q": rng.standard_normal((d_q, d_a)),
            "W_k": rng.standard_normal((d_k, d_a)),
            "Wc": rng.standard_normal((d_q + d_k, d_a)),
            "v": rng.standard_normal(d_a),
        }

    return make


def _ours_scores(kind):
    params = {
        "dot": (),
        "scaled_dot": (),
        "general": ("W",),
        "additive": ("W_q", "W_k", "v"),
        "concat": ("W", "v"),
    }[kind]

    def ours(q, k, W, W_q, W_k, Wc, v):
        given = {"W": Wc if kind == "concat" else W, "W_q": W_q, "W_k": W_k, "v": v}
        return ref.score(q, k, kind, **{p: given[p] for p in params})

    return ours


def _big_row(rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal((4, 9)) * 3
    x[0] *= 400  # scores in the thousands: exp would overflow without the max subtraction
    x[1] = -np.inf  # a row with nowhere to go
    return x


def _nn_weights(q, k, v, mask):
    t = [torch.from_numpy(a) for a in (q, k, v, mask)]
    return AF.scaled_dot_product_attention(
        *t[:3], attn_mask=t[3], is_causal=True, return_weights=True
    )[0]


def _ours_tiled_backward(q, k, v, g):
    out, lse = ref.tiled_attention(q, k, v, is_causal=True, block_size=16, return_lse=True)
    return ref.tiled_attention_backward(q, k, v, out, lse, g, is_causal=True, block_size=16)


CASES: list[Case] = [
    Case(
        "softmax",
        "scores x3, one row x1200, one row all -inf",
        lambda r: {"x": _big_row(r)},
        ref.softmax,
        oracles.torch_safe_softmax,
    ),
    Case(
        "causal_mean",
        "(2, 6, 4)",
        lambda r: {"x": r.standard_normal((2, 6, 4))},
        ref.causal_mean,
        oracles.torch_causal_mean,
    ),
    Case(
        "scaled_dot_product_attention",
        "B2 H3 T5 S7 E8 Ev6",
        _qkv(),
        ref.scaled_dot_product_attention,
        oracles.torch_sdpa,
    ),
    Case(
        "scaled_dot_product_attention",
        "bool mask, one fully masked row",
        _with(_qkv(), attn_mask=_mask_with_dead_row),
        ref.scaled_dot_product_attention,
        oracles.torch_sdpa,
    ),
    Case(
        "scaled_dot_product_attention",
        "float mask",
        _with(_qkv(), attn_mask=lambda r: r.standard_normal((5, 7))),
        ref.scaled_dot_product_attention,
        oracles.torch_sdpa,
    ),
    Case(
        "scaled_dot_product_attention",
        "causal, T=7 > S=4",
        _qkv(T=7, S=4),
        lambda q, k, v: ref.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    ),
    Case(
        "scaled_dot_product_attention",
        "GQA 6 query / 2 kv heads, scale 0.3",
        _qkv(H=6, Hk=2),
        lambda q, k, v: ref.scaled_dot_product_attention(q, k, v, scale=0.3, enable_gqa=True),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3, enable_gqa=True),
    ),
    Case(
        "tiled_attention",
        "causal T=37 S=53, block 16 (does not divide)",
        _qkv(T=37, S=53),
        lambda q, k, v: ref.tiled_attention(q, k, v, is_causal=True, block_size=16),
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    ),
    Case(
        "tiled_attention",
        "bool mask with a dead row, GQA 6/2 heads",
        _with(_qkv(H=6, Hk=2), attn_mask=_mask_with_dead_row),
        lambda q, k, v, attn_mask: ref.tiled_attention(
            q, k, v, attn_mask=attn_mask, enable_gqa=True, block_size=4
        ),
        lambda q, k, v, attn_mask: F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, enable_gqa=True
        ),
    ),
    Case(
        "tiled_attention_backward",
        "dq, dk, dv vs autograd, causal T=40",
        _with(_qkv(T=40, S=40), g=lambda r: r.standard_normal((2, 3, 40, 6))),
        _ours_tiled_backward,
        oracles.torch_sdpa_grads,
    ),
    Case(
        "self_attention",
        "X (5, 16) -> d_k 8, causal",
        lambda r: {
            "X": r.standard_normal((5, 16)),
            **{f"W_{n}": r.standard_normal((16, 8)) / 4 for n in "qkv"},
        },
        lambda X, W_q, W_k, W_v: ref.self_attention(X, W_q, W_k, W_v, causal=True)[0],
        lambda X, W_q, W_k, W_v: F.scaled_dot_product_attention(
            X @ W_q, X @ W_k, X @ W_v, is_causal=True
        ),
    ),
    Case(
        "multi_head_attention",
        "cross T5 S8, key padding",
        _mha_inputs(5, 8),
        _ours_mha,
        _mha_oracle,
    ),
    Case(
        "multi_head_attention",
        "self T6, causal + padding",
        _mha_inputs(6, 6),
        lambda **a: _ours_mha(**a, causal=True),
        lambda **a: _mha_oracle(**a, causal=True),
    ),
    *[
        Case("score", kind, _score_inputs(), _ours_scores(kind), oracles.torch_score(kind))
        for kind in ref.SCORES
    ],
    Case(
        "sinusoidal_positional_encoding",
        "T 50, d 16 (and d 7)",
        lambda r: {"like": np.zeros(1)},
        lambda like: (
            ref.sinusoidal_positional_encoding(50, 16, dtype=like.dtype),
            ref.sinusoidal_positional_encoding(50, 7, dtype=like.dtype),
        ),
        lambda like: (
            oracles.torch_sinusoidal(50, 16, 1e4, like.dtype),
            oracles.torch_sinusoidal(50, 7, 1e4, like.dtype),
        ),
    ),
    *[
        Case(
            "rotary_embedding",
            f"(2, 3, 9, 8), positions {offset}..{offset + 8}",
            _rotary_inputs(offset),
            ref.rotary_embedding,
            oracles.torch_rotary,
        )
        for offset in (0, 1000)
    ],
    Case(
        "nn.functional.scaled_dot_product_attention",
        "weights path, mask + causal",
        _with(_qkv(), mask=_mask_with_dead_row),
        _nn_weights,
        lambda q, k, v, mask: F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask & torch.ones(5, 7, dtype=torch.bool).tril()
        ),
    ),
]


def run_all(seed: int = 0, dtypes: tuple[type, ...] = (np.float64, np.float32)) -> list[Row]:
    return [run_case(c, d, seed) for c in CASES for d in dtypes]


def format_table(rows: list[Row], width: int | None = None) -> str:
    """One line per case and dtype under a heading per function; with ``width``, the case
    names wrap so that the table fits that many terminal columns."""
    head = ("case", "dtype", "max |diff|", "tolerance", "ok")
    body: list[tuple[str, ...] | str] = []
    for i, r in enumerate(rows):
        if i == 0 or r.function != rows[i - 1].function:
            body.append(r.function)
        body.append(
            (
                r.case,
                r.dtype,
                f"{r.parity.max_abs_err:.2e}",
                f"{r.parity.tolerance:.1e}",
                "ok" if r.parity.ok else "FAIL",
            )
        )
    return text_table(head, body, indent="  ", width=width, wrap=0)


def to_json(rows: list[Row]) -> list[dict]:
    return [
        {
            "function": r.function,
            "case": r.case,
            "dtype": r.dtype,
            "ok": r.parity.ok,
            "max_abs_err": r.parity.max_abs_err,
            "tolerance": r.parity.tolerance,
            "message": r.parity.message,
        }
        for r in rows
    ]


__all__ = ["CASES", "Case", "Row", "format_table", "run_all", "run_case", "to_json", "to_numpy"]
