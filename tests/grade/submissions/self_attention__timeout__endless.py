def self_attention(X, W_Q, W_K, W_V, mask=False):
    while True:
        pass
