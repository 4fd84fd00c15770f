import numpy as np


def self_attention(X, W_Q, W_K, W_V, mask=False):
    Q = np.einsum("td,dk->tk", X, W_Q)
    K = np.einsum("td,dk->tk", X, W_K)
    V = np.einsum("td,dk->tk", X, W_V)
    s = np.einsum("tk,sk->ts", Q, K) / np.sqrt(Q.shape[-1])
    if mask:
        s[np.triu_indices(len(s), k=1)] = -np.inf
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(-1, keepdims=True)
    return np.einsum("ts,sk->tk", w, V), w
