import numpy as np


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool))
