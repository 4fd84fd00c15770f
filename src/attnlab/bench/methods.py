"""The attention implementations ``attnlab bench`` can time, chosen by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    name: str
    description: str
    prepare: Callable[..., Callable[[], object]]  # (T, H, D, dtype, causal, rng) -> run()
    score_copies: float  # T x S tables held at once (0 = none): for the "fits in memory" check
    flops_factor: float = 1.0  # work relative to the forward pass


def _inputs(T, H, D, dtype, rng):
    return [rng.standard_normal((1, H, T, D)).astype(dtype) for _ in range(3)]


def _naive(T, H, D, dtype, causal, rng):
    from ..ref import scaled_dot_product_attention

    q, k, v = _inputs(T, H, D, dtype, rng)
    return lambda: scaled_dot_product_attention(q, k, v, is_causal=causal)


def _tiled(T, H, D, dtype, causal, rng):
    from ..ref import tiled_attention

    q, k, v = _inputs(T, H, D, dtype, rng)
    return lambda: tiled_attention(q, k, v, is_causal=causal)


def _tiled_backward(T, H, D, dtype, causal, rng):
    from ..ref import tiled_attention, tiled_attention_backward

    q, k, v = _inputs(T, H, D, dtype, rng)
    out, lse = tiled_attention(q, k, v, is_causal=causal, return_lse=True)
    g = rng.standard_normal(out.shape).astype(dtype)
    return lambda: tiled_attention_backward(q, k, v, out, lse, g, is_causal=causal)


def _torch(T, H, D, dtype, causal, rng):
    import torch
    import torch.nn.functional as F

    q, k, v = (torch.from_numpy(a) for a in _inputs(T, H, D, dtype, rng))

    def run():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return run


def _torch_backward(T, H, D, dtype, causal, rng):
    import torch
    import torch.nn.functional as F

    q, k, v = (torch.from_numpy(a).requires_grad_() for a in _inputs(T, H, D, dtype, rng))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    g = torch.randn_like(out)

    def run():
        for t in (q, k, v):
            t.grad = None
        out.backward(g, retain_graph=True)

    return run


METHODS: dict[str, Method] = {
    m.name: m
    for m in [
        Method(
            "naive",
            "attnlab.ref.scaled_dot_product_attention (NumPy, full T x S table)",
            _naive,
            3,
        ),
        Method(
            "tiled",
            "attnlab.ref.tiled_attention (NumPy, online softmax, no table)",
            _tiled,
            0,
        ),
        Method("torch", "torch.nn.functional.scaled_dot_product_attention", _torch, 0),
        Method(
            "tiled-bwd",
            "attnlab.ref.tiled_attention_backward (recomputation)",
            _tiled_backward,
            0,
            2.5,
        ),
        Method(
            "torch-bwd",
            "autograd backward of torch's scaled_dot_product_attention",
            _torch_backward,
            0,
            2.5,
        ),
    ]
}
