import numpy as np


def causal_mask(T):
    return np.tri(T, dtype=bool)
