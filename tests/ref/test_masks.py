import numpy as np
import pytest
import torch

from attnlab.ref import causal_mask, causal_mean, padding_mask


@pytest.mark.parametrize(("T", "S"), [(5, None), (3, 6), (6, 3), (0, 4), (1, 1)])
def test_causal_mask_matches_torch_is_causal_alignment(T, S):
    expected = torch.ones(T, S if S is not None else T).tril().bool().numpy()
    got = causal_mask(T, S)
    assert got.dtype == bool and np.array_equal(got, expected)


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_causal_mask_rejects_bad_sizes(bad):
    with pytest.raises(ValueError, match="non-negative int"):
        causal_mask(bad)


def test_causal_mean_is_the_running_average(rng):
    x = rng.standard_normal((5, 4))
    out = causal_mean(x)
    np.testing.assert_allclose(out[2], x[:3].mean(0), atol=1e-15)  # position 3 of the lesson
    np.testing.assert_allclose(out, np.cumsum(x, 0) / np.arange(1, 6)[:, None], atol=1e-14)
    assert causal_mean(x.astype(np.float32)).dtype == np.float32
    assert causal_mean(np.stack([x, 2 * x])).shape == (2, 5, 4)


def test_padding_mask():
    m = padding_mask(np.array([2, 0, 3]), 3)
    assert m.shape == (3, 1, 3)
    assert m[:, 0].tolist() == [[True, True, False], [False] * 3, [True] * 3]
    with pytest.raises(ValueError, match=r"\[0, 3\]"):
        padding_mask(np.array([4]), 3)
