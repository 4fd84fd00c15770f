import torch
import torch.nn.functional as F


def self_attention(X, W_Q, W_K, W_V, mask=False):
    t = torch.from_numpy
    Q, K, V = t(X @ W_Q), t(X @ W_K), t(X @ W_V)
    return F.scaled_dot_product_attention(Q, K, V, is_causal=mask).numpy(), None
