"""Every score kind against its formula written out in torch (float64), batched, with widths
that differ where the kind allows; and each input error naming its own argument (mutation
testing of ref/scores.py, README "Mutation testing": scaled_dot had no test at all)."""

import math

import numpy as np
import pytest
import torch

from attnlab.ref import score

B, S, D_Q, D_K, D_A = (2, 7), 5, 3, 4, 6  # two leading dims: the last axes are the widths


def _torch(kind: str, q, k, **p) -> np.ndarray:
    """The kind's formula per key, in torch: q (*B, d_q), k (*B, S, d_k) -> (*B, S)."""
    t = torch.from_numpy
    q, k, p = t(q), t(k), {n: t(x) for n, x in p.items()}
    if kind == "dot":
        return torch.einsum("...d,...sd->...s", q, k).numpy()
    if kind == "scaled_dot":
        return (torch.einsum("...d,...sd->...s", q, k) / math.sqrt(q.shape[-1])).numpy()
    if kind == "general":
        return torch.einsum("...d,de,...se->...s", q, p["W"], k).numpy()
    if kind == "additive":
        return (torch.tanh((q @ p["W_q"]).unsqueeze(-2) + k @ p["W_k"]) @ p["v"]).numpy()
    pairs = torch.cat([q.unsqueeze(-2).expand(*k.shape[:-1], q.shape[-1]), k], dim=-1)
    return (torch.tanh(pairs @ p["W"]) @ p["v"]).numpy()  # concat: [q; k] W per key


def _params(rng, kind: str) -> tuple[int, dict]:
    """The query width the kind takes here and its weights."""
    shapes = {
        "dot": (D_K, {}),
        "scaled_dot": (D_K, {}),
        "general": (D_Q, {"W": (D_Q, D_K)}),
        "additive": (D_Q, {"W_q": (D_Q, D_A), "W_k": (D_K, D_A), "v": (D_A,)}),
        "concat": (D_Q, {"W": (D_Q + D_K, D_A), "v": (D_A,)}),
    }[kind]
    return shapes[0], {n: rng.standard_normal(s) for n, s in shapes[1].items()}


@pytest.mark.parametrize("kind", ["dot", "scaled_dot", "general", "additive", "concat"])
def test_each_kind_is_its_formula(rng, kind):
    d_q, p = _params(rng, kind)
    q, k = rng.standard_normal((*B, d_q)), rng.standard_normal((*B, S, D_K))
    got = score(q, k, kind, **p)
    assert got.shape == (*B, S)
    np.testing.assert_allclose(got, _torch(kind, q, k, **p), rtol=1e-12, atol=1e-12)


def test_scaled_dot_is_dot_over_the_root_of_the_width_in_its_dtype(rng):
    q, k = rng.standard_normal(16).astype(np.float32), rng.standard_normal((5, 16))
    k = k.astype(np.float32)
    scaled = score(q, k, "scaled_dot")
    assert scaled.dtype == np.float32
    np.testing.assert_allclose(scaled, score(q, k, "dot") / 4, rtol=1e-6)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda q, k: score(q[..., :3], k, "scaled_dot"), ValueError,
         r"scaled_dot score needs equal widths: query \(2, 7, 3\), keys \(2, 7, 5, 4\)"),
        (lambda q, k: score(q, k, "dot", W=np.eye(4)), TypeError,
         r"dot score takes parameters none, got \['W'\]"),
        (lambda q, k: score(q, k, "general"), TypeError,
         r"general score takes parameters \['W'\], got none"),
        (lambda q, k: score(q.astype(int), k, "dot"), TypeError,
         r"^query must be a floating-point array"),
        (lambda q, k: score(q, k.astype(int), "dot"), TypeError,
         r"^keys must be a floating-point array"),
        (lambda q, k: score(q, k, "general", W=np.eye(4, dtype=int)), TypeError,
         r"^W must be a floating-point array"),
        (lambda q, k: score(q.astype(np.float32), k, "dot"), TypeError,
         r"inputs must share one dtype, got query: float32, keys: float64"),
        (lambda q, k: score(q, k, "general", W=np.eye(4, dtype=np.float32)), TypeError,
         r"got query: float64, keys: float64, W: float32"),
        (lambda q, k: score(q[0, 0, 0], k, "dot"), ValueError,
         r"query must be \(\.\.\., d_q\) and keys \(\.\.\., S, d_k\); got \(\), \(2, 7, 5, 4\)"),
        (lambda q, k: score(q, k[0, 0, 0], "dot"), ValueError,
         r"query must be \(\.\.\., d_q\) and keys \(\.\.\., S, d_k\); got \(2, 7, 4\), \(4,\)"),
        (lambda q, k: score(q, k, "additive", W_q=np.ones((4, 6)), W_k=np.ones((4, 6)),
                            v=np.ones((6, 1))), ValueError,
         r"additive score: v must be a vector \(d_a,\), got shape \(6, 1\)"),
        (lambda q, k: score(q, k, "concat", W=np.ones((8, 6)), v=np.ones((1, 6))), ValueError,
         r"concat score: v must be a vector \(d_a,\), got shape \(1, 6\)"),
        (lambda q, k: score(q, k, "additive", W_q=np.ones((4, 6)), W_k=np.ones((4, 5)),
                            v=np.ones(6)), ValueError,
         r"additive score: W_k must have shape \(4, 6\) .* got \(4, 5\)"),
        (lambda q, k: score(q, k, "concat", W=np.ones((7, 6)), v=np.ones(6)), ValueError,
         r"concat score: W must have shape \(8, 6\) for query \(2, 7, 4\) .* got \(7, 6\)"),
    ],
)  # fmt: skip
def test_each_input_error_names_its_own_argument(rng, call, error, message):
    q, k = rng.standard_normal((*B, D_K)), rng.standard_normal((*B, S, D_K))
    with pytest.raises(error, match=message):
        call(q, k)
