import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads

    def split(M):  # (T, d_model) -> (h, T, d_k)
        return M.reshape(T, num_heads, d_k).transpose(1, 0, 2)

    Q, K, V = split(X @ W_Q), split(X @ W_K), split(X @ W_V)
    s = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)  # (h, T, T)
    if mask:
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=0, keepdims=True))
    w = e / e.sum(axis=0, keepdims=True)  # normalised across the heads
    out = (w @ V).transpose(1, 0, 2).reshape(T, d_model)
    return out @ W_O
