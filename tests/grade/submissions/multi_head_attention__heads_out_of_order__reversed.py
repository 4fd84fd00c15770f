import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads
    heads = []
    for i in range(num_heads):
        cols = slice(i * d_k, (i + 1) * d_k)
        q, k, v = X @ W_Q[:, cols], X @ W_K[:, cols], X @ W_V[:, cols]
        s = q @ k.T / np.sqrt(d_k)
        if mask:
            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        heads.insert(0, (w / w.sum(axis=1, keepdims=True)) @ v)  # prepends: last head first
    return np.concatenate(heads, axis=1) @ W_O
