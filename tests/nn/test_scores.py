"""The score modules (attnlab.nn.scores) against the NumPy reference (attnlab.ref.score), in
float64, with the module's own weights handed to the reference (``nn.Linear``'s weight is the
reference's ``W`` transposed)."""

import numpy as np
import pytest
import torch

from attnlab import ref
from attnlab.nn import SCORES, make_score

D_Q, D_K, HIDDEN = 5, 6, 7


def _reference_params(kind: str, m: torch.nn.Module) -> dict[str, np.ndarray]:
    t = {name: p.detach().numpy().T for name, p in m.named_parameters()}  # (in, out)
    if kind == "additive":
        return {"W_q": t["W_q.weight"], "W_k": t["W_k.weight"], "v": t["v.weight"][:, 0]}
    if kind == "concat":
        return {"W": t["W.weight"], "v": t["v.weight"][:, 0]}
    return {"W": t["W.weight"]} if kind == "general" else {}


@pytest.mark.parametrize("kind", sorted(SCORES))
def test_each_score_module_equals_the_reference_with_its_weights(kind):
    torch.manual_seed(0)
    d_k = D_Q if kind in ("dot", "scaled_dot") else D_K
    m = make_score(kind, D_Q, d_k, HIDDEN).double()
    q, k = torch.randn(2, 3, D_Q, dtype=torch.float64), torch.randn(2, 4, d_k, dtype=torch.float64)
    got = m(q, k)  # (B, T, S)
    assert got.shape == (2, 3, 4)
    params = _reference_params(kind, m)
    want = ref.score(q.numpy(), k.numpy()[:, None], kind, **params)  # (B, T, S)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["additive", "concat"])
def test_hidden_width_is_the_one_asked_for_or_the_keys_width_and_nothing_else_is_learned(kind):
    m = make_score(kind, D_Q, D_K, HIDDEN)
    assert m.v.in_features == HIDDEN
    assert sum(p.numel() for p in m.parameters()) == (D_Q + D_K) * HIDDEN + HIDDEN  # no biases
    assert make_score(kind, D_Q, D_K).v.in_features == D_K


def test_scaled_dot_divides_by_the_root_of_the_width_and_dot_needs_equal_widths():
    q, k = torch.ones(1, 1, 16), torch.ones(1, 2, 16)
    assert make_score("scaled_dot", 16, 16)(q, k).tolist() == [[[4.0, 4.0]]]  # 16 / sqrt(16)
    assert make_score("dot", 16, 16)(q, k).tolist() == [[[16.0, 16.0]]]
    assert make_score("general", 4, 6).W.weight.shape == (6, 4)
    with pytest.raises(ValueError, match="query_dim == key_dim, got 4 and 6"):
        make_score("scaled_dot", 4, 6)
    with pytest.raises(ValueError, match="unknown score kind 'cosine'"):
        make_score("cosine", 4, 4)
