"""Functions returning (value, aux), for ``tests/test_has_aux.py``."""

import numpy as np


def mse_with_predictions(w, x, y):
    pred = np.tanh(x @ w)
    loss = np.mean((pred - y) ** 2)
    return loss, {"pred": pred, "accuracy": np.mean((pred > 0) == (y > 0))}


def branchy(w, s):
    h = np.sin(w * s)
    if np.sum(h) > 0.0:
        return np.sum(h**2), h
    return np.sum(h), -h


def pair_of(w):
    return np.sum(w**3), w.shape[0]


def through_helper(w):
    return pair_of(w * 2.0)


def returns_its_argument(w):
    return np.sum(w * w), w


def in_a_loop(w, n):
    total = 0.0
    trace = []
    for i in range(n):
        total = total + np.sum(np.cos(w * i))
        trace.append(total)
    return total, trace


def not_a_pair(w):
    return np.sum(w)


def tuple_loss(w):
    return np.sum(w), np.sum(w * w)
