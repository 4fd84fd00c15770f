import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    heads = []
    for h in range(num_heads):
        q, k, v = Q[:, h::num_heads], K[:, h::num_heads], V[:, h::num_heads]
        s = q @ k.T / np.sqrt(q.shape[1])
        if mask:
            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        heads.append((e / e.sum(-1, keepdims=True)) @ v)
    return np.concatenate(heads, axis=1) @ W_O
