import numpy as np


def selfattention(X, W_Q, W_K, W_V, mask=False):
    return X, X
