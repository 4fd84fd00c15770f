import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    s = np.einsum("td,sd->ts", Q, K) / np.sqrt(Q.shape[-1])
    if mask:
        s = np.where(np.tril(np.ones_like(s, dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return np.einsum("ts,sv->tv", w, V)
