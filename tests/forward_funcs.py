"""Functions for tests/test_forward.py (the transpiler reads their source)."""

import numpy as np
from scipy import special

from transpile import stop_gradient


def scaled_by_constant(x):
    c = stop_gradient(np.exp(x) * 2.0)
    return np.sum(np.sin(x) * c)


def running_sum(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + np.sum(np.tanh(x) * i)
        else:
            s = s - np.sum(x * x)
    return s


def uses_softmax(x):
    return np.sum(special.softmax(x) * x)


def grid(x, y):
    return np.tanh(np.outer(x, y)) + x[:, None] ** 2


def written(x):
    out = np.zeros((2, x.shape[0]))
    out[0] = np.sin(x)
    out[1, 1:] = x[:-1] * 3.0
    return out


def reduced(w, x):
    h = np.tanh(x @ w)
    return np.sum(h**2) + np.mean(w) + np.sum(np.max(x * w, axis=1))
