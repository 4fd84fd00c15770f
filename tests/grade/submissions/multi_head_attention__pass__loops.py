import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        s = Q[:, cols] @ K[:, cols].T / np.sqrt(d_k)
        if mask:
            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        heads.append((e / e.sum(-1, keepdims=True)) @ V[:, cols])
    return np.concatenate(heads, axis=1) @ W_O
