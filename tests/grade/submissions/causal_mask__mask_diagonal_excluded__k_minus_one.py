import numpy as np


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool), k=-1)
