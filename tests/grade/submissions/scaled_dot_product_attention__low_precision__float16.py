import numpy as np


def scaled_dot_product_attention(Q, K, V, mask=False):
    q, k, v = (a.astype(np.float16) for a in (Q, K, V))  # "to save memory"
    s = q @ k.T / np.float16(np.sqrt(q.shape[1]))
    if mask:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)
    return (w @ v).astype(Q.dtype)
