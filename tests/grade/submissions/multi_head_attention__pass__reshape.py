import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads

    def heads(M):
        return (X @ M).reshape(T, num_heads, d_k).transpose(1, 0, 2)  # (H, T, d_k)

    Q, K, V = heads(W_Q), heads(W_K), heads(W_V)
    s = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    if mask:
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ V).transpose(1, 0, 2).reshape(T, d_model)
    return out @ W_O
