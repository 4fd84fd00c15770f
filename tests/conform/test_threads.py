"""The kit's fast path keeps its answers: cases on one torch thread, the twice-called case on the
caller's threads, the caller's setting restored; gradients through ``sum(out * grad_out)`` equal
those of ``out.backward(grad_out)`` bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attnlab.conform import check_attention
from attnlab.conform.reference import backward


def test_cases_run_on_one_thread_the_repeated_case_on_the_callers(monkeypatch):
    seen = []

    def sdpa(q, k, v, **kw):
        seen.append((q.shape[-2], torch.get_num_threads()))
        return F.scaled_dot_product_attention(q, k, v, **kw)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        report = check_attention(sdpa, features=["basic", "deterministic"])
        assert torch.get_num_threads() == 2  # the caller's setting is back
    finally:
        torch.set_num_threads(before)
    assert report.passed
    # basic: T 4 and 5 on one thread; deterministic (T 16, called twice) on the caller's two
    assert seen == [(4, 1), (5, 1), (16, 2), (16, 2)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_backward_through_the_sum_gives_torchs_gradients_exactly(dtype):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 8, generator=gen).to(dtype) for _ in range(3))
    g = torch.randn(2, 3, 5, 8, generator=gen).to(dtype) * 1e3  # large: a product may round
    mask = torch.rand(2, 3, 5, 5, generator=gen) < 0.7
    grads = []
    for how in ("torch", "ours"):
        leaves = [x.clone().requires_grad_() for x in (q, k, v)]
        out = F.scaled_dot_product_attention(*leaves, attn_mask=mask)
        out.backward(g) if how == "torch" else backward(out, g)
        grads.append([x.grad.float().numpy() for x in leaves])
    for a, b in zip(*grads, strict=True):
        np.testing.assert_array_equal(a, b)
