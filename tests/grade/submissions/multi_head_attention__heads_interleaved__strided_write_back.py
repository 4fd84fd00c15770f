import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    H = num_heads
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    out = np.zeros((T, d_model))
    for h in range(H):
        q, k, v = Q[:, h::H], K[:, h::H], V[:, h::H]  # every H-th column: not a block
        s = q @ k.T / np.sqrt(q.shape[1])
        if mask:
            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        out[:, h::H] = (w / w.sum(axis=1, keepdims=True)) @ v
    return out @ W_O
