import numpy as np


def softmax_rows(x):
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)
