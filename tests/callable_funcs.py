"""What grad is given besides a function: partials, bound methods, callable instances,
static and class methods (``tests/test_callables.py``)."""

import functools

import numpy as np


def scaled_loss(w, x, scale=1.0, flag=False):
    z = np.tanh(x @ w) * scale
    return np.sum(z**2) if not flag else np.sum(np.abs(z) ** 3)


class Model:
    def __init__(self, bias):
        self.bias = bias
        self.nfev = 0

    def loss(self, w, x):
        return np.sum(np.sin(x @ w + self.bias) ** 2)

    def __call__(self, w, x):
        return self.loss(w, x) + np.sum(w**2)

    @staticmethod
    def penalty(w, k=2.0):
        return k * np.sum(w**4)

    @classmethod
    def scaled(cls, w, x):
        return cls.factor() * np.sum(np.cos(x @ w))

    @staticmethod
    def factor():
        return 3.0


with_flag = functools.partial(scaled_loss, flag=True)
with_scale = functools.partial(scaled_loss, scale=2.5)
nested = functools.partial(functools.partial(scaled_loss, scale=0.5), flag=True)
