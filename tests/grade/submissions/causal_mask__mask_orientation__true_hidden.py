import numpy as np


def causal_mask(T):
    # True where the key is in the future: the "True = hidden" convention
    return np.triu(np.ones((T, T), dtype=bool), k=1)
