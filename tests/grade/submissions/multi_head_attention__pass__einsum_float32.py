import numpy as np


def multi_head_attention(X, W_Q, W_K, W_V, W_O, num_heads, mask=False):
    X, W_Q, W_K, W_V, W_O = (a.astype(np.float32) for a in (X, W_Q, W_K, W_V, W_O))
    T, d = X.shape
    h, dk = num_heads, d // num_heads
    Q, K, V = (np.einsum("td,de->te", X, W).reshape(T, h, dk) for W in (W_Q, W_K, W_V))
    s = np.einsum("thk,shk->hts", Q, K) / np.float32(np.sqrt(dk))
    if mask:
        s = s - 1e9 * np.triu(np.ones((T, T), dtype=np.float32), k=1)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("hts,shk->thk", w, V).reshape(T, d) @ W_O
